"""replace-controller and cluster clear-registration against the simulated quorum
(real Kafka: tests/lab/test_kafka_lab.py and tests/kafka/test_kafka_membership.py): the
preflight's refusals, the order of the two voter changes, the resumption after an
interrupted --apply, and the states of the re-registration workaround's steps."""

from __future__ import annotations

import json
import shlex

from quorumctl.wire import messages
from quorumctl.testing.sim import SimulatedCluster, replica

CID = "rTcAzcTXQpG_6c1zYns8Xw"
D1, D2, D3 = "DfqkWOlJTZ-abG8pUGocIA", "4BuDMaJKttH3vcqDCog2og", "eAmx4J3YZ63RPobrVgXBAw"
NEW = "v_4bVSFx__ZesG0jJ7PIRQ"


def replaced(behind2_ms: int = 0, observer_fetch_ms: int = 0) -> SimulatedCluster:
    """Voters 1 (leader), 2, 3; node 3 back on a new disk: the voter (3, D3) has not
    fetched for a minute, node 3 fetches as the observer (3, NEW)."""
    import time

    now = int(time.time() * 1000)
    c = SimulatedCluster(
        CID,
        1,
        7,
        500,
        [
            replica(1, 500, now, now, D1),
            replica(2, 500, now - behind2_ms, now - behind2_ms, D2),
            replica(3, 310, now - 60_000, now - 60_000, D3),
        ],
        [replica(3, 500, now - observer_fetch_ms, now - observer_fetch_ms, NEW)],
    )
    c.add_nodes(controllers=(1, 2, 3), brokers=(), profile="4.3")
    return c


def voters(c) -> list[tuple[int, str]]:
    return sorted((r["replicaId"], r["replicaDirectoryId"]) for r in c.voters)


def test_replace_controller_dry_run_then_apply(cli):
    with replaced() as c:
        c.advertise_controllers()
        opt = ["--bootstrap-controller", c.node_by_id(1).address]
        port3 = c.node_by_id(3).port
        code, out, err = cli("replace-controller", "3", *opt)
        assert (code, err) == (0, "")
        lines = out.splitlines()
        assert lines[1:] == [
            f"checked: controller 3 fetches as an observer with directory id {NEW}",
            "checked: it is 0 offset(s) behind the leader (the leader adds a voter only once it has caught up; "
            "--apply retries until --timeout)",
            f"checked: the voter set names controller 3 with directory id {D3} (voters 1, 2, 3)",
            "checked: without controller 3 the caught-up voters 1, 2 are a majority of 2 (need 2)",
            f"checked: endpoints CONTROLLER://127.0.0.1:{port3} (as the voter set stores them)",
            f"checked: 127.0.0.1:{port3} answers as a controller of cluster {CID}",
            f"step 1: RemoveRaftVoter controller 3 directory id {D3}: the voter set becomes 1, 2",
            f"step 2: AddRaftVoter controller 3 directory id {NEW} endpoints CONTROLLER://127.0.0.1:{port3}: "
            "the voter set becomes 1, 2, 3",
            "DRY RUN of replacing controller 3: run again with --apply to make these changes",
        ]
        assert cli("replace-controller", "3", *opt, "--dry-run") == (code, out, err)  # the default, named
        assert voters(c) == [(1, D1), (2, D2), (3, D3)]
        assert not any(k in (messages.ADD_RAFT_VOTER, messages.REMOVE_RAFT_VOTER) for _n, k, _v in c.requests)

        code, out, err = cli("replace-controller", "3", *opt, "--apply", "-o", "json")
        assert (code, err) == (0, "")
        doc = json.loads(out)
        assert voters(c) == [(1, D1), (2, D2), (3, NEW)]
        # removal first (the leader refuses to add an id already in the voter set), then the addition
        changes = [k for _n, k, _v in c.requests if k in (messages.ADD_RAFT_VOTER, messages.REMOVE_RAFT_VOTER)]
        assert changes == [messages.REMOVE_RAFT_VOTER, messages.ADD_RAFT_VOTER]
        assert c.add_voter_requests[-1][1]["listeners"] == [{"name": "CONTROLLER", "host": "127.0.0.1", "port": port3}]
        assert doc["done"] == [f"removed voter 3 directory id {D3}", f"added voter 3 directory id {NEW}"]
        # the removed (3, D3) is listed as an observer that does not fetch (as Kafka's leader does)
        assert doc["verified"] == [
            f"verified: voters 1, 2, 3 (leader 1, epoch 7), controller 3 with directory id {NEW}; no observer "
            "fetches under a voter's id",
            f"note: the leader lists the old directory id {D3} as an observer that does not fetch, until 5 minutes "
            "after its last fetch (Kafka's observer session timeout)",
        ]
        # nothing left to replace, and health is no longer naming it
        code, out, err = cli("replace-controller", "3", *opt)
        assert code == 1 and "nothing to replace" in err


def test_replace_controller_refusals(cli):
    # voter 2 behind too: without 3 the set of 2 needs both caught up; the observer stopped fetching
    with replaced(behind2_ms=30_000, observer_fetch_ms=40_000) as c:
        c.advertise_controllers()
        code, out, err = cli("replace-controller", "3", "--bootstrap-controller", c.node_by_id(1).address)
        assert (code, out) == (1, "")
        assert err == (
            f"quorumctl: error: refusing to replace controller 3: controller 3 (directory id {NEW}) has "
            "not fetched from the leader in the last 15 s: it must run before it can become a voter; "
            "without controller 3 the voter set has 2 voters and needs 2, but only 1 are caught up (1): "
            "removing 3 first would stall the quorum; bring the others back first\n"
        )
        assert voters(c) == [(1, D1), (2, D2), (3, D3)]
        code, out, err = cli(
            "replace-controller", "3", "--bootstrap-controller", c.node_by_id(1).address, "--endpoint", "CONTROLLER:/x"
        )
        assert (code, err) == (
            2,
            "quorumctl: error: invalid --endpoint 'CONTROLLER:/x': expected NAME://HOST:PORT, "
            "e.g. CONTROLLER://c3:9093\n",
        )


def test_replace_controller_resumes_after_the_removal(cli):
    """An --apply cut short after the removal: ID is no longer a voter while it fetches
    as an observer; a re-run adds it alone (its endpoints given, the voter set lost them)."""
    with replaced() as c:
        c.advertise_controllers()
        port3 = c.node_by_id(3).port
        c.remove_voter({"voterId": 3, "voterDirectoryId": D3})
        opt = ["--bootstrap-controller", c.node_by_id(1).address]
        code, out, err = cli("replace-controller", "3", *opt)
        assert (code, out) == (2, "")
        assert err == (
            "quorumctl: error: controller 3's endpoints are not in the voter set any more: give them with "
            "--endpoint NAME://HOST:PORT (its controller.listener.names as advertised)\n"
        )
        code, out, err = cli(
            "replace-controller", "3", *opt, "--endpoint", f"CONTROLLER://127.0.0.1:{port3}", "--apply"
        )
        assert (code, err) == (0, "")
        assert (
            "checked: controller 3 is not a voter (voters 1, 2): the old directory id was removed already; "
            "only the addition remains" in out
        )
        lines = out.splitlines()
        i = lines.index(f"done: added voter 3 directory id {NEW}")
        assert lines[i + 1] == (
            f"verified: voters 1, 2, 3 (leader 1, epoch 7), controller 3 with directory id {NEW}; "
            "no observer fetches under a voter's id"
        )
        assert out.endswith(f"Replaced controller 3: directory id (removed before) -> {NEW}\n")
        assert voters(c) == [(1, D1), (2, D2), (3, NEW)]


def ghost() -> SimulatedCluster:
    """Voters 1-3 on 4.3 (metadata.version up to 30) at 4.1-IV1; controller 4 removed
    earlier, still registered with 4.1's range (7-27)."""
    import time

    now = int(time.time() * 1000)
    c = SimulatedCluster(CID, 1, 7, 500, [replica(i, 500, now, now, d) for i, d in ((1, D1), (2, D2), (3, D3))], [])
    c.add_nodes(controllers=(1, 2, 3, 4), brokers=(), profile="4.3")
    for n in c.controllers():
        n.features["metadata.version"] = (7, 27 if n.node_id == 4 else 30)
    return c


