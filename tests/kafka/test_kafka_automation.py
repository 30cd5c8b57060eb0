"""Issue 37 on a real Kafka 4.3 dynamic quorum (3 controllers + 1 broker, one
cluster for the module): `probe`, `wait` and `serve` through the incidents
they exist for, with a real Prometheus (Debian's package) scraping `serve`
and evaluating the shipped alert rules.

Each incident is also recorded: the alert-relevant series Prometheus scraped
around it become a `promtool test rules` file (written to tmp and tested here;
with QUORUMCTL_RECORD_ALERTS=1 also into docs/alerts/tests/, the fixtures
tests/unit/test_alert_rules.py runs without Kafka).
  1. a frozen follower: liveness fails after the grace period on it alone;
     `wait can-restart` of the other follower blocks until it thaws;
     can-lose-0 and voter-behind fire
  2. a broker killed and restarted: not ready until unfenced and caught up
  3. the majority gone (2 of 3 controllers killed): no node fails liveness,
     `wait healthy --timeout 5` exits 1 saying there is no leader; no-leader and
     stalled fire
  4. a flapping leader (frozen past the fetch timeout three times, as a GC
     pause does): flapping fires
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from kafka41 import home_of, needs_kafka, start_cluster, until

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "alerts" / "kraft-quorum.rules.yml"
FIXTURES = ROOT / "docs" / "alerts" / "tests"
PROMETHEUS, PROMTOOL = shutil.which("prometheus"), shutil.which("promtool")

pytestmark = [
    needs_kafka,
    pytest.mark.skipif(
        PROMETHEUS is None or PROMTOOL is None, reason="no prometheus/promtool on PATH (Debian's `prometheus` package)"
    ),
]


@pytest.fixture(scope="module")
def cluster(cli, tmp_path_factory):
    """One Kafka 4.3 dynamic quorum for the module (a longer start timeout than the shared
    fixture's: a broker on a starved machine has taken over 150 s to register)."""
    home_of("4.3")
    c = start_cluster(cli, tmp_path_factory, "automation-4.3", dynamic=True, version="4.3", start_timeout=300)
    try:
        yield c
    finally:
        c.discard()


ENV = dict(os.environ, PYTHONPATH=str(ROOT))
# the series the shipped alerts read (everything else serve exports is checked by the query test)
ALERT_SERIES = (
    "kraft_quorum_has_leader",
    "kraft_quorum_high_watermark_age_seconds",
    "kraft_quorum_leader_epoch_changes_total",
    "kraft_quorum_can_lose_voters",
    "kraft_quorum_voter_caught_up",
    "kraft_quorum_stale_registrations",
    "kraft_quorum_up",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 10) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, OSError) as e:  # not listening (yet)
        return 0, str(e).encode()


