"""`topics describe` offline: Kafka's describe rules over an image (live
brokers, filters, min.insync.replicas precedence, reassignments), the admin
client's HashMap orders, and the command's errors. The same lines as
kafka-topics on a real cluster: test_kafka41_topics.py."""

from __future__ import annotations

import json

import pytest

from quorumctl.errors import InputError
from quorumctl.image.model import Image, Topic, partition_from_record
from quorumctl.image.topics import admin_topic_order, describe, hashmap_capacity, java_hash, topic_configs
from quorumctl.render.topics import describe_lines


def _image(brokers: dict[int, bool]) -> Image:
    img = Image()
    for bid, fenced in brokers.items():
        img.brokers[bid] = {"epoch": 1, "fenced": fenced}
    return img


def _topic(img: Image, name: str, tid: str, parts: list[dict]) -> None:
    t = img.topics[tid] = Topic(name, tid)
    img.topic_ids[name] = tid
    for i, p in enumerate(parts):
        t.partitions[i] = partition_from_record({"leaderEpoch": 0, "partitionEpoch": 0, **p})


def test_java_string_hash_and_hashmap_sizes():
    assert java_hash("") == 0 and java_hash("a") == 97
    assert java_hash("orders") == (-1008770331) & 0xFFFFFFFF  # "orders".hashCode() in Java
    # table sizes Java 17 reports (HashMap.table by reflection) after n puts
    assert [hashmap_capacity(n, sized=n) for n in (1, 2, 3, 7, 13)] == [2, 4, 4, 16, 32]
    assert [hashmap_capacity(n, copy=True) for n in (1, 2, 3, 7, 13)] == [2, 4, 8, 16, 32]
    assert [hashmap_capacity(n) for n in (12, 13, 24, 25, 33)] == [16, 32, 32, 64, 64]


def test_topic_order_is_the_admin_clients_hashmap_order():
    # as kafka-topics 4.1 listed them on a real cluster (not sorted by name)
    assert admin_topic_order(["orders", "payments", "zeta", "alpha-1", "b", "c", "rf1", "rf2"]) == [
        "alpha-1",
        "zeta",
        "b",
        "c",
        "payments",
        "orders",
        "rf1",
        "rf2",
    ]


def test_configs_column_order_sources_and_the_static_synonym_rule():
    img = _image({4: False})
    _topic(img, "t", "AAAAAAAAAAAAAAAAAAAAAQ", [{"replicas": [4], "isr": [4], "leader": 4}])
    img.configs[(2, "t")] = {"cleanup.policy": "compact", "max.message.bytes": "2000000"}
    img.configs[(4, "")] = {"min.insync.replicas": "1", "log.segment.bytes": "104857600", "log.retention.ms": "7200000"}
    got = topic_configs(img, "t", {"log.retention.hours": "1", "log.roll.ms": "5000", "num.partitions": "3"})
    # Kafka 4.1 printed min.insync.replicas=1,cleanup.policy=compact,segment.bytes=104857600,
    # retention.ms=7200000,max.message.bytes=2000000 for these topic and cluster configs
    assert [(k, v) for k, v, _ in got] == [
        ("min.insync.replicas", "1"),
        ("cleanup.policy", "compact"),
        ("segment.bytes", "104857600"),
        ("retention.ms", "7200000"),
        ("max.message.bytes", "2000000"),
        ("segment.ms", "5000"),
    ]
    sources = {k: s for k, _, s in got}
    assert sources["cleanup.policy"] == "DYNAMIC_TOPIC_CONFIG"
    assert sources["retention.ms"] == "DYNAMIC_DEFAULT_BROKER_CONFIG"  # the cluster's, over the static hours
    assert sources["segment.ms"] == "STATIC_BROKER_CONFIG"
    # a static log.retention.hours alone is not the main synonym: Kafka reports the default
    img.configs[(4, "")] = {}
    assert "retention.ms" not in {k for k, _, _ in topic_configs(img, "t", {"log.retention.hours": "1"})}