def steps(out: str) -> list[str]:
    return [s["state"] for s in json.loads(out)["steps"]]


def test_clear_registration_re_registering_steps(cli, tmp_path):
    import time

    with ghost() as c:
        c.advertise_controllers()
        c.node_by_id(4).stop()
        opt = ["--bootstrap-controller", c.node_by_id(1).address, "--metadata", "4.3-IV0"]
        code, out, err = cli("cluster", "clear-registration", "4", *opt)
        assert (code, err) == (1, "")
        lines = out.splitlines()
        assert lines[:4] == [
            "checked: node 4 is not a voter (voters 1, 2, 3); metadata.version 4.1-IV1",
            f"checked: controller 4 is registered at {c.node_by_id(4).address}",
            "checked: Kafka's verdict on metadata.version 4.3-IV0 (UpdateFeatures, validateOnly): The update failed "
            "for all features since the following feature had an error: Invalid update version 30 for feature "
            "metadata.version. Controller 4 only supports versions 7-27",
            "method: re-register",
        ]
        assert (
            lines[4] == "step 1 [to do] (operator): write controller-4.properties on a host with the new release "
            "(its address may be another's):"
        )
        assert lines[5:13] == [
            "    node.id=4",
            "    process.roles=controller",
            "    controller.quorum.bootstrap.servers=" + ",".join(n.address for n in c.controllers()[:3]),
            "    controller.quorum.auto.join.enable=false",
            "    controller.listener.names=CONTROLLER",
            f"    listeners=CONTROLLER://{c.node_by_id(4).address}",
            f"    advertised.listeners=CONTROLLER://{c.node_by_id(4).address}",
            "    log.dirs=/var/lib/kafka/reregister-4",
        ]
        assert lines[-1] == "node 4's registration still blocks: do the steps marked [to do], then run this again"
        # the check is this command's own line, complete (without --metadata: the release's highest level)
        check = f"quorumctl cluster clear-registration 4 --bootstrap-controller {c.node_by_id(1).address}"
        assert (
            f"step 4 [to do] (quorumctl): check that the registration covers metadata.version 4.3-IV0: {check} "
            "--metadata 4.3-IV0"
        ) in lines
        code, out, err = cli(*shlex.split(check)[1:])
        assert (
            code == 1
            and (
                f"step 4 [to do] (quorumctl): check that the registration covers metadata.version 4.3-IV0: {check} "
                "--metadata 4.3-IV0"
            )
            in out.splitlines()
        ), out + err

        conf = tmp_path / "c4.properties"
        conf.write_text(
            "node.id=4\nprocess.roles=controller\ncontroller.quorum.voters=1@h:1\n"
            "controller.quorum.auto.join.enable=true\n"
        )
        code, out, err = cli("cluster", "clear-registration", "4", *opt, "--node-config", str(conf))
        assert (code, out) == (2, "")
        assert err == (
            f"quorumctl: error: {conf}: controller.quorum.voters is set: a static voter list names it a "
            f"voter; use controller.quorum.bootstrap.servers; {conf}: controller.quorum.bootstrap.servers "
            f"is not set; {conf}: controller.quorum.auto.join.enable is true: it would add itself to the "
            "voters\n"
        )
        conf.write_text(
            f"node.id=4\nprocess.roles=controller\ncontroller.quorum.bootstrap.servers=h:1\nlog.dirs={tmp_path / 'd'}\n"
        )
        opt += ["--node-config", str(conf), "-o", "json"]
        code, out, err = cli("cluster", "clear-registration", "4", *opt)
        assert (code, steps(out)) == (1, ["done", "to do", "to do", "to do", "to do"])

        # the operator formats and starts it on the new release: it fetches and registers 4.3's range
        now = int(time.time() * 1000)
        c.observers.append(replica(4, 500, now, now, NEW))
        c.node_by_id(4).features["metadata.version"] = (7, 30)
        code, out, err = cli("cluster", "clear-registration", "4", *opt)
        assert (code, steps(out)) == (1, ["done", "done", "running", "done", "to do"])
        assert json.loads(out)["steps"][4]["evidence"] == "DescribeQuorum: observer 4 still fetches"
        # stopped: the leader keeps its last fetch; 15 s later (by the leader's clock) it does not fetch any more
        c.observers[-1].update(lastFetchTimestamp=now - 30_000, lastCaughtUpTimestamp=now - 30_000)
        code, out, err = cli("cluster", "clear-registration", "4", *opt)
        assert (code, steps(out)) == (0, ["done"] * 5)
        assert json.loads(out)["cleared"] is True
        # the upgrade that follows, as a command line run as printed
        code, out, err = cli("cluster", "clear-registration", "4", *opt[:-2])
        upgrade = (
            f"quorumctl features upgrade --metadata 4.3-IV0 --bootstrap-controller {c.node_by_id(1).address} --apply"
        )
        assert (code, out.splitlines()[-1]) == (0, f"next: {upgrade}"), out + err
        code, out, err = cli(*shlex.split(upgrade)[1:])
        assert (code, err) == (0, ""), out
        assert c.finalized["metadata.version"] == 30