class Stack:
    """`quorumctl serve` on the cluster and a Prometheus scraping it every second, with the rules."""

    def __init__(self, cluster, tmp: Path):
        self.c, self.tmp = cluster, tmp
        self.serve_port, self.prom_port = free_port(), free_port()
        self.serve = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "quorumctl",
                "serve",
                "--listen",
                f"127.0.0.1:{self.serve_port}",
                "--bootstrap-controller",
                ",".join(cluster.controllers),
                "--bootstrap-server",
                cluster.broker,
                "--interval",
                "1",
                "--timeout",
                "1",
                "--grace",
                "8",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(tmp / "serve.err", "wb"),
            env=ENV,
        )
        (tmp / "prometheus.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: ['{RULES}']\n"
            "scrape_configs:\n  - job_name: kraft-quorum\n"
            f"    static_configs: [{{targets: ['127.0.0.1:{self.serve_port}']}}]\n"
        )
        self.prom = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={tmp / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.prom_port}",
                "--log.level=warn",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(tmp / "prometheus.err", "wb"),
        )

    def stop(self):
        for p in (self.serve, self.prom):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in (self.serve, self.prom):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def api(self, path: str, **params) -> dict:
        code, body = get(f"http://127.0.0.1:{self.prom_port}/api/v1/{path}?{urllib.parse.urlencode(params)}")
        assert code == 200, body[:500]
        doc = json.loads(body)
        assert doc["status"] == "success", doc
        return doc["data"]

    def value(self, query: str) -> list[tuple[dict, float]]:
        return [(r["metric"], float(r["value"][1])) for r in self.api("query", query=query)["result"]]

    def firing(self) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        for a in self.api("alerts")["alerts"]:
            if a["state"] == "firing":
                out.setdefault(a["labels"]["alertname"], []).append(a["labels"])
        return out

    def record(self, start: float, end: float) -> list[tuple[str, str]]:
        """The alert series scraped in [start, end], one value a second, as promtool input series."""
        series = []
        n = int(end - start) + 1
        for name in ALERT_SERIES:
            res = self.api("query_range", query=name, start=f"{start:.3f}", end=f"{start + n - 1:.3f}", step="1")
            for r in res["result"]:
                labels = {k: v for k, v in r["metric"].items() if k not in ("__name__", "job", "instance")}
                vals = {round(float(t) - start): v for t, v in r["values"]}
                text = " ".join(_num(vals[i]) if i in vals else "_" for i in range(n))
                sel = name + ("{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else "")
                series.append((sel, text))
        return series


def _num(v: str) -> str:
    f = float(v)
    return str(int(f)) if f == int(f) else f"{f:.3f}".rstrip("0")


@pytest.fixture(scope="module")
def stack(cluster, tmp_path_factory):
    s = Stack(cluster, tmp_path_factory.mktemp("automation-stack"))
    try:
        until(
            "prometheus ready",
            lambda: (
                get(f"http://127.0.0.1:{s.prom_port}/-/ready", 2)[0] == 200
                if s.prom.poll() is None
                else pytest.fail((s.tmp / "prometheus.err").read_text())
            ),
            60,
        )
        until("the quorum metrics in prometheus", lambda: s.value("kraft_quorum_voters"), 60)
        yield s
    finally:
        s.stop()


def fixture_file(name: str, series, window_s: int, expect: list[tuple[int, str, list[dict]]]) -> str:
    """A promtool test file: the recorded series and, per (eval second, alert), the alerts expected
    firing then (their annotations from the rules, the labels put in)."""
    import yaml

    rules = {r["alert"]: r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]}

    def exp(alert: str, labels: dict) -> dict:
        r = rules[alert]
        ann = {k: v.replace("{{ $labels.voter }}", labels.get("voter", "")) for k, v in r["annotations"].items()}
        return {"exp_labels": {**r["labels"], **labels}, "exp_annotations": ann}

    doc = {
        "rule_files": [os.path.relpath(RULES, FIXTURES)],
        "evaluation_interval": "1s",
        "tests": [
            {
                "name": name,
                "interval": "1s",
                "input_series": [{"series": s, "values": v} for s, v in series],
                "alert_rule_test": [
                    {"eval_time": f"{t}s", "alertname": a, "exp_alerts": [exp(a, lab) for lab in labels]}
                    for t, a, labels in expect
                ],
            }
        ],
    }
    head = (
        f"# Recorded by tests/kafka/test_kafka_automation.py from a real Kafka 4.3 quorum ({name}),\n"
        f"# one value a second over {window_s} s, as `quorumctl serve` exported and Prometheus scraped them.\n"
    )
    return head + yaml.safe_dump(doc, sort_keys=False, width=10_000)


def prove(stack, name: str, start: float, end: float, expect) -> None:
    """Record the incident's series, and check with promtool that the expected alerts fire on them."""
    text = fixture_file(name, stack.record(start, end), int(end - start), expect)
    out = stack.tmp / f"{name}.yml"
    FIXTURES.mkdir(parents=True, exist_ok=True)
    tmp = FIXTURES / f".{name}.{os.getpid()}.yml"  # beside the rules: the relative rule path holds
    tmp.write_text(text)
    try:
        p = subprocess.run([PROMTOOL, "test", "rules", str(tmp)], capture_output=True, text=True, timeout=120)
    finally:
        tmp.unlink()
    out.write_text(text)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:] + f"\n(fixture kept at {out})"
    if os.environ.get("QUORUMCTL_RECORD_ALERTS") == "1":
        (FIXTURES / f"{name}.yml").write_text(text)


