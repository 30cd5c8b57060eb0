"""`bundle` and `doctor` offline, on the real fixtures: every part is in the
archive, no planted secret appears anywhere in it, a dead node does not block
it; doctor's findings on hand-made misconfigurations of configs (the ones that
need real Kafka files are in tests/kafka/test_kafka41_recover.py)."""

from __future__ import annotations

import hashlib
import json
import socket
import tarfile

import pytest

from samples import FIXTURES

DYN = FIXTURES / "kafka-3.9.0-dynamic" / "data"
pytestmark = pytest.mark.shared("reference/fixtures/kafka-3.9.0-dynamic")

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
        f'required username="admin" \\\n    password="{SECRETS[2]}";\n'
        f"delegation.token.secret.key={SECRETS[3]}\nssl.key.password={SECRETS[4]}\n"
    )
    return str(p)


def members(path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def test_bundle_has_every_part_and_no_secret(cli, tmp_path):
    confs = [planted_config(tmp_path, n) for n in (1, 2, 3)]
    out = tmp_path / "b.tar.gz"
    with socket.socket() as dead:  # accepts connections, never answers: a hung node
        dead.bind(("127.0.0.1", 0))
        dead.listen(8)
        addr = "127.0.0.1:%d" % dead.getsockname()[1]
        code, text, err = cli(
            "bundle",
            "--out",
            out,
            *[a for c in confs for a in ("-c", c)],
            "--bootstrap-controller",
            addr,
            "--timeout",
            "1",
            "--include-logs",
        )
    assert (code, err) == (0, ""), text
    m = members(out)
    names = {n.removeprefix("quorumctl-bundle/") for n in m}
    for part in (
        "manifest.json",
        "doctor.txt",
        "doctor.json",
        "state.txt",
        "state.json",
        "verify.txt",
        "verify.json",
        "describe-status.txt",
        "describe-status.json",
        "describe-replication.txt",
        "describe-replication.json",
        "describe-health.txt",
        "describe-health.json",
        "features-describe.txt",
        "features-describe.json",
        "listings/01-c1.txt",
        "listings/02-c2.txt",
        "listings/03-c3.txt",
        "configs/01-node1-c1.properties",
        "configs/03-node3-c3.properties",
        "logs/01-c1/__cluster_metadata-0/00000000000000000000.log",
        "logs/03-c3/__cluster_metadata-0/quorum-state",
    ):
        assert part in names, part
    for name, data in m.items():
        for s in SECRETS:
            assert s.encode() not in data, (s, name)
    conf = m["quorumctl-bundle/configs/01-node1-c1.properties"].decode()
    assert (
        "ssl.keystore.password=[redacted]\n" in conf
        and "listener.name.controller.plain.sasl.jaas.config=[redacted]\n" in conf
        and "node.id=1\n" in conf
    )
    manifest = json.loads(m["quorumctl-bundle/manifest.json"])
    assert {p["name"] for p in manifest["parts"]} == names - {"manifest.json"}
    assert any(e.startswith("describe-status: exit 3:") for e in manifest["errors"])
    # a hung node: health says so (nothing answered, exit 3), as status does
    assert any(e.startswith("describe-health: exit 3:") for e in manifest["errors"])
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
    c1.write_text(
        f"node.id=1\nprocess.roles=controller\nlog.dirs={DYN / 'c1'}\ncontroller.listener.names=CONTROLLER\n"
        "listeners=PLAINTEXT://localhost:9092\ncontroller.quorum.bootstrap.servers=localhost:19191\n"
        "controller.quorum.voters=1@localhost:19191\n"
    )
    b4 = tmp_path / "b4.properties"
    b4.write_text(
        f"node.id=5\nprocess.roles=broker\nlog.dirs={DYN / 'b4'}\ncontroller.listener.names=CONTROLLER\n"
        "listeners=CONTROLLER://localhost:9093\ncontroller.quorum.bootstrap.servers=localhost:19191\n"
    )
    code, out, err = cli("doctor", "-c", c1, "-c", b4, "-o", "json")
    doc = json.loads(out)
    assert code == 1
    got = {(f["code"], f["severity"]) for f in doc["findings"]}
    assert got == {
        ("controller-listener-not-listening", "error"),
        ("both-quorum-settings", "warning"),
        ("broker-listens-on-controller-listener", "error"),
        ("node-id-mismatch", "error"),
        ("static-config-on-dynamic-storage", "warning"),
    }
    nid = next(f for f in doc["findings"] if f["code"] == "node-id-mismatch")
    assert nid["evidence"] == [
        f"{DYN / 'b4' / 'meta.properties'}:{_line(DYN / 'b4' / 'meta.properties', 'node.id')}: node.id=4",
        f"{b4}:1: node.id=5",
    ]
    code, out, err = cli("doctor", "-c", c1, "-c", b4, code=1)
    assert out.splitlines()[-1] == "5 finding(s): 3 error(s), 2 warning(s)"


def _line(path, key) -> int:
    return 1 + next(i for i, ln in enumerate(path.read_text().splitlines()) if ln.startswith(key + "="))


def _doctor(cli, *args) -> dict:
    code, out, err = cli("doctor", *args, "-o", "json")
    assert err == "", err
    doc = json.loads(out)
    assert code == (1 if doc["findings"] else 0)
    return {f["code"]: f for f in doc["findings"]}


def test_doctor_roles_listeners_and_storage(cli, tmp_path):
    """The classes that need no real Kafka files: configs that cannot work, and storage Kafka will not start on."""

    def conf(name, text):
        p = tmp_path / name
        p.write_text(text)
        return p

    zk = conf("zk.properties", "broker.id=7\nzookeeper.connect=zk:2181\nlog.dirs=" + str(tmp_path / "zk") + "\n")
    odd = conf(
        "odd.properties",
        "process.roles=broker,zookeeper\nlog.dirs=" + str(tmp_path / "odd") + "\nlisteners=PLAINTEXT://:9092\n",
    )
    got = _doctor(cli, "-c", zk, "-c", odd)
    assert sorted(got) == [
        "bad-process-roles",
        "log-dir-missing",
        "no-controller-listener",
        "no-node-id",
        "no-process-roles",
    ]
    assert got["no-process-roles"]["evidence"] == [f"{zk}: process.roles is not set"]
    assert got["bad-process-roles"]["message"] == f"{odd}: process.roles names ['zookeeper']"
    assert got["log-dir-missing"]["message"] == f"{tmp_path / 'odd'} does not exist"

    (tmp_path / "empty").mkdir()
    (tmp_path / "badmeta").mkdir()
    (tmp_path / "badmeta" / "meta.properties").write_text("version=7\nnode.id=x\n")
    c = conf(
        "c.properties",
        "node.id=1\nprocess.roles=controller\ncontroller.listener.names=CTRL\n"
        "listeners=CTRL://localhost:9093\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT\n"
        f"log.dirs={tmp_path / 'empty'},{tmp_path / 'badmeta'}\n",
    )
    got = _doctor(cli, "-c", c)
    assert sorted(got) == [
        "controller-listener-no-protocol",
        "no-quorum-setting",
        "not-formatted",
        "unreadable-meta-properties",
    ]
    assert got["controller-listener-no-protocol"]["evidence"] == [
        f"{c}:5: listener.security.protocol.map=PLAINTEXT:PLAINTEXT"
    ]
    assert got["not-formatted"]["message"] == f"{tmp_path / 'empty'} has no meta.properties (not formatted)"
    assert got["unreadable-meta-properties"]["evidence"] == [str(tmp_path / "badmeta" / "meta.properties")]


def test_doctor_static_voters(cli, tmp_path):
    def conf(n, voters, port):
        p = tmp_path / f"s{n}.properties"
        p.write_text(
            f"node.id={n}\nprocess.roles=controller\ncontroller.listener.names=CONTROLLER\n"
            f"listeners=CONTROLLER://localhost:{port}\ncontroller.quorum.voters={voters}\n"
            f"log.dirs={tmp_path / f's{n}'}\n"
        )
        (tmp_path / f"s{n}").mkdir()
        return p

    a = conf(1, "1@localhost:9001,2@localhost:9002", 9001)
    b = conf(2, "1@localhost:9001,2@localhost:9102", 9002)
    c = conf(3, "1@localhost:9001,2@localhost:9002", 9003)
    got = _doctor(cli, "-c", a, "-c", b, "-c", c)
    assert sorted(got) == [
        "controller-not-in-static-voters",
        "not-formatted",
        "static-voter-endpoint-differs",
        "static-voters-differ",
    ]
    assert got["static-voters-differ"]["evidence"] == [
        f"{a}:5: controller.quorum.voters=1@localhost:9001,2@localhost:9002",
        f"{b}:5: controller.quorum.voters=1@localhost:9001,2@localhost:9102",
    ]
    assert got["static-voter-endpoint-differs"]["message"] == (
        f"{b}: controller.quorum.voters has node 2 at localhost:9102, but it listens at localhost:9002"
    )
    assert got["controller-not-in-static-voters"]["severity"] == "warning"
    assert got["controller-not-in-static-voters"]["message"].startswith(f"{c}: node 3 is a controller but not in")


def test_doctor_voter_endpoint_listener_renamed(cli, tmp_path):
    c1 = tmp_path / "c1.properties"
    c1.write_text(
        f"node.id=1\nprocess.roles=controller\nlog.dirs={DYN / 'c1'}\ncontroller.listener.names=CTRL\n"
        "listeners=CTRL://localhost:19191\ncontroller.quorum.bootstrap.servers=localhost:19191\n"
    )
    (f,) = _doctor(cli, "-c", c1).values()
    assert (f["code"], f["severity"]) == ("voter-endpoint-listener-missing", "error")
    assert f["message"] == "the voter set holds node 1 without a CTRL endpoint (CONTROLLER://localhost:19191)"


def _without_voter_set(src, dst) -> None:
    """Snapshot `src` as Kafka's lost-voter-set bug writes it (Kafka 4.1's broker in CI): the
    header batch without KRaftVersion and Voters, every batch's records kept, offsets from 0."""
    from quorumctl.records import metadata as md
    from quorumctl.records.batch import BatchReader, encode_batch

    out, offset = [], 0
    with BatchReader(str(src)) as reader:
        for b in reader:
            recs = [
                (r.key, r.value)
                for r in b.iter_records()
                if not (b.is_control and md.control_type(r.key) in (md.KRAFT_VERSION, md.KRAFT_VOTERS))
            ]
            out.append(
                encode_batch(
                    recs,
                    base_offset=offset,
                    leader_epoch=b.leader_epoch,
                    base_timestamp=b.base_timestamp,
                    control=b.is_control,
                )
            )
            offset += len(recs)
    dst.write_bytes(b"".join(out))


def test_doctor_voter_set_lost(cli, tmp_path):
    """A replica whose latest snapshot lost the voter set over a kraft.version 1 it held
    before (Kafka's truncation bug): the broker of the real 3.9 dynamic quorum with such a
    snapshot at offset 296, then controller 1 with its own snapshot 296 so rewritten."""
    import shutil

    snap = "00000000000000000296-0000000001.checkpoint"
    b4, c1 = tmp_path / "b4", tmp_path / "c1"
    shutil.copytree(DYN / "b4", b4)
    shutil.copytree(DYN / "c1", c1)
    assert _doctor(cli, b4, c1) == {}  # as Kafka left them
    _without_voter_set(DYN / "c1" / "__cluster_metadata-0" / snap, b4 / "__cluster_metadata-0" / snap)
    (f,) = _doctor(cli, b4).values()
    assert (f["code"], f["severity"]) == ("voter-set-lost", "error")
    assert f["message"].startswith(
        f"node 4's latest snapshot {snap} holds no kraft.version and no voter set, but its log offset 1 "
        "holds kraft.version 1"
    )
    assert f["evidence"] == [
        f"{b4}/__cluster_metadata-0/{snap}: no KRaftVersionRecord",
        f"{b4}/__cluster_metadata-0 (log offset 1): KRaftVersionRecord",
    ]
    assert f["remedy"] == (
        f"stop the node, move {b4}/__cluster_metadata-0 out of {b4} (keep it until the node runs), "
        "and start it: it fetches the metadata log from the controllers again"
    )
    (c1 / "__cluster_metadata-0" / snap).chmod(0o644)
    _without_voter_set(DYN / "c1" / "__cluster_metadata-0" / snap, c1 / "__cluster_metadata-0" / snap)
    found = _doctor(cli, c1)
    assert list(found) == ["voter-set-lost"]
    assert found["voter-set-lost"]["remedy"].startswith("stop node 1 and give it a new log dir: it is a voter")
    assert "`quorumctl replace-controller 1`" in found["voter-set-lost"]["remedy"]


def test_doctor_live_findings(cli):
    """The live checks against answers of the shape DescribeQuorum gives (the real quorum's are in
    tests/kafka/test_kafka41_recover.py); an address that accepts and never answers is live-unreachable."""
    from types import SimpleNamespace

    from quorumctl.diagnose.file_checks import examine
    from quorumctl.diagnose.live_quorum import live_findings

    report = examine([], [str(DYN / "c1"), str(DYN / "c2")])
    assert report.findings == []
    meta = (DYN / "c2" / "meta.properties").read_text()
    did = next(ln.split("=", 1)[1] for ln in meta.splitlines() if ln.startswith("directory.id="))
    q = SimpleNamespace(
        cluster_id=None,
        leader_id=-1,
        leader_epoch=7,
        voters=[SimpleNamespace(id=2, directory_id="AAAAAAAAAAAAAAAAAAAAAQ")],
        observers=[],
    )
    got = {f.code: f for f in live_findings(report, q, "h:1")}
    assert sorted(got) == ["live-directory-id-differs", "live-no-leader"]
    assert got["live-no-leader"].message == "h:1: the quorum has no leader (epoch 7)"
    assert got["live-directory-id-differs"].message == (
        f"the live quorum holds voter 2 with directory id AAAAAAAAAAAAAAAAAAAAAQ, but {DYN / 'c2'} (node 2's "
        f"metadata log dir) has {did}"
    )
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))
        dead.listen(8)
        addr = "127.0.0.1:%d" % dead.getsockname()[1]
        got = _doctor(cli, DYN / "c1", "--bootstrap-controller", addr, "--timeout", "1")
    # the voters the files name (localhost:19191-19193) are probed too: none runs, so the majority is lost
    # (unless something else listens there: only the finding about addr is certain)
    assert set(got) <= {"live-unreachable", "majority-lost"} and got["live-unreachable"]["evidence"] == [addr]


