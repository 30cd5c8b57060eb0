"""Offset and time indexes: reading to the logical end, Kafka's dump-log text
(against real transcripts), and the verify checks (real fixtures and corpus,
then one generated segment per problem kind, then random bytes)."""

from __future__ import annotations

import json
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from quorumctl.errors import InputError
from quorumctl.records.batch import BatchReader, encode_batch
from quorumctl.logdir import indexes
from quorumctl.logdir import index_lookup
from quorumctl.logdir import index_dump
from quorumctl.logdir import index_checks
from samples import CORPUS, FIXTURES, blocks

STATIC = FIXTURES / "kafka-3.7.0-static"
needs_fixtures = pytest.mark.shared("reference/fixtures/kafka-3.7.0-static")
needs_corpus = pytest.mark.shared("corpus/CATALOG.json")

BASE = 0


# -- generated segments ----------------------------------------------------------


def make_log(tmp_path, spec, base=BASE, name=None, tail=b""):
    """spec: list of (record count, timestamps) per batch; returns (log path, batches as
    (base offset, last offset, position, size, max timestamp))."""
    data = bytearray()
    out = []
    off = base
    for count, ts in spec:
        b = encode_batch(
            [(None, b"v" * 40, (), t) for t in ts] if ts else [(None, b"v" * 40)] * count,
            base_offset=off,
            base_timestamp=min(ts) if ts else 0,
        )
        out.append((off, off + count - 1, len(data), len(b), max(ts) if ts else 0))
        data += b
        off += count
    path = tmp_path / (name or f"{base:020d}.log")
    path.write_bytes(bytes(data) + tail)
    return str(path), out


def write_index(tmp_path, entries, base=BASE, extra=b""):
    p = tmp_path / f"{base:020d}.index"
    p.write_bytes(b"".join(struct.pack(">ii", o - base, pos) for o, pos in entries) + extra)
    return str(p)


def write_timeindex(tmp_path, entries, base=BASE, extra=b""):
    p = tmp_path / f"{base:020d}.timeindex"
    p.write_bytes(b"".join(struct.pack(">qi", ts, o - base) for ts, o in entries) + extra)
    return str(p)


def spec_simple(n=12, per=1):
    return [(per, [1_000 + 10 * i + j for j in range(per)]) for i in range(n)]


def kinds(problems):
    return [(p.kind, p.position, p.offset) for p in problems]


# -- reading ---------------------------------------------------------------------


def test_logical_end_stops_at_preallocated_zeros(tmp_path):
    log, bs = make_log(tmp_path, spec_simple())
    idx = write_index(tmp_path, [(bs[3][1], bs[3][2]), (bs[7][1], bs[7][2])], extra=bytes(1 << 20))
    tix = write_timeindex(tmp_path, [(bs[3][4], bs[3][1]), (bs[7][4], bs[7][1])], extra=bytes(12 * 90000))
    assert indexes.read_offset_index(idx) == [(3, bs[3][2]), (7, bs[7][2])]
    assert indexes.read_time_index(tix) == [(1030, 3), (1070, 7)]
    s = indexes.scan_index(idx)
    assert (s.entries, s.nonzero_entries, s.file_entries, s.end_position, s.after_end) == (2, 2, 131074, 16, 0)
    assert index_checks.check_offset_index(idx) == [] and index_checks.check_time_index(tix) == []


def test_all_zero_index_is_empty_and_base_offset_from_name(tmp_path):
    p = tmp_path / "00000000000000000500.index"
    p.write_bytes(bytes(8 * 100))
    assert indexes.read_offset_index(str(p)) == []
    p2 = tmp_path / "00000000000000000500.timeindex"
    p2.write_bytes(struct.pack(">qi", 77, 0) + bytes(24))  # a first entry at the base offset is real
    assert indexes.read_time_index(str(p2)) == [(77, 500)]
    with pytest.raises(InputError, match="base offset"):
        indexes.read_offset_index(str(tmp_path / "x.index"))


