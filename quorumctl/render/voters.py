"""`voters check`'s report and `voters set-endpoints`' plan as text (and the check as a table)."""

from __future__ import annotations

from .diagnose import finding_lines, findings_table
from .recover import entries_text

VERDICTS = {
    "ok": "answers as that voter",
    "unresolvable": "STALE: the name does not resolve",
    "silent": "nothing answers as a controller",
    "other": "STALE: another node answers",
    "partly": "STALE: another node answers at some of its addresses",
}


def _where(c: dict) -> str:
    return ", ".join(c["addresses"]) if c["addresses"] else c["resolve_error"]


def check_lines(doc: dict) -> list[str]:
    lead = doc["leader"]
    lines = [
        f"Voter set from {doc['source']}"
        + (f", cluster {doc['cluster_id']}" if doc["cluster_id"] else "")
        + (
            (
                f", leader {lead['id']} in epoch {lead['epoch']}"
                if lead["id"] >= 0
                else f", no leader (epoch {lead['epoch']})"
            )
            if lead
            else ""
        )
    ]
    for v in doc["voters"]:
        lines.append(f"voter {v['id']} (directory id {v['directory_id']})")
        for c in (c for c in doc["endpoints"] if c["voter_id"] == v["id"]):
            lines.append(f"  {c['endpoint']} -> {_where(c)}: {VERDICTS[c['verdict']]}")
            for p in c["probes"]:
                lines.append(f"    {p['address']}: {p['detail']}")
        if not v["endpoints"]:
            lines.append("  no endpoint stored")
    for o in doc["observers"] or []:
        lines.append(f"observer {o['id']} (directory id {o['directory_id']})")
    if not doc["findings"]:
        lines.append("No findings.")
        return lines
    return lines + finding_lines(doc["findings"])


def check_table(doc: dict):
    from rich.table import Table

    t = Table(title=check_lines({**doc, "voters": [], "observers": [], "findings": []})[0])
    for col in ("voter", "endpoint", "resolves to", "answer"):
        t.add_column(col)
    for c in doc["endpoints"]:
        bad = c["verdict"] != "ok"
        t.add_row(
            str(c["voter_id"]),
            c["endpoint"],
            _where(c),
            f"[red]{VERDICTS[c['verdict']]}[/red]" if bad else VERDICTS[c["verdict"]],
        )
    return [t, findings_table(doc["findings"], "findings")]


def plan_lines(doc: dict, dry_run: bool, report: dict | None) -> list[str]:
    b = doc["base"]
    lines = [f"Endpoint change for voters {[v['id'] for v in doc['voters_before']]}" + (", dry run" if dry_run else "")]
    for p in doc["probes"]:
        lines.append(f"  probe: voter {p['voter_id']} at {p['address']}: {p['state']} ({p['detail']})")
    for w in doc["witnesses"]:
        where = f"{w['who']} at {w['address']}" if w["address"] else w["who"]
        lines.append(f"  asked: {where}: {w['detail']}")
    lines.append(
        f"  base: node {b['node_id']} ({b['log_dir']}): last epoch {b['last_epoch']}, log end offset "
        f"{b['log_end_offset']} (the most up-to-date voter)"
    )
    after = {v["id"]: v for v in doc["voters_after"]}
    for v in doc["voters_before"]:
        new = after[v["id"]]["endpoints"]
        lines.append(
            f"  voter {v['id']} ({v['directory_id']}): {', '.join(v['endpoints'])}"
            + (f" -> {', '.join(new)}" if new != v["endpoints"] else " (unchanged)")
        )
    if doc["refused"]:
        lines.append(f"  refused: {doc['refused']}")
        return lines
    if doc["append"]:
        lines.append(
            f"  new epoch: {doc['new_epoch']} (the highest epoch any voter has seen is "
            f"{doc['max_epoch_seen']}); the voters then elect a leader in epoch {doc['new_epoch'] + 1}"
        )
    if doc["risks"]:
        lines.append("  risks:")
        lines.extend(f"    - {x}" for x in doc["risks"])
    for x in doc["replicas"]:
        what = "appended to (the base)" if x["action"] == "append" else "replaced by a copy of the base's log"
        lines.append(
            f"  node {x['node_id']} ({x['partition_dir']}): last epoch {x['last_epoch']}, log end offset "
            f"{x['log_end_offset']}: " + (what if x["changes"] else "already done, not changed")
        )
        if x["loses"]:
            lines.append(f"    loses (uncommitted) {entries_text(x['loses'])}")
        lines.extend(f"    - {c['file']}: {c['change']}" for c in x["changes"])
    lines.append("  then:")
    lines.extend(f"    {i}. {s}" for i, s in enumerate(doc["next_steps"], 1))
    if report:
        for c in report["changed"]:
            lines.append(f"changed node {c['node_id']}; replaced files kept in {c['backup_dir']}")
    elif not any(x["changes"] for x in doc["replicas"]):
        lines.append("Nothing to change: every voter's log already holds these endpoints.")
    elif dry_run:
        lines.append("Run again with --apply to do it (every controller must be stopped).")
    return lines
