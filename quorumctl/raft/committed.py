"""Which entries of each replica are committed, from several replicas' files.

Raft's rule (KIP-595 follows it): the leader advances the high watermark past an
entry once a majority of the voters hold it, and only by an entry of its own
epoch. Offline, with the files of some voters:

* two replicas hold the same entries up to their common prefix: the log matching
  property (the same epoch at the same offset implies the same prefix) makes it
  the last offset where both hold an entry of the same epoch (a snapshot
  `END-EPOCH` holds the entry END-1 of epoch EPOCH), unless the files show the
  property broken: then it ends below the first pair of different batches of one
  epoch (raft/logmatch.py);
* an entry is *provably committed* when a snapshot covers it (Kafka snapshots
  only committed data) in a replica sharing it; or when a majority of the voters
  hold it and their quorum-state epoch is their last entry's epoch, one epoch for
  all (none of them took part in a later election, so no leader since can lack
  it, nor can one be elected without it); or, with every voter given, when a
  majority holds it and every voter without it has an older last epoch than
  every holder (none of them can win a holder's vote). A majority alone is not
  enough: in the Raft paper's figure 8 a majority holds an entry of an old epoch
  that a later leader still overwrites;
* an entry is *provably uncommitted* when so many voters are shown not to hold it
  (their log ends before it, or holds another entry there) that the rest cannot
  make a majority: voters not given count as possible holders;
* anything else is unknown.

The voter set: the VotersRecord history (kraft.version 1), else the voters of a
static quorum (a data_version 0 quorum-state, or controller.quorum.voters given
by the caller). When the replicas disagree, every candidate set is applied and
only what holds in all of them is claimed. With no voter set known, nothing is
claimed from majorities (snapshots still prove entries committed).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import epochs
from .logmatch import Clash, first_clash
from .replica import Replica


@dataclass
class Known:
    """What a replica's files show of its log: the Raft view, and snapshot points."""

    view: epochs.LogView
    snapshot_points: list[tuple[int, int]]  # (offset, epoch) of a snapshot's last entry

    def ranges(self) -> list[tuple[int, int, int]]:
        """(epoch, start, end) runs of the log's entries."""
        v = self.view
        ents = v.epochs.entries
        out = []
        for i, (e, o) in enumerate(ents):
            lo = max(o, v.log_start)
            hi = min(ents[i + 1][1] if i + 1 < len(ents) else v.log_end, v.log_end)
            if hi > lo:
                out.append((e, lo, hi))
        return out

    def epoch_at(self, offset: int) -> int | None:
        for e, lo, hi in self.ranges():
            if lo <= offset < hi:
                return e
        for o, e in self.snapshot_points:
            if o == offset:
                return e
        return None


def known(r: Replica) -> Known:
    v = r.view()
    return Known(v, [(end - 1, ep) for end, ep in v.snapshots if end > 0])


def common_prefix(a: Known, b: Known, clash: Clash | None = None) -> int:
    """The end of the longest prefix both hold (0 when no entry is shown to match);
    epochs alone say it, unless `clash` (their first log-matching clash) ends it sooner."""
    best = 0
    rb = b.ranges()
    for e, lo, hi in a.ranges():
        for e2, lo2, hi2 in rb:
            if e == e2 and min(hi, hi2) > max(lo, lo2):
                best = max(best, min(hi, hi2))
    for o, e in b.snapshot_points:
        if a.epoch_at(o) == e:
            best = max(best, o + 1)
    for o, e in a.snapshot_points:
        if b.epoch_at(o) == e:
            best = max(best, o + 1)
    return best if clash is None else min(best, clash.prefix_end)


def _last_epoch(k: Known) -> float:
    try:
        return k.view.last_fetched_epoch
    except ValueError:  # an inconsistent log (state reports it): assume the worst
        return float("inf")


def majority(n: int) -> int:
    return n // 2 + 1


def voter_sets(
    replicas: list[Replica], static: list[int] | None = None, static_source: str = "controller.quorum.voters"
) -> tuple[list[list[int]], str]:
    """The candidate voter sets and where they come from (see the module's doc)."""
    dyn: dict[tuple, list[str]] = {}
    for r in replicas:
        if r.voters and r.voters["dynamic"]:
            dyn.setdefault(tuple(r.voters["ids"]), []).append(f"{r.label}'s {r.voters['source']}")
    if dyn:
        return [list(k) for k in dyn], "VotersRecord: " + "; ".join(
            f"{list(k)} ({', '.join(v)})" for k, v in dyn.items()
        )
    st: dict[tuple, list[str]] = {}
    if static:
        st.setdefault(tuple(sorted(static)), []).append(static_source)
    for r in replicas:
        if r.voters and not r.voters["dynamic"] and r.voters["ids"]:
            st.setdefault(tuple(r.voters["ids"]), []).append(f"{r.label}'s quorum-state")
    if st:
        return [list(k) for k in st], "static: " + "; ".join(f"{list(k)} ({', '.join(v)})" for k, v in st.items())
    return [], (
        "unknown (no VotersRecord, no voters in quorum-state, no controller.quorum.voters given): "
        "nothing is claimed from majorities, only snapshots prove entries committed"
    )


