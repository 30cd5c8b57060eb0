"""quorumctl where Kafka's own tools connect, against one real Kafka 4.3 node
(broker and controller in one process) whose listeners are secured, with a
real MIT KDC (its own realm in a temp dir) and a small OIDC provider (RS256
tokens for client credentials, a JWKS) started here:

* SSL with mutual TLS, JKS stores written by keytool, on a broker and a
  controller listener;
* SASL_PLAINTEXT and SASL_SSL with GSSAPI and OAUTHBEARER (Kafka's
  OAuthBearerValidatorCallbackHandler against the JWKS) on broker and
  controller listeners; one more listener takes the unsecured OAUTHBEARER
  form.

`describe status`, `describe replication` and `features describe` print what
Kafka 4.3's kafka-metadata-quorum and kafka-features print with the same
client.properties (volatile numbers masked); `describe health` answers;
wrong credentials are one line, exit 3; no secret appears in any output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import tarfile
import subprocess
import sys
import time
from pathlib import Path

import pytest

import recover_chaos  # tools/recover_chaos.py (on pytest's pythonpath)
from kafka41 import KAFKA43_HOME, mask_replication, mask_status, skip_reason, tool_env

pytest.importorskip("cryptography", reason="the test CA and the OIDC provider need cryptography")

import kdc as kdc_mod
from certs import TestCA, keytool_jks_keystore, keytool_jks_truststore
from oidc import OidcServer

REASON = skip_reason(KAFKA43_HOME)
pytestmark = [pytest.mark.kafka("4.3"), pytest.mark.java, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

# every secret used below: none may appear in any output
SECRETS = {
    "store": "store-secret-7",
    "key": "key-secret-9",
    "trust": "trust-secret-3",
    "client_secret": "oidc-client-secret-5",
    "wrong_secret": "not-the-client-secret",
}
LISTENERS = ["CONTROLLER", "INTERNAL", "BSSL", "BSASL", "BSASLSSL", "BUNSEC", "CSSL", "CSASL", "CSASLSSL"]
PROTOCOLS = {
    "CONTROLLER": "PLAINTEXT",
    "INTERNAL": "PLAINTEXT",
    "BSSL": "SSL",
    "BSASL": "SASL_PLAINTEXT",
    "BSASLSSL": "SASL_SSL",
    "BUNSEC": "SASL_PLAINTEXT",
    "CSSL": "SSL",
    "CSASL": "SASL_PLAINTEXT",
    "CSASLSSL": "SASL_SSL",
}
CLUSTER_ID = "c2VjdXJpdHktdGVzdHMxMQ"
OAUTH_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


class Env:
    pass


def _need(cond: bool, why: str):
    if not cond:
        pytest.skip(why)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    _need(shutil.which("keytool") is not None, "keytool (a JDK) is needed for the JKS stores")
    missing = kdc_mod.missing_tools()
    _need(
        not missing,
        f"the MIT Kerberos KDC tools are missing ({', '.join(missing)}): "
        "apt-get install krb5-kdc krb5-admin-server krb5-user",
    )
    d = tmp_path_factory.mktemp("security")
    e = Env()
    e.d = d
    # -- PKI: a CA, the node's certificate (localhost), a client certificate; JKS by keytool
    ca = TestCA(d / "pki", "security test CA")
    server = ca.issue("server", dns=["localhost"], ips=["127.0.0.1"], password=SECRETS["store"])
    client = ca.issue("client", client=True, password=SECRETS["store"])
    e.ca = ca
    e.truststore = keytool_jks_truststore(ca, d / "pki" / "truststore.jks", SECRETS["trust"])
    e.server_keystore = keytool_jks_keystore(server, d / "pki" / "server.jks", SECRETS["store"], SECRETS["key"])
    e.client_keystore = keytool_jks_keystore(client, d / "pki" / "client.jks", SECRETS["store"], SECRETS["key"])
    # -- Kerberos
    e.kdc = kdc_mod.Kdc(d / "krb").start()
    try:
        e.service_keytab = d / "krb" / "kafka.keytab"
        e.client_keytab = d / "krb" / "admin.keytab"
        e.kdc.add("kafka/localhost", e.service_keytab)
        e.admin = e.kdc.add("admin", e.client_keytab)
        e.other_keytab = d / "krb" / "other.keytab"  # a keytab of another principal
        e.kdc.add("other", e.other_keytab)
        e.ccache = d / "krb" / "admin.ccache"
        e.kdc.kinit("admin", e.client_keytab, e.ccache)
        # -- OIDC
        e.oidc = OidcServer({"quorumctl": SECRETS["client_secret"]}, audience="kafka").start()
        try:
            e.kafka = SecureNode(d / "kafka", e)
            e.kafka.start()
            try:
                yield e
            finally:
                e.kafka.stop()
        finally:
            e.oidc.stop()
    finally:
        e.kdc.stop()


class SecureNode:
    """One Kafka 4.3 node, broker and controller, with the listeners above."""

    def __init__(self, d: Path, e: Env):
        self.d, self.e = d, e
        self.d.mkdir(parents=True, exist_ok=True)
        self.proc = None

    def kafka_opts(self) -> str:
        e = self.e
        return (
            f"-Djava.security.krb5.conf={e.kdc.krb5_conf} "
            f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={e.oidc.jwks_url},{e.oidc.token_url}"
        )

    def config(self) -> str:
        e = self.e
        p = self.base
        port = {name: p + i + 1 for i, name in enumerate(LISTENERS)}
        self.port = port
        krb = (
            f"com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
            f'keyTab="{e.service_keytab}" principal="kafka/localhost@{e.kdc.realm}";'
        )
        lines = [
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@127.0.0.1:{port['CONTROLLER']}",
            "listeners=" + ",".join(f"{n}://127.0.0.1:{port[n]}" for n in LISTENERS),
            "advertised.listeners="
            + ",".join(
                f"{n}://{'127.0.0.1' if n in ('CONTROLLER', 'INTERNAL', 'BUNSEC') else 'localhost'}:{port[n]}"
                for n in LISTENERS
            ),
            "controller.listener.names=CONTROLLER,CSSL,CSASL,CSASLSSL",
            "inter.broker.listener.name=INTERNAL",
            "listener.security.protocol.map=" + ",".join(f"{n}:{v}" for n, v in PROTOCOLS.items()),
            f"log.dirs={self.d / 'data'}",
            "num.partitions=1",
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "num.network.threads=2",
            "num.io.threads=2",
            "group.initial.rebalance.delay.ms=0",
            "sasl.kerberos.service.name=kafka",
            f"sasl.oauthbearer.jwks.endpoint.url={e.oidc.jwks_url}",
            "sasl.oauthbearer.expected.audience=kafka",
            f"sasl.oauthbearer.expected.issuer={e.oidc.issuer}",
            "sasl.oauthbearer.clock.skew.seconds=0",
        ]
        for n in ("BSSL", "CSSL", "BSASLSSL", "CSASLSSL"):
            lo = n.lower()
            lines += [
                f"listener.name.{lo}.ssl.keystore.location={e.server_keystore}",
                f"listener.name.{lo}.ssl.keystore.password={SECRETS['store']}",
                f"listener.name.{lo}.ssl.key.password={SECRETS['key']}",
                f"listener.name.{lo}.ssl.truststore.location={e.truststore}",
                f"listener.name.{lo}.ssl.truststore.password={SECRETS['trust']}",
            ]
            if n in ("BSSL", "CSSL"):
                lines.append(f"listener.name.{lo}.ssl.client.auth=required")
        for n in ("BSASL", "BSASLSSL", "CSASL", "CSASLSSL"):
            lo = n.lower()
            lines += [
                f"listener.name.{lo}.sasl.enabled.mechanisms=GSSAPI,OAUTHBEARER",
                f"listener.name.{lo}.gssapi.sasl.jaas.config={krb}",
                f"listener.name.{lo}.oauthbearer.sasl.jaas.config="
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;",
                f"listener.name.{lo}.oauthbearer.sasl.server.callback.handler.class="
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
            ]
        lines += [
            "listener.name.bunsec.sasl.enabled.mechanisms=OAUTHBEARER",
            "listener.name.bunsec.oauthbearer.sasl.jaas.config="
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'unsecuredLoginStringClaim_sub="broker" ;',
        ]
        return "\n".join(lines) + "\n"

    def env(self) -> dict:
        env = tool_env(self.d)
        env.update(
            KAFKA_OPTS=self.kafka_opts(), KAFKA_HEAP_OPTS="-Xmx320m -Xms128m", KRB5_CONFIG=str(self.e.kdc.krb5_conf)
        )
        return env

    def start(self):
        for attempt in (1, 2, 3):
            self.base = recover_chaos.free_base_port(span=len(LISTENERS) + 1, start=29600)
            conf = self.d / "server.properties"
            conf.write_text(self.config())
            shutil.rmtree(self.d / "data", ignore_errors=True)
            fmt = subprocess.run(
                [str(KAFKA43_HOME / "bin" / "kafka-storage.sh"), "format", "-t", CLUSTER_ID, "-c", str(conf)],
                capture_output=True,
                text=True,
                env=self.env(),
                timeout=180,
            )
            assert fmt.returncode == 0, fmt.stderr[-3000:]
            out = open(self.d / "server.out", "wb")
            self.proc = subprocess.Popen(
                [str(KAFKA43_HOME / "bin" / "kafka-server-start.sh"), str(conf)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env(),
                start_new_session=True,
                preexec_fn=kdc_mod.die_with_parent,
            )
            end = time.monotonic() + 150
            while time.monotonic() < end:
                text = (self.d / "server.out").read_text(errors="replace")
                if "Kafka Server started" in text:
                    return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.5)
            self.stop()
            text = (self.d / "server.out").read_text(errors="replace")
            if attempt == 3 or "Address already in use" not in text:
                raise AssertionError(f"the secured Kafka node did not start:\n{text[-5000:]}")

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def address(self, listener: str) -> str:
        host = "127.0.0.1" if listener in ("CONTROLLER", "INTERNAL", "BUNSEC") else "localhost"
        return f"{host}:{self.port[listener]}"


# -- client.properties for each case -------------------------------------------------------


def props_jks_mtls(e) -> str:
    return (
        "security.protocol=SSL\n"
        f"ssl.truststore.location={e.truststore}\nssl.truststore.password={SECRETS['trust']}\n"
        f"ssl.keystore.location={e.client_keystore}\nssl.keystore.password={SECRETS['store']}\n"
        f"ssl.key.password={SECRETS['key']}\n"
    )


def props_oauth(e, secret: str = SECRETS["client_secret"], protocol: str = "SASL_PLAINTEXT") -> str:
    text = (
        f"security.protocol={protocol}\nsasl.mechanism=OAUTHBEARER\n"
        f"sasl.login.callback.handler.class={OAUTH_HANDLER}\n"
        f"sasl.oauthbearer.token.endpoint.url={e.oidc.token_url}\n"
        "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        f'clientId="quorumctl" clientSecret="{secret}" scope="kafka";\n'
    )
    if protocol == "SASL_SSL":
        text += f"ssl.truststore.location={e.truststore}\nssl.truststore.password={SECRETS['trust']}\n"
    return text


def props_krb(e, how: str, protocol: str = "SASL_PLAINTEXT") -> str:
    if how == "keytab":
        jaas = f'useKeyTab=true storeKey=true keyTab="{e.client_keytab}" principal="{e.admin}"'
    else:
        jaas = f'useTicketCache=true ticketCache="{e.ccache}"'
    text = (
        f"security.protocol={protocol}\nsasl.kerberos.service.name=kafka\n"
        f"sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required {jaas};\n"
    )
    if protocol == "SASL_SSL":
        text += f"ssl.truststore.location={e.truststore}\nssl.truststore.password={SECRETS['trust']}\n"
    return text


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def kafka(e, tmp_path: Path, tool: str, args: list[str]) -> str:
    env = e.kafka.env()
    env.pop("KAFKA_HEAP_OPTS")
    env.update(KAFKA_HEAP_OPTS="-Xmx256m", KRB5CCNAME=f"FILE:{e.ccache}")
    p = subprocess.run(
        [str(KAFKA43_HOME / "bin" / f"{tool}.sh"), *args], capture_output=True, text=True, env=env, timeout=180
    )
    assert p.returncode == 0, (args, p.stderr[-3000:])
    return p.stdout


def ours(cli, *args: str) -> str:
    code, out, err = cli(*args)
    assert (code, err) == (0, ""), err
    return out


ALL_OUTPUT: list[str] = []  # everything quorumctl printed in this module, scanned for secrets at the end


def run(cli, *args):
    code, out, err = cli(*args)
    ALL_OUTPUT.extend([out, err])
    return code, out, err


def same_as_kafka(cli, e, tmp_path, props: str, via: str, listener: str, features: bool = True):
    """describe status/replication (and features describe) equal Kafka 4.3's tools."""
    addr = e.kafka.address(listener)
    opt = [via, addr, "--command-config", props]
    for what, flag, mask in (("status", "--status", mask_status), ("replication", "--replication", mask_replication)):
        code, mine, err = run(cli, "describe", what, *opt, "-o", "text")
        assert (code, err) == (0, ""), err
        theirs = kafka(e, tmp_path, "kafka-metadata-quorum", [*opt, "describe", flag])
        assert mask(mine) == mask(theirs), (mine, theirs)
    if features:
        code, mine, err = run(cli, "features", "describe", *opt)
        assert (code, err) == (0, ""), err
        # the finalized features epoch is the metadata offset, which moves between two calls
        epoch = re.compile(r"Epoch: \d+")
        theirs = kafka(e, tmp_path, "kafka-features", [*opt, "describe"])
        assert epoch.sub("Epoch: N", mine) == epoch.sub("Epoch: N", theirs)
        assert "metadata.version" in mine
    # describe health authenticates its probes the same way; the one probe that fails is of
    # the address DescribeQuorum names, this shared node's PLAINTEXT raft listener, which
    # a client configured for another protocol cannot use (Kafka's tools never probe it)
    code, out, err = run(cli, "describe", "health", *opt, "-o", "json", "--timeout", "20")
    doc = json.loads(out)
    assert doc["leaderId"] == 1 and doc["voters"][0]["reachable"], out
    raft = f"127.0.0.1:{e.kafka.port['CONTROLLER']}"
    assert [p["address"] for p in doc["probes"] if not p["reachable"]] in ([], [raft]), out
    assert any(p["reachable"] and p["address"] == addr for p in doc["probes"]), out
    return mine


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("quorumctl: error: ") and "Traceback" not in err, err
    return err[len("quorumctl: error: ") : -1]


