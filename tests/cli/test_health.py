"""`describe health`: every controller probed on its own, in parallel, within
the timeout; verdicts with 0, 1 and 2 of 3 controllers silent, without a
leader, with a stale view; discovery from answers and from server.properties."""

from __future__ import annotations

import json
import re
import threading

import pytest

from quorumctl.testing.sim import SimulatedCluster, closed_port, replica


NOW = 1795305697138
DIRS = {
    1: "DfqkWOlJTZ-abG8pUGocIA",
    2: "4BuDMaJKttH3vcqDCog2og",
    3: "eAmx4J3YZ63RPobrVgXBAw",
    4: "Ft5irZuen_hAwkaw5_cxsg",
}


def cluster(
    behind_ms: dict[int, int] | None = None, leader=1, lag: dict[int, int] | None = None, profile="3.9", **kw
) -> SimulatedCluster:
    """Voters 1-3, broker 4; `behind_ms[i]`: how far voter i's lastCaughtUp
    is behind the leader's; `lag[i]`: how many offsets behind it is."""
    behind_ms = {1: 0, 2: 120, 3: 140, **(behind_ms or {})}
    lag = lag or {}
    lead_ts = NOW
    voters = [
        replica(i, 500 - lag.get(i, 0), lead_ts - behind_ms[i], lead_ts - behind_ms[i], DIRS[i]) for i in (1, 2, 3)
    ]
    if leader in (1, 2, 3):
        voters[leader - 1].update(lastFetchTimestamp=lead_ts, lastCaughtUpTimestamp=lead_ts)
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw",
        leader_id=leader,
        leader_epoch=5,
        high_watermark=490,
        voters=voters,
        observers=[replica(4, 500, lead_ts - 90, lead_ts - 90, DIRS[4])],
        **kw,
    )
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
    assert (doc["verdict"], doc["leaderId"], doc["leaderEpoch"], doc["caughtUp"], doc["majority"], doc["canLose"]) == (
        "healthy",
        1,
        5,
        3,
        2,
        1,
    )
    assert doc["reasons"] == []
    p = probes(doc)
    assert sorted(p) == [1, 2, 3]
    assert p[2]["origin"] == "bootstrap-controller" and p[1]["origin"] == p[3]["origin"] == "discovered"
    assert all(x["reachable"] and x["leaderId"] == 1 and x["kind"] == "controller" for x in p.values())
    assert p[1]["isLeader"] and not p[2]["isLeader"] and p[1]["leaderEpoch"] == 5
    assert [(v["id"], v["caughtUp"], v["lagTimeMs"], v["reachable"]) for v in doc["voters"]] == [
        (1, True, 0, True),
        (2, True, 120, True),
        (3, True, 140, True),
    ]
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
        tcode, out, _ = cli("describe", "health", "--bootstrap-controller", c.node_by_id(1).address, "--timeout", "0.5")
    assert (code, tcode) == (1, 1)
    assert (doc["verdict"], doc["caughtUp"], doc["majority"], doc["canLose"]) == ("unhealthy", 1, 2, 0)
    assert [(v["id"], v["caughtUp"], v["lagTimeMs"], v["reachable"]) for v in doc["voters"]] == [
        (1, True, 0, True),
        (2, False, 120, False),
        (3, False, 140, False),
    ]
    assert doc["reasons"][:3] == [
        "only 1 of 3 voters are caught up; a majority needs 2",
        "voter 2 does not answer; its last caught-up time from the leader (120 ms behind) predates the probes",
        "voter 3 does not answer; its last caught-up time from the leader (140 ms behind) predates the probes",
    ]
    head = out.split("\n\n")[0].splitlines()
    assert head[:6] == [
        "Verdict:                unhealthy",
        "ClusterId:              rTcAzcTXQpG_6c1zYns8Xw",
        "LeaderId:               1",
        "LeaderEpoch:            5",
        "CaughtUpVoters:         1 of 3 (majority 2, fetch timeout 2000 ms)",
        "CanLose:                0 more voters",
    ]


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
        cfg.write_text(
            f"process.roles=broker\nnode.id=4\ncontroller.quorum.voters={voters}\n"
            "controller.quorum.fetch.timeout.ms=10000\n"
        )
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
    assert [(v["id"], v["caughtUp"], v["lagTimeMs"]) for v in doc["voters"]] == [
        (1, True, 0),
        (2, True, None),
        (3, False, None),
    ]
    assert doc["verdict"] == "degraded" and code == 0