def test_filters_live_brokers_and_min_isr_precedence():
    img = _image({1: False, 2: False, 3: True})  # 3 is fenced: not live
    _topic(
        img,
        "a",
        "AAAAAAAAAAAAAAAAAAAAAQ",
        [
            {"replicas": [1, 2], "isr": [1, 2], "leader": 1},  # healthy, at min ISR 2 (topic config)
            {"replicas": [3, 1], "isr": [3], "leader": 3},  # leader fenced: none, unavailable
            {"replicas": [1, 2], "isr": [1], "leader": 1, "eligibleLeaderReplicas": [2]},
            {"replicas": [5], "isr": [], "leader": -1, "lastKnownElr": [5]},  # on an unregistered broker
        ],
    )
    img.configs[(2, "a")] = {"min.insync.replicas": "2"}
    _topic(
        img,
        "b",
        "AAAAAAAAAAAAAAAAAAAAAg",
        [{"replicas": [1, 2, 4], "isr": [1, 2], "leader": 2, "addingReplicas": [4], "removingReplicas": []}],
    )
    img.configs[(4, "")] = {"min.insync.replicas": "3"}

    doc = describe(img)
    assert doc["liveBrokers"] == [1, 2] and doc["registeredBrokers"] == [1, 2, 3]
    assert doc["summary"] == {
        "topics": 2,
        "partitions": 5,
        "listed": 5,
        "unavailable": 2,
        "under-replicated": 3,
        "under-min-isr": 4,
        "at-min-isr": 1,
    }
    lines = describe_lines(doc)
    assert lines[0] == (
        "Topic: a\tTopicId: AAAAAAAAAAAAAAAAAAAAAQ\tPartitionCount: 4\tReplicationFactor: 2"
        "\tConfigs: min.insync.replicas=2"
    )
    assert lines[2] == "\tTopic: a\tPartition: 1\tLeader: none\tReplicas: 3,1\tIsr: 3\tElr: \tLastKnownElr: "
    assert lines[3] == "\tTopic: a\tPartition: 2\tLeader: 1\tReplicas: 1,2\tIsr: 1\tElr: 2\tLastKnownElr: "
    # a reassignment: RF is replicas minus adding, and the adding/removing columns appear
    assert lines[5] == (
        "Topic: b\tTopicId: AAAAAAAAAAAAAAAAAAAAAg\tPartitionCount: 1\tReplicationFactor: 2"
        "\tConfigs: min.insync.replicas=3"
    )
    assert lines[6] == (
        "\tTopic: b\tPartition: 0\tLeader: 2\tReplicas: 1,2,4\tIsr: 1,2\tAdding Replicas: 4"
        "\tRemoving Replicas: \tElr: \tLastKnownElr: "
    )

    # filters: no topic lines; several filters list a partition any of them selects
    only = describe_lines(describe(img, filters=("unavailable",)))
    assert [ln.split("\t")[2:4] for ln in only] == [["Partition: 1", "Leader: none"], ["Partition: 3", "Leader: none"]]
    both = describe_lines(describe(img, filters=("unavailable", "at-min-isr")))
    assert [ln.split("\t")[1:3] for ln in both] == [
        ["Topic: a", "Partition: 0"],
        ["Topic: a", "Partition: 1"],
        ["Topic: a", "Partition: 3"],
    ]
    # min.insync.replicas: topic (2) > cluster default (3) > static > 1
    assert [p["minIsr"] for t in doc["topics"] for p in t["partitions"]] == [2, 2, 2, 2, 3]
    img.configs.pop((4, ""))
    assert describe(img, topic="b", static={"min.insync.replicas": "2"})["topics"][0]["partitions"][0]["minIsr"] == 2
    assert describe(img, topic="b")["topics"][0]["partitions"][0]["minIsr"] == 1