def test_doctor_names_a_replaced_disk():
    """A voter whose node fetches as an observer under a new directory id: one
    voter-directory-replaced error with the replace-controller fix; the node's new
    log dir (its directory.id the observer's) is not reported again as
    live-directory-id-differs."""
    from quorumctl.diagnose.file_checks import examine
    from quorumctl.diagnose.live_quorum import live_findings
    from quorumctl.domain.quorum import Quorum, Replica

    report = examine([], [str(DYN / "c1"), str(DYN / "c2")])
    one, new = (
        next(
            ln.split("=", 1)[1]
            for ln in (DYN / c / "meta.properties").read_text().splitlines()
            if ln.startswith("directory.id=")
        )
        for c in ("c1", "c2")
    )
    old = "AAAAAAAAAAAAAAAAAAAAAQ"
    q = Quorum(
        1,
        4,
        90,
        [Replica(1, one, 100, 1, 1), Replica(2, old, 40, 1, 1), Replica(3, "CCCCCCCCCCCCCCCCCCCCCQ", 100, 1, 1)],
        [Replica(2, new, 100, 1, 1)],
    )
    (f,) = live_findings(report, q, "h:1")
    assert (f.code, f.severity, f.node_id) == ("voter-directory-replaced", "error", 2)
    assert f.message == (
        f"controller 2 runs as an observer with directory id {new}; the voter set names 2 with "
        f"directory id {old} (a replaced disk?): the quorum has 2 voters, one fewer than believed"
    )
    assert f.evidence == [
        f"h:1: DescribeQuorum voter 2 directory id {old}",
        f"h:1: DescribeQuorum observer 2 directory id {new}",
    ]
    assert f.remedy == (
        "quorumctl replace-controller 2 --bootstrap-controller h:1 (a dry run; --apply removes the "
        "old directory id from the voters, then adds the new one)"
    )
    # an observer with the voter's own directory id is not a replaced disk (the files still differ)
    q.observers = [Replica(2, old, 100, 1, 1)]
    assert [f.code for f in live_findings(report, q, "h:1")] == ["live-directory-id-differs"]