def probe(cli, cluster, addr: str, role: str, kind: str, *args: str) -> tuple[int, dict]:
    code, out, err = cli(
        "probe",
        addr,
        "--role",
        role,
        "--kind",
        kind,
        "-o",
        "json",
        "--timeout",
        "2",
        "--bootstrap-controller",
        ",".join(cluster.controllers),
        *args,
    )
    assert err == "" and out, (code, err)
    return code, json.loads(out)


def health(cli, cluster) -> dict:
    code, out, err = cli(
        "describe", "health", "--bootstrap-controller", ",".join(cluster.controllers), "-o", "json", "--timeout", "3"
    )
    return json.loads(out) if out else {}


def healthy(cli, cluster, limit_s: float = 150) -> dict:
    return until(
        "a healthy quorum",
        lambda: (lambda d: d if d.get("verdict") == "healthy" else None)(health(cli, cluster)),
        limit_s,
    )


def test_prometheus_scrapes_the_quorum_metrics(cli, cluster, stack):
    doc = healthy(cli, cluster)
    until(
        "3 caught-up voters scraped",
        lambda: (
            stack.value("kraft_quorum_voters_caught_up")
            == [
                (
                    {
                        "__name__": "kraft_quorum_voters_caught_up",
                        "instance": f"127.0.0.1:{stack.serve_port}",
                        "job": "kraft-quorum",
                    },
                    3.0,
                )
            ]
        ),
        30,
    )
    one = {
        q: stack.value(q)[0][1]
        for q in (
            "kraft_quorum_voters",
            "kraft_quorum_majority",
            "kraft_quorum_can_lose_voters",
            "kraft_quorum_has_leader",
            "kraft_quorum_up",
            "kraft_quorum_leader_epoch",
        )
    }
    assert one == {
        "kraft_quorum_voters": 3,
        "kraft_quorum_majority": 2,
        "kraft_quorum_can_lose_voters": 1,
        "kraft_quorum_has_leader": 1,
        "kraft_quorum_up": 1,
        "kraft_quorum_leader_epoch": doc["leaderEpoch"],
    }
    assert sorted(m["voter"] for m, v in stack.value("kraft_quorum_voter_caught_up") if v == 1) == ["1", "2", "3"]
    assert [m["node"] for m, _ in stack.value("kraft_quorum_observer_lag_records")] == ["4"]
    assert stack.value('kraft_quorum_verdict{verdict="healthy"}')[0][1] == 1
    assert stack.value("kraft_quorum_high_watermark_age_seconds")[0][1] < 5
    assert stack.firing() == {}
    # the HTTP probe on the exporter: 200 ready, 503 for the wrong role
    code, body = get(f"http://127.0.0.1:{stack.serve_port}/probe?node={cluster.broker}&role=broker")
    assert code == 200 and body.decode().startswith("ready ok: broker 4 ("), body
    code, body = get(f"http://127.0.0.1:{stack.serve_port}/probe?node={cluster.controllers[0]}&role=broker")
    assert (code, body.decode()) == (
        400,
        f"ready failed: {cluster.controllers[0]} answers as a controller, not a "
        "broker: check --role and the addresses\n",
    )