def test_read_rejects_partial_entry_with_kafkas_text(tmp_path):
    p = write_index(tmp_path, [(5, 100)], extra=b"\x00\x01\x02")
    with pytest.raises(InputError) as e:
        indexes.read_offset_index(p)
    assert (
        str(e.value)
        == f"Index file {os.path.abspath(p)} is corrupt, found 11 bytes which is neither positive nor a multiple of 8"
    )
    t = write_timeindex(tmp_path, [(1, 5)], extra=b"\x01")
    with pytest.raises(InputError, match=r"Time index file .* found 13 bytes .* multiple of 12$"):
        indexes.read_time_index(t)


def test_missing_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        indexes.read_offset_index(str(tmp_path / "00000000000000000000.index"))


# -- real fixtures and Kafka's transcripts -----------------------------------------


def _transcript_cases():
    """(transcript, cwd relative to STATIC, block) for every index/timeindex dump."""
    if not STATIC.is_dir():
        return []
    cwd = {
        "dumplog-3.7.0.txt": "snap1",
        "dumplog-corruption-3.7.0.txt": "corrupt",
        "dumplog-3.7.0-after-clean-shutdown.txt": ".",
    }
    out = []
    for name, where in cwd.items():
        for b in blocks(name):
            files = b.argv[b.argv.index("--files") + 1].split(",")
            if len(files) == 1 and files[0].rsplit(".", 1)[-1] in ("index", "timeindex"):
                out.append(pytest.param(name, where, b, id=f"{name}:{b.command.split('--files ')[1]}"))
    return out


@needs_fixtures
@pytest.mark.parametrize("name,where,block", _transcript_cases())
def test_dump_equals_kafka_transcript(name, where, block, monkeypatch):
    monkeypatch.chdir(STATIC / where)
    path = block.argv[block.argv.index("--files") + 1]
    verify = "--verify-index-only" in block.argv
    sanity = "--index-sanity-check" in block.argv
    fn = index_dump.dump_timeindex_lines if path.endswith(".timeindex") else index_dump.dump_index_lines
    out, err = fn(path, verify_only=verify, sanity_check=sanity)
    assert block.lines[0] == f"Dumping {path}"
    kafka = [line.replace("/var/lib/kafka/corrupt/", str(STATIC / "corrupt") + "/") for line in block.lines[1:]]
    if block.exit == 1:
        # Kafka's sanity check throws on the preallocated active time index; ours stops at the logical end
        assert "CorruptIndexException" in kafka[0] and "last timestamp is 0" in kafka[0]
        assert (out, err) == ([f"{path} passed sanity check."], [])
    else:
        assert out + err == kafka


@needs_fixtures
def test_transcripts_cover_the_cases():
    ids = [p.id for p in _transcript_cases()]
    assert len(ids) == 12
    assert any("e_idx/00000000000000000000.index --verify-index-only" in i for i in ids)


@needs_fixtures
def test_snap1_preallocated_indexes_read_to_logical_end():
    idx = STATIC / "snap1" / "00000000000000000000.index"
    tix = STATIC / "snap1" / "00000000000000000000.timeindex"
    assert idx.stat().st_size == 10485760 and tix.stat().st_size == 10485756
    assert indexes.read_offset_index(str(idx)) == [(55, 4167)]
    assert indexes.read_time_index(str(tix)) == [(1795305198707, 55)]
    s = indexes.scan_index(str(tix), time=True)
    assert (s.entries, s.nonzero_entries, s.file_entries, s.remainder, s.after_end) == (1, 1, 873813, 0, 0)
    assert index_checks.check_offset_index(str(idx)) == [] and index_checks.check_time_index(str(tix)) == []


@needs_fixtures
def test_c3_trimmed_index_has_the_14_entries_of_the_transcript():
    b = [
        b for b in blocks("dumplog-3.7.0-after-clean-shutdown.txt") if b.command.endswith("00000000000000000000.index")
    ][0]
    got = indexes.read_offset_index(str(STATIC / "data/c3/__cluster_metadata-0/00000000000000000000.index"))
    assert len(got) == 14 and [f"offset: {o} position: {p}" for o, p in got] == b.lines[1:]


@needs_fixtures
@pytest.mark.parametrize("node", ["c1", "c2", "c3", "b4"])
def test_fixture_indexes_check_clean(node):
    d = STATIC / "data" / node / "__cluster_metadata-0"
    notes = []
    assert index_checks.check_offset_index(str(d / "00000000000000000000.index"), notes=notes) == []
    assert index_checks.check_time_index(str(d / "00000000000000000000.timeindex"), notes=notes) == []
    assert notes == []