def test_answers_within_its_timeout_when_most_controllers_hang(cli):
    with cluster() as c:
        for i in (1, 2, 3):
            c.silence(i)
        result = {}
        t = threading.Thread(
            target=lambda: result.update(
                r=cli(
                    "describe",
                    "health",
                    "--bootstrap-controller",
                    ",".join(n.address for n in c.controllers()),
                    "--timeout",
                    "0.6",
                )
            )
        )
        t.start()
        t.join(timeout=20)  # a guard against hanging, not a timing assertion
        assert not t.is_alive()
    code, out, err = result["r"]
    # nothing answered at all: exit 3, as describe status (issue 26)
    assert (code, out) == (3, "")
    assert (
        err
        == "quorumctl: error: nothing answered: "
        + "; ".join(f"{a}: no answer within the 0.6 s timeout" for a in (n.address for n in c.controllers()))
        + "\n"
    )


def test_text_output(cli):
    with cluster(behind_ms={3: 5200}, lag={3: 40}) as c:
        c.silence(3)
        code, out, err = cli(
            "describe", "health", "--bootstrap-controller", c.node_by_id(1).address, "--timeout", "0.5"
        )
    assert code == 0 and err == ""
    head = out.split("\n\n")[0].splitlines()
    assert head == [
        "Verdict:                degraded",
        "ClusterId:              rTcAzcTXQpG_6c1zYns8Xw",
        "LeaderId:               1",
        "LeaderEpoch:            5",
        "CaughtUpVoters:         2 of 3 (majority 2, fetch timeout 2000 ms)",
        "CanLose:                0 more voters",
        "Reason:                 voter 3 is 5200 ms behind the leader (fetch timeout 2000 ms)",
        f"Reason:                 controller 3 ({c.node_by_id(3).address}): no answer within the 0.5 s timeout",
    ]
    voters = out.split("\n\n")[2].splitlines()
    assert [line.split("\t")[0].strip() for line in voters] == ["Voter", "1", "2", "3"]
    assert [line.split("\t")[2].strip() for line in voters] == ["CaughtUp", "yes", "yes", "no"]


def test_table_output(cli):
    with cluster() as c:
        code, out, err = cli(
            "describe", "health", "--bootstrap-controller", c.node_by_id(1).address, "--output", "table"
        )
    assert code == 0 and "Quorum health: HEALTHY" in out and "Voters: 3 of 3 caught up, majority 2, can lose 1" in out


@pytest.mark.parametrize(
    "args,message",
    [
        (
            [],
            "nothing to probe: give --bootstrap-controller, --bootstrap-server, or --config with "
            "controller.quorum.voters / controller.quorum.bootstrap.servers",
        ),
        (["--bootstrap-controller", "h:1", "--timeout", "-1"], "--timeout must be positive, not -1"),
    ],
)
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
        cfg.write_text(
            f"process.roles=broker\nnode.id=4\ncontroller.quorum.voters=1@{c.node_by_id(1).address},"
            f"2@{c.node_by_id(2).address},3@{gone}\n"
        )
        code, doc = health(cli, "--config", str(cfg))
    reason = [r for r in doc["reasons"] if "cannot connect" in r]
    assert reason == [f"controller 3: cannot connect to {gone}: connection refused (nothing listens on that port)"]


# -- exit codes (issue 26) ---------------------------------------------------------------


def test_nothing_listening_is_unreachable_exit_3(cli):
    gone = f"127.0.0.1:{closed_port()}"
    message = f"quorumctl: error: cannot connect to {gone}: connection refused (nothing listens on that port)\n"
    for extra in ([], ["--can-restart", "2"], ["-o", "json"]):
        assert cli("describe", "health", "--bootstrap-controller", gone, *extra) == (3, "", message)
    assert cli("describe", "status", "--bootstrap-controller", gone) == (3, "", message)