def test_clear_registration_other_cases(cli):
    with ghost() as c:
        c.advertise_controllers()
        opt = ["--bootstrap-controller", c.node_by_id(1).address]
        code, out, err = cli("cluster", "clear-registration", "2", *opt)
        assert (code, err) == (
            1,
            "quorumctl: error: node 2 is a voter (voters 1, 2, 3): not a ghost; remove it from "
            "the voters first (quorumctl remove-controller) if it is gone\n",
        )
        # no controller 9; a broker 9 the controllers cannot list: unknown, never "nothing to clear"
        code, out, err = cli("cluster", "clear-registration", "9", *opt)
        assert (code, out.splitlines()[-1]) == (
            1,
            "node 9 is no registered controller; whether it is a registered broker is not known from the "
            "controllers: run the step above, or this command with --bootstrap-server",
        )
        # at 4.4-IV2 (33) Kafka can unregister it: the unregistration's checks, then the request
        c.finalized["metadata.version"] = 33
        code, out, err = cli("cluster", "clear-registration", "4", *opt, "-o", "json")
        assert code == 1 and "controller 4 still runs" in err
        c.node_by_id(4).stop()
        code, out, err = cli("cluster", "clear-registration", "4", *opt, "-o", "json")
        doc = json.loads(out)
        assert (code, doc["method"], doc["cleared"], doc["applied"]) == (0, "unregister-controller", True, False)
        assert doc["steps"][0]["what"] == (
            f"quorumctl cluster unregister-controller --bootstrap-controller {c.node_by_id(1).address} --id 4 --apply"
        )
        # --dry-run names the default: the same plan, byte for byte, and nothing sent
        assert cli("cluster", "clear-registration", "4", *opt, "-o", "json", "--dry-run") == (code, out, err)
        plan = cli("cluster", "unregister-controller", *opt, "--id", "4")
        assert (plan.code, plan.err, plan.out.splitlines()[-1]) == (
            0,
            "",
            "DRY RUN of unregistering controller 4: run again with --apply to send it",
        )
        assert cli("cluster", "unregister-controller", *opt, "--id", "4", "--dry-run") == plan
        assert not [r for r in c.requests if r[1] == messages.UNREGISTER_CONTROLLER]


