"""Issue 23 on real Kafka (4.1.0, 4.3.0 and the 4.4 branch from ../shared/kafka): `recover`
and `truncate` must never make things worse. One cluster per release (3 controllers + 1
broker, formatted by that release's own kafka-storage: 4.4 writes no bootstrap.checkpoint,
each controller's bootstrap records are in its zero snapshot
`__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`), one scenario, a phase
per defect seen:

1. controller 3 frozen while 1 and 2 commit a topic and an acknowledged config change that
   the broker fetches (its own files say so), then killed;
2. a "lost" voter that still runs (1 and 2 healthy; then one frozen, whose port accepts but
   never answers, also with its accept queue full) makes `recover c3 --lost-voters 1,2`
   refuse, dry run, --apply and --force-lost alike, and nothing is written;
3. 1 and 2 gone for good, the broker stopped and ahead of controller 3: `truncate` refuses to
   cut the broker back to controller 3 without --force, and cuts a copy with it; a
   controller's copy cut with --to-offset keeps its bootstrap records (4.4: the zero snapshot);
4. `recover c3 --replica b4 --apply` keeps what the broker holds: a new epoch above every
   epoch seen, the broker starts cleanly, the topic and its acknowledged config are there,
   the finalized levels unchanged, a topic can be created, and no two replicas hold
   different batches at one (offset, epoch) (checked from the files, independently of
   quorumctl's checker).

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
from kafka41 import (
    FEATURE_LEVEL,
    RELEASE_VERSION,
    free_base_port,
)  # ports apart per xdist worker, as the other Kafka tests

VERSIONS = [pytest.param(v, marks=pytest.mark.kafka(v), id=f"kafka{v}") for v in ("4.1", "4.3", "4.4")]
SNAP = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"


@pytest.fixture
def cluster(request, tmp_path):
    """A started dynamic cluster (3 controllers + 1 broker) of the version parametrized; always stopped."""
    k = rc.Kafka(tmp_path / "kc", free_base_port(span=4), request.param, brokers=1, start_timeout=300)
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


def bootstrap_files(k) -> dict[int, list[str]]:
    """Per node, which of the two places of the bootstrap records its dir holds."""
    return {n: [f for f in ("bootstrap.checkpoint", SNAP) if k.data(n).joinpath(f).exists()] for n in (1, 2, 3, 4)}


def finalized(cli, k) -> dict:
    code, out, err = cli("features", "describe", "--bootstrap-server", k.bootstrap, "-o", "json")
    assert code == 0, err
    return {f["name"]: f.get("finalizedVersionLevel") for f in json.loads(out)["features"]}


def kafka_features(k) -> dict[str, str]:
    """Feature -> FinalizedVersionLevel as the release's own `kafka-features describe` prints it."""
    p = k.tool("kafka-features", ["--bootstrap-server", k.bootstrap, "describe"])
    assert p.returncode == 0, p.stderr[-2000:]
    out = dict(re.findall(r"^Feature: (\S+)\s.*\sFinalizedVersionLevel: (\S+)\s", p.stdout, re.M))
    assert "metadata.version" in out, p.stdout
    return out


def kafka_voters(k, via: str) -> tuple[int, list[int]]:
    """(leader id, voter ids) by the release's own `kafka-metadata-quorum describe --status`
    ((-1, []) while it fails: no leader yet)."""
    p = k.tool("kafka-metadata-quorum", ["--bootstrap-controller", via, "describe", "--status"])
    if p.returncode != 0:
        return -1, []
    fields = dict(line.split(":", 1) for line in p.stdout.splitlines() if ":" in line)
    return int(fields["LeaderId"]), sorted(v["id"] for v in json.loads(fields["CurrentVoters"]))


