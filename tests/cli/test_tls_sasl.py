"""TLS (a CA made here, host names checked, wrong CA refused, PEM and PKCS12
stores, mutual TLS) and SASL PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512 (wrong
passwords refused) between quorumctl and the simulated endpoint."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("cryptography", reason="the test CA needs cryptography")

from certs import TestCA
from quorumctl.testing.sim import SimulatedCluster, replica


USERS = {"alice": "alice-secret", "ops": 'pä55 wörd;"x"'}
ALL_MECHS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = TestCA(d / "ca", "quorumctl test CA")
    other = TestCA(d / "other", "some other CA")
    return {
        "ca": ca,
        "other": other,
        "server": ca.issue("server", dns=["localhost"], ips=["127.0.0.1"]),
        "wrongname": ca.issue("wrongname", dns=["kafka.example.com"]),
        "client": ca.issue("client", client=True, password="keypass"),
    }


def start(**node_kw) -> SimulatedCluster:
    now = 1795305697138
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw", 1, 3, 90, [replica(1, 90, now, now), replica(2, 90, now - 50, now - 50)], []
    )
    c.add_controller(1, **node_kw)
    c.add_controller(2, **node_kw)
    c.add_broker(4, **node_kw)
    return c.start()


def props(tmp_path, text: str, name="client.properties"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def describe(cli, c, config, host="127.0.0.1", via="server", *extra):
    node = c.brokers()[0] if via == "server" else c.node_by_id(2)
    flag = "--bootstrap-server" if via == "server" else "--bootstrap-controller"
    return cli(
        "describe",
        "status",
        flag,
        f"{host}:{node.port}",
        "--command-config",
        config,
        "--timeout",
        "5",
        "-o",
        "json",
        *extra,
    )


def error_of(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("quorumctl: error: ") and "Traceback" not in err, err
    return err[len("quorumctl: error: ") : -1]


# -- TLS ----------------------------------------------------------------------------


def test_tls_with_pem_truststore(cli, tmp_path, pki):
    c = start(tls=pki["ca"].server_context(pki["server"]))
    try:
        cfg = props(
            tmp_path, f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={pki['ca'].ca_pem}\n"
        )
        for via in ("server", "controller"):
            code, out, err = describe(cli, c, cfg, "127.0.0.1", via)
            assert (code, err) == (0, ""), err
            assert json.loads(out)["clusterId"] == "rTcAzcTXQpG_6c1zYns8Xw"
        # by name too: the certificate names localhost
        code, out, err = describe(cli, c, cfg, "localhost")
        assert (code, err) == (0, "")
    finally:
        c.stop()


def test_tls_hostname_is_checked(cli, tmp_path, pki):
    c = start(tls=pki["ca"].server_context(pki["wrongname"]))
    try:
        cfg = props(tmp_path, f"security.protocol=SSL\nssl.truststore.location={pki['ca'].ca_pem}\n")
        code, out, err = describe(cli, c, cfg)
        assert code == 3
        port = c.brokers()[0].port
        assert error_of(err) == (
            f"TLS: the certificate of 127.0.0.1:{port} is not trusted: IP address mismatch, "
            "certificate is not valid for '127.0.0.1'; connect with a name in its certificate, "
            "or set ssl.endpoint.identification.algorithm= to skip the check"
        )
        off = props(
            tmp_path,
            f"security.protocol=SSL\nssl.truststore.location={pki['ca'].ca_pem}\n"
            "ssl.endpoint.identification.algorithm=\n",
            "nocheck.properties",
        )
        code, out, err = describe(cli, c, off)
        assert (code, err) == (0, "")
    finally:
        c.stop()


def test_tls_wrong_ca_is_refused(cli, tmp_path, pki):
    c = start(tls=pki["ca"].server_context(pki["server"]))
    try:
        cfg = props(tmp_path, f"security.protocol=SSL\nssl.truststore.location={pki['other'].ca_pem}\n")
        code, out, err = describe(cli, c, cfg)
    finally:
        c.stop()
    assert code == 3 and out == ""
    port = c.brokers()[0].port
    # the server sends its chain up to its (self-signed) CA, which our truststore does not hold
    assert error_of(err) == (
        f"TLS: the certificate of 127.0.0.1:{port} is not trusted: self-signed certificate in "
        "certificate chain; set ssl.truststore.* in --command-config to the CA that signed it"
    )


def test_tls_pkcs12_truststore_and_inline_pem(cli, tmp_path, pki):
    c = start(tls=pki["ca"].server_context(pki["server"]))
    try:
        p12 = props(
            tmp_path,
            f"security.protocol=SSL\nssl.truststore.type=PKCS12\n"
            f"ssl.truststore.location={pki['ca'].ca_p12}\nssl.truststore.password=trustpass\n",
        )
        assert describe(cli, c, p12)[0] == 0
        # Kafka's default type (JKS) with a PKCS12 file: sniffed, as Java 9+ does
        sniff = props(
            tmp_path,
            f"security.protocol=SSL\nssl.truststore.location={pki['ca'].ca_p12}\nssl.truststore.password=trustpass\n",
            "sniff.properties",
        )
        assert describe(cli, c, sniff)[0] == 0
        # inline PEM, written with backslash line continuations as in a .properties file
        pem_lines = pki["ca"].ca_pem.read_text().strip().splitlines()
        inline = "ssl.truststore.certificates=" + "\\n\\\n    ".join(pem_lines) + "\n"
        cfg = props(tmp_path, "security.protocol=SSL\nssl.truststore.type=PEM\n" + inline, "inline.properties")
        code, out, err = describe(cli, c, cfg)
        assert (code, err) == (0, "")
        bad = props(
            tmp_path,
            f"security.protocol=SSL\nssl.truststore.type=PKCS12\n"
            f"ssl.truststore.location={pki['ca'].ca_p12}\nssl.truststore.password=nope\n",
            "bad.properties",
        )
        code, out, err = describe(cli, c, bad)
        assert code == 2
        assert error_of(err).startswith(
            f"cannot open {bad}: ssl.truststore.location {pki['ca'].ca_p12} as PKCS12 (wrong password?)"
        )
    finally:
        c.stop()


@pytest.mark.parametrize("store", ["pem", "pkcs12", "none"])
def test_mutual_tls(cli, tmp_path, pki, store):
    c = start(tls=pki["ca"].server_context(pki["server"], require_client_cert=True))
    client = pki["client"]
    ks = {
        "pem": f"ssl.keystore.type=PEM\nssl.keystore.location={client.combined_pem}\n",
        "pkcs12": f"ssl.keystore.type=PKCS12\nssl.keystore.location={client.p12}\nssl.keystore.password=keypass\n",
        "none": "",
    }[store]
    try:
        cfg = props(tmp_path, f"security.protocol=SSL\nssl.truststore.location={pki['ca'].ca_pem}\n" + ks)
        code, out, err = describe(cli, c, cfg)
    finally:
        c.stop()
    if store == "none":
        assert code == 3
        assert error_of(err).startswith(f"127.0.0.1:{c.brokers()[0].port}")
    else:
        assert (code, err) == (0, "")


def test_tls_client_against_plaintext_listener(cli, tmp_path, pki):
    c = start()
    try:
        cfg = props(tmp_path, f"security.protocol=SSL\nssl.truststore.location={pki['ca'].ca_pem}\n")
        code, out, err = describe(cli, c, cfg)
    finally:
        c.stop()
    assert code == 3
    msg = error_of(err)
    assert msg.startswith(f"TLS handshake with 127.0.0.1:{c.brokers()[0].port} failed") and "security.protocol" in msg


def test_plaintext_client_against_tls_listener(cli, tmp_path, pki):
    c = start(tls=pki["ca"].server_context(pki["server"]))
    try:
        code, out, err = cli("describe", "status", "--bootstrap-server", c.brokers()[0].address, "--timeout", "3")
    finally:
        c.stop()
    assert code == 3
    msg = error_of(err)
    # reset, closed or a TLS alert, depending on timing: each names TLS and security.protocol
    assert msg.startswith(c.brokers()[0].address) and "TLS" in msg and "security.protocol" in msg


def _keytool():
    import shutil

    if not shutil.which("keytool"):
        pytest.skip("keytool (a JDK) is needed to write JKS stores")


def test_jks_truststore_and_keystore(cli, tmp_path, pki):
    """JKS stores written by keytool: the truststore (Kafka's default type, so
    no ssl.truststore.type) and, for mutual TLS, a keystore whose key has its
    own password (ssl.key.password)."""
    _keytool()
    from certs import keytool_jks_keystore, keytool_jks_truststore

    ts = keytool_jks_truststore(pki["ca"], tmp_path / "truststore.jks", "trust-secret")
    ks = keytool_jks_keystore(pki["client"], tmp_path / "keystore.jks", "store-secret", "key-secret")
    assert ts.read_bytes()[:4] == ks.read_bytes()[:4] == b"\xfe\xed\xfe\xed"
    c = start(tls=pki["ca"].server_context(pki["server"], require_client_cert=True))
    base = f"security.protocol=SSL\nssl.truststore.location={ts}\nssl.truststore.password=trust-secret\n"
    try:
        good = props(
            tmp_path,
            base + f"ssl.keystore.location={ks}\nssl.keystore.password=store-secret\nssl.key.password=key-secret\n",
        )
        for via in ("server", "controller"):
            code, out, err = describe(cli, c, good, "127.0.0.1", via)
            assert (code, err) == (0, ""), err
            assert json.loads(out)["clusterId"] == "rTcAzcTXQpG_6c1zYns8Xw"
        # without a keystore the server refuses the handshake
        code, out, err = describe(cli, c, props(tmp_path, base, "nokey.properties"))
        assert code == 3 and error_of(err).startswith(f"127.0.0.1:{c.brokers()[0].port}")
    finally:
        c.stop()
    # wrong passwords: one line naming the setting, no secret
    cases = {
        "ssl.truststore.password": (
            base.replace("trust-secret", "trust-wrong"),
            f"cannot open {{cfg}}: ssl.truststore.location {ts} as JKS: the store was "
            "tampered with, or the password is wrong (check ssl.truststore.password)",
        ),
        "ssl.key.password": (
            base + f"ssl.keystore.location={ks}\nssl.keystore.password=store-secret\nssl.key.password=key-wrong\n",
            f"cannot open {{cfg}}: ssl.keystore.location {ks}: the password of key 'key' is "
            "wrong (check ssl.key.password)",
        ),
        # no ssl.key.password: the key's password is the store's, as in Kafka
        "ssl.keystore.password": (
            base + f"ssl.keystore.location={ks}\nssl.keystore.password=store-secret\n",
            f"cannot open {{cfg}}: ssl.keystore.location {ks}: the password of key 'key' "
            "is wrong (check ssl.keystore.password)",
        ),
    }
    for name, (text, expected) in cases.items():
        cfg = props(tmp_path, text, name + ".properties")
        code, out, err = cli("describe", "status", "--bootstrap-server", "127.0.0.1:1", "--command-config", cfg)
        assert code == 2, err
        assert error_of(err) == expected.format(cfg=cfg)
        assert not [s for s in ("trust-secret", "store-secret", "key-secret", "trust-wrong", "key-wrong") if s in err]


def test_jceks_store_is_refused_with_a_hint(cli, tmp_path):
    store = tmp_path / "truststore.jceks"
    store.write_bytes(b"\xce\xce\xce\xce" + b"\x00" * 60)
    cfg = props(tmp_path, f"security.protocol=SSL\nssl.truststore.location={store}\n")
    code, out, err = cli("describe", "status", "--bootstrap-server", "127.0.0.1:1", "--command-config", cfg)
    assert code == 2
    assert error_of(err) == (
        f"{cfg}: ssl.truststore.location {store} is a JCEKS store, which quorumctl "
        "cannot read; convert it with keytool -importkeystore -deststoretype PKCS12"
    )


# -- SASL ---------------------------------------------------------------------------


def jaas(user, password, module="org.apache.kafka.common.security.scram.ScramLoginModule"):
    """A sasl.jaas.config line: JAAS quoting, then .properties escaping (a
    backslash in the JAAS text is written twice in the file, as for Kafka)."""
    pw = password.replace("\\", "\\\\").replace('"', '\\"')
    line = f'{module} required username="{user}" password="{pw}";'
    return "sasl.jaas.config=" + line.replace("\\", "\\\\") + "\n"


@pytest.mark.parametrize("mech", ALL_MECHS)
def test_sasl_plaintext(cli, tmp_path, mech):
    c = start(sasl={"mechanisms": ALL_MECHS, "users": USERS})
    try:
        good = props(tmp_path, f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mech}\n" + jaas("ops", USERS["ops"]))
        for via in ("server", "controller"):
            code, out, err = describe(cli, c, good, "127.0.0.1", via)
            assert (code, err) == (0, ""), err
            assert json.loads(out)["leaderId"] == 1
        bad = props(
            tmp_path,
            f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mech}\n" + jaas("ops", "not-the-password"),
            "bad.properties",
        )
        code, out, err = describe(cli, c, bad)
    finally:
        c.stop()
    assert code == 3 and out == ""
    msg = error_of(err)
    port = c.brokers()[0].port
    expected_reason = (
        "Authentication failed: Invalid username or password"
        if mech == "PLAIN"
        else f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mech}"
    )
    assert msg == (
        f"SASL {mech} authentication to 127.0.0.1:{port} failed: {expected_reason} "
        "(check sasl.jaas.config username and password)"
    )
    assert "not-the-password" not in err


def test_sasl_unknown_user(cli, tmp_path):
    c = start(sasl={"mechanisms": ALL_MECHS, "users": USERS})
    try:
        cfg = props(tmp_path, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n" + jaas("mallory", "x"))
        code, out, err = describe(cli, c, cfg)
    finally:
        c.stop()
    assert code == 3 and "invalid credentials with SASL mechanism SCRAM-SHA-512" in error_of(err)


def test_sasl_mechanism_not_enabled(cli, tmp_path):
    c = start(sasl={"mechanisms": ["PLAIN"], "users": USERS})
    try:
        cfg = props(
            tmp_path, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n" + jaas("alice", "alice-secret")
        )
        code, out, err = describe(cli, c, cfg)
    finally:
        c.stop()
    assert code == 3
    assert error_of(err) == f"SASL: 127.0.0.1:{c.brokers()[0].port} does not enable SCRAM-SHA-256 (it offers PLAIN)"


def test_sasl_listener_without_sasl_client(cli):
    c = start(sasl={"mechanisms": ALL_MECHS, "users": USERS})
    try:
        code, out, err = cli("describe", "status", "--bootstrap-server", c.brokers()[0].address, "--timeout", "3")
    finally:
        c.stop()
    assert code == 3
    assert error_of(err) == (
        f"{c.brokers()[0].address} closed the connection without answering DescribeCluster "
        "(does the listener require SASL? check security.protocol)"
    )


def test_sasl_ssl_scram_sha512(cli, tmp_path, pki):
    c = start(tls=pki["ca"].server_context(pki["server"]), sasl={"mechanisms": ALL_MECHS, "users": USERS})
    try:
        cfg = props(
            tmp_path,
            f"security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
            f"ssl.truststore.location={pki['ca'].ca_pem}\n" + jaas("alice", "alice-secret"),
        )
        code, out, err = describe(cli, c, cfg, "localhost", "controller")
        assert (code, err) == (0, "")
        # health probes authenticate too
        code, out, err = cli(
            "describe",
            "health",
            "--bootstrap-controller",
            f"localhost:{c.node_by_id(1).port}",
            "--command-config",
            cfg,
            "-o",
            "json",
        )
        assert code == 0 and json.loads(out)["verdict"] == "healthy"
    finally:
        c.stop()


def test_a_write_to_a_closed_connection_is_an_error_not_a_silent_death(tmp_path):
    """main() leaves SIGPIPE deadly (for `| head`); a write into a socket the
    peer closed (a listener that refused our certificate) must fail with EPIPE
    inside connection's guard instead of killing the process without a word."""
    import subprocess
    import sys

    code = (
        "import signal, socket, time\n"
        "signal.signal(signal.SIGPIPE, signal.SIG_DFL)\n"
        "from quorumctl.wire.connection import _no_sigpipe\n"
        "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)\n"
        "c = socket.create_connection(srv.getsockname()); a, _ = srv.accept(); a.close(); time.sleep(0.1)\n"
        "try:\n"
        "    with _no_sigpipe():\n"
        "        c.sendall(b'x' * 10); time.sleep(0.1); c.sendall(b'y' * 10)\n"
        "except OSError as e:\n"
        "    print('EPIPE' if e.errno == 32 else e.errno)\n"
        "c.close(); time.sleep(0.05); print('alive')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout) == (0, "EPIPE\nalive\n"), (p.returncode, p.stderr)