# -- JKS + mutual TLS -----------------------------------------------------------------------


def test_jks_mutual_tls_equals_kafka(cli, env, tmp_path):
    props = write(tmp_path, "jks.properties", props_jks_mtls(env))
    same_as_kafka(cli, env, tmp_path, props, "--bootstrap-server", "BSSL")
    same_as_kafka(cli, env, tmp_path, props, "--bootstrap-controller", "CSSL", features=False)


def test_tls_refusals_are_one_line(cli, env, tmp_path):
    # no client certificate: the listener requires one
    no_key = write(
        tmp_path,
        "nokey.properties",
        "security.protocol=SSL\n"
        f"ssl.truststore.location={env.truststore}\nssl.truststore.password={SECRETS['trust']}\n",
    )
    code, out, err = run(
        cli,
        "describe",
        "status",
        "--bootstrap-server",
        env.kafka.address("BSSL"),
        "--command-config",
        no_key,
        "--timeout",
        "10",
    )
    assert code == 3 and out == ""
    assert one_line(err).startswith(env.kafka.address("BSSL"))
    # another CA: untrusted
    other = TestCA(tmp_path / "other", "another CA")
    ts = keytool_jks_truststore(other, tmp_path / "other.jks", SECRETS["trust"])
    untrusted = write(tmp_path, "untrusted.properties", props_jks_mtls(env).replace(str(env.truststore), str(ts)))
    code, out, err = run(
        cli,
        "describe",
        "status",
        "--bootstrap-server",
        env.kafka.address("BSSL"),
        "--command-config",
        untrusted,
        "--timeout",
        "10",
    )
    assert code == 3
    assert one_line(err) == (
        f"TLS: the certificate of {env.kafka.address('BSSL')} is not trusted: self-signed "
        "certificate in certificate chain; set ssl.truststore.* in --command-config to the "
        "CA that signed it"
    )
    # (a host name the certificate does not hold: tests/cli/test_tls_sasl.py's test_tls_hostname_is_checked)


