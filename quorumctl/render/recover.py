"""`recover`'s plan as text: what was probed, each replica's fate, the survivor's
changes, the losses, then the operator's next steps."""

from __future__ import annotations

from .state import lock_note
from .state import plan_lines as truncation_lines


def entries_text(s: dict) -> str:
    """One line for ops.recover.summarize_entries's dict."""
    parts = [f"offsets {s['from']}..{s['to']}: {s['records']} record(s)"]
    if s["types"]:
        parts[0] += " (" + ", ".join(f"{n} {t}" for t, n in s["types"].items()) + ")"
    if s["topics_created"]:
        parts.append("topics created: " + ", ".join(map(str, s["topics_created"])))
    if s["topics_removed"]:
        parts.append("topic ids removed: " + ", ".join(s["topics_removed"]))
    if s["configs"]:
        parts.append("configs: " + "; ".join(s["configs"]))
    if s["more"]:
        parts.append(f"{s['more']} more name(s) in -o json's full list")
    return "; ".join(parts)


def plan_doc(plan: dict, report: dict | None, dry_run: bool) -> dict:
    """The JSON of a writer run under recover's rules (recover, voters set-endpoints):
    the plan, what was applied (None on a dry run), whether it was one."""
    return {"plan": plan, "applied": report, "dry_run": dry_run}


def plan_lines(doc: dict, dry_run: bool, report: dict | None, lock_holder: int | None = None) -> list[str]:
    s = doc["survivor"]
    lines = [
        f"Recovery plan for node {s['node_id']} ({s['partition_dir']}), {doc['quorum']} quorum"
        + (", dry run" if dry_run else "")
    ]
    for p in doc["probes"]:
        lines.append(f"  probe: voter {p['voter_id']} at {p['address']}: {p['state']} ({p['detail']})")
    for w in doc.get("witnesses", []):
        where = f"{w['who']} at {w['address']}" if w["address"] else w["who"]
        lines.append(f"  asked: {where}: {w['detail']}")
    for x in doc["replicas"]:
        tag = x["role"] + (", base" if x["action"] in ("append", "keep", "base") else "")
        what = {
            "append": "kept; the recovery appends to it",
            "keep": "kept; only its quorum-state changes",
            "base": "read, not changed",
            "replace": "replaced by a copy of the base's log",
            "none": "not changed",
            "truncate": f"truncated to {x['keeps_to']}",
        }[x["action"]]
        lines.append(
            f"  node {x['node_id']} ({tag}): last epoch {x['last_epoch']}, log end offset "
            f"{x['log_end_offset']}: {what}; {x['reason']}"
        )
        if x["loses"]:
            lines.append(f"    loses {entries_text(x['loses'])}")
    lines.append(f"  voters: {doc['voters_before']} -> {doc['voters_after']} (lost: {doc['lost_voters']})")
    if doc["refused"]:
        lines.append(f"  refused: {doc['refused']}")
        return lines
    if doc["quorum"] == "dynamic":
        lines.append(
            f"  new epoch: {doc['new_epoch']} (the highest epoch any given replica has seen is "
            f"{doc['max_epoch_seen']}); the survivor then leads in epoch {doc['new_epoch'] + 1}"
        )
    else:
        lines.append(
            f"  quorum-state epoch: {doc['new_epoch']} (the highest any given replica has seen); the "
            f"survivor then leads in epoch {doc['new_epoch'] + 1}"
        )
    bc = doc["becomes_committed"]
    if bc:
        lines.append(f"  not provably committed, committed from now on: {entries_text(bc)}")
    lines.append("  risks:")
    lines.extend(f"    - {x}" for x in doc["risks"])
    lines.append("  changes to the survivor's files:")
    lines.extend(f"    - {c['file']}: {c['change']}" for c in doc["changes"])
    for x in doc["replicas"]:
        if x["truncation"] and x["truncation"]["changes"]:
            lines.append(f"  changes to node {x['node_id']}'s files:")
            body = truncation_lines(x["truncation"], None, None, dry_run=False)[1:]
            lines.extend("  " + b for b in body if not b.startswith("  reason:"))
    lines.append("  then:")
    lines.extend(f"    {i}. {x}" for i, x in enumerate(doc["next_steps"], 1))
    if report:
        for t in report.get("truncated", []):
            lines.append(f"truncated node {t['node_id']}; replaced files kept in {t['backup_dir']}")
        lines.append(f"applied; replaced files kept in {report['backup_dir']}")
    elif dry_run:
        lines.append("Run again with --apply to do it (every node given must be stopped).")
        lines += lock_note(lock_holder, s["log_dir"])
    return lines
