"""`bootstrap format` writes what the real kafka-storage 4.1 (../shared/kafka)
writes, run at test time with the same config: static, --standalone,
--initial-controllers and --no-initial-controllers. Compared by decoding both
(files, batches, records, meta.properties), timestamps, CRCs and random
directory ids aside; the printed line is compared byte for byte. And
`bootstrap version-mapping` / `feature-dependencies` print what 4.1's
`kafka-storage version-mapping` / `feature-dependencies` print.
"""

from __future__ import annotations

import concurrent.futures as cf

import pytest

from kafka41 import kafka_tool, needs_kafka
from quorumctl.logdir import statefiles as state_files
from logfiles import decode

pytestmark = needs_kafka

CID = "rTcAzcTXQpG_6c1zYns8Xw"
DID = "DfqkWOlJTZ-abG8pUGocIA"
SNAP = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
MODES = {
    "static": [],
    "standalone": ["--standalone"],
    "initial-controllers": ["--initial-controllers", f"1@127.0.0.1:29501:{DID},2@127.0.0.1:29502:4BuDMaJKttH3vcqDCog2og"],
    "no-initial-controllers": ["--no-initial-controllers"],
}


def config(root, mode: str):
    d = root / mode
    quorum = ("controller.quorum.voters=1@127.0.0.1:29501" if mode == "static"
              else "controller.quorum.bootstrap.servers=127.0.0.1:29501")
    p = root / f"{mode}.properties"
    p.write_text(f"process.roles=controller\nnode.id=1\ncontroller.listener.names=CONTROLLER\n"
                 f"listeners=CONTROLLER://127.0.0.1:29501\n{quorum}\nlog.dirs={d}\n")
    return p, d


def snapshot_files(d):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file() and p.name != ".lock")


@pytest.fixture(scope="module")
def kafka_formatted(tmp_path_factory):
    root = tmp_path_factory.mktemp("kafka41-format")
    with cf.ThreadPoolExecutor(len(MODES)) as ex:   # one JVM per mode, side by side
        futs = {m: ex.submit(kafka_tool, "kafka-storage", ["format", "-t", CID, "-c", str(config(root, m)[0]), *a], root)
                for m, a in MODES.items()}
        done = {m: f.result() for m, f in futs.items()}
    for m, p in done.items():
        assert p.returncode == 0, (m, p.stderr[-2000:])
    return root, {m: p.stdout for m, p in done.items()}


def masked(d, name: str, random_voter_id: bool):
    batches = decode(d / name)
    for _, recs in batches:
        for i, (t, data) in enumerate(recs):
            if t == "SNAPSHOT_HEADER" and name == SNAP:
                assert data["lastContainedLogTimestamp"] > 1_600_000_000_000   # the time of formatting
                recs[i] = (t, {**data, "lastContainedLogTimestamp": "now"})
            if t == "KRAFT_VOTERS" and random_voter_id:
                recs[i] = (t, {**data, "voters": [{**v, "voterDirectoryId": "random"} for v in data["voters"]]})
    return batches


@pytest.mark.parametrize("mode", list(MODES))
def test_format_equals_kafka_storage_41(cli, kafka_formatted, tmp_path, mode):
    root, kafka_out = kafka_formatted
    cfg, ours = config(tmp_path, mode)
    code, out, err = cli("bootstrap", "format", "-t", CID, "-c", str(cfg), *MODES[mode], "--apply")
    theirs = root / mode
    assert (code, err) == (0, "")
    assert out == kafka_out[mode].replace(str(theirs), str(ours))
    assert snapshot_files(ours) == snapshot_files(theirs) == sorted(
        ["meta.properties", "bootstrap.checkpoint"] + ([SNAP] if mode in ("standalone", "initial-controllers") else []))
    for name in snapshot_files(theirs):
        if name == "meta.properties":
            a, b = (state_files.read_meta_properties(str(x / name)) for x in (ours, theirs))
            if mode == "initial-controllers":
                assert a["directory.id"] == b["directory.id"] == DID
            for m in (a, b):
                m["directory.id"] = m["properties"]["directory.id"] = "random"
            assert a == b
        else:
            assert masked(ours, name, mode == "standalone") == masked(theirs, name, mode == "standalone"), name
    if mode == "standalone":   # the random voter id is the node's own directory id, on both sides
        for d in (ours, theirs):
            voters = decode(d / SNAP)[0][1][2][1]["voters"]
            assert voters[0]["voterDirectoryId"] == state_files.read_meta_properties(str(d / "meta.properties"))["directory.id"]