def test_every_documented_finding_is_produced_by_a_test():
    """docs/diagnose.md's table lists every finding code doctor has, and each is asserted by some test."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    table = [ln for ln in (root / "docs" / "diagnose.md").read_text().splitlines() if ln.startswith("| `")]
    documented = {c for ln in table for c in re.findall(r"`([a-z][a-z0-9-]+)`", ln.split("|")[1])}
    source = "".join(p.read_text() for p in sorted((root / "quorumctl" / "diagnose").glob("*.py")))
    in_code = set(re.findall(r'(?:Finding|Trap)\(\s*"([a-z][a-z0-9-]+)"', source))
    assert documented == in_code, (sorted(documented - in_code), sorted(in_code - documented))
    tests = "".join(p.read_text() for p in (root / "tests").glob("*/test_*.py"))
    untested = sorted(c for c in documented if f'"{c}"' not in tests)
    assert untested == [], untested


def test_doctor_stale_registrations_from_the_image(cli, tmp_path, monkeypatch):
    """A controller registered but not a voter (removed and wiped: KAFKA-20395), and a
    fenced broker while another runs, from a metadata log's snapshot; a cluster
    stopped whole (every broker fenced) is not reported."""
    from quorumctl.logdir import segments
    from quorumctl.logdir.snapshots import encode_snapshot
    from quorumctl.testing.synth import B, T0, write_replica

    def write(d, fenced: dict[int, bool]):
        pdir = write_replica(str(d), [B(1), B(1)], node_id=1)
        feats = [{"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 21}]

        def ep(port):
            return [{"name": "CONTROLLER", "host": "h", "port": port, "securityProtocol": 0}]

        recs = [
            (
                "RegisterControllerRecord",
                0,
                {
                    "controllerId": i,
                    "incarnationId": "AAAAAAAAAAAAAAAAAAAAAQ",
                    "zkMigrationReady": False,
                    "endPoints": ep(9090 + i),
                    "features": feats,
                },
            )
            for i in (1, 2, 3, 7)
        ]
        recs += [
            (
                "RegisterBrokerRecord",
                2,
                {
                    "brokerId": b,
                    "incarnationId": "AAAAAAAAAAAAAAAAAAAAAg",
                    "brokerEpoch": 10 + b,
                    "endPoints": [{"name": "PLAINTEXT", "host": "h", "port": 9090 + b, "securityProtocol": 0}],
                    "features": feats,
                    "rack": None,
                    "fenced": f,
                },
            )
            for b, f in fenced.items()
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
        return pdir

    pdir = write(tmp_path / "c1", {4: False, 5: True})
    got = _doctor(cli, str(tmp_path / "c1"))
    where = f"{pdir}: the metadata image"
    f = got["stale-controller-registration"]
    assert f["severity"] == "warning" and f["evidence"] == [f"{where}: /controllers/7"]
    assert f["message"] == (
        "controller 7 is registered (listeners CONTROLLER://h:9097) but is not a voter (voters "
        "1, 2, 3): a removed controller stays registered; it supports metadata.version 7-21 "
        "(3.3-IV3 to 3.9-IV0): Kafka refuses any metadata.version upgrade above 3.9-IV0 while it "
        "stays registered"
    )
    assert "KIP-1312, KAFKA-20395" in f["remedy"] and "node.id 7" in f["remedy"]
    # the command with the voters' registered addresses and the highest level their release supports
    assert f["remedy"].startswith(
        "if it blocks an upgrade: quorumctl cluster clear-registration 7 --bootstrap-controller h:9091,h:9092,h:9093 "
        "--metadata 3.9-IV0 plans the fix"
    )
    f = got["fenced-broker-registration"]
    assert f["evidence"] == [f"{where}: /brokers/5"]
    assert f["message"].startswith("broker 5 is registered but fenced while broker 4 is not: it stopped heartbeating")
    assert f["remedy"].startswith(
        "if broker 5 is gone for good: quorumctl cluster clear-registration 5 --bootstrap-server h:9094 (a dry "
        "run that checks it; --apply sends UnregisterBroker, as kafka-cluster.sh unregister --bootstrap-server "
        "h:9094 --id 5 does)"
    )
    # every broker fenced: a cluster stopped whole, nothing to say about brokers
    write(tmp_path / "c2", {4: True, 5: True})
    assert "fenced-broker-registration" not in _doctor(cli, str(tmp_path / "c2"))

    # live: DescribeCluster's controllers that are not voters, except those the files already named
    # (matched by the findings' node id, which the JSON does not carry)
    from types import SimpleNamespace

    from quorumctl.config.addresses import Address
    from quorumctl.diagnose.file_checks import examine
    from quorumctl.diagnose.registrations import live_registrations
    from quorumctl.live import describe as client
    from quorumctl.wire.access import ClusterAccess

    report = examine([], [str(tmp_path / "c1")])
    regs = [f for f in report.findings if f.code.endswith("-registration")]
    assert [(f.code, f.node_id) for f in regs] == [
        ("stale-controller-registration", 7),
        ("fenced-broker-registration", 5),
    ]
    assert "node_id" not in regs[0].to_json()
    asked = []
    monkeypatch.setattr(
        client,
        "registered_controllers",
        lambda access, timeout: (
            asked.append(access.controllers) or {i: Address("h", 9090 + i) for i in (1, 2, 3, 7, 9)}
        ),
    )
    q = SimpleNamespace(voters=[SimpleNamespace(id=i) for i in (1, 2, 3)])
    (live,) = live_registrations(report, q, ClusterAccess(None, "h:1"), 1.0)
    assert asked == ["h:1"] and (live.code, live.node_id) == ("stale-controller-registration", 9)
    assert live.message.startswith("controller 9 is registered (h:9099) but is not a voter (voters 1, 2, 3)")


@pytest.mark.parametrize("level,remedy", [(32, "STALE_CONTROLLER_REMEDY"), (33, "UNREGISTER_REMEDY")])
def test_live_registration_remedy_follows_the_level_the_controllers_report(monkeypatch, level, remedy):
    """With only --bootstrap-controller (no files), the remedy's metadata.version is the finalized one the
    controllers report: UnregisterController from 4.4-IV2 (33), the re-registration below."""
    from types import SimpleNamespace

    from quorumctl.config.addresses import Address
    from quorumctl.diagnose import registrations
    from quorumctl.diagnose.findings import Report
    from quorumctl.live import describe as client
    from quorumctl.wire.access import ClusterAccess

    monkeypatch.setattr(
        client, "registered_controllers", lambda access, timeout: {i: Address("h", 9090 + i) for i in (1, 2, 3)}
    )
    monkeypatch.setattr(
        client,
        "describe_features",
        lambda access, timeout: client.Features(
            {"metadata.version": (7, 33)}, {"metadata.version": level}, 7, access.controllers
        ),
    )
    q = SimpleNamespace(voters=[SimpleNamespace(id=i) for i in (1, 2)])
    (live,) = registrations.live_registrations(Report([], [], None, []), q, ClusterAccess(None, "h:1"), 1.0)
    assert (live.code, live.node_id) == ("stale-controller-registration", 3)
    # the remedy names the controller it was asked through and the highest level it supports: it runs as printed
    expected = getattr(registrations, remedy).format(
        id=3, via="--bootstrap-controller h:1", target="--metadata 4.4-IV2"
    )
    assert live.remedy == expected and "quorumctl cluster clear-registration 3 --bootstrap-controller h:1 " in expected
    if remedy == "STALE_CONTROLLER_REMEDY":
        assert "--bootstrap-controller h:1 --metadata 4.4-IV2 plans the fix" in expected
