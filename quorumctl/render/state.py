"""Text and table renderings of `state` (replicas side by side) and of
`truncate` plans. (Kafka has no such tool, so the text form is ours: one
`key: value` line per fact, stable for grep.)"""

from __future__ import annotations

import os
import shlex

from ..raft.logmatch import Clash
from .output import timestamp, when_text


def replica_doc(r, now_ms: int | None = None) -> dict:
    """The JSON form of a raft.replica.Replica (`state -o json`, and what the text and table read)."""
    import time

    qs = r.quorum_state
    latest = r.latest_snapshot
    segs = []
    for sc in r.scan.segments:
        segs.append(
            {
                "base_offset": sc.files.base_offset,
                "file": sc.files.log,
                "bytes": sc.file_size,
                "valid_bytes": sc.valid_bytes,
                "batches": len(sc.batches),
                "end_offset": sc.next_offset,
                "index": bool(sc.files.index),
                "timeindex": bool(sc.files.timeindex),
                "problem": sc.problem,
            }
        )
    return {
        "replica": r.label,
        "log_dir": r.log_dir,
        "partition_dir": r.partition_dir,
        "node_id": r.node_id,
        "cluster_id": r.meta.get("cluster.id") if r.meta else None,
        "directory_id": r.meta.get("directory.id") if r.meta else None,
        "meta_properties_version": r.meta.get("version") if r.meta else None,
        "quorum_state": qs,
        "leader_id": qs["leaderId"] if qs else None,
        "leader_epoch": qs["leaderEpoch"] if qs else None,
        "voted_id": qs["votedId"] if qs else None,
        "voted_directory_id": qs.get("votedDirectoryId") if qs else None,
        "voters": r.voters,
        "kraft_version": r.kraft_version,
        "last_leader_change": r.last_leader_change,
        "log_start_offset": r.log_start,
        "log_end_offset": r.log_end,
        "last_epoch": r.last_epoch,
        "last_batch_time": timestamp(r.last_batch_timestamp, now_ms if now_ms is not None else int(time.time() * 1000)),
        "epoch_checkpoint": [list(e) for e in r.checkpoint] if r.checkpoint is not None else None,
        "epochs": [list(e) for e in r.history.entries],
        "epochs_in_log": [list(e) for e in r.log_history.entries],
        "segments": segs,
        "snapshots": [
            {"end_offset": s.end_offset, "epoch": s.epoch, "file": s.path, "bytes": s.size} for s in r.files.snapshots
        ],
        "latest_snapshot": (
            {"end_offset": latest.end_offset, "epoch": latest.epoch, "file": latest.path} if latest else None
        ),
        "producer_snapshots": [o for o, _ in r.files.producer_snapshots],
        "problems": list(r.problems),
        "notes": list(r.notes),
    }


def state_doc(result) -> dict:
    """`state -o json`: the document the text and the table are read from (ops.state.StateResult)."""
    doc = {"replicas": [replica_doc(r) for r in result.replicas], "comparison": result.comparison}
    if result.committed is not None:
        doc["committed"] = result.committed
    return doc


def _time(t: dict) -> str:
    """A timestamp's JSON form ({"ms", "iso", "age"}) as text; a value no ISO time can
    show (negative, after 9999) is printed raw, saying so."""
    return f"{t['iso']} ({t['age']})" if t["iso"] is not None else when_text(t["ms"], 0)


def _epochs(entries) -> str:
    return ", ".join(f"{e}@{o}" for e, o in entries) if entries else "(none)"


def _qs(q: dict | None) -> str:
    if q is None:
        return "(missing)"
    s = f"v{q['data_version']}: leader {q['leaderId']}, epoch {q['leaderEpoch']}, voted for {q['votedId']}"
    if q["data_version"] == 1:
        s += f" (directory {q['votedDirectoryId']})"
    elif q.get("currentVoters") is not None:
        s += f", voters {[v['voterId'] for v in q['currentVoters']]}"
    return s