def test_replace_controller_addition_refused_after_the_removal(cli):
    """The leader refuses AddRaftVoter after the removal went through: exit 1 naming the
    command to run again; the re-run adds it alone."""
    from quorumctl.wire import kerrors

    with replaced() as c:
        c.advertise_controllers()
        leader, port3 = c.node_by_id(1), c.node_by_id(3).port
        opt = ["--bootstrap-controller", leader.address]
        add = c.add_voter
        c.add_voter = lambda body: (kerrors.INVALID_REQUEST, "Add voter request refused")
        code, out, err = cli("replace-controller", "3", *opt, "--apply")
        assert (code, out) == (1, "")
        assert err.startswith("quorumctl: error: controller 3 is not a voter: AddRaftVoter failed: ")
        assert err.endswith(
            f"; once it fetches and has caught up, run again: quorumctl replace-controller 3 "
            f"--bootstrap-controller {leader.address} --endpoint CONTROLLER://127.0.0.1:{port3} "
            "--apply\n"
        )
        assert voters(c) == [(1, D1), (2, D2)]
        c.add_voter = add
        code, out, err = cli(
            "replace-controller", "3", *opt, "--endpoint", f"CONTROLLER://127.0.0.1:{port3}", "--apply"
        )
        assert (code, err) == (0, "") and voters(c) == [(1, D1), (2, D2), (3, NEW)]


def test_doctor_with_only_a_controller_finds_the_ghost_controller(cli):
    """doctor --bootstrap-controller alone runs (no config, no log dir): the live checks find
    controller 4 registered but no voter, and its remedy is the clear-registration command."""
    with ghost() as c:
        c.advertise_controllers()
        c.node_by_id(4).stop()
        addr = c.node_by_id(1).address
        code, out, err = cli("doctor", "--bootstrap-controller", addr, "--timeout", "2", "-o", "json")
        assert (code, err) == (1, ""), out + err
        found = [f for f in json.loads(out)["findings"] if f["code"] == "stale-controller-registration"]
        assert [f["message"].split(" (")[0] for f in found] == ["controller 4 is registered"], found
        # the remedy names the address doctor was given, not HOST:PORT
        assert f"quorumctl cluster clear-registration 4 --bootstrap-controller {addr} --metadata" in found[0]["remedy"]
    code, out, err = cli("doctor")
    assert (code, err) == (
        2,
        "quorumctl: error: give at least one server.properties (--config), log dir, or --bootstrap-controller\n",
    )


def ghost_broker(fetch: bool = True, snapshot_records: int = 0) -> SimulatedCluster:
    """Controllers 1-3 (1 leads), broker 5 running, broker 6 registered but fenced and gone;
    with `fetch` the controllers serve their metadata log (Fetch, FetchSnapshot) as 4.3's do."""
    import time

    now = int(time.time() * 1000)
    c = SimulatedCluster(CID, 1, 7, 500, [replica(i, 500, now, now, d) for i, d in ((1, D1), (2, D2), (3, D3))], [])
    c.add_nodes(controllers=(1, 2, 3), brokers=(5, 6), profile="4.3")
    c.snapshot_records = snapshot_records
    for n in c.controllers():
        if fetch:
            n.apis[messages.FETCH], n.apis[messages.FETCH_SNAPSHOT] = (4, 18), (0, 1)
    c.node_by_id(6).fenced = True
    return c


def test_doctor_with_only_a_controller_finds_the_ghost_broker(cli):
    """doctor --bootstrap-controller alone reads the metadata log from the leader (Fetch with
    ReplicaId -1, FetchSnapshot first when the log starts at a snapshot) and names the fenced
    broker with the remedy it gives from a log dir: clear-registration through the running broker."""
    for snapshot_records in (0, 4):  # 4: the log starts after a snapshot (the leader answers SnapshotId)
        with ghost_broker(snapshot_records=snapshot_records) as c:
            c.advertise_controllers()
            c.node_by_id(6).stop()
            running = c.node_by_id(5).address
            code, out, err = cli("doctor", "--bootstrap-controller", c.node_by_id(2).address, "--timeout", "5")
            assert (code, err) == (1, ""), out + err
            lines = out.splitlines()
            assert lines[1] == (
                "Registered brokers [5, 6] (fenced [6]): the committed metadata log of the active controller "
                f"{c.node_by_id(1).address}, read to its high watermark {len(c.finalized) + 2}"
            )
            assert lines[2].startswith(
                "WARNING fenced-broker-registration: broker 6 is registered but fenced while broker 5"
            )
            assert lines[4] == (
                f"  remedy: if broker 6 is gone for good: quorumctl cluster clear-registration 6 --bootstrap-server "
                f"{running} (a dry run that checks it; --apply sends UnregisterBroker, as kafka-cluster.sh unregister "
                f"--bootstrap-server {running} --id 6 does); if it is only stopped, start it again"
            )
            fetches = [b for k, b in c.fetch_requests if k == messages.FETCH]
            snaps = [b for k, b in c.fetch_requests if k == messages.FETCH_SNAPSHOT]
            assert {b["topics"][0]["partitions"][0]["currentLeaderEpoch"] for b in fetches} == {7}
            assert {b.get("replicaState", {}).get("replicaId", -1) for b in fetches} == {-1}
            assert [b["topics"][0]["partitions"][0]["fetchOffset"] for b in fetches] == (
                [0] if not snapshot_records else [0, 4]
            )
            assert [b["replicaId"] for b in snaps] == ([-1] if snapshot_records else [])


