"""`describe status/replication/health` on the lab (tests/support/lab.py, issue 33): a real
Kafka 4.3 dynamic quorum (c1..c3, broker b4), every node on its own host
(network namespace, address, hosts file), quorumctl and Kafka's tools run by
the operator from the bastion `op`, every address given by host name.

One lab for the module; every test leaves it healthy again (heal, then wait).
The partitions: one follower cut off both ways; the leader cut off from both
followers but not from the broker; a one-way partition that has elections
repeat (only one controller can open connections to the others). Then a
follower restarted on a new address; `probe` through a broker fenced (its
heartbeats dropped), behind (its fetches dropped) and a follower behind; and a
follower back with a new directory id, replaced, judged by Kafka's tool and the
files before and after a cold restart of every node (issue 44).
"""

from __future__ import annotations

import json
import re
import shlex
import time

import pytest

from kafka41 import mask_replication, mask_status, table_rows
import recover_chaos
from lab import OPERATOR, lab_fixture, until, voters_in_files

lab = lab_fixture("4.3", dynamic=True)
pytestmark = [pytest.mark.kafka("4.3"), pytest.mark.root]
FETCH_TIMEOUT_MS = 2000  # controller.quorum.fetch.timeout.ms (Kafka's default; the lab keeps it)
ELECTION_TIMEOUT_MS = 1000  # controller.quorum.election.timeout.ms (Kafka's default)


def health(lab, *args, host=OPERATOR, timeout="3") -> tuple[int, dict]:
    code, out, err = lab.quorumctl(
        "describe",
        "health",
        "--bootstrap-controller",
        lab.controllers,
        "-o",
        "json",
        "--timeout",
        timeout,
        *args,
        host=host,
    )
    assert code in (0, 1) and err == "", (code, err)
    return code, json.loads(out)


def healthy(lab, limit_s: float = 120) -> dict:
    return until(
        "a healthy quorum", lambda: (lambda r: r[1] if r[1]["verdict"] == "healthy" else None)(health(lab)), limit_s
    )


def followers(lab, leader: int) -> list[int]:
    return [h.node_id for h in lab.controller_hosts if h.node_id != leader]


class Watch:
    """`describe health --watch 1 -o json` running on the operator's host."""

    def __init__(self, lab, tmp_path, *args):
        self.path = tmp_path / "watch.jsonl"
        self.out = open(self.path, "wb")
        self.proc = lab.spawn(
            OPERATOR,
            lab.quorumctl_argv(
                "describe", "health", "--bootstrap-controller", lab.controllers, "-o", "json", "--watch", "1", *args
            ),
            self.out,
            env=lab.quorumctl_env(),
        )

    def docs(self) -> list[dict]:
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    def stop(self) -> list[dict]:
        self.proc.terminate()
        self.proc.wait(30)
        self.out.close()
        return self.docs()


def leaders_answering(doc: dict) -> set[tuple[int, int]]:
    """(node id, epoch) of every controller that answered DescribeQuorum as the leader."""
    return {(p["nodeId"], p["leaderEpoch"]) for p in doc["probes"] if p["isLeader"]}