def _voters(v: dict | None) -> str:
    if not v:
        return "(unknown)"
    if v["voters"]:
        body = ", ".join(
            f"{x['id']}" + (f" ({x['directory_id']}, {', '.join(x['endpoints'])})" if x["endpoints"] else "")
            for x in v["voters"]
        )
        return f"{body} [from {v['source']}]"
    return f"{v['ids']} [from {v['source']}]"


def replica_lines(j: dict) -> list[str]:
    latest = j["latest_snapshot"]
    segs = j["segments"]
    epochs_note = ""
    if j["epoch_checkpoint"] is None:
        epochs_note = " (no leader-epoch-checkpoint)"
    elif [list(e) for e in j["epoch_checkpoint"]] != j["epochs_in_log"]:
        epochs_note = (
            f" (leader-epoch-checkpoint: {_epochs(j['epoch_checkpoint'])}; in the log: {_epochs(j['epochs_in_log'])})"
        )
    lines = [
        f"Replica {j['replica']}: {j['partition_dir']}",
        f"  node id: {j['node_id']}",
        f"  cluster id: {j['cluster_id']}",
        f"  directory id: {j['directory_id']}",
        f"  quorum-state: {_qs(j['quorum_state'])}",
        f"  voters: {_voters(j['voters'])}",
        f"  kraft.version: {j['kraft_version'] if j['kraft_version'] is not None else '0 (no KRaftVersion record)'}",
        f"  log start offset: {j['log_start_offset']}",
        f"  log end offset: {j['log_end_offset']}",
        f"  last epoch: {j['last_epoch']}",
        "  last batch written: "
        + (_time(j["last_batch_time"]) if j["last_batch_time"]["ms"] is not None else "(no batches)"),
        f"  epochs: {_epochs(j['epochs'])}{epochs_note}",
        f"  segments: {len(segs)}"
        + (
            " ("
            + ", ".join(
                f"{s['base_offset']}..{s['end_offset'] - 1}"
                if s["end_offset"] > s["base_offset"]
                else f"{s['base_offset']} (empty)"
                for s in segs
            )
            + ")"
            if segs
            else ""
        ),
        f"  snapshots: {len(j['snapshots'])}"
        + (f", latest {latest['end_offset']}-{latest['epoch']} ({os.path.basename(latest['file'])})" if latest else ""),
        f"  producer snapshots: {', '.join(map(str, j['producer_snapshots'])) or '(none)'}",
    ]
    if j["last_leader_change"]:
        lc = j["last_leader_change"]
        lines.insert(
            6,
            f"  last LeaderChange: leader {lc['leader_id']} at offset {lc['offset']}, "
            f"voters {lc['voters']}, granted by {lc['granting_voters']}",
        )
    for p in j["problems"]:
        lines.append(f"  problem: {p}")
    for n in j.get("notes", ()):
        lines.append(f"  note: {n}")
    return lines


def clash_cut(f: dict) -> int | None:
    """Where a follower that clashes with the winner must be truncated to: below
    its clashing batch, or lower where the Fetch exchange already cuts (None: no clash)."""
    if not f.get("log_matching"):
        return None
    cut = f["log_matching"][0]["b"]["base_offset"]
    return min(cut, f["new_end_offset"]) if f["kind"] == "diverging" else cut


def _truncate_commands(replicas, winner: str, log_dirs: dict) -> str:
    """`: quorumctl truncate DIR --reference WINNER_DIR` for each replica ('' when a log dir is unknown)."""
    if any(x not in log_dirs for x in (*replicas, winner)):
        return ""
    return ": " + "; ".join(
        f"quorumctl truncate {shlex.quote(log_dirs[x])} --reference {shlex.quote(log_dirs[winner])}" for x in replicas
    )


def follower_clash_line(f: dict, winner: str, log_dirs: dict) -> str | None:
    """A follower's log-matching clash with the winner: it must be truncated below
    it (None: no clash). `log_dirs`: label -> log dir, for the command."""
    if not f.get("log_matching"):
        return None
    x = Clash.from_json(f["log_matching"][0])
    return (
        f"  {f['replica']}: its log clashes with {winner}'s (log matching broken): {x.what()}; "
        f"truncate {f['replica']} below the clash, to offset {clash_cut(f)}"
        + _truncate_commands([f["replica"]], winner, log_dirs)
    )


