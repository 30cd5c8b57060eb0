"""Live commands against one real Kafka 4.3 cluster (1 controller, 3 brokers), each
compared with Kafka 4.3's own tool on the same cluster at the same moment:

- `topics describe --bootstrap-server` = `kafka-topics --describe`, byte for byte,
  with each option and filter: RF 1 and RF 3 topics, min ISR 2 topics, config
  overrides; healthy, then with a broker killed (unavailable, under-replicated,
  under-min-ISR partitions);
- `describe health` counts the data partitions: healthy, then unhealthy naming the
  leaderless partitions, then healthy again once the broker is back;
- `cluster cluster-id | list-endpoints | unregister` = kafka-cluster's output and
  effect (the registration gone from the controller's image), refused while the
  broker runs;
- `features describe --node-id`, `upgrade|downgrade --release-version`, `disable`
  = kafka-features' text and verdicts, dry runs and applied.

The tests run in file order: the broker is killed half way through.
"""

from __future__ import annotations

import json
import re
import shlex
import time

import pytest

from command_lines import doc_rows
from kafka41 import home_of, kafka_tool, needs_kafka, start_cluster

pytestmark = needs_kafka

VICTIM = 4          # the broker killed half way (ids: controller 1, brokers 2-4)
TOPICS = [          # name, partitions, RF, configs
    ("r1", 3, 1, []),
    ("r3", 4, 3, ["retention.ms=86400000", "cleanup.policy=compact"]),
    ("misr2", 2, 3, ["min.insync.replicas=2"]),
    ("at2", 1, 2, ["min.insync.replicas=2"]),
]


@pytest.fixture(scope="module")
def kc(cli, tmp_path_factory):
    home_of("4.3")
    c = start_cluster(cli, tmp_path_factory, "live-4.3", dynamic=False, controllers=1, brokers=3, version="4.3",
                      start_timeout=240)
    try:
        tmp = tmp_path_factory.mktemp("live-tools")
        for name, parts, rf, configs in TOPICS:
            args = ["--bootstrap-server", c.bootstrap, "--create", "--topic", name, "--partitions", str(parts),
                    "--replication-factor", str(rf)]
            for kv in configs:
                args += ["--config", kv]
            p = kafka_tool("kafka-topics", args, tmp, home=home_of("4.3"))
            assert p.returncode == 0, p.stdout + p.stderr
        c.tmp = tmp
        yield c
    finally:
        c.discard()


def kafka(kc, tool: str, *args: str):
    p = kafka_tool(tool, list(args), kc.tmp, home=home_of("4.3"))
    return p


def until(what: str, ok, limit: float = 90, every: float = 1.0):
    end = time.monotonic() + limit
    while not ok():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(every)


def same_as_kafka_topics(cli, kc, *opts: str):
    theirs = kafka(kc, "kafka-topics", "--bootstrap-server", kc.broker, "--describe", *opts)
    code, out, err = cli("topics", "describe", "--bootstrap-server", kc.broker, *opts)
    assert theirs.returncode == 0 and theirs.stderr == "", theirs.stdout + theirs.stderr
    assert code == 0, err
    assert out == theirs.stdout
    return out


def topic_id(kc, cli, name: str) -> str:
    code, out, _ = cli("topics", "describe", "--bootstrap-server", kc.broker, "--topic", name, "-o", "json")
    return json.loads(out)["topics"][0]["topicId"]


# -- healthy ------------------------------------------------------------------------------

def test_describe_equals_kafka_topics(cli, kc):
    out = same_as_kafka_topics(cli, kc)
    assert re.search(r"^Topic: r3\tTopicId: \S+\tPartitionCount: 4\tReplicationFactor: 3\tConfigs: .*"
                     r"cleanup.policy=compact", out, re.M)
    assert "\tTopic: r1\tPartition: 2\tLeader: " in out
    same_as_kafka_topics(cli, kc, "--topic", "r.*", "--exclude-internal")
    same_as_kafka_topics(cli, kc, "--topics-with-overrides")
    same_as_kafka_topics(cli, kc, "--at-min-isr-partitions")
    same_as_kafka_topics(cli, kc, "--topic", "nope", "--if-exists")
    # by id: Metadata's answer, so Elr: N/A, as Kafka's
    out = same_as_kafka_topics(cli, kc, "--topic-id", topic_id(kc, cli, "misr2"))
    assert "Elr: N/A\tLastKnownElr: N/A" in out and "Topic: r1" not in out


def test_describe_missing_topic_is_one_line(cli, kc):
    code, out, err = cli("topics", "describe", "--bootstrap-server", kc.broker, "--topic", "nope")
    assert (code, out) == (2, "")
    assert err == "quorumctl: error: Topic 'nope' does not exist as expected\n"


