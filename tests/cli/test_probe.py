"""`quorumctl probe` on the simulated quorum: the decisions the real-Kafka and
lab tests cannot reach cheaply or yet (a controller cut off from its peers,
one started while its peers' names do not resolve, a quorum without its
majority), and `decide` itself on hand-built facts."""

from __future__ import annotations

import json

import pytest

from quorumctl.live.automation.node_probe import Facts, LogDirView, decide
from quorumctl.testing.sim import SimulatedCluster, replica

NOW = 1795305697138


def cluster(behind_ms: dict[int, int] | None = None, leader: int = 1, **kw) -> SimulatedCluster:
    """Voters 1-3 (leader 1, epoch 5), broker 4; voter i last fetched behind_ms[i] before the leader's now."""
    behind = {1: 0, 2: 120, 3: 140, **(behind_ms or {})}
    voters = [replica(i, 500, NOW - behind[i], NOW - behind[i]) for i in (1, 2, 3)]
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw",
        leader_id=leader,
        leader_epoch=5,
        high_watermark=500,
        voters=voters,
        observers=[replica(4, 500, NOW - 90, NOW - 90)],
        **kw,
    )
    c.add_nodes(profile="4.3")
    return c


def probe(cli, addr, role, kind, *args, timeout="1"):
    code, out, err = cli("probe", addr, "--role", role, "--kind", kind, "-o", "json", "--timeout", timeout, *args)
    assert err == "", err
    return code, json.loads(out)


def test_every_node_of_a_healthy_quorum_passes_every_kind(cli):
    with cluster() as c:
        for nid in (1, 2, 3):
            for kind in ("startup", "ready", "live"):
                code, doc = probe(cli, c.node_by_id(nid).address, "controller", kind)
                assert (code, doc["ok"]) == (0, True), doc["reason"]
        code, doc = probe(cli, c.node_by_id(2).address, "controller", "ready")
        assert doc["reason"] == (
            f"controller 2 ({c.node_by_id(2).address}) is ready: a voter caught up with "
            "leader 1 in epoch 5 (log end 500)"
        )
        assert (doc["nodeId"], doc["own"]["follows"], doc["leader"]["silentMs"]) == (2, 1, 120)
        code, doc = probe(cli, c.node_by_id(4).address, "broker", "ready")
        assert (code, doc["own"]["registered"], doc["own"]["fenced"], doc["leader"]["replica"]) == (
            0,
            True,
            False,
            "observer",
        )


def test_a_controller_cut_off_from_its_peers_is_not_ready_the_others_are(cli):
    """The lab's partition, as each side sees it: controller 3 has lost its leader (DescribeCluster
    names none) and the leader last heard from it 20 s ago."""
    with cluster(behind_ms={3: 20_000}) as c:
        c.node_by_id(3).leader_view = -1
        addr3 = c.node_by_id(3).address
        code, doc = probe(cli, addr3, "controller", "ready")
        assert code == 1
        assert doc["reason"] == f"controller 3 ({addr3}) is not ready: knows no leader while 1 leads epoch 5"
        for nid in (1, 2):
            assert probe(cli, c.node_by_id(nid).address, "controller", "ready")[0] == 0
        # a prober that sees both sides: detached for 20 s > grace 10 s while the others have a leader
        code, doc = probe(cli, addr3, "controller", "live", "--grace", "10")
        assert (code, doc["detachedSeconds"]) == (1, 20.0)
        assert doc["reason"].startswith(
            f"controller 3 ({addr3}) is not live: attached to nothing for 20.0 s (grace 10 s) while 1 leads epoch 5"
        )
        assert probe(cli, addr3, "controller", "live", "--grace", "30")[0] == 0
        # from inside the partition (the peers do not answer): not ready, but live (no leader to see)
        c.silence(1)
        c.silence(2)
        code, doc = probe(cli, addr3, "controller", "ready")
        assert code == 1 and doc["reason"].endswith("knows no leader, and no controller answered as the leader")
        code, doc = probe(cli, addr3, "controller", "live", "--grace", "10")
        assert code == 0 and "liveness holds: no controller answered as the leader" in doc["reason"]


def test_a_controller_whose_peers_do_not_resolve_yet_is_not_ready_until_it_attaches(cli):
    """The lab's late DNS: the node is up but cannot reach its peers by name, knows no leader, and
    the leader never heard from it (no fetch time); then the names resolve and it attaches."""
    with cluster(behind_ms={3: 0}) as c:
        for r in c.voters:
            if r["replicaId"] == 3:
                r.update(lastFetchTimestamp=-1, lastCaughtUpTimestamp=-1, logEndOffset=0)
        n3 = c.node_by_id(3)
        n3.leader_view = -1
        for e in c.controllers():
            e.advertised_host = "peer.invalid"  # what it lists for its peers does not resolve (yet)
        code, doc = probe(cli, n3.address, "controller", "ready")
        assert code == 1 and doc["reason"].endswith("knows no leader, and no controller answered as the leader")
        # not a wedge a restart fixes: no leader is visible from here, and for how long is unknown
        assert probe(cli, n3.address, "controller", "live", "--grace", "0")[0] == 0
        # the names resolve: the prober reaches the peers; the leader knows no fetch from it yet
        for e in c.controllers():
            e.advertised_host = "127.0.0.1"
        boot = ",".join(c.node_by_id(i).address for i in (1, 2))
        code, doc = probe(cli, n3.address, "controller", "ready", "--bootstrap-controller", boot)
        assert code == 1 and doc["reason"].endswith("knows no leader while 1 leads epoch 5")
        code, doc = probe(cli, n3.address, "controller", "live", "--grace", "0", "--bootstrap-controller", boot)
        assert code == 0 and "for how long is unknown" in doc["reason"]
        # it attaches: follows 1 and has fetched up to the leader
        n3.leader_view = None
        for r in c.voters:
            if r["replicaId"] == 3:
                r.update(lastFetchTimestamp=NOW - 50, lastCaughtUpTimestamp=NOW - 50, logEndOffset=500)
        code, doc = probe(cli, n3.address, "controller", "ready", "--bootstrap-controller", boot)
        assert code == 0, doc["reason"]