@needs_fixtures
def test_e_idx_checks():
    d = STATIC / "corrupt" / "e_idx"
    idx, tix = str(d / "00000000000000000000.index"), str(d / "00000000000000000000.timeindex")
    # (6, 106): the batch at 106 holds 1..5 and offset 6 is the next batch, which is what a
    # pre-4.1 follower's two-batch append wrote (KAFKA-806): a mismatch, as kafka-dump-log says
    [p] = index_checks.check_offset_index(idx)
    assert (p.kind, p.position, p.offset) == ("index-offset-mismatch", 0, 6)
    assert (
        "holds offsets 1..5, not ending at the entry's offset 6 (kafka-dump-log: Index offset: 6, "
        "log offset: 5); offset 6 is in the batch at 364: Kafka before 4.1" in p.message
    )
    probs = index_checks.check_time_index(tix)
    assert kinds(probs) == [("timeindex-out-of-order", 12, 6), ("timeindex-timestamp-mismatch", 12, 6)]
    assert "expected 1795305176413" in probs[1].message


# -- the corpus -------------------------------------------------------------------


def _corpus_index_files():
    if not (CORPUS / "CATALOG.json").exists():
        return []
    cat = json.loads((CORPUS / "CATALOG.json").read_text())
    return [f for repo in cat.values() for f in repo["files"] if f["kind"] in ("index", "timeindex")]


@needs_corpus
def test_corpus_indexes_match_catalog_and_check_clean():
    files = _corpus_index_files()
    assert len(files) > 1200
    checked = gaps = 0
    for f in files:
        path = str(CORPUS / f["local"])
        time = f["kind"] == "timeindex"
        s = indexes.scan_index(path, time)
        st_ = f["stats"]
        assert (s.file_entries, s.nonzero_entries, s.remainder) == (
            st_["entries"],
            st_["nonzero_entries"],
            st_["remainder"],
        ), path
        read = (indexes.read_time_index if time else indexes.read_offset_index)(path)
        assert len(read) == s.entries
        if not os.path.exists(indexes.sibling(path, "log")):
            continue
        notes = []
        probs = (
            index_checks.check_time_index(path, notes=notes)
            if time
            else index_checks.check_offset_index(path, notes=notes)
        )
        assert probs == [], path
        if s.after_end:
            # a zero gap in a trimmed index (lost writes): not the end Kafka's dump shows
            gaps += 1
            assert len(notes) == 1 and f"{s.after_end} non-zero entries follow" in notes[0]
        else:
            assert s.entries == st_["nonzero_entries"] and notes == []
        checked += 1
    assert checked > 1200 and gaps == 2


@needs_corpus
def test_corpus_dump_reports_are_kafkas_algorithm():
    """Kafka's dump-log finds no offset index mismatch in the corpus; its time index
    check reports 'not found' where older brokers indexed the record (not the
    batch's last) offset: each report names the last offset of the batch holding it."""
    reported = 0
    for f in _corpus_index_files():
        path = str(CORPUS / f["local"])
        if not os.path.exists(indexes.sibling(path, "log")):
            continue
        if f["kind"] == "index":
            empty = [f"{path} is empty."] if f["stats"]["nonzero_entries"] == 0 else []
            assert index_dump.dump_index_lines(path, verify_only=True) == (empty, []), path
            continue
        d = index_dump.dump_time_index(path, verify_only=True)
        assert list(d) == []
        assert (d.mismatches, d.ts_mismatches, d.out_of_order, d.invalid, d.errors) == ([], [], [], [], [])
        if d.not_found:
            batches = [(b.base_offset, b.last_offset) for b in BatchReader(indexes.sibling(path, "log"))]
            for off, found in d.not_found:
                assert [last for base, last in batches if base <= off <= last] == [found]
                assert found > off
            reported += len(d.not_found)
    assert reported == 532


# -- one generated segment per problem kind ----------------------------------------------


@pytest.fixture
def seg(tmp_path):
    log, bs = make_log(tmp_path, spec_simple(12, per=2))  # 24 offsets, batches of 2
    return tmp_path, log, bs


