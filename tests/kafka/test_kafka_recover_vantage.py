"""Issue 32 on real Kafka 4.3: `recover` must not trust one vantage point, must read
every replica Kafka itself starts from, and must not promise a loss that Kafka turns
into a crash.

1. A firewall answers the operator's connections to the "lost" voters 1 and 2 with a
   TCP reset (exactly "nothing listens" from here) while they lead and broker 4
   follows them: refused, naming the broker that sees the live leader; nothing
   written. Then, healed, a plain loss of 1 and 2 on logs Kafka's retention cleaned
   (the log start moved to a snapshot inside a segment): recovered, every node starts.
2. A broker whose log starts past its snapshots, ahead of the lagging survivor: the
   base of the recovery; every acknowledged change kept, every node starts, log
   matching holds.
3. A static quorum: the refusal's advice (give the server.properties with --config)
   works as typed; `--no-replica` of a broker ahead of the base: the plan says to wipe
   its metadata log before it starts, and following the plan every node starts.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

import recover_chaos as rc
from kafka41 import free_base_port

pytestmark = pytest.mark.kafka("4.3")

# Snapshots every 5 s, segments rolled every 15 s, snapshots and segments kept 20 s:
# within a minute Kafka has deleted old segments and moved the log start to a snapshot
# inside the first segment left, the state of every long-lived controller.
RETENTION = (
    "metadata.log.segment.ms=15000 metadata.log.max.snapshot.interval.ms=5000 "
    "metadata.max.retention.ms=20000 internal.metadata.delete.delay.millis=1000"
)
OPERATOR_GID = 4242  # the operator's processes; the firewall rule matches this group


def firewall_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root for iptables and setpriv (the firewall between the operator and the controllers)"
    for tool in ("iptables", "setpriv"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (.ci/run installs iptables)"
    return None


@pytest.fixture
def cluster(request, tmp_path):
    """A started dynamic 4.3 cluster (3 controllers + 1 broker) with the settings given; always ended."""
    extra, dynamic = request.param
    k = rc.Kafka(
        tmp_path / "kc", free_base_port(span=4), "4.3", brokers=1, dynamic=dynamic, extra_conf=extra, start_timeout=300
    )
    k.held_ports = []
    try:
        k.start()
        yield k
    finally:
        k.discard()
        for s in k.held_ports:
            s.close()


def operator(*args, timeout: float = 120) -> tuple[int, str, str]:
    """quorumctl run as the operator whose connections the firewall resets (group OPERATOR_GID)."""
    env = dict(os.environ, PYTHONPATH=str(rc.ROOT))
    p = subprocess.run(
        ["setpriv", f"--regid={OPERATOR_GID}", "--clear-groups", sys.executable, "-m", "quorumctl", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    return p.returncode, p.stdout, p.stderr


@contextmanager
def operator_reset(ports: list[int]):
    """iptables: the operator's connections to `ports` answered with a TCP reset (REJECT)."""
    rule = [
        "OUTPUT",
        "-o",
        "lo",
        "-p",
        "tcp",
        "-m",
        "owner",
        "--gid-owner",
        str(OPERATOR_GID),
        "-m",
        "multiport",
        "--dports",
        ",".join(map(str, ports)),
        "-j",
        "REJECT",
        "--reject-with",
        "tcp-reset",
    ]
    subprocess.run(["iptables", "-w", "-A", *rule], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["iptables", "-w", "-D", *rule], capture_output=True)


def lose(k, *nodes: int) -> None:
    """Nodes lost for good: killed, their data gone, and their ports held bound (not
    listening: a connection is refused, as to a dead host) so that another test's
    cluster starting meanwhile cannot take them and answer as a controller there."""
    for n in nodes:
        k.kill(n)
        shutil.rmtree(k.data(n))
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", k.base + n))
        k.held_ports.append(s)  # closed with the cluster


def log_start_inside_segment(log_dir: Path) -> bool:
    """Kafka's retention ran: old segments deleted, and the checkpoint's first epoch
    entry (moved with the log start to a snapshot) starts after the first segment's base."""
    p = rc.partition_dir(log_dir)
    try:
        bases = sorted(int(f.name.split(".")[0]) for f in p.glob("*.log"))
        lines = (p / "leader-epoch-checkpoint").read_text().splitlines()
        first = int(lines[2].split()[1]) if len(lines) > 2 else None
    except (OSError, ValueError, IndexError):
        return False
    return bool(bases) and bases[0] > 0 and first is not None and first > bases[0]


def acknowledged(k, topic: str, retention: str):
    """A topic and a config change, each acknowledged by Kafka's tools through the broker."""
    wl = rc.Workload(k, None)
    for op in (rc.Op(1, "create", topic), rc.Op(2, "config", topic, retention)):
        assert wl.do(op).acked, op.error


