"""`features describe` against real Kafka 4.1 and 4.3 clusters (3 controllers +
1 broker each, one after the other): the same bytes as 4.3's kafka-features
describe (padded columns, KAFKA-19941) by default, and as 4.1's
(TAB-separated) with --kafka-version 4.1, through a broker and through a
controller."""

from __future__ import annotations

import json
import re

import pytest

from kafka41 import HOMES, RELEASE_VERSION, cluster_fixture, home_of, kafka_tool, needs_kafka

pytestmark = needs_kafka

cluster = cluster_fixture("features", dynamic=True)


def epoch_masked(text: str) -> str:
    # the epoch is the offset of the metadata the node has applied: it moves between two calls
    assert re.search(r"Epoch: \d+\n", text), text
    return re.sub(r"Epoch: \d+\n", "Epoch: N\n", text)


@pytest.mark.parametrize("tool", list(HOMES))
@pytest.mark.parametrize("via", ["broker", "controller"])
def test_features_describe_equals_kafka_features(cli, cluster, tmp_path, via, tool):
    opt = (
        ["--bootstrap-server", cluster.broker]
        if via == "broker"
        else ["--bootstrap-controller", cluster.controllers[0]]
    )
    theirs = kafka_tool("kafka-features", [*opt, "describe"], tmp_path, home=home_of(tool))
    assert theirs.returncode == 0, theirs.stderr[-2000:]
    code, out, err = cli("features", "describe", *opt, *(["--kafka-version", "4.1"] if tool == "4.1" else []))
    assert (code, err) == (0, "")
    assert epoch_masked(out) == epoch_masked(theirs.stdout)
    line = re.sub(r"\s+", " ", next(x for x in out.splitlines() if "Feature: metadata.version" in x))
    # 4.1's tool does not know 4.3's level 30, and says so; 4.3's and 4.4's do
    named = RELEASE_VERSION[cluster.version] if tool != "4.1" or cluster.version == "4.1" else "UNKNOWN 30"
    assert f"FinalizedVersionLevel: {named} " in line


@pytest.mark.parametrize("via", ["broker", "controller"])
def test_features_upgrade_downgrade_give_kafkas_verdict(cli, cluster, tmp_path, via):
    """features upgrade/downgrade's dry run on a cluster all of one release: Kafka's own
    verdict, line for line as the release's kafka-features --dry-run prints it; a level no node
    supports names every node it reaches (through a broker: the broker and the voters)."""
    opt = (
        ["--bootstrap-server", cluster.broker]
        if via == "broker"
        else ["--bootstrap-controller", ",".join(cluster.controllers)]
    )
    home = home_of(cluster.version)
    for op, feature, code_wanted in (("upgrade", "group.version=2", 1), ("downgrade", "transaction.version=1", 0)):
        theirs = kafka_tool("kafka-features", [*opt, op, "--feature", feature, "--dry-run"], tmp_path, home=home)
        assert theirs.returncode == code_wanted, theirs.stdout + theirs.stderr
        code, out, err = cli("features", op, "--feature", feature, *opt, "-o", "json")
        if code == 3 and " within " in err:  # a loaded machine: CI saw the broker's answer late; ask again
            code, out, err = cli("features", op, "--feature", feature, *opt, "-o", "json")
        assert (code, err) == (code_wanted, ""), out
        doc = json.loads(out)
        assert doc["verdict"]["by"] == "kafka" and doc["verdict"]["lines"] == theirs.stdout.splitlines(), (
            doc["verdict"],
            theirs.stdout,
        )
        assert doc["dryRun"] and doc["applied"] is None
    # group.version=2 is beyond every node's 0-1: each node that answered is named
    code, out, _ = cli("features", "upgrade", "--feature", "group.version=2", *opt, "-o", "json", code=1)
    doc = json.loads(out)
    named = sorted((b["kind"], b["id"], b["reason"]) for b in doc["blockers"])
    if via == "broker":
        assert named == [("broker", 4, "Broker 4 only supports versions 0-1")] + [
            ("controller", i, f"Controller {i} only supports versions 0-1") for i in (1, 2, 3)
        ]
    else:
        assert named == [("controller", i, f"Controller {i} only supports versions 0-1") for i in (1, 2, 3)]