def test_doctor_says_when_the_controllers_do_not_show_the_brokers(cli):
    """Controllers that refuse the fetch (no Fetch API; an authorizer's CLUSTER_AUTHORIZATION_FAILED,
    a top-level error with no partition): one line says the registered brokers are not visible
    and what shows them, not a silent "No findings."."""
    for fetch in (False, True):
        with ghost_broker(fetch=fetch) as c:
            c.advertise_controllers()
            c.node_by_id(6).stop()
            addr = c.node_by_id(1).address
            c.node_by_id(1).set_fault("error", messages.FETCH, (31, None, True))
            code, out, err = cli("doctor", "--bootstrap-controller", addr, "--timeout", "3")
            assert (code, err) == (0, ""), out + err
            why = (
                f"{addr} answered Fetch with CLUSTER_AUTHORIZATION_FAILED"
                if fetch
                else (f"{addr} does not support Fetch (API key 1)")
            )
            assert out.splitlines()[1:] == [
                f"Registered brokers not visible through the controller listener ({why}): give --bootstrap-server "
                "with a broker's address, or a controller's log dir, to check them",
                "No findings.",
            ]


def quorum_and_broker_6() -> SimulatedCluster:
    """A 4.3 quorum of controllers 1-3 (1 leads) and broker 6, not started."""
    import time

    now = int(time.time() * 1000)
    c = SimulatedCluster(CID, 1, 7, 500, [replica(i, 500, now, now, d) for i, d in ((1, D1), (2, D2), (3, D3))], [])
    c.add_nodes(controllers=(1, 2, 3), brokers=(), profile="4.3")
    c.add_broker(6, profile="4.3")
    return c


def test_clear_registration_through_the_controllers_reaches_a_broker(cli):
    """Only --bootstrap-controller: the controllers list no brokers, so a ghost broker's
    registration is not "nothing to clear" but unknown (exit 1) with the command that tells;
    that command, run as printed, sends UnregisterBroker to the controller (as
    kafka-cluster.sh unregister --bootstrap-controller does), and then there is nothing left."""
    c = quorum_and_broker_6()
    with c:
        c.advertise_controllers()
        ctl = c.node_by_id(1)
        ctl.apis[messages.UNREGISTER_BROKER] = (0, 0)
        gone = c.node_by_id(6)
        gone.fenced = True
        gone.stop()
        sent = lambda: [r for r in c.requests if r[1] == messages.UNREGISTER_BROKER]  # noqa: E731
        code, out, err = cli("cluster", "clear-registration", "6", "--bootstrap-controller", ctl.address)
        assert (code, err) == (1, "")
        printed = f"quorumctl cluster clear-registration 6 --bootstrap-controller {ctl.address} --apply"
        assert out.splitlines()[-4:] == [
            "method: unregister-broker",
            f"step 1 [to do] (quorumctl): {printed}",
            "    (whether broker 6 is registered is not known here: the controllers list only controllers; "
            "--bootstrap-server lists the brokers (fenced ones too), --apply sends UnregisterBroker to the "
            "controller, which answers whether it was registered)",
            "node 6 is no registered controller; whether it is a registered broker is not known from the "
            "controllers: run the step above, or this command with --bootstrap-server",
        ]
        assert sent() == [] and gone.registered
        code, out, err = cli(*printed.split()[1:], "-o", "json")  # the step, as printed
        assert (code, err) == (0, "")
        doc = json.loads(out)
        assert (doc["kind"], doc["applied"], doc["cleared"]) == ("broker", True, True)
        assert len(sent()) == 1 and not gone.registered
        code, out, err = cli(*printed.split()[1:])
        assert (code, out.splitlines()[-1]) == (0, "node 6 is not a registered broker: nothing to clear")


