"""A real Kafka 4.3 cluster's own files (1 controller + 1 broker, formatted by
quorumctl at 4.2-IV1 and upgraded to 4.3-IV0 with kafka-features): topics with
configs, a cluster-wide broker config, a client quota, SCRAM users, records
with keys, a share group that consumed them, a streams group (KIP-1071,
streams.version 1) whose member was assigned its tasks and committed, and a log
dir cordoned (KIP-1066, a 4.3-IV0 feature). Once the cluster is stopped:

- dump-log prints what 4.3's kafka-dump-log prints, byte for byte, stdout and
  stderr, on the controller's and the broker's metadata logs (decoded) and on
  the topic, consumer-offsets and share-state segments and their indexes;
- the streams group's records are in the consumer-offsets segments, and 4.3's
  kafka-streams-groups lists it;
- verify finds nothing wrong in either log dir;
- `image` agrees with 4.3's kafka-metadata-shell reading the controller's log:
  finalized features, topics and their partitions, configs, quotas, SCRAM
  users and the broker's cordoned log dirs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from kafka41 import KAFKA43_HOME, kafka_tool, start_cluster, tool_env, until
import metadata_shell as shell

pytestmark = pytest.mark.kafka("4.3")


# Our own harness (not Kafka's code): a Kafka Streams group without the Streams library.
# The shared 4.3 has no kafka-streams jar, but the streams rebalance protocol's client
# (KIP-1071: StreamsGroupHeartbeat, the member's tasks) is in kafka-clients: Kafka
# Streams' StreamThread builds an AsyncKafkaConsumer with a StreamsRebalanceData, as
# here. One member, one subtopology reading TOPIC: it joins GROUP, polls until its tasks
# are assigned, commits what it read and leaves. Prints "assigned N" and "committed".
STREAMS_GROUP_JAVA = """\
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.internals.AsyncKafkaConsumer;
import org.apache.kafka.clients.consumer.internals.StreamsRebalanceData;
import org.apache.kafka.clients.consumer.internals.StreamsRebalanceListener;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class StreamsGroupMember {
    public static void main(String[] a) throws Exception {
        String bootstrap = a[0], group = a[1], topic = a[2];
        Map<String, Object> cfg = new HashMap<>();
        cfg.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cfg.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        cfg.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        cfg.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cfg.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        cfg.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        StreamsRebalanceData data = new StreamsRebalanceData(UUID.randomUUID(), Optional.empty(), Optional.empty(),
            Map.of("0", new StreamsRebalanceData.Subtopology(Set.of(topic), Set.of(), Map.of(), Map.of(), List.of())),
            Map.of());
        try (AsyncKafkaConsumer<byte[], byte[]> c = new AsyncKafkaConsumer<>(new ConsumerConfig(cfg),
                new ByteArrayDeserializer(), new ByteArrayDeserializer(), Optional.of(data))) {
            c.subscribe(List.of(topic), new StreamsRebalanceListener() {
                public void onTasksRevoked(Set<StreamsRebalanceData.TaskId> tasks) { }
                public void onTasksAssigned(StreamsRebalanceData.Assignment assignment) {
                    data.setReconciledAssignment(assignment);   // what Kafka Streams' listener does
                }
                public void onAllTasksLost() { }
            });
            long end = System.currentTimeMillis() + 120_000;
            int read = 0;
            while (System.currentTimeMillis() < end
                   && (data.reconciledAssignment().activeTasks().isEmpty() || read == 0)) {
                read += c.poll(Duration.ofMillis(500)).count();
            }
            System.out.println("assigned " + data.reconciledAssignment().activeTasks().size());
            c.commitSync();
            System.out.println("committed");
        }
    }
}
"""


def streams_group_member(bootstrap: str, group: str, topic: str, tmp: Path) -> str:
    """Run STREAMS_GROUP_JAVA with 4.3's jars; what it printed."""
    src = tmp / "StreamsGroupMember.java"
    src.write_text(STREAMS_GROUP_JAVA)
    java = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else "java"
    p = subprocess.run(
        [
            java,
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            f"-Dlog4j2.configurationFile={KAFKA43_HOME / 'config' / 'tools-log4j2.yaml'}",
            "-cp",
            f"{KAFKA43_HOME / 'libs'}/*",
            str(src),
            bootstrap,
            group,
            topic,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=tool_env(tmp),
        cwd=tmp,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return p.stdout


def k43(tool: str, args: list[str], tmp: Path, stdin: bytes | None = None) -> str:
    """What a Kafka 4.3 tool printed; it must succeed."""
    p = kafka_tool(tool, args, tmp, timeout=300, home=KAFKA43_HOME, stdin=stdin)
    assert p.returncode == 0, f"{tool} {' '.join(args)}: {p.stderr[-2000:]}"
    return p.stdout


@pytest.fixture(scope="module")
def c43(cli, tmp_path_factory):
    c = start_cluster(
        cli, tmp_path_factory, "kafka43-files", dynamic=False, controllers=1, version="4.3", release_version="4.2-IV1"
    )
    tmp, b = c.d, c.broker
    try:
        for topic, extra in (
            ("t1", ["--partitions", "3", "--config", "retention.ms=3600000"]),
            ("compacted", ["--partitions", "1", "--config", "cleanup.policy=compact"]),
        ):
            k43(
                "kafka-topics",
                ["--bootstrap-server", b, "--create", "--topic", topic, "--replication-factor", "1", *extra],
                tmp,
            )
        k43(
            "kafka-configs",
            [
                "--bootstrap-server",
                b,
                "--alter",
                "--entity-type",
                "brokers",
                "--entity-default",
                "--add-config",
                "log.retention.ms=7200000",
            ],
            tmp,
        )
        k43(
            "kafka-configs",
            [
                "--bootstrap-server",
                b,
                "--alter",
                "--entity-type",
                "clients",
                "--entity-name",
                "app1",
                "--add-config",
                "producer_byte_rate=1048576,consumer_byte_rate=2097152",
            ],
            tmp,
        )
        # one mechanism per user and request (Kafka refuses two changes to one user at once)
        for user, mech in (
            ("alice", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]"),
            ("bob", "SCRAM-SHA-512=[password=bob-secret]"),
        ):
            k43(
                "kafka-configs",
                [
                    "--bootstrap-server",
                    b,
                    "--alter",
                    "--entity-type",
                    "users",
                    "--entity-name",
                    user,
                    "--add-config",
                    mech,
                ],
                tmp,
            )
        lines = b"".join(b"k%d:value %d \xc3\xa9\n" % (i, i) for i in range(20))
        k43(
            "kafka-console-producer",
            ["--bootstrap-server", b, "--topic", "t1", "--property", "parse.key=true", "--property", "key.separator=:"],
            tmp,
            stdin=lines,
        )
        k43(
            "kafka-console-producer",
            [
                "--bootstrap-server",
                b,
                "--topic",
                "compacted",
                "--property",
                "parse.key=true",
                "--property",
                "key.separator=:",
            ],
            tmp,
            stdin=lines,
        )
        k43(
            "kafka-console-share-consumer",
            [
                "--bootstrap-server",
                b,
                "--topic",
                "t1",
                "--group",
                "sg1",
                "--max-messages",
                "5",
                "--timeout-ms",
                "30000",
            ],
            tmp,
        )
        out = k43("kafka-features", ["--bootstrap-server", b, "upgrade", "--metadata", "4.3-IV0"], tmp)
        assert out.endswith("\nmetadata.version was upgraded to 30.\n"), (
            out
        )  # after 4.3's note that --metadata is deprecated
        # Kafka's own verdicts on two changes it refuses, for the offline check of these files
        c.kafka_refusals = {}
        for op, version in (("downgrade", "4.2-IV1"), ("upgrade", "4.4-IV0")):
            p = kafka_tool(
                "kafka-features",
                ["--bootstrap-server", b, op, "--metadata", version, "--dry-run"],
                tmp,
                timeout=300,
                home=KAFKA43_HOME,
            )
            assert p.returncode == 1, p.stdout + p.stderr
            c.kafka_refusals[op] = [ln for ln in p.stdout.splitlines() if ln.startswith("Can not ")]
        # a streams group (streams.version 1 at 4.3-IV0): joined, its tasks assigned, offsets committed
        out = streams_group_member(b, "streams1", "t1", tmp)
        assert out == "assigned 3\ncommitted\n", out
        c.streams_groups = k43("kafka-streams-groups", ["--bootstrap-server", b, "--list"], tmp)
        k43(
            "kafka-configs",
            [
                "--bootstrap-server",
                b,
                "--alter",
                "--entity-type",
                "brokers",
                "--entity-name",
                str(c.n + 1),
                "--add-config",
                "cordoned.log.dirs=*",
            ],
            tmp,
        )
        # the broker registers the cordoned dir with the controller (BrokerRegistrationChangeRecord v3)
        log = c.d / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"
        until("the cordoned log dir in the controller's log", lambda: _cordoned(cli, log))
    finally:
        c.stop()
    return c


def _cordoned(cli, log: Path) -> bool:
    # a live log: any exit status; only whether a record it read so far says so matters
    out = cli("dump-log", "-o", "text", "--cluster-metadata-decoder", str(log)).out
    return '"cordonedLogDirs":["' in out


def _files(c, name: str, pattern: str) -> list[str]:
    return sorted(str(p) for p in (c.d / "data" / name).glob(pattern) if p.stat().st_size > 0)


def test_dump_log_equals_kafka_43(cli, c43, tmp_path):
    meta = _files(c43, "c1", "__cluster_metadata-0/*.log") + _files(c43, "b2", "__cluster_metadata-0/*.log")
    topics = (
        _files(c43, "b2", "t1-*/*.log")
        + _files(c43, "b2", "compacted-0/*.log")
        + _files(c43, "b2", "__consumer_offsets-*/*.log")
        + _files(c43, "b2", "__share_group_state-*/*.log")
    )
    indexes = _files(c43, "b2", "t1-*/*.index") + _files(c43, "b2", "t1-*/*.timeindex")
    assert len(meta) == 2 and len(topics) >= 5 and indexes
    for args, files in (
        (["--cluster-metadata-decoder"], meta),
        (["--deep-iteration", "--print-data-log"], topics),
        ([], indexes),
        (["--skip-record-metadata", "--print-data-log"], topics[:3]),
    ):
        k = kafka_tool("kafka-dump-log", [*args, "--files", ",".join(files)], tmp_path, home=KAFKA43_HOME, timeout=600)
        assert k.returncode == 0, k.stderr[-2000:]
        code, out, err = cli("dump-log", "-o", "text", *args, "--files", ",".join(files))
        assert out == k.stdout, _first_difference(k.stdout, out)
        assert err == k.stderr, _first_difference(k.stderr, err)
        assert code == 0


def _first_difference(a: str, b: str) -> str:
    for i, (x, y) in enumerate(zip(a.split("\n"), b.split("\n"))):
        if x != y:
            return f"line {i + 1}:\n kafka: {x[:400]}\n ours:  {y[:400]}"
    return f"lengths differ: kafka {a.count(chr(10))} lines, ours {b.count(chr(10))}"


def test_the_4_3_records_are_there(cli, c43):
    # what makes these files 4.3's: the upgrade, the share group, SCRAM and the cordoned dir
    code, out, _ = cli(
        "dump-log", "-o", "text", "--cluster-metadata-decoder", *_files(c43, "c1", "__cluster_metadata-0/*.log")
    )
    assert code == 0
    assert '"name":"metadata.version","featureLevel":30}' in out
    assert '"name":"share.version","featureLevel":1}' in out
    assert '"type":"USER_SCRAM_CREDENTIAL_RECORD"' in out and '"type":"CLIENT_QUOTA_RECORD"' in out
    assert re.search(r'"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":3,.*"cordonedLogDirs":\["', out)


def test_the_streams_group_is_there(cli, c43):
    """Kafka 4.3 lists the streams group, and its records (the group's metadata and
    topology, its member, its target assignment, its committed offsets) are in the
    consumer-offsets segments that test_dump_log_equals_kafka_43 compares."""
    assert c43.streams_groups.split() == ["streams1"], c43.streams_groups
    code, out, _ = cli(
        "dump-log",
        "-o",
        "text",
        "--deep-iteration",
        "--print-data-log",
        *_files(c43, "b2", "__consumer_offsets-*/*.log"),
    )
    assert code == 0
    # the record keys (coordinator-key api keys of group-coordinator's message specs), the group id
    # after its length: StreamsGroupMetadata 17, -MemberMetadata 19, -TargetAssignmentMetadata 20,
    # -TargetAssignmentMember 21, -CurrentMemberAssignment 22, -Topology 23
    keys = {ord(m.group(1)) for m in re.finditer("key: \x00([\x11-\x17])\x00\x08streams1", out)}
    assert keys == {17, 19, 20, 21, 22, 23}, (keys, out[-3000:])


@pytest.mark.parametrize("node", ["c1", "b2"])
def test_verify_is_clean(cli, c43, node):
    code, out, err = cli("verify", "-o", "json", str(c43.d / "data" / node))
    assert (code, err) == (0, ""), out[-2000:]


def shell_tree(c, end: int, tmp: Path) -> dict:
    """4.3's metadata shell `tree /image` of the controller's log, as nested dicts.
    The shell may run its command before its loader has published the last
    batch (each JVM is a new race): asked again until its provenance says the
    image is at the log's end."""
    log = c.d / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"

    def once():
        t = shell.tree(k43("kafka-metadata-shell", ["--snapshot", str(log), "tree", "/image"], tmp))
        return t if next(iter(t["provenance"])).startswith(f"offset {end},") else None

    return until("the metadata shell's image at the log's end", once, 180)


def test_image_equals_kafka_metadata_shell_43(cli, c43, tmp_path):
    code, out, err = cli("image", "-o", "json", str(c43.d / "data" / "c1"))
    assert (code, err) == (0, "")
    doc = json.loads(out)
    img = doc["image"]
    tree = shell_tree(c43, doc["at"]["offset"], tmp_path)
    # features, topics, every config and every registration field, as tests/kafka/test_kafka44.py compares 4.4's
    shell.assert_image_equals_shell(img, tree)
    assert shell.value(tree["features"]["metadataVersion"]) == "Optional[4.3-IV0]"
    assert "" in img["configs"]["broker"]  # the cluster default (BROKER) compared too
    assert img["configs"]["broker"][str(c43.n + 1)] == {"cordoned.log.dirs": "*"}
    # quotas, SCRAM users and the broker's cordoned log dirs
    quotas = {k: {q: float(shell.value(v)) for q, v in node.items()} for k, node in tree["clientQuotas"].items()}
    assert quotas == {"clientId(app1)": {"consumer_byte_rate": 2097152.0, "producer_byte_rate": 1048576.0}}
    assert img["clientQuotas"] == {"client-id=app1": quotas["clientId(app1)"]}
    assert {m: sorted(users) for m, users in tree["scram"].items()} == {
        "SCRAM-SHA-256": ["alice"],
        "SCRAM-SHA-512": ["bob"],
    }
    assert {m: sorted(users) for m, users in img["scram"].items()} == {
        "SCRAM-SHA-256": ["alice"],
        "SCRAM-SHA-512": ["bob"],
    }
    broker = img["brokers"][str(c43.n + 1)]
    reg = shell.value(tree["cluster"]["brokers"][str(c43.n + 1)])
    assert broker["cordonedDirectories"] == broker["directories"] and len(broker["directories"]) == 1
    assert f"cordonedDirectories=[{broker['directories'][0]}]" in reg and f"epoch={broker['epoch']}," in reg


def test_features_offline_gives_kafkas_verdicts(cli, c43):
    """features downgrade/upgrade on the controller's log dir (the cluster stopped) gives the
    lines Kafka 4.3's own dry runs gave on the live cluster: metadata.version 4.3-IV0 changed
    the metadata, so going back to 4.2-IV1 is refused; 4.4-IV0 is beyond every registration
    (the nodes run without unstable versions), the active controller 1 first."""
    log = str(c43.d / "data" / "c1")
    code, out, err = cli("features", "downgrade", log, "--metadata", "4.2-IV1", "-o", "json")
    doc = json.loads(out)
    assert (code, err, doc["blockers"]) == (1, "", [])
    assert (
        doc["verdict"]["lines"]
        == c43.kafka_refusals["downgrade"]
        == [
            "Can not downgrade metadata.version to 29. The update failed for all features since the following feature "
            "had an error: Unsupported metadata.version downgrade from 30 to 29. Refusing to perform the requested "
            "downgrade because it might delete metadata information."
        ]
    )
    code, out, err = cli("features", "upgrade", log, "--metadata", "4.4-IV0", "-o", "json")
    doc = json.loads(out)
    assert (code, err) == (1, "")
    assert [(b["kind"], b["id"], b["reason"]) for b in doc["blockers"]] == [
        ("broker", 2, "Broker 2 only supports versions 7-30"),
        ("controller", 1, "Controller 1 only supports versions 7-30"),
    ]
    assert doc["verdict"]["lines"] == c43.kafka_refusals["upgrade"], (doc["verdict"], c43.kafka_refusals)
    code, out, _ = cli("features", "upgrade", log, "--metadata", "4.3-IV0", "-o", "json")
    assert code == 0 and json.loads(out)["verdict"]["lines"] == ["metadata.version can be upgraded to 30."]
