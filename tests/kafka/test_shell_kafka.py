"""`quorumctl shell` against the real kafka-metadata-shell and real clusters.

- On snapshots written by real Kafka 4.1, 4.3 and 4.4 clusters (topics with
  partitions and configs, a client quota, a cluster-wide broker config) and on
  snapshots of corpus clusters nobody here ran, `quorumctl shell --snapshot F CMD`
  prints byte for byte what Kafka 4.3's `kafka-metadata-shell --snapshot F CMD`
  prints: ls, cat, find and tree over topics, partitions, features, configs,
  quotas, the brokers and controllers, and paths that do not exist. Kafka's shell
  runs once per snapshot, its commands on standard input (metadata_shell.batch).
- On the 4.3 cluster's log dir: `at` a time before a topic was deleted shows it,
  `changes` names the RemoveTopicRecord that deleted it, `diff` between the two
  points lists it, and `follow` (in a pseudo-terminal, as a person runs it) sees a
  topic created after the shell started.
"""

from __future__ import annotations

import glob
import os
import shutil
import time
from pathlib import Path

import pytest

import metadata_shell
from kafka41 import KAFKA43_HOME, kafka_tool, start_cluster, until

pytestmark = pytest.mark.kafka("4.3")

SNAPSHOT_CONF = "metadata.log.max.snapshot.interval.ms=3000"

COMMANDS = [
    "ls /image",
    "ls /image/topics",
    "ls /image/topics/byName",
    "ls /image/topics/byName/orders",
    "cat /image/topics/byName/orders/0",
    "cat /image/topics/byName/orders/*",
    "cat /image/topics/byName/orders/id /image/topics/byName/orders/name",
    "tree /image/topics",
    "find /image/topics",
    "ls /image/topics/byId",
    "ls /image/features",
    "tree /image/features",
    "cat /image/features/metadataVersion",
    "ls /image/configs",
    "tree /image/configs",
    "cat /image/configs/TOPIC:orders/retention.ms",
    "find /image/configs",
    "tree /image/clientQuotas",
    "ls /image/cluster",
    "tree /image/cluster",
    "cat /image/cluster/brokers/*",
    "cat /image/cluster/controllers/*",
    "find /image/cluster",
    "cat /image/producerIds/nextProducerId",
    "cat /image/provenance",
    "tree /image",
    "find /image",
    "ls /image/nope",
    "cat /image/topics/byName/nope/0",
    "tree /image/topics/byName/orders/7",
    "find /nope",
    "cat /image/topics",
    "ls /image/features /image/producerIds /image/provenance",
    "ls /image/topics/byName/ord*",
]


def kafka_shell(snapshot: str, commands: list[str], tmp: Path, provenance: str) -> list[str]:
    def run(args, stdin):
        return kafka_tool("kafka-metadata-shell", args, tmp, timeout=600, home=KAFKA43_HOME, stdin=stdin)

    return metadata_shell.batch(run, snapshot, commands, provenance=provenance)


def ours(cli, snapshot: str, command: str) -> tuple[int, str, str]:
    return cli("shell", "--snapshot", snapshot, *command.split())


def assert_same_as_kafka(cli, snapshot: str, tmp: Path, commands: list[str]) -> None:
    code, prov, err = ours(cli, snapshot, "cat /image/provenance")
    assert (code, err) == (0, ""), err
    kafka = kafka_shell(snapshot, commands, tmp, prov.rstrip("\n"))
    differ = []
    for command, expected in zip(commands, kafka):
        code, out, err = ours(cli, snapshot, command)
        if out != expected:
            differ.append(f"{command}:\n--- kafka\n{expected[:1500]}\n--- quorumctl\n{out[:1500]}")
        missing = "no such" in expected.lower() or "is a directory" in expected.lower()
        if code != (2 if missing else 0):
            differ.append(f"{command}: exit {code} {err}")
    assert differ == [], "\n\n".join(differ)
    return kafka