def test_describe_by_name_equals_kafka(lab):
    """status, replication (Kafka 4.3's kafka-metadata-quorum, the same text) and health,
    from the bastion by host name; and from inside a node's host."""
    leader, epoch = lab.leader()
    via_ctl = ["--bootstrap-controller", lab.controllers]
    via_srv = ["--bootstrap-server", lab.bootstrap]
    for via, what in ((via_ctl, "status"), (via_srv, "replication")):
        theirs = lab.kafka_tool("kafka-metadata-quorum", [*via, "describe", f"--{what}"])
        assert theirs.returncode == 0, theirs.stderr[-2000:]
        code, mine, err = lab.quorumctl("describe", what, *via, "-o", "text")
        assert (code, err) == (0, ""), err
        if what == "status":
            assert mask_status(mine) == mask_status(theirs.stdout)
            for i in (1, 2, 3):  # the voters' endpoints are names
                assert f'"endpoints": ["CONTROLLER://c{i}:9093"]' in mine, mine
        else:
            assert mask_replication(mine) == mask_replication(theirs.stdout)
            assert sorted(r[0] for r in mask_replication(mine)[1:]) == ["1", "2", "3", "4"]

    code, doc = health(lab)
    assert (code, doc["verdict"], doc["reasons"], doc["leaderId"]) == (0, "healthy", [], leader)
    assert (doc["caughtUp"], doc["majority"], doc["canLose"]) == (3, 2, 1)
    assert sorted((p["address"], p["nodeId"], p["reachable"]) for p in doc["probes"]) == [
        (f"c{i}:9093", i, True) for i in (1, 2, 3)
    ]
    assert [(v["id"], v["address"], v["directoryId"]) for v in doc["voters"]] == [
        (i, f"c{i}:9093", lab.host(i).dir_id) for i in (1, 2, 3)
    ]
    # through the broker by name: the voters are discovered from the answer's endpoints
    code, out, err = lab.quorumctl("describe", "health", "--bootstrap-server", lab.bootstrap, "-o", "json")
    doc = json.loads(out)
    assert (code, doc["verdict"]) == (0, "healthy"), err
    assert {p["address"] for p in doc["probes"]} == {"b4:9092", "c1:9093", "c2:9093", "c3:9093"}

    # the operator on a node's host: the same quorum, through that host's names
    code, out, err = lab.quorumctl("describe", "status", "--bootstrap-controller", "c1:9093", "-o", "json", host="c2")
    assert code == 0 and json.loads(out)["leaderId"] == leader, err


def test_partitioned_follower(lab):
    """One follower cut off both ways (the operator too): health names it unreachable
    from here and behind the leader; restarting the other follower is refused."""
    leader = healthy(lab)["leaderId"]
    cut, other = followers(lab, leader)
    handle = lab.cut(cut)
    try:

        def behind():  # the cut one past the fetch timeout, the others caught up (a loaded machine may lag)
            code, doc = health(lab)
            v = {x["id"]: x for x in doc["voters"]}
            return (
                (code, doc)
                if (v[cut]["lagTimeMs"] or 0) >= FETCH_TIMEOUT_MS and all(v[i]["caughtUp"] for i in (leader, other))
                else None
            )

        code, doc = until("the cut follower behind the leader", behind, 60)
        assert (code, doc["verdict"], doc["leaderId"]) == (0, "degraded", leader), doc["reasons"]
        v = {x["id"]: x for x in doc["voters"]}
        assert (v[cut]["reachable"], v[cut]["caughtUp"], v[cut]["address"]) == (False, False, f"c{cut}:9093")
        assert all(v[i]["reachable"] and v[i]["caughtUp"] for i in (leader, other))
        assert doc["reasons"] == [
            f"voter {cut} is {v[cut]['lagTimeMs']} ms behind the leader (fetch timeout {FETCH_TIMEOUT_MS} ms)",
            f"controller {cut} (c{cut}:9093): no answer within the 3 s timeout",
        ]

        code, doc = until(
            "the other follower caught up",
            lambda: (lambda r: r if r[1]["canRestart"]["checks"][0]["caughtUp"] else None)(
                health(lab, "--can-restart", str(other))
            ),
            60,
        )
        check = doc["canRestart"]["checks"][0]
        assert (code, check["id"], check["allowed"], check["caughtUp"]) == (1, other, False, True), check
        assert check["reason"] == (
            f"caught up; without {other} the caught-up voters are {leader} (1 of 3), a majority needs 2"
        )
        code, doc = health(lab, "--can-restart", str(cut))
        assert (code, doc["canRestart"]["allowed"]) == (0, True)
        assert doc["canRestart"]["checks"][0]["reason"].startswith("not caught up (does not answer)")
    finally:
        lab.heal(handle)
    doc = healthy(lab)
    assert doc["reasons"] == [] and all(v["reachable"] and v["caughtUp"] for v in doc["voters"])


LINGER_FETCH_TIMEOUT_MS = 8000  # the old leader's, in the cut-off test: it leads on for 1.5 x this


def make_leader(lab, target: int) -> tuple[int, int]:
    """Have `target` lead: the leader killed while the third controller cannot open
    connections to `target` (so only `target`'s own election can win), then started again."""
    leader, _ = lab.leader()
    if leader != target:
        (third,) = [i for i in (1, 2, 3) if i not in (leader, target)]
        handle = lab.cut(third, f"c{target}", oneway=True)
        try:
            lab.kill(leader)
            until(f"c{target} elected", lambda: (lab.status(via=f"c{target}:9093") or {}).get("leaderId") == target, 90)
        finally:
            lab.heal(handle)
            if not lab.alive(leader):
                lab.start_node(leader)
    return lab.leader()


