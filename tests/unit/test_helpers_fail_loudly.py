"""The test helpers' own checks fail when their input is missing: a check that has nothing
to compare must not pass (verify_clean on a dir of temporary files, the chaos helper's
log-matching checks on a dir without a metadata log or a `state` that compared nothing), and
the cluster launcher gives up on a node that keeps dying with what that node logged."""

from __future__ import annotations

import subprocess

import pytest

import recover_chaos as rc
from quorumctl.testing.synth import B, write_replica


def test_verify_clean_fails_on_a_dir_with_nothing_to_verify(verify_clean, tmp_path):
    d = tmp_path / "d"
    (d / "__cluster_metadata-0").mkdir(parents=True)
    (d / "__cluster_metadata-0" / "00000000000000000000.log.part").write_bytes(b"\0" * 10)
    with pytest.raises(pytest.fail.Exception, match="nothing to verify"):
        verify_clean(d)
    verify_clean(d, temporaries_ok=True)  # the state an interrupted write leaves, when the caller expects it
    (d / "__cluster_metadata-0" / "00000000000000000000.log.part").unlink()
    with pytest.raises(pytest.fail.Exception, match="nothing to verify"):
        verify_clean(d, temporaries_ok=True)  # nothing at all is never a pass


def test_log_matching_fails_without_a_metadata_log(tmp_path):
    write_replica(str(tmp_path / "a"), [B(1)] * 3, node_id=1)
    (tmp_path / "b").mkdir()
    with pytest.raises(AssertionError, match="no metadata log to compare"):
        rc.log_matching_clashes({"a": tmp_path / "a", "b": tmp_path / "b"})
    with pytest.raises(AssertionError, match="no metadata log to compare"):
        rc.log_matching_clashes({"a": tmp_path / "a"})
    write_replica(str(tmp_path / "c"), [B(1)] * 3, node_id=2)
    assert rc.log_matching_clashes({"a": tmp_path / "a", "c": tmp_path / "c"}) == []


def test_state_clashes_fails_when_state_compared_nothing(tmp_path):
    write_replica(str(tmp_path / "a"), [B(1)] * 3, node_id=1)
    with pytest.raises(AssertionError, match="no log-matching comparison"):
        rc.state_clashes([tmp_path / "a", tmp_path / "missing"])  # state refuses: no JSON at all
    with pytest.raises(AssertionError, match="no log-matching comparison"):
        rc.state_clashes([tmp_path / "a"])  # one replica: nothing compared
    write_replica(str(tmp_path / "c"), [B(1)] * 3, node_id=2)
    assert rc.state_clashes([tmp_path / "a", tmp_path / "c"]) == []


def dying_cluster(
    tmp_path, deaths: int, reason: str = "cluster: b4 died during startup", stopped: str = "", logs: str = ""
):
    """A Kafka wrapper whose `cluster start` (or `start-node`, logging `reason`, the script
    saying `stopped`) fails `deaths` times, then starts; broker 4's log ends with Kafka's
    registration give-up, and gets `logs` at each failed start."""
    k = object.__new__(rc.Kafka)
    k.d, k.n, k.nb, k.log_marks, k.notes = tmp_path, 3, 1, {}, []
    (tmp_path / "logs").mkdir(parents=True)
    (tmp_path / "logs" / "b4.log").write_text(
        "[2026-12-07 19:57:10,231] ERROR [BrokerLifecycleManager id=4] Shutting down because we were"
        " unable to register with the controller quorum. (org.apache.kafka.server.BrokerLifecycleManager)\n"
        "[2026-12-07 19:58:38,578] INFO App info kafka.server for 4 unregistered\n"
    )
    calls: list[str] = []

    def run(*args, **kw):
        calls.append(args[0])
        if args[0] in ("start", "start-node") and calls.count(args[0]) <= deaths:
            with open(tmp_path / "logs" / "b4.log", "a") as f:
                f.write(logs)
        if args[0] == "start" and calls.count("start") <= deaths:
            raise AssertionError(f"cluster start --timeout 5 failed (1):\n{reason}")
        if args[0] == "start-node" and calls.count("start-node") <= deaths:
            if reason:
                with open(tmp_path / "logs" / "b4.log", "a") as f:
                    f.write(f"[2026-12-07 19:59:00,000] ERROR ... {reason}\n")
            return subprocess.CompletedProcess(
                args, 1, "b4: node.id 4 pid 77", f"cluster: b4 died during startup\n{stopped}"
            )
        return subprocess.CompletedProcess(args, 0, "", "")

    k.run, k.stop, k.info = run, lambda: calls.append("stop"), lambda: {"CLUSTER_ID": "cid"}
    return k, calls


def test_launch_starts_a_cluster_again_after_two_deaths(tmp_path):
    k, calls = dying_cluster(tmp_path, deaths=2)
    k.launch(start_timeout=5)
    assert calls == ["start", "stop", "start", "stop", "start"]
    assert k.cluster_id == "cid"
    assert k.notes == ["cluster: b4 died during startup: started again"] * 2