def test_watch_goes_on_when_nothing_answers(cli):
    gone = f"127.0.0.1:{closed_port()}"
    code, out, err = cli("describe", "health", "--bootstrap-controller", gone, "--watch", "0.2", "--samples", "2")
    assert (code, out) == (3, "")
    lines = err.splitlines()
    assert len(lines) == 2 and all(
        re.fullmatch(
            rf"quorumctl: error: cannot connect to {gone}: connection refused \(nothing listens on that port\) "
            r"\(at \d\d:\d\d:\d\d\)",
            ln,
        )
        for ln in lines
    ), err


@pytest.mark.parametrize("option,role", [("--bootstrap-server", "controller"), ("--bootstrap-controller", "broker")])
def test_wrong_kind_of_address_is_the_describe_status_error(cli, option, role):
    with cluster() as c:
        addr = c.node_by_id(2 if role == "controller" else 4).address
        code, out, err = cli("describe", "health", option, addr, "--timeout", "0.8")
        scode, sout, serr = cli("describe", "status", option, addr, "--timeout", "0.8")
    assert (code, out) == (2, "") and (code, err) == (scode, serr)
    want = {
        "controller": f"{addr} is a KRaft controller, not a broker (it does not serve Metadata): "
        f"use --bootstrap-controller {addr}",
        "broker": f"{addr} is a broker, not a controller: use --bootstrap-server {addr}",
    }[role]
    assert err == f"quorumctl: error: {want}\n"


# -- --can-restart (Strimzi's rule) -----------------------------------------------------------


def restart(cli, c, *ids, timeout="0.8"):
    code, out, err = cli(
        "describe",
        "health",
        "--bootstrap-controller",
        c.node_by_id(1).address,
        "-o",
        "json",
        "--timeout",
        timeout,
        *[a for i in ids for a in ("--can-restart", str(i))],
    )
    assert err == ""
    doc = json.loads(out)
    return code, doc["canRestart"], doc


def test_can_restart_with_one_follower_behind(cli):
    with cluster(behind_ms={3: 5200}, lag={3: 40}) as c:
        code2, r2, doc = restart(cli, c, 2)
        code3, r3, _ = restart(cli, c, 3)
        code23, r23, _ = restart(cli, c, "2,3")
        code4, r4, _ = restart(cli, c, 4)
        tcode, out, err = cli(
            "describe",
            "health",
            "--bootstrap-controller",
            c.node_by_id(1).address,
            "--can-restart",
            "3",
            "--can-restart",
            "1",
        )
    assert (code2, code3, code23, code4, tcode) == (1, 0, 1, 0, 1)
    assert r2 == {
        "nodes": [2],
        "allowed": False,
        "checks": [
            {
                "id": 2,
                "voter": True,
                "caughtUp": True,
                "allowed": False,
                "reason": "caught up; without 2 the caught-up voters are 1 (1 of 3), a majority needs 2",
            }
        ],
    }
    assert r3["allowed"] and r3["checks"][0]["reason"] == (
        "not caught up (5200 ms behind the leader, fetch timeout 2000 ms); without 3 the caught-up voters "
        "are 1, 2 (2 of 3), a majority needs 2"
    )
    assert [x["allowed"] for x in r23["checks"]] == [False, False]
    assert r4["checks"][0] == {
        "id": 4,
        "voter": False,
        "caughtUp": None,
        "allowed": True,
        "reason": "not a voter (voters 1, 2, 3): the quorum's majority does not rest on it",
    }
    # the voter table says it for each voter alone
    assert [(v["id"], v["canRestart"]) for v in doc["voters"]] == [(1, False), (2, False), (3, True)]
    lines = [ln for ln in out.splitlines() if ln.startswith("CanRestart:")]
    assert lines == [
        "CanRestart:             node 3: refused: not caught up (5200 ms behind the leader, fetch timeout 2000 ms); "
        "without 3, 1 the caught-up voters are 2 (1 of 3), a majority needs 2",
        "CanRestart:             node 1: refused: caught up (the leader: restarting it starts an election); "
        "without 3, 1 the caught-up voters are 2 (1 of 3), a majority needs 2",
    ]


