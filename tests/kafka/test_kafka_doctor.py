"""doctor's known traps (quorumctl/diagnose/traps.py) on storage real Kafka (4.1
and 4.3) formatted: `kafka-storage.sh format --release-version 3.4` writes a
bootstrap.checkpoint whose metadata.version (3.4-IV0) is below what the nodes'
configs use: a JBOD broker, SCRAM, delegation tokens. No cluster is started:
the nodes would fail or refuse exactly as the findings say, which is the point."""

from __future__ import annotations

import json
import shutil

import pytest

from kafka41 import HOMES, home_of, kafka_tool, needs_kafka

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
