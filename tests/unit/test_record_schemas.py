"""The metadata record and control record schemas, and the codec on them.

- registries: api keys, versions, Kafka's enum names (generator rule), names;
- every metadata type, every version, every control schema: round trips of
  deterministic values with a non-default value in every field (tagged ones
  included), of null variants, of defaults; a hypothesis round trip and a
  hypothesis fuzz of every decoder;
- hand-computed byte vectors (tag ordering, empty-vs-null tagged arrays, bytes,
  float64, the non-flexible EndTxnMarker);
- real bytes: KIP-1066's CordonedLogDirs (RegisterBrokerRecord v4,
  BrokerRegistrationChangeRecord v3) as Kafka 4.3's own record classes write
  them, decoded to the JSON its converters print, and re-encoded;
- real bytes: the Kafka 3.7.0 and 3.9.0 fixtures decode to exactly the JSON
  Kafka's own dump-log printed (byte for byte), and re-encode to the same
  bytes; the corpus files covering every record type/version seen in real
  clusters decode with the counts CATALOG.json gives.

The record batch parsing here is a deliberately minimal helper (uncompressed
v2 batches only), independent of quorumctl.records.batch.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from quorumctl.records.control_schemas import (
    CONTROL_TYPES,
    END_TXN_MARKER,
    KAFKA_VERSIONS,
    LEADER_CHANGE_MESSAGE,
    VOTERS_RECORD,
    body_version,
)
from quorumctl.records.metadata_schemas import (
    API_KEYS_BY_CLASS_NAME,
    API_KEYS_BY_TYPE_NAME,
    CLASS_NAMES,
    METADATA_RECORDS,
    TYPE_NAMES,
    enum_name,
)
from quorumctl.render.output import json_bytes
from quorumctl.schema.codec import DecodeError, codec, read_uvarint, uuid_str, uvarint_bytes
from quorumctl.schema.spec import NULL, Field, Message

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SAMPLES = SHARED / "reference" / "samples"
FIXTURES = SHARED / "reference" / "fixtures"
CORPUS = SHARED / "corpus"
needs_shared = pytest.mark.shared("reference")

ALL_SCHEMAS = [(f"{m.name}", m) for m in METADATA_RECORDS.values()] + [
    (f"control:{name}", m) for t, (name, m) in CONTROL_TYPES.items() if t != 1
]  # COMMIT shares ABORT's
CASES = [(label, m, v) for label, m in ALL_SCHEMAS for v in m.versions]
CASE_IDS = [f"{label}-v{v}" for label, m, v in CASES]


# -- registries ----------------------------------------------------------------

EXPECTED_VERSIONS = {  # api key -> (name, highest version); every type starts at v0
    0: ("RegisterBrokerRecord", 4),
    1: ("UnregisterBrokerRecord", 0),
    2: ("TopicRecord", 0),
    3: ("PartitionRecord", 2),
    4: ("ConfigRecord", 0),
    5: ("PartitionChangeRecord", 2),
    7: ("FenceBrokerRecord", 0),
    8: ("UnfenceBrokerRecord", 0),
    9: ("RemoveTopicRecord", 0),
    10: ("DelegationTokenRecord", 0),
    11: ("UserScramCredentialRecord", 0),
    12: ("FeatureLevelRecord", 0),
    14: ("ClientQuotaRecord", 0),
    15: ("ProducerIdsRecord", 0),
    17: ("BrokerRegistrationChangeRecord", 3),
    18: ("AccessControlEntryRecord", 0),
    19: ("RemoveAccessControlEntryRecord", 0),
    20: ("NoOpRecord", 0),
    21: ("ZkMigrationStateRecord", 0),
    22: ("RemoveUserScramCredentialRecord", 0),
    23: ("BeginTransactionRecord", 0),
    24: ("EndTransactionRecord", 0),
    25: ("AbortTransactionRecord", 0),
    26: ("RemoveDelegationTokenRecord", 0),
    27: ("RegisterControllerRecord", 0),
    28: ("ClearElrRecord", 0),
    29: ("UnregisterControllerRecord", 0),
}


def test_metadata_registry_keys_names_versions():
    assert {k: (m.name, m.versions[-1]) for k, m in METADATA_RECORDS.items()} == EXPECTED_VERSIONS
    for k, m in METADATA_RECORDS.items():
        assert m.api_key == k and m.kind == "metadata"
        assert m.versions[0] == 0
        assert all(m.flexible_in(v) for v in m.versions)  # every metadata record is flexible from v0
    assert not {6, 13, 16} & set(METADATA_RECORDS)  # removed / never used keys
    assert CLASS_NAMES[3] == "PartitionRecord" and CLASS_NAMES[21] == "ZkMigrationStateRecord"
    assert API_KEYS_BY_CLASS_NAME["RegisterControllerRecord"] == 27
    assert API_KEYS_BY_TYPE_NAME["NO_OP_RECORD"] == 20


def test_type_names_are_kafkas_enum_names():
    # Kafka: MessageGenerator.toSnakeCase(spec.name()).toUpperCase(Locale.ROOT)
    for k, m in METADATA_RECORDS.items():
        assert TYPE_NAMES[k] == enum_name(m.name)
    assert set(TYPE_NAMES) == set(METADATA_RECORDS)
    assert TYPE_NAMES[0] == "REGISTER_BROKER_RECORD"
    assert TYPE_NAMES[3] == "PARTITION_RECORD"
    assert TYPE_NAMES[21] == "ZK_MIGRATION_STATE_RECORD"
    assert TYPE_NAMES[17] == "BROKER_REGISTRATION_CHANGE_RECORD"
    assert TYPE_NAMES[28] == "CLEAR_ELR_RECORD"
    assert TYPE_NAMES[20] == "NO_OP_RECORD"
    # the rule itself on capital runs and digits (toSnakeCase only breaks after a non-capital)
    assert enum_name("KRaftVersionRecord") == "KRAFT_VERSION_RECORD"
    assert enum_name("IBP3Record") == "IBP3_RECORD"


def test_named_record_types_are_the_declared_ones():
    """records/types.py names every declared api key, under its enum name, and nothing else."""
    from quorumctl.records import types

    named = {k: v for k, v in vars(types).items() if k.endswith("_RECORD") and isinstance(v, int)}
    assert named == {name: key for key, name in TYPE_NAMES.items()}
    assert types.TOPIC_RECORD == 2 and types.UNREGISTER_CONTROLLER_RECORD == 29


def test_control_registry():
    assert {t: name for t, (name, _m) in CONTROL_TYPES.items()} == {
        0: "ABORT",
        1: "COMMIT",
        2: "LEADER_CHANGE",
        3: "SNAPSHOT_HEADER",
        4: "SNAPSHOT_FOOTER",
        5: "KRAFT_VERSION",
        6: "KRAFT_VOTERS",
    }
    assert CONTROL_TYPES[0][1] is CONTROL_TYPES[1][1] is END_TXN_MARKER
    assert END_TXN_MARKER.flexible is None and list(END_TXN_MARKER.versions) == [0]
    assert list(LEADER_CHANGE_MESSAGE.versions) == [0, 1]
    for _t, (_name, m) in CONTROL_TYPES.items():
        assert m.fields[0].name == "Version" and m.fields[0].type == "int16"
    assert KAFKA_VERSIONS == {t: 0 for t in range(7)}


def test_control_body_version_follows_kafka():
    assert body_version(2, 0) == 0
    assert body_version(2, 1) == 1  # a declared version: decode as the writer meant
    assert body_version(2, 7) == 0  # unknown: Kafka's fixed read version
    assert body_version(0, 3) == 0  # EndTransactionMarker parses newer versions as v0
    assert body_version(1, -1) is None  # ... and rejects negative ones
    assert body_version(9, 0) is None  # UNKNOWN control type


def test_registry_import_is_light():
    code = (
        "import sys, quorumctl.records.metadata_schemas, quorumctl.records.control_schemas, "
        "quorumctl.schema.codec as c; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('msgspec','rich','typer','pyarrow','pyspark','crc32c','cramjam'))); print(len(c._codecs))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "0"]


# -- deterministic values from the schema description -------------------------

INT_RANGES = {
    "int8": (-128, 127),
    "int16": (-32768, 32767),
    "uint16": (0, 65535),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


class Counter:
    def __init__(self, seed: int):
        self.n = seed

    def next(self) -> int:
        self.n += 1
        return self.n


def scalar_sample(t: str, c: Counter, name: str):
    i = c.next()
    if t == "bool":
        raise AssertionError("bools are chosen against their default")
    if t == "int8":
        return 10 + i % 100
    if t == "int16":
        return -(300 + i)
    if t == "uint16":
        return 40000 + i  # above int16 range: must stay unsigned
    if t == "int32":
        return 100000 + 7 * i
    if t == "uint32":
        return 2**31 + i
    if t == "int64":
        return -(2**40 + i)
    if t == "float64":
        return 1234.5 + i
    if t == "string":
        return f"{name}-{i}-é✓"  # multi-byte UTF-8
    if t == "bytes":
        return bytes(range(i % 200, i % 200 + 6))
    if t == "uuid":
        return uuid_str(bytes((i + j) % 256 for j in range(16)))
    raise AssertionError(t)


def sample(fields: list[Field], v: int, c: Counter, nulls: bool = False) -> dict:
    """A value with a non-default value in every field present in version v
    (nullable fields None instead when `nulls`)."""
    out = {}
    for f in fields:
        if not f.present_in(v):
            continue
        if nulls and f.nullable_in(v):
            out[f.key] = None
            continue
        if f.is_array:
            if f.is_struct:
                out[f.key] = [sample(f.fields, v, c, nulls) for _ in range(2)]
            else:
                out[f.key] = [scalar_sample(f.elem, c, f.name) for _ in range(2)]
        elif f.is_struct:
            out[f.key] = sample(f.fields, v, c, nulls)
        elif f.elem == "bool":
            out[f.key] = not f.default_value()
        else:
            x = scalar_sample(f.elem, c, f.name)
            assert x != f.default_value()
            out[f.key] = x
    return out


def expected(fields: list[Field], v: int, value: dict, flexible: bool) -> dict:
    """What decoding the encoding of `value` gives: schema order, fields present
    in v, defaults for absent untagged fields, tagged fields only when they
    differ from their default (Kafka writes them only then)."""
    out = {}
    for f in fields:
        if not f.present_in(v):
            continue
        x = value.get(f.key, f.default_value())
        if flexible and f.tagged_in(v) and x == f.default_value():
            continue
        if f.is_struct and x is not None:
            x = [expected(f.fields, v, y, flexible) for y in x] if f.is_array else expected(f.fields, v, x, flexible)
        out[f.key] = x
    return out


def check_round_trip(msg: Message, v: int, value: dict):
    c = codec(msg)
    raw = c.encode(v, value)
    got, end = c.decode(v, raw, 0)
    assert end == len(raw)
    want = expected(msg.fields, v, value, msg.flexible_in(v))
    assert got == want
    assert json_bytes(got) == json_bytes(want)  # same key order, as Kafka prints it
    assert c.encode(v, got) == raw  # decode -> encode is the identity
    # the same bytes behind a prefix decode the same (decoders honour `pos`)
    got2, end2 = c.decode(v, b"\xee\xee\xee" + raw, 3)
    assert got2 == want and end2 == len(raw) + 3
    return raw, got


def tagged_fields(fields, v):
    return [f for f in fields if f.present_in(v) and f.tagged_in(v)]


@pytest.mark.parametrize("label,msg,v", CASES, ids=CASE_IDS)
def test_round_trip_every_field_non_default(label, msg, v):
    value = sample(msg.fields, v, Counter(v * 1000))
    _raw, got = check_round_trip(msg, v, value)
    assert got == value  # nothing dropped: every field is non-default
    # every tagged field of this version really travelled
    for f in tagged_fields(msg.fields, v):
        assert f.key in got


@pytest.mark.parametrize("label,msg,v", CASES, ids=CASE_IDS)
def test_round_trip_nulls_and_defaults(label, msg, v):
    check_round_trip(msg, v, sample(msg.fields, v, Counter(77), nulls=True))
    raw, got = check_round_trip(msg, v, {})
    assert not any(f.key in got for f in tagged_fields(msg.fields, v))  # defaults are not written
    if msg.flexible_in(v):
        assert raw.endswith(b"\x00")  # empty tag section


@pytest.mark.parametrize("label,msg,v", CASES, ids=CASE_IDS)
def test_truncation_is_a_decode_error(label, msg, v):
    raw = codec(msg).encode(v, sample(msg.fields, v, Counter(5)))
    for cut in range(len(raw)):
        with pytest.raises(DecodeError):
            codec(msg).decode(v, raw[:cut], 0)


def test_version_gating_of_fields():
    rb = METADATA_RECORDS[0]
    value = sample(rb.fields, 4, Counter(1))
    assert list(codec(rb).decode(0, codec(rb).encode(0, value))[0]) == [
        "brokerId",
        "incarnationId",
        "brokerEpoch",
        "endPoints",
        "features",
        "rack",
        "fenced",
    ]
    assert list(codec(rb).decode(2, codec(rb).encode(2, value))[0]) == [
        "brokerId",
        "isMigratingZkBroker",
        "incarnationId",
        "brokerEpoch",
        "endPoints",
        "features",
        "rack",
        "fenced",
        "inControlledShutdown",
    ]
    lc = LEADER_CHANGE_MESSAGE
    v1 = sample(lc.fields, 1, Counter(1))
    assert "voterDirectoryId" in v1["voters"][0]
    assert list(codec(lc).decode(0, codec(lc).encode(0, v1))[0]["voters"][0]) == ["voterId"]


# -- hypothesis: random values per schema, and hostile bytes -------------------


def strategy_for(f: Field, v: int):
    if f.is_array:
        inner = st.fixed_dictionaries(struct_strategy(f.fields, v)) if f.is_struct else scalar_strategy(f.elem)
        s = st.lists(inner, max_size=3)
    elif f.is_struct:
        s = st.fixed_dictionaries(struct_strategy(f.fields, v))
    else:
        s = scalar_strategy(f.elem)
    if f.nullable_in(v):
        s = st.none() | s
    return s


def scalar_strategy(t: str):
    if t in INT_RANGES:
        lo, hi = INT_RANGES[t]
        return st.integers(lo, hi)
    return {
        "bool": st.booleans(),
        "float64": st.floats(allow_nan=False),
        "string": st.text(max_size=12),
        "bytes": st.binary(max_size=12),
        "uuid": st.binary(min_size=16, max_size=16).map(uuid_str),
    }[t]


def struct_strategy(fields: list[Field], v: int) -> dict:
    return {f.key: strategy_for(f, v) for f in fields if f.present_in(v) and not f.tagged_in(v)}


def message_strategy(msg: Message, v: int):
    optional = {f.key: strategy_for(f, v) for f in tagged_fields(msg.fields, v)}
    return st.fixed_dictionaries(struct_strategy(msg.fields, v), optional=optional)


HYPO = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("label,msg,v", CASES, ids=CASE_IDS)
def test_hypothesis_round_trip(label, msg, v):
    @HYPO
    @given(message_strategy(msg, v))
    def run(value):
        check_round_trip(msg, v, value)

    run()


@pytest.mark.parametrize("label,msg,v", CASES, ids=CASE_IDS)
def test_hypothesis_hostile_bytes(label, msg, v):
    c = codec(msg)
    valid = c.encode(v, sample(msg.fields, v, Counter(3)))

    @HYPO
    @given(
        st.one_of(
            st.binary(max_size=64),
            st.tuples(st.integers(0, len(valid) - 1), st.integers(0, 255)).map(
                lambda p: valid[: p[0]] + bytes([p[1]]) + valid[p[0] + 1 :]
            ),
        )
    )
    def run(data):
        try:
            d, end = c.decode(v, data, 0)
        except DecodeError:
            return
        assert isinstance(d, dict) and 0 < end <= len(data)

    run()


# -- hand-computed byte vectors ------------------------------------------------

TOPIC_ID_RAW = bytes(range(1, 17))
DIR_RAW = bytes(range(0xA0, 0xB0))


def test_partition_change_tags_sorted_and_empty_isr_written():
    msg = METADATA_RECORDS[5]
    value = {
        "partitionId": 3,
        "topicId": uuid_str(TOPIC_ID_RAW),
        "isr": [],
        "leader": 2,
        "directories": [uuid_str(DIR_RAW)],
        "eligibleLeaderReplicas": [1, 2],
    }
    raw = (
        bytes.fromhex("00000003")
        + TOPIC_ID_RAW
        + bytes.fromhex(
            "04"  # four tagged fields, in tag order 0, 1, 6, 8
            "000101"  # tag 0 Isr: [] (empty, not null: it differs from the null default)
            "010400000002"  # tag 1 Leader 2
            "0609030000000100000002"  # tag 6 EligibleLeaderReplicas [1, 2]
            "081102"
        )
        + DIR_RAW
    )  # tag 8 Directories [dir]
    assert codec(msg).encode(2, value) == raw
    got, end = codec(msg).decode(2, raw, 0)
    assert end == len(raw)
    assert json_bytes(got) == (
        b'{"partitionId":3,"topicId":"AQIDBAUGBwgJCgsMDQ4PEA","isr":[],"leader":2,'
        b'"directories":["oKGio6SlpqeoqaqrrK2urw"],"eligibleLeaderReplicas":[1,2]}'
    )
    # v0 has no Directories/ELR: those keys are ignored on encode
    assert codec(msg).encode(0, value) == bytes.fromhex("00000003") + TOPIC_ID_RAW + bytes.fromhex(
        "02000101010400000002"
    )


def test_user_scram_credential_bytes_and_json():
    msg = METADATA_RECORDS[11]
    salt, stored, server = b"\x00\xffsalt", bytes(range(32)), bytes(range(32, 64))
    raw = (
        b"\x06alice"
        + b"\x02"
        + b"\x07"
        + salt
        + b"\x21"
        + stored
        + b"\x21"
        + server
        + bytes.fromhex("00001000")
        + b"\x00"
    )
    got, end = codec(msg).decode(0, raw, 0)
    assert end == len(raw)
    assert got == {
        "name": "alice",
        "mechanism": 2,
        "salt": salt,
        "storedKey": stored,
        "serverKey": server,
        "iterations": 4096,
    }
    assert codec(msg).encode(0, got) == raw
    # bytes print as standard base64, like Jackson's BinaryNode in Kafka's JSON
    assert b'"salt":"' + base64.b64encode(salt) + b'"' in json_bytes(got)


def test_client_quota_float64_and_null_entity_name():
    msg = METADATA_RECORDS[14]
    raw = (
        b"\x02"
        + b"\x05user"
        + b"\x00"
        + b"\x00"  # Entity [{user, null}] + struct tags
        + b"\x13producer_byte_rate"
        + struct.pack(">d", 1048576.0)
        + b"\x01"
        + b"\x00"
    )
    got, end = codec(msg).decode(0, raw, 0)
    assert end == len(raw)
    assert got == {
        "entity": [{"entityType": "user", "entityName": None}],
        "key": "producer_byte_rate",
        "value": 1048576.0,
        "remove": True,
    }
    assert codec(msg).encode(0, got) == raw


def test_voters_record_bytes_uint16_port():
    raw = (
        bytes.fromhex("00000200000003")
        + DIR_RAW
        + b"\x02"
        + b"\x0bCONTROLLER"
        + b"\x0alocalhost"
        + bytes.fromhex("ffff")
        + b"\x00"  # one endpoint
        + bytes.fromhex("0000000100")  # KRaftVersionFeature {0, 1} + its tags
        + b"\x00"
        + b"\x00"
    )  # voter tags, record tags
    got, end = codec(VOTERS_RECORD).decode(0, raw, 0)
    assert end == len(raw)
    assert json_bytes(got) == (
        b'{"version":0,"voters":[{"voterId":3,"voterDirectoryId":"oKGio6SlpqeoqaqrrK2urw",'
        b'"endpoints":[{"name":"CONTROLLER","host":"localhost","port":65535}],'
        b'"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}'
    )
    assert codec(VOTERS_RECORD).encode(0, got) == raw


def test_hostile_lengths_fail_fast():
    part = METADATA_RECORDS[3]
    head = bytes.fromhex("00000000") + TOPIC_ID_RAW
    with pytest.raises(DecodeError, match="exceeds the remaining bytes"):
        codec(part).decode(0, head + bytes.fromhex("ffffffff0f"), 0)  # Replicas: 4 billion elements
    with pytest.raises(DecodeError):
        codec(METADATA_RECORDS[2]).decode(0, bytes.fromhex("ffffffff0f") + b"x" * 40, 0)  # name length
    with pytest.raises(DecodeError):  # a tag whose size runs past the end
        codec(METADATA_RECORDS[24]).decode(0, bytes.fromhex("0107ff01") + b"\x00" * 10, 0)


def test_end_txn_marker_is_not_flexible():
    raw = bytes.fromhex("000000000005")
    assert codec(END_TXN_MARKER).encode(0, {"version": 0, "coordinatorEpoch": 5}) == raw
    assert codec(END_TXN_MARKER).decode(0, raw, 0) == ({"version": 0, "coordinatorEpoch": 5}, 6)
    with pytest.raises(DecodeError):
        codec(END_TXN_MARKER).decode(0, raw[:5], 0)


def test_unknown_tags_survive_a_round_trip():
    msg = METADATA_RECORDS[2]  # TopicRecord v0 has no tagged field
    raw = b"\x02t" + TOPIC_ID_RAW + b"\x02" + b"\x05\x01\xaa" + b"\x09\x00"
    got, end = codec(msg).decode(0, raw, 0)
    assert end == len(raw)
    assert got == {"name": "t", "topicId": uuid_str(TOPIC_ID_RAW), "_unknownTaggedFields": [[5, "aa"], [9, ""]]}
    assert codec(msg).encode(0, got) == raw


def test_tagged_struct_array_and_nullable_struct_in_the_dsl():
    # no current record has these shapes; the wire messages do, and the codec must handle them
    inner = [Field("Name", "string"), Field("Value", "string", nullable="0+")]
    msg = Message(
        "Synthetic",
        "0-1",
        [
            Field("Id", "int32"),
            Field("Items", "[]Item", "1+", tagged="1+", tag=4, fields=inner),
            Field("Maybe", "Item", nullable="0+", fields=[Field("Name", "string")]),
        ],
    )
    value = {"id": 1, "items": [{"name": "a", "value": None}, {"name": "b", "value": "x"}], "maybe": None}
    raw = codec(msg).encode(1, value)
    assert raw == (
        bytes.fromhex("00000001") + b"\xff" + b"\x01\x04\x0a" + b"\x03" + b"\x02a\x00\x00" + b"\x02b\x02x\x00"
    )
    assert codec(msg).decode(1, raw, 0) == ({"id": 1, "maybe": None, "items": value["items"]}, len(raw))
    raw0 = codec(msg).encode(0, {"id": 2, "maybe": {"name": "m"}})
    assert raw0 == bytes.fromhex("00000002") + b"\x01\x02m\x00" + b"\x00"
    assert codec(msg).decode(0, raw0, 0) == ({"id": 2, "maybe": {"name": "m"}}, len(raw0))


def test_null_default_sentinel():
    f = Field("X", "[]int32", nullable="0+", tagged="0+", tag=0, default=NULL)
    assert f.default_value() is None
    assert Field("Y", "[]int32").default_value() == []


# -- real bytes: Kafka's fixtures and its own dump-log output -------------------

HDR = struct.Struct(">qiibIhiqqqhii")  # record batch v2 header, 61 bytes


def _varlong(buf, pos):
    u = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        u |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return (u >> 1) ^ -(u & 1), pos


def read_records(path: Path):
    """Yield (offset, batch leader epoch, is_control, key, value, batch crc) for every
    record of an uncompressed v2 log/snapshot file."""
    data = path.read_bytes()
    pos = 0
    while pos + HDR.size <= len(data):
        (base, length, epoch, magic, crc, attrs, _lod, _bts, _mts, _pid, _pep, _bseq, count) = HDR.unpack_from(
            data, pos
        )
        end = pos + 12 + length
        if length <= 0 or end > len(data):
            break
        assert magic == 2 and attrs & 0x07 == 0, f"{path}: not an uncompressed v2 batch at {pos}"
        body = data[pos + HDR.size : end]
        p = 0
        for _ in range(count):
            n, p = _varlong(body, p)
            rec_end = p + n
            p += 1  # attributes
            _ts, p = _varlong(body, p)
            delta, p = _varlong(body, p)
            kl, p = _varlong(body, p)
            key = None if kl < 0 else body[p : p + kl]
            p += max(kl, 0)
            vl, p = _varlong(body, p)
            value = None if vl < 0 else body[p : p + vl]
            p = rec_end
            yield base + delta, epoch, bool(attrs & 0x20), key, value, crc
        pos = end


def decode_value(is_control, key, value):
    """(label, json text, re-encoded value) for one record, Kafka dump-log style."""
    if is_control:
        ctype = struct.unpack_from(">h", key, 2)[0]
        name, msg = CONTROL_TYPES[ctype]
        v = body_version(ctype, struct.unpack_from(">h", value, 0)[0])
        data, end = codec(msg).decode(v, value, 0)
        assert end == len(value)
        return name, data, codec(msg).encode(v, data)
    frame, p = read_uvarint(value, 0)
    api_key, p = read_uvarint(value, p)
    version, p = read_uvarint(value, p)
    assert frame == 1
    msg = METADATA_RECORDS[api_key]
    data, end = codec(msg).decode(version, value, p)
    assert end == len(value)
    reencoded = uvarint_bytes(1) + uvarint_bytes(api_key) + uvarint_bytes(version) + codec(msg).encode(version, data)
    return (msg.name, version), {"type": TYPE_NAMES[api_key], "version": version, "data": data}, reencoded


CONTROL_LABELS = {
    "SnapshotHeader": "SNAPSHOT_HEADER",
    "SnapshotFooter": "SNAPSHOT_FOOTER",
    "KRaftVersion": "KRAFT_VERSION",
    "KRaftVoters": "KRAFT_VOTERS",
}
RECORD_LINE = re.compile(
    r"\| offset: (\d+) .*? headerKeys: \[[^\]]*\] (?:payload: (\{.*\})|"
    r"(SnapshotHeader|SnapshotFooter|KRaftVersion|KRaftVoters) (\{.*\})|controlType: (\w+)\(\d+\))$"
)


def sample_expectations(sample: str, fixture_root: Path):
    """From a dump-log transcript: {fixture file: {offset: (kind, text)}} for every
    record line printed with --cluster-metadata-decoder, plus the first batch CRC
    printed for each file, and the --skip-record-metadata payload sequences."""
    text = (SAMPLES / sample).read_bytes().decode("utf-8", "replace")
    per_file: dict[Path, dict[int, tuple[str, str]]] = {}
    crcs: dict[Path, int] = {}
    skip_meta: dict[Path, list[str]] = {}
    cur = None
    decoder = skip = False

    def locate(name):
        p = fixture_root / name
        if not p.exists():
            p = (
                fixture_root
                / "data"
                / "c1"
                / ("" if name.endswith("bootstrap.checkpoint") else "__cluster_metadata-0")
                / name
            )
        return p

    for line in text.split("\n"):
        if line.startswith("$ "):
            argv = shlex.split(line[2:].split(" | ")[0])
            decoder = "--cluster-metadata-decoder" in argv
            skip = "--skip-record-metadata" in argv
            cur = locate(argv[argv.index("--files") + 1]) if "--files" in argv else None
            continue
        if not decoder or cur is None:
            continue
        if line.startswith("Dumping "):
            cur = locate(line[len("Dumping ") :])
            continue
        m = re.search(r"^baseOffset: \d+ .* crc: (\d+) ", line)
        if m and cur not in crcs:
            crcs[cur] = int(m.group(1))
        if skip:
            if line.startswith(" payload: "):
                skip_meta.setdefault(cur, []).append(line[len(" payload: ") :])
            continue
        m = RECORD_LINE.search(line)
        if m:
            off = int(m.group(1))
            if m.group(2):
                entry = ("payload", m.group(2))
            elif m.group(3):
                entry = (CONTROL_LABELS[m.group(3)], m.group(4))
            else:
                entry = ("control", m.group(5))
            per_file.setdefault(cur, {})[off] = entry
    return per_file, crcs, skip_meta


@needs_shared
@pytest.mark.parametrize(
    "sample,root,n_lines",
    [
        # 3.7.0: 30 payloads of the log + 3 bootstrap + 8 snapshot lines, and 30 --skip-record-metadata payloads
        ("dumplog-3.7.0.txt", "kafka-3.7.0-static", 71),
        # 3.9.0: bootstrap snapshot (header, KRaftVersion, KRaftVoters, footer), bootstrap.checkpoint (3),
        # the log's KRaftVersion and five KRaftVoters
        ("dumplog-3.9.0.txt", "kafka-3.9.0-dynamic", 13),
    ],
)
def test_fixtures_decode_to_kafkas_own_json(sample, root, n_lines):
    per_file, crcs, skip_meta = sample_expectations(sample, FIXTURES / root)
    compared = 0
    for path, lines in per_file.items():
        assert path.exists(), path
        records = {off: (ctl, key, value, crc) for off, _e, ctl, key, value, crc in read_records(path)}
        if path in crcs:  # the transcript was made from these very bytes
            assert next(iter(records.values()))[3] == crcs[path], path
        for off, (kind, text) in lines.items():
            ctl, key, value, _crc = records[off]
            label, data, reencoded = decode_value(ctl, key, value)
            assert reencoded == bytes(value), (path, off)
            if kind == "control":  # Kafka (3.7-3.9) does not decode it: the type must match
                assert ctl and label == text, (path, off)
                continue
            if kind == "payload":
                assert not ctl
            else:
                assert ctl and label == kind
            assert json_bytes(data) == text.encode("utf-8"), (path, off)
            compared += 1
    for path, payloads in skip_meta.items():
        ours = [json_bytes(decode_value(c, k, v)[1]).decode() for _o, _e, c, k, v, _crc in read_records(path) if not c]
        assert ours[: len(payloads)] == payloads
        compared += len(payloads)
    assert compared == n_lines


@needs_shared
def test_fixture_specific_values():
    log37 = FIXTURES / "kafka-3.7.0-static/data/c1/__cluster_metadata-0/00000000000000000000.log"
    recs = list(read_records(log37))
    assert recs[0][0] == 0 and recs[0][2]
    _l, lc, _r = decode_value(*recs[0][2:5])
    assert lc == {
        "version": 0,
        "leaderId": 1,
        "voters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}],
        "grantingVoters": [{"voterId": 1}, {"voterId": 3}],
    }
    log39 = FIXTURES / "kafka-3.9.0-dynamic/data/c1/__cluster_metadata-0/00000000000000000000.log"
    first = next(read_records(log39))
    _l, lc, _r = decode_value(*first[2:5])
    assert lc == {"version": 0, "leaderId": 1, "voters": [{"voterId": 1}], "grantingVoters": [{"voterId": 1}]}
    # every record of both logs and all their snapshots decodes and re-encodes byte for byte
    seen = {}
    for d in (log37.parent, log39.parent):
        for p in sorted(d.iterdir()):
            if p.suffix in (".log", ".checkpoint"):
                for _o, _e, c, k, v, _crc in read_records(p):
                    label, _d, reencoded = decode_value(c, k, v)
                    assert reencoded == bytes(v), (p, _o)
                    seen[label] = seen.get(label, 0) + 1
    assert seen[("RegisterBrokerRecord", 3)] > 0 and seen["KRAFT_VOTERS"] > 0 and seen["LEADER_CHANGE"] > 0


# -- the corpus: every record type and version real clusters wrote --------------


def _catalog_cover():
    """The smallest corpus files whose metadata record (type, version) sets together
    cover everything CATALOG.json saw."""
    cat = json.loads((CORPUS / "CATALOG.json").read_text())
    files = [f for repo in cat.values() for f in repo["files"] if f["stats"] and f["stats"].get("metadata_versions")]
    covered, chosen = set(), []
    for f in sorted(files, key=lambda f: (f["bytes"], f["local"])):
        new = set(f["stats"]["metadata_versions"]) - covered
        if new:
            chosen.append(f)
            covered |= new
    return chosen, covered


@needs_shared
def test_corpus_records_decode_as_the_catalog_counts():
    chosen, covered = _catalog_cover()
    assert len(covered) >= 20  # RegisterBroker v0-v3, Partition(Change) v0-v2, ...
    ours_all = set()
    for f in chosen:
        st_ = f["stats"]
        versions, controls, leader_changes, feature_levels = {}, {}, [], []
        for off, epoch, ctl, key, value, _crc in read_records(CORPUS / f["local"]):
            label, data, reencoded = decode_value(ctl, key, value)
            assert reencoded == bytes(value), (f["local"], off)
            if ctl:
                controls[label] = controls.get(label, 0) + 1
                if label == "LEADER_CHANGE":
                    leader_changes.append(
                        [off, epoch, data["version"], data["leaderId"], [x["voterId"] for x in data["voters"]]]
                    )
            else:
                name = f"{label[0]} v{label[1]}"
                versions[name] = versions.get(name, 0) + 1
                if label[0] == "FeatureLevelRecord":
                    feature_levels.append([off, data["data"]["name"], data["data"]["featureLevel"]])
        assert versions == st_["metadata_versions"], f["local"]
        assert controls == st_["control"], f["local"]
        assert leader_changes == st_["leader_change"], f["local"]
        assert feature_levels == st_["feature_levels"], f["local"]
        ours_all |= set(versions)
    assert ours_all == covered


def test_feature_level_record_v0_of_kafka_3_0_to_3_2():
    # Kafka 3.2's FeatureLevelRecord v0: frame 1, api key 12, version 0, compact
    # string Name, int16 MinFeatureLevel, int16 MaxFeatureLevel, no tagged fields.
    # 3.3 kept version 0 for a single FeatureLevel, so the 3.3 layout leaves 2 bytes.
    from quorumctl.records.metadata import decode_metadata
    from quorumctl.render.dumplog import metadata_payload
    from quorumctl.spark.rows import decode_value

    name = b"metadata.version"
    old = bytes([1, 12, 0, len(name) + 1]) + name + struct.pack(">hh", 1, 3) + b"\x00"
    d = decode_metadata(old)
    assert d.error is None and d.type_name == "FEATURE_LEVEL_RECORD" and d.version == 0
    assert d.data == {"name": "metadata.version", "minFeatureLevel": 1, "maxFeatureLevel": 3}
    assert metadata_payload(old) == (
        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":'
        '{"name":"metadata.version","minFeatureLevel":1,"maxFeatureLevel":3}}'
    )
    assert decode_value(None, old, False)[2] == (3, ("metadata.version", 3))  # feature family, max level
    new = bytes([1, 12, 0, len(name) + 1]) + name + struct.pack(">h", 7) + b"\x00"
    assert decode_metadata(new).data == {"name": "metadata.version", "featureLevel": 7}
    # neither layout: still an error naming the 3.3 layout's complaint
    odd = bytes([1, 12, 0, len(name) + 1]) + name + b"\x00\x01\x00\x05"  # legacy: cut short
    assert decode_metadata(odd).error == "found 1 byte(s) of garbage after FeatureLevelRecord"


@pytest.mark.parametrize(
    "value, text",
    [
        (10485760.0, "1.048576E7"),
        (1e7, "1.0E7"),
        (9999999.0, "9999999.0"),
        (1000.0, "1000.0"),
        (0.5, "0.5"),
        (0.001, "0.001"),
        (1e-4, "1.0E-4"),
        (-2.5e-5, "-2.5E-5"),
        (12345678.9, "1.23456789E7"),
        (1.5e300, "1.5E300"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (0.00123, "0.00123"),
    ],
)
def test_quota_values_print_as_java_doubles_in_text(value, text):
    # Kafka's dump-log writes ClientQuotaRecord.value with Jackson, i.e. Double.toString
    from quorumctl.records.metadata import API_KEYS, encode_metadata
    from quorumctl.render.dumplog import metadata_json, metadata_payload

    raw = encode_metadata(
        API_KEYS["ClientQuotaRecord"],
        0,
        {
            "entity": [{"entityType": "user", "entityName": "alice"}],
            "key": "producer_byte_rate",
            "value": value,
            "remove": False,
        },
    )
    assert metadata_payload(raw) == (
        '{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user",'
        f'"entityName":"alice"}}],"key":"producer_byte_rate","value":{text},"remove":false}}}}'
    )
    assert metadata_json(raw)["data"]["value"] == value  # JSON output keeps the number


# Our harness (not Kafka's code): Kafka 4.3's generated record classes write RegisterBrokerRecord v4
# and BrokerRegistrationChangeRecord v3 with CordonedLogDirs set, empty and null; per record it
# prints "API_KEY VERSION BODY_HEX JSON" (JSON: the record's JsonConverter, what dump-log prints).
CORDONED_JAVA = """\
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.*;
import org.apache.kafka.common.protocol.*;

