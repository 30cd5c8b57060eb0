"""Producer-state snapshots and transaction indexes: Kafka's layout and dump
lines, real files (cross-checked against their own logs), bad input as one
InputError line, random bytes."""

from __future__ import annotations

import dataclasses
import glob
import os
import struct

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from quorumctl.errors import InputError
from quorumctl.records.batch import BatchReader
from quorumctl.logdir import producer_state
from samples import CORPUS, FIXTURES, blocks

STATIC = FIXTURES / "kafka-3.7.0-static"


def entry(pid=7, epoch=2, last_seq=14, last_offset=120, delta=4, ts=1_700_000_000_123, coord=-1, txn=-1):
    return producer_state.ProducerEntry(pid, epoch, last_seq, last_offset, delta, ts, coord, txn)


def write(tmp_path, data: bytes, name="00000000000000000801.snapshot") -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


# -- snapshots: layout and lines -----------------------------------------------------


def test_hand_built_snapshot_bytes_and_line(tmp_path):
    body = struct.pack(">i", 1) + struct.pack(">qhiqiqiq", 7, 2, 14, 120, 4, 1_700_000_000_123, -1, -1)
    data = struct.pack(">hI", 1, crc32c.crc32c(body)) + body
    assert len(data) == 10 + 46
    assert producer_state.snapshot_bytes([entry()]) == data
    path = write(tmp_path, data)
    assert producer_state.read_producer_snapshot(path) == [entry()]
    assert list(producer_state.producer_snapshot_lines(path)) == [
        "producerId: 7 producerEpoch: 2 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty "
        "lastTimestamp: 1700000000123 firstSequence: 10 lastSequence: 14 lastOffset: 120 offsetDelta: 4 "
        "timestamp: 1700000000123"
    ]


def test_line_without_batch_metadata_and_with_ongoing_txn(tmp_path):
    path = write(tmp_path, producer_state.snapshot_bytes([entry(last_offset=-1, txn=500, coord=3, epoch=0)]))
    # Kafka keeps no batch metadata when last_offset < 0: the line ends after lastTimestamp
    # (and, in Kafka 4.1, a space)
    line = (
        "producerId: 7 producerEpoch: 0 coordinatorEpoch: 3 currentTxnFirstOffset: OptionalLong[500] "
        "lastTimestamp: 1700000000123"
    )
    assert list(producer_state.producer_snapshot_lines(path)) == [line]
    assert list(producer_state.producer_snapshot_lines(path, "4.1")) == [line + " "]


def test_first_sequence_wraps_like_decrement_sequence():
    # DefaultRecordBatch.decrementSequence: below zero wraps to Integer.MAX_VALUE
    assert entry(last_seq=2, delta=5).first_sequence == 2147483645
    assert entry(last_seq=5, delta=5).first_sequence == 0
    assert entry(last_seq=2147483647, delta=1).first_sequence == 2147483646


@pytest.mark.shared("reference/fixtures/kafka-3.7.0-static")
def test_empty_snapshot_prints_nothing_as_in_kafka_transcript(monkeypatch):
    [b] = [b for b in blocks("dumplog-3.7.0-after-clean-shutdown.txt") if b.command.endswith(".snapshot")]
    monkeypatch.chdir(STATIC)
    path = b.argv[b.argv.index("--files") + 1]
    assert os.path.getsize(path) == 10
    assert b.lines == [f"Dumping {path}"]
    assert list(producer_state.producer_snapshot_lines(path)) == []
    assert producer_state.check_producer_snapshot(path) == []


