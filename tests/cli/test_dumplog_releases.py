"""Where kafka-dump-log 4.1 and 4.3 print differently, dump-log prints 4.3's
text by default and 4.1's with --kafka-version 4.1 (docs/dump-log.md). The
real tools' output on real files is compared in test_kafka_dumplog.py; here
the forms are pinned on files written for the purpose, without Java."""

from __future__ import annotations

import os

import pytest

from quorumctl.logdir.producer_state import snapshot_bytes
from quorumctl.records.batch import encode_batch


def segment(d, base: int, offsets_per_batch: list[list[int]], key: bytes | None = None) -> str:
    """A segment of batches each holding the records first..last of its list
    (a gap between batches is what compaction leaves)."""
    path = os.path.join(d, f"{base:020d}.log")
    with open(path, "wb") as f:
        for offs in offsets_per_batch:
            f.write(
                encode_batch(
                    [(key, b"v%d" % o) for o in range(offs[0], offs[-1] + 1)],
                    base_offset=offs[0],
                    base_timestamp=1_700_000_000_000,
                )
            )
    return path


def stderr_lines(cli, *args):
    code, out, err = cli("dump-log", "-o", "text", *args)
    return code, out, err.splitlines()


def test_a_segment_not_starting_at_zero(cli, tmp_path):
    path = segment(tmp_path, 100, [[100, 101], [102, 103]])
    code, out, err = stderr_lines(cli, "--deep-iteration", path)
    # 4.3 checks the first record against offset -1; it is not a problem
    assert (code, err) == (0, [f"Non-consecutive offsets in {os.path.abspath(path)}", "  -1 is followed by 100"])
    code, out, err = stderr_lines(cli, "--deep-iteration", "--kafka-version", "4.1", path)
    assert (code, err) == (0, [])
    # without --deep-iteration neither release looks at records
    assert stderr_lines(cli, path)[2] == []


def test_real_gaps_order_and_exit_code(cli, tmp_path):
    path = segment(tmp_path, 0, [[0, 1], [5, 6], [9, 9]])
    code, _, err = stderr_lines(cli, "--deep-iteration", path)
    assert (code, err) == (
        1,
        [f"Non-consecutive offsets in {os.path.abspath(path)}", "  1 is followed by 5", "  6 is followed by 9"],
    )
    code, _, err = stderr_lines(cli, "--deep-iteration", "--kafka-version", "4.1", path)
    assert (code, err[1:]) == (1, ["  6 is followed by 9", "  1 is followed by 5"])
    # JSON names the real gaps only, never 4.3's -1 pair
    later = segment(tmp_path, 100, [[100, 100], [102, 102]])
    code, out, _ = cli("dump-log", "-o", "json", "--deep-iteration", later)
    assert code == 1
    assert '"problem":"non-consecutive-offsets","offset":100,"next":102' in out and '"offset":-1' not in out


@pytest.mark.parametrize(
    "key,release,expected",
    [
        (None, "4.3", "| payload: v0"),
        (None, "4.1", " payload: v0"),
        (b"k", "4.3", "| key: k payload: v0"),
        (b"k", "4.1", "| key: k payload: v0"),
    ],
)
def test_skip_record_metadata_payload_prefix(cli, tmp_path, key, release, expected):
    path = segment(tmp_path, 0, [[0, 0]], key=key)
    code, out, err = cli(
        "dump-log", "-o", "text", "--print-data-log", "--skip-record-metadata", "--kafka-version", release, path
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == expected


def test_producer_entry_without_batch_metadata(cli, tmp_path):
    # lastOffset -1: Kafka keeps no batch metadata for the entry
    path = tmp_path / "00000000000000000000.snapshot"
    path.write_bytes(snapshot_bytes([(7, 0, -1, -1, 0, 1_700_000_000_000, 0, -1)]))
    lines = {}
    for release in ("4.3", "4.1"):
        code, out, err = cli("dump-log", "-o", "text", "--kafka-version", release, str(path))
        assert (code, err) == (0, ""), err
        lines[release] = out.splitlines()[-1]
    assert lines["4.3"] == (
        "producerId: 7 producerEpoch: 0 coordinatorEpoch: 0 currentTxnFirstOffset: "
        "OptionalLong.empty lastTimestamp: 1700000000000"
    )
    assert lines["4.1"] == lines["4.3"] + " "


def test_unknown_release_is_a_usage_error(cli, tmp_path):
    code, out, err = cli("dump-log", "--kafka-version", "4.2", str(segment(tmp_path, 0, [[0, 0]])))
    assert code == 2 and out == "" and "4.2" in err and "Traceback" not in err