def test_generated_valid_index_checks_clean(seg):
    tmp, log, bs = seg
    idx = write_index(tmp, [(b[1], b[2]) for b in bs[2::3]])
    tix = write_timeindex(tmp, [(b[4], b[1]) for b in bs[2::3]])
    assert index_checks.check_offset_index(idx) == [] and index_checks.check_time_index(tix) == []
    assert index_dump.dump_index_lines(idx, verify_only=True) == ([], [])
    assert index_dump.dump_timeindex_lines(tix, verify_only=True) == ([], [])


def test_index_entry_past_end_of_log(seg):
    tmp, log, bs = seg
    size = os.path.getsize(log)
    idx = write_index(tmp, [(bs[2][1], bs[2][2]), (23, size + 100)])
    [p] = index_checks.check_offset_index(idx)
    assert (p.kind, p.position, p.offset, p.path) == ("index-past-end", 8, 23, idx)
    assert f"the log has {size} bytes" in p.message
    out, err = index_dump.dump_index_lines(idx)
    assert out == ["offset: 5 position: %d" % bs[2][2], f"offset: 23 position: {size + 100}"]
    assert err == [
        f"Index entries that point at no readable batch in :{os.path.abspath(idx)}",
        f"  Index offset: 23, position: {size + 100}: position {size + 100} is past the end of the log ({size} bytes)",
    ]


def test_index_entry_into_torn_tail(tmp_path):
    log, bs = make_log(tmp_path, spec_simple(6), tail=encode_batch([(None, b"x" * 50)], base_offset=6)[:40])
    idx = write_index(tmp_path, [(6, bs[-1][2] + bs[-1][3])])
    [p] = index_checks.check_offset_index(idx)
    assert p.kind == "index-past-end" and f"its batches end at byte {bs[-1][2] + bs[-1][3]}" in p.message


def test_index_entry_not_at_batch_boundary(seg):
    tmp, log, bs = seg
    idx = write_index(tmp, [(bs[4][1], bs[4][2] + 5)])
    [p] = index_checks.check_offset_index(idx)
    assert (p.kind, p.position, p.offset) == ("index-not-batch-boundary", 0, 9)
    assert f"batches start at {bs[4][2]} and {bs[5][2]}" in p.message


def test_index_entry_inside_the_last_batch(seg):
    tmp, log, bs = seg
    idx = write_index(tmp, [(23, bs[-1][2] + 3)])
    [p] = index_checks.check_offset_index(idx)
    assert (p.kind, p.position, p.offset) == ("index-not-batch-boundary", 0, 23)
    assert f"inside the log's last batch, which starts at {bs[-1][2]}" in p.message


def test_decreasing_entries(seg):
    tmp, log, bs = seg
    idx = write_index(tmp, [(bs[6][1], bs[6][2]), (bs[3][1], bs[3][2])])
    assert kinds(index_checks.check_offset_index(idx)) == [
        ("index-offset-decreasing", 8, 7),
        ("index-position-decreasing", 8, 7),
    ]
    # the walk goes back for the second entry, which itself points at the right batch
    out, err = index_dump.dump_index_lines(idx)
    assert err == []


def test_offset_mismatch_and_not_found(seg):
    tmp, log, bs = seg
    # batch 5 (offsets 10-11) at its position, but the entry claims offset 9
    idx = write_index(tmp, [(9, bs[5][2]), (40, bs[8][2])])
    assert kinds(index_checks.check_offset_index(idx)) == [
        ("index-offset-mismatch", 0, 9),
        ("index-offset-not-found", 8, 40),
    ]
    out, err = index_dump.dump_index_lines(idx, verify_only=True)
    # Kafka prepends mismatches to a list: the last entry's comes first
    assert err == [
        f"Mismatches in :{os.path.abspath(idx)}",
        "  Index offset: 40, log offset: 17",
        "  Index offset: 9, log offset: 11",
    ]


def test_multi_batch_append_entry_is_a_mismatch_for_both_commands(seg):
    tmp, log, bs = seg
    idx = write_index(tmp, [(bs[5][1], bs[4][2])])  # a pre-4.1 follower appending batches 4 and 5 together
    assert kinds(index_checks.check_offset_index(idx)) == [("index-offset-mismatch", 0, 11)]
    assert index_dump.dump_index_lines(idx, verify_only=True)[1][1:] == ["  Index offset: 11, log offset: 9"]