def _snapshot_after(data: Path, offset_at_least: int) -> str | None:
    snaps = sorted(glob.glob(str(data / "__cluster_metadata-0" / "*.checkpoint")))
    for s in reversed(snaps):
        if int(os.path.basename(s).split("-")[0]) > offset_at_least:
            return s
    return None


@pytest.fixture(scope="module")
def c43(cli, tmp_path_factory):
    c = start_cluster(
        cli, tmp_path_factory, "shell-43", dynamic=False, controllers=1, version="4.3", extra_conf=SNAPSHOT_CONF
    )
    try:
        yield c
    finally:
        c.discard()


def _populate(c) -> None:
    b = c.broker
    for topic, extra in (
        ("orders", ["--partitions", "3", "--config", "retention.ms=3600000"]),
        ("payments", ["--partitions", "2", "--config", "cleanup.policy=compact"]),
    ):
        p = c.tool("kafka-topics", ["--bootstrap-server", b, "--create", "--topic", topic, *extra], timeout=180)
        assert p.returncode == 0, p.stderr[-2000:]
    for args in (
        ["--entity-type", "clients", "--entity-name", "app1", "--add-config", "producer_byte_rate=1048576"],
        ["--entity-type", "brokers", "--entity-default", "--add-config", "log.cleaner.threads=2"],
    ):
        p = c.tool("kafka-configs", ["--bootstrap-server", b, "--alter", *args], timeout=180)
        assert p.returncode == 0, p.stderr[-2000:]


def _snapshot_of(cli, c, tmp: Path) -> str:
    """A snapshot the controller wrote after the topics and configs: copied out of its log dir."""
    data = c.data(1)
    code, out, _ = cli("image", "-o", "json", str(data), "/topics")
    end = __import__("json").loads(out)["at"]["offset"]
    snap = until("a snapshot after the topics", lambda: _snapshot_after(data, end), 180)
    copy = tmp / os.path.basename(snap)
    shutil.copyfile(snap, copy)
    return str(copy)


@pytest.mark.parametrize("version", ["4.1", "4.3", "4.4"])
def test_shell_prints_what_kafka_prints_on_real_snapshots(cli, c43, tmp_path_factory, version):
    tmp = tmp_path_factory.mktemp(f"shell-snap-{version}")
    if version == "4.3":
        c = c43
        owned = None
    else:
        owned = c = start_cluster(
            cli,
            tmp_path_factory,
            f"shell-{version}",
            dynamic=False,
            controllers=1,
            version=version,
            extra_conf=SNAPSHOT_CONF,
        )
    try:
        if version != "4.3" or not (tmp_path_factory.getbasetemp() / "shell-43-populated").exists():
            _populate(c)
            if version == "4.3":
                (tmp_path_factory.getbasetemp() / "shell-43-populated").touch()
        snap = _snapshot_of(cli, c, tmp)
    finally:
        if owned is not None:
            owned.discard()
    kafka = assert_same_as_kafka(cli, snap, tmp, COMMANDS)
    # the comparison saw the cluster: its topics, partitions, configs, quota and registrations
    by_command = dict(zip(COMMANDS, kafka))
    assert by_command["ls /image/topics/byName/orders"] == "0\n1\n2\nid\nname\n"
    assert by_command["cat /image/configs/TOPIC:orders/retention.ms"] == "3600000\n"
    assert "clientId(app1):\n  producer_byte_rate:\n    1048576.0\n" in by_command["tree /image/clientQuotas"]
    assert by_command["cat /image/cluster/brokers/*"].startswith("BrokerRegistration(id=2, ")
    assert by_command["ls /image/nope"] == "ls: /image/nope: no such file or directory.\n"


CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
CORPUS_SNAPSHOTS = [
    "rjmfernandes__flink-on-prem/data/__cluster_metadata-0/00000000000000014926-0000000001.checkpoint",
    "gozieokafor__data-store/kafka-data/__cluster_metadata-0/00000000000000063224-0000000009.checkpoint",
    "Balaji-MohanAG__Kirana-store/_history/b74ccbec2281/kafka/data/__cluster_metadata-0/00000000000000067495-0000000016.checkpoint",
]


@pytest.mark.shared("corpus")
def test_shell_prints_what_kafka_prints_on_corpus_snapshots(cli, tmp_path):
    commands = [
        "ls /image",
        "ls /image/topics/byName",
        "tree /image/features",
        "tree /image/configs",
        "tree /image/cluster",
        "find /image/topics",
        "tree /image",
        "ls /image/topics/byName/nope",
        "cat /image/provenance",
    ]
    for rel in CORPUS_SNAPSHOTS:
        snap = tmp_path / os.path.basename(rel)
        shutil.copyfile(CORPUS / rel, snap)  # Kafka's shell locks the log dir above a file: a copy
        assert_same_as_kafka(cli, str(snap), tmp_path, commands)


# -- time travel on a real log dir --------------------------------------------------------------


def test_at_changes_diff_around_a_deleted_topic(cli, c43):
    b = c43.broker
    p = c43.tool("kafka-topics", ["--bootstrap-server", b, "--create", "--topic", "doomed", "--partitions", "2"], 180)
    assert p.returncode == 0, p.stderr[-2000:]
    time.sleep(2)
    before_delete = int(time.time() * 1000)
    time.sleep(2)
    p = c43.tool("kafka-topics", ["--bootstrap-server", b, "--delete", "--topic", "doomed"], 180)
    assert p.returncode == 0, p.stderr[-2000:]
    data = str(c43.data(1))

    def deleted():
        code, out, _ = cli("shell", data, "ls", "/image/topics/byName")
        return code == 0 and "doomed" not in out.split()

    until("the deletion in the controller's log", deleted, 60)
    when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(before_delete / 1000)) + f".{before_delete % 1000:03d}Z"
    # at a time before the delete, the topic is there with its partitions; at the end it is not
    code, out, err = cli(
        "shell", data, "-c", f"at {when}; ls /image/topics/byName/doomed; at end; ls /image/topics/byName/doomed"
    )
    lines = out.splitlines()
    assert code == 2, (out, err)  # the last ls names nothing
    assert lines[0].startswith("Image at offset ") and lines[1:4] == ["0", "1", "id"], out
    assert lines[-1] == "ls: /image/topics/byName/doomed: no such file or directory.", out
    # changes names the record that deleted it; its offset is a REMOVE_TOPIC_RECORD in dump-log's output
    code, out, err = cli("shell", data, "changes", "/image/topics/byName/doomed")
    assert (code, err) == (0, ""), err
    removal = [line for line in out.splitlines() if "REMOVE_TOPIC_RECORD /topics/doomed: removed" in line]
    assert len(removal) == 1, out
    offset = int(removal[0].split()[1])
    code, dump, _ = cli("dump-log", "--cluster-metadata-decoder", "-o", "text", data)
    assert any(f"offset: {offset} " in line and '"type":"REMOVE_TOPIC_RECORD"' in line for line in dump.splitlines()), (
        offset
    )
    # diff between the two points lists it as deleted, with its partitions
    code, out, err = cli("shell", data, "diff", when, "end")
    assert (code, err) == (0, ""), err
    assert "  topicsDeleted: 1" in out and "- /topics/doomed: removed" in out, out


