"""Reading the committed metadata log from the quorum's leader (live/metadata_log.py) against
the simulated quorum, which answers Fetch and FetchSnapshot as KafkaRaftClient does: answers
cut inside a batch, a snapshot in pieces, the byte cap, and the replayed image's brokers."""

from __future__ import annotations

import time

import pytest

from quorumctl.errors import ClusterError
from quorumctl.image.replay import replay_bytes
from quorumctl.live.metadata_log import TooLarge, read_metadata_log
from quorumctl.testing.sim import SimulatedCluster, replica
from quorumctl.wire import messages
from quorumctl.wire.access import ClusterAccess

CID = "rTcAzcTXQpG_6c1zYns8Xw"


def cluster(snapshot_records: int = 0) -> SimulatedCluster:
    now = int(time.time() * 1000)
    c = SimulatedCluster(CID, 2, 5, 100, [replica(i, 100, now, now) for i in (1, 2, 3)], [])
    c.add_nodes(controllers=(1, 2, 3), brokers=(4, 5, 6), profile="4.3")
    for n in c.controllers():
        n.apis[messages.FETCH], n.apis[messages.FETCH_SNAPSHOT] = (4, 18), (0, 1)
    c.node_by_id(5).fenced = True
    c.snapshot_records = snapshot_records
    return c


def read(c: SimulatedCluster, **kw):
    with ClusterAccess(None, c.node_by_id(1).address).connect(5) as client:
        return read_metadata_log(client, **kw)


@pytest.mark.parametrize("snapshot_records", [0, 3])
def test_small_answers_are_joined_into_the_whole_log(snapshot_records):
    """Answers of 150 bytes (a broker's registration is larger: it comes whole, the next one
    cut and fetched again whole), the snapshot in pieces: the bytes read are the leader's own."""
    with cluster(snapshot_records) as c:
        c.advertise_controllers()
        log = read(c, chunk=150)
        snapshot, start, want = c.metadata_log()
    assert log.source == c.node_by_id(2).address and (log.leader_id, log.leader_epoch) == (2, 5)
    assert log.log_bytes == want and log.log_start == start == snapshot_records
    assert log.high_watermark == len(c.finalized) + 3
    if snapshot is None:
        assert (log.snapshot, log.snapshot_bytes) == (None, b"")
    else:
        assert (log.snapshot, log.snapshot_bytes) == ((3, 5), snapshot[2])
        assert len(snapshot[2]) > 150  # so it came in several pieces
    fetches = [b["topics"][0]["partitions"][0]["fetchOffset"] for k, b in c.fetch_requests if k == messages.FETCH]
    assert len(fetches) > 3 and fetches == sorted(fetches)  # batch by batch, never backwards
    img = replay_bytes(log.source, None if log.snapshot is None else (*log.snapshot, log.snapshot_bytes), start, want)
    assert {b: r["fenced"] for b, r in img.brokers.items()} == {4: False, 5: True, 6: False}
    assert img.offset == log.high_watermark - 1


def test_the_byte_cap_is_an_error():
    with cluster(3) as c:
        c.advertise_controllers()
        with pytest.raises(TooLarge, match="the metadata snapshot is [0-9]+ bytes, more than the 100 allowed"):
            read(c, max_bytes=100)
        c.snapshot_records = 0
        with pytest.raises(TooLarge, match="the metadata log is larger than the 300 bytes allowed"):
            read(c, max_bytes=300)


def test_an_answer_from_a_new_leader_epoch_is_refused():
    """The leader's epoch moved between DescribeQuorum and Fetch: FENCED_LEADER_EPOCH is an
    error (the caller says the brokers are not visible), never a log of another epoch."""
    with cluster() as c:
        c.advertise_controllers()
        leader = c.node_by_id(2)
        real = leader._h1

        def moved(version, body, state):
            c.leader_epoch = 6
            return real(version, body, state)

        leader._h1 = moved
        with pytest.raises(ClusterError, match="answered Fetch with FENCED_LEADER_EPOCH"):
            read(c)


def test_what_is_above_the_high_watermark_is_left_out():
    """The leader reads its log to its end (Isolation.UNCOMMITTED): the batches at and above
    the high watermark (broker 6's registration here) are not part of what was read."""
    with cluster() as c:
        c.advertise_controllers()
        c.uncommitted_records = 1
        log = read(c)  # one answer holds the whole log
        _snapshot, _start, whole = c.metadata_log()
    assert log.high_watermark == len(c.finalized) + 2
    assert whole.startswith(log.log_bytes) and len(log.log_bytes) < len(whole)
    img = replay_bytes(log.source, None, 0, log.log_bytes)
    assert sorted(img.brokers) == [4, 5] and img.offset == log.high_watermark - 1
