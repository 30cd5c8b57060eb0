"""doctor on real Kafka. Its known traps (quorumctl/diagnose/traps.py) on storage real Kafka
(4.1 and 4.3) formatted: `kafka-storage.sh format --release-version 3.4` writes a
bootstrap.checkpoint whose metadata.version (3.4-IV0) is below what the nodes'
configs use: a JBOD broker, SCRAM, delegation tokens. No cluster is started there:
the nodes would fail or refuse exactly as the findings say, which is the point.

A ghost broker (killed, fenced, still registered) on a running 4.3 (and 4.1) cluster, found by
`doctor --bootstrap-controller` alone (it reads the metadata log from the leader as an
observer does), cleared by its remedy as printed, and gone by Kafka's own account."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka41 import HOMES, home_of, kafka_tool, needs_kafka, start_cluster

pytestmark = needs_kafka

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"


def line_of(path, key) -> int:
    return 1 + next(i for i, ln in enumerate(path.read_text().splitlines()) if ln.startswith(key + "="))


@pytest.mark.parametrize("release", list(HOMES))
def test_doctor_metadata_version_traps_on_real_format(cli, tmp_path, release):
    home = home_of(release)
    data = tmp_path / "data"
    c1, b4 = tmp_path / "c1.properties", tmp_path / "b4.properties"
    common = "controller.quorum.voters=1@127.0.0.1:29991\ncontroller.listener.names=CONTROLLER\n"
    c1.write_text(
        f"node.id=1\nprocess.roles=controller\n{common}listeners=CONTROLLER://127.0.0.1:29991\n"
        f"log.dirs={data / 'c1'}\ndelegation.token.secret.key=tok-secret-31\n"
    )
    b4.write_text(
        f"node.id=4\nprocess.roles=broker\n{common}listeners=PLAINTEXT://127.0.0.1:29994\n"
        f"log.dirs={data / 'b4a'},{data / 'b4b'}\nsasl.enabled.mechanisms=SCRAM-SHA-512\n"
    )
    for conf in (c1, b4):
        p = kafka_tool(
            "kafka-storage",
            ["format", "-t", CLUSTER_ID, "-c", str(conf), "--release-version", "3.4"],
            tmp_path,
            home=home,
        )
        assert p.returncode == 0 and "with metadata.version 3.4-IV0" in p.stdout, p.stdout + p.stderr[-2000:]

    code, out, err = cli("doctor", "-c", c1, "-c", b4, "-o", "json")
    assert (code, err) == (1, "")
    doc = json.loads(out)
    # 4.4's kafka-storage writes the bootstrap records into the controller's zero snapshot (KAFKA-19648)
    where = (
        "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
        if release == "4.4"
        else "bootstrap.checkpoint"
    )
    boot = f"{data / 'c1' / where}@1: FeatureLevelRecord metadata.version=8"
    assert doc["metadata_version"] == {"level": 8, "name": "3.4-IV0", "evidence": boot}
    found = {f["code"]: f for f in doc["findings"]}
    assert sorted(found) == [
        "delegation-tokens-need-metadata-version",
        "jbod-needs-metadata-version",
        "scram-needs-metadata-version",
    ]

    f = found["jbod-needs-metadata-version"]
    assert f["severity"] == "error"
    assert f["message"].startswith(
        f"{b4}: log.dirs needs metadata.version 3.7-IV2 or newer, but the cluster's is "
        "3.4-IV0: a broker with several log dirs (JBOD) fails"
    )
    assert f["message"].endswith("(KIP-858, KAFKA-15922)")
    assert f["evidence"] == [f"{b4}:{line_of(b4, 'log.dirs')}: log.dirs={data / 'b4a'},{data / 'b4b'}", boot]

    f = found["scram-needs-metadata-version"]
    assert f["severity"] == "error" and "needs metadata.version 3.5-IV2 or newer" in f["message"]
    assert f["message"].endswith("(KIP-554, KAFKA-14084)")
    assert f["evidence"] == [
        f"{b4}:{line_of(b4, 'sasl.enabled.mechanisms')}: sasl.enabled.mechanisms=SCRAM-SHA-512",
        boot,
    ]

    f = found["delegation-tokens-need-metadata-version"]
    assert f["severity"] == "warning" and "needs metadata.version 3.6-IV2 or newer" in f["message"]
    assert "CreateDelegationToken with UNSUPPORTED_VERSION (KAFKA-15219)" in f["message"]
    # evidence names the line, never the secret
    assert f["evidence"] == [
        f"{c1}:{line_of(c1, 'delegation.token.secret.key')}: delegation.token.secret.key=[redacted]",
        boot,
    ]
    assert "tok-secret-31" not in out

    # the same configs on storage formatted at 3.7-IV2 (the highest level any of them needs): no finding
    for d in ("c1", "b4a", "b4b"):
        shutil.rmtree(data / d)
    for conf in (c1, b4):
        assert (
            kafka_tool(
                "kafka-storage",
                ["format", "-t", CLUSTER_ID, "-c", str(conf), "--release-version", "3.7-IV2"],
                tmp_path,
                home=home,
            ).returncode
            == 0
        )
    code, out, err = cli("doctor", "-c", c1, "-c", b4, "-o", "json")
    assert (code, [f["code"] for f in json.loads(out)["findings"]]) == (0, [])


QUORUMCTL = Path(sys.executable).parent / "quorumctl"  # the installed console script


def quorumctl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(QUORUMCTL), *args], capture_output=True, text=True, timeout=180)


def as_printed(*args: str) -> subprocess.CompletedProcess:
    """A printed remedy run as an operator runs it: once more when the cluster did not answer
    in time (exit 3: CI saw a broker forward DescribeQuorum for over 10 s on a loaded machine)."""
    p = quorumctl(*args)
    return quorumctl(*args) if p.returncode == 3 and " within " in p.stderr else p


def until(what: str, ok, limit: float = 90):
    end = time.monotonic() + limit
    while not ok():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(1)


@pytest.mark.parametrize("release", [pytest.param("4.3", marks=pytest.mark.kafka("4.3")), "4.1"])
def test_ghost_broker_found_through_the_controllers_alone(cli, tmp_path_factory, tmp_path, release):
    """3 controllers (dynamic quorum), brokers 4 and 5, on 4.3 and 4.1; broker 5 killed and fenced. doctor with
    --bootstrap-controller alone names it as from a controller's log dir (the same finding and
    remedy), read through a snapshot (a snapshot every 3 s: the leader answers SnapshotId, so
    FetchSnapshot runs); the quorum is undisturbed (DescribeQuorum: the same voters, no replica
    -1; no error in the controllers' logs); the remedy, run as printed and with --apply as it
    says, unregisters broker 5, which Kafka's kafka-cluster list-endpoints then no longer lists."""
    home = home_of(release)
    c = start_cluster(
        cli,
        tmp_path_factory,
        f"ghost-broker-{release}",
        dynamic=True,
        controllers=3,
        brokers=2,
        version=release,
        start_timeout=240,
        extra_conf="metadata.log.max.snapshot.interval.ms=3000",
    )

    def kafka(tool: str, *args: str) -> subprocess.CompletedProcess:
        p = kafka_tool(tool, list(args), tmp_path, home=home)
        assert p.returncode == 0, p.stdout + p.stderr[-2000:]
        return p

    def states() -> dict[int, str]:  # Kafka's own view, through the running broker
        p = kafka("kafka-cluster", "list-endpoints", "--bootstrap-server", c.addr(4), "--include-fenced-brokers")
        return {int(ln.split()[0]): ln.split()[4] for ln in p.stdout.splitlines()[1:] if ln.strip()}

    def quorum_rows() -> list[tuple[str, str]]:  # (NodeId, Status) as kafka-metadata-quorum prints them
        p = kafka("kafka-metadata-quorum", "--bootstrap-controller", c.controllers[0], "describe", "--replication")
        return sorted((ln.split()[0], ln.split()[-1]) for ln in p.stdout.splitlines()[1:] if ln.strip())

    try:
        c.kill(5)
        until("broker 5 fenced (Kafka's list-endpoints)", lambda: states() == {4: "unfenced", 5: "fenced"}, 90)
        voters = [r for r in quorum_rows() if r[1] in ("Leader", "Follower")]
        assert sorted(v[0] for v in voters) == ["1", "2", "3"]
        for n in (1, 2, 3):
            c.mark_log(n)
        p = quorumctl("doctor", "--bootstrap-controller", c.controllers[1], "--timeout", "30", "-o", "json")
        assert (p.returncode, p.stderr) == (1, ""), p.stdout + p.stderr
        doc = json.loads(p.stdout)
        regs = doc["registrations"]
        assert (regs["visible"], regs["brokers"], regs["fenced"]) == (True, [4, 5], [5]), regs
        assert regs["snapshot"] is not None and regs["high_watermark"] >= regs["snapshot"][0], regs
        found = [f for f in doc["findings"] if f["code"] == "fenced-broker-registration"]
        assert [f["message"].split()[:2] for f in found] == [["broker", "5"]], doc["findings"]
        remedy = found[0]["remedy"]
        assert remedy == (
            f"if broker 5 is gone for good: quorumctl cluster clear-registration 5 --bootstrap-server {c.addr(4)} "
            "(a dry run that checks it; --apply sends UnregisterBroker, as kafka-cluster.sh unregister "
            f"--bootstrap-server {c.addr(4)} --id 5 does); if it is only stopped, start it again"
        )
        # the same finding and remedy as from a controller's config and log dir
        code, out, err = cli("doctor", "-c", str(c.conf(1)), "-o", "json")
        from_files = [f for f in json.loads(out)["findings"] if f["code"] == "fenced-broker-registration"]
        assert [(f["message"], f["remedy"]) for f in from_files] == [(found[0]["message"], remedy)]
        # the fetches (replica -1) left the quorum as it was: no replica -1, the same voters, no error logged
        rows = quorum_rows()
        assert [r for r in rows if r[1] in ("Leader", "Follower")] == voters and "-1" not in [r[0] for r in rows]
        for n in (1, 2, 3):
            logged = c.log_since_mark(n)
            assert " ERROR " not in logged and "Failed to handle fetch" not in logged, logged[-3000:]

        # the remedy as printed (a dry run), then with --apply as it says
        command = shlex.split(remedy.split(": ", 1)[1].split(" (", 1)[0])
        assert command[:3] == ["quorumctl", "cluster", "clear-registration"]
        p = as_printed(*command[1:])
        assert (p.returncode, p.stderr) == (0, "") and p.stdout.splitlines()[-1] == (
            "DRY RUN of clearing node 5's registration: run again with --apply to send it"
        ), p.stdout + p.stderr
        assert states() == {4: "unfenced", 5: "fenced"}  # the dry run changed nothing
        p = as_printed(*command[1:], "--apply")
        assert (p.returncode, p.stderr) == (0, ""), p.stdout + p.stderr
        until("broker 5 gone (Kafka's list-endpoints)", lambda: states() == {4: "unfenced"}, 30)
        # and doctor through the controllers alone no longer finds it
        p = quorumctl("doctor", "--bootstrap-controller", c.controllers[0], "--timeout", "30", "-o", "json")
        doc = json.loads(p.stdout)
        assert (p.returncode, doc["registrations"]["brokers"], doc["findings"]) == (0, [4], []), p.stdout + p.stderr
    finally:
        c.discard()
