"""Issue 23 on real Kafka (4.1.0 and 4.3.0 from ../shared/kafka): `recover`
must never make things worse. One test per defect seen:

1. a "lost" voter that still runs (stopped controller 3, healthy 1 and 2; or a
   frozen JVM whose port accepts but never answers) makes `recover` refuse,
   and nothing is written, dry run or --apply;
2./3. the broker ahead of the survivor (controller 3 frozen while 1 and 2
   commit a topic and an acknowledged config change the broker fetched):
   `recover c3 --replica b4` keeps what the broker holds, the broker starts
   cleanly, and no two replicas hold different batches at one (offset, epoch)
   (checked here from the files, independently of quorumctl's checker).

The cluster, workload and file-reading helpers are tools/recover_chaos.py's
(the graded chaos run uses the same ones).
"""

from __future__ import annotations

import json
import re
import shutil
import socket
from pathlib import Path

import pytest

import recover_chaos as rc  # tools/recover_chaos.py (on pytest's pythonpath)
from kafka41 import free_base_port  # ports apart per xdist worker, as the other Kafka tests

VERSIONS = [pytest.param(v, marks=pytest.mark.kafka(v), id=f"kafka{v}") for v in ("4.1", "4.3")]


@pytest.fixture
def kafka(request, tmp_path):
    """A started dynamic cluster (3 controllers + 1 broker) of the version parametrized; always stopped."""
    k = rc.Kafka(tmp_path / "kc", free_base_port(span=4), request.param, brokers=1)
    try:
        k.start()
        yield k
    finally:
        k.discard()


def recover(k, survivor, *args, replicas=()):
    """`quorumctl recover` of the survivor's log dir; (exit code, stdout, stderr)."""
    rep = [a for d in replicas for a in ("--replica", d)]
    if rep and not rc.recover_supports_replica():
        # code from before --replica (main at 9e33e44): the same recovery without it, so that
        # the test fails on what it checks (lost changes, clashes), not on a usage error
        rep = []
    return rc.qc("recover", k.data(survivor), *rep, *args, timeout=120)


def refusal_line(out: str) -> str:
    lines = [ln for ln in out.splitlines() if ln.startswith("  refused: voter ")]
    assert lines, out
    return lines[0]