def test_can_restart_every_voter_when_all_caught_up(cli):
    with cluster() as c:
        results = [restart(cli, c, i) for i in (1, 2, 3)]
        code, out, err = cli(
            "describe", "health", "--bootstrap-controller", c.node_by_id(1).address, "--can-restart", "2", "-o", "table"
        )
    assert [(code, r["allowed"]) for code, r, _ in results] == [(0, True)] * 3
    assert results[0][1]["checks"][0]["reason"] == (
        "caught up (the leader: restarting it starts an election); without 1 the caught-up voters are 2, 3 "
        "(2 of 3), a majority needs 2"
    )
    assert [v["canRestart"] for v in results[0][2]["voters"]] == [True, True, True]
    assert code == 0 and "can restart node 2: allowed: caught up; without 2" in " ".join(out.split())


def test_can_restart_without_a_leader_is_refused(cli):
    with cluster(leader=-1) as c:
        code, r, _ = restart(cli, c, 3)
    assert code == 1 and r["checks"][0]["reason"] == (
        "no controller answered as the leader: a restarted node could not rejoin a quorum"
    )


@pytest.mark.parametrize(
    "value,message",
    [
        ("x", "invalid --can-restart 'x': expected a node id (an integer)"),
        ("2,,3", "invalid --can-restart '': expected a node id (an integer)"),
        ("-1", "invalid --can-restart '-1': a node id is not negative"),
    ],
)
def test_can_restart_bad_ids(cli, value, message):
    code, out, err = cli("describe", "health", "--bootstrap-controller", "h:1", "--can-restart", value)
    assert (code, out, err) == (2, "", f"quorumctl: error: {message}\n")


# -- stale registrations: noted, not judged ----------------------------------------------------


def test_registered_controller_that_is_not_a_voter_is_a_note(cli):
    with cluster() as c:
        c.add_controller(5)
        c.node_by_id(5).stop()  # removed and wiped: still registered, nothing listens
        code, doc = health(cli, "--bootstrap-controller", c.node_by_id(1).address)
    assert (code, doc["verdict"], doc["reasons"]) == (0, "healthy", [])
    a5 = c.node_by_id(5).address
    assert doc["notes"] == [
        f"controller 5 ({a5}) is registered but not a voter, and does not answer: a stale "
        "registration? (`quorumctl doctor` says how to clear it): cannot connect to "
        f"{a5}: connection refused (nothing listens on that port)"
    ]
    assert probes(doc)[5]["reachable"] is False
    # given by the operator (a monitor's address list that outlived the controller): the same note
    c = cluster()
    c.add_controller(5)
    with c:
        given = ",".join(n.address for n in c.controllers())
        c.node_by_id(5).stop()
        code, doc2 = health(cli, "--bootstrap-controller", given)
    assert (code, doc2["verdict"], len(doc2["notes"])) == (0, "healthy", 1)


# -- --watch: history, stalled, flapping ------------------------------------------------------------


def samples(*rows, step=2.0):
    from quorumctl.domain.health_watch import History, Sample

    h = History()
    for i, (leader, epoch, hw, leo) in enumerate(rows):
        h.add(Sample(1000.0 + i * step, "healthy" if leader else "unhealthy", leader, epoch, hw, leo))
    return h


def test_stalled_when_the_high_watermark_stays_while_the_log_grows():
    h = samples((1, 5, 170, 175), (1, 5, 170, 190), (1, 5, 170, 205))
    assert h.stalled() == (
        "stalled: the high watermark stayed at 170 for 3 samples (4 s) while the leader's "
        "log end offset grew 175 -> 205"
    )
    assert samples((1, 5, 170, 175), (1, 5, 170, 190)).stalled() is None  # not yet 3 samples
    assert samples((1, 5, 170, 175), (1, 5, 171, 190), (1, 5, 172, 205)).stalled() is None
    assert samples((1, 5, 170, 175), (1, 5, 170, 175), (1, 5, 170, 175)).stalled() is None  # idle, not stuck


