"""verify finds each kind of corruption, at the right place, and exits 1."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest

from quorumctl.records import metadata as md
from quorumctl.records.batch import encode_batch
from quorumctl.ops.verify import verify_paths
from samples import FIXTURES

TOPIC = "AAAAAAAAAAAAAAAAAAAAAg"


def noop_batch(offset: int, epoch: int, n: int = 2, ts: int = 1_700_000_000_000) -> bytes:
    return encode_batch(
        [(None, md.encode_metadata("NoOpRecord", 0, {}))] * n,
        base_offset=offset,
        leader_epoch=epoch,
        base_timestamp=ts + offset,
    )


def snapshot_bytes(epoch: int, footer: bool = True) -> bytes:
    hk, hv = md.encode_control(md.SNAPSHOT_HEADER, {"version": 0, "lastContainedLogTimestamp": 5})
    fk, fv = md.encode_control(md.SNAPSHOT_FOOTER, {"version": 0})
    parts = [
        encode_batch([(hk, hv)], base_offset=0, leader_epoch=epoch, control=True),
        encode_batch(
            [(None, md.encode_metadata("TopicRecord", 0, {"name": "t", "topicId": TOPIC}))],
            base_offset=1,
            leader_epoch=epoch,
        ),
    ]
    if footer:
        parts.append(encode_batch([(fk, fv)], base_offset=2, leader_epoch=epoch, control=True))
    return b"".join(parts)


@pytest.fixture
def logdir(tmp_path):
    """A clean __cluster_metadata-0 with 3 batches (epochs 1,1,2), its epoch
    checkpoint, index, time index and a snapshot."""
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    batches = [noop_batch(0, 1), noop_batch(2, 1), noop_batch(4, 2)]
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    (d / "leader-epoch-checkpoint").write_text("0\n2\n1 0\n2 4\n")
    pos2 = len(batches[0]) + len(batches[1])
    (d / "00000000000000000000.index").write_bytes(struct.pack(">ii", 5, pos2))  # the batch 4..5 (its last offset)
    (d / "00000000000000000000.timeindex").write_bytes(
        struct.pack(">qi", 1_700_000_000_002, 2) + struct.pack(">qi", 1_700_000_000_004, 4)
    )
    (d / "00000000000000000004-0000000001.checkpoint").write_bytes(snapshot_bytes(1))
    return d, batches


def problems(path):
    return [p for r in verify_paths([str(path)]) for p in r.problems]


def test_clean(logdir):
    d, _ = logdir
    assert problems(d) == []


def mutate(path, pos, value):
    data = bytearray(path.read_bytes())
    data[pos] = value
    path.write_bytes(bytes(data))


def test_bit_flip_in_header(logdir):
    d, batches = logdir
    log = d / "00000000000000000000.log"
    mutate(log, len(batches[0]) + 30, log.read_bytes()[len(batches[0]) + 30] ^ 0x01)  # baseTimestamp
    (p,) = problems(d)
    assert (p.kind, p.position, p.offset) == ("crc-mismatch", len(batches[0]), 2)


def test_bit_flip_in_payload(logdir):
    d, batches = logdir
    log = d / "00000000000000000000.log"
    pos = len(batches[0]) + len(batches[1]) - 2
    mutate(log, pos, log.read_bytes()[pos] ^ 0x10)
    (p,) = problems(d)
    assert (p.kind, p.position, p.offset) == ("crc-mismatch", len(batches[0]), 2)


def test_truncated_tail(logdir):
    d, batches = logdir
    log = d / "00000000000000000000.log"
    log.write_bytes(log.read_bytes()[:-10])
    kinds = {(p.kind, p.position) for p in problems(d)}
    assert ("torn-tail", len(batches[0]) + len(batches[1])) in kinds


def test_zero_tail(logdir):
    d, batches = logdir
    log = d / "00000000000000000000.log"
    log.write_bytes(log.read_bytes() + b"\x00" * 4096)
    kinds = [(p.kind, p.position) for p in problems(d)]
    assert kinds == [("zero-tail", sum(map(len, batches)))]


def test_impossible_length(logdir):
    d, batches = logdir
    log = d / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    struct.pack_into(">i", data, len(batches[0]) + 8, 0x7FFFFFFF)
    log.write_bytes(bytes(data))
    kinds = [(p.kind, p.position) for p in problems(d)]
    assert ("torn-tail", len(batches[0])) in kinds


def test_offset_gap(logdir):
    d, batches = logdir
    (d / "00000000000000000000.log").write_bytes(batches[0] + noop_batch(3, 1) + batches[2])
    assert [(p.kind, p.offset) for p in problems(d) if p.kind == "offset-gap"] == [("offset-gap", 3)]


def test_epoch_backwards_in_records(logdir):
    d, batches = logdir
    (d / "00000000000000000000.log").write_bytes(batches[0] + noop_batch(2, 2) + noop_batch(4, 1))
    (d / "leader-epoch-checkpoint").write_text("0\n2\n1 0\n2 2\n")
    found = [(p.kind, p.offset) for p in problems(d)]
    assert ("epoch-order", 4) in found


def test_epoch_against_checkpoint(logdir):
    d, _ = logdir
    (d / "leader-epoch-checkpoint").write_text("0\n2\n1 0\n2 3\n")
    found = sorted((p.kind, p.offset) for p in problems(d))
    assert found == [("epoch-checkpoint", 3), ("epoch-checkpoint", 4)]


def test_index_entry_past_end(logdir):
    d, _ = logdir
    (d / "00000000000000000000.index").write_bytes(struct.pack(">ii", 4, 1_000_000))
    found = [p for p in problems(d)]
    assert found and found[0].path.endswith(".index") and found[0].position == 0


def test_time_index_out_of_order(logdir):
    d, _ = logdir
    (d / "00000000000000000000.timeindex").write_bytes(
        struct.pack(">qi", 1_700_000_000_004, 2) + struct.pack(">qi", 1_700_000_000_002, 4)
    )
    found = [p for p in problems(d)]
    assert found and all(p.path.endswith(".timeindex") for p in found)
    assert any(p.position == 12 for p in found)


def test_snapshot_without_footer(logdir):
    d, _ = logdir
    (d / "00000000000000000004-0000000001.checkpoint").write_bytes(snapshot_bytes(1, footer=False))
    (p,) = problems(d)
    assert p.kind == "snapshot-frame" and "SNAPSHOT_FOOTER" in p.message


def test_snapshot_name_does_not_match_content(logdir):
    d, _ = logdir
    os.rename(d / "00000000000000000004-0000000001.checkpoint", d / "00000000000000000004-0000000003.checkpoint")
    found = problems(d)
    assert {p.kind for p in found} == {"snapshot-name"}
    assert [p.position for p in found] == [0, 83, 167] or all(p.position is not None for p in found)


CORRUPT = FIXTURES / "kafka-3.7.0-static" / "corrupt"


@pytest.mark.shared("reference/fixtures/kafka-3.7.0-static/corrupt")
@pytest.mark.parametrize(
    "name,expected",
    [
        ("a_flip", [("crc-mismatch", 106, 1), ("torn-tail", 2439, None)]),
        ("b_trunc", [("torn-tail", 1935, None)]),
        ("c_zeros", [("zero-tail", 1056, None)]),
        ("d_gap", [("offset-gap", 738, 10)]),
    ],
)
def test_kafka_corrupt_fixtures(name, expected):
    assert [(p.kind, p.position, p.offset) for p in problems(CORRUPT / name)] == expected


@pytest.mark.shared("reference/fixtures/kafka-3.7.0-static/corrupt")
def test_kafka_corrupt_index_fixture():
    # the .index entry (6 -> position 106, a batch ending at 5) is kafka-dump-log's mismatch, and
    # verify's too (one rule; a pre-4.1 follower could write it, KAFKA-806, which the message says)
    found = problems(CORRUPT / "e_idx")
    assert [(p.path.rsplit(".", 1)[1], p.position, p.offset, p.kind) for p in found] == [
        ("index", 0, 6, "index-offset-mismatch"),
        ("timeindex", 12, 6, "timeindex-out-of-order"),
        ("timeindex", 12, 6, "timeindex-timestamp-mismatch"),
    ]


def test_cli_exit_codes(logdir, tmp_path):
    d, _ = logdir
    exe = [sys.executable, "-m", "quorumctl"]
    ok = subprocess.run(exe + ["verify", "-o", "text", str(d)], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.endswith(": OK\n")
    mutate(d / "00000000000000000000.log", 100, 0)
    bad = subprocess.run(exe + ["verify", "-o", "text", str(d)], capture_output=True, text=True)
    assert bad.returncode == 1 and "crc-mismatch" in bad.stdout
    missing = subprocess.run(exe + ["verify", str(tmp_path / "nope")], capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no such file" in missing.stderr


def test_verify_starts_light_and_its_crc_is_crc32c(logdir):
    """verify's text run loads neither the crc32c package's __init__ (importlib.metadata,
    argparse: records.crc loads its C extension alone) nor msgspec (JSON only)."""
    d, _ = logdir
    code = (
        "import sys; from quorumctl.cli.main import run_captured; "
        f"code, out, err = run_captured(['verify', '-o', 'text', {str(d)!r}]); "
        "from quorumctl.records.crc import crc32c; "
        "print(code, crc32c(b'123456789'), crc32c(b''), "
        "sorted(m for m in ('crc32c', 'importlib.metadata', 'argparse', 'msgspec') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    # 0xE3069283: CRC-32C's standard check value (RFC 3720, appendix B.4)
    assert r.stdout.split("\n")[0] == "0 3808858755 0 []", r.stdout + r.stderr
