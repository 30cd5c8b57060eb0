"""Rendering of `describe status|replication|health`: text (byte for byte what
Kafka 4.1's kafka-metadata-quorum prints for the same answer), Rich tables,
and JSON (schema in docs/describe.md). Rich is imported only for tables.
"""

from __future__ import annotations

import time
from typing import Literal

from ..ids import ZERO_UUID
from ..domain.quorum import Quorum, Replica, replication_rows, status_values
from .output import age, iso_utc, when_text

UNKNOWN = "unknown"

# -- text (Kafka 4.1) ------------------------------------------------------------------


def _node_text(q: Quorum, r: Replica) -> str:
    # MetadataQuorumCommand.Node.toString (4.1): the directoryId key is omitted
    # for the zero id (3.9 printed "directoryId": null); endpoints are looked up
    # by id in Nodes for voters and observers alike, the key omitted when none
    s = '{"id": %d' % r.id
    if r.directory_id is not None and r.directory_id != ZERO_UUID:
        s += f', "directoryId": "{r.directory_id}"'
    eps = q.endpoints(r.id)
    if eps:
        s += ', "endpoints": [' + ", ".join(f'"{e}"' for e in eps) + "]"
    return s + "}"


def status_text(q: Quorum) -> str:
    v = status_values(q)
    lag = UNKNOWN if v.max_follower_lag is None else v.max_follower_lag
    lag_ms = UNKNOWN if v.max_follower_lag_time_ms is None else v.max_follower_lag_time_ms
    voters = "[" + ", ".join(_node_text(q, r) for r in q.voters) + "]"
    observers = "[" + ", ".join(_node_text(q, r) for r in q.observers) + "]"
    return (
        "ClusterId:              "
        + ("null" if q.cluster_id is None else q.cluster_id)
        + "\nLeaderId:               "
        + str(q.leader_id)
        + "\nLeaderEpoch:            "
        + str(q.leader_epoch)
        + "\nHighWatermark:          "
        + str(q.high_watermark)
        + "\nMaxFollowerLag:         "
        + str(lag)
        + "\nMaxFollowerLagTimeMs:   "
        + str(lag_ms)
        + "\nCurrentVoters:          "
        + voters
        + "\nCurrentObservers:       "
        + observers
        + "\n"
    )


def _pretty_table(headers: list[str], rows: list[list[str]]) -> str:
    # ToolsUtils.prettyPrintTable: left-justified cells padded to the column
    # width, each followed by a TAB (the last one too)
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    out = []
    for row in [headers] + rows:
        out.append("".join(cell.ljust(widths[i]) + "\t" for i, cell in enumerate(row)) + "\n")
    return "".join(out)


REPLICATION_HEADERS = [
    "NodeId",
    "DirectoryId",
    "LogEndOffset",
    "Lag",
    "LastFetchTimestamp",
    "LastCaughtUpTimestamp",
    "Status",
]


def relative_ms(ts: int | None, now_ms: int) -> str:
    """--human-readable: "<now - ts> ms ago" on this machine's clock (Kafka
    throws on a future timestamp; we print the negative difference)."""
    if ts is None:
        return "-1"
    return f"{now_ms - ts} ms ago"


def replication_text(q: Quorum, human_readable: bool = False, now_ms: int | None = None) -> str:
    rows = []
    for row in replication_rows(q):
        r = row.replica
        if human_readable:
            assert now_ms is not None  # the callers that ask for --human-readable pass the time
            fetch, caught = relative_ms(r.last_fetch, now_ms), relative_ms(r.last_caught_up, now_ms)
        else:
            fetch = "-1" if r.last_fetch is None else str(r.last_fetch)
            caught = "-1" if r.last_caught_up is None else str(r.last_caught_up)
        rows.append(
            [
                str(r.id),
                r.directory_id or ZERO_UUID,
                str(r.log_end_offset),
                UNKNOWN if row.lag is None else str(row.lag),
                fetch,
                caught,
                row.status,
            ]
        )
    return _pretty_table(REPLICATION_HEADERS, rows)


