"""Interop with an independent client: kafka-python 3.x (from PyPI) calls
describe_metadata_quorum() and describe_cluster() against the simulated
endpoint and gets the same values quorumctl shows; it also authenticates
with SASL PLAIN / SCRAM against the simulated server (checking our server
side independently of our own client)."""

from __future__ import annotations

import json
import uuid

import pytest

kafka = pytest.importorskip("kafka", reason="kafka-python is a test dependency")

from kafka import KafkaAdminClient  # noqa: E402

from quorumctl.wire import messages  # noqa: E402
from quorumctl.schema.codec import uuid_bytes  # noqa: E402
from quorumctl.testing.sim import SimulatedCluster, replica  # noqa: E402


CID = "rTcAzcTXQpG_6c1zYns8Xw"
D = {1: "DfqkWOlJTZ-abG8pUGocIA", 2: "4BuDMaJKttH3vcqDCog2og", 3: "eAmx4J3YZ63RPobrVgXBAw", 4: "Ft5irZuen_hAwkaw5_cxsg"}


def hexid(did: str) -> str:
    return str(uuid.UUID(bytes=uuid_bytes(did)))


def start(**node_kw) -> SimulatedCluster:
    c = SimulatedCluster(
        CID,
        1,
        1,
        131,
        [
            replica(1, 131, 1795305719757, 1795305719757, D[1]),
            replica(2, 131, 1795305719521, 1795305719521, D[2]),
            replica(3, 120, 1795305719517, 1795305716000, D[3]),
        ],
        [replica(4, 131, 1795305719513, 1795305719513, D[4])],
    )
    c.add_nodes(**node_kw)
    c.start()
    c.advertise_controllers()
    return c


def admin_for(address: str, **kw) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=5000, **kw)


def test_kafka_python_sees_what_quorumctl_shows(cli):
    c = start()
    try:
        b = c.brokers()[0].address
        admin = admin_for(b)
        try:
            kq = admin.describe_metadata_quorum()
            kc = admin.describe_cluster()
        finally:
            admin.close()
        code, out, err = cli("describe", "replication", "--bootstrap-server", b, "-o", "json")
        assert (code, err) == (0, "")
        rep = json.loads(out)
        code, out, err = cli("describe", "status", "--bootstrap-server", b, "-o", "json", code=0)
        st = json.loads(out)
    finally:
        c.stop()
    # kafka-python negotiated the latest versions of everything with the simulated broker
    assert {(k, v) for n, k, v in c.requests if k in (messages.DESCRIBE_QUORUM, messages.DESCRIBE_CLUSTER)} >= {
        (messages.DESCRIBE_QUORUM, 2),
        (messages.DESCRIBE_CLUSTER, 1),
    }

    part = kq["topics"][0]["partitions"][0]
    assert kq["topics"][0]["topic_name"] == "__cluster_metadata" and part["error"] is None
    assert (
        (part["leader_id"], part["leader_epoch"], part["high_watermark"])
        == (rep["leaderId"], rep["leaderEpoch"], rep["highWatermark"])
        == (1, 1, 131)
    )
    theirs = {r["replica_id"]: r for r in part["current_voters"] + part["observers"]}
    ours = {r["nodeId"]: r for r in rep["replicas"]}
    assert sorted(theirs) == sorted(ours) == [1, 2, 3, 4]
    for rid, r in ours.items():
        t = theirs[rid]
        assert t["replica_directory_id"] == hexid(r["directoryId"])
        assert t["log_end_offset"] == r["logEndOffset"]
        assert t["last_fetch_timestamp"] == r["lastFetchTimestamp"]["ms"]
        assert t["last_caught_up_timestamp"] == r["lastCaughtUpTimestamp"]["ms"]
    # quorumctl adds what kafka-python leaves to the reader: roles and lag
    assert [(r["nodeId"], r["status"], r["lag"]) for r in rep["replicas"]] == [
        (1, "Leader", 0),
        (2, "Follower", 0),
        (3, "Follower", 11),
        (4, "Observer", 0),
    ]
    assert [p["replica_id"] for p in part["current_voters"]] == [v["id"] for v in st["currentVoters"]]
    assert {n["node_id"]: [f"{e['name']}://{e['host']}:{e['port']}" for e in n["listeners"]] for n in kq["nodes"]} == {
        v["id"]: v["endpoints"] for v in st["currentVoters"]
    }
    assert (st["maxFollowerLag"], st["maxFollowerLagTimeMs"]) == (11, 1795305719757 - 1795305716000)

    assert kc["cluster_id"] == st["clusterId"] == CID
    assert kc["brokers"] == [{"broker_id": 4, "host": "127.0.0.1", "port": c.brokers()[0].port, "rack": None}]


@pytest.mark.parametrize("mech", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_python_authenticates_against_the_simulated_server(mech):
    c = start(sasl={"mechanisms": ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], "users": {"alice": "alice-secret"}})
    try:
        admin = admin_for(
            c.brokers()[0].address,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism=mech,
            sasl_plain_username="alice",
            sasl_plain_password="alice-secret",
        )
        try:
            q = admin.describe_metadata_quorum()
        finally:
            admin.close()
    finally:
        c.stop()
    assert q["topics"][0]["partitions"][0]["leader_id"] == 1
    assert (4, messages.SASL_AUTHENTICATE, 2) in c.requests


def test_kafka_python_is_refused_a_wrong_password():
    c = start(sasl={"mechanisms": ["SCRAM-SHA-256"], "users": {"alice": "alice-secret"}})
    try:
        with pytest.raises(Exception) as e:
            admin_for(
                c.brokers()[0].address,
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="SCRAM-SHA-256",
                sasl_plain_username="alice",
                sasl_plain_password="wrong",
                bootstrap_timeout_ms=1500,
            )
    finally:
        c.stop()
    assert "alice-secret" not in str(e.value)
    # the server answered SaslAuthenticate (with SASL_AUTHENTICATION_FAILED) rather than hanging
    assert any(k == messages.SASL_AUTHENTICATE for n, k, v in c.requests)
