"""Files Kafka renamed on their way out (`.deleted`, `.cleaned`, `.swap` after a
segment's, index's or snapshot's name) are decoded and verified as what they
were, and labelled as such; they never join the live log's offset chain."""

from __future__ import annotations

import json
import shutil

import pytest

from quorumctl.spark.plan import export_kind
from quorumctl.logdir import filekinds
from samples import FIXTURES

SNAP1 = FIXTURES / "kafka-3.7.0-static" / "snap1"
pytestmark = pytest.mark.shared("reference/fixtures/kafka-3.7.0-static/snap1")
SEG = ["00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"]
SNAP = "00000000000000000092-0000000002.checkpoint"


def test_kind_and_name_of_renamed_files():
    assert [
        filekinds.kind_of(f"00000000000000000000.{x}") for x in ("log.deleted", "index.cleaned", "timeindex.swap")
    ] == [filekinds.LOG, filekinds.INDEX, filekinds.TIMEINDEX]
    assert filekinds.kind_of(SNAP + ".deleted") == filekinds.SNAPSHOT and filekinds.snapshot_id(SNAP + ".deleted") == (
        92,
        2,
    )
    assert (
        filekinds.renamed("a/00000000000000000000.log.swap"),
        filekinds.original_name("a/00000000000000000000.log.swap"),
    ) == (".swap", "00000000000000000000.log")
    assert filekinds.renamed("00000000000000000000.log") is None and filekinds.kind_of(".deleted") == filekinds.UNKNOWN
    # spark-export reads a renamed segment only when it is named: in a directory it is a duplicate
    assert export_kind("x/__cluster_metadata-0/00000000000000000000.log.deleted") is None
    assert export_kind("x/__cluster_metadata-0/00000000000000000000.log.deleted", explicit=True) == "segment"


@pytest.fixture
def renamed_dir(tmp_path):
    """snap1's metadata log with its segment and snapshot renamed .deleted, and a copy
    of the same segment live beside them (its offsets overlap the renamed one's)."""
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    for f in SEG:
        shutil.copy(SNAP1 / f, d / (f + ".deleted"))
        shutil.copy(SNAP1 / f, d / f)
    shutil.copy(SNAP1 / SNAP, d / (SNAP + ".deleted"))
    return d


def test_dump_log_decodes_and_labels_them(cli, renamed_dir, tmp_path):
    code, out, err = cli("dump-log", "-o", "text", "--deep-iteration", str(renamed_dir / (SNAP + ".deleted")))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[:3] == [
        f"Dumping {renamed_dir / (SNAP + '.deleted')}",
        f"Renamed .deleted: scheduled for deletion (retention, truncation or a replaced snapshot); read as {SNAP}",
        "Snapshot end offset: 92, epoch: 2",
    ]
    code, plain, _ = cli("dump-log", "-o", "text", "--deep-iteration", str(SNAP1 / SNAP), code=0)
    assert lines[2:] == plain.splitlines()[1:]  # the same records as the snapshot it was
    code, out, err = cli("dump-log", "-o", "json", str(renamed_dir / (SNAP + ".deleted")), code=0)
    docs = [json.loads(x) for x in out.splitlines()]
    assert docs[0] == {
        "kind": "renamed",
        "file": str(renamed_dir / (SNAP + ".deleted")),
        "suffix": ".deleted",
        "as": SNAP,
        "meaning": "scheduled for deletion (retention, truncation or a replaced snapshot)",
    }
    assert [d["kind"] for d in docs[1:]] == ["batch"] * 3
    # a directory: the renamed files are dumped too
    code, out, err = cli("dump-log", "-o", "text", str(renamed_dir), code=0)
    dumped = [x.split("/")[-1] for x in out.splitlines() if x.startswith("Dumping ")]
    assert sorted(dumped) == sorted(SEG + [f + ".deleted" for f in SEG] + [SNAP + ".deleted"])


def test_verify_checks_them_apart_from_the_live_log(cli, renamed_dir):
    code, out, err = cli("verify", "-o", "json", str(renamed_dir))
    doc = json.loads(out)
    assert (code, doc["ok"], doc["summary"]["problems"]) == (0, True, 0), out
    by_name = {f["file"].split("/")[-1]: f for f in doc["files"]}
    assert sorted(by_name) == sorted(SEG + [f + ".deleted" for f in SEG] + [SNAP + ".deleted"])
    gone = by_name["00000000000000000000.log.deleted"]
    assert (gone["kind"], gone["stats"]["renamed"], gone["stats"]["first_offset"], gone["stats"]["last_offset"]) == (
        "log",
        ".deleted",
        0,
        97,
    )
    assert gone["notes"][0]["kind"] == "renamed"
    assert gone["notes"][0]["message"] == (
        ".deleted: scheduled for deletion (retention, truncation or a replaced "
        "snapshot); verified as 00000000000000000000.log"
    )
    assert (
        by_name[SNAP + ".deleted"]["stats"]["renamed"] == ".deleted"
        and by_name[SNAP + ".deleted"]["kind"] == "snapshot"
    )
    assert "renamed" not in by_name["00000000000000000000.log"]["stats"]


def test_verify_finds_damage_in_a_renamed_segment(cli, renamed_dir):
    p = renamed_dir / "00000000000000000000.log.deleted"
    data = bytearray(p.read_bytes())
    data[200] ^= 0xFF
    p.write_bytes(bytes(data))
    code, out, err = cli("verify", "-o", "text", str(renamed_dir))
    assert code == 1
    assert any(line.startswith(f"{p}: position ") and "crc" in line.lower() for line in out.splitlines()), out
