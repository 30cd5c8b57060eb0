"""`topics describe` against kafka-topics.sh --describe on a real Kafka 4.1
cluster (3 controllers, 2 brokers, formatted by quorumctl: kafka41.start_cluster): RF2 and RF1 topics, cluster-wide and topic
configs, broker 5 killed. A copy of controller 1's log dir must give Kafka's
lines with every filter, and at a time recorded before the kill, the lines
Kafka printed then. Kafka 4.3's kafka-topics prints the same text (checked once)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from kafka41 import KAFKA_DIR, kafka_tool, needs_kafka, start_cluster, tool_env, until

pytestmark = needs_kafka

FILTERS = (
    "",
    "--unavailable-partitions",
    "--under-replicated-partitions",
    "--under-min-isr-partitions",
    "--at-min-isr-partitions",
)
KAFKA43_TOPICS = KAFKA_DIR / "kafka_2.13-4.3.0" / "bin" / "kafka-topics.sh"


def describe(tmp, bs: str, *args: str) -> str:
    p = kafka_tool("kafka-topics", ["--bootstrap-server", bs, "--describe", *[a for a in args if a]], tmp)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


@pytest.fixture(scope="module")
def seen(cli, tmp_path_factory):
    """Kafka's outputs before and after broker 5 dies, the time between, and a copy of c1's log dir."""
    tmp = tmp_path_factory.mktemp("tools")
    c = start_cluster(cli, tmp_path_factory, "topics", dynamic=False, brokers=2, start_timeout=280)
    d = c.d
    bs = c.broker
    try:
        p = kafka_tool(
            "kafka-configs",
            [
                "--bootstrap-server",
                bs,
                "--alter",
                "--entity-type",
                "brokers",
                "--entity-default",
                "--add-config",
                "log.segment.bytes=104857600,log.retention.ms=7200000",
            ],
            tmp,
        )
        assert p.returncode == 0, p.stderr[-2000:]
        for name, parts, rf, configs in (
            ("rf2", 6, 2, ["min.insync.replicas=2", "retention.ms=3600000"]),
            ("rf1", 4, 1, []),
            ("orders", 2, 2, ["cleanup.policy=compact"]),
            ("payments", 3, 1, ["max.message.bytes=2000000"]),
            ("zeta", 1, 2, []),
        ):
            args = [
                "--bootstrap-server",
                bs,
                "--create",
                "--topic",
                name,
                "--partitions",
                str(parts),
                "--replication-factor",
                str(rf),
            ]
            for kv in configs:
                args += ["--config", kv]
            p = kafka_tool("kafka-topics", args, tmp)
            assert p.returncode == 0, p.stderr[-2000:]
        before = describe(tmp, bs)
        before_ms = int(time.time() * 1000)
        p = subprocess.run(
            [str(KAFKA43_TOPICS), "--bootstrap-server", bs, "--describe"],
            capture_output=True,
            text=True,
            timeout=180,
            env=tool_env(tmp),
        )
        before43 = p.stdout if p.returncode == 0 else p.stderr
        time.sleep(1.5)
        c.kill(5)
        until("broker 5 fenced", lambda: describe(tmp, bs, "--unavailable-partitions").count("\n") >= 1, 120)
        after = {f: describe(tmp, bs, f) for f in FILTERS}
        after["--topic rf2"] = describe(tmp, bs, "--topic", "rf2")
        time.sleep(2)  # the controllers' followers fetch what the leader wrote
        shutil.copytree(d / "data" / "c1", d / "c1copy")
    finally:
        c.stop()
        c.run("wipe", check=False)
    return {"before": before, "before43": before43, "before_ms": before_ms, "after": after, "dir": str(d / "c1copy")}


def test_kafka_41_and_43_print_the_same_describe(seen):
    assert seen["before43"] == seen["before"]
    assert seen["before"].startswith(("Topic: ", "\tTopic: "))


@pytest.mark.parametrize("flag", FILTERS)
def test_topics_describe_prints_kafkas_lines_with_each_filter(cli, seen, flag):
    code, out, err = cli("topics", "describe", seen["dir"], "-o", "text", *([flag] if flag else []))
    assert code == 0, err
    assert out == seen["after"][flag]
    assert "partition(s) listed of 16 in 5 topic(s)" in err


def test_topics_describe_one_topic(cli, seen):
    code, out, err = cli("topics", "describe", seen["dir"], "--topic", "rf2", "-o", "text")
    assert (code, out) == (0, seen["after"]["--topic rf2"])


def test_topics_describe_at_a_past_time_is_what_kafka_printed_then(cli, seen):
    code, out, err = cli("topics", "describe", seen["dir"], "--at-time", str(seen["before_ms"]), "-o", "text")
    assert (code, out) == (0, seen["before"])
    assert "0 unavailable, 0 under-replicated" in err and "live brokers: 4,5" in err


def test_topics_describe_json_counts(cli, seen):
    code, out, err = cli("topics", "describe", seen["dir"], "--unavailable-partitions", "-o", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    listed = [(t["topic"], p["partition"]) for t in doc["topics"] for p in t["partitions"]]
    assert len(listed) == doc["summary"]["unavailable"] == seen["after"]["--unavailable-partitions"].count("\n")
    assert doc["liveBrokers"] == [4] and doc["registeredBrokers"] == [4, 5]
    assert doc["summary"]["partitions"] == 16 and doc["summary"]["listed"] == len(listed)
    assert doc["summary"]["under-replicated"] == seen["after"]["--under-replicated-partitions"].count("\n")
