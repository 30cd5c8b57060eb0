"""`features describe` against real Kafka 4.1 and 4.3 clusters (3 controllers +
1 broker each, one after the other): the same bytes as 4.3's kafka-features
describe (padded columns, KAFKA-19941) by default, and as 4.1's
(TAB-separated) with --kafka-version 4.1, through a broker and through a
controller."""

from __future__ import annotations

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
    opt = ["--bootstrap-server", cluster.broker] if via == "broker" else \
        ["--bootstrap-controller", cluster.controllers[0]]
    theirs = kafka_tool("kafka-features", [*opt, "describe"], tmp_path, home=home_of(tool))
    assert theirs.returncode == 0, theirs.stderr[-2000:]
    code, out, err = cli("features", "describe", *opt, *(["--kafka-version", "4.1"] if tool == "4.1" else []))
    assert (code, err) == (0, "")
    assert epoch_masked(out) == epoch_masked(theirs.stdout)
    line = re.sub(r"\s+", " ", next(x for x in out.splitlines() if "Feature: metadata.version" in x))
    # 4.1's tool does not know 4.3's level 30, and says so
    named = RELEASE_VERSION[cluster.version] if tool == "4.3" or cluster.version == "4.1" else "UNKNOWN 30"
    assert f"FinalizedVersionLevel: {named} " in line
