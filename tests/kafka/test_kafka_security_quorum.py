"""A secured quorum on real Kafka 4.3: three controllers and two brokers, each
its own process, with the controllers' listener SASL_SSL (OAUTHBEARER tokens
from a local OpenID Connect provider, validated against its JWKS, over TLS):
the controllers authenticate to each other and the brokers to them with those
tokens. The brokers' listener is TLS (SSL) only.

`describe status` and `describe replication` print what Kafka 4.3's
kafka-metadata-quorum prints with the same client.properties; `describe
health` says "healthy" over the controller listener and, from a broker with
--controller-command-config, over both; `probe` and `serve` (its metrics
scraped once) answer with each listener's credentials.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kafka41 import KAFKA43_HOME, free_base_port, mask_replication, mask_status, skip_reason, tool_env

pytest.importorskip("cryptography", reason="the test CA and the OIDC provider need cryptography")

import kdc as kdc_mod
from certs import TestCA, keytool_jks_keystore, keytool_jks_truststore
from oidc import OidcServer

REASON = skip_reason(KAFKA43_HOME)
pytestmark = [pytest.mark.kafka("4.3"), pytest.mark.java, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

SECRETS = {
    "store": "q-store-secret-4",
    "key": "q-key-secret-8",
    "trust": "q-trust-secret-2",
    "node_secret": "q-node-oidc-secret-6",
    "client_secret": "q-ops-oidc-secret-1",
}
CONTROLLERS = (1, 2, 3)
BROKERS = (4, 5)
OAUTH_LOGIN = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
OAUTH_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
CLUSTER_ID = "c2VjdXJlZHF1b3J1bTQ0MQ"


class Quorum:
    """Five Kafka 4.3 processes: controllers 1-3 (CONTROLLER, SASL_SSL/OAUTHBEARER),
    brokers 4-5 (BROKER, SSL)."""

    def __init__(self, d: Path, pki, oidc: OidcServer):
        self.d, self.pki, self.oidc = d, pki, oidc
        self.procs: dict[int, subprocess.Popen] = {}
        self.d.mkdir(parents=True, exist_ok=True)

    def addr(self, nid: int) -> str:
        return f"127.0.0.1:{self.base + nid}"

    @property
    def controllers(self) -> str:
        return ",".join(self.addr(i) for i in CONTROLLERS)

    @property
    def brokers(self) -> str:
        return ",".join(self.addr(i) for i in BROKERS)

    def config(self, nid: int) -> str:
        pki, oidc = self.pki, self.oidc
        ssl = lambda lo: [  # noqa: E731
            f"listener.name.{lo}.ssl.keystore.location={pki.server_keystore}",
            f"listener.name.{lo}.ssl.keystore.password={SECRETS['store']}",
            f"listener.name.{lo}.ssl.key.password={SECRETS['key']}",
            f"listener.name.{lo}.ssl.truststore.location={pki.truststore}",
            f"listener.name.{lo}.ssl.truststore.password={SECRETS['trust']}",
        ]
        lines = [
            f"node.id={nid}",
            "controller.quorum.voters=" + ",".join(f"{i}@{self.addr(i)}" for i in CONTROLLERS),
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=CONTROLLER:SASL_SSL,BROKER:SSL",
            "sasl.mechanism.controller.protocol=OAUTHBEARER",
            "listener.name.controller.sasl.enabled.mechanisms=OAUTHBEARER",
            # the node's own login (its token for the controllers) and the validation of others'
            f"listener.name.controller.oauthbearer.sasl.jaas.config={OAUTH_MODULE} required "
            f'clientId="kafka-node" clientSecret="{SECRETS["node_secret"]}" scope="kafka";',
            f"listener.name.controller.oauthbearer.sasl.login.callback.handler.class={OAUTH_LOGIN}",
            f"listener.name.controller.oauthbearer.sasl.server.callback.handler.class={OAUTH_VALIDATOR}",
            f"sasl.oauthbearer.token.endpoint.url={oidc.token_url}",
            f"sasl.oauthbearer.jwks.endpoint.url={oidc.jwks_url}",
            "sasl.oauthbearer.expected.audience=kafka",
            f"sasl.oauthbearer.expected.issuer={oidc.issuer}",
            *ssl("controller"),
            f"log.dirs={self.d / 'data' / str(nid)}",
            "num.network.threads=2",
            "num.io.threads=2",
        ]
        if nid in CONTROLLERS:
            lines += [
                "process.roles=controller",
                f"listeners=CONTROLLER://{self.addr(nid)}",
                f"advertised.listeners=CONTROLLER://{self.addr(nid)}",
            ]
        else:
            lines += [
                "process.roles=broker",
                f"listeners=BROKER://{self.addr(nid)}",
                f"advertised.listeners=BROKER://{self.addr(nid)}",
                "inter.broker.listener.name=BROKER",
                *ssl("broker"),
                "num.partitions=1",
                "offsets.topic.replication.factor=2",
                "transaction.state.log.replication.factor=2",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=2",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
            ]
        return "\n".join(lines) + "\n"

    def env(self) -> dict:
        env = tool_env(self.d)
        env.update(
            KAFKA_OPTS=f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={self.oidc.jwks_url},{self.oidc.token_url}",
            KAFKA_HEAP_OPTS="-Xmx256m -Xms128m",
        )
        return env

    def start(self, cli):
        for attempt in (1, 2, 3):
            self.base = free_base_port(span=len(CONTROLLERS) + len(BROKERS))
            shutil.rmtree(self.d / "data", ignore_errors=True)
            for nid in CONTROLLERS + BROKERS:
                conf = self.d / f"node{nid}.properties"
                conf.write_text(self.config(nid))
                code, out, err = cli(
                    "bootstrap", "format", "-c", str(conf), "-t", CLUSTER_ID, "--release-version", "4.3-IV0", "--apply"
                )
                assert code == 0, err
            for nid in CONTROLLERS + BROKERS:
                out = open(self.d / f"node{nid}.out", "wb")
                self.procs[nid] = subprocess.Popen(
                    [str(KAFKA43_HOME / "bin" / "kafka-server-start.sh"), str(self.d / f"node{nid}.properties")],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=self.env(),
                    start_new_session=True,
                    preexec_fn=kdc_mod.die_with_parent,
                )
            end = time.monotonic() + 180
            pending = set(self.procs)
            while pending and time.monotonic() < end:
                for nid in sorted(pending):
                    text = (self.d / f"node{nid}.out").read_text(errors="replace")
                    if "Kafka Server started" in text:
                        pending.discard(nid)
                    elif self.procs[nid].poll() is not None:
                        end = 0
                time.sleep(0.5)
            if not pending:
                return
            self.stop()
            tails = "\n".join(
                f"-- node {n}:\n" + (self.d / f"node{n}.out").read_text(errors="replace")[-2500:]
                for n in sorted(pending)
            )
            if attempt == 3 or "Address already in use" not in tails:
                raise AssertionError(f"the secured quorum did not start:\n{tails}")

    def stop(self):
        for nid in BROKERS + CONTROLLERS:  # brokers first: they wait for a controller to stop
            p = self.procs.get(nid)
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs.values():  # nothing reads these nodes again: no graceful shutdown
            try:
                p.wait(3)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(20)
        self.procs = {}


class Env:
    pass


@pytest.fixture(scope="module")
def env(cli, tmp_path_factory):
    if shutil.which("keytool") is None:
        pytest.skip("keytool (a JDK) is needed for the JKS stores")
    d = tmp_path_factory.mktemp("secured-quorum")
    e = Env()
    ca = TestCA(d / "pki", "secured quorum CA")
    server = ca.issue("server", dns=["localhost"], ips=["127.0.0.1"], password=SECRETS["store"])
    e.truststore = keytool_jks_truststore(ca, d / "pki" / "truststore.jks", SECRETS["trust"])
    e.server_keystore = keytool_jks_keystore(server, d / "pki" / "server.jks", SECRETS["store"], SECRETS["key"])
    e.oidc = OidcServer(
        {"kafka-node": SECRETS["node_secret"], "quorumctl": SECRETS["client_secret"]}, audience="kafka"
    ).start()
    try:
        e.q = Quorum(d / "kafka", e, e.oidc)
        e.q.start(cli)
        try:
            e.tls = write(d, "tls.properties", props_tls(e))
            e.sasl = write(d, "sasl-ssl.properties", props_sasl_ssl(e))
            yield e
        finally:
            e.q.stop()
    finally:
        e.oidc.stop()


def props_tls(e) -> str:
    return (
        f"security.protocol=SSL\nssl.truststore.location={e.truststore}\nssl.truststore.password={SECRETS['trust']}\n"
    )


def props_sasl_ssl(e) -> str:
    return (
        "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
        f"sasl.login.callback.handler.class={OAUTH_LOGIN}\n"
        f"sasl.oauthbearer.token.endpoint.url={e.oidc.token_url}\n"
        f'sasl.jaas.config={OAUTH_MODULE} required clientId="quorumctl" clientSecret="{SECRETS["client_secret"]}" '
        'scope="kafka";\n'
        f"ssl.truststore.location={e.truststore}\nssl.truststore.password={SECRETS['trust']}\n"
    )


def write(d: Path, name: str, text: str) -> str:
    p = d / name
    p.write_text(text)
    return str(p)


def kafka_tool(e, tool: str, args: list[str]) -> str:
    env = e.q.env()
    p = subprocess.run(
        [str(KAFKA43_HOME / "bin" / f"{tool}.sh"), *args], capture_output=True, text=True, env=env, timeout=180
    )
    assert p.returncode == 0, (args, p.stderr[-3000:])
    return p.stdout


OUTPUT: list[str] = []  # everything quorumctl printed here, scanned for secrets at the end


def run(cli, *args):
    code, out, err = cli(*args)
    OUTPUT.extend([out, err])
    return code, out, err


def test_status_and_replication_equal_kafka_over_the_sasl_ssl_controller_listener(cli, env):
    for via, where, props in (
        ("--bootstrap-controller", env.q.controllers, env.sasl),
        ("--bootstrap-server", env.q.brokers, env.tls),
    ):
        opt = [via, where, "--command-config", props]
        for what, flag, mask in (
            ("status", "--status", mask_status),
            ("replication", "--replication", mask_replication),
        ):
            code, mine, err = run(cli, "describe", what, *opt, "-o", "text")
            assert (code, err) == (0, ""), err
            theirs = kafka_tool(env, "kafka-metadata-quorum", [*opt, "describe", flag])
            assert mask(mine) == mask(theirs), (mine, theirs)
    # three voters, two observers (the brokers), one leader: independently of quorumctl's view
    theirs = kafka_tool(
        env,
        "kafka-metadata-quorum",
        ["--bootstrap-controller", env.q.controllers, "--command-config", env.sasl, "describe", "--replication"],
    )
    rows = [line.split() for line in theirs.splitlines()[1:] if line.strip()]
    assert sorted(int(r[0]) for r in rows) == [1, 2, 3, 4, 5]
    assert sorted(int(r[0]) for r in rows if r[-1] in ("Leader", "Follower")) == [1, 2, 3]
    assert sorted(int(r[0]) for r in rows if r[-1] == "Observer") == [4, 5]


def leader_of(env) -> int:
    """The leader as Kafka's own tool sees it over the secured controller listener."""
    text = kafka_tool(
        env,
        "kafka-metadata-quorum",
        ["--bootstrap-controller", env.q.controllers, "--command-config", env.sasl, "describe", "--status"],
    )
    return int(next(line.split()[-1] for line in text.splitlines() if line.startswith("LeaderId:")))