def test_follow_sees_a_topic_created_after_the_shell_started(cli, c43):
    import sys

    from pty_screen import PtyRun

    data = str(c43.data(1))
    env = dict(os.environ, PROMPT_TOOLKIT_NO_CPR="1")  # pyte answers no cursor-position request
    pr = PtyRun([sys.executable, "-m", "quorumctl", "shell", data], cols=200, rows=50, env=env, stderr_on_pty=True)
    try:
        assert pr.wait_for(lambda t: t.rstrip().endswith(">>"), 120), pr.text()
        os.write(pr.master, b"follow 1\r")
        assert pr.wait_for(lambda t: "following the log, read every 1 s (Ctrl-C stops)" in t, 60), pr.text()
        p = c43.tool("kafka-topics", ["--bootstrap-server", c43.broker, "--create", "--topic", "late"], 180)
        assert p.returncode == 0, p.stderr[-2000:]
        assert pr.wait_for(lambda t: "+ /topics/late: created" in t, 90), pr.text()
        assert pr.type_ctrl_c(lambda t: t.rstrip().endswith(">>"), 10), pr.text()
        os.write(pr.master, b"ls /image/topics/byName/late\r")
        # columns at a terminal; then the prompt again: Ctrl-D typed before the line editor
        # reads keys is the terminal's end of file for a read nobody made, and is lost
        assert pr.wait_for(lambda t: "0  id  name" in t.splitlines()[-2:] and t.rstrip().endswith(">>"), 30), pr.text()
        os.write(pr.master, b"\x04")
    finally:
        code, err = pr.finish(60)
    assert code == 0, err


SESSION = [
    "help",
    "man ls",
    "man tree",
    "man history",
    "man foo",
    "cd /image/topics",
    "pwd",
    "ls",
    "ls ..",
    "ls . byName /image/provenance",
    "cd nope",
    "cd /image/provenance",
    "cd byName/orders",
    "cat name id",
    "cd ../../..",
    "pwd",
    "cd",
    "pwd",
    "ls -x",
    "ls -h",
    "foo",
    "l",
    "c",
    "ca /image/provenance",
    "history abc",
    "cat",
    "cd a b",
    "pwd extra",
    "find /image/features /image/zz",
    "ls /image/acls/byId /image/scram /image/delegationToken",
    "cat /local/version /image/nope /image/features/metadataVersion",
]


@pytest.mark.shared("corpus")
def test_a_session_prints_what_kafka_interactive_shell_prints(tmp_path):
    """Kafka's shell-only commands (cd, pwd, help, man) and its parser's errors, command by
    command in one session: Kafka's interactive shell fed on standard input, quorumctl's
    from standard input, each command followed by a marker command to split the output."""
    import subprocess
    import sys

    snap = tmp_path / os.path.basename(CORPUS_SNAPSHOTS[0])
    shutil.copyfile(CORPUS / CORPUS_SNAPSHOTS[0], snap)
    prov = subprocess.run(
        [sys.executable, "-m", "quorumctl", "shell", "--snapshot", str(snap), "cat", "/image/provenance"],
        capture_output=True,
        text=True,
    ).stdout.rstrip("\n")
    kafka = kafka_shell(str(snap), SESSION, tmp_path, prov)
    marker = "cat /MARK"
    script = "".join(f"{c}\n{marker}\n" for c in SESSION)
    p = subprocess.run(
        [sys.executable, "-m", "quorumctl", "shell", "--snapshot", str(snap)],
        input=script,
        capture_output=True,
        text=True,
    )
    ours = p.stdout.split("cat: /MARK: No such file or directory.\n")
    assert ours[-1] == "" and len(ours) == len(SESSION) + 1, p.stdout[-2000:]
    local = f"{__import__('quorumctl').__version__}\n"
    kafka = [k.replace("4.3.0\n", local) if c.startswith("cat /local/version") else k for c, k in zip(SESSION, kafka)]
    assert [(c, o) for c, o, k in zip(SESSION, ours, kafka) if o != k and not c.startswith("ls -h")] == [], "\n".join(
        f"{c}:\n{k}---\n{o}" for c, o, k in zip(SESSION, ours, kafka) if o != k
    )
    assert p.returncode == 2  # commands named nothing or were misused
