"""`features describe`: kafka-features describe's text from a node's ApiVersions
feature levels (4.3's padded columns by default, whatever the node runs; 4.1's
TAB-separated lines with --kafka-version 4.1), JSON, and the wrong kind of
address."""

from __future__ import annotations

import json

from quorumctl.live.describe import Features
from quorumctl.render.features import features_text
from quorumctl.testing.sim import SimulatedCluster, replica

NOW = 1795305697138


def sim() -> SimulatedCluster:
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw",
        leader_id=1,
        leader_epoch=5,
        high_watermark=490,
        voters=[replica(i, 500, NOW, NOW) for i in (1, 2, 3)],
        observers=[],
    )
    return c.add_nodes()


def test_text_is_kafka_41s_on_request(cli):
    with sim() as c:
        code, out, err = cli(
            "features", "describe", "--bootstrap-server", c.node_by_id(4).address, "--kafka-version", "4.1"
        )
        dcode, dout, _ = cli("features", "describe", "--bootstrap-server", c.node_by_id(4).address)
        jcode, jout, _ = cli("features", "describe", "--bootstrap-controller", c.node_by_id(2).address, "-o", "json")
        wcode, wout, werr = cli("features", "describe", "--bootstrap-controller", c.node_by_id(4).address)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (
        "Feature: eligible.leader.replicas.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t"
        "FinalizedVersionLevel: 1\tEpoch: 490"
    )
    assert lines[3] == (
        "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.1-IV1\t"
        "FinalizedVersionLevel: 4.1-IV1\tEpoch: 490"
    )
    assert [ln.split("\t")[0] for ln in lines] == sorted(ln.split("\t")[0] for ln in lines)
    # by default, 4.3's tool's text, also for a 4.1 node
    assert dcode == 0 and dout.splitlines()[3] == (
        "Feature: metadata.version"
        + " " * 24
        + "  SupportedMinVersion: 3.3-IV3"
        + " " * 8
        + "  SupportedMaxVersion: 4.1-IV1"
        + " " * 8
        + "  FinalizedVersionLevel: 4.1-IV1"
        + " " * 8
        + "  Epoch: 490"
    )
    doc = json.loads(jout)
    assert (
        jcode == 0
        and doc["finalizedFeaturesEpoch"] == 490
        and doc["features"][3]
        == {
            "name": "metadata.version",
            "supportedMinVersion": 7,
            "supportedMaxVersion": 27,
            "finalizedVersionLevel": 27,
            "finalizedVersionName": "4.1-IV1",
        }
    )
    a4 = c.node_by_id(4).address
    assert (wcode, wout, werr) == (
        2,
        "",
        f"quorumctl: error: {a4} is a broker, not a controller: use --bootstrap-server {a4}\n",
    )


def test_kafka_41s_text_does_not_name_43_levels():
    # Kafka 4.1's tool knows levels up to 4.2-IV1 (29): a 4.3 node's 30 is "UNKNOWN 30" in it
    f = Features({"metadata.version": (7, 30)}, {"metadata.version": 29}, 5, "h:1")
    assert features_text(f, "4.1") == (
        "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\t"
        "SupportedMaxVersion: UNKNOWN 30\tFinalizedVersionLevel: 4.2-IV1\tEpoch: 5\n"
    )


def test_text_is_kafka_43s():
    f = Features(
        {"metadata.version": (7, 30), "kraft.version": (0, 1), "share.version": (0, 1)},
        {"metadata.version": 27, "kraft.version": 1},
        None,
        "h:1",
    )
    assert features_text(f) == (
        "Feature: kraft.version"
        + " " * 27
        + "  SupportedMinVersion: 0"
        + " " * 14
        + "  SupportedMaxVersion: 1"
        + " " * 14
        + "  FinalizedVersionLevel: 1"
        + " " * 14
        + "  Epoch: -\n"
        "Feature: metadata.version"
        + " " * 24
        + "  SupportedMinVersion: 3.3-IV3"
        + " " * 8
        + "  SupportedMaxVersion: 4.3-IV0"
        + " " * 8
        + "  FinalizedVersionLevel: 4.1-IV1"
        + " " * 8
        + "  Epoch: -\n"
        "Feature: share.version"
        + " " * 27
        + "  SupportedMinVersion: 0"
        + " " * 14
        + "  SupportedMaxVersion: 1"
        + " " * 14
        + "  FinalizedVersionLevel: 0"
        + " " * 14
        + "  Epoch: -\n"
    )