def healthy(doc: dict, leader: int) -> None:
    assert doc["verdict"] == "healthy", doc
    assert doc["leaderId"] == leader
    assert {v["id"]: (v["reachable"], v["caughtUp"]) for v in doc["voters"]} == {i: (True, True) for i in CONTROLLERS}
    assert [p["address"] for p in doc["probes"] if not p["reachable"]] == []


def test_health_is_healthy_over_the_sasl_ssl_controller_listener(cli, env):
    code, out, err = run(
        cli,
        "describe",
        "health",
        "--bootstrap-controller",
        env.q.addr(1),  # the other two are learnt from the answers
        "--command-config",
        env.sasl,
        "-o",
        "json",
        "--timeout",
        "20",
    )
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    healthy(doc, leader_of(env))
    assert {p["address"] for p in doc["probes"]} == {env.q.addr(i) for i in CONTROLLERS}


def test_health_from_the_brokers_takes_a_config_per_listener(cli, env):
    """The brokers' listener is TLS, the controllers' SASL_SSL: one file cannot
    serve both; --controller-command-config gives the controllers theirs."""
    base = ["describe", "health", "--bootstrap-server", env.q.brokers, "--command-config", env.tls]
    code, out, err = run(cli, *base, "--controller-command-config", env.sasl, "-o", "json", "--timeout", "20")
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    healthy(doc, leader_of(env))
    assert {p["address"] for p in doc["probes"]} == {env.q.addr(i) for i in CONTROLLERS + BROKERS}
    assert not [n for n in doc["notes"] if "command-config" in n], doc["notes"]
    # with the TLS file alone the controllers' SASL_SSL listener is out of reach: not healthy
    code, out, err = run(cli, *base, "-o", "json", "--timeout", "10")
    doc = json.loads(out)
    assert doc["verdict"] != "healthy", out
    assert {p["address"] for p in doc["probes"] if not p["reachable"]} == {env.q.addr(i) for i in CONTROLLERS}
    # ... and it says why, once, instead of leaving a bare verdict
    assert [n for n in doc["notes"] if "--controller-command-config" in n] == [
        "no controller accepted --command-config's SSL connection that the brokers took: if the controllers' "
        "listener is secured otherwise, give its client properties with --controller-command-config"
    ], doc["notes"]


