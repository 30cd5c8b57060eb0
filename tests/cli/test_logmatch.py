"""Raft's log matching as a check (raft/logmatch.py) in `state`, `doctor`,
`verify` and `truncate --reference`.

The clashing replicas are made as quorumctl's old `recover` made them (issue 23):
copies of the real Kafka 3.9 dynamic quorum's replicas (all ending at offset
315, epoch 1), one given a VotersRecord control batch at offset 315 in epoch 1
(what recover appended to the survivor), another a different batch at that same
(offset, epoch) (what a broker or a lost voter already held). The pure function
is checked on generated logs: the same batches cut into segments differently
never clash; one CRC changed clashes there."""

from __future__ import annotations

import json
import os
import shutil
import struct
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from quorumctl.records import metadata as md
from quorumctl.records.batch import encode_batch
from quorumctl.raft import logmatch
from quorumctl.raft.replica import load_replica
from quorumctl.logdir.segments import BatchInfo
from quorumctl.testing.synth import B, write_replica
from samples import FIXTURES

DYN = FIXTURES / "kafka-3.9.0-dynamic" / "data"
needs_fixtures = pytest.mark.shared(
    "reference/fixtures/kafka-3.9.0-dynamic"
)  # the clashing copies are made from its replicas
SEGMENT = "00000000000000000000.log"
T = 1_800_000_000_000


def _segment(root, name: str) -> str:
    return str(root / name / "__cluster_metadata-0" / SEGMENT)


def _append(path: str, raw: bytes) -> tuple[int, int]:
    """Append a batch as a plain file append; (its byte position, its header CRC)."""
    pos = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(raw)
    return pos, struct.unpack(">I", raw[17:21])[0]


def _voters_batch(log_dir) -> bytes:
    """The old recover's batch: a VotersRecord holding only the survivor, at its
    log end (315), in its last epoch (1)."""
    r = load_replica(str(log_dir))
    me = next(v for v in r.voters_record if v["voterId"] == r.node_id)
    return encode_batch(
        [md.encode_control(md.KRAFT_VOTERS, {"version": 0, "voters": [me]})],
        base_offset=r.log_end,
        leader_epoch=1,
        base_timestamp=T,
        control=True,
    )


def _noop_batch(ts: int = T) -> bytes:
    return encode_batch(
        [(None, md.encode_metadata("NoOpRecord", 0, {}))], base_offset=315, leader_epoch=1, base_timestamp=ts
    )


@pytest.fixture
def copies(tmp_path):
    """Writable copies of c1, c2, c3 and the broker b4, untouched."""
    for name in ("c1", "c2", "c3", "b4"):
        shutil.copytree(DYN / name, tmp_path / name)
        for root, _dirs, files in os.walk(tmp_path / name):
            for f in files:
                os.chmod(os.path.join(root, f), 0o644)
    return tmp_path


@pytest.fixture
def clashed(copies):
    """c3 holds the old recover's VotersRecord at (315, 1), c1 a NoOpRecord there;
    c2 and b4 end at 315. Returns (root, {name: (position, crc)})."""
    root = copies
    assert load_replica(str(root / "c3")).log_end == 315 and load_replica(str(root / "c1")).last_epoch == 1
    got = {
        "c3": _append(_segment(root, "c3"), _voters_batch(root / "c3")),
        "c1": _append(_segment(root, "c1"), _noop_batch()),
    }
    return root, got


def _json(cli, *args):
    code, out, err = cli(*args, "-o", "json")
    assert err == "", err
    return code, json.loads(out)


# -- state ------------------------------------------------------------------------


