"""`features upgrade|downgrade LOG_DIR`: the same check offline, from the
metadata image at the end of a log dir.

The image holds what the active controller checks: every broker registration
(RegisterBrokerRecord's features, fenced or not) and every controller
registration (RegisterControllerRecord, 3.7-IV0+), and the finalized levels.
With no controller to ask, Kafka's verdict is replayed by
domain.features.controller_verdict, in Kafka's words. Heartbeats are not
written to the metadata log, so no last-heartbeat time is known offline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..domain.features import Change, Node, blockers, controller_verdict, ghost_notes


@dataclass
class OfflineCheck:
    change: Change
    at: dict  # the image's provenance (offset, epoch, time ...)
    finalized: dict[str, int]
    nodes: list[Node]
    blockers: list[dict]
    verdict: dict[str, str | None]
    notes: list[str] = field(default_factory=list)
    log_end: str | None = None  # why replay stopped early, if it did


def nodes_of(img) -> list[Node]:
    """The registrations of an image as Nodes (brokers, then controllers, by id)."""
    out = []
    for bid, b in sorted(img.brokers.items()):
        out.append(
            Node(
                "broker",
                bid,
                {n: tuple(r) for n, r in b["supportedFeatures"].items()},
                b["fenced"],
                b["listeners"][0] if b["listeners"] else None,
                extra={"epoch": b["epoch"], "inControlledShutdown": b["inControlledShutdown"]},
            )
        )
    for cid, c in sorted(img.controllers.items()):
        out.append(
            Node(
                "controller",
                cid,
                {n: tuple(r) for n, r in c["supportedFeatures"].items()},
                None,
                c["listeners"][0] if c["listeners"] else None,
            )
        )
    return out


def active_controller(src, img) -> int | None:
    """The active controller the verdict is replayed as (it checks its own range first): the
    leader in the replica's quorum-state, else the last LeaderChange of the log; only a
    registered controller."""
    import os
    from ..errors import InputError
    from ..logdir.statefiles import read_quorum_state

    leader = None
    files = [p for _, p in src.segments] + [s.path for s in src.snapshots]
    state = os.path.join(os.path.dirname(files[0]), "quorum-state") if files else None
    if state and os.path.isfile(state):
        try:
            leader = read_quorum_state(state).get("leaderId")
        except InputError:
            leader = None
    if (leader is None or leader < 0) and img.leader:
        leader = img.leader.get("leaderId")
    return leader if leader in img.controllers else None


def check_offline(paths: list[str], change: Change) -> OfflineCheck:
    from .replay import open_source, replay
    from .view import provenance

    src = open_source(paths)
    rp = replay(src)
    img = rp.image
    finalized = dict(img.features)
    if img.kraft_version is not None:
        finalized["kraft.version"] = img.kraft_version
    nodes = nodes_of(img)
    found = blockers(nodes, change, finalized.get("metadata.version"))
    notes = []
    if "metadata.version" not in finalized:
        notes.append(
            "the image has no metadata.version (no FeatureLevelRecord): Kafka's controller would not start from it"
        )
    if not img.brokers and not img.controllers:
        notes.append("the image holds no registrations: nothing to check the change against")
    elif finalized.get("metadata.version", 0) < 15:
        notes.append(
            "metadata.version is below 3.7-IV0: controllers do not register, only the active "
            "controller's own range is checked (not known offline)"
        )
    local = active_controller(src, img)
    if local is not None:
        notes.append(f"the verdict is controller {local}'s, the leader this log dir last knew")
    verdict = controller_verdict(change, finalized, nodes, local)
    if img.voters is not None:  # a dynamic quorum: the voters are in the image (a static one's are in configs)
        # the voters' own registrations name their addresses: the remedy's --bootstrap-controller
        via = [img.controllers[v]["listeners"][:1] for v in sorted(img.voters) if v in img.controllers]
        addrs = ",".join(ln[0].split("://", 1)[1] for ln in via if ln and "://" in ln[0])
        notes += ghost_notes(change, found, verdict, set(img.voters), addrs or None)
    return OfflineCheck(change, provenance(img), finalized, nodes, found, verdict, notes, rp.end_reason)