def other_clash_lines(c: dict, log_dirs: dict) -> list[str]:
    """The clashes between two replicas that are not the winner: truncating both
    against the winner removes them (each is cut where it differs from it)."""
    winner = c["winner"]
    out = []
    for d in c.get("log_matching", ()):
        x = Clash.from_json(d)
        if winner not in (x.a.replica, x.b.replica):
            out.append(
                f"  {x.a.replica} and {x.b.replica}: their logs clash (log matching broken): {x.what()}; "
                f"truncate both against {winner}" + _truncate_commands([x.a.replica, x.b.replica], winner, log_dirs)
            )
    return out


def follower_line(f: dict, winner: str) -> str | None:
    k = f["kind"]
    if k == "none":
        if f.get("log_matching"):
            return None  # not a prefix: follower_clash_line says what it is
        return f"  {f['replica']}: its log is a prefix of {winner}'s; nothing to truncate"
    if k == "snapshot":
        s = f["snapshot"]
        pre = f"diverges first (truncates to {f['truncate_to']}), then " if f["truncate_to"] is not None else ""
        return f"  {f['replica']}: {pre}is behind {winner}'s log start; it must fetch snapshot {s['end_offset']}-{s['epoch']}"
    if k == "stuck":
        return (
            f"  {f['replica']}: the Fetch exchange with {winner} does not converge (truncation to {f['truncate_to']})"
        )
    de = f["diverging_epoch"]
    s = (
        f"  {f['replica']}: diverges from {winner}: DivergingEpoch(epoch={de['epoch']}, endOffset={de['end_offset']})"
        f"; truncates to {f['truncate_to']}"
    )
    if f["new_end_offset"] != f["truncate_to"]:
        s += f"; whole batches: its log ends at {f['new_end_offset']}"
    rounds = len([r for r in f["fetch_rounds"] if r["answer"] == "diverging"])
    if rounds > 1:
        s += f" ({rounds} Fetch rounds)"
    return s


def split_text(x: dict) -> str:
    """One replica's committed / unknown / uncommitted split (raft/committed.py) as text."""
    c, u, end = x["committed_end_offset"], x["uncommitted_from_offset"], x["log_end_offset"]
    parts = [f"committed below {c}" if c > 0 else "nothing provably committed"]
    if u > c:
        parts.append(f"unknown {c}..{u - 1}")
    if end > u:
        parts.append(f"provably uncommitted {u}..{end - 1}")
    s = "; ".join(parts) + f" (log end offset {end})"
    if x["voter"] is False:
        s += "; not a voter"
    if x["note"]:
        s += f"; {x['note']}"
    return s


def committed_lines(cm: dict) -> list[str]:
    sets = cm["voter_sets"]
    if sets:
        head = "; ".join(f"voters {v}, majority {m}" for v, m in zip(sets, cm["majority"]))
    else:
        head = "voters unknown"
    out = [f"Committed entries ({head}):", f"  voter set from {cm['voters_source']}"]
    if len(sets) > 1:
        out.append("  the replicas name different voter sets: only what holds under every one is claimed")
    for x in cm["replicas"]:
        out.append(f"  {x['replica']}: {split_text(x)}")
    return out


def state_text(doc: dict) -> str:
    out = []
    for j in doc["replicas"]:
        out.extend(replica_lines(j))
        out.append("")
    c = doc.get("comparison")
    if c:
        if len(c["cluster_ids"]) > 1:
            out.append(f"warning: these replicas belong to different clusters: {', '.join(c['cluster_ids'])}")
        k = c["election_key"]
        line = f"Most up to date: {c['winner']} (last epoch {k['last_epoch']}, log end offset {k['end_offset']})"
        if c["tied"]:
            line += f"; tied: {', '.join(c['tied'])}"
        out.append(line)
        log_dirs = {j["replica"]: j["log_dir"] for j in doc["replicas"]}
        for f in c["followers"]:
            out.extend(
                x
                for x in (follower_line(f, c["winner"]), follower_clash_line(f, c["winner"], log_dirs))
                if x is not None
            )
        out.extend(other_clash_lines(c, log_dirs))
        out.append("")
    if doc.get("committed"):
        out.extend(committed_lines(doc["committed"]))
        out.append("")
    return "\n".join(out)