@needs_fixtures
def test_state_reports_the_clash_not_a_prefix(cli, clashed):
    root, at = clashed
    pos = os.path.getsize(DYN / "c1" / "__cluster_metadata-0" / SEGMENT)  # the appended batches start there
    assert at["c1"][0] == at["c3"][0] == pos == 23456
    code, out, err = cli("state", "-o", "text", str(root / "c1"), str(root / "c2"), str(root / "c3"))
    assert code == 1, out + err
    assert "node 3: its log is a prefix" not in out
    assert "node 2: its log is a prefix of node 1's; nothing to truncate" in out  # c2 really is one
    line = next(ln for ln in out.splitlines() if ln.startswith("  node 3:"))
    assert line == (
        f"  node 3: its log clashes with node 1's (log matching broken): offset 315, epoch 1: node 1 "
        f"{_segment(root, 'c1')} position {pos} (offsets 315..315, crc {at['c1'][1]}) and node 3 "
        f"{_segment(root, 'c3')} position {pos} (offsets 315..315, crc {at['c3'][1]}) are different batches; "
        "Raft assumes one entry per (offset, epoch), so neither replica's Fetch will ever notice; truncate node 3 "
        f"below the clash, to offset 315: quorumctl truncate {root / 'c3'} --reference {root / 'c1'}"
    )
    # what is committed ends below the clash: node 1's and node 3's offset 315 are not one entry
    assert "  node 3: committed below 315; unknown 315..315 (log end offset 316)" in out


@needs_fixtures
def test_state_json_log_matching(cli, clashed):
    root, at = clashed
    code, doc = _json(cli, "state", str(root / "c3"), str(root / "c1"), str(root / "c2"))
    assert code == 1
    c = doc["comparison"]
    assert c["winner"] == "node 3" and c["tied"] == ["node 3", "node 1"]
    clash = {
        "offset": 315,
        "epoch": 1,
        "a": {
            "replica": "node 3",
            "file": _segment(root, "c3"),
            "position": 23456,
            "base_offset": 315,
            "last_offset": 315,
            "crc": at["c3"][1],
        },
        "b": {
            "replica": "node 1",
            "file": _segment(root, "c1"),
            "position": 23456,
            "base_offset": 315,
            "last_offset": 315,
            "crc": at["c1"][1],
        },
    }
    assert c["log_matching"] == [clash]
    f1, f2 = c["followers"]
    assert (f1["replica"], f1["kind"], f1["common_prefix_end"], f1["log_matching"]) == ("node 1", "none", 315, [clash])
    assert (f2["replica"], f2["kind"], f2["common_prefix_end"]) == ("node 2", "none", 315)
    assert "log_matching" not in f2
    assert logmatch.Clash.from_json(clash).to_json() == clash


@needs_fixtures
def test_state_table_marks_the_clash(cli, clashed):
    root, _ = clashed
    code, out, _err = cli("state", "-o", "table", str(root / "c1"), str(root / "c3"))
    assert code == 1
    assert "log matching broken" in out and "log-matching: offset 315, epoch 1" in out


@needs_fixtures
def test_a_clash_between_two_followers(cli, clashed):
    """b4 (the broker) holds c1's very batch, so it clashes with c3 only; with c1
    the most up to date (first of the tie) that pair is two followers'."""
    root, at = clashed
    _append(_segment(root, "b4"), _noop_batch())
    code, out, _err = cli("state", "-o", "text", *(str(root / n) for n in ("c1", "c3", "b4")))
    assert code == 1
    assert "  node 4: its log is a prefix of node 1's; nothing to truncate" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("  node 3 and node 4:"))
    assert f"offset 315, epoch 1: node 3 {_segment(root, 'c3')} position 23456" in line
    assert f"node 4 {_segment(root, 'b4')} position 23456 (offsets 315..315, crc {at['c1'][1]})" in line
    assert line.endswith(
        f"truncate both against node 1: quorumctl truncate {root / 'c3'} --reference {root / 'c1'}; "
        f"quorumctl truncate {root / 'b4'} --reference {root / 'c1'}"
    )
    code, doc = _json(cli, "doctor", *(str(root / n) for n in ("c1", "c3", "b4")))
    found = [f for f in doc["findings"] if f["code"] == "log-matching"]
    assert [f["message"].split(":")[0] for f in found] == [
        "node 1 and node 3 hold different batches at offset 315, epoch 1",
        "node 3 and node 4 hold different batches at offset 315, epoch 1",
    ]
    assert found[1]["remedy"].startswith("truncate both against the most up-to-date replica (node 1)")


@needs_fixtures
def test_untouched_replicas_do_not_clash(cli, copies):
    root = copies
    dirs = [str(root / n) for n in ("c1", "c2", "c3", "b4")]
    assert logmatch.clashes([load_replica(d) for d in dirs]) == []
    code, doc = _json(cli, "state", *dirs)
    assert code == 0 and "log_matching" not in doc["comparison"]
    assert all("log_matching" not in f for f in doc["comparison"]["followers"])
    code, out, _err = cli("state", "-o", "text", *dirs, code=0)
    assert "clash" not in out
    assert cli("verify", "-o", "text", *dirs)[0] == 0
    code, doc = _json(cli, "doctor", *dirs[:3])
    assert code == 0 and doc["findings"] == []


def test_committed_prefix_ends_at_the_clash(tmp_path):
    from quorumctl.raft.committed import classify, common_prefix, known

    write_replica(str(tmp_path / "a"), [B(1)] * 6, node_id=1)
    write_replica(str(tmp_path / "b"), [B(1)] * 4 + [B(1, tag="b")] * 2, node_id=2)
    a, b = load_replica(str(tmp_path / "a")), load_replica(str(tmp_path / "b"))
    x = logmatch.first_clash(a, b)
    assert (x.offset, x.epoch, x.prefix_end) == (4, 1, 4)
    assert common_prefix(known(a), known(b)) == 6  # epochs alone
    assert common_prefix(known(a), known(b), x) == 4
    # two of three voters, both in their last epoch, hold 0..3 alike; 4 and 5 are two entries each
    assert [r["committed_end_offset"] for r in classify([a, b])["replicas"]] == [4, 4]


# -- doctor -----------------------------------------------------------------------


@needs_fixtures
@pytest.mark.parametrize("first", ["c1", "c3"])
def test_doctor_log_matching_finding(cli, clashed, first):
    """Either of the tied replicas may be the most up to date (the first given):
    the other is the one to truncate, and its voter set is never called "a voter
    change not yet replicated"."""
    root, at = clashed
    other = "c3" if first == "c1" else "c1"
    node = {"c1": "node 1", "c3": "node 3"}
    code, doc = _json(cli, "doctor", str(root / first), str(root / "c2"), str(root / other))
    assert code == 1
    found = [f for f in doc["findings"] if f["code"] == "log-matching"]
    assert len(found) == 1
    f = found[0]
    assert f["severity"] == "error"
    assert f["message"] == (
        f"{node[first]} and {node[other]} hold different batches at offset 315, epoch 1: log "
        "matching is broken (a log was written outside Raft); Raft assumes one entry per "
        "(offset, epoch), so neither replica's Fetch will ever notice"
    )
    assert f["evidence"] == [
        f"{_segment(root, n)} position 23456: {node[n]}'s batch, epoch 1, offsets 315..315, crc {at[n][1]}"
        for n in (first, other)
    ]
    assert f["remedy"] == (
        f"truncate {node[other]} below the clash (to offset 315): it is not the most up-to-date "
        f"replica ({node[first]}): quorumctl truncate {root / other} --reference {root / first} "
        "(a dry run; add --apply with the node stopped)"
    )
    differs = [x for x in doc["findings"] if x["code"] == "voter-set-differs"]
    assert not any(x["message"].startswith(f"{node[other]}'s log") for x in differs), differs
    code, out, _err = cli("doctor", "-o", "text", str(root / first), str(root / "c2"), str(root / other))
    assert code == 1 and f"ERROR log-matching: {node[first]} and {node[other]} hold different batches" in out


# -- verify -----------------------------------------------------------------------


@needs_fixtures
def test_verify_compares_several_log_dirs(cli, clashed):
    root, at = clashed
    code, out, err = cli(
        "verify", "-o", "text", str(root / "c1"), str(root / "c2"), str(root / "c3" / "__cluster_metadata-0")
    )
    assert code == 1, out + err
    lines = [ln for ln in out.splitlines() if "log-matching" in ln]
    assert lines == [
        f"{_segment(root, 'c1')}: position 23456: offset 315: log-matching: epoch 1: node 1's batch (offsets "
        f"315..315, crc {at['c1'][1]}) and node 3 {_segment(root, 'c3')} position 23456 (offsets 315..315, crc "
        f"{at['c3'][1]}) are different batches; Raft assumes one entry per (offset, epoch), so neither replica's "
        "Fetch will ever notice"
    ]
    assert out.splitlines()[-1].endswith(": 1 problem(s) found")
    code, doc = _json(cli, "verify", str(root / "c3"), str(root / "c1"))
    assert code == 1 and doc["summary"]["problems"] == 1
    (p,) = [p for f in doc["files"] for p in f["problems"]]
    assert (p["kind"], p["path"], p["position"], p["offset"]) == ("log-matching", _segment(root, "c3"), 23456, 315)
    assert f"node 1 {_segment(root, 'c1')} position 23456" in p["message"]
    # one dir at a time: each log is sound on its own
    for n in ("c1", "c3"):
        assert cli("verify", "-o", "text", str(root / n))[0] == 0


@needs_fixtures
def test_verify_does_not_compare_two_clusters(cli, clashed):
    root, _ = clashed
    meta = root / "c3" / "meta.properties"
    meta.write_text(meta.read_text().replace("cluster.id=rTcAzcTXQpG_6c1zYns8Xw", "cluster.id=AAAAAAAAAAAAAAAAAAAAAQ"))
    assert cli("verify", "-o", "text", str(root / "c1"), str(root / "c3"))[0] == 0


# -- truncate ---------------------------------------------------------------------


@needs_fixtures
def test_truncate_reference_cuts_below_the_clash(cli, clashed):
    root, at = clashed
    code, doc = _json(cli, "truncate", str(root / "c3"), "--reference", str(root / "c1"))
    assert code == 0
    p = doc["plan"]
    assert p["target_offset"] == 315 and p["log_end_offset_after"] == 315 and p["refused"] is None
    assert p["reason"].startswith("its log clashes with node 1's (log matching broken): offset 315, epoch 1: ")
    assert p["reason"].endswith("; cut below the clash, at its batch's base offset 315")
    assert p["cut_segment"]["position"] == 23456 and p["cut_segment"]["offsets_dropped"] == [315, 315]
    assert p["divergence"]["log_matching"][0]["b"]["crc"] == at["c3"][1]
    code, _doc = _json(cli, "truncate", str(root / "c3"), "--reference", str(root / "c1"), "--apply")
    assert code == 0
    dirs = [str(root / n) for n in ("c1", "c2", "c3")]
    code, doc = _json(cli, "state", *dirs)
    assert code == 0 and "log_matching" not in doc["comparison"]
    assert cli("verify", "-o", "text", *dirs)[0] == 0


def test_truncate_a_diverging_replica_below_its_clash(cli, tmp_path):
    """Written with the project's writer: a holds (3, epoch 2) as b never wrote it,
    and a later epoch-2 entry b does not have. Fetch truncates a to 4 (b's end of
    epoch 2); the clash at 3 takes it lower."""
    write_replica(str(tmp_path / "a"), [B(1)] * 3 + [B(2, tag="a"), B(2, tag="a")], node_id=1)
    write_replica(str(tmp_path / "b"), [B(1)] * 3 + [B(2, tag="b"), B(3)], node_id=2)
    code, doc = _json(cli, "state", str(tmp_path / "a"), str(tmp_path / "b"))
    assert code == 1
    (f,) = doc["comparison"]["followers"]
    assert (f["replica"], f["kind"], f["new_end_offset"], f["common_prefix_end"]) == ("node 1", "diverging", 4, 3)
    code, out, _err = cli("state", "-o", "text", str(tmp_path / "a"), str(tmp_path / "b"), code=1)
    assert "  node 1: diverges from node 2: DivergingEpoch(epoch=2, endOffset=4); truncates to 4" in out
    assert "truncate node 1 below the clash, to offset 3: quorumctl truncate" in out
    code, doc = _json(cli, "truncate", str(tmp_path / "a"), "--reference", str(tmp_path / "b"))
    assert code == 0 and doc["plan"]["target_offset"] == 3
    assert doc["plan"]["reason"].startswith(
        "diverges from node 2: its Fetch answer is DivergingEpoch(epoch=2, "
        "endOffset=4); truncateToEndOffset gives 4; its log clashes with node 2's"
    )


# -- the pure function --------------------------------------------------------------