def test_frozen_follower(cli, cluster, stack):
    doc = healthy(cli, cluster)
    leader = doc["leaderId"]
    followers = [i for i in (1, 2, 3) if i != leader]
    other = 2 if 2 in followers else followers[0]  # the issue's `wait can-restart 2` where 2 follows
    frozen = next(i for i in followers if i != other)
    addr = {i: cluster.controllers[i - 1] for i in (1, 2, 3)}
    t_freeze = time.time()
    cluster.freeze(frozen)
    waiter = None
    try:
        time.sleep(2.5)  # past controller.quorum.fetch.timeout.ms: not caught up by the leader's clock
        t_wait = time.time()
        waiter = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "quorumctl",
                "wait",
                "can-restart",
                str(other),
                "--bootstrap-controller",
                ",".join(cluster.controllers),
                "--interval",
                "1",
                "--timeout",
                "180",
                "-o",
                "json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=ENV,
        )
        code, d = probe(cli, cluster, addr[frozen], "controller", "live", "--grace", "8")
        assert code == 0 and "the grace period is 8 s" in d["reason"], d["reason"]
        code, d = probe(cli, cluster, addr[frozen], "controller", "ready")
        assert code == 1 and d["reason"] == (
            f"controller {frozen} ({addr[frozen]}) is not ready: does not answer: no answer within the 2 s timeout"
        ), d["reason"]
        time.sleep(max(0.0, t_freeze + 10 - time.time()))
        code, d = probe(cli, cluster, addr[frozen], "controller", "live", "--grace", "8")
        assert code == 1 and d["reason"].startswith(
            f"controller {frozen} ({addr[frozen]}) is not live: attached to nothing for "
        ), d["reason"]
        assert f"(grace 8 s) while {leader} leads epoch {doc['leaderEpoch']}" in d["reason"]
        assert d["detachedSeconds"] > 8 and d["leader"]["replica"] == "voter"
        for i in (leader, other):
            for kind in ("live", "ready"):
                code, d = probe(cli, cluster, addr[i], "controller", kind, "--grace", "8")
                assert code == 0, d["reason"]
        assert waiter.poll() is None, waiter.communicate()
        # the live rules fire on what Prometheus scraped (for: 30s)
        until(
            "can-lose-0 and voter-behind firing",
            lambda: {"KRaftQuorumCanLoseNoVoters", "KRaftQuorumVoterBehind"} <= set(stack.firing()),
            60,
        )
        assert [a["voter"] for a in stack.firing()["KRaftQuorumVoterBehind"]] == [str(frozen)]
        time.sleep(3)  # firing for a few scrapes: the recorded fixture holds it too
        assert waiter.poll() is None
    finally:
        t_thaw = time.time()
        cluster.run("cont-node", str(frozen))
    out, err = waiter.communicate(timeout=60)
    t_exit = time.time()
    result = json.loads(out)
    assert (waiter.returncode, result["ok"], err) == (0, True, b""), (out, err)
    # it blocked until the thaw: from its first sample (its interpreter's start, at most 3 s
    # on a loaded machine, after t_wait) to the thaw, a sample a second
    assert result["elapsedSeconds"] > t_thaw - t_wait - 3 and result["samples"] >= int(t_thaw - t_wait) - 3, (
        result,
        t_thaw - t_wait,
    )
    # "exits 0 at the first sample where the condition holds" (docs/automation.md), a sample
    # every --interval (1 s), each given at most the interval: the sample in flight at the thaw
    # may have asked before it, the next starts within a second and ends within another; the
    # thawed follower's first fetch (the leader counts it caught up then) within half a second
    assert t_exit - t_thaw < 2 * 1 + 0.5, t_exit - t_thaw
    healthy(cli, cluster)
    time.sleep(3)
    prove(
        stack,
        "frozen-follower",
        t_freeze - 10,
        t_thaw + 2,
        [
            (10, "KRaftQuorumCanLoseNoVoters", []),
            (10, "KRaftQuorumVoterBehind", []),
            (int(t_thaw - t_freeze) + 8, "KRaftQuorumCanLoseNoVoters", [{}]),
            (int(t_thaw - t_freeze) + 8, "KRaftQuorumVoterBehind", [{"voter": str(frozen)}]),
        ],
    )


def test_broker_killed_and_restarted_is_not_ready_until_unfenced_and_caught_up(cli, cluster, stack):
    healthy(cli, cluster)
    b = cluster.brokers[0]
    cluster.kill(b)
    code, d = probe(cli, cluster, cluster.broker, "broker", "ready")
    assert code == 1 and d["reason"].startswith(
        f"broker at {cluster.broker} is not ready: does not answer: "
        f"cannot connect to {cluster.broker}: connection refused"
    )
    seen: list[dict] = []
    started = threading.Thread(target=cluster.start_node, args=(b,))
    started.start()
    try:

        def ready():
            code, d = probe(cli, cluster, cluster.broker, "broker", "ready")
            seen.append(d)
            return code == 0

        until("the restarted broker ready", ready, 180, every=0.2)
    finally:
        started.join(300)
    first = seen[-1]
    # what the probe saw, for whoever reads the run (the states depend on the machine's speed)
    (stack.tmp / "broker-restart.json").write_text(json.dumps([d["reason"] for d in seen], indent=1))
    assert (first["own"]["registered"], first["own"]["fenced"], first["leader"]["caughtUp"]) == (True, False, True)
    assert first["leader"]["replica"] == "observer" and first["nodeId"] == b
    assert first["leader"]["logEndOffset"] >= first["leader"]["highWatermark"] - 50
    before = [d["reason"].split(" is not ready: ", 1)[1] for d in seen[:-1]]
    assert before and all(d["ok"] is False for d in seen[:-1])
    # what it went through: down until ready. A restarting 4.3 broker enables its listeners
    # only once caught up and unfenced (BrokerServer.startup), so a restart shows no "fenced"
    # or "behind": test_kafka_lab.py drives a running broker through both, proven by Kafka
    assert before[0].startswith("does not answer"), before
    assert all(
        r.startswith(
            ("does not answer", "is registered but fenced", "not caught up", "is not registered", "the leader ")
        )
        for r in before
    ), sorted(set(before))