def clock_drift(q: Quorum, now_ms: int) -> list[str]:
    """Timestamps ahead of this machine's clock (Kafka's tool fails on them)."""
    worst = max(
        (t for r in q.voters + q.observers for t in (r.last_fetch, r.last_caught_up) if t is not None), default=None
    )
    if worst is not None and worst > now_ms:
        return [
            f"warning: clock drift: the leader's timestamps are up to {worst - now_ms} ms ahead of this machine's clock"
        ]
    return []


# -- JSON ----------------------------------------------------------------------------


def _ts_json(ms: int | None, now_ms: int):
    if ms is None:
        return None
    return {"ms": ms, "iso": iso_utc(ms), "age": age(ms, now_ms)}


def _meta(q: Quorum, now_ms: int) -> dict:
    return {"source": q.source, "describeQuorumVersion": q.version, "time": {"ms": now_ms, "iso": iso_utc(now_ms)}}


def _node_json(q: Quorum, r: Replica) -> dict:
    return {
        "id": r.id,
        "directoryId": r.directory_id if q.has_directory_ids else None,
        "endpoints": [str(e) for e in q.endpoints(r.id)],
    }


def status_doc(q: Quorum, now_ms: int) -> dict:
    v = status_values(q)
    doc = {
        "clusterId": q.cluster_id,
        "leaderId": q.leader_id,
        "leaderEpoch": q.leader_epoch,
        "highWatermark": q.high_watermark,
        "maxFollowerLag": v.max_follower_lag,
        "maxFollowerLagTimeMs": v.max_follower_lag_time_ms if v.lag_time_known else None,
        "currentVoters": [_node_json(q, r) for r in q.voters],
        "currentObservers": [_node_json(q, r) for r in q.observers],
    }
    doc.update(_meta(q, now_ms))
    return doc


def replication_doc(q: Quorum, now_ms: int) -> dict:
    replicas = []
    for row in replication_rows(q):
        r = row.replica
        replicas.append(
            {
                "nodeId": r.id,
                "directoryId": r.directory_id,
                "status": row.status,
                "logEndOffset": r.log_end_offset,
                "lag": row.lag,
                "lastFetchTimestamp": _ts_json(r.last_fetch, now_ms),
                "lastCaughtUpTimestamp": _ts_json(r.last_caught_up, now_ms),
            }
        )
    doc = {
        "clusterId": q.cluster_id,
        "leaderId": q.leader_id,
        "leaderEpoch": q.leader_epoch,
        "highWatermark": q.high_watermark,
        "replicas": replicas,
    }
    doc.update(_meta(q, now_ms))
    return doc


def restart_doc(r) -> dict:
    return {
        "nodes": r.ids,
        "allowed": r.allowed,
        "checks": [
            {"id": n.id, "voter": n.voter, "caughtUp": n.caught_up, "allowed": n.allowed, "reason": n.reason}
            for n in r.nodes
        ],
    }


def restart_lines(r) -> list[str]:
    """One line per node: `node 2: refused: caught up; without 2 ...`."""
    return [f"node {n.id}: {'allowed' if n.allowed else 'refused'}: {n.reason}" for n in r.nodes]


def health_doc(h) -> dict:
    doc = {
        "verdict": h.verdict,
        "reasons": h.reasons,
        "notes": h.notes,
        "clusterId": h.cluster_id,
        "leaderId": h.leader_id,
        "leaderEpoch": h.leader_epoch,
        "highWatermark": h.high_watermark,
        "voters": [
            {
                "id": v.id,
                "directoryId": v.directory_id,
                "caughtUp": v.caught_up,
                "lag": v.lag,
                "lagTimeMs": v.lag_time_ms,
                "address": None if v.address is None else str(v.address),
                "reachable": v.reachable,
                "canRestart": v.can_restart,
            }
            for v in h.voters
        ],
        "majority": h.majority,
        "caughtUp": h.caught_up,
        "canLose": h.can_lose,
        "fetchTimeoutMs": h.fetch_timeout_ms,
        "timeoutSeconds": h.timeout_s,
        "elapsedMs": round(h.elapsed_ms, 1),
        "probes": [
            {
                "address": str(p.address),
                "nodeId": p.node_id,
                "origin": p.origin,
                "kind": p.kind,
                "reachable": p.ok,
                "latencyMs": p.latency_ms,
                "leaderId": p.leader_view,
                "leaderEpoch": p.leader_epoch,
                "isLeader": p.is_leader,
                "clusterId": p.cluster_id,
                "error": p.error,
            }
            for p in h.probes
        ],
    }
    if h.restart is not None:
        doc["canRestart"] = restart_doc(h.restart)
    if getattr(h, "partitions", None) is not None:
        doc["partitions"] = partitions_doc(h.partitions)
    return doc


def partitions_doc(ph):
    """describe health's partitions section (health_partitions.PartitionHealth), or None."""
    if ph is None:
        return None
    from ..domain.health_verdict import LISTED

    return {
        "source": ph.source,
        "topics": ph.topics,
        "partitions": ph.partitions,
        "leaderless": ph.leaderless,
        "underReplicated": ph.under_replicated,
        "underMinIsr": ph.under_min_isr,
        "listed": ph.lists,
        "listedAtMost": LISTED,
        "liveBrokers": ph.live_brokers,
        "fencedBrokers": ph.fenced_brokers,
        "brokersNotAnswering": [{"id": nid, **b} for nid, b in ph.silent.items()],
        "error": ph.error,
        "elapsedMs": ph.elapsed_ms,
    }


# -- health as text --------------------------------------------------------------------


def partitions_line(ph) -> str:
    return (
        f"{ph.partitions} in {ph.topics} topic(s) from {ph.source}: {ph.leaderless} leaderless, "
        f"{ph.under_replicated} under-replicated, {ph.under_min_isr} under min ISR"
    )


def health_text(h) -> str:
    lines = [f"Verdict:                {h.verdict}"]
    lines.append("ClusterId:              " + (h.cluster_id or UNKNOWN))
    lines.append("LeaderId:               " + (UNKNOWN if h.leader_id is None else str(h.leader_id)))
    lines.append("LeaderEpoch:            " + (UNKNOWN if h.leader_epoch is None else str(h.leader_epoch)))
    if h.majority is not None:
        cu = UNKNOWN if h.caught_up is None else str(h.caught_up)
        lines.append(
            f"CaughtUpVoters:         {cu} of {len(h.voters)} (majority {h.majority}, "
            f"fetch timeout {h.fetch_timeout_ms} ms)"
        )
        lines.append(
            "CanLose:                "
            + (UNKNOWN if h.can_lose is None else f"{h.can_lose} more voter{'s' if h.can_lose != 1 else ''}")
        )
    ph = getattr(h, "partitions", None)
    if ph is not None and ph.error is None:
        lines.append("Partitions:             " + partitions_line(ph))
    for r in h.reasons:
        lines.append(f"Reason:                 {r}")
    for r in h.notes:
        lines.append(f"Note:                   {r}")
    if h.restart is not None:
        for r in restart_lines(h.restart):
            lines.append(f"CanRestart:             {r}")
    headers = ["Address", "NodeId", "Kind", "Reachable", "LatencyMs", "LeaderView", "Epoch", "Error"]
    rows = []
    for p in sorted(h.probes, key=_probe_order):
        rows.append(
            [
                str(p.address),
                "?" if p.node_id is None else str(p.node_id),
                p.kind or p.expected,
                "yes" if p.ok else "no",
                "-" if p.latency_ms is None else f"{p.latency_ms:g}",
                "-" if p.leader_view is None else str(p.leader_view),
                "-" if p.leader_epoch is None else str(p.leader_epoch),
                p.error or "",
            ]
        )
    vrows = []
    for v in h.voters:
        vrows.append(
            [
                str(v.id),
                v.directory_id or ZERO_UUID,
                UNKNOWN if v.caught_up is None else ("yes" if v.caught_up else "no"),
                "-" if v.lag is None else str(v.lag),
                "-" if v.lag_time_ms is None else str(v.lag_time_ms),
                "-" if v.address is None else str(v.address),
                UNKNOWN if v.reachable is None else ("yes" if v.reachable else "no"),
                _yes_no(v.can_restart),
            ]
        )
    out = "\n".join(lines) + "\n\n" + _pretty_table(headers, rows)
    if vrows:
        out += "\n" + _pretty_table(
            ["Voter", "DirectoryId", "CaughtUp", "Lag", "LagTimeMs", "Address", "Reachable", "CanRestart"], vrows
        )
    return out


def _yes_no(b) -> str:
    return UNKNOWN if b is None else ("yes" if b else "no")


def _probe_order(p):
    return (p.node_id is None, p.node_id if p.node_id is not None else 0, str(p.address))


# -- Rich tables ----------------------------------------------------------------------


def _when(ms: int | None, now_ms: int) -> str:
    if ms is None:
        return "[dim]unknown[/]"
    iso = iso_utc(ms)
    if iso is None:
        return when_text(ms, now_ms)
    return f"{iso} [dim]({age(ms, now_ms)})[/]"


def status_table(q: Quorum, now_ms: int, fetch_timeout_ms: int = 2000):
    from rich.table import Table

    v = status_values(q)
    t = Table(title="KRaft metadata quorum", show_header=False, box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column()
    lag = v.max_follower_lag
    lag_ms = v.max_follower_lag_time_ms
    t.add_row("Cluster id", q.cluster_id or "[dim]unknown[/]")
    t.add_row("Leader", f"[bold green]{q.leader_id}[/] (epoch {q.leader_epoch})")
    t.add_row("High watermark", str(q.high_watermark))
    t.add_row("Max follower lag", "[dim]unknown[/]" if lag is None else (f"[yellow]{lag}[/]" if lag > 0 else str(lag)))
    if not v.lag_time_known:
        lag_txt = "[dim]unknown[/]" + (" [dim](DescribeQuorum v0)[/]" if not q.has_timestamps else "")
    else:
        assert lag_ms is not None  # status_values gives it whenever lag_time_known
        lag_txt = f"[red]{lag_ms} ms[/]" if lag_ms >= fetch_timeout_ms else f"{lag_ms} ms"
    t.add_row("Max follower lag time", lag_txt)

    def who(r: Replica):
        eps = ", ".join(str(e) for e in q.endpoints(r.id))
        did = r.directory_id or ("[dim]-[/]" if q.has_directory_ids else "[dim]unknown[/]")
        return f"{r.id}  {did}" + (f"  {eps}" if eps else "")

    t.add_row("Voters", "\n".join(who(r) for r in q.voters) or "[dim]none[/]")
    t.add_row("Observers", "\n".join(who(r) for r in q.observers) or "[dim]none[/]")
    t.add_row("Answered by", f"{q.source} [dim](DescribeQuorum v{q.version}, {iso_utc(now_ms)})[/]")
    return t


def replication_table(q: Quorum, now_ms: int, fetch_timeout_ms: int = 2000):
    from rich.table import Table

    leader = q.leader()
    t = Table(
        title=f"Replication of __cluster_metadata-0 (leader {q.leader_id}, epoch {q.leader_epoch}, "
        f"high watermark {q.high_watermark})"
    )
    columns: tuple[tuple[str, Literal["left", "right"]], ...] = (
        ("Node", "right"),
        ("Directory id", "left"),
        ("Status", "left"),
        ("Log end offset", "right"),
        ("Lag", "right"),
        ("Last fetch", "left"),
        ("Last caught up", "left"),
    )
    for col, just in columns:
        t.add_column(col, justify=just)
    for row in replication_rows(q):
        r = row.replica
        behind = None
        if leader is not None and leader.last_caught_up is not None and r.last_caught_up is not None:
            behind = leader.last_caught_up - r.last_caught_up
        style = ""
        if row.status == "Leader":
            style = "bold green"
        elif behind is not None and behind >= fetch_timeout_ms:
            style = "red"  # has not caught up within the fetch timeout: dead or stuck
        elif row.lag is not None and row.lag > 0:
            style = "yellow"  # behind, but fetching
        did = r.directory_id or ("-" if q.has_directory_ids else "unknown")
        t.add_row(
            str(r.id),
            did,
            row.status,
            str(r.log_end_offset),
            UNKNOWN if row.lag is None else str(row.lag),
            _when(r.last_fetch, now_ms),
            _when(r.last_caught_up, now_ms),
            style=style,
        )
    t.caption = f"answered by {q.source} (DescribeQuorum v{q.version}) at {iso_utc(now_ms)}"
    return t


def health_table(h):
    from rich.table import Table

    colour = {"healthy": "green", "degraded": "yellow"}.get(h.verdict, "red")
    caption = h.reasons + [f"note: {n}" for n in h.notes]
    ph = getattr(h, "partitions", None)
    if ph is not None and ph.error is None:
        caption = ["partitions: " + partitions_line(ph)] + caption
    if h.restart is not None:
        caption += ["can restart " + r for r in restart_lines(h.restart)]
    t = Table(
        title=f"Quorum health: [bold {colour}]{h.verdict.upper()}[/]",
        caption="\n".join(caption) or None,
        caption_justify="left",
    )
    for col in ("Address", "Node", "Kind", "Reachable", "Latency", "Leader view", "Epoch", "Error"):
        t.add_column(col)
    for p in sorted(h.probes, key=_probe_order):
        t.add_row(
            str(p.address),
            "?" if p.node_id is None else str(p.node_id),
            p.kind or p.expected,
            "[green]yes[/]" if p.ok else "[red]no[/]",
            "-" if p.latency_ms is None else f"{p.latency_ms:g} ms",
            "-" if p.leader_view is None else str(p.leader_view),
            "-" if p.leader_epoch is None else str(p.leader_epoch),
            p.error or "",
            style="" if p.ok else "red",
        )
    v = Table(
        title=(
            f"Voters: {h.caught_up if h.caught_up is not None else '?'} of {len(h.voters)} caught up, "
            f"majority {h.majority}, can lose {h.can_lose if h.can_lose is not None else '?'} more"
            if h.majority is not None
            else "Voters: unknown"
        )
    )
    for col in ("Voter", "Directory id", "Caught up", "Lag", "Behind leader", "Address", "Reachable", "Can restart"):
        v.add_column(col)
    for x in h.voters:
        style = "" if x.caught_up else ("red" if x.caught_up is False else "dim")
        v.add_row(
            str(x.id),
            x.directory_id or "-",
            UNKNOWN if x.caught_up is None else ("yes" if x.caught_up else "no"),
            "-" if x.lag is None else str(x.lag),
            "-" if x.lag_time_ms is None else f"{x.lag_time_ms} ms",
            "-" if x.address is None else str(x.address),
            UNKNOWN if x.reachable is None else ("yes" if x.reachable else "no"),
            _yes_no(x.can_restart),
            style=style,
        )
    return t, v


# -- one view of describe status|replication: what `describe`, its --watch and `demo` print --


def quorum_forms(kind: str, now: int, human_readable: bool = False) -> dict:
    """output.emit's renderers of a `describe status|replication` view at `now`: text,
    table, json, and the warnings on stderr that go with the text."""
    if kind == "status":
        forms = {"text": status_text, "table": lambda q: status_table(q, now), "json": lambda q: status_doc(q, now)}
    else:
        forms = {
            "text": lambda q: replication_text(q, human_readable, now),
            "table": lambda q: replication_table(q, now),
            "json": lambda q: replication_doc(q, now),
        }
    return {**forms, "notes": lambda q: quorum_warnings(q, now, human_readable)}


def quorum_warnings(q: Quorum, now: int, human_readable: bool = False) -> list[str]:
    """What the text view does not say: clock drift (--human-readable, where Kafka's tool
    fails) and a leader outside the voters and observers."""
    lines = clock_drift(q, now) if human_readable else []
    if q.leader() is None:
        lines.append(f"warning: leader {q.leader_id} is not among the voters or observers; lag values are unknown")
    return lines


def waiting(what: str):
    """A live view's first frame, before the first answer ("connecting...")."""
    from rich.text import Text

    return Text(what)


def watch_frame(view, every: float, *, updated: str = "", failure: tuple[str, str] | None = None):
    """One frame of `describe status|replication --watch -o table`: the last good view
    (`view`, a table), then when it was updated, or the failed refresh (at, error) beneath it."""
    from rich.console import Group
    from rich.text import Text

    if failure is None:
        return Group(view, Text(f"updated {updated}; refreshing every {every:g} s; Ctrl-C to stop", style="dim"))
    at, error = failure
    return Group(
        view,
        Text(f"{at} error: {error}", style="red"),
        Text(f"the view above is the last good one; retrying every {every:g} s; Ctrl-C to stop", style="dim"),
    )


# -- describe health --watch -------------------------------------------------------------

HISTORY_SHOWN = 10


def _hms(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at))


def history_rows(history) -> list[list[str]]:
    def n(v):
        return "-" if v is None else str(v)

    return [
        [_hms(s.at), s.verdict, n(s.leader_id), n(s.leader_epoch), n(s.high_watermark), n(s.leader_leo)]
        for s in history.samples[-HISTORY_SHOWN:]
    ]


HISTORY_HEADERS = ["Time", "Verdict", "Leader", "Epoch", "HighWatermark", "LeaderLogEndOffset"]


def history_doc(history) -> list[dict]:
    return [
        {
            "time": {"ms": int(s.at * 1000), "iso": iso_utc(int(s.at * 1000))},
            "verdict": s.verdict,
            "leaderId": s.leader_id,
            "leaderEpoch": s.leader_epoch,
            "highWatermark": s.high_watermark,
            "leaderLogEndOffset": s.leader_leo,
        }
        for s in history.samples[-HISTORY_SHOWN:]
    ]


def health_watch_doc(shown, sample_verdict: str, history) -> dict:
    """One JSON line of `describe health --watch`: the judged sample (`shown`, its verdict
    the history's), the sample's own verdict and the recent history."""
    doc = health_doc(shown)
    doc["sampleVerdict"] = sample_verdict
    doc["history"] = history_doc(history)
    return doc


def health_watch_text(shown, history, cleared: bool) -> str:
    """One text frame: the health view, then the history (a blank line after it unless
    the screen is cleared before each frame)."""
    return health_text(shown) + "\n" + _pretty_table(HISTORY_HEADERS, history_rows(history)) + ("" if cleared else "\n")


def health_watch_frame(shown, history, every: float, updated: str):
    """One frame of `describe health --watch -o table`: the health tables, the history, when."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    ht = Table(title="History")
    for col in HISTORY_HEADERS:
        ht.add_column(col)
    for row in history_rows(history):
        ht.add_row(*row)
    return Group(
        *health_table(shown), ht, Text(f"updated {updated}; sampling every {every:g} s; Ctrl-C to stop", style="dim")
    )


# -- add-controller / remove-controller ------------------------------------------------


def voter_change_text(r) -> str:
    """Kafka's line (without its double space in "Removed  KRaft"), then what a dry run checked."""
    if r.action == "remove-controller":
        return (
            f"{'DRY RUN of removing' if r.dry_run else 'Removed'} KRaft controller {r.controller_id} "
            f"with directory id {r.directory_id}"
        )
    return "\n".join(
        [
            f"{'DRY RUN of adding' if r.dry_run else 'Added'} controller {r.controller_id} with "
            f"directory id {r.directory_id} and endpoints: {', '.join(r.endpoints)}",
            *("  " + c for c in r.checked or []),
        ]
    )


def voter_change_doc(r) -> dict:
    doc = {"action": r.action, "dryRun": r.dry_run, "controllerId": r.controller_id, "directoryId": r.directory_id}
    if r.action == "add-controller":
        doc["endpoints"] = list(r.endpoints)
        if r.dry_run:
            doc["checked"] = list(r.checked)
    return doc


def unregister_text(plan, how: str) -> str:
    """Kafka 4.4's lines: kafka-cluster.sh unregister-controller ("Controller N is no longer
    registered."), kafka-metadata-quorum.sh remove-controller --unregister ("Removed KRaft
    controller N with directory id D" then "Unregistered KRaft controller N"); a dry run
    prints what it checked, then Kafka's DRY RUN lines."""
    n = plan.controller_id
    lines = [] if plan.apply else list(plan.checked)
    if how == "remove-controller":
        lines.append(
            f"{'Removed' if plan.apply else 'DRY RUN of removing'} KRaft controller {n} "
            f"with directory id {plan.removed_voter}"
        )
        lines.append(f"{'Unregistered' if plan.apply else 'DRY RUN of unregistering'} KRaft controller {n}")
    else:
        lines.append(
            f"Controller {n} is no longer registered."
            if plan.apply
            else f"DRY RUN of unregistering controller {n}: run again with --apply to send it"
        )
    return "\n".join(lines)