# -- OAUTHBEARER ----------------------------------------------------------------------------


def test_oauth_client_credentials_equals_kafka(cli, env, tmp_path):
    before = len(env.oidc.issued)
    props = write(tmp_path, "oauth.properties", props_oauth(env))
    same_as_kafka(cli, env, tmp_path, props, "--bootstrap-server", "BSASL")
    same_as_kafka(cli, env, tmp_path, props, "--bootstrap-controller", "CSASL", features=False)
    ssl = write(tmp_path, "oauth-ssl.properties", props_oauth(env, protocol="SASL_SSL"))
    code, out, err = run(
        cli,
        "describe",
        "status",
        "--bootstrap-server",
        env.kafka.address("BSASLSSL"),
        "--command-config",
        ssl,
        "-o",
        "json",
    )
    assert code == 0 and json.loads(out)["leaderId"] == 1, err
    issued = env.oidc.issued[before:]
    assert issued and {c["sub"] for c in issued} == {"quorumctl"} and {c.get("scope") for c in issued} == {"kafka"}


def test_oauth_unsecured_login(cli, env, tmp_path):
    props = write(
        tmp_path,
        "unsecured.properties",
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
        "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'unsecuredLoginStringClaim_sub="admin";\n',
    )
    code, out, err = run(
        cli,
        "describe",
        "status",
        "--bootstrap-server",
        env.kafka.address("BUNSEC"),
        "--command-config",
        props,
        "-o",
        "text",
    )
    assert (code, err) == (0, "")
    assert mask_status(out) == mask_status(
        kafka(
            env,
            tmp_path,
            "kafka-metadata-quorum",
            ["--bootstrap-server", env.kafka.address("BUNSEC"), "--command-config", props, "describe", "--status"],
        )
    )
    # the same unsigned token to the listener that validates signatures: refused by the broker
    code, out, err = run(
        cli,
        "describe",
        "status",
        "--bootstrap-server",
        env.kafka.address("BSASL"),
        "--command-config",
        props,
        "--timeout",
        "10",
    )
    assert code == 3
    msg = one_line(err)
    assert msg.startswith(f"SASL OAUTHBEARER authentication to {env.kafka.address('BSASL')} failed: ") and msg.endswith(
        "(the broker rejected the unsecured token (unsecuredLogin* in sasl.jaas.config): invalid_token)"
    )