@pytest.mark.parametrize("kafka", VERSIONS, indirect=True)
def test_recover_refuses_while_a_lost_voter_answers(kafka):
    k = kafka
    k.kill(3)
    leader, epoch = rc.until(
        "1 and 2 elect a leader",
        lambda: (lambda s: (s["leaderId"], s["leaderEpoch"]) if s and s.get("leaderId") in (1, 2) else None)(
            k.status(1)
        ),
        90,
    )
    before = rc.tree_hash(k.data(3))
    backup = Path(str(k.data(3)) + ".quorumctl-backup")

    # both 'lost' voters run: the refusal names one of them, its address and what it answered as
    for apply in ([], ["--apply"]):
        code, out, err = recover(k, 3, "--lost-voters", "1,2", *apply)
        assert code == 1, (code, out, err)
        line = refusal_line(out)
        m = re.match(r"  refused: voter ([12]) ", line)
        v = int(m.group(1))
        assert k.addr(v) in line, line
        # what it answered as: "the leader of epoch N" / "a controller following leader L"
        role = f"leader of epoch {epoch}" if v == leader else f"following leader {leader}"
        assert role in line, (line, leader, epoch)
        assert rc.tree_hash(k.data(3)) == before and not backup.exists(), "recover wrote while refusing"
    code, out, err = recover(k, 3, "--lost-voters", "1,2", "-o", "json")
    doc = json.loads(out)
    assert code == 1 and doc["dry_run"] is True and doc["plan"]["refused"], out
    probes = {p["voter_id"]: p for p in doc["plan"]["probes"]}
    assert probes[1]["state"] == probes[2]["state"] == "answers", probes
    assert probes[1]["address"] == k.addr(1) and probes[2]["address"] == k.addr(2)
    # --force-lost never overrides a controller of this very cluster answering
    code, out, err = recover(k, 3, "--lost-voters", "1,2", "--force-lost", "1,2", "--apply")
    assert code == 1 and refusal_line(out), (code, out, err)
    assert rc.tree_hash(k.data(3)) == before and not backup.exists()

    # a frozen JVM (SIGSTOP): its port accepts a connection but nothing answers
    follower = 2 if leader == 1 else 1
    k.freeze(follower)
    k.kill(leader)
    for apply in ([], ["--apply"]):
        code, out, err = recover(k, 3, "--lost-voters", "1,2", "--timeout", "3", *apply)
        assert code == 1, (code, out, err)
        line = refusal_line(out)
        assert line.startswith(f"  refused: voter {follower} ") and k.addr(follower) in line, line
        assert rc.tree_hash(k.data(3)) == before and not backup.exists()
    code, out, err = recover(k, 3, "--lost-voters", "1,2", "--timeout", "3", "-o", "json")
    probes = {p["voter_id"]: p for p in json.loads(out)["plan"]["probes"]}
    assert (probes[follower]["state"], probes[leader]["state"]) == ("accepts", "silent"), probes

    # a frozen JVM whose accept queue is full (its peers' reconnects fill Kafka's listen backlog
    # of 50 within a minute or so): the kernel drops the SYN, so a connect times out as towards a
    # host that is off. Seen in a chaos run: recover called that "silent" and applied beside a
    # live voter. Still alive: must refuse.
    host, port = k.addr(follower).split(":")
    held = []
    try:
        while len(held) < 5000:
            s = socket.socket()
            s.settimeout(1)
            try:
                s.connect((host, int(port)))
            except OSError:
                s.close()
                break
            held.append(s)
        code, out, err = recover(k, 3, "--lost-voters", "1,2", "--timeout", "3", "-o", "json")
        doc = json.loads(out)
        probes = {p["voter_id"]: p for p in doc["plan"]["probes"]}
        assert code == 1 and doc["plan"]["refused"], (len(held), probes)
        assert rc.tree_hash(k.data(3)) == before and not backup.exists()
    finally:
        for s in held:
            s.close()

    # and once both are really gone, the same dry run plans (the probes do not cry wolf)
    k.kill(follower)
    code, out, err = recover(k, 3, "--lost-voters", "1,2", replicas=[k.data(4)])
    assert code == 0 and "  refused:" not in out, (code, out, err)
    assert rc.tree_hash(k.data(3)) == before


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("kafka", VERSIONS, indirect=True)
def test_recover_keeps_what_the_broker_holds_and_log_matching(kafka, tmp_path):
    k = kafka
    leader, epoch = k.leader()
    k.freeze(3)  # controller 3 lags from here on
    rc.until("1 and 2 lead", lambda: (lambda s: s if s and s.get("leaderId") in (1, 2) else None)(k.status(1)), 90)
    wl = rc.Workload(k, None)
    create = wl.do(rc.Op(1, "create", "kept-topic"))
    assert create.acked, create.error
    change = wl.do(rc.Op(2, "config", "kept-topic", "4242000"))
    assert change.acked, change.error  # acknowledged (kafka-configs: "Completed updating config")
    # the broker has fetched both (its own files say so)
    rc.until(
        "the broker holds the change", lambda: ("kept-topic", "4242000") in rc.held_changes(k.data(4))["configs"], 60
    )
    for i in (1, 2):
        k.kill(i)
        shutil.rmtree(k.data(i))
    k.kill(3)
    k.kill(4)
    (e3, end3), (e4, end4) = rc.state_end(k.data(3)), rc.state_end(k.data(4))
    assert (e4, end4) > (e3, end3), "the broker must be ahead of the frozen controller for this test"
    assert ("kept-topic", "4242000") not in rc.held_changes(k.data(3))["configs"]
    epochs_seen = max(e3, e4)

    code, out, err = recover(k, 3, "--lost-voters", "1,2", "--apply", "-o", "json", replicas=[k.data(4)])
    assert code == 0, (code, out, err)
    plan = json.loads(out)["plan"]
    if "new_epoch" in plan:
        assert plan["new_epoch"] > epochs_seen, plan

    p = k.start_node(3)
    assert p.returncode == 0, p.stderr[-2000:]
    rc.until("3 leads alone", lambda: (lambda s: s if s and s.get("leaderId") == 3 else None)(k.status(3)), 90)
    p = k.start_node(4)
    broker_log = k.log_since_mark(4)
    bad = [
        ln
        for ln in broker_log.splitlines()
        if re.search(r"\] (ERROR|FATAL) ", ln) and re.search(r"truncation|high watermark", ln, re.I)
    ]
    assert p.returncode == 0 and not bad, (bad, p.stderr[-1500:])

    def described():
        seen = rc.observed_state(k)
        return seen if seen and "kept-topic" in seen[0] and seen[1].get("kept-topic") == "4242000" else None

    rc.until("the topic and its acknowledged config, through the broker", described, 90, every=2)
    p = k.tool(
        "kafka-configs",
        ["--bootstrap-server", k.bootstrap, "--describe", "--entity-type", "topics", "--entity-name", "kept-topic"],
    )
    assert "retention.ms=4242000" in p.stdout, p.stdout + p.stderr
    k.stop()

    for n in (3, 4):
        code, out, err = rc.qc("verify", k.data(n))
        assert code == 0, out + err
    assert rc.log_matching_clashes({"c3": k.data(3), "b4": k.data(4)}) == []
    assert rc.state_clashes([k.data(3), k.data(4)]) == []
