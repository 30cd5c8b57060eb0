"""`describe health`: every controller probed on its own, in parallel, within
the timeout; verdicts with 0, 1 and 2 of 3 controllers silent, without a
leader, with a stale view; discovery from answers and from server.properties."""

from __future__ import annotations

import json
import threading

import pytest

from quorumctl.testing.sim import SimulatedCluster, closed_port, replica


NOW = 1795305697138
DIRS = {1: "DfqkWOlJTZ-abG8pUGocIA", 2: "4BuDMaJKttH3vcqDCog2og", 3: "eAmx4J3YZ63RPobrVgXBAw",
        4: "Ft5irZuen_hAwkaw5_cxsg"}


def cluster(behind_ms: dict[int, int] | None = None, leader=1, lag: dict[int, int] | None = None,
            profile="3.9", **kw) -> SimulatedCluster:
    """Voters 1-3, broker 4; `behind_ms[i]`: how far voter i's lastCaughtUp
    is behind the leader's; `lag[i]`: how many offsets behind it is."""
    behind_ms = {1: 0, 2: 120, 3: 140, **(behind_ms or {})}
    lag = lag or {}
    lead_ts = NOW
    voters = [replica(i, 500 - lag.get(i, 0), lead_ts - behind_ms[i], lead_ts - behind_ms[i], DIRS[i])
              for i in (1, 2, 3)]
    if leader in (1, 2, 3):
        voters[leader - 1].update(lastFetchTimestamp=lead_ts, lastCaughtUpTimestamp=lead_ts)
    c = SimulatedCluster("rTcAzcTXQpG_6c1zYns8Xw", leader_id=leader, leader_epoch=5, high_watermark=490,
                         voters=voters, observers=[replica(4, 500, lead_ts - 90, lead_ts - 90, DIRS[4])], **kw)
    c.add_nodes(profile=profile)
    return c


def health(cli, *args, timeout="0.8"):
    code, out, err = cli("describe", "health", "--output", "json", "--timeout", timeout, *args)
    assert err == ""
    return code, json.loads(out)


def probes(doc):
    return {p["nodeId"]: p for p in doc["probes"]}


def test_healthy_quorum_discovers_every_controller_from_one(cli):
    with cluster() as c:
        code, doc = health(cli, "--bootstrap-controller", c.node_by_id(2).address)
    assert code == 0
    assert (doc["verdict"], doc["leaderId"], doc["leaderEpoch"], doc["caughtUp"], doc["majority"], doc["canLose"]) == \
        ("healthy", 1, 5, 3, 2, 1)
    assert doc["reasons"] == []
    p = probes(doc)
    assert sorted(p) == [1, 2, 3]
    assert p[2]["origin"] == "bootstrap-controller" and p[1]["origin"] == p[3]["origin"] == "discovered"
    assert all(x["reachable"] and x["leaderId"] == 1 and x["kind"] == "controller" for x in p.values())
    assert p[1]["isLeader"] and not p[2]["isLeader"] and p[1]["leaderEpoch"] == 5
    assert [(v["id"], v["caughtUp"], v["lagTimeMs"], v["reachable"]) for v in doc["voters"]] == \
        [(1, True, 0, True), (2, True, 120, True), (3, True, 140, True)]
    assert doc["clusterId"] == "rTcAzcTXQpG_6c1zYns8Xw"


def test_one_of_three_silent(cli):
    with cluster(behind_ms={3: 5200}, lag={3: 40}) as c:
        c.silence(3)
        code, doc = health(cli, "--bootstrap-controller", c.node_by_id(1).address)
        code2, _ = health(cli, "--bootstrap-controller", c.node_by_id(1).address, "--fail-on-lag")
    assert (code, code2) == (0, 1)
    assert (doc["verdict"], doc["caughtUp"], doc["majority"], doc["canLose"]) == ("degraded", 2, 2, 0)
    v3 = doc["voters"][2]
    assert (v3["id"], v3["caughtUp"], v3["lag"], v3["lagTimeMs"], v3["reachable"]) == (3, False, 40, 5200, False)
    p = probes(doc)
    assert p[3]["reachable"] is False and p[3]["error"] == "no answer within the 0.8 s timeout"
    assert doc["reasons"][0] == "voter 3 is 5200 ms behind the leader (fetch timeout 2000 ms)"


def test_two_of_three_silent(cli):
    with cluster(behind_ms={2: 4100, 3: 5200}, lag={2: 30, 3: 40}) as c:
        c.silence(2)
        c.silence(3)
        code, doc = health(cli, "--bootstrap-controller", c.node_by_id(1).address)
    assert code == 1
    assert (doc["verdict"], doc["caughtUp"], doc["majority"], doc["canLose"]) == ("unhealthy", 1, 2, 0)
    assert doc["reasons"][0] == "only 1 of 3 voters are caught up; a majority needs 2"
    p = probes(doc)
    assert not p[2]["reachable"] and not p[3]["reachable"] and p[1]["reachable"]