def test_stalled_without_a_leader():
    assert (
        samples(
            (None, None, None, None),
        ).stalled()
        is None
    )
    assert samples(*[(None, None, None, None)] * 3).stalled() == "stalled: no leader for 3 samples (4 s)"
    assert (
        samples((1, 5, 170, 175), (None, None, None, None), (None, None, None, None)).stalled()
        == "stalled: the high watermark stayed at 170 for 3 samples (4 s) with no leader in 2 of them"
    )


def test_flapping_counts_epoch_changes_within_a_minute():
    h = samples((1, 3, 100, 100), (2, 4, 110, 110), (3, 6, 120, 120), (1, 8, 130, 130), step=6)
    assert h.epoch_changes()[0] == 5
    assert h.flapping() == (
        "flapping: the leader epoch changed 5 times in 18 s (epoch 3 -> 8; 3 or more within a minute is flapping)"
    )
    assert samples((1, 3, 100, 100), (2, 4, 110, 110), (1, 5, 130, 130), step=6).flapping() is None
    # older than a minute does not count
    assert samples((1, 3, 100, 100), (2, 7, 110, 110), (2, 7, 120, 120), step=61).flapping() is None


def test_watch_samples_json_lines(cli):
    with cluster() as c:
        code, out, err = cli(
            "describe",
            "health",
            "--bootstrap-controller",
            c.node_by_id(1).address,
            "-o",
            "json",
            "--watch",
            "0.3",
            "--samples",
            "2",
        )
    assert (code, err) == (0, "")
    docs = [json.loads(line) for line in out.splitlines()]
    assert [d["verdict"] for d in docs] == ["healthy", "healthy"]
    assert [len(d["history"]) for d in docs] == [1, 2]
    assert docs[1]["history"][1]["leaderEpoch"] == 5 and docs[1]["history"][1]["highWatermark"] == 490


def test_watch_exit_when_healthy_and_text(cli):
    with cluster() as c:
        code, out, err = cli(
            "describe",
            "health",
            "--bootstrap-controller",
            c.node_by_id(1).address,
            "--watch",
            "0.3",
            "--exit-when-healthy",
        )
    assert (code, err) == (0, "")
    assert out.startswith("Verdict:                healthy\n")
    assert "Time\t" in out.replace(" ", "") and "LeaderLogEndOffset" in out


def test_watch_samples_are_bounded_by_the_interval(cli):
    import time

    with cluster() as c:
        c.silence(2)
        c.silence(3)
        t0 = time.monotonic()
        code, out, err = cli(
            "describe",
            "health",
            "--bootstrap-controller",
            c.node_by_id(1).address,
            "-o",
            "json",
            "--watch",
            "0.5",
            "--samples",
            "3",
        )
        took = time.monotonic() - t0
    assert code == 1 and took < 5, took  # each sample gives up at the interval, not the 5 s timeout
    assert all(json.loads(line)["timeoutSeconds"] == 0.5 for line in out.splitlines())


@pytest.mark.parametrize(
    "args,message",
    [
        (["--exit-when-healthy"], "--exit-when-healthy needs --watch"),
        (["--samples", "2"], "--samples needs --watch"),
        (["--watch", "0"], "--watch must be a positive number of seconds, not 0"),
        (["--watch", "1", "--samples", "0"], "--samples must be positive, not 0"),
    ],
)
def test_watch_usage_errors(cli, args, message):
    code, out, err = cli("describe", "health", "--bootstrap-controller", "h:1", *args)
    assert (code, out, err) == (2, "", f"quorumctl: error: {message}\n")


def test_watch_table(cli):
    with cluster() as c:
        code, out, err = cli(
            "describe",
            "health",
            "--bootstrap-controller",
            c.node_by_id(1).address,
            "-o",
            "table",
            "--watch",
            "0.2",
            "--samples",
            "2",
            "--can-restart",
            "3",
        )
    assert (code, err) == (0, "")
    assert (
        "Quorum health: HEALTHY" in out and "History" in out and "can restart node 3: allowed" in " ".join(out.split())
    )