@pytest.mark.shared("corpus/CATALOG.json")
def test_corpus_snapshots_agree_with_their_logs():
    """Every real producer snapshot reads with a valid CRC; each producer's last
    batch (offset, sequence, delta, timestamp, epoch) is a real batch of that
    producer in the partition's log when the log still holds it."""
    paths = sorted(glob.glob(str(CORPUS / "**" / "*.snapshot"), recursive=True))
    assert len(paths) == 131
    producers = matched = 0
    for path in paths:
        entries = producer_state.read_producer_snapshot(path)
        assert os.path.getsize(path) == 10 + 46 * len(entries)
        producers += len(entries)
        logs = glob.glob(os.path.join(os.path.dirname(path), "*.log"))
        by_last = {}
        for log in logs:
            for b in BatchReader(log):
                if b.producer_id >= 0:
                    by_last[(b.producer_id, b.last_offset)] = b
        for e in entries:
            assert e.current_txn_first_offset == -1 and e.has_batch
            b = by_last.get((e.producer_id, e.last_offset))
            if b is None:
                continue
            assert (b.producer_epoch, b.last_sequence, b.last_offset_delta, b.max_timestamp) == (
                e.producer_epoch,
                e.last_sequence,
                e.offset_delta,
                e.timestamp,
            ), path
            assert e.first_sequence == b.base_sequence
            matched += 1
    assert (producers, matched) == (81, 79)


def test_snapshot_of_many_producers_streams(tmp_path):
    es = [entry(pid=i, last_offset=i * 3, last_seq=i, delta=0) for i in range(5000)]
    path = write(tmp_path, producer_state.snapshot_bytes(es))
    assert producer_state.read_producer_snapshot(path) == es


# -- snapshots: bad input ----------------------------------------------------------------


def test_bad_crc(tmp_path):
    data = bytearray(producer_state.snapshot_bytes([entry()]))
    data[30] ^= 1
    path = write(tmp_path, bytes(data))
    stored = struct.unpack_from(">I", data, 2)[0]
    computed = crc32c.crc32c(bytes(data[6:]))
    with pytest.raises(InputError) as e:
        producer_state.read_producer_snapshot(path)
    assert str(e.value) == (
        f"{path}: byte 2: producer snapshot CRC-32C mismatch: stored {stored}, computed {computed} over bytes 6..56"
    )
    [p] = producer_state.check_producer_snapshot(path)
    assert (p.kind, p.position, p.path) == ("producer-snapshot", 2, path)


@pytest.mark.parametrize(
    "data,pos,text",
    [
        (
            b"\x00\x01\x00\x00\x00",
            0,
            "expected a producer snapshot header of 10 bytes (version, crc, entry count), found 5 bytes",
        ),
        (struct.pack(">hIi", 1, 0, -1), 6, "producer entry count -1 is negative"),
        (
            struct.pack(">hIi", 1, 0, 2) + bytes(50),
            10,
            "expected 2 producer entries of 46 bytes (a file of 102 bytes), found a file of 60 bytes",
        ),
    ],
)
def test_short_or_bad_layout(tmp_path, data, pos, text):
    path = write(tmp_path, data)
    with pytest.raises(InputError) as e:
        list(producer_state.producer_snapshot_lines(path))
    assert str(e.value) == f"{path}: byte {pos}: {text}"
    assert "\n" not in str(e.value)


def test_unknown_version_is_checked_before_crc(tmp_path):
    good = producer_state.snapshot_bytes([entry()], version=2)
    path = write(tmp_path, good)
    with pytest.raises(InputError, match=r"byte 0: unknown producer snapshot version 2 \(expected 1\)$"):
        producer_state.read_producer_snapshot(path)


def test_trailing_bytes_are_ignored_like_kafka(tmp_path):
    body = struct.pack(">i", 1) + struct.pack(">qhiqiqiq", 1, 0, 0, 0, 0, 5, -1, -1) + b"junk"
    path = write(tmp_path, struct.pack(">hI", 1, crc32c.crc32c(body)) + body)
    assert len(producer_state.read_producer_snapshot(path)) == 1