def test_the_default_is_41s(kafka_formatted):
    root, kafka_out = kafka_formatted
    assert kafka_out["static"] == f"Formatting metadata directory {root / 'static'} with metadata.version 4.1-IV1.\n"
    recs = [data for t, data in decode(root / "static" / "bootstrap.checkpoint")[1][1]]
    assert recs == [{"name": "metadata.version", "featureLevel": 27},
                    {"name": "eligible.leader.replicas.version", "featureLevel": 1},
                    {"name": "group.version", "featureLevel": 1}, {"name": "transaction.version", "featureLevel": 2}]


RELEASES = [None, "3.9.1", "4.0-IV1", "4.2-IV1"]   # the default, a release echoed as given, versions
ALL_LEVELS = ["metadata.version=7", "metadata.version=29", "kraft.version=0", "kraft.version=1",
              "transaction.version=1", "transaction.version=2", "group.version=1",
              "eligible.leader.replicas.version=0", "eligible.leader.replicas.version=1",
              "share.version=1", "streams.version=1"]


def test_version_mapping_and_feature_dependencies_equal_kafka_41(cli, tmp_path):
    runs = {r: ["version-mapping"] + (["-r", r] if r else []) for r in RELEASES}
    runs["deps"] = ["feature-dependencies"] + [x for f in ALL_LEVELS for x in ("-f", f)]
    with cf.ThreadPoolExecutor(3) as ex:
        kafka = dict(zip(runs, ex.map(lambda a: kafka_tool("kafka-storage", a, tmp_path), runs.values())))
    for key, args in runs.items():
        assert kafka[key].returncode == 0, (key, kafka[key].stderr)
        code, out, err = cli("bootstrap", *args, "-o", "text")
        assert (code, err) == (0, ""), (key, err)
        assert out == kafka[key].stdout, key
    assert kafka[None].stdout.startswith("metadata.version=27 (4.1-IV1)\nkraft.version=1\n")


REFUSALS = [
    (["version-mapping", "-r", "4.2"], "Unknown release version '4.2'. Supported versions are: 3.3-IV3 to 4.1-IV1"),
    (["feature-dependencies", "-f", "group.version=5"], "Feature level 5 is not supported for feature group.version"),
    (["feature-dependencies", "-f", "foo=1"], "Unknown feature: foo"),
    (["feature-dependencies", "-f", "group.version=x"], "Invalid version format: x for feature group.version"),
]


@pytest.fixture(scope="module")
def kafka_refusals(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kafka41-refusals")
    with cf.ThreadPoolExecutor(3) as ex:
        return list(ex.map(lambda r: kafka_tool("kafka-storage", r[0], tmp), REFUSALS))


@pytest.mark.parametrize("i", range(len(REFUSALS)), ids=[" ".join(r[0]) for r in REFUSALS])
def test_refusals_say_what_kafka_41_says(cli, kafka_refusals, i):
    args, message = REFUSALS[i]
    k = kafka_refusals[i]
    assert (k.returncode, k.stderr.strip().splitlines()[-1]) == (1, message)   # Kafka: exit 1 and the message
    code, out, err = cli("bootstrap", *args)
    assert (code, out, err) == (2, "", f"quorumctl: error: {message}\n")       # ours: a usage error, exit 2