def test_stalled_with_a_leader_that_has_no_high_watermark():
    # a leader elected again and again (a one-way partition, tests/test_lab_quorum.py) answers
    # with highWatermark -1: it has committed nothing in its epoch, but it is a leader
    assert (
        samples((1, 16, -1, 80), (1, 17, -1, 81), (1, 18, -1, 82)).stalled()
        == "stalled: no high watermark for 3 samples (4 s): leader 1 (epochs 16 -> 18) committed nothing in its epoch"
    )
    assert samples((1, 16, -1, 80), (None, None, None, None), (2, 17, -1, 81)).stalled() == (
        "stalled: no high watermark for 3 samples (4 s): leaders 1, 2 (epochs 16 -> 17) committed nothing in "
        "its epoch, and no leader in 1 of them"
    )
    assert (
        samples((1, 5, 170, 175), (1, 6, -1, 176), (1, 6, -1, 177)).stalled()
        == "stalled: the high watermark stayed at 170 for 3 samples (4 s) with no high watermark in 2 of them"
    )


def test_flapping_is_the_verdict_when_elections_repeat_and_nothing_commits():
    from dataclasses import replace as dc_replace

    from quorumctl.domain.health_watch import watch_verdict

    h = samples((1, 3, -1, 100), (1, 5, -1, 101), (1, 7, -1, 102))
    verdict, reasons = watch_verdict(dc_replace(_judged(), verdict="unhealthy"), h)
    assert verdict == "flapping"
    assert reasons == [
        "flapping: the leader epoch changed 4 times in 4 s (epoch 3 -> 7; 3 or more within a minute is flapping)",
        "stalled: no high watermark for 3 samples (4 s): leader 1 (epochs 3 -> 7) committed nothing in its epoch",
    ]


def _quorum(leader: int, epoch: int, caught_up_ms: dict[int, int]):
    from quorumctl.domain.quorum import Quorum, Replica

    return Quorum(
        leader,
        epoch,
        490,
        [Replica(i, DIRS[i], 500, NOW - caught_up_ms[i], NOW - caught_up_ms[i]) for i in (1, 2, 3)],
        [],
        version=2,
    )


def _judged(*claims):
    """judge() over three reachable controllers: 2 leads epoch 6 with every voter caught
    up; `claims`: (node id, epoch) of others that answer DescribeQuorum as the leader too."""
    from quorumctl.config.addresses import Address
    from quorumctl.domain.health_verdict import Inputs, Probe, judge

    probes = []
    for i in (1, 2, 3):
        p = Probe(
            Address(f"c{i}", 9093),
            "bootstrap-controller",
            "controller",
            node_id=i,
            kind="controller",
            reachable=True,
            answered=True,
            leader_view=2,
            leader_epoch=6,
        )
        epoch = 6 if i == 2 else dict(claims).get(i)
        if epoch is not None:
            p.quorum = _quorum(i, epoch, {1: 0, 2: 0, 3: 0})
            p.is_leader, p.leader_view, p.leader_epoch = True, i, epoch
        probes.append(p)
    return judge(Inputs(probes, {}, 2000, 3.0, 10.0))


def test_an_old_leader_still_answering_as_leader_is_not_healthy():
    assert (_judged().verdict, _judged().reasons) == ("healthy", [])
    # the leader of epoch 5, cut off from its followers, answers as leader until it resigns
    h = _judged((1, 5))
    assert (h.verdict, h.leader_id, h.leader_epoch) == ("degraded", 2, 6)
    assert h.reasons == [
        "controller 1 (c1:9093) still answers as the leader of epoch 5: it has not learnt of epoch 6 (leader 2)"
    ]
    # two leaders of one epoch: never healthy
    h = _judged((3, 6))
    assert h.verdict == "unhealthy"
    assert h.reasons == [
        "two leaders of epoch 6: controller 2 (c2:9093) and controller 3 (c3:9093) both answer as "
        "the leader (a Raft safety violation)"
    ]


