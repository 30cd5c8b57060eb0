"""Wire protocol: byte vectors per message and version (built by hand from the
field layouts in Kafka's message schemas), header versions, negotiation,
the SCRAM RFC 7677 vector, properties/JAAS parsing, and fuzzed decoders."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings, strategies as st

from quorumctl.errors import InputError
from quorumctl.wire import messages
from quorumctl.config.client import config_from_properties, parse_jaas
from quorumctl.config.properties import parse_properties
from quorumctl.wire.security.sasl import ScramClient
from quorumctl.wire.framing import decode_request, decode_response, encode_request, encode_response
from quorumctl.schema.codec import DecodeError, uuid_bytes, uuid_str

DIR1 = "DfqkWOlJTZ-abG8pUGocIA"  # real directory id of controller 1 in the 3.9 samples


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


def u16(v):
    return struct.pack(">H", v)


def s16(t):
    return i16(len(t)) + t.encode()  # non-flexible string


def cs(t):
    return bytes([len(t) + 1]) + t.encode()  # compact string (short)


def carr(n):
    return bytes([n + 1])  # compact array length (short)


TOPIC = "__cluster_metadata"


# -- requests ----------------------------------------------------------------------


def test_api_versions_v0_request_bytes():
    frame = encode_request(messages.APIS[18], 0, 1, "quorumctl", {})
    payload = i16(18) + i16(0) + i32(1) + s16("quorumctl")
    assert frame == i32(len(payload)) + payload
    assert len(frame) == 4 + 19


def test_api_versions_v3_request_has_header_v2_with_old_style_client_id():
    frame = encode_request(
        messages.APIS[18], 3, 5, "quorumctl", {"clientSoftwareName": "quorumctl", "clientSoftwareVersion": "0.1.0"}
    )
    # the ClientId keeps its int16 length; then the header's tagged section, then a compact body
    payload = i16(18) + i16(3) + i32(5) + s16("quorumctl") + b"\x00" + cs("quorumctl") + cs("0.1.0") + b"\x00"
    assert frame == i32(len(payload)) + payload


def test_null_client_id():
    frame = encode_request(messages.APIS[18], 0, 9, None, {})
    assert frame[4:] == i16(18) + i16(0) + i32(9) + i16(-1)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_quorum_request_bytes(version):
    body = {"topics": [{"topicName": TOPIC, "partitions": [{"partitionIndex": 0}]}]}
    frame = encode_request(messages.APIS[55], version, 7, "quorumctl", body)
    payload = (
        i16(55)
        + i16(version)
        + i32(7)
        + s16("quorumctl")
        + b"\x00"
        + carr(1)
        + cs(TOPIC)
        + carr(1)
        + i32(0)
        + b"\x00"
        + b"\x00"
        + b"\x00"
    )
    assert frame == i32(len(payload)) + payload
    # the same bytes Kafka's own header/body layout gives: 48 bytes after the size
    assert len(payload) == 48
    head, api, decoded = decode_request(payload)
    assert (head["requestApiKey"], head["requestApiVersion"], head["correlationId"], head["clientId"]) == (
        55,
        version,
        7,
        "quorumctl",
    )
    assert decoded == body


@pytest.mark.parametrize(
    "version,expected",
    [
        (0, b"\x00" + b"\x00"),  # IncludeClusterAuthorizedOperations, tags
        (1, b"\x00" + b"\x02" + b"\x00"),  # + EndpointType=2 (controllers)
    ],
)
def test_describe_cluster_request_bytes(version, expected):
    frame = encode_request(
        messages.APIS[60], version, 3, "c", {"includeClusterAuthorizedOperations": False, "endpointType": 2}
    )
    assert frame[4:] == i16(60) + i16(version) + i32(3) + s16("c") + b"\x00" + expected


def test_add_raft_voter_request_bytes():
    body = {
        "clusterId": None,
        "timeoutMs": 30000,
        "voterId": 2,
        "voterDirectoryId": "4BuDMaJKttH3vcqDCog2og",
        "listeners": [{"name": "CONTROLLER", "host": "localhost", "port": 19192}],
    }
    frame = encode_request(messages.APIS[80], 0, 11, "q", body)
    expected = (
        i16(80)
        + i16(0)
        + i32(11)
        + s16("q")
        + b"\x00"
        + b"\x00"
        + i32(30000)
        + i32(2)
        + uuid_bytes("4BuDMaJKttH3vcqDCog2og")
        + carr(1)
        + cs("CONTROLLER")
        + cs("localhost")
        + u16(19192)
        + b"\x00"
        + b"\x00"
    )
    assert frame[4:] == expected
    # the directory id is the raw 16 bytes of the base64url text
    assert uuid_bytes("4BuDMaJKttH3vcqDCog2og").hex() == "e01b8331a24ab6d1f7bdca830a8836a2"


def test_remove_raft_voter_request_bytes():
    body = {"clusterId": "rTcAzcTXQpG_6c1zYns8Xw", "voterId": 3, "voterDirectoryId": "eAmx4J3YZ63RPobrVgXBAw"}
    frame = encode_request(messages.APIS[81], 0, 12, "q", body)
    expected = (
        i16(81)
        + i16(0)
        + i32(12)
        + s16("q")
        + b"\x00"
        + cs("rTcAzcTXQpG_6c1zYns8Xw")
        + i32(3)
        + uuid_bytes("eAmx4J3YZ63RPobrVgXBAw")
        + b"\x00"
    )
    assert frame[4:] == expected


def test_sasl_handshake_v1_is_not_flexible():
    frame = encode_request(messages.APIS[17], 1, 2, "q", {"mechanism": "SCRAM-SHA-512"})
    assert frame[4:] == i16(17) + i16(1) + i32(2) + s16("q") + s16("SCRAM-SHA-512")


@pytest.mark.parametrize("version", [0, 1, 2])
def test_sasl_authenticate_request_bytes(version):
    frame = encode_request(messages.APIS[36], version, 4, "q", {"authBytes": b"\x00ab"})
    prefix = i16(36) + i16(version) + i32(4) + s16("q")
    if version < 2:  # int32-length bytes
        assert frame[4:] == prefix + i32(3) + b"\x00ab"
    else:  # header tags, compact bytes (length + 1), body tags
        assert frame[4:] == prefix + b"\x00" + b"\x04\x00ab" + b"\x00"


def test_metadata_v1_request_empty_topics_means_none():
    frame = encode_request(messages.APIS[3], 1, 1, "q", {"topics": []})
    assert frame[4:] == i16(3) + i16(1) + i32(1) + s16("q") + i32(0)


def test_metadata_v12_request_null_topics_means_all():
    frame = encode_request(
        messages.APIS[3],
        12,
        1,
        "q",
        {"topics": None, "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False},
    )
    assert frame[4:] == i16(3) + i16(12) + i32(1) + s16("q") + b"\x00" + b"\x00" + b"\x00" + b"\x00" + b"\x00"


# -- responses ----------------------------------------------------------------------


def _replica_v2(rid, did, leo, fetch, caught):
    return i32(rid) + uuid_bytes(did) + i64(leo) + i64(fetch) + i64(caught) + b"\x00"


def test_describe_quorum_v2_response_bytes():
    payload = (
        i32(42)
        + b"\x00"  # response header v1
        + i16(0)
        + b"\x00"  # ErrorCode, ErrorMessage null
        + carr(1)
        + cs(TOPIC)
        + carr(1)
        + i32(0)
        + i16(0)
        + b"\x00"
        + i32(1)
        + i32(1)
        + i64(84)
        + carr(1)
        + _replica_v2(1, DIR1, 84, 1795305697138, 1795305697138)
        + carr(1)
        + _replica_v2(4, "Ft5irZuen_hAwkaw5_cxsg", 84, 1795305697013, 1795305697013)
        + b"\x00"
        + b"\x00"  # partition tags, topic tags
        + carr(1)
        + i32(1)
        + carr(1)
        + cs("CONTROLLER")
        + cs("localhost")
        + u16(19191)
        + b"\x00"
        + b"\x00"
        + b"\x00"
    )  # body tags
    corr, body = decode_response(messages.APIS[55], 2, payload)
    assert corr == 42
    p = body["topics"][0]["partitions"][0]
    assert (p["leaderId"], p["leaderEpoch"], p["highWatermark"]) == (1, 1, 84)
    assert p["currentVoters"] == [
        {
            "replicaId": 1,
            "replicaDirectoryId": DIR1,
            "logEndOffset": 84,
            "lastFetchTimestamp": 1795305697138,
            "lastCaughtUpTimestamp": 1795305697138,
        }
    ]
    assert p["observers"][0]["replicaDirectoryId"] == "Ft5irZuen_hAwkaw5_cxsg"
    assert body["nodes"] == [{"nodeId": 1, "listeners": [{"name": "CONTROLLER", "host": "localhost", "port": 19191}]}]
    assert encode_response(messages.APIS[55], 2, 42, body) == i32(len(payload)) + payload


def test_describe_quorum_v1_response_bytes():
    # no ErrorMessage, no directory ids, no Nodes
    payload = (
        i32(1)
        + b"\x00"
        + i16(0)
        + carr(1)
        + cs(TOPIC)
        + carr(1)
        + i32(0)
        + i16(0)
        + i32(3)
        + i32(1)
        + i64(36)
        + carr(1)
        + i32(1)
        + i64(38)
        + i64(1795306262513)
        + i64(1795306262513)
        + b"\x00"
        + carr(0)
        + b"\x00"
        + b"\x00"
        + b"\x00"
    )
    _, body = decode_response(messages.APIS[55], 1, payload)
    p = body["topics"][0]["partitions"][0]
    assert p["currentVoters"] == [
        {
            "replicaId": 1,
            "logEndOffset": 38,
            "lastFetchTimestamp": 1795306262513,
            "lastCaughtUpTimestamp": 1795306262513,
        }
    ]
    assert "nodes" not in body and "errorMessage" not in body
    assert encode_response(messages.APIS[55], 1, 1, body)[4:] == payload


def test_describe_quorum_v0_response_has_no_timestamps():
    payload = (
        i32(1)
        + b"\x00"
        + i16(0)
        + carr(1)
        + cs(TOPIC)
        + carr(1)
        + i32(0)
        + i16(0)
        + i32(2)
        + i32(7)
        + i64(344)
        + carr(2)
        + i32(2)
        + i64(344)
        + b"\x00"
        + i32(1)
        + i64(340)
        + b"\x00"
        + carr(0)
        + b"\x00"
        + b"\x00"
        + b"\x00"
    )
    _, body = decode_response(messages.APIS[55], 0, payload)
    p = body["topics"][0]["partitions"][0]
    assert p["currentVoters"] == [{"replicaId": 2, "logEndOffset": 344}, {"replicaId": 1, "logEndOffset": 340}]
    # decoding the same bytes as v1 must fail: v1 expects two more int64 per replica
    with pytest.raises(DecodeError):
        decode_response(messages.APIS[55], 1, payload)


def test_describe_cluster_v1_response_bytes():
    payload = (
        i32(8)
        + b"\x00"
        + i32(0)
        + i16(0)
        + b"\x00"
        + b"\x02"
        + cs("rTcAzcTXQpG_6c1zYns8Xw")
        + i32(1)
        + carr(1)
        + i32(1)
        + cs("localhost")
        + i32(19191)
        + b"\x00"
        + b"\x00"
        + i32(-2147483648)
        + b"\x00"
    )
    corr, body = decode_response(messages.APIS[60], 1, payload)
    assert corr == 8
    assert body == {
        "throttleTimeMs": 0,
        "errorCode": 0,
        "errorMessage": None,
        "endpointType": 2,
        "clusterId": "rTcAzcTXQpG_6c1zYns8Xw",
        "controllerId": 1,
        "brokers": [{"brokerId": 1, "host": "localhost", "port": 19191, "rack": None}],
        "clusterAuthorizedOperations": -2147483648,
    }
    assert encode_response(messages.APIS[60], 1, 8, body)[4:] == payload


def test_api_versions_response_header_is_v0_even_when_flexible():
    # v3 body is flexible, with SupportedFeatures (tag 0) and FinalizedFeaturesEpoch (tag 1)
    feats = carr(1) + cs("kraft.version") + i16(0) + i16(1) + b"\x00"
    payload = (
        i32(3)
        + i16(0)
        + carr(1)
        + i16(55)
        + i16(0)
        + i16(2)
        + b"\x00"
        + i32(0)
        + b"\x02"
        + b"\x00"
        + bytes([len(feats)])
        + feats
        + b"\x01\x08"
        + i64(17)
    )
    corr, body = decode_response(messages.APIS[18], 3, payload)
    assert corr == 3
    assert body["apiKeys"] == [{"apiKey": 55, "minVersion": 0, "maxVersion": 2}]
    assert body["supportedFeatures"] == [{"name": "kraft.version", "minVersion": 0, "maxVersion": 1}]
    assert body["finalizedFeaturesEpoch"] == 17
    assert encode_response(messages.APIS[18], 3, 3, body)[4:] == payload


def test_api_versions_unsupported_version_answer_is_v0():
    payload = i32(1) + i16(35) + i32(1) + i16(18) + i16(0) + i16(3)
    _, body = decode_response(messages.APIS[18], 0, payload)
    assert body == {"errorCode": 35, "apiKeys": [{"apiKey": 18, "minVersion": 0, "maxVersion": 3}]}


def test_voter_change_responses():
    payload = i32(2) + b"\x00" + i32(0) + i16(126) + cs("dup") + b"\x00"
    for key in (80, 81):
        _, body = decode_response(messages.APIS[key], 0, payload)
        assert body == {"throttleTimeMs": 0, "errorCode": 126, "errorMessage": "dup"}


def test_trailing_bytes_are_an_error():
    payload = i32(2) + b"\x00" + i32(0) + i16(0) + b"\x00" + b"\x00" + b"junk"
    with pytest.raises(DecodeError, match="unexpected bytes"):
        decode_response(messages.APIS[80], 0, payload)


def test_header_versions():
    assert messages.APIS[18].request_header_version(2) == 1 and messages.APIS[18].request_header_version(3) == 2
    assert messages.APIS[18].response_header_version(4) == 0
    assert messages.APIS[17].request_header_version(1) == 1 and messages.APIS[17].response_header_version(1) == 0
    assert messages.APIS[36].response_header_version(1) == 0 and messages.APIS[36].response_header_version(2) == 1
    assert messages.APIS[55].request_header_version(0) == 2 and messages.APIS[55].response_header_version(0) == 1
    assert messages.APIS[3].request_header_version(8) == 1 and messages.APIS[3].request_header_version(9) == 2


@pytest.mark.parametrize(
    "server,lo,expected",
    [
        ((0, 2), None, 2),  # 3.9: both speak v2
        ((0, 1), None, 1),  # 3.7
        ((0, 0), None, 0),  # 3.0
        ((0, 5), None, 2),  # a future server: our highest
        ((3, 5), None, None),  # no overlap
        (None, None, None),  # API missing
        ((0, 0), 1, None),  # we need v1+
    ],
)
def test_negotiate(server, lo, expected):
    assert messages.negotiate(55, server, lo) == expected


# -- SASL SCRAM (RFC 7677 test vector) -----------------------------------------------


def test_scram_sha256_rfc7677_vector():
    c = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert c.first() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    final = c.step(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    assert final == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert c.step(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None
    assert c.done


def test_scram_rejects_wrong_server_signature_and_low_iterations():
    from quorumctl.wire.security.sasl import SaslError

    c = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce="abc")
    c.first()
    c.step(b"r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    with pytest.raises(SaslError, match="does not verify"):
        c.step(b"v=AAAA")
    c2 = ScramClient("SCRAM-SHA-512", "user", "pencil", nonce="abc")
    c2.first()
    with pytest.raises(SaslError, match="below the minimum 4096"):
        c2.step(b"r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1000")
    c3 = ScramClient("SCRAM-SHA-512", "u", "p", nonce="abc")
    c3.first()
    with pytest.raises(SaslError, match="does not extend"):
        c3.step(b"r=zzz,s=AA==,i=4096")


def test_scram_client_and_simulated_server_agree_for_sha512():
    from quorumctl.testing.auth import ScramServer

    srv = ScramServer("SCRAM-SHA-512", {"al,ice=": "s3cret"})
    cli = ScramClient("SCRAM-SHA-512", "al,ice=", "s3cret")
    assert b"n=al=2Cice=3D," in cli.first()
    tok = srv.step(cli.first())
    tok = srv.step(cli.step(tok))
    assert cli.step(tok) is None and srv.done and srv.user == "al,ice="


# -- properties and JAAS ------------------------------------------------------------


def test_properties_java_rules():
    text = (
        "# comment\n! also a comment\n  a=1\nb : two words \nc\tthree\nd\\\n    continued=x\n"
        "e=\\u00e9t\\u00e9\\n\nf\ng=a\\=b\nh==x\nb=override\n"
    )
    p = parse_properties(text)
    assert p == {
        "a": "1",
        "b": "override",
        "c": "three",
        "dcontinued": "x",
        "e": "été\n",
        "f": "",
        "g": "a=b",
        "h": "=x",
    }


def test_properties_bad_unicode_escape():
    with pytest.raises(InputError, match=r"x.properties:2: malformed \\uxxxx"):
        parse_properties("a=1\nb=\\u12\n", "x.properties")


def test_jaas_parsing():
    opts = parse_jaas(
        "org.apache.kafka.common.security.scram.ScramLoginModule required\n"
        '  username="alice" password="p@ss \\"w;rd\\"" ;',
        "cfg",
    )
    assert opts == {"username": "alice", "password": 'p@ss "w;rd"'}
    assert parse_jaas("x.PlainLoginModule required username=bob password=pw;", "cfg") == {
        "username": "bob",
        "password": "pw",
    }
    with pytest.raises(InputError, match="must look like"):
        parse_jaas('username="a" password="b";', "cfg")


def test_client_config_from_properties():
    cfg = config_from_properties(
        {
            "security.protocol": "sasl_ssl",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": 'x.ScramLoginModule required username="u" password="secret";',
            "ssl.endpoint.identification.algorithm": "",
            "request.timeout.ms": "2500",
            "client.id": "ops",
        },
        "client.properties",
    )
    assert (cfg.security_protocol, cfg.sasl_mechanism, cfg.username, cfg.password) == (
        "SASL_SSL",
        "SCRAM-SHA-512",
        "u",
        "secret",
    )
    assert cfg.check_hostname is False and cfg.request_timeout_ms == 2500 and cfg.client_id == "ops"
    assert "secret" not in repr(cfg)
    for props, msg in [
        ({"security.protocol": "SSLv3"}, "security.protocol 'SSLV3' is not one of"),
        # GSSAPI, Kafka's default mechanism, needs the Krb5LoginModule's settings
        ({"security.protocol": "SASL_PLAINTEXT"}, "sasl.mechanism GSSAPI needs sasl.jaas.config"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "needs sasl.jaas.config"),
        ({"request.timeout.ms": "soon"}, "request.timeout.ms must be an integer"),
        ({"ssl.truststore.location": "/nonexistent/ts.p12"}, "does not exist"),
    ]:
        with pytest.raises(InputError, match=msg):
            config_from_properties(props, "c.properties")


# -- fuzzing: hostile bytes give DecodeError, never anything else ---------------------


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(
        [(55, 0), (55, 1), (55, 2), (60, 0), (60, 1), (18, 0), (18, 3), (80, 0), (3, 1), (3, 12), (36, 2), (17, 1)]
    ),
    st.binary(min_size=0, max_size=200),
)
def test_fuzz_decode_response(api_version, data):
    key, version = api_version
    try:
        decode_response(messages.APIS[key], version, data)
    except DecodeError:
        pass


replica_st = st.fixed_dictionaries(
    {
        "replicaId": st.integers(-1, 2**31 - 1),
        "replicaDirectoryId": st.binary(min_size=16, max_size=16).map(uuid_str),
        "logEndOffset": st.integers(-1, 2**63 - 1),
        "lastFetchTimestamp": st.integers(-1, 2**62),
        "lastCaughtUpTimestamp": st.integers(-1, 2**62),
    }
)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(replica_st, max_size=5),
    st.lists(replica_st, max_size=5),
    st.integers(-1, 1000),
    st.text(max_size=30),
    st.integers(0, 65535),
)
def test_describe_quorum_v2_round_trip(voters, observers, leader, host, port):
    body = {
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
                        "leaderId": leader,
                        "leaderEpoch": 5,
                        "highWatermark": 10,
                        "currentVoters": voters,
                        "observers": observers,
                    }
                ],
            }
        ],
        "nodes": [{"nodeId": 1, "listeners": [{"name": "CONTROLLER", "host": host, "port": port}]}],
    }
    data = encode_response(messages.APIS[55], 2, 9, body)
    assert decode_response(messages.APIS[55], 2, data[4:]) == (9, body)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=8, max_size=120))
def test_fuzz_decode_request(data):
    try:
        decode_request(data)
    except DecodeError:
        pass
