"""Every batch file of the real corpus decodes to exactly the statistics in
../shared/corpus/CATALOG.json, verifies clean, and re-encodes to the same bytes."""

from __future__ import annotations

import json

import pytest

from quorumctl.records.batch import BatchReader, reencode_batch
from quorumctl.logdir import filekinds
from quorumctl.ops.verify import scan_batches, verify_paths
from samples import CORPUS, FIXTURES

pytestmark = pytest.mark.shared("corpus/CATALOG.json")

BATCH_KINDS = ("snapshot", "bootstrap.checkpoint", "metadata-log", "topic-segment")
KEYS = [
    "batches",
    "records",
    "first_offset",
    "last_offset",
    "epochs",
    "codecs",
    "control",
    "control_batches",
    "txn_batches",
    "delete_horizon_batches",
    "metadata_types",
    "metadata_versions",
    "feature_levels",
    "leader_change",
    "kraft_version",
    "voters_records",
    "producer_ids",
    "broker_mv_ranges",
    "frame_versions",
    "ts_types",
    "min_ts",
    "max_ts",
    "crc_bad",
    "crc_bad_offsets",
    "first_batch_ctl",
    "last_batch_ctl",
    "size",
    "torn_tail",
]


def catalog_files():
    if not (CORPUS / "CATALOG.json").exists():
        return []
    cat = json.loads((CORPUS / "CATALOG.json").read_text())
    return [f for repo in cat.values() for f in repo["files"] if f["kind"] in BATCH_KINDS]


FILES = catalog_files()


def test_catalog_covers_every_kind():
    kinds = {f["kind"] for f in FILES}
    assert kinds == set(BATCH_KINDS)
    assert len(FILES) > 1000


@pytest.mark.parametrize("repo", sorted({f["local"].split("/", 1)[0] for f in FILES}))
def test_statistics_equal_catalog(repo):
    checked = 0
    for f in FILES:
        if not f["local"].startswith(repo + "/"):
            continue
        rep = scan_batches(str(CORPUS / f["local"]), contiguous=filekinds.is_metadata_path(f["local"]), deep=True)
        got = {k: rep.stats[k] for k in KEYS}
        want = {k: f["stats"].get(k) for k in KEYS}
        assert got == want, f["local"]
        assert rep.problems == [], f["local"]
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("repo", sorted({f["local"].split("/", 1)[0] for f in FILES}))
def test_reencode_gives_same_bytes(repo):
    for f in FILES:
        if not f["local"].startswith(repo + "/"):
            continue
        for b in BatchReader(str(CORPUS / f["local"])):
            assert reencode_batch(b, b.records()) == b.data, (f["local"], b.base_offset)


def test_verify_whole_corpus_and_fixtures_clean():
    paths = [str(CORPUS)] + [str(p / "data") for p in FIXTURES.iterdir() if (p / "data").is_dir()]
    reports = verify_paths(paths)
    assert len(reports) > 4000
    problems = [p.line() for r in reports for p in r.problems]
    assert problems == []