def test_a_voter_back_with_a_new_directory_id_is_named():
    """A controller whose disk was replaced fetches as an observer with a new directory
    id; the voter with the old one does not fetch (seen on the lab: test_kafka_lab)."""
    from quorumctl.config.addresses import Address
    from quorumctl.domain.health_verdict import Inputs, Probe, judge
    from quorumctl.domain.quorum import Replica

    q = _quorum(2, 6, {1: 31343, 2: 0, 3: 0})
    q.observers = [Replica(1, "v_4bVSFx__ZesG0jJ7PIRQ", 500, NOW, NOW)]
    probes = [
        Probe(
            Address(f"c{i}", 9093),
            "bootstrap-controller",
            "controller",
            node_id=i,
            kind="controller",
            reachable=True,
            answered=True,
            leader_view=2,
            leader_epoch=6 if i == 2 else None,
            is_leader=i == 2,
            quorum=q if i == 2 else None,
        )
        for i in (1, 2, 3)
    ]
    h = judge(Inputs(probes, {}, 2000, 3.0, 10.0))
    assert (h.verdict, h.caught_up) == ("degraded", 2)
    assert h.reasons == [
        "controller 1 runs as an observer with directory id v_4bVSFx__ZesG0jJ7PIRQ; the voter set "
        f"names 1 with directory id {DIRS[1]} (a replaced disk?): the quorum has 2 voters, one "
        "fewer than believed; fix: quorumctl replace-controller 1 --bootstrap-controller c2:9093 "
        "(a dry run; --apply removes the old directory id from the voters, then adds the new one)"
    ]
    # caught up by the leader's numbers (a stale lastCaughtUp) or not: still named, still degraded
    q.voters[0] = Replica(1, DIRS[1], 500, NOW, NOW)
    h = judge(Inputs(probes, {}, 2000, 3.0, 10.0))
    assert (h.verdict, len(h.reasons)) == ("degraded", 1)
    assert h.reasons[0].startswith("controller 1 runs as an observer with directory id v_4bVSFx__ZesG0jJ7PIRQ")
    # the same directory id as an observer (a voter listed twice by a confused leader): nothing replaced
    q.observers = [Replica(1, DIRS[1], 500, NOW, NOW)]
    assert judge(Inputs(probes, {}, 2000, 3.0, 10.0)).verdict == "healthy"
    # an observer that stopped fetching (the removed old directory id, listed by the leader for
    # 5 minutes after its last fetch once replace-controller has run): nothing replaced
    q.observers = [Replica(1, "v_4bVSFx__ZesG0jJ7PIRQ", 400, NOW - 15_000, NOW - 15_000)]
    assert judge(Inputs(probes, {}, 2000, 3.0, 10.0)).verdict == "healthy"
    q.observers = [Replica(1, "v_4bVSFx__ZesG0jJ7PIRQ", 400, NOW - 14_999, NOW - 14_999)]
    assert judge(Inputs(probes, {}, 2000, 3.0, 10.0)).verdict == "degraded"


def test_brokers_that_do_not_answer_are_named_within_the_deadline():
    """A frozen broker's kernel still accepts the connection; its ApiVersions goes
    unanswered: named at the deadline, with a refused one, and never later."""
    import socket
    import time
    from quorumctl.config.addresses import Address
    from quorumctl.config.client import ClientConfig
    from quorumctl.live.health.partitions import silent_brokers

    frozen = socket.socket()
    frozen.bind(("127.0.0.1", 0))
    frozen.listen(8)  # never accepted, never answered: the frozen JVM's listener
    gone = closed_port()
    try:
        t0 = time.monotonic()
        out = silent_brokers(
            {3: Address("127.0.0.1", frozen.getsockname()[1]), 4: Address("127.0.0.1", gone)},
            ClientConfig(),
            t0 + 1.0,
            1.0,
        )
        took = time.monotonic() - t0
    finally:
        frozen.close()
    assert sorted(out) == [3, 4]
    assert out[3] == "no answer within the 1 s timeout"
    assert out[4] == f"cannot connect to 127.0.0.1:{gone}: connection refused (nothing listens on that port)"
    assert 0.8 <= took < 2.5