def test_two_silent_followers_are_not_caught_up_even_when_the_leaders_data_says_so(cli):
    # Frozen followers (SIGSTOP) on a real quorum: the leader answers at once and its
    # lastCaughtUp for them is still fresh (120/140 ms) when the probes of the two
    # start; they never answer. What is true when the command answers: one voter of
    # three is known to be caught up, so the quorum is unhealthy.
    with cluster() as c:
        c.silence(2)
        c.silence(3)
        code, doc = health(cli, "--bootstrap-controller", c.node_by_id(1).address)
        tcode, out, _ = cli("describe", "health", "--bootstrap-controller", c.node_by_id(1).address,
                                "--timeout", "0.5")
    assert (code, tcode) == (1, 1)
    assert (doc["verdict"], doc["caughtUp"], doc["majority"], doc["canLose"]) == ("unhealthy", 1, 2, 0)
    assert [(v["id"], v["caughtUp"], v["lagTimeMs"], v["reachable"]) for v in doc["voters"]] == \
        [(1, True, 0, True), (2, False, 120, False), (3, False, 140, False)]
    assert doc["reasons"][:3] == ["only 1 of 3 voters are caught up; a majority needs 2",
                                  "voter 2 does not answer; its last caught-up time from the leader (120 ms behind) "
                                  "predates the probes",
                                  "voter 3 does not answer; its last caught-up time from the leader (140 ms behind) "
                                  "predates the probes"]
    head = out.split("\n\n")[0].splitlines()
    assert head[:6] == ["Verdict:                unhealthy",
                        "ClusterId:              rTcAzcTXQpG_6c1zYns8Xw",
                        "LeaderId:               1",
                        "LeaderEpoch:            5",
                        "CaughtUpVoters:         1 of 3 (majority 2, fetch timeout 2000 ms)",
                        "CanLose:                0 more voters"]


def test_one_silent_follower_is_not_caught_up(cli):
    with cluster() as c:
        c.silence(3)
        code, doc = health(cli, "--bootstrap-controller", c.node_by_id(1).address)
    assert code == 0
    assert (doc["verdict"], doc["caughtUp"], doc["majority"], doc["canLose"]) == ("degraded", 2, 2, 0)
    assert doc["voters"][2]["caughtUp"] is False


def test_leader_and_one_follower_silent(cli):
    # the survivor still believes in the old leader, which does not answer: no leader at all
    with cluster() as c:
        c.silence(1)
        c.silence(2)
        code, doc = health(cli, "--bootstrap-controller", c.node_by_id(3).address)
    assert code == 1
    assert doc["verdict"] == "unhealthy" and doc["leaderId"] is None and doc["caughtUp"] is None
    assert doc["reasons"][0] == "no controller answered DescribeQuorum as the leader"
    a3 = c.node_by_id(3).address
    assert doc["reasons"][1] == f"controller 3 ({a3}) believes the leader is 1 (unreachable)"
    p = probes(doc)
    assert p[3]["reachable"] and not p[1]["reachable"] and not p[2]["reachable"]


def test_no_leader_at_all(cli):
    with cluster(leader=-1) as c:
        code, doc = health(cli, "--bootstrap-controller", ",".join(n.address for n in c.controllers()))
    assert code == 1
    assert doc["verdict"] == "unhealthy"
    assert doc["reasons"] == ["no controller answered DescribeQuorum as the leader"]
    assert all(p["reachable"] and p["leaderId"] is None for p in doc["probes"])


def test_stale_view_is_reported(cli):
    with cluster() as c:
        c.node_by_id(3).leader_view = 2
        code, doc = health(cli, "--bootstrap-controller", c.node_by_id(1).address)
    assert code == 0 and doc["verdict"] == "healthy"
    a3 = c.node_by_id(3).address
    assert doc["reasons"] == [f"controller 3 ({a3}) believes the leader is 2, not 1"]


def test_through_a_broker_discovers_voters_from_nodes(cli):
    with cluster() as c:
        c.advertise_controllers()
        code, doc = health(cli, "--bootstrap-server", c.brokers()[0].address)
    assert code == 0 and doc["verdict"] == "healthy"
    p = probes(doc)
    assert p[4]["kind"] == "broker" and p[4]["origin"] == "bootstrap-server"
    assert sorted(k for k, x in p.items() if x["origin"] == "discovered") == [1, 2, 3]


def test_server_properties_voters_and_fetch_timeout(cli, tmp_path):
    with cluster(behind_ms={3: 5200}) as c:
        voters = ",".join(f"{n.node_id}@{n.address}" for n in c.controllers())
        cfg = tmp_path / "server.properties"
        cfg.write_text(f"process.roles=broker\nnode.id=4\ncontroller.quorum.voters={voters}\n"
                       "controller.quorum.fetch.timeout.ms=10000\n")
        code, doc = health(cli, "--config", str(cfg))
        code2, doc2 = health(cli, "--config", str(cfg), "--fetch-timeout-ms", "3000")
    assert code == 0 and doc["verdict"] == "healthy" and doc["fetchTimeoutMs"] == 10000
    assert {p["origin"] for p in doc["probes"]} == {"config"}
    assert doc2["verdict"] == "degraded" and doc2["fetchTimeoutMs"] == 3000