def test_missing_snapshot(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        producer_state.read_producer_snapshot(str(tmp_path / "nope.snapshot"))


# -- transaction index ----------------------------------------------------------------


def test_txn_index_lines(tmp_path):
    p = tmp_path / "00000000000000000100.txnindex"
    raw = struct.pack(">hqqqq", 0, 7, 110, 130, 105) + struct.pack(">hqqqq", 0, 9, 131, 140, 131)
    assert len(raw) == 2 * 34
    p.write_bytes(raw)
    assert producer_state.txn_index_bytes([(7, 110, 130, 105), (9, 131, 140, 131)]) == raw
    out, err = producer_state.txn_index_lines(str(p))
    assert out == [
        "version: 0 producerId: 7 firstOffset: 110 lastOffset: 130 lastStableOffset: 105",
        "version: 0 producerId: 9 firstOffset: 131 lastOffset: 140 lastStableOffset: 131",
    ]
    assert err == []
    assert [t.position for t in producer_state.read_txn_index(str(p))] == [0, 34]
    assert producer_state.check_txn_index(str(p), 100) == []


def test_txn_index_partial_entry_and_bad_version(tmp_path):
    p = tmp_path / "00000000000000000000.txnindex"
    p.write_bytes(producer_state.txn_index_bytes([(1, 2, 3, 4)]) + b"\x00" * 10)
    out, err = producer_state.txn_index_lines(str(p))
    assert len(out) == 1 and err == [f"{p}: 10 bytes after the last whole 34-byte entry (ignored)"]
    assert [(x.kind, x.position) for x in producer_state.check_txn_index(str(p), 0)] == [("index-size", 34)]
    p.write_bytes(producer_state.txn_index_bytes([(1, 2, 3, 4)]) + struct.pack(">hqqqq", 1, 1, 5, 6, 7))
    with pytest.raises(InputError) as e:
        producer_state.txn_index_lines(str(p))
    assert str(e.value) == f"{p}: byte 34: unexpected aborted transaction version 1 (expected 0)"
    assert [(x.kind, x.position) for x in producer_state.check_txn_index(str(p), 0)] == [("txnindex-version", 34)]


def test_txn_index_checks(tmp_path):
    p = tmp_path / "00000000000000000100.txnindex"
    p.write_bytes(producer_state.txn_index_bytes([(1, 90, 95, 90), (2, 120, 110, 100), (3, 100, 108, 100)]))
    probs = producer_state.check_txn_index(str(p), 100)
    assert [(x.kind, x.position, x.offset) for x in probs] == [
        ("txnindex-below-base", 0, 95),
        ("txnindex-range", 34, 120),
        ("txnindex-decreasing", 68, 108),
    ]


# -- random bytes -------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200))
def test_random_bytes_only_input_error(tmp_path, data):
    snap = tmp_path / "00000000000000000000.snapshot"
    txn = tmp_path / "00000000000000000000.txnindex"
    snap.write_bytes(data)
    txn.write_bytes(data)
    try:
        producer_state.read_producer_snapshot(str(snap))
    except InputError as e:
        assert str(e).startswith(f"{snap}: byte ") and "\n" not in str(e)
    assert isinstance(producer_state.check_producer_snapshot(str(snap)), list)
    try:
        producer_state.txn_index_lines(str(txn))
    except InputError as e:
        assert str(e).startswith(f"{txn}: byte ")
    assert isinstance(producer_state.check_txn_index(str(txn), 0), list)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.integers(-(2**63), 2**63 - 1),
            st.integers(-(2**15), 2**15 - 1),
            st.integers(-(2**31), 2**31 - 1),
            st.integers(-(2**63), 2**63 - 1),
            st.integers(-(2**31), 2**31 - 1),
            st.integers(-(2**63), 2**63 - 1),
            st.integers(-(2**31), 2**31 - 1),
            st.integers(-(2**63), 2**63 - 1),
        ),
        max_size=20,
    )
)
def test_round_trip(tmp_path, rows):
    path = write(tmp_path, producer_state.snapshot_bytes(rows))
    got = producer_state.read_producer_snapshot(path)
    assert [dataclasses.astuple(e) for e in got] == rows
    for e in got:
        line = e.kafka_line()
        assert line.startswith(f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} ")
        assert line.endswith(f" timestamp: {e.timestamp}") == (e.last_offset >= 0)