def test_launch_fails_on_a_third_death_with_the_dead_nodes_log(tmp_path):
    k, calls = dying_cluster(tmp_path, deaths=3)
    with pytest.raises(AssertionError) as e:
        k.launch(start_timeout=5)
    assert calls == ["start", "stop"] * 3
    assert "unable to register with the controller quorum" in str(e.value)
    assert "App info kafka.server for 4 unregistered" in str(e.value)
    assert "b4.log 2" in str(e.value)  # the logs dir's listing, with sizes


def test_launch_raises_any_other_start_failure_at_once(tmp_path):
    k, calls = dying_cluster(tmp_path, deaths=1, reason="cluster: timeout waiting for b4")
    with pytest.raises(AssertionError, match="timeout waiting for b4"):
        k.launch(start_timeout=5)
    assert calls == ["start", "stop"]


def test_start_node_starts_again_a_broker_that_gave_up_registering_once(tmp_path):
    reason = "Shutting down because we were unable to register with the controller quorum."
    k, calls = dying_cluster(tmp_path, deaths=1, reason=reason)
    assert k.start_node(4, check=True).returncode == 0
    assert calls == ["start-node", "start-node"]
    assert k.notes == ["node 4 gave up registering with the quorum: started again"]
    k, calls = dying_cluster(tmp_path / "twice", deaths=2, reason=reason)
    with pytest.raises(AssertionError, match="start-node 4 --timeout 200 failed"):
        k.start_node(4, check=True)
    assert calls == ["start-node", "start-node"]


def test_start_node_gives_up_on_any_other_death(tmp_path):
    k, calls = dying_cluster(tmp_path, deaths=1, reason="Exiting Kafka due to fatal exception")
    assert k.start_node(4).returncode == 1
    assert calls == ["start-node"] and k.notes == []


def test_start_node_starts_again_a_node_the_script_stopped_after_saying_it_died(tmp_path):
    """The script says "died during startup", then "stopped (pid N)", which it says only of a
    live JVM: its liveness check missed one still starting; nothing was logged."""
    k, calls = dying_cluster(tmp_path, deaths=1, reason="", stopped="b4: stopped (pid 77)")
    assert k.start_node(4, check=True).returncode == 0
    assert calls == ["start-node", "start-node"]
    assert k.notes == ["node 4 was said dead while starting: started again"]
    k, calls = dying_cluster(tmp_path / "gone", deaths=1, reason="")  # really gone: not stopped
    assert k.start_node(4).returncode == 1 and calls == ["start-node"]


# Kafka 4.1's own lines (ghost-broker-4.1's broker 5 in CI), the voter sets shortened
VOTERS_2 = "INFO [RaftManager id=5] Latest set of voters is VoterSet(voters={1=VoterNode(...)}) at offset 2\n"
CUT_TO_0 = "INFO [RaftManager id=5] Truncated to offset 0 from Fetch response from leader 3\n"
SNAPSHOT = "INFO [RaftManager id=5] Loading snapshot (OffsetAndEpoch[offset=131, epoch=2]) since log start\n"
BOOTSTRAP = "INFO [RaftManager id=1] Loading snapshot (OffsetAndEpoch[offset=0, epoch=0]) since log start\n"
NO_VOTERS = "INFO [RaftManager id=5] Starting voters are VoterSet(voters={})\n"
SOME_VOTERS = "INFO [RaftManager id=5] Starting voters are VoterSet(voters={1=VoterNode(...)})\n"


def test_lost_voter_set_reads_kafkas_lines():
    assert rc.lost_voter_set(VOTERS_2 + CUT_TO_0)  # cut below the voters, none read after
    assert not rc.lost_voter_set(VOTERS_2 + CUT_TO_0 + VOTERS_2)  # read again
    assert not rc.lost_voter_set(VOTERS_2 + CUT_TO_0.replace("offset 0", "offset 3"))  # cut above
    assert not rc.lost_voter_set(CUT_TO_0)  # nothing read before the cut
    assert rc.lost_voter_set(SNAPSHOT + NO_VOTERS)  # its own snapshot carries none
    assert not rc.lost_voter_set(SNAPSHOT + SOME_VOTERS)
    assert not rc.lost_voter_set(BOOTSTRAP + NO_VOTERS)  # formatted so: not the bug
    assert not rc.lost_voter_set(NO_VOTERS)  # a broker's first start: no snapshot yet
    assert not rc.lost_voter_set(SNAPSHOT + SOME_VOTERS + NO_VOTERS)  # a later start, none loaded