def test_offset_below_base(tmp_path):
    log, bs = make_log(tmp_path, spec_simple(4), base=100)
    idx = write_index(tmp_path, [(99, 0)], base=100)
    [p] = index_checks.check_offset_index(idx)
    assert (p.kind, p.offset) == ("index-offset-below-base", 99)
    out, err = index_dump.dump_index_lines(idx, sanity_check=True)
    assert out == [] and err == [
        f"Corrupt index found, index file {os.path.abspath(idx)} has non-zero size but "
        f"the last offset is 99 which is less than the base offset 100"
    ]


def test_size_not_multiple_of_entry(seg):
    tmp, log, bs = seg
    idx = write_index(tmp, [(bs[3][1], bs[3][2])], extra=b"\x00\x00\x07")
    assert kinds(index_checks.check_offset_index(idx)) == [("index-size", 8, None)]
    out, err = index_dump.dump_index_lines(idx)
    assert out == [f"offset: 7 position: {bs[3][2]}"]
    assert err == [
        f"Index file {os.path.abspath(idx)} is corrupt, found 11 bytes which is neither positive nor a multiple of 8"
    ]
    tix = write_timeindex(tmp, [(bs[3][4], 7)], extra=b"\x01" * 5)
    assert kinds(index_checks.check_time_index(tix)) == [("index-size", 12, None)]
    assert index_dump.dump_timeindex_lines(tix, sanity_check=True)[1] == [
        f"Time index file {os.path.abspath(tix)} is corrupt, found 17 bytes which is neither positive nor a "
        f"multiple of 12"
    ]


def test_time_index_out_of_order_and_mismatch(tmp_path):
    # CreateTime may go backwards between batches: batch 6's max (1500) is below batch 3's (2000)
    spec = [(1, [1000 + i]) for i in range(10)]
    spec[3] = (1, [2000])
    spec[6] = (1, [1500])
    log, bs = make_log(tmp_path, spec)
    tix = write_timeindex(tmp_path, [(2000, 3), (1500, 6), (1234, 8)])
    assert kinds(index_checks.check_time_index(tix)) == [
        ("timeindex-out-of-order", 12, 6),
        ("timeindex-out-of-order", 24, 8),
        ("timeindex-timestamp-mismatch", 24, 8),
    ]
    out, err = index_dump.dump_timeindex_lines(tix)
    a = os.path.abspath(tix)
    assert out == ["timestamp: 2000 offset: 3", "timestamp: 1500 offset: 6", "timestamp: 1234 offset: 8"]
    assert err == [
        f"Found timestamp mismatch in :{a}",
        "  Index timestamp: 1234, log timestamp: 1008",
        f"Found out of order timestamp in :{a}",
        "  Index timestamp: 1500, Previously indexed timestamp: 2000",
        "  Index timestamp: 1234, Previously indexed timestamp: 1500",
    ]


def test_time_index_offsets_not_found(seg):
    tmp, log, bs = seg
    tix = write_timeindex(tmp, [(bs[2][4], 4), (bs[3][4], 7), (99_999, 60)])  # 4: first of batch 4-5
    probs = index_checks.check_time_index(tix)
    assert kinds(probs) == [("index-offset-not-found", 24, 60)]
    assert "past the last offset in the log (23)" in probs[0].message
    d = index_dump.dump_time_index(tix, verify_only=True)
    assert list(d) == []
    assert d.stderr_lines() == [
        f"The following indexed offsets are not found in :{os.path.abspath(tix)}",
        "Indexed offset: 4, found log offset: 5",
        "Indexed offset: 60, found log offset: -1",
    ]
    # Kafka 4.1 did not name the file
    out, err = index_dump.dump_timeindex_lines(tix, verify_only=True, kafka="4.1")
    assert err[0] == "The following indexed offsets are not found in the log."