def _log(label: str, batches: list[tuple[int, int, int, int]], cuts: set[int]):
    """A stand-in Replica: (base, last, epoch, crc) batches, a new segment before each index in `cuts`."""
    segs, pos = [], 0
    for i, (base, last, epoch, crc) in enumerate(batches):
        if i == 0 or i in cuts:
            segs.append(SimpleNamespace(files=SimpleNamespace(log=f"{label}/{base:020d}.log"), batches=[]))
            pos = 0
        segs[-1].batches.append(BatchInfo(base, last, epoch, pos, 100, 0, False, crc))
        pos += 100 + 7 * (last - base)
    return SimpleNamespace(label=label, scan=SimpleNamespace(segments=segs), replaced_by_snapshot=False)


@st.composite
def logs(draw):
    """Batches as a leader writes them (offsets contiguous, epochs non-decreasing,
    CRCs any), two segment splits of them, and a batch index to tamper with."""
    n = draw(st.integers(1, 30))
    sizes = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    steps = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    crcs = draw(st.lists(st.integers(0, 2**32 - 1), min_size=n, max_size=n))
    batches, off, epoch = [], draw(st.integers(0, 1000)), 1
    for size, step, crc in zip(sizes, steps, crcs):
        epoch += step
        batches.append((off, off + size - 1, epoch, crc))
        off += size
    cuts_a = draw(st.sets(st.integers(1, max(n - 1, 1))))
    cuts_b = draw(st.sets(st.integers(1, max(n - 1, 1))))
    return batches, cuts_a, cuts_b, draw(st.integers(0, n - 1))


@settings(max_examples=200, deadline=None)
@given(logs())
def test_same_batches_other_segments_never_clash(case):
    batches, cuts_a, cuts_b, _k = case
    assert logmatch.first_clash(_log("a", batches, cuts_a), _log("b", batches, cuts_b)) is None
    # a prefix of the log (a follower behind) neither
    assert logmatch.first_clash(_log("a", batches, cuts_a), _log("b", batches[: len(batches) // 2], cuts_b)) is None


@settings(max_examples=200, deadline=None)
@given(logs())
def test_one_crc_changed_clashes_there(case):
    batches, cuts_a, cuts_b, k = case
    other = list(batches)
    base, last, epoch, crc = other[k]
    other[k] = (base, last, epoch, crc ^ 1)
    x = logmatch.first_clash(_log("a", batches, cuts_a), _log("b", other, cuts_b))
    assert x is not None
    assert (x.offset, x.epoch, x.a.base_offset, x.b.base_offset, x.a.crc, x.b.crc) == (
        base,
        epoch,
        base,
        base,
        crc,
        crc ^ 1,
    )
    assert x.prefix_end == base
    assert [
        c.offset
        for c in logmatch.clashes([_log("a", batches, cuts_a), _log("b", batches, cuts_b), _log("c", other, cuts_a)])
    ] == [base, base]


def test_other_batch_boundaries_in_one_epoch_clash():
    """Same epoch, same offsets covered, other batches: not the same entries."""
    a = _log("a", [(0, 4, 1, 7), (5, 9, 1, 8)], set())
    b = _log("b", [(0, 4, 1, 7), (5, 6, 1, 9), (7, 9, 1, 10)], set())
    x = logmatch.first_clash(a, b)
    assert (x.offset, x.prefix_end) == (5, 5)
    # another epoch at the same offsets is ordinary divergence, for the Fetch exchange
    c = _log("c", [(0, 4, 1, 7), (5, 9, 2, 8)], set())
    assert logmatch.first_clash(a, c) is None


def test_a_log_replaced_by_its_snapshot_is_not_compared(tmp_path):
    """Kafka drops a log that ends before its latest snapshot: its batches clash with nothing."""
    write_replica(str(tmp_path / "a"), [B(1)] * 6, node_id=1)
    write_replica(str(tmp_path / "b"), [B(1)] * 2 + [B(1, tag="b")] * 2, node_id=2, snapshots=[(5, 1)])
    a, b = load_replica(str(tmp_path / "a")), load_replica(str(tmp_path / "b"))
    assert b.replaced_by_snapshot
    assert logmatch.first_clash(a, b) is None
