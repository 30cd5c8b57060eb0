"""`quorumctl recover` against a real Kafka dynamic (KIP-853) quorum, of 4.1.0 and of
the 4.4 branch (its dirs in 4.4's layout: `bootstrap format --kafka-version 4.4`, no
bootstrap.checkpoint, a controller's bootstrap records in its zero snapshot):
3 controllers + 1 broker, topics created through the broker; the two
controllers that are not the leader are killed and their log dirs deleted
(the majority is lost for good), the leader is killed too; `recover --apply`
makes it the only voter; real Kafka starts it, it leads, the topics are what
they were and the broker serves; two controllers formatted afresh are added
back with `quorumctl add-controller` and `describe status` shows three voters
whose end offsets meet. The refusals are checked on the same real files.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil

import pytest

from kafka41 import RELEASE_VERSION, kafka_tool, start_cluster, until

VERSIONS = [pytest.param(v, marks=pytest.mark.kafka(v), id=f"kafka{v}") for v in ("4.1", "4.4")]
# 4.4's layout (bootstrap records in the zero snapshot, no bootstrap.checkpoint), as 4.4's kafka-storage writes
KAFKA_VERSION = {"4.4": ("--kafka-version", "4.4")}
ZERO_SNAPSHOT = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"


def printed_commands(out: str, *steps: str) -> list[str]:
    """The `commands` of recover's numbered next steps that start with `steps`, in order."""
    lines = [ln.split(". ", 1)[1] for ln in out.splitlines() if re.match(r"^    \d+\. ", ln)]
    return [cmd for st in steps for ln in lines if ln.startswith(st) for cmd in re.findall(r"`([^`]+)`", ln)]


def release(c) -> list[str]:
    """`bootstrap format` options for a node of the cluster's release, as its kafka-storage formats."""
    return ["--release-version", RELEASE_VERSION[c.version], *KAFKA_VERSION.get(c.version, ())]


def status(cli, addr: str) -> dict | None:
    code, out, err = cli("describe", "status", "--bootstrap-controller", addr, "-o", "json")
    return json.loads(out) if code == 0 else None


def leader_of(doc: dict | None) -> int | None:
    return doc.get("leaderId") if doc else None


def voters_of(doc: dict | None) -> list[int]:
    return sorted(v["id"] for v in doc["currentVoters"]) if doc else []


def broker_dir(c) -> str:
    """The broker's metadata log dir: recover reads it (the broker may keep running, as
    nothing is written to it when its log is a prefix of the survivor's)."""
    return str(c.d / "data" / f"b{c.n + 1}")