def test_health_counts_partitions_when_healthy(cli, kc):
    code, out, err = cli("describe", "health", "--bootstrap-server", kc.broker, "-o", "json", "--timeout", "20")
    doc = json.loads(out)
    assert code == 0, out + err
    p = doc["partitions"]
    wanted = sum(n for _, n, _, _ in TOPICS)
    assert p["partitions"] >= wanted and p["leaderless"] == 0 and p["underReplicated"] == 0
    assert doc["verdict"] == "healthy"


def test_cluster_id_and_endpoints_equal_kafka_cluster(cli, kc):
    for args in (["cluster-id", "-b", kc.broker], ["list-endpoints", "--bootstrap-server", kc.broker],
                 ["list-endpoints", "--bootstrap-controller", kc.controllers[0]]):
        theirs = kafka(kc, "kafka-cluster", *args)
        code, out, err = cli("cluster", *args)
        assert (code, err) == (0, "") and theirs.returncode == 0, theirs.stderr
        assert out == theirs.stdout
    assert out.splitlines()[1].split()[:2] == ["1", "127.0.0.1"]


def epoch_masked(text: str) -> str:
    assert re.search(r"Epoch: \d+\n", text), text
    return re.sub(r"Epoch: \d+\n", "Epoch: N\n", text)


def test_features_describe_node_id_equals_kafka_features(cli, kc):
    for opt in (["--bootstrap-server", kc.broker, "--node-id", "3"],
                ["--bootstrap-controller", kc.controllers[0], "--node-id", "1"]):
        theirs = kafka(kc, "kafka-features", *opt[:2], "describe", *opt[2:])
        # Kafka's own order: the connection option before the subcommand
        code, out, err = cli(*opt[:2], "features", "describe", *opt[2:])
        assert (code, err) == (0, "") and theirs.returncode == 0, theirs.stderr
        assert epoch_masked(out) == epoch_masked(theirs.stdout)
    code, _, err = cli("features", "describe", "--bootstrap-server", kc.broker, "--node-id", "-1")
    assert code == 2 and err == "quorumctl: error: Invalid node id -1: must be non-negative.\n"


@pytest.mark.parametrize("args", [["upgrade", "--release-version", "4.3"], ["downgrade", "--release-version", "4.2"],
                                  ["disable", "--feature", "streams.version"]])
def test_features_dry_runs_give_kafka_features_verdict(cli, kc, args):
    theirs = kafka(kc, "kafka-features", "--bootstrap-server", kc.broker, *args, "--dry-run")
    code, out, err = cli("features", *args, "--bootstrap-server", kc.broker, "--dry-run", "-o", "json")
    doc = json.loads(out)
    assert (code, err) == (theirs.returncode, ""), theirs.stdout + theirs.stderr
    assert doc["verdict"]["lines"] == theirs.stdout.splitlines()
    assert doc["dryRun"] and doc["applied"] is None


def test_features_apply_equals_kafka_features(cli, kc):
    """The same changes applied by each tool in turn: the same lines, the same levels after."""
    code, out, err = cli("features", "disable", "--feature", "streams.version", "--bootstrap-server",
                         kc.broker, "--apply", "-o", "json")
    assert code == 0, out + err
    assert json.loads(out)["applied"]["lines"] == ["streams.version was disabled."]
    theirs = kafka(kc, "kafka-features", "--bootstrap-server", kc.broker, "upgrade", "--release-version", "4.3")
    assert theirs.returncode == 0 and "streams.version was upgraded to 1." in theirs.stdout.splitlines()
    theirs_disable = kafka(kc, "kafka-features", "--bootstrap-server", kc.broker, "disable", "--feature",
                           "streams.version")
    assert theirs_disable.stdout == "streams.version was disabled.\n"
    code, out, err = cli("features", "upgrade", "--release-version", "4.3", "--bootstrap-server", kc.broker,
                         "--apply", "-o", "json")
    assert code == 0, out + err
    assert json.loads(out)["applied"]["lines"] == theirs.stdout.splitlines()
    code, out, _ = cli("features", "describe", "--bootstrap-server", kc.broker)
    assert re.search(r"Feature: streams.version +SupportedMinVersion: 0 +SupportedMaxVersion: 1 +"
                     r"FinalizedVersionLevel: 1 ", out)


def test_kafka_documented_command_lines_run(cli, kc):
    """docs/kafka-command-lines.md's live rows: Kafka's lines, tool name replaced, on this cluster."""
    rows = doc_rows("live")
    assert len(rows) >= 10
    for r in rows:
        line = r["quorumctl"].replace("localhost:9092", kc.broker).replace("localhost:9093", kc.controllers[0])
        code, out, err = cli(*shlex.split(line)[1:])
        assert code == r["exit"], (line, out, err)
        assert "Traceback" not in err and (code != 2 or len(err.splitlines()) == 1), err