def test_leader_cut_off_from_its_followers(lab, tmp_path):
    """The leader loses both followers but keeps the broker: the followers elect a new
    leader within their fetch timeout plus one election timeout; --watch shows the new
    leader and epoch. The old leader runs with a longer fetch timeout, so it leads on
    (its check-quorum timer is 1.5 fetch timeouts) while the new one leads: two
    controllers answer as leader, and no such sample is healthy."""
    old = healthy(lab)["leaderId"]
    lab.extra_props[f"c{old}"] = [f"controller.quorum.fetch.timeout.ms={LINGER_FETCH_TIMEOUT_MS}"]
    try:
        lab.kill(old)
        lab.start_node(old)
        old, old_epoch = make_leader(lab, old)
        healthy(lab)
        fs = followers(lab, old)
        assert lab.raft_timeouts(old) == (LINGER_FETCH_TIMEOUT_MS, ELECTION_TIMEOUT_MS)
        fetch_ms, election_ms = lab.raft_timeouts(fs[0])
        assert lab.raft_timeouts(fs[1]) == (fetch_ms, election_ms) == (FETCH_TIMEOUT_MS, ELECTION_TIMEOUT_MS)
        watch = Watch(lab, tmp_path)
        try:
            until("the watch's first sample", lambda: watch.docs(), 60, every=0.3)
            t0 = time.time()
            handle = lab.cut(old, [f"c{i}" for i in fs])
            try:

                def new_leader():
                    return next((d for d in watch.docs() if d["leaderId"] in fs and d["leaderEpoch"] > old_epoch), None)

                doc = until("a new leader in the watch", new_leader, 60, every=0.3)
                new, new_epoch = doc["leaderId"], doc["leaderEpoch"]
                # when it was elected, by its own log (the watch samples once a second)
                line = next(
                    ln
                    for ln in lab.log_since_start(new).splitlines()
                    if "Completed transition to Leader" in ln and f", epoch={new_epoch}, epochStartOffset=" in ln
                )
                elected = time.mktime(time.strptime(line[1:20], "%Y-%m-%d %H:%M:%S")) + int(line[21:24]) / 1000
                took_ms = (elected - t0) * 1000
                # the broker still reaches the old leader: the cut is between the controllers only
                p = lab.run("b4", ["bash", "-c", f"exec 3<>/dev/tcp/c{old}/9093"], timeout=30)
                assert p.returncode == 0, p.stderr
                until(
                    "the old leader has resigned",
                    lambda: all((n, e) != (old, old_epoch) for n, e in leaders_answering(watch.docs()[-1])),
                    60,
                    every=0.5,
                )
                resigned = time.time()
            finally:
                lab.heal(handle)
            healthy(lab)
            until(
                "a healthy sample in the watch after the heal",
                lambda: watch.docs()[-1]["sampleVerdict"] == "healthy",
                60,
                every=0.5,
            )
        finally:
            docs = watch.stop()
    finally:
        # the old leader back to the lab's configuration (the tests after expect Kafka's defaults)
        lab.extra_props.pop(f"c{old}", None)
        lab.kill(old)
        lab.start_node(old)
    healthy(lab)
    # Raft's bound: a follower's fetch timer runs from its last fetch, before the cut; the first
    # to time out is refused a pre-vote by the other (still following), which times out next
    # and wins; a split vote costs one election timeout, randomised below 2 x election.timeout.ms
    assert 0 < took_ms < fetch_ms + 2 * election_ms, took_ms
    # the old leader resigned by its check-quorum timer (1.5 of its fetch timeout after the cut)
    assert resigned - t0 < 1.5 * LINGER_FETCH_TIMEOUT_MS / 1000 + 5, resigned - t0
    assert new_epoch > old_epoch
    # the change of leader and epoch, as the watch showed it
    shown = [(d["leaderId"], d["leaderEpoch"]) for d in docs if d["leaderId"] is not None]
    assert shown[0] == (old, old_epoch) and (new, new_epoch) in shown, shown
    assert shown.index((new, new_epoch)) > max(i for i, s in enumerate(shown) if s == (old, old_epoch))
    hist = [(h["leaderId"], h["leaderEpoch"]) for h in docs[-1]["history"]]
    assert hist[-1][0] is not None and hist[-1][1] >= new_epoch
    # it happened: samples in which the old and the new leader both answered as leader
    two = [d for d in docs if leaders_answering(d) == {(old, old_epoch), (new, new_epoch)}]
    assert len(two) >= 2, [leaders_answering(d) for d in docs]
    for d in two:
        assert d["sampleVerdict"] != "healthy" and d["verdict"] != "healthy", d
        assert any(f"still answers as the leader of epoch {old_epoch}" in r for r in d["reasons"]), d["reasons"]
    for d in docs:
        answering = leaders_answering(d)
        assert len({e for _, e in answering}) == len(answering), d  # never two leaders of one epoch
        if len(answering) > 1:
            assert d["verdict"] != "healthy", d


