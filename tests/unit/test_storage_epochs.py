"""Epoch histories (LeaderEpochFileCache) and KIP-595 divergence on views alone."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from quorumctl.raft.epochs import EpochHistory, LogView, election_key, load_history, reconcile


def view(epochs_per_offset, *, start=0, snapshots=(), batch_sizes=None):
    """A log with one record per offset (or batches of the given sizes)."""
    h = EpochHistory()
    bounds = []
    off = start
    sizes = batch_sizes or [1] * len(epochs_per_offset)
    i = 0
    for n in sizes:
        e = epochs_per_offset[i]
        assert all(x == e for x in epochs_per_offset[i : i + n])
        h.assign(e, off)
        bounds.append(off)
        off += n
        i += n
    return LogView(h, start, start + len(epochs_per_offset), list(snapshots), bounds)


# -- LeaderEpochFileCache semantics (cases of Kafka's LeaderEpochFileCacheTest) -------


def test_assign_and_non_monotonic_truncation():
    h = EpochHistory()
    assert h.assign(2, 6)
    assert not h.assign(2, 7)  # same epoch, later start: no update
    assert h.assign(3, 8)
    assert h.assign(4, 9)
    assert h.assign(3, 10) and h.entries == [(2, 6), (3, 10)]  # lower epoch: later entries dropped
    assert h.assign(5, 7) and h.entries == [(2, 6), (5, 7)]  # earlier start: later entries dropped
    assert h.assign(5, 4) and h.entries == [(5, 4)]  # same epoch, earlier start


def test_end_offset_for():
    h = EpochHistory([(2, 6), (3, 8), (5, 12)])
    assert h.end_offset_for(5, 20) == (5, 20)  # latest epoch: the log end
    assert h.end_offset_for(3, 20) == (3, 12)
    assert h.end_offset_for(4, 20) == (3, 12)  # unknown epoch between: floor epoch, next start
    assert h.end_offset_for(1, 20) == (1, 6)  # below every epoch: the requested one, first start
    assert h.end_offset_for(6, 20) == (-1, -1)  # above every epoch
    assert h.end_offset_for(-1, 20) == (-1, -1)
    assert EpochHistory().end_offset_for(1, 0) == (-1, -1)


def test_truncate_from_end_and_start():
    h = EpochHistory([(2, 6), (3, 8), (5, 12)])
    assert h.truncate_from_end(13) == [] and len(h) == 3
    assert h.truncate_from_end(8) == [(5, 12), (3, 8)] and h.entries == [(2, 6)]
    h = EpochHistory([(2, 6), (3, 8), (5, 12)])
    h.truncate_from_start(9)
    assert h.entries == [(3, 9), (5, 12)]


def test_load_history_follows_recovery():
    # recovery only assigns epochs above the latest one: a stale checkpoint entry for the
    # same epoch survives, a missing higher one is added, entries past the end are cut
    assert load_history([(1, 0), (3, 5)], [(1, 0), (3, 4), (4, 9)], 12).entries == [(1, 0), (3, 5), (4, 9)]
    assert load_history(None, [(1, 0), (1, 3), (2, 6)], 8).entries == [(1, 0), (2, 6)]
    assert load_history([(1, 0), (2, 6), (7, 20)], [(1, 0), (2, 6)], 10).entries == [(1, 0), (2, 6)]


# -- the Raft paper's figure 7: leader of term 8 with log terms 1 1 1 4 4 5 5 6 6 6 ----

LEADER = [1, 1, 1, 4, 4, 5, 5, 6, 6, 6]
FIG7 = {
    "a": ([1, 1, 1, 4, 4, 5, 5, 6, 6], "none", None),
    "b": ([1, 1, 1, 4], "none", None),
    "c": ([1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 6], "diverging", 10),
    "d": ([1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 7, 7], "diverging", 10),
    "e": ([1, 1, 1, 4, 4, 4, 4], "diverging", 5),
    "f": ([1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3], "diverging", 3),
}


def test_figure7_against_the_leader():
    leader = view(LEADER)
    for name, (log, kind, end) in FIG7.items():
        d = reconcile(view(log), leader)
        assert (d.kind, d.new_end) == (kind, end), name
        if kind == "diverging":
            assert d.rounds[-1].answer == "valid"
    # (f) diverges at epoch 1: the leader answers DivergingEpoch(epoch=1, endOffset=3)
    d = reconcile(view(FIG7["f"][0]), leader)
    assert d.first_diverging == (3, 1) and d.truncate_to == 3
    # (d) has the highest last epoch: Raft's rule makes it the most up to date of all
    keys = {n: election_key(view(v[0])) for n, v in FIG7.items()} | {"leader": election_key(leader)}
    assert max(keys, key=keys.get) == "d" and keys["d"] == (7, 12)


def test_kip101_scenarios():
    # 1: a follower that lost its unflushed tail is a prefix: nothing is cut (no message loss)
    assert reconcile(view([0]), view([0, 0])).kind == "none"
    assert reconcile(view([0, 0]), view([0, 0])).kind == "none"
    # 2: A kept m2 (epoch 0) while B led epoch 1 and wrote m3 at offset 1: A cuts m2
    d = reconcile(view([0, 0]), view([0, 1]))
    assert (d.kind, d.first_diverging, d.truncate_to, d.new_end) == ("diverging", (1, 0), 1, 1)


def test_divergence_inside_a_batch():
    # follower: batch 10..14 in epoch 3; leader: 10..12 in epoch 3, then epoch 5 from 13
    f = view([1] * 10 + [3] * 5, batch_sizes=[5, 5, 5])
    ld = view([1] * 10 + [3] * 3 + [5] * 4, batch_sizes=[5, 5, 3, 4])
    d = reconcile(f, ld)
    assert d.kind == "diverging" and d.truncate_to == 13 and d.new_end == 10


def test_snapshot_answer():
    # the leader's log starts at 100 (snapshot 100-4); an empty follower gets the snapshot
    ld = view([4] * 20, start=100, snapshots=[(100, 4)])
    d = reconcile(LogView(EpochHistory(), 0, 0, [], []), ld)
    assert d.kind == "snapshot" and d.snapshot == (100, 4)
    # a follower that ends below the leader's log start too
    d = reconcile(view([2] * 50), ld)
    assert d.kind == "snapshot"
    # the bootstrap snapshot (0, 0) is not sent to an empty follower
    ld0 = view([1] * 5, snapshots=[(0, 0)])
    assert reconcile(LogView(EpochHistory(), 0, 0, [], []), ld0).kind == "none"


# -- property: under Log Matching, the exchange finds exactly the common prefix ------


@st.composite
def scenarios(draw):
    prefix = sorted(draw(st.lists(st.integers(1, 6), min_size=0, max_size=12)))
    last = prefix[-1] if prefix else 0
    epochs = list(range(last + 1, last + 10))
    split = draw(st.integers(0, len(epochs)))
    lead_pool, fol_pool = epochs[:split], epochs[split:]
    lead_suffix = sorted(draw(st.lists(st.sampled_from(lead_pool), max_size=8))) if lead_pool else []
    fol_suffix = sorted(draw(st.lists(st.sampled_from(fol_pool), max_size=8))) if fol_pool else []
    # the leader may also extend the prefix's last epoch (the follower just missed entries)
    if prefix and not fol_suffix:
        lead_suffix = [last] * draw(st.integers(0, 3)) + lead_suffix
    return prefix, lead_suffix, fol_suffix


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_exchange_finds_the_common_prefix(sc):
    prefix, lead_suffix, fol_suffix = sc
    leader = view(prefix + lead_suffix)
    d = reconcile(view(prefix + fol_suffix), leader)
    if not fol_suffix:
        assert d.kind == "none"
    else:
        assert d.kind == "diverging"
        assert d.new_end == len(prefix)
        assert d.rounds[-1].answer == "valid"
