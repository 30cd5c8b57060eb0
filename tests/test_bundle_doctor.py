"""`bundle` and `doctor` offline, on the real fixtures: every part is in the
archive, no planted secret appears anywhere in it, a dead node does not block
it; doctor's findings on hand-made misconfigurations of configs (the ones that
need real Kafka files are in tests/test_kafka41_recover.py)."""

from __future__ import annotations

import hashlib
import json
import socket
import tarfile

import pytest

from samples import FIXTURES

DYN = FIXTURES / "kafka-3.9.0-dynamic" / "data"
pytestmark = pytest.mark.skipif(not DYN.exists(), reason=f"the real fixtures are absent ({FIXTURES})")

SECRETS = ["hunter2-keystore", "s3cr3t-truststore", "jaas-pw-77", "token-abc-123", "keypass-xyz", "plain-pw-9"]


def planted_config(tmp_path, node: int) -> str:
    p = tmp_path / f"c{node}.properties"
    p.write_text(
        f"# the admin password is {SECRETS[5]}\n"
        f"node.id={node}\nprocess.roles=controller\nlog.dirs={DYN / f'c{node}'}\n"
        "controller.listener.names=CONTROLLER\n"
        f"listeners=CONTROLLER://localhost:{19190 + node}\n"
        "controller.quorum.bootstrap.servers=localhost:19191\n"
        f"ssl.keystore.password={SECRETS[0]}\nssl.truststore.password={SECRETS[1]}\n"
        "listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
        f"required username=\"admin\" \\\n    password=\"{SECRETS[2]}\";\n"
        f"delegation.token.secret.key={SECRETS[3]}\nssl.key.password={SECRETS[4]}\n")
    return str(p)


def members(path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def test_bundle_has_every_part_and_no_secret(cli, tmp_path):
    confs = [planted_config(tmp_path, n) for n in (1, 2, 3)]
    out = tmp_path / "b.tar.gz"
    with socket.socket() as dead:       # accepts connections, never answers: a hung node
        dead.bind(("127.0.0.1", 0))
        dead.listen(8)
        addr = "127.0.0.1:%d" % dead.getsockname()[1]
        code, text, err = cli("bundle", "--out", out, *[a for c in confs for a in ("-c", c)],
                              "--bootstrap-controller", addr, "--timeout", "1", "--include-logs")
    assert (code, err) == (0, ""), text
    m = members(out)
    names = {n.removeprefix("quorumctl-bundle/") for n in m}
    for part in ("manifest.json", "doctor.txt", "doctor.json", "state.txt", "state.json", "verify.txt",
                 "verify.json", "describe-status.txt", "describe-status.json", "describe-replication.txt",
                 "describe-replication.json", "listings/01-c1.txt", "listings/02-c2.txt", "listings/03-c3.txt",
                 "configs/01-node1-c1.properties", "configs/03-node3-c3.properties",
                 "logs/01-c1/__cluster_metadata-0/00000000000000000000.log",
                 "logs/03-c3/__cluster_metadata-0/quorum-state"):
        assert part in names, part
    for name, data in m.items():
        for s in SECRETS:
            assert s.encode() not in data, (s, name)
    conf = m["quorumctl-bundle/configs/01-node1-c1.properties"].decode()
    assert "ssl.keystore.password=[redacted]\n" in conf and "listener.name.controller.plain.sasl.jaas.config=" \
                                                           "[redacted]\n" in conf and "node.id=1\n" in conf
    manifest = json.loads(m["quorumctl-bundle/manifest.json"])
    assert {p["name"] for p in manifest["parts"]} == names - {"manifest.json"}
    assert any(e.startswith("describe-status: exit 3:") for e in manifest["errors"])
    assert json.loads(m["quorumctl-bundle/doctor.json"].decode().split("\n[exit")[0])["voter_set"]["ids"] == [1, 2, 3]
    listing = m["quorumctl-bundle/listings/01-c1.txt"].decode()
    meta = (DYN / "c1" / "meta.properties").read_bytes()
    assert f"{len(meta):>12} {hashlib.sha256(meta).hexdigest()} meta.properties\n" in listing
    assert out.exists() and not list(tmp_path.glob("b.tar.gz.tmp-*"))
    # never overwritten
    code, text, err = cli("bundle", "--out", out, "-c", confs[0])
    assert code == 2 and "exists" in err


def test_doctor_config_findings(cli, tmp_path):
    c1 = tmp_path / "c1.properties"
    c1.write_text(f"node.id=1\nprocess.roles=controller\nlog.dirs={DYN / 'c1'}\ncontroller.listener.names=CONTROLLER\n"
                  "listeners=PLAINTEXT://localhost:9092\ncontroller.quorum.bootstrap.servers=localhost:19191\n"
                  "controller.quorum.voters=1@localhost:19191\n")
    b4 = tmp_path / "b4.properties"
    b4.write_text(f"node.id=5\nprocess.roles=broker\nlog.dirs={DYN / 'b4'}\ncontroller.listener.names=CONTROLLER\n"
                  "listeners=CONTROLLER://localhost:9093\ncontroller.quorum.bootstrap.servers=localhost:19191\n")
    code, out, err = cli("doctor", "-c", c1, "-c", b4, "-o", "json")
    doc = json.loads(out)
    assert code == 1
    got = {(f["code"], f["severity"]) for f in doc["findings"]}
    assert got == {("controller-listener-not-listening", "error"), ("both-quorum-settings", "warning"),
                   ("broker-listens-on-controller-listener", "error"), ("node-id-mismatch", "error"),
                   ("static-config-on-dynamic-storage", "warning")}
    nid = next(f for f in doc["findings"] if f["code"] == "node-id-mismatch")
    assert nid["evidence"] == [f"{DYN / 'b4' / 'meta.properties'}:{_line(DYN / 'b4' / 'meta.properties', 'node.id')}"
                               ": node.id=4", f"{b4}:1: node.id=5"]
    code, out, err = cli("doctor", "-c", c1, "-c", b4)
    assert out.splitlines()[-1] == "5 finding(s): 3 error(s), 2 warning(s)"


def _line(path, key) -> int:
    return 1 + next(i for i, ln in enumerate(path.read_text().splitlines()) if ln.startswith(key + "="))