def test_one_way_partition_makes_elections_repeat(lab, tmp_path):
    """Only one controller can open connections to the others; the others can open
    none (to anyone): it wins every election, no follower can fetch from it, it
    resigns after 1.5 fetch timeouts and is elected again. --watch: flapping."""
    src = healthy(lab)["leaderId"]
    others = followers(lab, src)
    watch = Watch(lab, tmp_path)
    try:
        handles = [lab.cut(o, [f"c{i}" for i in (1, 2, 3) if i != o], oneway=True) for o in others]
        try:
            doc = until(
                "a flapping verdict",
                lambda: next((d for d in watch.docs() if d["verdict"] == "flapping"), None),
                90,
                every=0.5,
            )
        finally:
            for h in handles:
                lab.heal(h)
        healthy(lab)
    finally:
        watch.stop()
    reason = doc["reasons"][0]
    m = re.fullmatch(
        r"flapping: the leader epoch changed (\d+) times in (\d+) s \(epoch (\d+) -> (\d+); "
        r"3 or more within a minute is flapping\)",
        reason,
    )
    assert m, doc["reasons"]
    count, first, last = int(m.group(1)), int(m.group(3)), int(m.group(4))
    assert count >= 3 and count == last - first, reason
    assert doc["sampleVerdict"] in ("unhealthy", "degraded"), doc["sampleVerdict"]
    # every epoch was won by the one controller that can reach the others
    assert {h["leaderId"] for h in doc["history"]} <= {src, None}, doc["history"]


def test_follower_restarted_on_a_new_address(lab):
    """A follower killed, moved to another address (its name follows) and started:
    the quorum, which knows it by name, is healthy again with it at the new address."""
    leader = healthy(lab)["leaderId"]
    moved = followers(lab, leader)[0]
    old_ip, new_ip = lab.host(moved).ip, lab.spare_ip()
    lab.kill(moved)
    try:
        lab.move(moved, new_ip)
        lab.start_node(moved)
    except BaseException:
        if not lab.alive(moved):
            lab.move(moved, old_ip)
            lab.start_node(moved)
        raise
    doc = healthy(lab)
    assert {v["id"]: v["address"] for v in doc["voters"]}[moved] == f"c{moved}:9093"
    for host in ("op", "b4", f"c{leader}"):
        assert lab.run(host, ["getent", "hosts", f"c{moved}"]).stdout.split() == [new_ip, f"c{moved}"]
    assert lab.status(via=f"c{moved}:9093")["leaderId"] == leader


def probe(lab, node: str, role: str) -> tuple[int, dict, str]:
    """`probe NODE --kind ready` from the operator: (exit status, document, the reason after "is not ready: ")."""
    code, out, err = lab.quorumctl(
        "probe", node, "--role", role, "--kind", "ready", "-o", "json", "--timeout", "3",
        "--bootstrap-controller", lab.controllers, timeout=60,
    )  # fmt: skip
    assert code in (0, 1) and err == "", (code, err)
    d = json.loads(out)
    return code, d, d["reason"].split(" is not ready: ", 1)[-1]


