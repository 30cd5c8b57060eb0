"""Every message schema quorumctl declares, compared with Kafka's own declaration
(as franz-go checks its DSL against Kafka's JSON): valid and flexible versions,
and per field its type, versions, nullable and tagged versions, tag and default.

Kafka's facts come from tests/support/kafka_schemas.json, a digest that
tools/kafka_schema_digest.py writes from Kafka's source (3.2.0 and 3.9.0 from
apache/kafka's tags; 4.3.0, the release commit a9ce3221, and trunk, a later 2026
commit, from confluentinc/kafka's history); Kafka's files themselves are not in
this repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quorumctl.records.control_schemas import END_TXN_MARKER
from quorumctl.records.metadata_schemas import FEATURE_LEVEL_PRE_3_3
from quorumctl.schemas import declared_messages
from quorumctl.schema.spec import NULL, Field, Message, Versions
from quorumctl.wire import messages

KAFKA = json.loads((Path(__file__).parents[1] / "support" / "kafka_schemas.json").read_text())
# Which Kafka each declaration follows (what its module's docstring names): the
# wire messages Kafka 3.9's versions (later versions add fields quorumctl does not
# negotiate) except KAFKA_43_WIRE's, Kafka 4.3.0's (AddRaftVoter v1: AckWhenCommitted); the records
# and the quorum-state file Kafka 4.3.0 (KIP-1066's CordonedLogDirs), and what 4.3.0 does
# not have yet, KIP-1312's UnregisterControllerRecord and UnregisterController (key 94), the
# 4.4 branch (commit 87943b2f, the build in ../shared/kafka).
NEWER_THAN_43 = {"UnregisterControllerRecord", "UnregisterControllerRequest", "UnregisterControllerResponse"}
# wire messages declared at Kafka 4.3.0's versions: AddRaftVoter v1, DescribeCluster v2
# (IncludeFencedBrokers, KIP-1073) and UpdateFeatures (features upgrade/downgrade)
KAFKA_43_WIRE = {
    "AddRaftVoterRequest",
    "AddRaftVoterResponse",
    "DescribeClusterRequest",
    "DescribeClusterResponse",
    "UpdateFeaturesRequest",
    "UpdateFeaturesResponse",
    # topics describe, describe health, cluster unregister (issue 36)
    "DescribeConfigsRequest",
    "DescribeConfigsResponse",
    "DescribeTopicPartitionsRequest",
    "DescribeTopicPartitionsResponse",
    "ListPartitionReassignmentsRequest",
    "ListPartitionReassignmentsResponse",
    "UnregisterBrokerRequest",
    "UnregisterBrokerResponse",
    # doctor reads the metadata log as an observer does (issue 44)
    "FetchRequest",
    "FetchResponse",
    "FetchSnapshotRequest",
    "FetchSnapshotResponse",
}


def release_of(msg: Message) -> str:
    if msg is FEATURE_LEVEL_PRE_3_3:
        return "3.2.0"  # FeatureLevelRecord as Kafka 3.2 wrote it
    if msg.name in NEWER_THAN_43:
        return "4.4"
    if msg.name in KAFKA_43_WIRE:
        return "4.3.0"
    if msg.kind in ("request", "response", "header") or msg.name == "ZkMigrationStateRecord":
        return "3.9.0-rc3"  # ZkMigrationStateRecord: gone from 4.0 on
    return "4.3.0"


NOT_KAFKAS = {
    id(messages.TAGGED_FIELDS): "an empty flexible struct: the tagged-field section of a v2 request header",
}
# RequestHeader is declared for v1 and v2's shared fixed part only (v2's tagged
# section is TAGGED_FIELDS): compare its valid versions as a subset, and its fields.
PARTIAL = {id(messages.REQUEST_HEADER)}
# Control record values whose leading int16 Version quorumctl declares as a field
# where Kafka's schema leaves it out (EndTransactionMarker writes it by hand).
LEADING_VERSION = {id(END_TXN_MARKER)}

INTS = {"int8", "int16", "uint16", "int32", "uint32", "int64"}


def _default(kafka: dict):
    """Kafka's "default" string as the Python value our Field.default holds."""
    raw = kafka.get("default")
    if raw is None:
        return None
    if raw == "null":
        return NULL
    t = kafka["type"]
    if t in INTS:
        return int(str(raw), 0)
    if t == "bool":
        return str(raw).lower() == "true"
    if t == "float64":
        return float(raw)
    return raw


def _effective_default(name, typ, default, fields):
    stub_fields = [Field("X", "int8")] if fields else None
    return Field(name, typ, default=default, fields=stub_fields).default_value()


def _versions(text):
    return Versions.parse(text)


def compare_fields(path: str, ours: list[Field], kafka: list[dict], problems: list[str]) -> None:
    names = [f.name for f in ours], [k["name"] for k in kafka]
    if names[0] != names[1]:
        problems.append(f"{path}: fields {names[0]} != Kafka's {names[1]}")
        return
    for f, k in zip(ours, kafka):
        where = f"{path}.{f.name}"
        if f.type != k["type"]:
            problems.append(f"{where}: type {f.type} != Kafka's {k['type']}")
        for label, mine, theirs in (
            ("versions", f.versions, k["versions"]),
            ("nullableVersions", f.nullable, k.get("nullableVersions")),
            ("taggedVersions", f.tagged, k.get("taggedVersions")),
        ):
            if _versions(mine) != _versions(theirs):
                problems.append(f"{where}: {label} {mine} != Kafka's {theirs}")
        if f.tag != k.get("tag"):
            problems.append(f"{where}: tag {f.tag} != Kafka's {k.get('tag')}")
        mine = _effective_default(f.name, f.type, f.default, f.fields)
        theirs = _effective_default(f.name, k["type"], _default(k), k.get("fields"))
        if mine != theirs:
            problems.append(f"{where}: default {mine!r} != Kafka's {theirs!r}")
        if f.fields is not None or "fields" in k:
            compare_fields(where, f.fields or [], k.get("fields", []), problems)