def topics_described(c, tmp) -> list[str]:
    p = kafka_tool(
        "kafka-topics", ["--bootstrap-server", c.broker, "--describe", "--exclude-internal"], tmp, home=c.home
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return sorted(line for line in p.stdout.splitlines() if line.strip())


@pytest.fixture
def cluster(cli, tmp_path_factory, request):
    c = start_cluster(
        cli,
        tmp_path_factory,
        f"kafka-recover-{request.param}",
        dynamic=True,
        version=request.param,
        format_args=KAFKA_VERSION.get(request.param, ()),
        start_timeout=300,
    )
    try:
        yield c
    finally:
        c.discard()


@pytest.mark.parametrize("cluster", VERSIONS, indirect=True)
def test_recover_dynamic_quorum_after_losing_two_of_three(cli, cluster, tmp_path):
    c = cluster
    for topic, parts in (("orders", 3), ("audit", 1)):
        p = kafka_tool(
            "kafka-topics",
            ["--bootstrap-server", c.broker, "--create", "--topic", topic, "--partitions", str(parts)],
            tmp_path,
            home=c.home,
        )
        assert p.returncode == 0, p.stderr[-2000:]
    before = topics_described(c, tmp_path)
    assert sum(1 for line in before if line.startswith("Topic: orders\tTopicId")) == 1
    assert len([x for x in before if "\tPartition: " in x]) == 4

    doc = until("a leader", lambda: status(cli, c.controllers[0]) if leader_of(status(cli, c.controllers[0])) else None)
    leader = leader_of(doc)
    lost = [i for i in (1, 2, 3) if i != leader]
    data = {i: c.d / "data" / f"c{i}" for i in (1, 2, 3)}
    confs = [c.d / "conf" / f"{n}.properties" for n in ("c1", "c2", "c3", "b4")]

    # doctor: the healthy real cluster, its files and the live quorum, gives no finding
    code, out, err = cli("doctor", *[a for f in confs for a in ("-c", f)], "--bootstrap-controller", c.controllers[0])
    assert (code, err) == (0, ""), out
    assert out.endswith("No findings.\n") and out.startswith("Read 4 config(s), 4 log dir(s); voter set [1, 2, 3]")
    # bundle of the live cluster: describe through the real quorum, state/verify of the real logs
    code, out, err = cli(
        "bundle",
        "--out",
        tmp_path / "live.tar.gz",
        *[a for f in confs for a in ("-c", f)],
        "--bootstrap-controller",
        c.controllers[0],
        "--timeout",
        "10",
    )
    assert (code, err) == (0, "") and "note:" not in out, out
    import tarfile

    with tarfile.open(tmp_path / "live.tar.gz") as tar:
        got = {m.name.split("/", 1)[1]: tar.extractfile(m).read().decode() for m in tar.getmembers()}
    assert re.search(rf"^LeaderId:\s+{leader}$", got["describe-status.txt"], re.M)
    assert got["state.txt"].count("Replica node ") == 4 and got["verify.txt"].endswith(": OK\n\n[exit 0]\n")

    # refused while the "lost" voters answer (the whole quorum runs): they are followers of the leader
    code, out, err = cli(
        "recover", data[leader], "--replica", broker_dir(c), "--lost-voters", ",".join(map(str, lost)), "--apply"
    )
    assert code == 1 and err == "", (out, err)
    assert re.search(
        rf"refused: voter {lost[0]} at 127\.0\.0\.1:\d+: answers as a controller following leader "
        rf"{leader}( in epoch \d+)? of cluster {c.cluster_id}: it is alive",
        out,
    ), out

    for i in lost:
        c.run("kill-node", str(i))
    # refused while Kafka holds the survivor's lock (nothing changes)
    code, out, err = cli(
        "recover", data[leader], "--replica", broker_dir(c), "--lost-voters", ",".join(map(str, lost)), "--apply"
    )
    assert code == 1 and "Failed to acquire lock on file .lock in" in err and str(data[leader]) in err, (out, err)
    code, out, err = cli("recover", data[leader], "--replica", broker_dir(c), "--lost-voters", ",".join(map(str, lost)))
    assert code == 0 and "note: process " in out and "holds" in out and "--apply will refuse" in out, out

    c.run("kill-node", str(leader))
    # refused: two of three survive (the quorum still has a majority)
    code, out, err = cli(
        "recover", data[leader], data[lost[0]], "--replica", broker_dir(c), "--lost-voters", str(lost[1])
    )
    assert code == 1 and "refused: the quorum still has a majority: 2 of 3 voters" in out, out
    # refused: a voter neither given nor declared lost
    code, out, err = cli("recover", data[leader], "--replica", broker_dir(c), "--lost-voters", str(lost[0]))
    assert code == 1 and f"refused: voter(s) [{lost[1]}] are neither given (log dir) nor declared lost" in out, out
    # two of three given (one a copy cut back by 1 batch): still a majority, whichever survives
    behind = tmp_path / "behind"
    shutil.copytree(data[lost[0]], behind)
    st = json.loads(cli("state", behind, "-o", "json")[1])["replicas"][0]
    code, out, err = cli(
        "truncate",
        behind,
        "--to-offset",
        str(st["log_end_offset"] - 1),
        "--apply",
        "--force",
        "--backup-dir",
        tmp_path / "bk",
    )
    assert code == 0, (out, err)
    code, out, err = cli(
        "recover",
        data[leader],
        behind,
        "--replica",
        broker_dir(c),
        "--survivor",
        str(lost[0]),
        "--lost-voters",
        str(lost[1]),
    )
    assert code == 1 and "refused: the quorum still has a majority: 2 of 3 voters" in out, out

    doctor_finds_real_misconfigurations(cli, c, tmp_path / "doctor")

    for i in lost:  # the disks are gone for good
        shutil.rmtree(data[i])

    code, out, err = cli(
        "recover", data[leader], "--replica", broker_dir(c), "--lost-voters", ",".join(map(str, lost)), "--apply"
    )
    assert (code, err) == (0, ""), out
    assert f"voters: [1, 2, 3] -> [{leader}] (lost: {lost})" in out
    assert "VotersRecord with only node %d" % leader in out and "applied; replaced files kept in" in out
    recovered = out
    code, out, err = cli("verify", data[leader])
    assert code == 0, out + err
    # the survivor's own log is the base: its zero snapshot (the initial voters; on 4.4 also
    # the bootstrap records) is kept
    assert (data[leader] / ZERO_SNAPSHOT).exists()

    # the next steps' commands, as printed: the survivor's address, the cluster id and its
    # metadata.version filled in; a lost controller's server.properties is said in words, last
    addr = c.controllers[leader - 1]
    check, fmt, add_cmd = printed_commands(recovered, "start node ", "for each lost controller ")
    assert check == f"quorumctl describe status --bootstrap-controller {addr}"
    assert fmt == (
        f"quorumctl bootstrap format -t {c.cluster_id} --release-version {RELEASE_VERSION[c.version]} "
        "--no-initial-controllers --apply -c"
    )
    assert add_cmd == f"quorumctl add-controller --bootstrap-controller {addr} --command-config"
    assert f"for each lost controller ({', '.join(map(str, lost))}), on its host: " in recovered

    # real Kafka: the survivor starts as the only voter and leads (the printed check, run as printed)
    c.start_node(leader, check=True)

    def leads():
        code, o, _ = cli(*shlex.split(check)[1:], "-o", "json")
        return json.loads(o) if code == 0 and leader_of(json.loads(o)) == leader else None

    doc = until("the survivor leads alone", leads)
    assert voters_of(doc) == [leader]
    # the broker serves again: the topics are unchanged, and a new one can be created
    assert until("the broker answers", lambda: topics_described(c, tmp_path) == before or None, 120)
    p = kafka_tool(
        "kafka-topics",
        ["--bootstrap-server", c.broker, "--create", "--topic", "after-recovery", "--partitions", "2"],
        tmp_path,
        home=c.home,
    )
    assert p.returncode == 0, p.stderr[-2000:]

    # grow back: fresh controllers formatted as observers, added with quorumctl add-controller:
    # the printed commands, each followed by the node's server.properties (the value said in words)
    for i in lost:
        conf = c.d / "conf" / f"c{i}.properties"
        code, out, err = cli(*shlex.split(fmt)[1:], conf)
        assert code == 0, err
        c.start_node(i, check=True)

        def add():
            code, out, err = cli(*shlex.split(add_cmd)[1:], conf)
            if code == 0:
                return out
            assert code == 1, err
            return None

        out = until(f"add-controller {i} accepted", add, 120)
        assert out.startswith(f"Added controller {i} with directory id ")
        until(f"controller {i} is a voter", lambda: i in voters_of(status(cli, addr)))

    def caught_up():
        d = status(cli, addr)
        if voters_of(d) != [1, 2, 3]:
            return None
        code, out, err = cli("describe", "replication", "--bootstrap-controller", addr, "-o", "json")
        if code != 0:
            return None  # not answering yet
        rows = [r for r in json.loads(out)["replicas"] if r["status"] in ("Leader", "Follower")]
        ends = {r["nodeId"]: r["logEndOffset"] for r in rows}
        return ends if sorted(ends) == [1, 2, 3] and len(set(ends.values())) == 1 else None

    ends = until("three voters with equal end offsets", caught_up, 120)
    assert len(set(ends.values())) == 1
    theirs = kafka_tool(
        "kafka-metadata-quorum", ["--bootstrap-controller", addr, "describe", "--status"], tmp_path, home=c.home
    )
    assert theirs.returncode == 0
    assert re.search(rf"^LeaderId:\s+{leader}$", theirs.stdout, re.M)
    assert sorted(
        int(x) for x in re.findall(r'\{"id": (\d+)', theirs.stdout.split("CurrentVoters:")[1].split("\n")[0])
    ) == [1, 2, 3]
    code, out, err = cli("doctor", *[a for f in confs for a in ("-c", f)], "--bootstrap-controller", addr)
    assert (code, out.splitlines()[-1]) == (0, "No findings."), out
    after = topics_described(c, tmp_path)
    assert set(before) <= set(after) and sum(1 for x in after if x.startswith("Topic: after-recovery\t")) == 1

    c.stop()
    doctor_finds_voter_changes_not_replicated(cli, c, leader, lost, tmp_path / "doctor-voters")


def doctor_finds_voter_changes_not_replicated(cli, c, leader, lost, root):
    """The real log's last VotersRecord (add-controller of lost[1]) cut from the
    followers' copies: cut from one, a majority still holds it (voter-set-differs);
    cut from both, only the leader holds it (uncommitted-voter-change)."""
    from quorumctl.raft.replica import load_replica

    d, confs = copies(c, root / "probe")
    r = load_replica(str(d / "data" / f"c{leader}"))
    assert r.voters["ids"] == [1, 2, 3] and r.voters["source"].startswith("log offset "), r.voters
    x = int(r.voters["source"].split()[-1])
    prev = sorted([leader, lost[0]])

    def cut(d, i):
        code, out, err = cli(
            "truncate", d / "data" / f"c{i}", "--to-offset", str(x), "--apply", "--force", "--backup-dir", d / f"bk{i}"
        )
        assert code == 0, (out, err)

    d, confs = copies(c, root / "one-behind")
    cut(d, lost[1])
    (f,) = run_doctor(cli, confs)
    assert (f["code"], f["severity"]) == ("voter-set-differs", "warning")
    # the leader's and lost[0]'s logs are equal now: either is "the most up-to-date"
    m = re.match(
        rf"node {lost[1]}'s log holds voters \[(\d), (\d)\], the most up-to-date log \(node (\d)\) "
        r"\[1, 2, 3\]: a voter change not yet replicated to it, or not committed$",
        f["message"],
    )
    assert m and sorted(map(int, m.group(1, 2))) == prev and int(m.group(3)) in prev, f["message"]
    assert f["evidence"][0].startswith(f"{d / 'data' / f'c{lost[1]}' / '__cluster_metadata-0'}: ")

    d, confs = copies(c, root / "two-behind")
    cut(d, lost[0])
    cut(d, lost[1])
    (f,) = run_doctor(cli, confs)
    assert (f["code"], f["severity"]) == ("uncommitted-voter-change", "error")
    assert f["message"] == (
        f"node {leader}'s log holds a voter change at offset {x} (voters {prev} -> [1, 2, 3]) "
        f"that only node(s) [{leader}] hold: fewer than a majority of either voter set, so it is "
        "uncommitted; the next leader elected without it drops it"
    )
    pdir = d / "data" / f"c{leader}" / "__cluster_metadata-0"
    assert f["evidence"][0] == f"{pdir}@{x}: VotersRecord voters [1, 2, 3]"
    assert [e.split(":")[0] for e in f["evidence"][1:]] == [
        str(d / "data" / f"c{i}" / "__cluster_metadata-0") for i in sorted(lost)
    ]
    assert all(": log ends at offset " in e for e in f["evidence"][1:])
    assert "add-controller/remove-controller again" in f["remedy"]


def copies(c, d):
    """Copies of the stopped cluster's controllers: their log dirs under d/data and
    their configs (d/cN.properties) pointed at the copies."""
    confs = {}
    for n in ("c1", "c2", "c3"):
        shutil.copytree(c.d / "data" / n, d / "data" / n)
        text = (c.d / "conf" / f"{n}.properties").read_text().replace(str(c.d / "data"), str(d / "data"))
        confs[n] = d / f"{n}.properties"
        confs[n].write_text(text)
    return d, confs


def run_doctor(cli, confs, *args):
    """doctor's JSON findings for the configs (exit 1 exactly when there are some)."""
    code, out, err = cli("doctor", *[a for f in confs.values() for a in ("-c", f)], *args, "-o", "json")
    assert err == ""
    doc = json.loads(out)
    assert code == (1 if doc["findings"] else 0), out
    return doc["findings"]


def line_of(path, key) -> int:
    return 1 + next(i for i, ln in enumerate(path.read_text().splitlines()) if ln.startswith(key + "="))


def doctor_finds_real_misconfigurations(cli, c, root):
    """Each finding class from a real misconfiguration of the stopped cluster's real
    files (copies: the nodes' configs pointed at copied log dirs)."""

    def setup(name):
        return copies(c, root / name)

    def doctor(confs):
        return run_doctor(cli, confs)

    d, confs = setup("healthy")
    assert doctor(confs) == []

    # a reformatted disk: node 3's log dir wiped and formatted again (a new directory.id)
    d, confs = setup("reformatted")
    old_dir = next(
        x.split("=", 1)[1]
        for x in (d / "data" / "c3" / "meta.properties").read_text().splitlines()
        if x.startswith("directory.id=")
    )
    shutil.rmtree(d / "data" / "c3")
    code, out, err = cli(
        "bootstrap",
        "format",
        "-c",
        confs["c3"],
        "-t",
        c.cluster_id,
        "--no-initial-controllers",
        *release(c),
        "--apply",
    )
    assert code == 0, err
    (f,) = doctor(confs)
    new_dir = next(
        x.split("=", 1)[1]
        for x in (d / "data" / "c3" / "meta.properties").read_text().splitlines()
        if x.startswith("directory.id=")
    )
    assert (f["code"], f["severity"]) == ("directory-id-not-in-voter-set", "error")
    assert f"has directory.id {new_dir}, but the voter set holds node 3 with directory id {old_dir}" in f["message"]
    assert f["evidence"][0].startswith(f"{d / 'data' / 'c3' / 'meta.properties'}:") and new_dir in f["evidence"][0]
    # the voters' stored endpoints in place of an address to fill in
    assert f["remedy"] == (
        f"with the node running on it: quorumctl replace-controller 3 --bootstrap-controller {','.join(c.controllers)} "
        "(RemoveRaftVoter of the old directory id, then AddRaftVoter of this one; docs/membership.md)"
    )

    # formatted with the wrong cluster id
    d, confs = setup("wrong-cluster")
    shutil.rmtree(d / "data" / "c3")
    assert (
        cli(
            "bootstrap",
            "format",
            "-c",
            confs["c3"],
            "-t",
            "MkU3OEVBNTcwNTJENDM2Qg",
            "--no-initial-controllers",
            *release(c),
            "--apply",
        )[0]
        == 0
    )
    codes = sorted(f["code"] for f in doctor(confs))
    assert codes == ["cluster-id-mismatch", "directory-id-not-in-voter-set"]

    # a static config on dynamic storage
    d, confs = setup("static-config")
    text = confs["c2"].read_text()
    voters = ",".join(f"{i}@{a}" for i, a in enumerate(c.controllers, 1))
    confs["c2"].write_text(
        "\n".join(
            ln if not ln.startswith("controller.quorum.bootstrap.servers=") else f"controller.quorum.voters={voters}"
            for ln in text.splitlines()
        )
        + "\n"
    )
    (f,) = doctor(confs)
    assert (f["code"], f["severity"]) == ("static-config-on-dynamic-storage", "warning")
    line = 1 + next(
        i for i, ln in enumerate(confs["c2"].read_text().splitlines()) if ln.startswith("controller.quorum.voters=")
    )
    assert f["evidence"][0] == f"{confs['c2']}:{line}: controller.quorum.voters={voters}"

    # a controller moved to another port: the voter set's endpoint is stale
    d, confs = setup("moved")
    port = c.base + 1
    confs["c1"].write_text(confs["c1"].read_text().replace(f"127.0.0.1:{port}\n", f"127.0.0.1:{port + 50}\n"))
    (f,) = doctor(confs)
    assert f["code"] == "stale-voter-endpoint"
    assert f["message"].startswith(
        f"node 1 advertises CONTROLLER://127.0.0.1:{port + 50}, but the voter set holds CONTROLLER://127.0.0.1:{port}"
    )

    # a config pointed at another node's log dir
    d, confs = setup("swapped")
    confs["c2"].write_text(confs["c2"].read_text().replace(str(d / "data" / "c2"), str(d / "data" / "c1")))
    codes = sorted(f["code"] for f in doctor(confs))
    assert codes == ["log-dir-shared", "node-id-mismatch"]


# -- static quorum: the survivor's configuration changes too ---------------------------------


class Node:
    """A Kafka JVM started here from a config of ours (the cluster script rewrites its
    own configs from its layout at every start, and its layout is the old static one)."""

    def __init__(self, c, name: str, conf):
        import os
        import subprocess

        env = dict(os.environ)
        env.update(
            LOG_DIR=str(c.d / "logs"),
            KAFKA_HEAP_OPTS="-Xmx256m -Xms64m",
            KAFKA_LOG4J_OPTS=f"-Dlog4j2.configurationFile={c.d / 'conf' / (name + '.log4j2.yaml')}",
        )
        for k in ("JMX_PORT", "KAFKA_DEBUG", "KAFKA_OPTS"):
            env.pop(k, None)
        self.out = open(c.d / "logs" / f"{name}.recover.out", "ab")
        # kafka-server-start.sh execs java: this pid is the JVM's
        self.p = subprocess.Popen(
            [str(c.home / "bin" / "kafka-server-start.sh"), str(conf)],
            env=env,
            stdout=self.out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def stop(self, grace: float = 30):
        import subprocess

        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(grace)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(30)
        self.out.close()


def with_quorum(conf_text: str, **keys) -> str:
    lines = [ln for ln in conf_text.splitlines() if ln.split("=", 1)[0] not in keys]
    return "\n".join(lines + [f"{k.replace('_', '.')}={v}" for k, v in keys.items()]) + "\n"


@pytest.fixture
def static_cluster(cli, tmp_path_factory, request):
    c = start_cluster(
        cli,
        tmp_path_factory,
        f"kafka-recover-static-{request.param}",
        dynamic=False,
        version=request.param,
        format_args=KAFKA_VERSION.get(request.param, ()),
        start_timeout=300,
    )
    c.nodes = []
    try:
        yield c
    finally:
        for n in c.nodes:
            n.stop(grace=1)  # teardown: nothing reads these files again
        c.discard()


@pytest.mark.parametrize("static_cluster", VERSIONS, indirect=True)
def test_recover_static_quorum_after_losing_two_of_three(cli, static_cluster, tmp_path):
    c = static_cluster
    p = kafka_tool(
        "kafka-topics",
        ["--bootstrap-server", c.broker, "--create", "--topic", "orders", "--partitions", "3"],
        tmp_path,
        home=c.home,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    before = topics_described(c, tmp_path)
    leader = leader_of(
        until("a leader", lambda: (lambda d: d if leader_of(d) else None)(status(cli, c.controllers[0])))
    )
    lost = [i for i in (1, 2, 3) if i != leader]
    data = {i: c.d / "data" / f"c{i}" for i in (1, 2, 3)}
    conf = c.d / "conf" / f"c{leader}.properties"

    # doctor: the healthy static cluster, files and live quorum, gives no finding; files of another cluster do
    confs = {n: c.d / "conf" / f"{n}.properties" for n in ("c1", "c2", "c3", "b4")}
    assert run_doctor(cli, confs, "--bootstrap-controller", c.controllers[0]) == []
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.properties").write_text(
        (c.d / "conf" / "c1.properties").read_text().replace(str(c.d / "data" / "c1"), str(other / "data"))
    )
    assert (
        cli(
            "bootstrap",
            "format",
            "-c",
            other / "o.properties",
            "-t",
            "MkU3OEVBNTcwNTJENDM2Qg",
            *release(c),
            "--apply",
        )[0]
        == 0
    )
    code, out, err = cli("doctor", other / "data", "--bootstrap-controller", c.controllers[0], "-o", "json")
    (f,) = json.loads(out)["findings"]
    assert (code, f["code"], f["severity"]) == (1, "live-cluster-id-differs", "error")
    assert f["message"] == (
        f"{c.controllers[0]} answers for cluster {c.cluster_id}, the log dirs belong to ['MkU3OEVBNTcwNTJENDM2Qg']"
    )
    assert (
        f["evidence"][1]
        == f"{other / 'data' / 'meta.properties'}:{line_of(other / 'data' / 'meta.properties', 'cluster.id')}"
    )

    for i in lost + [leader]:
        c.run("kill-node", str(i))
    doctor_finds_real_static_misconfigurations(cli, c, tmp_path / "doctor")
    for i in lost:
        shutil.rmtree(data[i])

    # the log holds no voter set; Kafka 4.1 at kraft.version 0 writes quorum-state data_version 0, which
    # lists the voters but not their addresses: with nothing to probe, nothing shows they are gone
    code, out, err = cli("recover", data[leader], "--replica", broker_dir(c), "--lost-voters", ",".join(map(str, lost)))
    assert (code, err) == (1, "") and (
        f"refused: voter {lost[0]} has no known address, so nothing shows it is "
        "gone: give the survivor's server.properties with -c"
    ) in out, out
    # --config gives controller.quorum.voters: the lost voters are probed (killed: connection refused)
    addr = c.controllers[leader - 1]
    code, out, err = cli(
        "recover", "-c", conf, "--replica", broker_dir(c), "--lost-voters", ",".join(map(str, lost)), "--apply"
    )
    assert (code, err) == (0, ""), out
    assert all(f"  probe: voter {i} at {c.controllers[i - 1]}: silent (connection refused)" in out for i in lost), out
    assert "static quorum" in out and f"controller.quorum.voters={leader}@{addr}" in out
    assert f"voters: [1, 2, 3] -> [{leader}]" in out
    # 4.4's layout: the bootstrap records are only in the zero snapshot, which stays
    assert (data[leader] / ZERO_SNAPSHOT).exists() == (c.version == "4.4")

    # the configuration change the plan printed, then real Kafka
    mine = c.d / "conf" / f"c{leader}.recovered.properties"
    mine.write_text(with_quorum(conf.read_text(), controller_quorum_voters=f"{leader}@{addr}"))
    c.nodes.append(Node(c, f"c{leader}", mine))
    doc = until(
        "the survivor leads alone", lambda: (lambda d: d if leader_of(d) == leader else None)(status(cli, addr)), 120
    )
    assert voters_of(doc) == [leader]
    assert until("the broker answers", lambda: topics_described(c, tmp_path) == before or None, 120)

    # grow back through a dynamic quorum: kraft.version 1, then add-controller; the printed
    # commands (a new controller's server.properties, said in words, goes last)
    upgrade, fmt, add_cmd = printed_commands(out, "grow back ")
    assert upgrade == f"kafka-features.sh --bootstrap-controller {addr} upgrade --feature kraft.version=1"
    assert fmt == (
        f"quorumctl bootstrap format -t {c.cluster_id} --release-version {RELEASE_VERSION[c.version]} "
        "--no-initial-controllers --apply -c"
    )
    assert add_cmd == f"quorumctl add-controller --bootstrap-controller {addr} --command-config"
    p = kafka_tool("kafka-features", shlex.split(upgrade)[1:], tmp_path, home=c.home)
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    for i in lost:
        nconf = c.d / "conf" / f"c{i}.recovered.properties"
        nconf.write_text(
            with_quorum(
                (c.d / "conf" / f"c{i}.properties").read_text(), controller_quorum_bootstrap_servers=addr
            ).replace("controller.quorum.voters=", "#controller.quorum.voters=")
        )
        code, o, err = cli(*shlex.split(fmt)[1:], nconf)
        assert code == 0, err
        c.nodes.append(Node(c, f"c{i}", nconf))  # both start at once; added one at a time
    for i in lost:
        nconf = c.d / "conf" / f"c{i}.recovered.properties"

        def add():
            code, out, err = cli(*shlex.split(add_cmd)[1:], nconf)
            return out if code == 0 else None

        out = until(f"add-controller {i} accepted", add, 150)
        assert out.startswith(f"Added controller {i} with directory id ")
        until(f"controller {i} is a voter", lambda: i in voters_of(status(cli, addr)))

    def caught_up():
        code, out, err = cli("describe", "replication", "--bootstrap-controller", addr, "-o", "json")
        if code != 0:
            return None
        rows = [r for r in json.loads(out)["replicas"] if r["status"] in ("Leader", "Follower")]
        ends = {r["nodeId"]: r["logEndOffset"] for r in rows}
        return ends if sorted(ends) == [1, 2, 3] and len(set(ends.values())) == 1 else None

    until("three voters with equal end offsets", caught_up, 120)
    assert voters_of(status(cli, addr)) == [1, 2, 3]
    assert topics_described(c, tmp_path) == before


def doctor_finds_real_static_misconfigurations(cli, c, root):
    """The static quorum's (kraft.version 0) real files, copied and misconfigured."""
    d, confs = copies(c, root / "healthy")
    assert run_doctor(cli, confs) == []

    # node 3's disk replaced and formatted with --standalone (a dynamic quorum of its own)
    d, confs = copies(c, root / "standalone")
    shutil.rmtree(d / "data" / "c3")
    dyn = d / "c3-dynamic.properties"
    dyn.write_text(
        "\n".join(ln for ln in confs["c3"].read_text().splitlines() if not ln.startswith("controller.quorum.voters="))
        + f"\ncontroller.quorum.bootstrap.servers={c.controllers[2]}\n"
    )
    code, out, err = cli("bootstrap", "format", "-c", dyn, "-t", c.cluster_id, "--standalone", *release(c), "--apply")
    assert code == 0, err
    found = {f["code"]: f for f in run_doctor(cli, confs)}
    assert sorted(found) == ["kraft-version-differs", "static-config-on-dynamic-storage"]
    f = found["kraft-version-differs"]
    assert f["severity"] == "error"
    m = re.fullmatch(
        r"node 3's metadata log has kraft.version 1, but the most up-to-date log \(node ([12])\) has 0: "
        r"it was formatted for another \(dynamic\) quorum, e.g. with --standalone or "
        r"--initial-controllers, and does not follow this one's voter set",
        f["message"],
    )
    assert m, f["message"]
    p3 = d / "data" / "c3" / "__cluster_metadata-0"
    assert f["evidence"] == [
        f"{p3} (snapshot 00000000000000000000-0000000000.checkpoint): KRaftVersionRecord kraft.version=1",
        f"{d / 'data' / f'c{m.group(1)}' / '__cluster_metadata-0'}: no KRaftVersionRecord (kraft.version 0)",
    ]
    assert f["remedy"].startswith(
        f"wipe {d / 'data' / 'c3'} and format it like the others (without --standalone/--initial-controllers"
    )

    # node 2's config turned dynamic on its static storage
    d, confs = copies(c, root / "dynamic-config")
    confs["c2"].write_text(
        "\n".join(ln for ln in confs["c2"].read_text().splitlines() if not ln.startswith("controller.quorum.voters="))
        + "\ncontroller.quorum.bootstrap.servers="
        + ",".join(c.controllers)
        + "\n"
    )
    (f,) = run_doctor(cli, confs)
    assert (f["code"], f["severity"]) == ("dynamic-config-on-static-storage", "error")
    assert f["evidence"] == [
        f"{confs['c2']}:{line_of(confs['c2'], 'controller.quorum.bootstrap.servers')}: "
        "controller.quorum.bootstrap.servers=" + ",".join(c.controllers),
        str(d / "data" / "c2" / "__cluster_metadata-0"),
    ]
    assert "has no VotersRecord (kraft.version 0" in f["message"] and "KAFKA-16538" in f["remedy"]

    # node 3's disk restored from node 2's backup: one directory.id twice, and the wrong node id
    d, confs = copies(c, root / "wrong-backup")
    shutil.rmtree(d / "data" / "c3")
    shutil.copytree(d / "data" / "c2", d / "data" / "c3")
    found = {f["code"]: f for f in run_doctor(cli, confs)}
    # both dirs' meta.properties say node 2: node-claimed-twice names them (a copy, the same history)
    assert sorted(found) == ["duplicate-directory-id", "node-claimed-twice", "node-id-mismatch"]
    assert "one is a copy of the other" in found["node-claimed-twice"]["message"]
    f = found["duplicate-directory-id"]
    assert f["severity"] == "error" and f["message"].startswith(
        f"{d / 'data' / 'c3'} and {d / 'data' / 'c2'} have the same directory.id "
    )
    meta = d / "data" / "c3" / "meta.properties"
    assert f["evidence"][0] == f"{meta}:{line_of(meta, 'directory.id')}"