def test_time_index_decreasing_offset_and_below_base(seg):
    tmp, log, bs = seg
    tix = write_timeindex(tmp, [(bs[5][4], 11), (bs[5][4] + 1, 9)])
    assert kinds(index_checks.check_time_index(tix)) == [
        ("index-offset-decreasing", 12, 9),
        ("timeindex-timestamp-mismatch", 12, 9),
    ]
    tix = write_timeindex(tmp, [(5, -3)])
    assert kinds(index_checks.check_time_index(tix)) == [("index-offset-below-base", 0, -3)]


def test_zero_gap_in_trimmed_index_is_a_note_and_later_entries_are_checked(seg):
    tmp, log, bs = seg
    size = os.path.getsize(log)
    raw = [(bs[2][1], bs[2][2]), (bs[4][1], bs[4][2]), (0, 0), (0, 0), (bs[8][1], bs[8][2]), (30, size + 8)]
    idx = write_index(tmp, raw)
    notes = []
    assert kinds(index_checks.check_offset_index(idx, notes=notes)) == [("index-past-end", 40, 30)]
    assert notes == [
        f"{idx}: the index ends at byte 16 (an entry with relative offset 0), but 2 non-zero entries "
        f"follow from byte 32: writes were lost; Kafka still uses them, so they were checked too"
    ]
    assert indexes.read_offset_index(idx) == raw[:2]  # what kafka-dump-log shows
    assert index_dump.dump_index_lines(idx, verify_only=True) == ([], [])


def test_empty_and_sanity_messages(tmp_path):
    log, bs = make_log(tmp_path, spec_simple(3))
    idx = write_index(tmp_path, [], extra=bytes(800))
    assert index_dump.dump_index_lines(idx) == ([f"{idx} is empty."], [])
    assert index_dump.dump_index_lines(idx, sanity_check=True) == ([f"{idx} is empty."], [])
    tix = write_timeindex(tmp_path, [(1020, 2), (1000, 2)], extra=bytes(120))
    out, err = index_dump.dump_timeindex_lines(tix, sanity_check=True)
    assert out == [] and err == [
        f"Corrupt time index found, time index file ({os.path.abspath(tix)}) has non-zero size but the last "
        f"timestamp is 1000 which is less than the first timestamp 1020"
    ]
    tix = write_timeindex(tmp_path, [(1020, 2), (1030, -1)])
    assert index_dump.dump_timeindex_lines(tix, sanity_check=True)[1] == [
        f"Corrupt time index found, time index file ({os.path.abspath(tix)}) has non-zero size but the last "
        f"offset is -1 which is less than the first offset 0"
    ]
    tix = write_timeindex(tmp_path, [(bs[1][4], 1)], extra=bytes(1200))
    assert index_dump.dump_timeindex_lines(tix, sanity_check=True) == ([f"{tix} passed sanity check."], [])


def test_max_message_size_limits_the_dump_check(tmp_path):
    log, bs = make_log(tmp_path, [(30, list(range(30)))] * 2)  # two batches of ~1.6 KB
    idx = write_index(tmp_path, [(59, bs[1][2])])
    assert index_dump.dump_index_lines(idx, verify_only=True) == ([], [])
    out, err = index_dump.dump_index_lines(idx, verify_only=True, max_message_size=1000)
    assert err == [
        f"Index entries that point at no readable batch in :{os.path.abspath(idx)}",
        f"  Index offset: 59, position: {bs[1][2]}: the batch at position {bs[1][2]} ({bs[1][3]} bytes) "
        f"is larger than --max-message-size 1000",
    ]


def test_missing_log_is_input_error(tmp_path):
    idx = write_index(tmp_path, [(3, 100)])
    with pytest.raises(InputError, match="cannot open the segment's log"):
        index_dump.dump_index_lines(idx)
    with pytest.raises(InputError, match="no segment log"):
        index_checks.check_offset_index(idx)
    # the sanity check needs no log
    assert index_dump.dump_index_lines(idx, sanity_check=True) == ([f"{idx} passed sanity check."], [])


