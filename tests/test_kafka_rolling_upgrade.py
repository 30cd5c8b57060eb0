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
  is refused.
"""

from __future__ import annotations

import json
import re

import pytest

from kafka41 import (KAFKA43_HOME, kafka_quorum, kafka_tool, mask_status, needs_kafka, ours, skip_reason,
                     start_cluster, until)

REASON = skip_reason(KAFKA43_HOME)
pytestmark = [needs_kafka, pytest.mark.skipif(REASON is not None, reason=REASON or "")]


def healthy(cli, opt) -> bool:
    code, out, _ = cli("describe", "health", *opt, "-o", "json")
    return code == 0 and json.loads(out)["verdict"] == "healthy"


def features(cli, c, tmp) -> str:
    """features describe through the broker, checked against 4.3's kafka-features."""
    opt = ["--bootstrap-server", c.broker]
    theirs = kafka_tool("kafka-features", [*opt, "describe"], tmp, home=KAFKA43_HOME)
    assert theirs.returncode == 0, theirs.stderr[-2000:]
    code, out, err = cli("features", "describe", *opt)
    assert (code, err) == (0, "")
    # the epoch is the offset of the metadata the node has applied: it moves between two calls
    mask = (lambda t: re.sub(r"Epoch: \d+\n", "Epoch: N\n", t))
    assert mask(out) == mask(theirs.stdout)
    return out


def metadata_line(text: str) -> str:
    return re.sub(r"\s+", " ", next(line for line in text.splitlines() if "Feature: metadata.version" in line))


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
        for node in range(1, c.n + 2):   # the controllers, then the broker
            if node == c.n + 1:
                # the broker still on 4.1 caps the cluster at 4.1-IV1: Kafka's dry run refuses
                k = kafka_tool("kafka-features", ["--bootstrap-server", c.broker, "upgrade", "--metadata", "4.3-IV0",
                                                  "--dry-run"], tmp_path, home=KAFKA43_HOME)
                assert k.returncode != 0 and f"Broker {node} only supports versions 7-27" in k.stdout, k.stdout + k.stderr
            c.run("kill-node", str(node))
            c.run("start-node", str(node), home=KAFKA43_HOME, timeout=300)
            line = metadata_line(step(f"node {node} on 4.3"))
            assert "FinalizedVersionLevel: 4.1-IV1" in line, line
        assert "SupportedMaxVersion: 4.3-IV0" in metadata_line(features(cli, c, tmp_path))

        k = kafka_tool("kafka-features", ["--bootstrap-server", c.broker, "upgrade", "--metadata", "4.3-IV0"],
                       tmp_path, home=KAFKA43_HOME)
        assert k.returncode == 0 and k.stdout.endswith("metadata.version was upgraded to 30.\n"), k.stdout + k.stderr
        until("the broker sees 4.3-IV0 finalized",
              lambda: "FinalizedVersionLevel: 4.3-IV0" in metadata_line(features(cli, c, tmp_path)), 60)
        step("the metadata.version upgrade")
    finally:
        c.stop()