def test_topic_is_a_java_style_regex_over_the_whole_name():
    img = _image({1: False})
    for i, name in enumerate(("orders", "orders-dlq", "payments")):
        _topic(img, name, f"AAAAAAAAAAAAAAAAAAAAA{'QgA'[i]}", [{"replicas": [1], "isr": [1], "leader": 1}])
    assert sorted(t["topic"] for t in describe(img, topic="orders")["topics"]) == ["orders"]
    assert sorted(t["topic"] for t in describe(img, topic="orders.*")["topics"]) == ["orders", "orders-dlq"]
    assert sorted(t["topic"] for t in describe(img, topic="orders, payments")["topics"]) == ["orders", "payments"]
    with pytest.raises(InputError, match="^Topic 'nosuch' does not exist as expected$"):
        describe(img, topic="nosuch")
    with pytest.raises(InputError, match="invalid regex"):
        describe(img, topic="(")


def _log(tmp_path, records) -> str:
    from quorumctl.records import metadata as md
    from quorumctl.records.batch import encode_batch

    d = tmp_path / "__cluster_metadata-0"
    d.mkdir(exist_ok=True)
    values = [(None, md.encode_metadata(k, v, data)) for k, v, data in records]
    (d / "00000000000000000000.log").write_bytes(
        encode_batch(values, base_offset=0, leader_epoch=3, base_timestamp=1000)
    )
    return str(tmp_path)