def grows_on_44(k, theirs: dict):
    """The recovered 4.4 cluster (controller 3 alone, broker 4; controller 3's partition dir
    rebuilt from the broker's, so without the zero snapshot a 4.4 controller is formatted with)
    restarted whole: 4.4's tools show the levels it had before the incident. Then a new
    controller (node 1, its dir formatted by 4.4's kafka-storage --no-initial-controllers)
    joins through kafka-metadata-quorum add-controller, and after another restart of every
    node the quorum is 1 and 3 with the same levels. 4.4 reads a zero snapshot only as the
    bootstrap of an empty log (QuorumController.handleLoadBootstrap): the log the broker
    held starts with those records, so nothing is lost without it."""
    c3 = k.addr(3)

    def restart(nodes):
        """Every node stopped, then the controllers started together (none waits for a
        majority alone), then the broker."""
        from concurrent.futures import ThreadPoolExecutor

        k.stop()
        ctl = [n for n in nodes if n not in k.brokers]
        with ThreadPoolExecutor(len(ctl)) as pool:  # the script's start-node holds its lock while it waits
            assert all(pool.map(lambda n: k.start_node_with(n, {}), ctl)), [k.log_since_mark(n)[-2000:] for n in ctl]
        for n in nodes:
            if n in k.brokers:
                p = k.start_node(n)
                assert p.returncode == 0, p.stderr[-2000:]

    restart([3, 4])
    assert rc.until("a leader", lambda: kafka_voters(k, c3)[0] == 3, 90)
    assert kafka_voters(k, c3) == (3, [3])
    assert kafka_features(k) == theirs
    p = k.tool("kafka-storage", ["format", "-t", k.cluster_id, "-c", k.conf(1), "--no-initial-controllers"])
    assert p.returncode == 0, p.stdout + p.stderr
    p = k.start_node(1)
    assert p.returncode == 0, p.stderr[-2000:]
    rc.until(
        "add-controller accepted",
        lambda: (
            k.tool(
                "kafka-metadata-quorum", ["--bootstrap-controller", c3, "--command-config", k.conf(1), "add-controller"]
            ).returncode
            == 0
            or kafka_voters(k, c3)[1] == [1, 3]
        ),
        120,
        every=3,
    )
    assert kafka_voters(k, c3)[1] == [1, 3]
    restart([3, 1, 4])
    rc.until("a leader of voters 1, 3", lambda: (lambda v: v[0] in (1, 3) and v[1] == [1, 3])(kafka_voters(k, c3)), 90)
    assert kafka_features(k) == theirs
    k.serves(120)


def end_of(cli, d: Path) -> int:
    return cli("state", "-o", "json", str(d), code=0).json()["replicas"][0]["log_end_offset"]


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("cluster", VERSIONS, indirect=True)
def test_recover_refuses_while_lost_voters_answer_then_keeps_what_the_broker_holds(cli, cluster, tmp_path):
    k = cluster
    # each release's kafka-storage layout: 4.4 puts a controller's bootstrap records in its zero
    # snapshot (with the voters) and gives the broker none; 4.1 and 4.3 write bootstrap.checkpoint
    # everywhere, and the controllers' zero snapshot holds only the voters
    ctl = [SNAP] if k.version == "4.4" else ["bootstrap.checkpoint", SNAP]
    broker = [] if k.version == "4.4" else ["bootstrap.checkpoint"]
    assert bootstrap_files(k) == {1: ctl, 2: ctl, 3: ctl, 4: broker}, bootstrap_files(k)
    levels = finalized(cli, k)
    assert levels["metadata.version"] == FEATURE_LEVEL[k.version], levels
    theirs = kafka_features(k)  # the same levels as the release's own kafka-features prints them
    assert {f: theirs[f] for f in ("metadata.version", "kraft.version")} == {
        "metadata.version": RELEASE_VERSION[k.version],
        "kraft.version": "1",
    }, theirs

    # 1. controller 3 lags (frozen) while 1 and 2 commit what the broker then holds
    k.leader()
    k.freeze(3)
    rc.until("1 and 2 lead", lambda: (lambda s: s if s and s.get("leaderId") in (1, 2) else None)(k.status(1)), 90)
    wl = rc.Workload(k, None)
    create = wl.do(rc.Op(1, "create", "kept-topic"))
    assert create.acked, create.error
    change = wl.do(rc.Op(2, "config", "kept-topic", "4242000"))
    assert change.acked, change.error  # acknowledged (kafka-configs: "Completed updating config")
    rc.until(
        "the broker holds the change", lambda: ("kept-topic", "4242000") in rc.held_changes(k.data(4))["configs"], 60
    )
    k.kill(3)
    assert ("kept-topic", "4242000") not in rc.held_changes(k.data(3))["configs"]

    refuses_while_a_lost_voter_answers(k)
    # 1 and 2 lost for good, the broker stopped: it is ahead of controller 3
    for i in (1, 2):
        shutil.rmtree(k.data(i))
    k.kill(4)
    (e3, end3), (e4, end4) = rc.state_end(k.data(3)), rc.state_end(k.data(4))
    assert (e4, end4) > (e3, end3), "the broker must be ahead of the frozen controller for this test"
    truncate_refuses_and_keeps_the_bootstrap(cli, k, e3, end3, tmp_path)
    keeps_what_the_broker_holds(cli, k, max(e3, e4), levels, broker, theirs)