def has(k, topic: str, retention: str):
    seen = rc.observed_state(k)
    return seen if seen and topic in seen[0] and seen[1].get(topic) == retention else None


def starts_clean(k, node: int) -> None:
    p = k.start_node(node)
    assert p.returncode == 0, (p.stdout[-1500:], p.stderr[-1500:])
    fatal = rc.fatal_lines(k.log_since_mark(node))
    assert not fatal, fatal


def works_after_recovery(k, topic: str, retention: str) -> None:
    """The recovered survivor and the broker start cleanly; the acknowledged change is there;
    a new topic can be created; stopped, both verify clean and no two replicas hold different
    batches at one (offset, epoch), by our own check and by quorumctl's."""
    starts_clean(k, 3)
    starts_clean(k, 4)
    rc.until("the acknowledged topic and config, through the broker", lambda: has(k, topic, retention), 90, every=2)
    creates_a_topic(k, "after-recovery")
    k.stop()
    for n in (3, 4):
        code, out, err = rc.qc("verify", k.data(n))
        assert code == 0, out + err
    assert rc.log_matching_clashes({"c3": k.data(3), "b4": k.data(4)}) == []
    assert rc.state_clashes([k.data(3), k.data(4)]) == []


def creates_a_topic(k, name: str) -> None:
    p = k.tool(
        "kafka-topics",
        [
            "--bootstrap-server",
            k.bootstrap,
            "--command-config",
            k.admin_config(),
            "--create",
            "--topic",
            name,
            "--partitions",
            "1",
            "--replication-factor",
            "1",
        ],
        90,
    )
    assert p.returncode == 0 and f"Created topic {name}." in p.stdout, p.stdout + p.stderr