public class CordonedRecords {
    static void emit(ApiMessage m, short v, String json) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(m.size(cache, v));
        m.write(new ByteBufferAccessor(buf), cache, v);
        System.out.println(m.apiKey() + " " + v + " " + HexFormat.of().formatHex(buf.array()) + " " + json);
    }
    public static void main(String[] a) {
        Uuid d1 = Uuid.fromString("DfqkWOlJTZ-abG8pUGocIA"), d2 = Uuid.fromString("4BuDMaJKttH3vcqDCog2og");
        RegisterBrokerRecord.BrokerEndpointCollection eps = new RegisterBrokerRecord.BrokerEndpointCollection();
        eps.add(new RegisterBrokerRecord.BrokerEndpoint().setName("PLAINTEXT").setHost("127.0.0.1").setPort(29094).setSecurityProtocol((short) 0));
        RegisterBrokerRecord.BrokerFeatureCollection fs = new RegisterBrokerRecord.BrokerFeatureCollection();
        fs.add(new RegisterBrokerRecord.BrokerFeature().setName("metadata.version").setMinSupportedVersion((short) 7).setMaxSupportedVersion((short) 30));
        for (List<Uuid> cordoned : Arrays.asList(List.of(d2), List.<Uuid>of(), null)) {
            RegisterBrokerRecord r = new RegisterBrokerRecord().setBrokerId(4).setBrokerEpoch(12).setIncarnationId(Uuid.fromString("eAmx4J3YZ63RPobrVgXBAw"))
                .setEndPoints(eps.duplicate()).setFeatures(fs.duplicate()).setRack(null).setFenced(true).setInControlledShutdown(false)
                .setLogDirs(List.of(d1, d2)).setCordonedLogDirs(cordoned);
            emit(r, (short) 4, RegisterBrokerRecordJsonConverter.write(r, (short) 4).toString());
            BrokerRegistrationChangeRecord c = new BrokerRegistrationChangeRecord().setBrokerId(4).setBrokerEpoch(12)
                .setFenced((byte) -1).setInControlledShutdown((byte) 0).setLogDirs(List.of(d1, d2)).setCordonedLogDirs(cordoned);
            emit(c, (short) 3, BrokerRegistrationChangeRecordJsonConverter.write(c, (short) 3).toString());
        }
    }
}
"""


@pytest.mark.kafka("4.3")
def test_cordoned_log_dirs_as_kafka_43_writes_them(tmp_path):
    import os
    import shutil
    from kafka41 import KAFKA43_HOME, skip_reason
    from quorumctl.records.metadata import decode_metadata, encode_metadata, payload_text_fn

    why = skip_reason(KAFKA43_HOME)
    if why is not None:
        pytest.skip(why)
    src = tmp_path / "CordonedRecords.java"
    src.write_text(CORDONED_JAVA)
    java = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    p = subprocess.run(
        [
            java,
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            f"{KAFKA43_HOME / 'libs'}/*",
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [line.split(" ", 3) for line in p.stdout.splitlines()]
    assert [(k, v) for k, v, _, _ in rows] == [("0", "4"), ("17", "3")] * 3
    cordoned = []
    for key, version, body_hex, kafka_json in rows:
        value = bytes([1, int(key), int(version)]) + bytes.fromhex(body_hex)
        d = decode_metadata(value)
        assert (
            d.error is None
            and d.type_name == {"0": "REGISTER_BROKER_RECORD", "17": "BROKER_REGISTRATION_CHANGE_RECORD"}[key]
        )
        assert json.loads(json_bytes(d.data)) == json.loads(kafka_json)
        prefix, fn = payload_text_fn(int(key), int(version))  # dump-log's text, byte for byte
        assert (
            prefix + fn(value, 3, len(value))[0] + "}"
            == f'{{"type":"{d.type_name}","version":{version},"data":{kafka_json}}}'
        )
        assert encode_metadata(int(key), int(version), d.data) == value
        cordoned.append(json.loads(kafka_json).get("cordonedLogDirs", "absent"))
    assert cordoned == [["4BuDMaJKttH3vcqDCog2og"]] * 2 + [[]] * 2 + ["absent"] * 2