def test_probes_with_each_listeners_credentials(cli, env):
    for nid in CONTROLLERS:
        code, out, err = run(
            cli,
            "probe",
            env.q.addr(nid),
            "--role",
            "controller",
            "--kind",
            "ready",
            "--bootstrap-controller",
            env.q.controllers,
            "--command-config",
            env.sasl,
            "--timeout",
            "15",
        )
        assert (code, err) == (0, ""), (out, err)
    # a controller probed with the brokers' file and --controller-command-config: the latter opens it
    code, out, err = run(
        cli,
        "probe",
        env.q.addr(2),
        "--role",
        "controller",
        "--command-config",
        env.tls,
        "--controller-command-config",
        env.sasl,
        "--timeout",
        "15",
    )
    assert (code, err) == (0, "") and out.startswith("ready ok: controller 2 "), (out, err)
    for nid in BROKERS:
        args = ["probe", env.q.addr(nid), "--role", "broker", "--bootstrap-controller", env.q.controllers]
        args += ["--command-config", env.tls, "--timeout", "15"]
        for kind in ("startup", "ready", "live"):
            code, out, err = run(cli, *args, "--kind", kind, "--controller-command-config", env.sasl)
            assert (code, err) == (0, ""), (kind, out, err)
    # the brokers' TLS file does not open the controllers' SASL_SSL listener: not ready
    code, out, err = run(
        cli, "probe", env.q.addr(1), "--role", "controller", "--command-config", env.tls, "--timeout", "10"
    )
    assert code == 1 and out.startswith("ready failed: ") and out.count("\n") == 1, (out, err)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_scraped_once_with_each_listeners_credentials(cli, env, tmp_path):
    exe = shutil.which("quorumctl", path=str(Path(sys.executable).parent))
    p = subprocess.Popen(
        [
            exe,
            "serve",
            "--listen",
            f"127.0.0.1:{free_port()}",
            "--bootstrap-server",
            env.q.brokers,
            "--command-config",
            env.tls,
            "--controller-command-config",
            env.sasl,
            "--interval",
            "2",
            "--timeout",
            "10",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = p.stderr.readline()
        assert line.startswith("quorumctl serve: http://127.0.0.1:"), line
        base = line.split()[2].removesuffix("/metrics")
        end = time.monotonic() + 60
        metrics = ""
        while time.monotonic() < end:  # the first sample may not be taken yet
            metrics = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
            if "kraft_quorum_samples_total 1" in metrics or "kraft_quorum_samples_total 2" in metrics:
                break
            time.sleep(0.5)
        broker = urllib.request.urlopen(f"{base}/probe?node={env.q.addr(4)}&role=broker&kind=ready", timeout=20)
        probe_line = broker.read().decode()
    finally:
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    OUTPUT.extend([metrics, probe_line, out, err])
    assert p.returncode == 0, err
    values = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line and not line.startswith("#")
    }
    assert values['kraft_quorum_verdict{verdict="healthy"}'] == 1, metrics
    assert values["kraft_quorum_leader_id"] == leader_of(env)
    assert values["kraft_quorum_voters_caught_up"] == 3 and values["kraft_quorum_controllers_answering"] == 3
    assert {k: v for k, v in values.items() if k.startswith("kraft_quorum_voter_reachable")} == {
        f'kraft_quorum_voter_reachable{{voter="{i}"}}': 1.0 for i in CONTROLLERS
    }
    assert broker.status == 200


def test_no_secret_in_any_output():
    text = "\n".join(OUTPUT)
    assert text, "nothing was collected"
    assert [k for k, v in SECRETS.items() if v in text] == []
    assert ".eyJ" not in text  # no token either