def _classify_one(
    i: int, ks: list[Known], ids: list[int | None], cur: list[int | None], cps: list[list[int]], voters: list[int]
) -> tuple[int, int]:
    """(committed end, uncommitted from) of replica i's log under one voter set."""
    n = len(ks)
    maj = majority(len(voters))
    vset = set(voters)
    given = {node: z for z, node in enumerate(ids) if node is not None and node in vset}  # node id -> index
    everyone = set(given) == vset

    def safe(y: int, p: int) -> bool:
        """Is y's prefix [0, p) held by voters that make it committed?"""
        holders = [z for z in given.values() if cps[y][z] >= p]
        if len(holders) < maj:
            return False
        last = {z: _last_epoch(ks[z]) for z in given.values()}
        # no holder ever took part in an epoch after its last entry's: no leader
        # since could have been elected without them, nor can one be now
        same: dict[int, int] = {}
        for z in holders:
            epoch = cur[z]
            if epoch is not None and epoch == last[z]:
                same[epoch] = same.get(epoch, 0) + 1
        if any(c >= maj for c in same.values()):
            return True
        # every voter given: one without the prefix can win no holder's vote
        # (its log is less up to date than every holder's)
        low = min(last[z] for z in holders)
        return everyone and all(last[z] < low for z in given.values() if z not in holders)

    def own_committed(y: int) -> int:
        for p in sorted({cps[y][z] for z in given.values()}, reverse=True):
            if p > 0 and safe(y, p):
                return p
        return 0

    committed = 0
    for y in range(n):
        committed = max(committed, min(own_committed(y), cps[i][y]))
    v = ks[i].view
    end = v.log_end
    # uncommitted: voters shown not to hold offset o: their log reaches o (or ends
    # before it) without the entry; replica i itself holds its own entries
    thresholds: dict[int, int] = {}
    for node, z in given.items():
        if node != ids[i]:
            thresholds[node] = max(cps[i][z], ks[z].view.log_start)
    uncommitted = end
    possible = len(vset)
    for t in sorted(thresholds.values()):
        possible -= 1
        if possible < maj:
            uncommitted = max(t, v.log_start)
            break
    return min(committed, end), min(uncommitted, end)


def classify(
    replicas: list[Replica], static: list[int] | None = None, static_source: str = "controller.quorum.voters"
) -> dict:
    """The committed / unknown / uncommitted split of each replica's log (JSON-ready)."""
    ks = [known(r) for r in replicas]
    ids = [r.node_id for r in replicas]
    cur = [r.quorum_state["leaderEpoch"] if r.quorum_state else None for r in replicas]
    n = len(ks)
    clash = {(a, b): first_clash(replicas[a], replicas[b]) for a in range(n) for b in range(a + 1, n)}
    cps = [
        [ks[a].view.log_end if a == b else common_prefix(ks[a], ks[b], clash[min(a, b), max(a, b)]) for b in range(n)]
        for a in range(n)
    ]
    sets, source = voter_sets(replicas, static, static_source)
    out = []
    for i, r in enumerate(replicas):
        v = ks[i].view
        # snapshots: what a replica sharing the prefix has snapshotted is committed
        snap = 0
        for y in range(n):
            ends = [end for end, _ in ks[y].view.snapshots]
            if ends:
                snap = max(snap, min(max(ends), cps[i][y]))
        committed, uncommitted = [], []
        for vs in sets:
            c, u = _classify_one(i, ks, ids, cur, cps, vs)
            committed.append(c)
            uncommitted.append(u)
        c = max(snap, min(committed) if committed else 0)
        u = max(uncommitted) if uncommitted else v.log_end
        note = None
        if u < c:  # the files contradict each other (say, a snapshot above what a majority holds)
            note = (
                f"the evidence conflicts: offsets from {u} look uncommitted, yet other evidence proves "
                f"them committed up to {c}"
            )
            u = c
        is_voter = all(r.node_id in vs for vs in sets) if sets else None  # None: voters unknown
        out.append(
            {
                "replica": r.label,
                "node_id": r.node_id,
                "voter": is_voter,
                "log_start_offset": v.log_start,
                "log_end_offset": v.log_end,
                "committed_end_offset": min(c, v.log_end),
                "uncommitted_from_offset": u,
                "note": note,
            }
        )
    return {"voter_sets": sets, "voters_source": source, "majority": [majority(len(s)) for s in sets], "replicas": out}