def test_majority_gone_liveness_holds_everywhere_and_wait_healthy_says_no_leader(cli, cluster, stack):
    doc = healthy(cli, cluster)
    leader = doc["leaderId"]
    follower = next(i for i in (1, 2, 3) if i != leader)
    survivor = next(i for i in (1, 2, 3) if i not in (leader, follower))
    t0 = time.time()
    for i in (leader, follower):
        cluster.kill(i)
    try:
        time.sleep(3)
        for i in (1, 2, 3):
            code, d = probe(cli, cluster, cluster.controllers[i - 1], "controller", "live", "--grace", "0")
            assert code == 0, d["reason"]
            assert "liveness holds: no controller answered as the leader" in d["reason"], d["reason"]
        code, d = probe(cli, cluster, cluster.controllers[survivor - 1], "controller", "ready")
        assert code == 1 and "no controller answered as the leader" in d["reason"], d["reason"]
        t = time.monotonic()
        code, out, err = cli(
            "wait",
            "healthy",
            "--bootstrap-controller",
            ",".join(cluster.controllers),
            "--timeout",
            "5",
            "--interval",
            "1",
        )
        took = time.monotonic() - t
        assert (code, err) == (1, ""), err
        assert (
            out.startswith("healthy: still false after ")
            and ": unhealthy: no controller answered DescribeQuorum as the leader" in out
        ), out
        assert took < 8, took
        until(
            "no-leader and stalled firing",
            lambda: {"KRaftQuorumNoLeader", "KRaftQuorumStalled"} <= set(stack.firing()),
            60,
        )
        time.sleep(3)
    finally:
        t_back = time.time()
        threads = [threading.Thread(target=cluster.start_node, args=(i,)) for i in (leader, follower)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(300)
    code, out, err = cli(
        "wait",
        "healthy",
        "--bootstrap-controller",
        ",".join(cluster.controllers),
        "--timeout",
        "150",
        "--interval",
        "1",
    )
    assert code == 0, out + err
    time.sleep(3)
    prove(
        stack,
        "no-leader",
        t0 - 10,
        t_back,
        [
            (9, "KRaftQuorumNoLeader", []),
            (9, "KRaftQuorumStalled", []),
            (int(t_back - t0) + 8, "KRaftQuorumNoLeader", [{}]),
            (int(t_back - t0) + 8, "KRaftQuorumStalled", [{}]),
        ],
    )


def test_flapping_leader(cli, cluster, stack):
    """A leader that keeps stalling (a GC pause, a swapping host: frozen past the fetch timeout)
    loses its leadership again and again; no JVM restart is needed to flap."""
    healthy(cli, cluster)
    t0 = time.time()
    for _ in range(3):
        leader = healthy(cli, cluster)["leaderId"]
        cluster.freeze(leader)
        try:
            until("a new leader", lambda: health(cli, cluster).get("leaderId") not in (None, leader), 60)
        finally:
            cluster.run("cont-node", str(leader))
    healthy(cli, cluster)
    until("flapping firing", lambda: "KRaftQuorumFlapping" in stack.firing(), 60)
    assert stack.value("kraft_quorum_leader_epoch_changes_total")[0][1] >= 3
    time.sleep(3)
    t1 = time.time()
    time.sleep(2)
    prove(
        stack,
        "flapping-leader",
        t0 - 10,
        t1,
        [(9, "KRaftQuorumFlapping", []), (int(t1 - t0) + 8, "KRaftQuorumFlapping", [{}])],
    )