def test_launch_sets_aside_the_metadata_replica_of_a_broker_that_lost_the_voter_set(tmp_path):
    k, calls = dying_cluster(tmp_path, deaths=1, logs=VOTERS_2 + CUT_TO_0)
    replica = tmp_path / "data" / "b4" / "__cluster_metadata-0"
    replica.mkdir(parents=True)
    (replica / "00000000000000000000.log").write_bytes(b"x")
    k.launch(start_timeout=5)
    assert calls == ["start", "stop", "start"]
    assert not replica.exists()
    assert (tmp_path / "aside" / "b4-0" / "00000000000000000000.log").read_bytes() == b"x"
    assert k.notes == [
        "cluster: b4 died during startup: it had lost the voter set (a Kafka bug): its metadata"
        " replica set aside, started again"
    ]


def test_launch_refetches_a_broker_that_started_without_the_voter_set(tmp_path):
    """Struck after it found the controller, the broker started: killed, its replica set
    aside, started again; a healthy start touches nothing."""
    k, calls = dying_cluster(tmp_path, deaths=0)
    replica = tmp_path / "data" / "b4" / "__cluster_metadata-0"
    replica.mkdir(parents=True)
    k.launch(start_timeout=5)
    assert calls == ["start"] and replica.is_dir()

    def start(*args, **kw):
        calls.append(args[0])
        if args[0] == "start":
            with open(tmp_path / "logs" / "b4.log", "a") as f:
                f.write(VOTERS_2 + CUT_TO_0)
        return subprocess.CompletedProcess(args, 0, "", "")

    k.run, k.kill, calls[:] = start, lambda node: calls.append(f"kill {node}"), []
    k.launch(start_timeout=5)
    assert calls == ["start", "kill 4", "start-node"]
    assert not replica.exists() and (tmp_path / "aside" / "b4-0").is_dir()
    assert k.notes == ["b4 lost the voter set (a Kafka bug): its metadata replica set aside"]


def test_launch_keeps_the_replica_of_a_broker_that_died_otherwise(tmp_path):
    """The lost voter set of an earlier start (before the mark) is not this death's cause."""
    k, calls = dying_cluster(tmp_path, deaths=1)
    (tmp_path / "logs" / "b4.log").write_text(SNAPSHOT + NO_VOTERS + VOTERS_2)
    replica = tmp_path / "data" / "b4" / "__cluster_metadata-0"
    replica.mkdir(parents=True)
    k.launch(start_timeout=5)
    assert replica.is_dir() and not (tmp_path / "aside").exists()
    assert k.notes == ["cluster: b4 died during startup: started again"]


def test_start_node_sets_aside_the_replica_of_a_broker_that_lost_the_voter_set(tmp_path):
    reason = "Shutting down because we were unable to register with the controller quorum."
    k, calls = dying_cluster(tmp_path, deaths=1, reason=reason, logs=SNAPSHOT + NO_VOTERS)
    replica = tmp_path / "data" / "b4" / "__cluster_metadata-0"
    replica.mkdir(parents=True)
    assert k.start_node(4, check=True).returncode == 0
    assert calls == ["start-node", "start-node"]
    assert not replica.exists() and (tmp_path / "aside" / "b4-0").is_dir()


@pytest.mark.java  # importing the lab asks `java -version` (kafka41's skip reason)
def test_lab_starts_once_more_a_broker_that_lost_the_voter_set(tmp_path, monkeypatch):
    """The lab's start wait: such a broker is launched again without its metadata replica;
    one that dies again, or dies of anything else, fails the start with its log."""
    import lab as lab_mod

    class Exited:
        def poll(self):
            return 1

        returncode = 1

    lab = object.__new__(lab_mod.Lab)
    lab.d, lab._log_marks = tmp_path, {}
    b4 = lab_mod.Host("b4", "10.33.0.4", 4, "broker", Exited())
    lab.hosts = {"b4": b4}
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "b4.log").write_text(SNAPSHOT + NO_VOTERS)
    replica = tmp_path / "data" / "b4" / "__cluster_metadata-0"
    replica.mkdir(parents=True)
    launched = []

    def launch(h):  # the second start: it serves
        launched.append(h.name)
        lab._log_marks[h.name] = (tmp_path / "logs" / "b4.log").stat().st_size
        with open(tmp_path / "logs" / "b4.log", "a") as f:
            f.write("INFO [KafkaRaftServer nodeId=4] Kafka Server started\n")
        h.proc = subprocess.Popen(["sleep", "5"])

    monkeypatch.setattr(lab, "_launch", launch, raising=False)
    lab._wait_started([b4], 5)
    b4.proc.kill()
    assert launched == ["b4"] and not replica.exists() and (tmp_path / "aside" / "b4-0").is_dir()

    b4.proc, lab._log_marks = Exited(), {}  # dies of something else: no second start
    (tmp_path / "logs" / "b4.log").write_text("ERROR Exiting Kafka due to fatal exception\n")
    replica.mkdir()
    with pytest.raises(RuntimeError, match="b4 exited"):
        lab._wait_started([b4], 5)
    assert launched == ["b4"] and replica.is_dir()
