"""`quorumctl wait` on the simulated quorum: it blocks while the condition is
false, returns at the first sample where it holds, exits 1 at the deadline
saying what blocks, 130 on Ctrl-C, and prints no progress into a pipe."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from quorumctl.live.automation.gates import check, wait_for
from quorumctl.testing.sim import SimulatedCluster, replica

ROOT = Path(__file__).resolve().parents[2]


def cluster(behind_ms: dict[int, int] | None = None) -> SimulatedCluster:
    now = int(time.time() * 1000)
    behind = {1: 0, 2: 100, 3: 100, **(behind_ms or {})}
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw",
        leader_id=1,
        leader_epoch=5,
        high_watermark=500,
        voters=[replica(i, 500, now - behind[i], now - behind[i]) for i in (1, 2, 3)],
        observers=[replica(4, 480, now - 9000, now - 9000)],
    )
    c.add_nodes(profile="4.3")
    return c


def boot(c) -> list[str]:
    return ["--bootstrap-controller", ",".join(e.address for e in c.controllers())]


def test_wait_healthy_without_a_leader_exits_1_saying_so(cli):
    with cluster() as c:
        c.silence(1)
        t0 = time.monotonic()
        code, out, err = cli("wait", "healthy", *boot(c), "--timeout", "2", "--interval", "0.5")
        took = time.monotonic() - t0
    assert (code, err) == (1, "")  # no progress line in a pipe
    assert out.startswith("healthy: still false after ") and "(timeout 2 s, " in out, out
    assert out.rstrip().endswith(
        "unhealthy: no controller answered DescribeQuorum as the leader; "
        "controller 2 ("
        + c.node_by_id(2).address
        + "), controller 3 ("
        + c.node_by_id(3).address
        + ") believe the leader is 1 (unreachable); "
        f"controller 1 ({c.node_by_id(1).address}): no answer within the " + out.rstrip().rsplit("within the ", 1)[1]
    ), out
    assert out.rstrip().endswith((" 0.5 s timeout", " 0.4 s timeout", " 0.3 s timeout")), out
    assert took < 6, took


def test_wait_can_restart_blocks_until_the_other_follower_catches_up(cli):
    with cluster(behind_ms={3: 6000}) as c:

        def catch_up():
            time.sleep(1.5)
            with c.lock:
                now = int(time.time() * 1000)
                for r in c.voters:
                    r.update(lastFetchTimestamp=now, lastCaughtUpTimestamp=now)

        t = threading.Thread(target=catch_up)
        t.start()
        t0 = time.monotonic()
        code, out, err = cli("wait", "can-restart", "2", *boot(c), "--timeout", "20", "--interval", "0.5", "-o", "json")
        took = time.monotonic() - t0
        t.join()
    doc = json.loads(out)
    assert (code, doc["ok"], doc["ids"]) == (0, True, [2]), doc
    assert doc["samples"] >= 3 and 1.5 <= took < 5, (doc, took)
    assert doc["reason"].startswith("node 2: caught up; without 2 the caught-up voters are 1, 3 (2 of 3)")


def test_caught_up_names_the_broker_behind_and_check_reasons(cli):
    with cluster() as c:
        code, out, err = cli("wait", "caught-up", "4,2", *boot(c), "--timeout", "1", "--interval", "0.5")
        assert code == 1 and out.rstrip().endswith(": observer 4 is 9000 ms behind"), out
        code, out, err = cli("wait", "leader", *boot(c), "--timeout", "1")
        assert code == 0 and out.startswith("leader: true after ") and out.rstrip().endswith("1 leads epoch 5")
        code, out, err = cli("wait", "can-restart", *boot(c))
        assert (code, err) == (2, "quorumctl: error: wait can-restart needs at least one node id\n")
        code, out, err = cli("wait", "soon", *boot(c))
        assert code == 2 and "unknown condition 'soon'" in err


def test_the_deadline_is_kept_and_a_sample_never_outlasts_the_interval():
    """With a sample that would hang, the wait ends at its deadline: each sample gets the interval."""
    budgets = []
    clock = [0.0]

    def sample(budget):
        budgets.append(budget)
        clock[0] += budget
        from quorumctl.errors import ClusterError

        raise ClusterError("cannot connect to h:1: timed out")

    r = wait_for(
        sample, "leader", [], 5.0, 2.0, clock=lambda: clock[0], sleep=lambda s: clock.__setitem__(0, clock[0] + s)
    )
    assert (r.ok, r.samples, budgets, r.elapsed_s) == (False, 3, [2.0, 2.0, 1.0], 5.0)
    assert r.reason == "nothing answered: cannot connect to h:1: timed out"


def test_ctrl_c_exits_130(tmp_path):
    with cluster() as c:
        c.silence(1)
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        p = subprocess.Popen(
            [sys.executable, "-m", "quorumctl", "wait", "healthy", *boot(c), "--interval", "0.5"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        time.sleep(3)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    assert p.returncode == 130, (out, err)
    assert out.decode().startswith("interrupted after ") and err == b""


def test_check_is_a_function_of_one_sample():
    from quorumctl.domain.health_verdict import Health, Inputs

    h = Health("unhealthy", ["no controller answered DescribeQuorum as the leader"], Inputs([], {}, 2000, 1.0, 1.0))
    assert check(h, "leader", []) == (False, "no leader: no controller answered DescribeQuorum as the leader")
    assert check(h, "caught-up", [2])[0] is False


def test_progress_only_on_a_terminal():
    import io

    from quorumctl.live.automation.gates import WaitResult
    from quorumctl.render.wait import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    r = WaitResult("can-restart", [2], False, "node 2: caught up; without 2 ...", 3, 4.2, 60)
    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        p = Progress(stream)
        p(r)
        p.done()
    assert pipe.getvalue() == ""
    assert tty.getvalue().startswith("\r\x1b[Kwaiting for can-restart 2 (4/60 s): node 2: caught up; without 2")
    assert tty.getvalue().endswith("\r\x1b[K")