def state_table(doc: dict):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    reps = doc["replicas"]
    c = doc.get("comparison") or {}
    winner = c.get("winner")
    tied = set(c.get("tied") or ())
    by_name = {f["replica"]: f for f in c.get("followers", [])}
    t = Table(title="quorumctl state", show_lines=False)
    t.add_column("", style="bold")
    for j in reps:
        name = j["replica"]
        f = by_name.get(name, {})
        style = (
            "green"
            if name == winner or name in tied
            else ("red" if f.get("kind") not in (None, "none") or f.get("log_matching") else "")
        )
        t.add_column(Text(name, style=style), overflow="fold")  # a label may be a path: never cut its end

    def row(label, fn):
        t.add_row(label, *[fn(j) for j in reps])

    row("node id", lambda j: str(j["node_id"]))
    row("cluster id", lambda j: str(j["cluster_id"]))
    row("leader (quorum-state)", lambda j: str(j["leader_id"]))
    row("leader epoch", lambda j: str(j["leader_epoch"]))
    row("voted for", lambda j: str(j["voted_id"]))
    row("voters", lambda j: str(j["voters"]["ids"]) if j["voters"] else "?")
    row("log start", lambda j: str(j["log_start_offset"]))
    row("log end", lambda j: str(j["log_end_offset"]))
    row("last epoch", lambda j: str(j["last_epoch"]))
    row("epochs", lambda j: _epochs(j["epochs"]))
    row("segments", lambda j: str(len(j["segments"])))
    row(
        "latest snapshot",
        lambda j: (
            f"{j['latest_snapshot']['end_offset']}-{j['latest_snapshot']['epoch']}" if j["latest_snapshot"] else "-"
        ),
    )

    def verdict(j):
        name = j["replica"]
        if name == winner:
            return Text("most up to date", style="green")
        f = by_name.get(name)
        if f is None:
            return Text("")
        if f.get("log_matching"):
            return Text(f"log matching broken: truncate to {clash_cut(f)}", style="bold red")
        if f["kind"] == "none":
            return Text("prefix: ok", style="green")
        if f["kind"] == "diverging":
            return Text(f"truncate to {f['new_end_offset']}", style="bold red")
        return Text(f["kind"], style="bold red")

    if c:
        t.add_row("vs. most up to date", *[verdict(j) for j in reps])
    cm = doc.get("committed")
    if cm:
        by_rep = {x["replica"]: x for x in cm["replicas"]}

        def split(j):
            x = by_rep[j["replica"]]
            rows = [f"committed < {x['committed_end_offset']}"]
            if x["uncommitted_from_offset"] > x["committed_end_offset"]:
                rows.append(f"unknown {x['committed_end_offset']}..{x['uncommitted_from_offset'] - 1}")
            if x["log_end_offset"] > x["uncommitted_from_offset"]:
                rows.append(f"uncommitted {x['uncommitted_from_offset']}..{x['log_end_offset'] - 1}")
            return Text("\n".join(rows), style="red" if x["log_end_offset"] > x["uncommitted_from_offset"] else "")

        t.add_row("entries", *[split(j) for j in reps])
    row("problems", lambda j: Text(str(len(j["problems"])), style="red" if j["problems"] else "green"))
    probs = [Text(f"{j['replica']}: {p}", style="red") for j in reps for p in j["problems"]]
    probs += [Text(Clash.from_json(x).describe(), style="bold red") for x in c.get("log_matching", ())]
    return Group(t, *probs)