def test_oauth_wrong_secret_is_one_line(cli, env, tmp_path):
    props = write(tmp_path, "wrong.properties", props_oauth(env, secret=SECRETS["wrong_secret"]))
    refused = env.oidc.refused
    for via, listener in (("--bootstrap-server", "BSASL"), ("--bootstrap-controller", "CSASL")):
        code, out, err = run(
            cli, "describe", "status", via, env.kafka.address(listener), "--command-config", props, "--timeout", "10"
        )
        assert (code, out) == (3, "")
        assert one_line(err) == (
            f"{env.kafka.address(listener)}: token endpoint {env.oidc.token_url} refused client "
            "'quorumctl' (HTTP 401, invalid_client: Invalid client credentials): check "
            "sasl.jaas.config clientSecret and the client id"
        )
    assert env.oidc.refused == refused + 2  # no retry of a 401, as Kafka's HttpJwtRetriever


def test_oauth_token_expiring_during_watch_is_renewed(cli, env, tmp_path):
    """Tokens live 3 s and the broker allows no clock skew: a watch of ~9 s
    that kept its first token would fail from the fourth second on."""
    env.oidc.lifetime_s = 3
    try:
        before = len(env.oidc.issued)
        props = write(tmp_path, "watch.properties", props_oauth(env))
        exe = shutil.which("quorumctl", path=str(Path(sys.executable).parent))
        p = subprocess.Popen(
            [
                exe,
                "describe",
                "status",
                "--bootstrap-server",
                env.kafka.address("BSASL"),
                "--command-config",
                props,
                "--watch",
                "1",
                "-o",
                "json",
                "--timeout",
                "5",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        lines = []
        try:
            end = time.monotonic() + 60
            while len(lines) < 9 and time.monotonic() < end:
                line = p.stdout.readline()
                if not line:
                    break
                lines.append(line)
        finally:
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=20)
    finally:
        env.oidc.lifetime_s = 3600
    ALL_OUTPUT.extend(lines + [out, err])
    docs = [json.loads(line) for line in lines]
    assert len(docs) == 9, (lines, err)
    # every refresh answered: none shows a failure (an expired token would be refused)
    assert all(d.get("leaderId") == 1 and not d.get("error") for d in docs), lines
    assert len(env.oidc.issued) - before >= 3


# -- GSSAPI ----------------------------------------------------------------------------------


def _gssapi():
    try:
        import gssapi  # noqa: F401
    except ImportError:
        pytest.skip("the Python 'gssapi' package is not installed (pip install gssapi; needs libkrb5-dev)")


@pytest.fixture
def krb_env(env, monkeypatch):
    _gssapi()
    monkeypatch.setenv("KRB5_CONFIG", str(env.kdc.krb5_conf))
    return env


@pytest.mark.parametrize("how", ["keytab", "ticket-cache"])
def test_gssapi_equals_kafka(cli, krb_env, tmp_path, how):
    e = krb_env
    props = write(tmp_path, f"krb-{how}.properties", props_krb(e, "keytab" if how == "keytab" else "cache"))
    same_as_kafka(cli, e, tmp_path, props, "--bootstrap-server", "BSASL")
    same_as_kafka(cli, e, tmp_path, props, "--bootstrap-controller", "CSASL", features=False)
    ssl = write(
        tmp_path, f"krb-ssl-{how}.properties", props_krb(e, "keytab" if how == "keytab" else "cache", "SASL_SSL")
    )
    for via, listener in (("--bootstrap-server", "BSASLSSL"), ("--bootstrap-controller", "CSASLSSL")):
        code, mine, err = run(
            cli, "describe", "status", via, e.kafka.address(listener), "--command-config", ssl, "-o", "text"
        )
        assert (code, err) == (0, ""), err
        assert mask_status(mine) == mask_status(
            kafka(
                e,
                tmp_path,
                "kafka-metadata-quorum",
                [via, e.kafka.address(listener), "--command-config", ssl, "describe", "--status"],
            )
        )


def test_gssapi_refusals_are_one_line(cli, krb_env, tmp_path):
    e = krb_env
    addr = e.kafka.address("BSASL")

    def refused(name: str, text: str) -> str:
        code, out, err = run(
            cli,
            "describe",
            "status",
            "--bootstrap-server",
            addr,
            "--command-config",
            write(tmp_path, name, text),
            "--timeout",
            "15",
        )
        assert (code, out) == (3, ""), err
        return one_line(err)

    base = (
        "security.protocol=SASL_PLAINTEXT\nsasl.kerberos.service.name=kafka\n"
        "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required "
    )
    # a keytab that holds another principal's key only
    msg = refused("wrongkt.properties", base + f'useKeyTab=true keyTab="{e.other_keytab}" principal="{e.admin}";\n')
    assert msg == (
        f"{addr}: Kerberos login with sasl.jaas.config keyTab={e.other_keytab} principal={e.admin} "
        f"failed: the keytab holds no key for {e.admin}; check keyTab and principal"
    )
    # an outdated keytab: the principal's key changed since (ktadd again)
    stale = e.d / "krb" / "rotated-old.keytab"
    rotated = e.kdc.add("rotated", stale)
    e.kdc._run("kadmin.local", "-r", e.kdc.realm, "-q", f"ktadd -k {e.d / 'krb' / 'rotated-new.keytab'} rotated")
    msg = refused("stale.properties", base + f'useKeyTab=true keyTab="{stale}" principal="{rotated}";\n')
    assert msg.startswith(f"{addr}: Kerberos login with sasl.jaas.config keyTab={stale} principal={rotated} failed: ")
    assert msg.endswith("the keytab's key does not match the KDC's (a wrong or outdated keyTab)")
    # a principal the KDC no longer knows
    gone_kt = e.d / "krb" / "gone.keytab"
    gone = e.kdc.add("gone", gone_kt)
    e.kdc._run("kadmin.local", "-r", e.kdc.realm, "-q", "delprinc -force gone")
    msg = refused("gone.properties", base + f'useKeyTab=true keyTab="{gone_kt}" principal="{gone}";\n')
    assert msg.startswith(f"{addr}: Kerberos login with sasl.jaas.config keyTab={gone_kt} principal={gone} failed: ")
    assert "not found in Kerberos database" in msg and msg.endswith("check principal)")
    # an empty ticket cache
    msg = refused("nocache.properties", base + f'useTicketCache=true ticketCache="{tmp_path / "none.cc"}";\n')
    assert msg == (
        f"{addr}: Kerberos login with sasl.jaas.config useTicketCache ({tmp_path / 'none.cc'}) failed: "
        "No credentials cache found; no ticket in the cache (run kinit, or set useKeyTab=true with "
        "keyTab and principal)"
    )
    # a service name the KDC has no principal for
    msg = refused(
        "svc.properties",
        base.replace("service.name=kafka", "service.name=kafka2")
        + f'useKeyTab=true keyTab="{e.client_keytab}" principal="{e.admin}";\n',
    )
    assert msg.startswith(f"{addr}: Kerberos service ticket for kafka2/localhost with sasl.jaas.config ")
    assert msg.endswith(
        "failed: Server kafka2/localhost@QUORUMCTL.TEST not found in Kerberos database; the KDC "
        "has no service principal kafka2/localhost (check sasl.kerberos.service.name and the "
        "broker's host name)"
    )
    # a realm whose KDC does not answer
    conf = tmp_path / "krb5-nokdc.conf"
    conf.write_text(e.kdc.krb5_conf.read_text().replace(f"127.0.0.1:{e.kdc.port}", "127.0.0.1:9"))
    os.environ["KRB5_CONFIG"] = str(conf)  # krb_env's monkeypatch restores it
    msg = refused("nokdc.properties", base + f'useKeyTab=true keyTab="{e.client_keytab}" principal="{e.admin}";\n')
    assert msg.endswith(
        "failed: Cannot contact any KDC for realm 'QUORUMCTL.TEST'; no KDC answers for the realm "
        "(check krb5.conf / KRB5_CONFIG)"
    )


def test_doctor_live_checks_connect_with_the_command_config(cli, env, tmp_path):
    props = write(tmp_path, "doctor.properties", props_oauth(env))
    conf = str(env.kafka.d / "server.properties")
    code, out, err = run(
        cli,
        "doctor",
        "-c",
        conf,
        "--bootstrap-controller",
        env.kafka.address("CSASL"),
        "--command-config",
        props,
        "-o",
        "json",
        "--timeout",
        "10",
    )
    doc = json.loads(out)
    assert "live-unreachable" not in [f["code"] for f in doc["findings"]], out
    # without it, the SASL listener closes the connection: the live check says so
    code, out, err = run(
        cli, "doctor", "-c", conf, "--bootstrap-controller", env.kafka.address("CSASL"), "-o", "json", "--timeout", "5"
    )
    assert "live-unreachable" in [f["code"] for f in json.loads(out)["findings"]], out


# -- secrets ---------------------------------------------------------------------------------


def test_no_secret_in_any_output(cli, env, tmp_path):
    """Every output of this module, and --debug, JSON and a bundle of each
    secured case, hold none of the secrets."""
    cases = {
        "jks": (props_jks_mtls(env), "BSSL"),
        "oauth": (props_oauth(env), "BSASL"),
        "oauth-wrong": (props_oauth(env, SECRETS["wrong_secret"]), "BSASL"),
    }
    for name, (text, listener) in cases.items():
        props = write(tmp_path, f"{name}.properties", text)
        addr = env.kafka.address(listener)
        for args in (
            ["describe", "status", "-o", "json"],
            ["--debug", "describe", "status"],
            ["describe", "health", "-o", "json"],
        ):
            if args[0] == "--debug":
                run(
                    cli,
                    "--debug",
                    "describe",
                    "status",
                    "--bootstrap-server",
                    addr,
                    "--command-config",
                    props,
                    "--timeout",
                    "10",
                )
            else:
                run(cli, *args, "--bootstrap-server", addr, "--command-config", props, "--timeout", "10")
        bundle = tmp_path / f"{name}-bundle.tar.gz"
        code, out, err = run(
            cli,
            "bundle",
            "--out",
            str(bundle),
            "--bootstrap-server",
            addr,
            "--command-config",
            props,
            "--timeout",
            "10",
        )
        assert code == 0, err
        with tarfile.open(bundle) as t:
            members = {m.name: t.extractfile(m).read().decode("utf-8", "replace") for m in t.getmembers() if m.isfile()}
        ALL_OUTPUT.extend(members.values())
        status = next(v for k, v in members.items() if k.endswith("describe-status.json"))
        if name != "oauth-wrong":  # the bundle's live parts connected with the secured config
            assert json.loads(status.splitlines()[0])["leaderId"] == 1, status
    text = "\n".join(ALL_OUTPUT)
    assert text, "nothing was collected"
    leaked = [k for k, v in SECRETS.items() if v in text]
    assert leaked == [], leaked
    # tokens neither: the OIDC provider's signatures never appear
    assert env.oidc.issued and ".eyJ" not in text
