"""`quorumctl serve` on the simulated quorum: OpenMetrics on /metrics with the
quorum's values, a sample bounded by the interval when the leader hangs,
errors as metrics (the exporter outlives a quorum that vanishes), /probe, a
clean stop on SIGTERM; and prometheus_client imported by serve alone."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from quorumctl.live.automation.exporter import Sampler
from quorumctl.testing.sim import LiveMode, SimulatedCluster, replica

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
OPENMETRICS = "application/openmetrics-text; version=1.0.0"


def cluster() -> SimulatedCluster:
    now = int(time.time() * 1000)
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw",
        1,
        5,
        500,
        [replica(i, 500, now, now) for i in (1, 2, 3)],
        [replica(4, 490, now, now)],
        live=LiveMode(growth_per_s=4.0),
    )
    c.add_nodes(profile="4.3")
    return c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, accept: str | None = None) -> tuple[int, str, str]:
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()
    except (urllib.error.URLError, OSError):
        return 0, "", ""


def metric(body: str, name: str) -> float | None:
    m = re.search(rf"^{re.escape(name)} (\S+)$", body, re.M)
    return None if m is None else float(m.group(1))


def test_serve_exports_the_quorum_survives_its_loss_and_stops_on_sigterm(tmp_path):
    c = cluster().start()
    c.advertise_controllers()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "quorumctl",
            "serve",
            "--listen",
            f"127.0.0.1:{port}",
            "--bootstrap-controller",
            c.node_by_id(2).address,
            "--interval",
            "1",
            "--timeout",
            "5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and metric(get(base + "/metrics")[2], "kraft_quorum_voters") is None:
            time.sleep(0.2)
        code, ctype, body = get(base + "/metrics", OPENMETRICS)
        assert code == 200 and ctype.startswith("application/openmetrics-text; version=1.0.0"), ctype
        assert body.endswith("# EOF\n")
        values = {
            n: metric(body, n)
            for n in (
                "kraft_quorum_up",
                "kraft_quorum_has_leader",
                "kraft_quorum_leader_id",
                "kraft_quorum_leader_epoch",
                "kraft_quorum_voters",
                "kraft_quorum_voters_caught_up",
                "kraft_quorum_can_lose_voters",
                "kraft_quorum_controllers_answering",
            )
        }
        assert values == {
            "kraft_quorum_up": 1,
            "kraft_quorum_has_leader": 1,
            "kraft_quorum_leader_id": 1,
            "kraft_quorum_leader_epoch": 5,
            "kraft_quorum_voters": 3,
            "kraft_quorum_voters_caught_up": 3,
            "kraft_quorum_can_lose_voters": 1,
            "kraft_quorum_controllers_answering": 3,
        }
        assert metric(body, 'kraft_quorum_verdict{verdict="healthy"}') == 1, re.findall(
            r"^kraft_quorum_verdict.*", body, re.M
        )
        assert metric(body, 'kraft_quorum_observer_lag_records{node="4"}') is not None
        # the plain Prometheus text format to a scraper that does not ask for OpenMetrics
        code, ctype, plain = get(base + "/metrics")
        assert ctype.startswith("text/plain") and "# EOF" not in plain
        # /probe: by the exporter's known controllers only
        code, _, text = get(base + f"/probe?node={c.node_by_id(3).address}&role=controller&kind=ready")
        assert code == 200 and text.startswith(f"ready ok: controller 3 ({c.node_by_id(3).address}) is ready: ")
        code, _, text = get(base + f"/probe?node={c.node_by_id(4).address}&role=broker")
        assert code == 403 and "--probe-any-address" in text
        assert get(base + "/probe?node=x")[0] == 400 and get(base + "/nope")[0] == 404

        # the leader hangs: samples still take at most the interval (1 s), and say so
        c.silence(1)
        time.sleep(3.5)
        body = get(base + "/metrics")[2]
        assert metric(body, "kraft_quorum_has_leader") == 0
        assert metric(body, "kraft_quorum_sample_duration_seconds") <= 1 + 0.3
        # the whole quorum vanishes: errors counted, the exporter goes on
        c.stop()
        time.sleep(3.5)
        body = get(base + "/metrics")[2]
        assert metric(body, "kraft_quorum_up") == 0 and metric(body, 'kraft_quorum_verdict{verdict="unreachable"}') == 1
        assert metric(body, 'kraft_quorum_sample_errors_total{kind="unreachable"}') >= 2
        assert metric(body, "kraft_quorum_voters") is None  # unknown: left out, not made up
        assert p.poll() is None
    finally:
        c.stop()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert err.decode() == (f"quorumctl serve: http://127.0.0.1:{port}/metrics and /probe; sampling every 1 s\n")


def test_a_failing_sample_is_a_metric_not_a_crash():
    calls = []

    def sample(budget):
        calls.append(budget)
        raise RuntimeError("a bug")

    s = Sampler(sample, interval_s=2.0, timeout_s=5.0)
    snap = s.step()
    assert (calls, snap.sample_errors, snap.up, snap.last_error) == (
        [2.0],
        {"internal": 1},
        False,
        "RuntimeError: a bug",
    )


def test_bad_options_are_exit_2_before_serving(cli):
    code, out, err = cli("serve", "--listen", "nowhere")
    assert code == 2 and err.startswith("quorumctl: error: ") and "--listen" in err
    code, out, err = cli("serve", "--listen", "127.0.0.1:9464")
    assert (code, err) == (
        2,
        "quorumctl: error: nothing to sample: give --bootstrap-controller, --bootstrap-server, or --config\n",
    )
    code, out, err = cli("serve", "--interval", "0", "--bootstrap-controller", "h:1")
    assert (code, err) == (2, "quorumctl: error: --interval must be positive, not 0\n")


def test_only_serve_imports_prometheus_client():
    code = (
        "import sys, quorumctl.cli.main, quorumctl.cli.probe, quorumctl.cli.wait, quorumctl.cli.serve, "
        "quorumctl.live.automation.exporter, quorumctl.live.automation.node_probe, quorumctl.live.automation.gates; "
        "print([m for m in sys.modules if m.startswith('prometheus_client')])"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr
