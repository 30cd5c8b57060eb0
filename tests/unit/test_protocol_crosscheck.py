"""Our encoders and decoders against kafka-python 3.x's (an independent
implementation of the same schemas): the request bytes must be identical, and
responses encoded by one must decode to the same values in the other, for
every version both implement."""

from __future__ import annotations

import re
import uuid

import pytest

kafka = pytest.importorskip("kafka", reason="kafka-python is a test dependency")

from kafka.protocol.admin import (  # noqa: E402
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
)
from kafka.protocol.metadata import (  # noqa: E402
    ApiVersionsRequest,
    ApiVersionsResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.sasl import (  # noqa: E402
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from quorumctl.wire import messages  # noqa: E402
from quorumctl.wire.framing import decode_response, encode_request, encode_response  # noqa: E402
from quorumctl.schema.codec import uuid_bytes, uuid_str  # noqa: E402

TOPIC = "__cluster_metadata"


def kp_request(msg, version, corr=7, client_id="quorumctl"):
    msg.API_VERSION = version
    msg.with_header(correlation_id=corr, client_id=client_id)
    return bytes(msg.encode(header=True, framed=True))


def kp_response(msg, corr=7):
    msg.with_header(correlation_id=corr)
    return bytes(msg.encode(header=True, framed=True))


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def to_snake(v, key=""):
    """Our decoded dict in kafka-python's to_dict() form (directory ids as
    hyphenated hex; kafka-python leaves out cluster_authorized_operations)."""
    if isinstance(v, dict):
        return {snake(k): to_snake(x, k) for k, x in v.items() if k != "clusterAuthorizedOperations"}
    if isinstance(v, list):
        return [to_snake(x, key) for x in v]
    if key.endswith("DirectoryId"):
        return str(uuid.UUID(bytes=uuid_bytes(v)))
    return v


# -- requests: byte-identical ---------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_quorum_request(version):
    T = DescribeQuorumRequest.TopicData
    kp = kp_request(
        DescribeQuorumRequest(topics=[T(topic_name=TOPIC, partitions=[T.PartitionData(partition_index=0)])]), version
    )
    ours = encode_request(
        messages.APIS[55],
        version,
        7,
        "quorumctl",
        {"topics": [{"topicName": TOPIC, "partitions": [{"partitionIndex": 0}]}]},
    )
    assert ours == kp


@pytest.mark.parametrize("version", [0, 1])
def test_describe_cluster_request(version):
    kp = kp_request(DescribeClusterRequest(include_cluster_authorized_operations=False, endpoint_type=2), version)
    ours = encode_request(
        messages.APIS[60], version, 7, "quorumctl", {"includeClusterAuthorizedOperations": False, "endpointType": 2}
    )
    assert ours == kp


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions_request(version):
    kp = kp_request(ApiVersionsRequest(client_software_name="quorumctl", client_software_version="0.1.0"), version)
    ours = encode_request(
        messages.APIS[18],
        version,
        7,
        "quorumctl",
        {"clientSoftwareName": "quorumctl", "clientSoftwareVersion": "0.1.0"},
    )
    assert ours == kp


@pytest.mark.parametrize("version", range(1, 13))
def test_metadata_request_no_topics(version):
    kp = kp_request(
        MetadataRequest(
            topics=[],
            allow_auto_topic_creation=False,
            include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False,
        ),
        version,
    )
    ours = encode_request(
        messages.APIS[3],
        version,
        7,
        "quorumctl",
        {
            "topics": [],
            "allowAutoTopicCreation": False,
            "includeClusterAuthorizedOperations": False,
            "includeTopicAuthorizedOperations": False,
        },
    )
    assert ours == kp


@pytest.mark.parametrize("version", [0, 1])
def test_sasl_handshake_request(version):
    kp = kp_request(SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), version)
    assert encode_request(messages.APIS[17], version, 7, "quorumctl", {"mechanism": "SCRAM-SHA-256"}) == kp


@pytest.mark.parametrize("version", [0, 1, 2])
def test_sasl_authenticate_request(version):
    kp = kp_request(SaslAuthenticateRequest(auth_bytes=b"n,,n=u,r=abc"), version)
    assert encode_request(messages.APIS[36], version, 7, "quorumctl", {"authBytes": b"n,,n=u,r=abc"}) == kp


# -- responses: same values both ways -------------------------------------------------


def _quorum_body():
    return {
        "errorCode": 0,
        "errorMessage": None,
        "topics": [
            {
                "topicName": TOPIC,
                "partitions": [
                    {
                        "partitionIndex": 0,
                        "errorCode": 0,
                        "errorMessage": None,
                        "leaderId": 1,
                        "leaderEpoch": 1,
                        "highWatermark": 84,
                        "currentVoters": [
                            {
                                "replicaId": 1,
                                "replicaDirectoryId": "DfqkWOlJTZ-abG8pUGocIA",
                                "logEndOffset": 84,
                                "lastFetchTimestamp": 1795305697138,
                                "lastCaughtUpTimestamp": 1795305697138,
                            },
                            {
                                "replicaId": 2,
                                "replicaDirectoryId": "4BuDMaJKttH3vcqDCog2og",
                                "logEndOffset": 84,
                                "lastFetchTimestamp": 1795305697013,
                                "lastCaughtUpTimestamp": 1795305697013,
                            },
                        ],
                        "observers": [
                            {
                                "replicaId": 4,
                                "replicaDirectoryId": "Ft5irZuen_hAwkaw5_cxsg",
                                "logEndOffset": 84,
                                "lastFetchTimestamp": -1,
                                "lastCaughtUpTimestamp": -1,
                            }
                        ],
                    }
                ],
            }
        ],
        "nodes": [
            {"nodeId": 1, "listeners": [{"name": "CONTROLLER", "host": "localhost", "port": 19191}]},
            {"nodeId": 2, "listeners": [{"name": "CONTROLLER", "host": "::1", "port": 19192}]},
        ],
    }


def _drop_absent(ours: dict, theirs: dict):
    """kafka-python's to_dict() fills fields a version lacks with defaults;
    compare only the fields the version has."""
    if isinstance(ours, dict):
        return {k: _drop_absent(ours[k], theirs.get(k)) if k in ours else None for k in ours}
    return theirs


def _project(theirs, ours):
    if isinstance(ours, dict):
        return {k: _project(theirs[k], v) for k, v in ours.items()}
    if isinstance(ours, list):
        return [_project(t, o) for t, o in zip(theirs, ours)]
    return theirs


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_quorum_response_both_ways(version):
    body = _quorum_body()
    ours_bytes = encode_response(messages.APIS[55], version, 9, body)
    theirs = DescribeQuorumResponse.decode(ours_bytes[4:], version=version, header=True).to_dict()
    _, ours = decode_response(messages.APIS[55], version, ours_bytes[4:])
    assert _project(theirs, to_snake(ours)) == to_snake(ours)
    assert len(ours["topics"][0]["partitions"][0]["currentVoters"]) == 2
    # and kafka-python's encoding of the same values decodes to the same in ours
    R = DescribeQuorumResponse
    P = R.TopicData.PartitionData

    def rs(d):
        return P.ReplicaState(
            **{snake(k): (uuid.UUID(bytes=uuid_bytes(x)) if k == "replicaDirectoryId" else x) for k, x in d.items()}
        )

    p = body["topics"][0]["partitions"][0]
    msg = R(
        version=version,
        error_code=0,
        error_message=None,
        topics=[
            R.TopicData(
                topic_name=TOPIC,
                partitions=[
                    P(
                        partition_index=0,
                        error_code=0,
                        error_message=None,
                        leader_id=1,
                        leader_epoch=1,
                        high_watermark=84,
                        current_voters=[rs(r) for r in p["currentVoters"]],
                        observers=[rs(r) for r in p["observers"]],
                    )
                ],
            )
        ],
        nodes=[
            R.Node(node_id=n["nodeId"], listeners=[R.Node.Listener(**e) for e in n["listeners"]]) for n in body["nodes"]
        ],
    )
    _, back = decode_response(messages.APIS[55], version, kp_response(msg, 9)[4:])
    assert back == ours


@pytest.mark.parametrize("version", [0, 1])
def test_describe_cluster_response_both_ways(version):
    body = {
        "throttleTimeMs": 0,
        "errorCode": 0,
        "errorMessage": None,
        "endpointType": 2,
        "clusterId": "rTcAzcTXQpG_6c1zYns8Xw",
        "controllerId": 1,
        "brokers": [
            {"brokerId": 1, "host": "localhost", "port": 19191, "rack": None},
            {"brokerId": 2, "host": "localhost", "port": 19192, "rack": "r2"},
        ],
        "clusterAuthorizedOperations": -2147483648,
    }
    data = encode_response(messages.APIS[60], version, 4, body)
    theirs = DescribeClusterResponse.decode(data[4:], version=version, header=True).to_dict()
    _, ours = decode_response(messages.APIS[60], version, data[4:])
    assert _project(theirs, to_snake(ours)) == to_snake(ours)
    B = DescribeClusterResponse.DescribeClusterBroker
    msg = DescribeClusterResponse(
        version=version,
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        endpoint_type=2,
        cluster_id="rTcAzcTXQpG_6c1zYns8Xw",
        controller_id=1,
        brokers=[B(broker_id=b["brokerId"], host=b["host"], port=b["port"], rack=b["rack"]) for b in body["brokers"]],
    )  # authorized ops: schema default
    assert decode_response(messages.APIS[60], version, kp_response(msg, 4)[4:])[1] == ours


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions_response_both_ways(version):
    body = {
        "errorCode": 0,
        "apiKeys": [{"apiKey": 18, "minVersion": 0, "maxVersion": 4}, {"apiKey": 55, "minVersion": 0, "maxVersion": 2}],
        "throttleTimeMs": 0,
    }
    if version >= 3:
        body["supportedFeatures"] = [{"name": "kraft.version", "minVersion": 0, "maxVersion": 1}]
        body["finalizedFeaturesEpoch"] = 12
    data = encode_response(messages.APIS[18], version, 2, body)
    theirs = ApiVersionsResponse.decode(data[4:], version=version, header=True).to_dict()
    _, ours = decode_response(messages.APIS[18], version, data[4:])
    assert _project(theirs, to_snake(ours)) == to_snake(ours)
    AV = ApiVersionsResponse
    kw = dict(
        version=version,
        error_code=0,
        throttle_time_ms=0,
        api_keys=[
            AV.ApiVersion(api_key=k["apiKey"], min_version=k["minVersion"], max_version=k["maxVersion"])
            for k in body["apiKeys"]
        ],
    )
    if version >= 3:
        kw.update(
            supported_features=[AV.SupportedFeatureKey(name="kraft.version", min_version=0, max_version=1)],
            finalized_features_epoch=12,
        )
    assert decode_response(messages.APIS[18], version, kp_response(AV(**kw), 2)[4:])[1] == ours


@pytest.mark.parametrize("version", [1, 2, 5, 9, 12])
def test_metadata_response_both_ways(version):
    body = {
        "throttleTimeMs": 0,
        "brokers": [{"nodeId": 4, "host": "localhost", "port": 19194, "rack": None}],
        "clusterId": "XFBpci3ORzK2hz44Gtmrwg",
        "controllerId": 4,
        "topics": [],
        "clusterAuthorizedOperations": -2147483648,
    }
    data = encode_response(messages.APIS[3], version, 6, body)
    theirs = MetadataResponse.decode(data[4:], version=version, header=True).to_dict()
    _, ours = decode_response(messages.APIS[3], version, data[4:])
    assert _project(theirs, to_snake(ours)) == to_snake(ours)
    assert ours["brokers"][0]["port"] == 19194


@pytest.mark.parametrize("version", [0, 1, 2])
def test_sasl_authenticate_response_both_ways(version):
    body = {"errorCode": 58, "errorMessage": "Authentication failed", "authBytes": b"", "sessionLifetimeMs": 0}
    data = encode_response(messages.APIS[36], version, 1, body)
    theirs = SaslAuthenticateResponse.decode(data[4:], version=version, header=True).to_dict()
    assert theirs["error_code"] == 58 and theirs["error_message"] == "Authentication failed"


@pytest.mark.parametrize("version", [0, 1])
def test_sasl_handshake_response_both_ways(version):
    data = encode_response(messages.APIS[17], version, 1, {"errorCode": 33, "mechanisms": ["PLAIN", "SCRAM-SHA-512"]})
    theirs = SaslHandshakeResponse.decode(data[4:], version=version, header=True).to_dict()
    assert theirs == {"error_code": 33, "mechanisms": ["PLAIN", "SCRAM-SHA-512"]}


def test_uuid_text_matches_kafka_python_hex_form():
    # kafka-python prints directory ids as hyphenated hex; Kafka (and quorumctl) as base64url
    assert str(uuid.UUID(bytes=uuid_bytes("DfqkWOlJTZ-abG8pUGocIA"))) == "0dfaa458-e949-4d9f-9a6c-6f29506a1c20"
    assert uuid_str(uuid.UUID("16de62ad-9b9e-9ff8-40c2-46b0e7f731b2").bytes) == "Ft5irZuen_hAwkaw5_cxsg"