def compare(msg: Message, kafka: dict) -> list[str]:
    problems: list[str] = []
    if id(msg) in PARTIAL:
        if not all(v in _versions(kafka["validVersions"]) for v in msg.versions):
            problems.append(f"{msg.name}: valid {msg.valid} not within Kafka's {kafka['validVersions']}")
    else:
        if _versions(msg.valid) != _versions(kafka["validVersions"]):
            problems.append(f"{msg.name}: validVersions {msg.valid} != Kafka's {kafka['validVersions']}")
        if _versions(msg.flexible) != _versions(kafka["flexibleVersions"]):
            problems.append(f"{msg.name}: flexibleVersions {msg.flexible} != Kafka's {kafka['flexibleVersions']}")
    if msg.api_key is not None and msg.kind == "metadata" and msg.api_key != kafka.get("apiKey"):
        problems.append(f"{msg.name}: apiKey {msg.api_key} != Kafka's {kafka.get('apiKey')}")
    fields = msg.fields[1:] if id(msg) in LEADING_VERSION else msg.fields
    compare_fields(msg.name, fields, kafka["fields"], problems)
    return problems


DECLARED = [m for m in declared_messages() if id(m) not in NOT_KAFKAS]


def test_every_declaration_has_a_kafka_schema():
    missing = [m.name for m in DECLARED if m.name not in KAFKA[release_of(m)]]
    assert missing == []
    assert len(DECLARED) >= 50  # wire messages, metadata and control records, quorum-state


@pytest.mark.parametrize("msg", DECLARED, ids=[f"{m.name}-{release_of(m)}" for m in DECLARED])
def test_declaration_matches_kafka(msg):
    assert compare(msg, KAFKA[release_of(msg)][msg.name]) == []


def test_a_field_version_changed_by_hand_is_caught():
    """The check is not vacuous: a declaration edited away from Kafka fails it."""
    import copy

    edited = copy.deepcopy(messages.DESCRIBE_QUORUM_RESPONSE)
    topics = next(f for f in edited.fields if f.name == "Topics")
    partitions = next(f for f in topics.fields if f.name == "Partitions")
    hw = next(f for f in partitions.fields if f.name == "HighWatermark")
    hw.versions = "1+"
    assert compare(edited, KAFKA["3.9.0-rc3"]["DescribeQuorumResponse"]) == [
        "DescribeQuorumResponse.Topics.Partitions.HighWatermark: versions 1+ != Kafka's 0+"
    ]


def test_every_record_of_kafka_43_is_declared_as_43_has_it():
    """Every metadata and control record and the quorum-state file of Kafka 4.3.0,
    at every version 4.3.0 writes: dump-log and image decode what 4.3 writes."""
    ours = {m.name: m for m in DECLARED if m.kind not in ("request", "response", "header")}
    kafka43 = {n: k for n, k in KAFKA["4.3.0"].items() if not n.endswith(("Request", "Response", "Header"))}
    assert sorted(set(kafka43) - set(ours)) == []
    assert {n: kafka43[n]["validVersions"] for n in ("RegisterBrokerRecord", "BrokerRegistrationChangeRecord")} == {
        "RegisterBrokerRecord": "0-4",
        "BrokerRegistrationChangeRecord": "0-3",
    }
    for name, k in kafka43.items():
        if name != "FeatureLevelRecord" or ours[name] is not FEATURE_LEVEL_PRE_3_3:
            assert compare(ours[name], k) == [], name
    assert KAFKA["4.3.0"]["AddRaftVoterRequest"]["validVersions"] == "0-1"
    assert KAFKA["4.3.0"]["RemoveRaftVoterRequest"]["validVersions"] == "0"  # no v1 in 4.3


def test_every_record_of_kafka_44_is_declared_as_44_has_it():
    """Kafka 4.4 (the branch build) adds one metadata record, UnregisterControllerRecord
    (api key 29, KIP-1312), and changes no other record's versions or fields (CIDR ACLs,
    KIP-1276, keep AccessControlEntryRecord v0: the host pattern is the same string); the
    wire API the unregister commands send is UnregisterController, key 94, v0 only."""
    ours = {m.name: m for m in DECLARED if m.kind not in ("request", "response", "header")}
    kafka44 = {n: k for n, k in KAFKA["4.4"].items() if not n.endswith(("Request", "Response", "Header"))}
    assert sorted(set(kafka44) - set(ours)) == []
    assert sorted(set(kafka44) - set(KAFKA["4.3.0"])) == ["UnregisterControllerRecord"]
    assert KAFKA["4.4"]["UnregisterControllerRecord"]["apiKey"] == 29
    assert KAFKA["4.4"]["AccessControlEntryRecord"] == KAFKA["4.3.0"]["AccessControlEntryRecord"]
    for name, k in kafka44.items():
        if name != "FeatureLevelRecord" or ours[name] is not FEATURE_LEVEL_PRE_3_3:
            assert compare(ours[name], k) == [], name
    assert (
        KAFKA["4.4"]["UnregisterControllerRequest"]["validVersions"],
        KAFKA["4.4"]["UnregisterControllerResponse"]["validVersions"],
    ) == ("0", "0")
    assert messages.APIS[94].name == "UnregisterController"