@pytest.mark.root
@pytest.mark.skipif(firewall_reason() is not None, reason=firewall_reason() or "")
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("cluster", [(RETENTION, True)], indirect=True, ids=["kafka4.3"])
def test_firewall_refuses_then_a_cleaned_log_recovers(cluster):
    k = cluster
    acknowledged(k, "before-loss", "4242000")
    k.kill(3)
    leader, epoch = rc.until(
        "1 and 2 lead without 3",
        lambda: (lambda s: (s["leaderId"], s["leaderEpoch"]) if s and s.get("leaderId") in (1, 2) else None)(
            k.status(1)
        ),
        90,
    )
    before = rc.tree_hash(k.data(3))
    backup = Path(str(k.data(3)) + ".quorumctl-backup")
    with operator_reset([k.base + 1, k.base + 2]):
        for args in ([], ["--apply"]):
            code, out, err = operator("recover", k.data(3), "--lost-voters", "1,2", "--replica", k.data(4), *args)
            assert code == 1, (code, out, err)
            # from here both look exactly like a process that is gone ...
            assert f"  probe: voter 1 at {k.addr(1)}: silent (connection refused)" in out, out
            assert f"  probe: voter 2 at {k.addr(2)}: silent (connection refused)" in out, out
            # ... but the broker sees them lead
            refused = [ln for ln in out.splitlines() if ln.startswith("  refused: ")]
            assert refused and refused[0].startswith(
                f"  refused: broker 4 at {k.addr(4)} sees leader {leader} in epoch "
            ), out
            assert "the quorum is alive, voter(s) [1, 2] with it" in refused[0], refused
            assert rc.tree_hash(k.data(3)) == before and not backup.exists(), "recover wrote while refusing"
        code, out, err = operator("recover", k.data(3), "--lost-voters", "1,2", "--replica", k.data(4), "-o", "json")
        doc = json.loads(out)["plan"]
        (w,) = [w for w in doc["witnesses"] if w["who"] == "broker 4"]
        assert (w["state"], w["leader_id"]) == ("leader", leader) and w["leader_epoch"] >= epoch, w

    # healed: controller 3 back and caught up, then Kafka's retention cleans every log
    starts_clean(k, 3)
    rc.until(
        "retention moved the log start into a segment on 3 and 4",
        lambda: log_start_inside_segment(k.data(3)) and log_start_inside_segment(k.data(4)),
        180,
        every=2,
    )
    rc.until(
        "3 holds the acknowledged change",
        lambda: ("before-loss", "4242000") in rc.held_changes(k.data(3))["configs"],
        60,
    )
    # the plain loss of two controllers
    lose(k, 1, 2)
    k.kill(3)
    k.kill(4)
    code, out, err = rc.qc("state", k.data(3), "-o", "json")
    (r3,) = json.loads(out)["replicas"]
    assert code == 0 and r3["problems"] == [], r3
    assert any("inside the log" in n for n in r3["notes"]), r3["notes"]
    code, out, err = rc.qc("recover", k.data(3), "--lost-voters", "1,2", "--replica", k.data(4), "--apply")
    assert code == 0 and "  refused:" not in out, (code, out, err)
    works_after_recovery(k, "before-loss", "4242000")


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("cluster", [(RETENTION, True)], indirect=True, ids=["kafka4.3"])
def test_a_broker_whose_log_starts_past_its_snapshots_is_the_base(cluster):
    k = cluster
    k.freeze(3)  # the survivor lags from here on
    rc.until("1 and 2 lead", lambda: (lambda s: s if s and s.get("leaderId") in (1, 2) else None)(k.status(1)), 90)
    acknowledged(k, "kept-topic", "4343000")
    rc.until(
        "the broker holds the change", lambda: ("kept-topic", "4343000") in rc.held_changes(k.data(4))["configs"], 60
    )
    rc.until(
        "retention moved the broker's log start into a segment",
        lambda: log_start_inside_segment(k.data(4)),
        180,
        every=2,
    )
    lose(k, 1, 2)
    k.kill(3)
    k.kill(4)
    (e3, end3), (e4, end4) = rc.state_end(k.data(3)), rc.state_end(k.data(4))
    assert (e4, end4) > (e3, end3), "the broker must be ahead of the lagging survivor"
    code, out, err = rc.qc("verify", k.data(4))
    assert code == 0, out + err
    code, out, err = rc.qc(
        "recover", k.data(3), "--lost-voters", "1,2", "--replica", k.data(4), "--apply", "-o", "json"
    )
    assert code == 0, (code, out, err)
    plan = json.loads(out)["plan"]
    assert plan["base"]["node_id"] == 4 and plan["refused"] is None, plan
    works_after_recovery(k, "kept-topic", "4343000")


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("cluster", [("", False)], indirect=True, ids=["kafka4.3-static"])
def test_static_advice_works_and_no_replica_says_wipe(cluster):
    k = cluster
    k.freeze(3)
    rc.until("1 and 2 lead", lambda: (lambda s: s if s and s.get("leaderId") in (1, 2) else None)(k.status(1)), 90)
    acknowledged(k, "broker-only", "4444000")
    rc.until(
        "the broker holds the change", lambda: ("broker-only", "4444000") in rc.held_changes(k.data(4))["configs"], 60
    )
    lose(k, 1, 2)
    k.kill(3)  # the broker keeps running, its high watermark above the survivor's log end

    # the refusal's advice, typed as given
    code, out, err = rc.qc("recover", k.data(3), "--lost-voters", "1,2", "--no-replica", "4")
    assert (
        code == 1
        and (
            "  refused: voter 1 has no known address, so nothing shows it is gone: give the "
            "survivor's server.properties with -c (controller.quorum.voters)"
        )
        in out
    ), (code, out, err)
    args = ["recover", k.data(3), "-c", k.conf(3), "--lost-voters", "1,2", "--no-replica", "4"]
    code, out, err = rc.qc(*args)
    assert code == 0 and "  refused:" not in out, (code, out, err)
    steps = out.split("  then:\n", 1)[1].splitlines()
    assert steps[0].startswith(
        "    1. node 4 (not read, --no-replica): before node 3 starts, stop node 4 if it "
        "runs, and delete only the directory __cluster_metadata-0 in its metadata log dir"
    ), steps
    assert "stops with a fatal error" in out and "never truncates a replica below its high watermark" in out, out
    assert steps[1] == f"    2. edit node 3's server.properties: controller.quorum.voters=3@{k.addr(3)}", steps

    # following the plan: the broker stopped and its metadata log wiped, then the recovery
    k.kill(4)
    shutil.rmtree(rc.partition_dir(k.data(4)))
    code, out, err = rc.qc(*args, "--apply")
    assert code == 0 and "applied;" in out, (code, out, err)
    voters = {"controller.quorum.voters": f"3@{k.addr(3)}"}
    assert k.start_node_with(3, voters), k.log_since_mark(3)[-3000:]
    assert not rc.fatal_lines(k.log_since_mark(3))
    assert k.start_node_with(4, voters), k.log_since_mark(4)[-3000:]
    creates_a_topic(k, "after-recovery")
    assert not rc.fatal_lines(k.log_since_mark(4)), rc.fatal_lines(k.log_since_mark(4))
    seen = rc.until("the broker serves the recovered metadata", lambda: rc.observed_state(k), 90, every=2)
    # what only the broker held is gone, as the plan said; the rest works
    assert "after-recovery" in seen[0] and "broker-only" not in seen[0], seen
    k.stop()
    assert rc.log_matching_clashes({"c3": k.data(3), "b4": k.data(4)}) == []
