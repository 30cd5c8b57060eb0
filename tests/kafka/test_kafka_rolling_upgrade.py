"""A rolling upgrade of one real cluster from Kafka 4.1 to 4.3 (a dynamic
quorum of 3 controllers + 1 broker, formatted at 4.1-IV1): each node in turn
is stopped and started again on the 4.3 binaries (controllers first, the
broker last, as Kafka's upgrade notes say), then metadata.version is upgraded
to 4.3-IV0 with kafka-features. At every step:

- `describe status` prints what 4.3's kafka-metadata-quorum prints (volatile
  numbers masked), and `describe health` comes back healthy;
- `features describe` prints what 4.3's kafka-features describe prints, byte
  for byte but the epoch: the broker's supported range grows from 4.1's to
  4.3's when it is rolled, and the finalized level moves from 27 to 30 only
  after the upgrade;
- while the broker still runs 4.1, Kafka's own `upgrade --dry-run` to 4.3-IV0
  is refused, and `features upgrade --metadata 4.3-IV0` names broker 4 as the
  blocker (exit 1) with Kafka's verdict, live through the broker and through the
  controllers, and offline on a copy of controller 1's log dir;
- once the broker is rolled too, both dry runs pass (exit 0), and
  `features upgrade --apply` upgrades: features describe shows 4.3-IV0 finalized.
"""

from __future__ import annotations

import shutil

import pytest

from kafka41 import (
    KAFKA43_HOME,
    feature_line,
    features_equal,
    healthy,
    kafka_quorum,
    kafka_tool,
    mask_status,
    needs_kafka,
    ours,
    start_cluster,
    until,
)
from kafka41 import upgrade_check as features_upgrade

pytestmark = [needs_kafka, pytest.mark.kafka("4.3")]


def features(cli, c, tmp) -> str:
    """features describe through the broker, checked against 4.3's kafka-features."""
    return features_equal(cli, tmp, ["--bootstrap-server", c.broker], "4.3")


def metadata_line(text: str) -> str:
    return feature_line(text)


def upgrade_check(cli, *args: str) -> tuple[int, dict]:
    return features_upgrade(cli, "--metadata", "4.3-IV0", *args)


BROKER_4_BLOCKS = [
    {
        "kind": "broker",
        "id": 4,
        "feature": "metadata.version",
        "level": 30,
        "supported": [7, 27],
        "reason": "Broker 4 only supports versions 7-27",
    }
]


def blocked_by_broker_4(cli, c, tmp, kafka_line: str) -> None:
    """While broker 4 runs 4.1: quorumctl names it, live (both ways in) and offline, with Kafka's verdict."""
    code, doc = upgrade_check(cli, "--bootstrap-server", c.broker)
    assert code == 1 and doc["blockers"] == BROKER_4_BLOCKS, doc
    assert doc["verdict"]["by"] == "kafka" and doc["verdict"]["lines"] == [kafka_line], doc["verdict"]
    broker = next(n for n in doc["nodes"] if n["kind"] == "broker")
    assert broker["id"] == 4 and broker["fenced"] is False and broker["lastSeen"]["what"] == "last fetch", broker
    assert sorted(n["id"] for n in doc["nodes"] if n["kind"] == "controller") == [1, 2, 3]
    assert all(n["supported"] == {"metadata.version": [7, 30]} for n in doc["nodes"] if n["kind"] == "controller")

    code, doc = upgrade_check(cli, "--bootstrap-controller", ",".join(c.controllers))
    # controllers do not list brokers' addresses: broker 4's range is Kafka's to judge there
    assert code == 1 and doc["verdict"]["lines"] == [kafka_line], doc
    assert [(n["kind"], n["id"], n["supported"]) for n in doc["nodes"] if n["kind"] == "broker"] == [
        ("broker", 4, None)
    ]

    copy = tmp / "c1-copy"
    shutil.copytree(c.d / "data" / "c1", copy, ignore=shutil.ignore_patterns(".lock"))
    code, doc = upgrade_check(cli, str(copy))
    assert code == 1 and doc["mode"] == "offline" and doc["blockers"] == BROKER_4_BLOCKS, doc
    assert doc["verdict"]["by"] == "quorumctl" and doc["verdict"]["lines"] == [kafka_line], doc["verdict"]
    assert [(n["kind"], n["id"], n["fenced"]) for n in doc["nodes"]] == [
        ("broker", 4, False),
        ("controller", 1, None),
        ("controller", 2, None),
        ("controller", 3, None),
    ]


def test_rolling_upgrade_from_41_to_43(cli, tmp_path_factory, tmp_path):
    c = start_cluster(cli, tmp_path_factory, "rolling", dynamic=True, version="4.1")
    ctl = ["--bootstrap-controller", ",".join(c.controllers)]
    try:

        def step(what: str):
            until(f"healthy after {what}", lambda: healthy(cli, ctl), 120)
            theirs = kafka_quorum(tmp_path, ctl, "--status", home=KAFKA43_HOME)
            assert mask_status(ours(cli, ctl, "status")) == mask_status(theirs), what
            return features(cli, c, tmp_path)

        before = metadata_line(step("the start on 4.1"))
        assert "SupportedMaxVersion: 4.1-IV1 FinalizedVersionLevel: 4.1-IV1" in before
        for node in range(1, c.n + 2):  # the controllers, then the broker
            if node == c.n + 1:
                # the broker still on 4.1 caps the cluster at 4.1-IV1: Kafka's dry run refuses
                k = kafka_tool(
                    "kafka-features",
                    ["--bootstrap-server", c.broker, "upgrade", "--metadata", "4.3-IV0", "--dry-run"],
                    tmp_path,
                    home=KAFKA43_HOME,
                )
                assert k.returncode != 0 and f"Broker {node} only supports versions 7-27" in k.stdout, (
                    k.stdout + k.stderr
                )
                kafka_line = next(ln for ln in k.stdout.splitlines() if ln.startswith("Can not upgrade"))
                blocked_by_broker_4(cli, c, tmp_path, kafka_line)
            c.run("kill-node", str(node))
            c.start_node(node, 240, home=KAFKA43_HOME, check=True)
            line = metadata_line(step(f"node {node} on 4.3"))
            assert "FinalizedVersionLevel: 4.1-IV1" in line, line
        assert "SupportedMaxVersion: 4.3-IV0" in metadata_line(features(cli, c, tmp_path))

        k = kafka_tool(
            "kafka-features",
            ["--bootstrap-server", c.broker, "upgrade", "--metadata", "4.3-IV0", "--dry-run"],
            tmp_path,
            home=KAFKA43_HOME,
        )
        assert k.returncode == 0 and k.stdout.endswith("metadata.version can be upgraded to 30.\n"), k.stdout + k.stderr
        for way in (["--bootstrap-server", c.broker], ["--bootstrap-controller", ",".join(c.controllers)]):
            code, doc = upgrade_check(cli, *way)
            assert code == 0 and doc["blockers"] == [] and doc["dryRun"], doc
            assert doc["verdict"]["lines"] == ["metadata.version can be upgraded to 30."], doc
        code, doc = upgrade_check(cli, "--bootstrap-server", c.broker, "--apply")
        assert code == 0 and doc["applied"]["lines"] == ["metadata.version was upgraded to 30."], doc
        until(
            "the broker sees 4.3-IV0 finalized",
            lambda: "FinalizedVersionLevel: 4.3-IV0" in metadata_line(features(cli, c, tmp_path)),
            60,
        )
        step("the metadata.version upgrade")
    finally:
        c.stop()