def plan_lines(p: dict, applied: dict | None, backup_root: str | None, *, dry_run: bool) -> list[str]:
    """The plan as text; `applied` is apply_plan's report when files were changed
    (an --apply with nothing to do or refused changes nothing, and is no dry run)."""
    dry = dry_run
    head = f"Truncation plan for {p['partition_dir']} ({p['replica']})" + (", dry run" if dry else "")
    lines = [head, f"  reason: {p['reason']}" if p["reason"] else "  reason: -"]
    cm = p.get("committed")
    if cm:
        sets = cm["voter_sets"]
        lines.append(
            "  voters: "
            + ("; ".join(f"{v} (majority {m})" for v, m in zip(sets, cm["majority"])) if sets else "unknown")
            + f", from {cm['voters_source']}"
        )
        lines.extend(f"  {x['replica']}: {split_text(x)}" for x in cm["replicas"])
    if p["refused"]:
        lines.append(f"  refused: {p['refused']}")
        return lines
    if not p["changes"]:
        lines.append("  nothing to change")
        return lines
    lines.append(f"  log end offset: {p['log_end_offset_before']} -> {p['log_end_offset_after']}")
    cut = p["cut_segment"]
    if cut and cut["target_inside_batch"]:
        b = cut["target_inside_batch"]
        lines.append(f"  offset {p['target_offset']} is inside batch {b[0]}..{b[1]}: Kafka truncates whole batches")
    lines.append(f"  last epoch: {p['last_epoch_before']} -> {p['last_epoch_after']}")
    for s in p["removed_segments"]:
        lines.append(f"  remove segment {s['base_offset']}: " + ", ".join(os.path.basename(f) for f in s["files"]))
    if cut:
        od = cut["offsets_dropped"]
        lines.append(
            f"  cut {os.path.basename(cut['log'])} at byte {cut['position']} (of {cut['bytes_before']}): "
            f"drops {cut['batches_dropped']} batch(es), offsets {od[0]}..{od[1]}"
        )
    for c in p["index_changes"]:
        lines.append(f"  rewrite {os.path.basename(c['file'])}: {c['entries_before']} -> {c['entries_after']} entries")
    if p["rewrite_leader_epoch_checkpoint"]:
        lines.append(
            f"  rewrite leader-epoch-checkpoint: {_epochs(p['epochs_before'])} -> {_epochs(p['epochs_after'])}"
        )
    for s in p["removed_snapshots"]:
        lines.append(f"  remove snapshot {os.path.basename(s['file'])}")
    for s in p["removed_producer_snapshots"]:
        lines.append(f"  remove producer snapshot {os.path.basename(s['file'])}")
    if p["needs_force"]:
        lines.append(f"  forced: {p['needs_force']}")
    if dry:
        if backup_root:
            lines.append(f"  backup: under {backup_root}")
        lines.append("Run again with --apply to do it.")
    elif applied is not None:
        lines.append(f"Done. Removed and replaced files are saved in {applied['backup_dir']}")
    return lines


def lock_note(holder: int | None, log_dir: str) -> list[str]:
    """A dry run's warning that --apply will meet Kafka's lock (truncate, recover)."""
    return [f"note: process {holder} holds {log_dir}/.lock (a running Kafka); --apply will refuse"] if holder else []


def truncate_text(res) -> str:
    """`truncate`'s text: the plan, the result's verify, earlier unfinished runs, the lock."""
    report = res.report
    lines = plan_lines(
        res.plan_json, report if (report and report.get("applied")) else None, res.backup_root, dry_run=res.dry_run
    )
    if report is not None and report.get("verify") is not None:
        v = report["verify"]
        lines.append(f"verify {res.partition_dir}: " + ("OK" if v["ok"] else f"{len(v['problems'])} problem(s)"))
        lines.extend(f"  {x}" for x in v["problems"])
    for unfinished in res.unfinished:
        lines.append(
            f"note: an earlier truncation did not finish: {unfinished} (the partition directory was "
            "left wholly old or wholly new; its plan.json says what was planned)"
        )
    lines += lock_note(res.lock_holder, res.log_dir)
    return "\n".join(lines) + "\n"
