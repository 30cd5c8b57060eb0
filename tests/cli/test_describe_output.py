"""describe --output json / table, --watch, and the cases where Kafka's tool
crashes (leader not among the voters, clock drift)."""

from __future__ import annotations

import json
import re
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from pty_screen import default_sigint
from quorumctl.domain.quorum import quorum_from_partition
from quorumctl.render import quorum as render_quorum
from quorumctl.testing.scenarios import demo_cluster
from quorumctl.testing.sim import SimulatedCluster, node, replica


CID = "rTcAzcTXQpG_6c1zYns8Xw"
D1, D2, D3, D4 = "DfqkWOlJTZ-abG8pUGocIA", "4BuDMaJKttH3vcqDCog2og", "eAmx4J3YZ63RPobrVgXBAw", "Ft5irZuen_hAwkaw5_cxsg"
T0 = 1795305697138  # 2026-11-22T00:01:37.138Z


def lagging() -> SimulatedCluster:
    """Leader 1; follower 2 a little behind; follower 3 stuck for 9 s."""
    c = SimulatedCluster(
        CID,
        1,
        4,
        200,
        [
            replica(1, 210, T0, T0, D1),
            replica(2, 205, T0 - 150, T0 - 300, D2),
            replica(3, 120, T0 - 9000, T0 - 9100, D3),
        ],
        [replica(4, 210, T0 - 80, T0 - 80, D4)],
        [
            node(1, ("CONTROLLER", "localhost", 19191)),
            node(2, ("CONTROLLER", "::1", 19192)),
            node(3, ("CONTROLLER", "localhost", 19193)),
        ],
    )
    c.add_nodes()
    return c