def test_server_properties_bootstrap_servers(cli, tmp_path):
    with cluster() as c:
        cfg = tmp_path / "controller.properties"
        cfg.write_text("controller.quorum.bootstrap.servers=" + c.node_by_id(2).address + "\n")
        code, doc = health(cli, "-c", str(cfg))
    assert code == 0 and sorted(probes(doc)) == [1, 2, 3]


def test_describe_quorum_v0_leader_uses_offsets(cli):
    with cluster(profile="3.0", lag={3: 25}) as c:
        code, doc = health(cli, "--bootstrap-controller", ",".join(n.address for n in c.controllers()))
    # v0 has no timestamps: caught up means LEO >= high watermark (490); voter 3 is at 475
    assert [(v["id"], v["caughtUp"], v["lagTimeMs"]) for v in doc["voters"]] == \
        [(1, True, 0), (2, True, None), (3, False, None)]
    assert doc["verdict"] == "degraded" and code == 0


def test_answers_within_its_timeout_when_most_controllers_hang(cli):
    with cluster() as c:
        for i in (1, 2, 3):
            c.silence(i)
        result = {}
        t = threading.Thread(target=lambda: result.update(
            r=health(cli, "--bootstrap-controller", ",".join(n.address for n in c.controllers()), timeout="0.6")))
        t.start()
        t.join(timeout=20)   # a guard against hanging, not a timing assertion
        assert not t.is_alive()
    code, doc = result["r"]
    assert code == 1 and doc["verdict"] == "unhealthy"
    assert [p["error"] for p in doc["probes"]] == ["no answer within the 0.6 s timeout"] * 3


def test_text_output(cli):
    with cluster(behind_ms={3: 5200}, lag={3: 40}) as c:
        c.silence(3)
        code, out, err = cli("describe", "health", "--bootstrap-controller", c.node_by_id(1).address,
                                 "--timeout", "0.5")
    assert code == 0 and err == ""
    head = out.split("\n\n")[0].splitlines()
    assert head == ["Verdict:                degraded",
                    "ClusterId:              rTcAzcTXQpG_6c1zYns8Xw",
                    "LeaderId:               1",
                    "LeaderEpoch:            5",
                    "CaughtUpVoters:         2 of 3 (majority 2, fetch timeout 2000 ms)",
                    "CanLose:                0 more voters",
                    "Reason:                 voter 3 is 5200 ms behind the leader (fetch timeout 2000 ms)",
                    f"Reason:                 controller 3 ({c.node_by_id(3).address}): no answer within the 0.5 s timeout"]
    voters = out.split("\n\n")[2].splitlines()
    assert [line.split("\t")[0].strip() for line in voters] == ["Voter", "1", "2", "3"]
    assert [line.split("\t")[2].strip() for line in voters] == ["CaughtUp", "yes", "yes", "no"]


def test_table_output(cli):
    with cluster() as c:
        code, out, err = cli("describe", "health", "--bootstrap-controller", c.node_by_id(1).address,
                                 "--output", "table")
    assert code == 0 and "Quorum health: HEALTHY" in out and "Voters: 3 of 3 caught up, majority 2, can lose 1" in out


@pytest.mark.parametrize("args,message", [
    ([], "nothing to probe: give --bootstrap-controller, --bootstrap-server, or --config with "
         "controller.quorum.voters / controller.quorum.bootstrap.servers"),
    (["--bootstrap-controller", "h:1", "--timeout", "-1"], "--timeout must be positive, not -1"),
])
def test_health_usage_errors(cli, args, message):
    code, out, err = cli("describe", "health", *args)
    assert code == 2 and err == f"quorumctl: error: {message}\n"


def test_bad_voters_in_config(cli, tmp_path):
    cfg = tmp_path / "s.properties"
    cfg.write_text("controller.quorum.voters=1@h:1,two@h:2\n")
    code, out, err = cli("describe", "health", "--config", str(cfg))
    assert code == 2
    assert err == f"quorumctl: error: {cfg}: controller.quorum.voters entry 'two@h:2' is not id@host:port\n"


def test_reason_names_an_unreachable_address_once(cli, tmp_path):
    """A refused connection's error already names the address: the reason must not
    say it twice ("controller 3 (A): cannot connect to A: ...")."""
    with cluster() as c:
        gone = f"127.0.0.1:{closed_port()}"
        cfg = tmp_path / "server.properties"
        cfg.write_text(f"process.roles=broker\nnode.id=4\ncontroller.quorum.voters=1@{c.node_by_id(1).address},"
                       f"2@{c.node_by_id(2).address},3@{gone}\n")
        code, doc = health(cli, "--config", str(cfg))
    reason = [r for r in doc["reasons"] if "cannot connect" in r]
    assert reason == [f"controller 3: cannot connect to {gone}: connection refused (nothing listens on that port)"]