def test_unregister_refuses_a_running_broker(cli, kc):
    code, out, _ = cli("cluster", "unregister", "-b", kc.broker, "--id", str(VICTIM), "--apply")
    assert code == 1
    assert f"Refused: broker {VICTIM} is registered and unfenced" in out
    code, out, _ = cli("cluster", "unregister", "-b", kc.broker, "--id", "99")
    assert code == 1 and out.startswith("Refused: broker 99 is not registered (registered: 2, 3, 4)")


# -- a broker killed ------------------------------------------------------------------------

def fenced(cli, kc, node: int) -> bool:
    code, out, _ = cli("cluster", "list-endpoints", "-b", kc.broker, "--include-fenced-brokers", "-o", "json")
    return code == 0 and any(e["id"] == node and e["state"] == "fenced" for e in json.loads(out)["endpoints"])


def test_broker_killed_describe_equals_kafka_topics(cli, kc):
    kc.kill(VICTIM)
    until("the killed broker fenced", lambda: fenced(cli, kc, VICTIM), 60)
    # the leaders move off the dead broker; RF 1 partitions on it have none
    until("no live partition led by the dead broker", lambda: f"Leader: {VICTIM}\t" not in cli(
        "topics", "describe", "--bootstrap-server", kc.broker)[1], 60)
    out = same_as_kafka_topics(cli, kc, "--unavailable-partitions")
    assert out and all("\tLeader: none\t" in line for line in out.splitlines())
    assert same_as_kafka_topics(cli, kc, "--under-replicated-partitions")
    assert same_as_kafka_topics(cli, kc, "--under-min-isr-partitions")
    same_as_kafka_topics(cli, kc, "--at-min-isr-partitions")
    same_as_kafka_topics(cli, kc, "--under-replicated-partitions", "--unavailable-partitions", "--topic", "r.*")
    same_as_kafka_topics(cli, kc)


def test_health_names_leaderless_partitions(cli, kc):
    code, out, _ = cli("topics", "describe", "--bootstrap-server", kc.broker, "--unavailable-partitions",
                       "-o", "json")
    gone = sorted(f"{t['topic']}-{p['partition']}" for t in json.loads(out)["topics"] for p in t["partitions"])
    assert gone
    code, out, _ = cli("describe", "health", "--bootstrap-server", kc.broker, "-o", "json", "--timeout", "20")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "unhealthy"
    assert doc["partitions"]["leaderless"] == len(gone) and sorted(doc["partitions"]["listed"]["leaderless"]) == gone
    assert any(r.startswith(f"{len(gone)} partition(s) without a live leader: ") for r in doc["reasons"])
    code, text, _ = cli("describe", "health", "--bootstrap-server", kc.broker, "--timeout", "20", "-o", "text")
    assert code == 1 and text.startswith("Verdict:                unhealthy\n")


def test_endpoints_with_fenced_equal_kafka_cluster(cli, kc):
    theirs = kafka(kc, "kafka-cluster", "list-endpoints", "-b", kc.broker, "--include-fenced-brokers")
    code, out, _ = cli("cluster", "list-endpoints", "-b", kc.broker, "--include-fenced-brokers")
    assert code == 0 and out == theirs.stdout
    assert re.search(rf"^{VICTIM} +127\.0\.0\.1 +\d+ +null +fenced +broker", out, re.M)


def test_unregister_dry_run_then_apply(cli, kc):
    code, out, _ = cli("cluster", "unregister", "-b", kc.broker, "--id", str(VICTIM), "--dry-run")
    assert code == 0 and f"Dry run: nothing sent. Run with --apply to unregister broker {VICTIM}." in out
    assert re.search(r"Its registration holds: [1-9]\d* partition\(s\) name it as a replica", out)
    assert fenced(cli, kc, VICTIM)                       # the dry run changed nothing
    code, out, err = cli("cluster", "unregister", "-b", kc.broker, "--id", str(VICTIM), "--apply")
    assert code == 0, out + err
    assert out.endswith(f"Broker {VICTIM} is no longer registered.\n")
    code, out, _ = cli("cluster", "list-endpoints", "-b", kc.broker, "--include-fenced-brokers", "-o", "json")
    assert sorted(e["id"] for e in json.loads(out)["endpoints"]) == [2, 3]
    # the registration is gone from the controller's metadata image too
    def image_brokers():
        code, out, _ = cli("image", str(kc.data(1)), "/brokers", "-o", "json")
        assert code == 0
        return sorted(json.loads(out)["image"])
    until("the unregistration in the controller's log", lambda: image_brokers() == ["2", "3"], 30)


def test_broker_back_health_healthy(cli, kc):
    kc.start_node(VICTIM)

    def healthy():
        code, out, _ = cli("describe", "health", "--bootstrap-server", kc.broker, "-o", "json", "--timeout", "20")
        doc = json.loads(out) if out else {}
        return code == 0 and doc.get("verdict") == "healthy" and doc["partitions"]["leaderless"] == 0
    until("describe health healthy with the broker back", healthy, 120, every=2)