def refuses_while_a_lost_voter_answers(k):
    """2.: `recover c3 --lost-voters 1,2` while 1 and 2 run, then while one is frozen
    (also with its accept queue full): refused and nothing written; once both are
    gone the same dry run plans."""
    leader, epoch = rc.until(
        "1 and 2 have a leader",
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


def truncate_refuses_and_keeps_the_bootstrap(cli, k, e3: int, end3: int, tmp: Path):
    """3.: the broker's log, ahead of controller 3's, is not cut without --force (a copy is,
    with it, where a Fetch from controller 3 would cut it); a controller's copy cut with
    --to-offset keeps the file that holds its bootstrap records. Every result verifies clean."""
    b4 = rc.tree_hash(k.data(4))
    code, out, err = cli("truncate", "-o", "json", k.data(4), "--reference", k.data(3), "--apply")
    assert code == 1 and "more up to date than node 3" in json.loads(out)["plan"]["refused"], out + err
    assert rc.tree_hash(k.data(4)) == b4
    copy = tmp / "b4-copy"
    shutil.copytree(k.data(4), copy, ignore=shutil.ignore_patterns(".lock"))
    code, out, err = cli(
        "truncate", "-o", "json", copy, "--reference", k.data(3), "--force", "--apply", "--backup-dir", tmp / "bk4"
    )
    res = json.loads(out)
    assert code == 0 and res["applied"]["verify"]["ok"], out + err
    # Raft's rule, from the files: controller 3 answers its last epoch e3 and its end; the
    # broker cuts to the lower of that end and its own end of epoch e3 (when 3 led epoch e3
    # as it froze, 3 may hold a last entry of e3 that nobody else got)
    own_end = max(b["last"] + 1 for b in rc.batches(k.data(4)) if b["epoch"] <= e3)
    assert res["plan"]["log_end_offset_after"] == min(end3, own_end) == end_of(cli, copy), res["plan"]
    c3 = tmp / "c3-copy"
    shutil.copytree(k.data(3), c3, ignore=shutil.ignore_patterns(".lock"))
    kept = {f: c3.joinpath(f).read_bytes() for f in ("bootstrap.checkpoint", SNAP) if c3.joinpath(f).exists()}
    code, out, err = cli(
        "truncate", "-o", "json", c3, "--to-offset", str(end3 // 2), "--force", "--apply", "--backup-dir", tmp / "bk3"
    )
    assert code == 0 and json.loads(out)["applied"]["verify"]["ok"], out + err
    assert {f: c3.joinpath(f).read_bytes() for f in kept if c3.joinpath(f).exists()} == kept
    assert end_of(cli, c3) <= end3 // 2
    for d in (copy, c3):
        code, out, err = cli("verify", d)
        assert (code, err) == (0, ""), out


def keeps_what_the_broker_holds(cli, k, epochs_seen: int, levels: dict, broker: list[str], theirs: dict):
    """4.: recovered from controller 3 and what the broker holds, then real Kafka on it; on 4.4
    also every node restarted, the levels by 4.4's own tools, and a controller formatted by
    4.4's kafka-storage against the cluster added by its kafka-metadata-quorum."""
    code, out, err = recover(k, 3, "--lost-voters", "1,2", "--apply", "-o", "json", replicas=[k.data(4)])
    assert code == 0, (code, out, err)
    plan = json.loads(out)["plan"]
    assert (plan["voters_before"], plan["voters_after"], plan["lost_voters"]) == ([1, 2, 3], [3], [1, 2]), plan
    assert plan["new_epoch"] > max(epochs_seen, plan["max_epoch_seen"]) >= epochs_seen, plan
    # the broker's log is the base: controller 3's partition dir is rebuilt from it, and a
    # broker's has no zero snapshot (Kafka never replicates it: its first leader writes the
    # bootstrap records into the log). 4.1/4.3 keep bootstrap.checkpoint beside it; on 4.4 the
    # log's records are the bootstrap: metadata.version at its level from the start
    assert bootstrap_files(k)[3] == broker, bootstrap_files(k)
    mv = [
        d["featureLevel"]
        for _, t, d in rc.metadata_records(k.data(3))
        if t == "FEATURE_LEVEL_RECORD" and d["name"] == "metadata.version"
    ]
    assert mv[:1] == [FEATURE_LEVEL[k.version]], mv

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
    assert finalized(cli, k) == levels
    k.serves(120)  # and it takes new topics
    if k.version == "4.4":
        grows_on_44(k, theirs)
    k.stop()

    for n in (3, 4):
        code, out, err = cli("verify", k.data(n))
        assert (code, err) == (0, ""), out
    assert rc.log_matching_clashes({"c3": k.data(3), "b4": k.data(4)}) == []
    assert rc.state_clashes([k.data(3), k.data(4)]) == []