def test_time_dump_uses_kafkas_lookup_over_a_preallocated_index(seg):
    """Kafka looks the time index offsets up in the whole .index file (zeros too): on an
    active segment every lookup lands on position 0. Same reports as with a trimmed
    .index, or with none."""
    tmp, log, bs = seg
    entries = [(b[4], b[1]) for b in bs[1::2]]
    entries[3] = (entries[3][0] - 1, entries[3][1])  # one mismatch
    entries[4] = (entries[4][0], entries[4][1] - 1)  # one offset in mid-batch
    tix = write_timeindex(tmp, entries)
    results = []
    for extra in (b"", bytes(8 * 5000), None):
        idx = tmp / "00000000000000000000.index"
        if extra is None:
            idx.unlink()
        else:
            idx.write_bytes(b"".join(struct.pack(">ii", b[1], b[2]) for b in bs[1::4]) + extra)
        results.append(index_dump.dump_timeindex_lines(tix))
    assert results[0] == results[1] == results[2]
    assert results[0][1] == [
        f"Found timestamp mismatch in :{os.path.abspath(tix)}",
        f"  Index timestamp: {bs[7][4] - 1}, log timestamp: {bs[7][4]}",
        f"The following indexed offsets are not found in :{os.path.abspath(tix)}",
        "Indexed offset: 18, found log offset: 19",
    ]
    assert not (tmp / "00000000000000000000.index").exists()  # never created


def test_kafka_lookup_is_abstract_index_search(tmp_path):
    entries = [(10 * i + 5, 100 * i + 7) for i in range(3000)]  # more than the 1024 warm entries
    idx = write_index(tmp_path, entries)
    lk = index_lookup.KafkaOffsetLookup(idx, 0)
    try:
        for target in (0, 4, 5, 6, 15, 12345, 20000, 29994, 29995, 10**9):
            want = max((p for o, p in entries if o <= target), default=0)
            assert lk.position(target) == want
    finally:
        lk.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(-1, 30)), min_size=1, max_size=25))
def test_finder_equals_a_fresh_kafka_scan(tmp_path, queries):
    log, bs = make_log(tmp_path, spec_simple(12, per=2), name="finder.log")
    positions = [b[2] for b in bs]
    f = index_lookup.KafkaFinder(log)
    try:
        for i, off in queries:
            pos = positions[i] if i < len(positions) else os.path.getsize(log)
            got, err = f.find(pos, off)
            want = next((b for b in BatchReader(log, start=pos) if b.last_offset >= off), None)
            assert err is None
            assert (got.position if got else None) == (want.position if want else None)
    finally:
        f.close()


# -- random bytes: only InputError, never a hang -------------------------------------


def _run_all(idx, tix):
    for fn in (
        lambda: index_dump.dump_index_lines(idx),
        lambda: index_dump.dump_index_lines(idx, sanity_check=True),
        lambda: index_dump.dump_index_lines(idx, max_message_size=64),
        lambda: index_dump.dump_timeindex_lines(tix),
        lambda: index_dump.dump_timeindex_lines(tix, sanity_check=True),
        lambda: index_checks.check_offset_index(idx, notes=[]),
        lambda: index_checks.check_time_index(tix, notes=[]),
        lambda: indexes.read_offset_index(idx),
        lambda: indexes.read_time_index(tix),
        lambda: indexes.scan_index(tix, True),
    ):
        try:
            fn()
        except InputError:
            pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300), st.binary(max_size=300), st.binary(max_size=2000))
def test_random_bytes_everywhere(tmp_path, idx_bytes, tix_bytes, log_bytes):
    d = tmp_path / "r"
    d.mkdir(exist_ok=True)
    (d / "00000000000000000000.log").write_bytes(log_bytes)
    (d / "00000000000000000000.index").write_bytes(idx_bytes)
    (d / "00000000000000000000.timeindex").write_bytes(tix_bytes)
    _run_all(str(d / "00000000000000000000.index"), str(d / "00000000000000000000.timeindex"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.integers(-5, 40), st.integers(-10, 3000)), max_size=30),
    st.lists(st.tuples(st.integers(-2, 2000), st.integers(-5, 40)), max_size=30),
    st.binary(max_size=24),
)
def test_random_entries_over_a_real_log(tmp_path, oentries, tentries, junk):
    d = tmp_path / "g"
    d.mkdir(exist_ok=True)
    make_log(d, spec_simple(10, per=2), tail=junk)
    idx = write_index(d, oentries)
    tix = write_timeindex(d, tentries)
    _run_all(idx, tix)
    probs = index_checks.check_offset_index(idx)
    assert all(p.path == idx and p.kind.startswith("index-") for p in probs)