def fenced_in_files(log_dir, broker: int) -> bool | None:
    """Whether the metadata log (snapshot and segments) leaves `broker` fenced: its last
    registration or fencing change (None: never registered)."""
    state = None
    for _, t, d in recover_chaos.metadata_records(log_dir):
        if t == "REGISTER_BROKER_RECORD" and d["brokerId"] == broker:
            state = d.get("fenced", True)
        elif t == "BROKER_REGISTRATION_CHANGE_RECORD" and d["brokerId"] == broker and d.get("fenced", 0) != 0:
            state = d["fenced"] == 1
        elif t in ("FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD") and d["id"] == broker:
            state = t == "FENCE_BROKER_RECORD"
    return state


def kafka_broker_state(lab) -> str:
    """Broker 4's STATE as Kafka's `kafka-cluster list-endpoints --include-fenced-brokers` prints it."""
    p = lab.kafka_tool(
        "kafka-cluster", ["list-endpoints", "--bootstrap-server", lab.bootstrap, "--include-fenced-brokers"]
    )
    assert p.returncode == 0, p.stderr[-2000:]
    header, *rows = [line.split() for line in p.stdout.splitlines() if line.strip()]
    assert header[-2:] == ["STATE", "ENDPOINT_TYPE"], p.stdout
    (row,) = [r for r in rows if r[0] == "4"]
    return row[-2]


def kafka_replica(lab, node: int) -> dict:
    """The node's row of Kafka's `kafka-metadata-quorum describe --replication` (the leader's view)."""
    p = lab.kafka_tool(
        "kafka-metadata-quorum", ["--bootstrap-controller", lab.controllers, "describe", "--replication"]
    )
    assert p.returncode == 0, p.stderr[-2000:]
    header, *rows = table_rows(p.stdout)
    (row,) = [dict(zip(header, r)) for r in rows if r[0] == str(node)]
    return row


def test_a_broker_fenced_then_behind_a_controller_behind(lab):
    """Probes through each state, each proven by Kafka: b4's heartbeats dropped (its metadata
    fetches still answered) until the controller fences it (as every controller's log
    says): probe ready says fenced; heartbeats back: ready. Then
    b4's metadata fetches dropped: behind the high watermark (kafka-metadata-quorum's lag):
    not caught up. A follower whose fetches are dropped answers but is not caught up."""
    leader = healthy(lab)["leaderId"]
    controllers = [f"c{i}" for i in (1, 2, 3)]
    code, d, _ = probe(lab, lab.bootstrap, "broker")
    assert (code, d["own"]["registered"], d["own"]["fenced"], kafka_broker_state(lab)) == (0, True, False, "unfenced")

    handle = lab.block_requests("b4", controllers, 63)  # BrokerHeartbeat
    try:
        code, d, why = until(
            "the broker fenced", lambda: (lambda r: r if r[0] == 1 else None)(probe(lab, lab.bootstrap, "broker")), 90
        )
        assert (why, d["own"]["answers"], d["own"]["registered"], d["own"]["fenced"]) == (
            "is registered but fenced",
            True,
            True,
            True,
        ), d
        # the fencing as the controllers committed it: every controller's metadata log (Kafka's
        # own admin tools cannot say: a fenced broker lists no broker to send their request to)
        until(
            "the fencing in every controller's log", lambda: all(fenced_in_files(lab.data(i), 4) for i in (1, 2, 3)), 60
        )
    finally:
        lab.heal(handle)
    code, d, why = until(
        "the broker ready again", lambda: (lambda r: r if r[0] == 0 else None)(probe(lab, lab.bootstrap, "broker")), 90
    )
    assert (d["own"]["fenced"], kafka_broker_state(lab), fenced_in_files(lab.data(lab.leader()[0]), 4)) == (
        False,
        "unfenced",
        False,
    )

    handle = lab.block_requests("b4", controllers, 1)  # Fetch
    try:
        code, d, why = until(
            "the broker behind",
            lambda: (lambda r: r if r[0] == 1 and r[2].startswith("not caught up") else None)(
                probe(lab, lab.bootstrap, "broker")
            ),
            90,
        )
        lead = d["leader"]
        assert (d["own"]["fenced"], lead["replica"], lead["caughtUp"]) == (False, "observer", False), d
        assert lead["logEndOffset"] < lead["highWatermark"], lead
        theirs = kafka_replica(lab, 4)
        assert (theirs["Status"], int(theirs["LogEndOffset"])) == ("Observer", lead["logEndOffset"]), theirs
        assert int(theirs["Lag"]) > 0, theirs
    finally:
        lab.heal(handle)
    until("the broker ready again", lambda: probe(lab, lab.bootstrap, "broker")[0] == 0, 90)

    f = followers(lab, leader)[0]
    handle = lab.block_requests(f"c{f}", controllers, 1)
    try:
        code, d, why = until(
            f"c{f} answering, not caught up",
            lambda: (lambda r: r if r[0] == 1 and r[1]["leader"] and r[1]["leader"]["caughtUp"] is False else None)(
                probe(lab, f"c{f}:9093", "controller")
            ),
            90,
        )
        assert d["own"]["answers"] and d["own"]["answeredAs"] == "controller", d
        assert why.startswith(("not caught up: ", f"knows no leader while {leader} leads")), why
        theirs = kafka_replica(lab, f)
        assert theirs["Status"] == "Follower" and int(theirs["Lag"]) > 0, theirs
    finally:
        lab.heal(handle)
    healthy(lab)
    until(f"c{f} ready again", lambda: probe(lab, f"c{f}:9093", "controller")[0] == 0, 90)