def test_clear_registration_through_a_follower_controller_reaches_the_active_one(cli):
    """--bootstrap-controller naming a controller that is not the active one first: the
    UnregisterBroker of --apply goes to the active controller (DescribeCluster names it), not
    to the first address, which would answer NOT_CONTROLLER (exit 3, seen on Kafka 4.3)."""
    c = quorum_and_broker_6()
    with c:
        c.advertise_controllers()
        for n in (1, 2, 3):
            c.node_by_id(n).apis[messages.UNREGISTER_BROKER] = (0, 0)
        gone = c.node_by_id(6)
        gone.fenced = True
        gone.stop()
        via = ",".join(c.node_by_id(n).address for n in (2, 3, 1))
        code, out, err = cli("cluster", "clear-registration", "6", "--bootstrap-controller", via, "--apply")
        assert (code, err) == (0, ""), out + err
        assert not gone.registered
        code, out, err = cli("cluster", "clear-registration", "6", "--bootstrap-controller", via, "--apply")
        assert (code, err, out.splitlines()[-1]) == (0, "", "node 6 is not a registered broker: nothing to clear")


def test_clear_registration_of_a_broker_sends_unregister_broker(cli):
    """The broker path (through --bootstrap-server): a fenced broker's registration, a dry run that
    sends nothing, then UnregisterBroker with --apply; a running broker refused; a broker no longer
    registered is nothing to clear."""
    import time

    now = int(time.time() * 1000)
    c = SimulatedCluster(CID, 1, 7, 500, [replica(i, 500, now, now, d) for i, d in ((1, D1), (2, D2), (3, D3))], [])
    c.add_nodes(controllers=(1, 2, 3), brokers=(), profile="4.3")
    for b in (5, 6):
        c.add_broker(b, profile="4.3", apis={messages.UNREGISTER_BROKER: (0, 0)})
    with c:
        c.advertise_controllers()
        gone = c.node_by_id(6)
        gone.fenced = True
        gone.stop()
        boot = c.node_by_id(5).address
        opt = ["--bootstrap-server", boot]
        sent = lambda: [r for r in c.requests if r[1] == messages.UNREGISTER_BROKER]  # noqa: E731
        code, out, err = cli("cluster", "clear-registration", "6", *opt)
        assert (code, err) == (0, "")
        assert out.splitlines() == [
            "checked: node 6 is not a voter (voters 1, 2, 3); metadata.version 4.1-IV1",
            "method: unregister-broker",
            f"step 1 [to do] (quorumctl): quorumctl cluster unregister --bootstrap-server {boot} --id 6 --apply",
            f"    (broker 6 is registered and fenced at {gone.address})",
            "DRY RUN of clearing node 6's registration: run again with --apply to send it",
        ]
        assert sent() == []

        code, out, err = cli("cluster", "clear-registration", "5", *opt, "--apply")
        assert (code, out) == (1, "")
        assert err == (
            f"quorumctl: error: refusing to clear broker 5's registration: broker 5 is registered and unfenced at "
            f"{boot}: it is running and heartbeating (the controller would take it back as soon as it heartbeats "
            "again); stop it, wait until it is fenced, then unregister\n"
        )
        assert sent() == [] and c.node_by_id(5).registered

        code, out, err = cli("cluster", "clear-registration", "6", *opt, "--apply", "-o", "json")
        assert (code, err) == (0, "")
        doc = json.loads(out)
        assert (doc["kind"], doc["method"], doc["applied"], doc["cleared"]) == (
            "broker",
            "unregister-broker",
            True,
            True,
        )
        assert [s["state"] for s in doc["steps"]] == ["done"]
        assert sent() == [(5, messages.UNREGISTER_BROKER, 0)] and not gone.registered

        code, out, err = cli("cluster", "clear-registration", "6", *opt)
        assert (code, err) == (0, "")
        assert out.splitlines()[1:] == [
            "method: unregister-broker",
            f"step 1 [done] (quorumctl): quorumctl cluster unregister --bootstrap-server {boot} --id 6 --apply",
            "    (broker 6 is not registered (registered: 5))",
            "node 6 is not a registered broker: nothing to clear",
        ]