class _PagedBroker:
    """A broker's answers to DescribeTopicPartitions (paged by its cursor at the asked limit,
    as Kafka pages) and to DescribeConfigs of min.insync.replicas: what check_partitions asks."""

    name = "127.0.0.1:9092"

    def __init__(self, topics: dict[str, list[tuple[int, list[int], list[int]]]], min_isr: dict[str, int]):
        self.topics, self.min_isr, self.pages = topics, min_isr, 0

    def request(self, api, body):
        from quorumctl.wire import messages

        if api == messages.DESCRIBE_CONFIGS:
            results = [
                {
                    "resourceName": r["resourceName"],
                    "errorCode": 0,
                    "configs": [{"name": "min.insync.replicas", "value": str(self.min_isr.get(r["resourceName"], 1))}],
                }
                for r in body["resources"]
            ]
            return 4, {"results": results}
        assert api == messages.DESCRIBE_TOPIC_PARTITIONS and body["topics"] == []
        self.pages += 1
        cur = body["cursor"] or {"topicName": "", "partitionIndex": 0}
        left, out, nxt = body["responsePartitionLimit"], [], None
        for name in sorted(self.topics):
            if name < cur["topicName"]:
                continue
            start = cur["partitionIndex"] if name == cur["topicName"] else 0
            parts = self.topics[name][start:]
            if not parts:
                continue
            if left == 0:
                nxt = {"topicName": name, "partitionIndex": start}
                break
            taken = parts[:left]
            left -= len(taken)
            out.append(
                {
                    "name": name,
                    "errorCode": 0,
                    "partitions": [
                        {"partitionIndex": start + i, "leaderId": lead, "replicaNodes": reps, "isrNodes": isr}
                        for i, (lead, reps, isr) in enumerate(taken)
                    ],
                }
            )
            if len(taken) < len(parts):
                nxt = {"topicName": name, "partitionIndex": start + len(taken)}
                break
        return 0, {"topics": out, "nextCursor": nxt}


def test_partition_lists_name_at_most_20_and_count_all():
    """30 leaderless partitions over pages of 7: every one counted, the first 20 named (in the
    broker's order), the reason saying how many more; under-replicated and under min ISR too."""
    from types import SimpleNamespace

    from quorumctl.live.health.partitions import LISTED, apply, check_partitions
    from quorumctl.render.quorum import partitions_doc

    down = [(5, [5, 2], [5]) for _ in range(30)]  # broker 5 is not live: leaderless, under-replicated
    ok = [(1, [1, 2, 3], [1, 2, 3]), (2, [2, 3, 1], [2]), (3, [3, 1, 2], [3, 1])]
    broker = _PagedBroker({"down": down, "ok": ok}, {"ok": 2})
    ph = check_partitions(broker, {1, 2, 3}, limit=7)
    assert broker.pages == 5  # 33 partitions, 7 a page
    assert (ph.topics, ph.partitions, ph.leaderless, ph.under_replicated, ph.under_min_isr) == (2, 33, 30, 32, 31)
    assert LISTED == 20
    assert ph.lists == {
        "leaderless": [f"down-{i}" for i in range(20)],
        "underReplicated": [f"down-{i}" for i in range(20)],
        "underMinIsr": [f"down-{i}" for i in range(20)],
    }
    doc = partitions_doc(ph)  # describe health -o json's "partitions"
    assert (doc["leaderless"], doc["underReplicated"], doc["underMinIsr"], doc["listedAtMost"]) == (30, 32, 31, 20)
    assert [len(v) for v in doc["listed"].values()] == [20, 20, 20]
    h = SimpleNamespace(verdict="healthy", reasons=[], notes=[])
    apply(h, ph)
    assert h.verdict == "unhealthy"
    assert h.reasons == [
        "30 partition(s) without a live leader: " + ", ".join(f"down-{i}" for i in range(20)) + " and 10 more",
        "32 partition(s) under-replicated: " + ", ".join(f"down-{i}" for i in range(20)) + " and 12 more",
        "1 partition(s) with a leader but fewer in-sync replicas than min.insync.replicas",
    ]
    # the healthy topic alone: nothing listed, nothing to say
    ph = check_partitions(_PagedBroker({"ok": ok[:1]}, {"ok": 2}), {1, 2, 3}, limit=7)
    h = SimpleNamespace(verdict="healthy", reasons=[], notes=[])
    apply(h, ph)
    assert (ph.partitions, ph.leaderless, h.verdict, h.reasons) == (1, 0, "healthy", [])