def test_controller_back_with_a_new_directory_id(lab):
    """A follower's disk replaced (wiped, formatted again: a new directory id): it fetches
    as an observer; health (degraded), doctor and voters check name it with the fix; replace-controller's
    dry run changes nothing, --apply removes the old directory id and adds the new one:
    3 voters again, the new directory id among them, no observer with a voter's id, and
    the topic created before is still there."""
    leader = healthy(lab)["leaderId"]
    f = followers(lab, leader)[0]
    old = lab.host(f).dir_id
    opt = ["--bootstrap-controller", lab.controllers]
    p = lab.kafka_tool(
        "kafka-topics",
        [
            "--bootstrap-server",
            lab.bootstrap,
            "--create",
            "--topic",
            "kept",
            "--partitions",
            "2",
            "--replication-factor",
            "1",
        ],
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    lab.kill(f)
    lab.start_node(f, new_directory=True)
    new = lab.host(f).dir_id
    assert new != old
    finding = (
        f"controller {f} runs as an observer with directory id {new}; the voter set names {f} with directory "
        f"id {old} (a replaced disk?): the quorum has 2 voters, one fewer than believed"
    )
    fix = (
        f"quorumctl replace-controller {f} --bootstrap-controller {{}} (a dry run; --apply removes the old "
        "directory id from the voters, then adds the new one)"
    )
    try:

        def replaced():
            code, doc = health(lab)
            return (code, doc) if any(r.startswith(finding) for r in doc["reasons"]) else None

        code, doc = until("health naming the replaced voter", replaced, 90)
        assert (code, doc["verdict"]) == (0, "degraded"), doc["reasons"]
        (reason,) = [r for r in doc["reasons"] if r.startswith(finding)]
        assert re.fullmatch(re.escape(f"{finding}; fix: ") + re.escape(fix).replace(r"\{\}", r"c[123]:9093"), reason)
        v = {x["id"]: x for x in doc["voters"]}[f]
        assert (v["directoryId"], v["reachable"], v["caughtUp"]) == (old, True, False)
        assert lab.quorumctl("describe", "health", *opt, "--timeout", "3", "--fail-on-lag")[0] == 1

        # doctor with a healthy voter's files (its own checks find nothing there) and the live quorum
        code, out, err = lab.quorumctl("doctor", "-c", lab.conf(leader), *opt, "-o", "json")
        assert code == 1, err
        (d,) = json.loads(out)["findings"]
        assert (d["code"], d["severity"], d["message"]) == ("voter-directory-replaced", "error", finding)
        assert d["remedy"] == fix.format(lab.controllers)

        # voters check: the same finding; the voter set as the leader stores it, the observer beside it
        code, out, err = lab.quorumctl("voters", "check", *opt, "-o", "json")
        assert code == 1, err
        doc = json.loads(out)
        assert [(x["code"], x["message"]) for x in doc["findings"]] == [("voter-directory-replaced", finding)]
        assert {(v["id"], v["directory_id"]) for v in doc["voters"]} == {
            (i, old if i == f else lab.host(i).dir_id) for i in (1, 2, 3)
        }
        assert (f, new) in {(o["id"], o["directory_id"]) for o in doc["observers"]}

        # the remedy as printed: its command line, then (as it says) --apply
        printed = shlex.split(d["remedy"].split(" (a dry run;")[0])
        assert printed[:3] == ["quorumctl", "replace-controller", str(f)], printed
        code, out, err = lab.quorumctl(*printed[1:])
        assert (code, err) == (0, ""), err
        others = ", ".join(str(i) for i in (1, 2, 3) if i != f)
        assert f"checked: the voter set names controller {f} with directory id {old} (voters 1, 2, 3)" in out
        assert f"checked: controller {f} fetches as an observer with directory id {new}" in out
        assert f"checked: endpoints CONTROLLER://c{f}:9093 (as the voter set stores them)" in out
        assert f"checked: c{f}:9093 answers as a controller of cluster {lab.cluster_id}" in out
        assert out.endswith(
            f"step 1: RemoveRaftVoter controller {f} directory id {old}: the voter set becomes "
            f"{others}\nstep 2: AddRaftVoter controller {f} directory id {new} endpoints "
            f"CONTROLLER://c{f}:9093: the voter set becomes 1, 2, 3\n"
            f"DRY RUN of replacing controller {f}: run again with --apply to make these changes\n"
        )
        assert {(v["id"], v["directoryId"]) for v in health(lab)[1]["voters"]} >= {(f, old)}

        code, out, err = lab.quorumctl(*printed[1:], "--apply", "-o", "json", timeout=240)
        assert (code, err) == (0, ""), err
        doc = json.loads(out)
        assert (doc["oldDirectoryId"], doc["newDirectoryId"], doc["votersBefore"]) == (old, new, [1, 2, 3])
        assert doc["done"] == [f"removed voter {f} directory id {old}", f"added voter {f} directory id {new}"]
        assert doc["verified"][0].startswith("verified: voters 1, 2, 3 (leader ")
        assert doc["verified"][0].endswith(
            f"controller {f} with directory id {new}; no observer fetches under a voter's id"
        )

        # judged independently of that report, before anything else touches the voter set:
        # DescribeQuorum as Kafka's own tool prints it, and the VotersRecord every controller's files hold
        want = [(i, new if i == f else lab.host(i).dir_id) for i in (1, 2, 3)]
        theirs = lab.kafka_status()
        assert theirs["CurrentVoters"] == want, theirs
        for i in (1, 2, 3):
            until(f"c{i}'s files holding the new voter set", lambda i=i: voters_in_files(lab.data(i)) == want, 60)
        # every node stopped at once and started again: only the files decide the quorum now
        lab.restart()
        assert lab.kafka_status()["CurrentVoters"] == want
        # the old directory id is gone for good: the restarted leader sees no observer but the broker
        until(
            "the broker, the only observer", lambda: [o[0] for o in lab.kafka_status()["CurrentObservers"]] == [4], 60
        )
        for i in (1, 2, 3):
            assert voters_in_files(lab.data(i)) == want, i
        dirs = {h.name: lab.data(h.name) for h in lab.controller_hosts + lab.broker_hosts}
        assert recover_chaos.log_matching_clashes(dirs) == []
        assert all(recover_chaos.batches(d) for d in dirs.values())  # the clash check had logs to compare
    except BaseException:
        # a failure above is reported as it is; then the module's lab is made whole for the tests after
        code, out, err = lab.quorumctl("remove-controller", *opt, "-i", f, "-d", old)

        def add():
            code, out, err = lab.quorumctl("add-controller", *opt, "--command-config", lab.conf(f))
            return code == 0 or "DUPLICATE_VOTER" in err or "already a voter" in err

        until("add-controller accepted", add, 120, every=2)
        raise
    doc = healthy(lab)
    assert [(v["id"], v["directoryId"]) for v in doc["voters"]] == want
    p = lab.kafka_tool(
        "kafka-topics", ["--bootstrap-server", lab.bootstrap, "--describe", "--topic", "kept"], timeout=180
    )
    assert p.returncode == 0 and p.stdout.count("Topic: kept\tPartition:") == 2, p.stdout + p.stderr