def test_cli_describe_text_json_and_errors(cli, tmp_path):
    tid = "AAAAAAAAAAAAAAAAAAAAAQ"
    d = _log(
        tmp_path,
        [
            ("TopicRecord", 0, {"name": "orders", "topicId": tid}),
            (
                "PartitionRecord",
                0,
                {
                    "partitionId": 0,
                    "topicId": tid,
                    "replicas": [1, 2],
                    "isr": [1, 2],
                    "removingReplicas": [],
                    "addingReplicas": [],
                    "leader": 1,
                    "leaderEpoch": 0,
                    "partitionEpoch": 0,
                },
            ),
        ],
    )
    code, out, err = cli("topics", "describe", d, "-o", "text")
    assert code == 0
    # no broker is registered in this log: the leader is not live
    assert out == (
        "Topic: orders\tTopicId: AAAAAAAAAAAAAAAAAAAAAQ\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n"
        "\tTopic: orders\tPartition: 0\tLeader: none\tReplicas: 1,2\tIsr: 1,2\tElr: \tLastKnownElr: \n"
    )
    assert err == (
        "1 partition(s) listed of 1 in 1 topic(s) at offset 1, 1970-01-01T00:00:01.000Z: 1 unavailable, "
        "0 under-replicated, 1 under min ISR, 0 at min ISR; live brokers: none\n"
    )
    code, out, err = cli("topics", "describe", d, "--under-replicated-partitions", "-o", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["topics"][0]["partitions"] == [] and doc["summary"]["listed"] == 0
    assert doc["at"]["offset"] == 1
    for args, msg in (
        (["--topic", "nosuch"], "Topic 'nosuch' does not exist as expected"),
        (["--at-offset", "1", "--at-time", "5"], "give --at-offset or --at-time, not both"),
        (["--at-time", "yesterday"], "expected a time"),
    ):
        code, out, err = cli("topics", "describe", d, *args)
        assert code == 2 and out == "" and err.count("\n") == 1 and msg in err, err


OFFSETS_ID, ORDERS_ID, PLAIN_ID = "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw"


def _part(tid: str, pid: int, replicas: list[int], isr: list[int], leader: int) -> tuple:
    return (
        "PartitionRecord",
        0,
        {
            "partitionId": pid,
            "topicId": tid,
            "replicas": replicas,
            "isr": isr,
            "removingReplicas": [],
            "addingReplicas": [],
            "leader": leader,
            "leaderEpoch": 0,
            "partitionEpoch": 0,
        },
    )


def _config(topic: str, name: str, value: str) -> tuple:
    return ("ConfigRecord", 0, {"resourceType": 2, "resourceName": topic, "name": name, "value": value})


def _log_with_internal_topic(tmp_path) -> str:
    """Brokers 1 (live) and 2 (fenced); __consumer_offsets with the configs Kafka creates it with,
    `orders` with an override (RF 2), `plain` without one (RF 1, on the fenced broker)."""
    brokers = [
        (
            "RegisterBrokerRecord",
            2,
            {
                "brokerId": b,
                "incarnationId": "AAAAAAAAAAAAAAAAAAAAAg",
                "brokerEpoch": 10 + b,
                "endPoints": [],
                "features": [],
                "rack": None,
                "fenced": fenced,
            },
        )
        for b, fenced in ((1, False), (2, True))
    ]
    return _log(
        tmp_path,
        [
            *brokers,
            ("TopicRecord", 0, {"name": "__consumer_offsets", "topicId": OFFSETS_ID}),
            _part(OFFSETS_ID, 0, [1, 2], [1, 2], 1),
            _part(OFFSETS_ID, 1, [2, 1], [1], 1),
            _config("__consumer_offsets", "cleanup.policy", "compact"),
            _config("__consumer_offsets", "compression.type", "producer"),
            _config("__consumer_offsets", "segment.bytes", "104857600"),
            ("TopicRecord", 0, {"name": "orders", "topicId": ORDERS_ID}),
            _part(ORDERS_ID, 0, [1, 2], [1, 2], 1),
            _config("orders", "retention.ms", "3600000"),
            ("TopicRecord", 0, {"name": "plain", "topicId": PLAIN_ID}),
            _part(PLAIN_ID, 0, [2], [2], 2),
        ],
    )


OFFSETS_LINE = (
    f"Topic: __consumer_offsets\tTopicId: {OFFSETS_ID}\tPartitionCount: 2\tReplicationFactor: 2"
    "\tConfigs: compression.type=producer,cleanup.policy=compact,segment.bytes=104857600\n"
)
OFFSETS_PARTS = (
    "\tTopic: __consumer_offsets\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: \tLastKnownElr: \n"
    "\tTopic: __consumer_offsets\tPartition: 1\tLeader: 1\tReplicas: 2,1\tIsr: 1\tElr: \tLastKnownElr: \n"
)
ORDERS_LINE = (
    f"Topic: orders\tTopicId: {ORDERS_ID}\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: retention.ms=3600000\n"
)
ORDERS_PART = "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: \tLastKnownElr: \n"
PLAIN = (
    f"Topic: plain\tTopicId: {PLAIN_ID}\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
    "\tTopic: plain\tPartition: 0\tLeader: none\tReplicas: 2\tIsr: 2\tElr: \tLastKnownElr: \n"
)


def test_offline_table_holds_the_texts_rows(cli, tmp_path, monkeypatch):
    """-o table: the partitions the text lists; with --topics-with-overrides (no partition
    lines), the topics the text lists."""
    d = _log_with_internal_topic(tmp_path)
    monkeypatch.setenv("COLUMNS", "250")  # no cell wraps

    def rows(*args: str) -> list[list[str]]:
        code, out, err = cli("topics", "describe", d, "-o", "table", *args)
        assert (code, err) == (0, "")
        return [[c.strip() for c in ln.split("│")[1:-1]] for ln in out.splitlines() if ln.startswith("│")]

    assert rows("--topics-with-overrides") == [
        ["orders", ORDERS_ID, "1", "2", "retention.ms=3600000"],
        [
            "__consumer_offsets",
            OFFSETS_ID,
            "2",
            "2",
            "compression.type=producer,cleanup.policy=compact,segment.bytes=104857600",
        ],
    ]
    assert rows("--topics-with-overrides", "--exclude-internal") == [
        ["orders", ORDERS_ID, "1", "2", "retention.ms=3600000"]
    ]
    assert rows("--under-replicated-partitions") == [
        ["__consumer_offsets", "1", "1", "2,1", "1", "", "", "1", "under-replicated at-min-isr"]
    ]
    assert [r[:3] for r in rows("--exclude-internal")] == [["orders", "0", "1"], ["plain", "0", "none"]]


def test_offline_topic_id_exclude_internal_overrides_if_exists(cli, tmp_path):
    """kafka-topics' four selection options over a log with an internal topic, exact lines
    (the admin client's topic order: orders, __consumer_offsets, plain)."""
    d = _log_with_internal_topic(tmp_path)

    def out(*args: str, code: int = 0) -> str:
        c, o, e = cli("topics", "describe", d, "-o", "text", *args)
        assert c == code, e
        return o

    assert out() == ORDERS_LINE + ORDERS_PART + OFFSETS_LINE + OFFSETS_PARTS + PLAIN
    assert out("--exclude-internal") == ORDERS_LINE + ORDERS_PART + PLAIN
    # the filters see the internal topic unless it is excluded
    assert out("--under-replicated-partitions") == OFFSETS_PARTS.split("\n", 1)[1]
    assert out("--under-replicated-partitions", "--exclude-internal") == ""
    assert out("--unavailable-partitions", "--exclude-internal") == PLAIN.split("\n", 1)[1]
    # by id: that topic only, with no ELR (the admin client describes ids with Metadata)
    assert out("--topic-id", ORDERS_ID) == ORDERS_LINE + ORDERS_PART.replace(
        "Elr: \tLastKnownElr: ", "Elr: N/A\tLastKnownElr: N/A"
    )
    assert out("--topic-id", OFFSETS_ID, "--under-replicated-partitions") == (
        "\tTopic: __consumer_offsets\tPartition: 1\tLeader: 1\tReplicas: 2,1\tIsr: 1\tElr: N/A\tLastKnownElr: N/A\n"
    )
    # --topic-id wins over --topic
    assert out("--topic-id", PLAIN_ID, "--topic", "orders") == PLAIN.replace(
        "Elr: \tLastKnownElr: ", "Elr: N/A\tLastKnownElr: N/A"
    )
    # only the topic lines of topics with a non-default config
    assert out("--topics-with-overrides") == ORDERS_LINE + OFFSETS_LINE
    assert out("--topics-with-overrides", "--exclude-internal") == ORDERS_LINE
    assert out("--topics-with-overrides", "--topic", "plain") == ""
    # --if-exists: nothing selected prints nothing, exit 0
    assert out("--topic", "nosuch", "--if-exists") == ""
    assert out("--topic-id", "AAAAAAAAAAAAAAAAAAAABA", "--if-exists") == ""
    assert out("--topic", "__consumer_offsets", "--exclude-internal", "--if-exists") == ""
    assert out("--topic", "orders", "--if-exists") == ORDERS_LINE + ORDERS_PART
    # with both --topic and --topic-id, Kafka's tool says which one it uses (on stdout)
    assert out("--topic", "orders", "--topic-id", PLAIN_ID, "--if-exists") == (
        "Only topic id will be used when both --topic and --topic-id are specified and topicId is not "
        "Uuid.ZERO_UUID\n" + PLAIN.replace("Elr: \tLastKnownElr: ", "Elr: N/A\tLastKnownElr: N/A")
    )
    for args, message in (
        (["--topic-id", "AAAAAAAAAAAAAAAAAAAABA"], "TopicId 'AAAAAAAAAAAAAAAAAAAABA' does not exist as expected"),
        (
            ["--topic", "__consumer_offsets", "--exclude-internal"],
            "Topic '__consumer_offsets' does not exist as expected",
        ),
        (["--if-exists"], "--if-exists needs --topic or --topic-id"),
        (["--topics-with-overrides", "--at-min-isr-partitions"], "--topics-with-overrides cannot be used with"),
    ):
        code, o, err = cli("topics", "describe", d, *args)
        assert (code, o) == (2, "") and err.startswith(f"quorumctl: error: {message}") and err.count("\n") == 1, err