def test_without_a_majority_no_node_fails_liveness(cli):
    with cluster(behind_ms={2: 30_000, 3: 30_000}) as c:
        c.silence(1)  # the leader and one follower are gone; 3 is alone
        c.silence(2)
        c.node_by_id(3).leader_view = -1
        every = ["--bootstrap-controller", ",".join(e.address for e in c.controllers())]
        for nid in (1, 2, 3):
            code, doc = probe(cli, c.node_by_id(nid).address, "controller", "live", "--grace", "1", *every)
            assert code == 0, doc["reason"]
            assert "liveness holds: no controller answered as the leader" in doc["reason"]
            assert probe(cli, c.node_by_id(nid).address, "controller", "ready", *every)[0] == 1
        # nothing answers at all: no verdict on the quorum (3) for readiness; liveness still holds
        code, out, err = cli("probe", c.node_by_id(1).address, "--role", "controller", "--timeout", "1")
        assert (code, out) == (3, "") and err == (
            f"quorumctl: error: controller at {c.node_by_id(1).address} "
            "is not ready: does not answer: no answer within the 1 s timeout "
            "(and nothing else answered)\n"
        )
        assert probe(cli, c.node_by_id(1).address, "controller", "live")[0] == 0


def test_a_fenced_broker_is_not_ready_and_a_wrong_role_is_a_usage_error(cli):
    with cluster() as c:
        c.node_by_id(4).fenced = True
        code, doc = probe(cli, c.node_by_id(4).address, "broker", "ready")
        assert code == 1 and doc["reason"].endswith("is not ready: is registered but fenced")
        code, out, err = cli("probe", c.node_by_id(4).address, "--role", "controller")
        assert code == 2 and err == (
            f"quorumctl: error: {c.node_by_id(4).address} answers as a broker, not a "
            "controller: check --role and the addresses\n"
        )
        code, out, err = cli("probe", c.node_by_id(4).address, "--role", "zookeeper")
        assert code == 2 and "invalid --role 'zookeeper': expected one of controller, broker" in err


def facts(**kw) -> Facts:
    base = dict(
        role="controller",
        address="h:1",
        node_id=3,
        answers=True,
        answered_as="controller",
        follows=1,
        leader_id=1,
        leader_epoch=7,
        high_watermark=100,
        leader_now_ms=10_000,
        replica="voter",
        log_end_offset=100,
        last_fetch_ms=9_900,
        last_caught_up_ms=9_900,
        voters=3,
        caught_up_without=2,
        majority=2,
    )
    base.update(kw)
    return Facts(**base)


@pytest.mark.parametrize(
    "kw, kind, ok, phrase",
    [
        ({}, "ready", True, "a voter caught up with leader 1 in epoch 7"),
        ({"last_caught_up_ms": 5_000}, "ready", False, "not caught up: last caught up 5.0 s ago"),
        ({"follows": 2}, "ready", False, "follows 2, but 1 leads epoch 7"),
        ({"replica": None}, "ready", False, "has no record of node 3 fetching"),
        # a leader that lost its followers (an isolated leader about to resign)
        ({"node_id": 1, "caught_up_without": 0}, "ready", False, "leads epoch 7, but only 1 of 3 voters are caught up"),
        # frozen: the leader's clock says 40 s
        (
            {"answers": False, "error": "no answer", "last_fetch_ms": -30_000},
            "live",
            False,
            "attached to nothing for 40.0 s (grace 30 s)",
        ),
        ({"answers": False, "error": "no answer", "last_fetch_ms": -10_000}, "live", True, "the grace period is 30 s"),
        # the others are short of a majority without it: the quorum's trouble, not this node's
        (
            {"answers": False, "error": "no answer", "last_fetch_ms": -90_000, "caught_up_without": 1},
            "live",
            True,
            "short of a majority of 2",
        ),
        # no fetch time, no log dir: not proven
        ({"follows": None, "last_fetch_ms": None}, "live", True, "for how long is unknown"),
        # the log dir proves it: the log end has not moved for 95 s
        (
            {"follows": None, "last_fetch_ms": None, "log_dir": LogDirView("d", log_age_s=95.0)},
            "live",
            False,
            "attached to nothing for 95.0 s",
        ),
        (
            {"role": "broker", "answered_as": "broker", "registered": False},
            "ready",
            False,
            "is not registered with the controllers",
        ),
        (
            {"role": "broker", "answered_as": "broker", "registered": True, "fenced": False, "replica": "observer"},
            "ready",
            True,
            "an observer caught up",
        ),
        ({"answers": False, "error": "refused"}, "startup", False, "does not answer: refused"),
    ],
)
def test_decide(kw, kind, ok, phrase):
    v = decide(facts(**kw), kind, 30.0)
    assert v.ok is ok and int(v.status) == (0 if ok else 1), v.reason
    assert phrase in v.reason, v.reason