def test_status_json(cli):
    with lagging() as c:
        code, out, err = cli("describe", "status", "--bootstrap-controller", c.node_by_id(2).address, "-o", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc.pop("source") == c.node_by_id(1).address  # asked the leader directly
    t = doc.pop("time")
    assert isinstance(t["ms"], int) and t["iso"].endswith("Z")
    assert doc == {
        "clusterId": CID,
        "leaderId": 1,
        "leaderEpoch": 4,
        "highWatermark": 200,
        "maxFollowerLag": 90,
        "maxFollowerLagTimeMs": 9100,
        "currentVoters": [
            {"id": 1, "directoryId": D1, "endpoints": ["CONTROLLER://localhost:19191"]},
            {"id": 2, "directoryId": D2, "endpoints": ["CONTROLLER://[::1]:19192"]},
            {"id": 3, "directoryId": D3, "endpoints": ["CONTROLLER://localhost:19193"]},
        ],
        "currentObservers": [{"id": 4, "directoryId": D4, "endpoints": []}],
        "describeQuorumVersion": 2,
    }
    assert out.endswith("}\n") and out.count("\n") == 1  # one compact JSON document


def test_replication_json(cli):
    with lagging() as c:
        code, out, err = cli("describe", "replication", "--bootstrap-server", c.brokers()[0].address, "-o", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert (doc["clusterId"], doc["leaderId"], doc["leaderEpoch"], doc["highWatermark"]) == (CID, 1, 4, 200)
    rows = doc["replicas"]
    assert [(r["nodeId"], r["directoryId"], r["status"], r["logEndOffset"], r["lag"]) for r in rows] == [
        (1, D1, "Leader", 210, 0),
        (2, D2, "Follower", 205, 5),
        (3, D3, "Follower", 120, 90),
        (4, D4, "Observer", 210, 0),
    ]
    assert rows[0]["lastFetchTimestamp"]["ms"] == T0
    assert rows[0]["lastFetchTimestamp"]["iso"] == "2026-11-22T00:01:37.138Z"
    assert rows[2]["lastCaughtUpTimestamp"] == {
        "ms": T0 - 9100,
        "iso": "2026-11-22T00:01:28.038Z",
        "age": rows[2]["lastCaughtUpTimestamp"]["age"],
    }
    assert rows[2]["lastCaughtUpTimestamp"]["age"].endswith("ago") or rows[2]["lastCaughtUpTimestamp"][
        "age"
    ].startswith("in ")


def _quorum(**kw):
    part = {
        "leaderId": 1,
        "leaderEpoch": 4,
        "highWatermark": 200,
        "currentVoters": [
            replica(1, 210, T0, T0, D1),
            replica(2, 205, T0 - 150, T0 - 300, D2),
            replica(3, 120, T0 - 9000, T0 - 9100, D3),
        ],
        "observers": [replica(4, 210, T0 - 80, T0 - 80, D4)],
    }
    part.update(kw)
    return quorum_from_partition(part, [node(1, ("CONTROLLER", "localhost", 19191))], 2, "h:1", CID)


def test_replication_table_highlights_lagging_and_dead_replicas():
    from rich.console import Console

    t = render_quorum.replication_table(_quorum(), T0 + 500)
    assert [row.style for row in t.rows] == ["bold green", "yellow", "red", ""]
    console = Console(record=True, width=220, color_system=None)
    console.print(t)
    text = console.export_text()
    assert "2026-11-22T00:01:37.138Z (500 ms ago)" in text
    assert "2026-11-22T00:01:28.038Z (9.6 s ago)" in text
    assert "Replication of __cluster_metadata-0 (leader 1, epoch 4, high watermark 200)" in text


def test_status_table():
    from rich.console import Console

    console = Console(record=True, width=200, color_system=None)
    console.print(render_quorum.status_table(_quorum(), T0))
    text = console.export_text()
    for needle in (
        "Cluster id",
        CID,
        "Leader",
        "1 (epoch 4)",
        "Max follower lag",
        "90",
        "9100 ms",
        "CONTROLLER://localhost:19191",
        "DescribeQuorum v2",
    ):
        assert needle in text


def test_table_through_the_cli(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    with lagging() as c:
        code, out, err = cli("describe", "replication", "--bootstrap-server", c.brokers()[0].address, "-o", "table")
    assert (code, err) == (0, "")
    assert "Replication of __cluster_metadata-0" in out and "Follower" in out and D3 in out


def test_leader_not_among_voters(cli):
    # Kafka's tool throws NoSuchElementException here; quorumctl still shows what it knows
    q = _quorum(leaderId=7)
    assert render_quorum.status_text(q).splitlines()[4:6] == [
        "MaxFollowerLag:         unknown",
        "MaxFollowerLagTimeMs:   unknown",
    ]
    lines = render_quorum.replication_text(q).splitlines()
    assert [line.split("\t")[6].strip() for line in lines[1:]] == ["Follower"] * 3 + ["Observer"]
    assert [line.split("\t")[3].strip() for line in lines[1:]] == ["unknown"] * 4
    assert render_quorum.status_doc(q, T0)["maxFollowerLag"] is None
    # ... and when the leader is an observer (removing itself), it is found there
    q2 = _quorum(leaderId=4)
    assert [(r.status, r.lag) for r in render_quorum.replication_rows(q2)] == [
        ("Leader", 0),
        ("Follower", 0),
        ("Follower", 5),
        ("Follower", 90),
    ]
    with SimulatedCluster(CID, 7, 4, 200, [replica(1, 10, T0, T0)], []) as c:
        c.add_broker(4).start()
        code, out, err = cli("describe", "status", "--bootstrap-server", c.brokers()[0].address)
    assert code == 0
    assert err == "warning: leader 7 is not among the voters or observers; lag values are unknown\n"


def test_human_readable_clock_drift_warns_instead_of_failing(cli):
    from quorumctl.render.quorum import clock_drift, replication_text

    q = _quorum()
    now = T0 - 1000  # the leader's clock is 1 s ahead of ours
    assert clock_drift(q, now) == [
        "warning: clock drift: the leader's timestamps are up to 1000 ms ahead of this machine's clock"
    ]
    assert replication_text(q, True, now).splitlines()[1].split("\t")[4].strip() == "-1000 ms ago"


# -- --watch -----------------------------------------------------------------------------


def _exe():
    exe = shutil.which("quorumctl", path=str(Path(sys.executable).parent))
    assert exe
    return exe


def _watch(args, lines_wanted, stop_after=None, timeout=20):
    # PYTHONFAULTHANDLER: should Ctrl-C ever fail to stop it, SIGABRT below
    # makes the child print where every thread was, and the assertion shows it
    p = subprocess.Popen(
        [_exe(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200", "PYTHONFAULTHANDLER": "1"},
        preexec_fn=default_sigint,
    )
    got = []
    deadline = time.monotonic() + timeout
    try:
        while len(got) < lines_wanted and time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            got.append(line)
            if stop_after and len(got) == stop_after[0]:
                stop_after[1]()
    finally:
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGABRT)
            out, err = p.communicate()
            err = "did not stop within 10 s of SIGINT:\n" + err
    return p.returncode, got, err


def test_watch_json_lines_follow_the_live_quorum():
    c = demo_cluster()
    try:
        code, lines, err = _watch(
            [
                "describe",
                "replication",
                "--bootstrap-controller",
                c.node_by_id(1).address,
                "-o",
                "json",
                "--watch",
                "0.2",
            ],
            3,
        )
    finally:
        c.stop()
    assert (code, err) == (0, "")
    docs = [json.loads(line) for line in lines]
    assert len(docs) == 3 and all(d["leaderId"] == 1 for d in docs)
    # live mode: the leader's timestamps move forward between refreshes
    ts = [d["replicas"][0]["lastFetchTimestamp"]["ms"] for d in docs]
    assert ts == sorted(ts) and ts[0] < ts[-1]


def test_watch_keeps_going_when_the_cluster_blips():
    c = demo_cluster()
    stopped = []

    def stop():
        c.stop()
        stopped.append(True)
        time.sleep(1.5)  # some refreshes fail before the Ctrl-C (--watch 0.2, refused at once)

    code, lines, err = _watch(
        [
            "describe",
            "status",
            "--bootstrap-server",
            c.brokers()[0].address,
            "-o",
            "text",
            "--watch",
            "0.2",
            "--timeout",
            "1",
        ],
        9,
        stop_after=(8, stop),
        timeout=20,
    )
    c.stop()
    assert stopped
    assert lines[0].startswith("ClusterId:") and lines[8] == "\n"  # blocks separated by a blank line
    # after the stop, errors are reported (one line each, with their time) and the watch goes on
    # until Ctrl-C, which exits 3: the last refresh failed
    errors = err.splitlines()
    assert code == 3 and len(errors) >= 2, err
    assert all(re.fullmatch(r"quorumctl: error: .* \(at \d\d:\d\d:\d\d\)", e) for e in errors[:-1]), err
    assert re.fullmatch(r"quorumctl: error: stopped after a failed refresh \(at \d\d:\d\d:\d\d\): .*", errors[-1])


def test_watch_table_keeps_the_last_good_view_when_the_cluster_stops():
    """On a terminal: the last table stays, the error and its time appear beneath
    it, and Ctrl-C then exits 3 (the quorum did not answer the last refresh)."""
    from pty_screen import PtyRun

    c = demo_cluster()
    try:
        r = PtyRun(
            [
                _exe(),
                "describe",
                "status",
                "--bootstrap-controller",
                c.node_by_id(1).address,
                "--watch",
                "0.2",
                "--timeout",
                "1",
            ],
            cols=160,
        )
        assert r.wait_for(lambda t: "refreshing every 0.2 s" in t and "xScPa4HuQdHtNJ_0TeOP8g" in t), r.text()
    finally:
        c.stop()
    assert r.wait_for(lambda t: " error: " in t), r.text()
    screen = r.text()
    r.interrupt()
    code, err = r.finish()
    assert re.search(r"^Leader +1 \(epoch 3\)$", screen, re.M), screen  # the last view is still there
    rows = screen.splitlines()
    error_row = next(i for i, line in enumerate(rows) if " error: " in line)
    assert error_row > max(i for i, line in enumerate(rows) if "xScPa4HuQdHtNJ_0TeOP8g" in line)
    assert re.match(r"\d\d:\d\d:\d\d error: cannot connect to 127\.0\.0\.1:\d+: connection refused", rows[error_row])
    assert "the view above is the last good one" in screen
    assert code == 3 and re.fullmatch(
        r"quorumctl: error: stopped after a failed refresh \(at \d\d:\d\d:\d\d\): "
        r"cannot connect .*\n",
        err,
    ), (code, err)


def test_watch_table_renders_and_stops_cleanly():
    c = demo_cluster()
    p = None
    try:
        p = subprocess.Popen(
            [
                _exe(),
                "describe",
                "replication",
                "--bootstrap-server",
                c.brokers()[0].address,
                "-o",
                "table",
                "--watch",
                "0.2",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "COLUMNS": "200"},
            preexec_fn=default_sigint,
        )
        # interrupt once it has drawn a view (two DescribeQuorum answers), not after a fixed
        # time: on a loaded machine the process may take seconds to start
        deadline = time.monotonic() + 60
        while sum(1 for _node, api, _v in list(c.requests) if api == 55) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=10)
    finally:
        if p is not None and p.poll() is None:  # never leave a watcher running after a failure
            p.kill()
            p.communicate()
        c.stop()
    assert p.returncode == 0 and err == ""
    assert "Replication of __cluster_metadata-0" in out


def test_watch_must_be_positive(cli):
    code, out, err = cli("describe", "status", "--bootstrap-server", "h:1", "--watch", "0")
    assert code == 2 and err == "quorumctl: error: --watch must be a positive number of seconds, not 0\n"