def test_features_upgrade_blocked_by_a_ghost_names_clear_registration(cli):
    """A registered controller that is no voter blocks the upgrade: the refusal's note names
    `cluster clear-registration` with the target, whether the ghost answers (its range known) or
    not (Kafka's verdict names it)."""
    with ghost() as c:
        c.advertise_controllers()
        leader = c.node_by_id(1).address
        note = (
            "Note: controller 4 is registered but not a voter (voters 1, 2, 3): a ghost registration (a removed "
            "controller stays registered); clear it: quorumctl cluster clear-registration 4 --bootstrap-controller "
            f"{leader} --metadata 4.3-IV0 (docs/membership.md)"
        )
        args = ["features", "upgrade", "--metadata", "4.3-IV0", "--bootstrap-controller", leader, "-o", "text"]
        code, out, err = cli(*args)
        assert code == 1 and note in out.splitlines(), out + err
        assert "Blocker: controller 4 " in out
        c.node_by_id(4).stop()
        code, out, err = cli(*args)
        assert code == 1 and note in out.splitlines(), out + err
        assert [ln for ln in out.splitlines() if ln.startswith("Note: controller ")] == [note]


def test_features_upgrade_offline_names_clear_registration_for_a_ghost(cli, tmp_path):
    """Offline, from a log dir whose image holds voters 1-3 (on 4.1: up to 4.1-IV1) and controller 7,
    registered, no voter, still on 3.9's range: the upgrade is blocked by 7, and the note names
    `cluster clear-registration 7` with the target."""
    from quorumctl.logdir import segments
    from quorumctl.logdir.snapshots import encode_snapshot
    from quorumctl.testing.synth import B, T0, write_replica

    pdir = write_replica(str(tmp_path / "c1"), [B(1), B(1)], node_id=1)
    recs = [("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 21})]
    recs += [
        (
            "RegisterControllerRecord",
            0,
            {
                "controllerId": i,
                "incarnationId": "AAAAAAAAAAAAAAAAAAAAAQ",
                "zkMigrationReady": False,
                "endPoints": [{"name": "CONTROLLER", "host": "h", "port": 9090 + i, "securityProtocol": 0}],
                "features": [
                    {"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 21 if i == 7 else 27}
                ],
            },
        )
        for i in (1, 2, 3, 7)
    ]
    voters = [
        {
            "voterId": i,
            "voterDirectoryId": f"AAAAAAAAAAAAAAAAAAAAA{c}",
            "endpoints": [],
            "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1},
        }
        for i, c in ((1, "w"), (2, "A"), (3, "Q"))
    ]
    with open(f"{pdir}/{segments.snapshot_name(2, 1)}", "wb") as f:
        f.write(encode_snapshot(recs, epoch=1, kraft_version=1, voters=voters, timestamp_ms=T0))
    code, out, err = cli("features", "upgrade", str(tmp_path / "c1"), "--metadata", "4.0-IV0", "-o", "json")
    assert (code, err) == (1, ""), out + err
    doc = json.loads(out)
    assert [(b["kind"], b["id"]) for b in doc["blockers"]] == [("controller", 7)]
    assert [n for n in doc["notes"] if n.startswith("controller 7 ")] == [
        "controller 7 is registered but not a voter (voters 1, 2, 3): a ghost registration (a removed controller "
        "stays registered); clear it: quorumctl cluster clear-registration 7 --bootstrap-controller "
        "h:9091,h:9092,h:9093 --metadata 4.0-IV0 (docs/membership.md)"
    ]
