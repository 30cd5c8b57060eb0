"""Hostile input: random bytes and randomly mutated real segments never raise an
uncaught exception, never hang, and never allocate far beyond the input."""

from __future__ import annotations

import io
import tracemalloc

from hypothesis import HealthCheck, given, settings, strategies as st

from quorumctl.dump.log import dump_range
from quorumctl.render.dumplog import Sink
from quorumctl.records import metadata as md
from quorumctl.records.batch import BatchError, BatchReader, encode_batch
from quorumctl.render.dumplog import Options
from quorumctl.ops.verify import scan_batches


def sample_segment() -> bytes:
    """A small realistic segment: a LeaderChange, then metadata batches, one gzip'd."""
    key, value = md.encode_control(
        md.LEADER_CHANGE, {"version": 0, "leaderId": 1, "voters": [{"voterId": 1}], "grantingVoters": [{"voterId": 1}]}
    )
    out = [encode_batch([(key, value)], base_offset=0, leader_epoch=1, control=True)]
    recs = [(None, md.encode_metadata("TopicRecord", 0, {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAg"}))]
    recs += [
        (
            None,
            md.encode_metadata(
                "PartitionRecord",
                0,
                {
                    "partitionId": p,
                    "topicId": "AAAAAAAAAAAAAAAAAAAAAg",
                    "replicas": [1],
                    "isr": [1],
                    "removingReplicas": [],
                    "addingReplicas": [],
                    "leader": 1,
                    "leaderRecoveryState": 0,
                    "leaderEpoch": 0,
                    "partitionEpoch": 0,
                },
            ),
        )
        for p in range(5)
    ]
    out.append(encode_batch(recs, base_offset=1, leader_epoch=1))
    out.append(encode_batch(recs, base_offset=7, leader_epoch=1, compression_codec=1))
    return b"".join(out)


SEGMENT = sample_segment()


def exercise(data: bytes, tmp_path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        for b in BatchReader(str(path)):
            if hasattr(b, "records"):
                try:
                    for r in b.records():
                        md.decode_metadata(r.value)
                        md.decode_control(r.key, r.value)
                except BatchError:
                    pass
        scan_batches(str(path), contiguous=True, deep=True)
        for as_json in (False, True):
            dump_range(
                str(path),
                Options(deep=True, print_data=True, metadata_decoder=True),
                Sink(io.StringIO(), io.StringIO()),
                as_json=as_json,
                decode_json=True,
            )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a few MiB of working memory at most, whatever lengths the bytes claim
    assert peak < 8 * 1024 * 1024 + 64 * len(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=2048))
def test_random_bytes(tmp_path, data):
    exercise(data, tmp_path)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.integers(0, len(SEGMENT) - 1), st.integers(0, 255)), min_size=1, max_size=6),
    st.integers(0, len(SEGMENT)),
)
def test_mutated_segment(tmp_path, flips, cut):
    data = bytearray(SEGMENT)
    for pos, val in flips:
        data[pos] = val
    exercise(bytes(data[:cut] if cut > 61 else data), tmp_path)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512))
def test_metadata_and_control_values(value):
    d = md.decode_metadata(value)
    assert (d.data is None) == (d.error is not None)
    c = md.decode_control(value[:4], value[4:])
    assert (c.data is None) == (c.error is not None)


def test_huge_claimed_lengths_do_not_allocate(tmp_path):
    # a batch header claiming 2 GiB, and a record claiming 2^31 headers
    import struct

    bad = struct.pack(">qi", 0, 0x7FFFFFF0) + b"\x00" * 100
    exercise(bad, tmp_path)
    body = bytearray(SEGMENT)
    exercise(bytes(body[:70]) + b"\xff\xff\xff\xff\x0f" * 20, tmp_path)


# -- record count and offset deltas, CRC fixed up (issue 13) ------------------------------------------

_VALUE = md.encode_metadata("TopicRecord", 0, {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAg"})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    deltas=st.lists(st.integers(-3, 12), min_size=1, max_size=8),
    count_shift=st.integers(-9, 9),
    last_shift=st.integers(-3, 3),
    codec=st.sampled_from([0, 1, 2, 3, 4]),
    data=st.data(),
)
def test_record_count_and_offset_delta_mutations(tmp_path, deltas, count_shift, last_shift, codec, data):
    """A metadata log batch is clean only with recordCount == lastOffsetDelta + 1 and
    offset deltas 0, 1, 2, ...: any other combination (the CRC still valid) is a
    problem verify reports, at the batch's position and offset, and no reader
    crashes or grows beyond its bound."""
    from hostile import batch_with_deltas

    n = len(deltas)
    count = max(-1, n + count_shift) if data.draw(st.booleans()) else n
    last = max(deltas) + last_shift
    batch = batch_with_deltas([_VALUE] * n, deltas, count=count, last_offset_delta=last, codec=codec, base_offset=100)
    seg = encode_batch([(None, _VALUE)] * 100, base_offset=0) + batch
    exercise(seg, tmp_path)
    path = tmp_path / "00000000000000000000.log"
    legal = deltas == list(range(n)) and count == n and last == n - 1
    for deep in (False, True):
        rep = scan_batches(str(path), contiguous=True, deep=deep)
        if legal:
            assert rep.problems == []
        elif count != last + 1 and last >= 0:  # seen without decoding the records
            assert any(
                p.kind == "record-count" and p.position == len(seg) - len(batch) and p.offset == 100
                for p in rep.problems
            ), rep.problems
        elif deep:
            assert rep.problems, (deltas, count, last)
