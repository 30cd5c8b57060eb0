"""A real Kafka 4.3 cluster's own files (1 controller + 1 broker, formatted by
quorumctl at 4.2-IV1 and upgraded to 4.3-IV0 with kafka-features): topics with
configs, a cluster-wide broker config, a client quota, SCRAM users, records
with keys, a share group that consumed them, and a log dir cordoned
(KIP-1066, a 4.3-IV0 feature). Once the cluster is stopped:

- dump-log prints what 4.3's kafka-dump-log prints, byte for byte, stdout and
  stderr, on the controller's and the broker's metadata logs (decoded) and on
  the topic, consumer-offsets and share-state segments and their indexes;
- verify finds nothing wrong in either log dir;
- `image` agrees with 4.3's kafka-metadata-shell reading the controller's log:
  finalized features, topics and their partitions, configs, quotas, SCRAM
  users and the broker's cordoned log dirs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafka41 import KAFKA43_HOME, kafka_tool, skip_reason, start_cluster, until

REASON = skip_reason(KAFKA43_HOME)
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def k43(tool: str, args: list[str], tmp: Path, stdin: bytes | None = None):
    import subprocess
    from kafka41 import tool_env
    p = subprocess.run([str(KAFKA43_HOME / "bin" / f"{tool}.sh"), *args], input=stdin, capture_output=True,
                       timeout=300, env=tool_env(tmp))
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    assert p.returncode == 0, f"{tool} {' '.join(args)}: {err[-2000:]}"
    return out


@pytest.fixture(scope="module")
def c43(cli, tmp_path_factory):
    c = start_cluster(cli, tmp_path_factory, "kafka43-files", dynamic=False, controllers=1, version="4.3",
                      release_version="4.2-IV1")
    tmp, b = c.d, c.broker
    try:
        for topic, extra in (("t1", ["--partitions", "3", "--config", "retention.ms=3600000"]),
                             ("compacted", ["--partitions", "1", "--config", "cleanup.policy=compact"])):
            k43("kafka-topics", ["--bootstrap-server", b, "--create", "--topic", topic, "--replication-factor", "1",
                                 *extra], tmp)
        k43("kafka-configs", ["--bootstrap-server", b, "--alter", "--entity-type", "brokers", "--entity-default",
                              "--add-config", "log.retention.ms=7200000"], tmp)
        k43("kafka-configs", ["--bootstrap-server", b, "--alter", "--entity-type", "clients", "--entity-name", "app1",
                              "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152"], tmp)
        # one mechanism per user and request (Kafka refuses two changes to one user at once)
        for user, mech in (("alice", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]"),
                           ("bob", "SCRAM-SHA-512=[password=bob-secret]")):
            k43("kafka-configs", ["--bootstrap-server", b, "--alter", "--entity-type", "users", "--entity-name", user,
                                  "--add-config", mech], tmp)
        lines = b"".join(b"k%d:value %d \xc3\xa9\n" % (i, i) for i in range(20))
        k43("kafka-console-producer", ["--bootstrap-server", b, "--topic", "t1", "--property", "parse.key=true",
                                       "--property", "key.separator=:"], tmp, stdin=lines)
        k43("kafka-console-producer", ["--bootstrap-server", b, "--topic", "compacted", "--property", "parse.key=true",
                                       "--property", "key.separator=:"], tmp, stdin=lines)
        k43("kafka-console-share-consumer", ["--bootstrap-server", b, "--topic", "t1", "--group", "sg1",
                                             "--max-messages", "5", "--timeout-ms", "30000"], tmp)
        out = k43("kafka-features", ["--bootstrap-server", b, "upgrade", "--metadata", "4.3-IV0"], tmp)
        assert out.endswith("\nmetadata.version was upgraded to 30.\n"), out   # after 4.3's note that --metadata is deprecated
        k43("kafka-configs", ["--bootstrap-server", b, "--alter", "--entity-type", "brokers", "--entity-name",
                              str(c.n + 1), "--add-config", "cordoned.log.dirs=*"], tmp)
        # the broker registers the cordoned dir with the controller (BrokerRegistrationChangeRecord v3)
        log = c.d / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"
        until("the cordoned log dir in the controller's log", lambda: _cordoned(cli, log))
    finally:
        c.stop()
    return c


def _cordoned(cli, log: Path) -> bool:
    code, out, _ = cli("dump-log", "-o", "text", "--cluster-metadata-decoder", str(log))
    return '"cordonedLogDirs":["' in out


def _files(c, name: str, pattern: str) -> list[str]:
    return sorted(str(p) for p in (c.d / "data" / name).glob(pattern) if p.stat().st_size > 0)


def test_dump_log_equals_kafka_43(cli, c43, tmp_path):
    meta = _files(c43, "c1", "__cluster_metadata-0/*.log") + _files(c43, "b2", "__cluster_metadata-0/*.log")
    topics = (_files(c43, "b2", "t1-*/*.log") + _files(c43, "b2", "compacted-0/*.log")
              + _files(c43, "b2", "__consumer_offsets-*/*.log") + _files(c43, "b2", "__share_group_state-*/*.log"))
    indexes = _files(c43, "b2", "t1-*/*.index") + _files(c43, "b2", "t1-*/*.timeindex")
    assert len(meta) == 2 and len(topics) >= 5 and indexes
    for args, files in ((["--cluster-metadata-decoder"], meta), (["--deep-iteration", "--print-data-log"], topics),
                        ([], indexes), (["--skip-record-metadata", "--print-data-log"], topics[:3])):
        k = kafka_tool("kafka-dump-log", [*args, "--files", ",".join(files)], tmp_path, home=KAFKA43_HOME,
                       timeout=600)
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
    code, out, _ = cli("dump-log", "-o", "text", "--cluster-metadata-decoder",
                       *_files(c43, "c1", "__cluster_metadata-0/*.log"))
    assert code == 0
    assert '"name":"metadata.version","featureLevel":30}' in out
    assert '"name":"share.version","featureLevel":1}' in out
    assert '"type":"USER_SCRAM_CREDENTIAL_RECORD"' in out and '"type":"CLIENT_QUOTA_RECORD"' in out
    assert re.search(r'"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":3,.*"cordonedLogDirs":\["', out)


@pytest.mark.parametrize("node", ["c1", "b2"])
def test_verify_is_clean(cli, c43, node):
    code, out, err = cli("verify", "-o", "json", str(c43.d / "data" / node))
    assert (code, err) == (0, ""), out[-2000:]


def shell(c, *command: str, tmp: Path) -> str:
    log = c.d / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"
    return k43("kafka-metadata-shell", ["--snapshot", str(log), *command], tmp)


def test_image_equals_kafka_metadata_shell_43(cli, c43, tmp_path):
    code, out, err = cli("image", "-o", "json", str(c43.d / "data" / "c1"))
    assert (code, err) == (0, "")
    img = json.loads(out)["image"]
    # features: metadataVersion and every finalized_ level
    names = shell(c43, "ls", "/image/features", tmp=tmp_path).split()
    # the shell prints FeaturesImage.metadataVersion(), a java.util.Optional
    assert shell(c43, "cat", "/image/features/metadataVersion", tmp=tmp_path).strip() == "Optional[4.3-IV0]"
    assert img["metadataVersion"] == "4.3-IV0"
    finalized = {n.removeprefix("finalized_"): int(shell(c43, "cat", f"/image/features/{n}", tmp=tmp_path))
                 for n in names if n.startswith("finalized_")}
    assert finalized == {k: v for k, v in img["features"].items() if k != "metadata.version"}
    # topics, partitions and their configs
    assert sorted(shell(c43, "ls", "/image/topics/byName", tmp=tmp_path).split()) == sorted(img["topics"])
    for t in ("t1", "compacted"):
        parts = shell(c43, "ls", f"/image/topics/byName/{t}", tmp=tmp_path).split()
        assert sorted(p for p in parts if p.isdigit()) == sorted(img["topics"][t]["partitions"])
        assert shell(c43, "cat", f"/image/topics/byName/{t}/id", tmp=tmp_path).strip() == img["topics"][t]["id"]
    assert shell(c43, "cat", "/image/configs/TOPIC:t1/retention.ms", tmp=tmp_path).strip() == "3600000"
    assert img["configs"]["topic"]["t1"]["retention.ms"] == "3600000"
    assert shell(c43, "cat", "/image/configs/BROKER/log.retention.ms", tmp=tmp_path).strip() == "7200000"
    # quotas and SCRAM users
    assert shell(c43, "ls", "/image/clientQuotas", tmp=tmp_path).split() == ["clientId(app1)"]
    assert len(img["clientQuotas"]) == 1 and "app1" in json.dumps(img["clientQuotas"])
    scram = shell(c43, "ls", "/image/scram", tmp=tmp_path).split()
    assert sorted(scram) == ["SCRAM-SHA-256", "SCRAM-SHA-512"] and "alice" in json.dumps(img["scram"]) and "bob" in json.dumps(img["scram"])
