"""Value schemas of control records (record key = int16 key version 0, int16 type).

Facts from Kafka's clients `common/message/{LeaderChangeMessage,
SnapshotHeaderRecord, SnapshotFooterRecord, KRaftVersionRecord,
VotersRecord}.json` and the hand-coded schema of `EndTransactionMarker`.
Every value starts with its own int16 `Version` field.

Which schema version decodes the body: Kafka does NOT use that Version field.
`ControlRecordUtils.deserialize*` always reads with its *_CURRENT_VERSION
constants, which are all 0 (3.7 .. trunk 2026), and the writers
(`MemoryRecordsBuilder.append*`, `LeaderState`, `RecordsSnapshotWriter`) write
with the same constants and set the Version field to them. So LeaderChangeMessage
is written and read as v0 (v1, which adds Voter.VoterDirectoryId, is declared
but never written), and every real value has Version 0. `EndTransactionMarker`
rejects a negative version and parses any other as v0 (int16 version, int32
coordinator epoch; extra bytes ignored). `body_version` below follows that:
the Version field's value when the schema has it (what the writer meant, equal
to Kafka's choice for all data Kafka writes), otherwise Kafka's fixed version.
"""

from __future__ import annotations

from ..schema.spec import Field as F, Message

# ABORT / COMMIT value: a non-flexible message, exactly 6 bytes at version 0.
END_TXN_MARKER = Message(
    "EndTxnMarker",
    "0",
    [
        F("Version", "int16"),
        F("CoordinatorEpoch", "int32"),
    ],
    flexible=None,
    kind="data",
)

# v1 adds Voter.VoterDirectoryId (KIP-853); Kafka still writes and reads v0.
LEADER_CHANGE_MESSAGE = Message(
    "LeaderChangeMessage",
    "0-1",
    [
        F("Version", "int16"),
        F("LeaderId", "int32"),
        F(
            "Voters",
            "[]Voter",
            fields=[
                F("VoterId", "int32"),
                F("VoterDirectoryId", "uuid", "1+"),
            ],
        ),
        F(
            "GrantingVoters",
            "[]Voter",
            fields=[
                F("VoterId", "int32"),
                F("VoterDirectoryId", "uuid", "1+"),
            ],
        ),
    ],
    flexible="0+",
)

SNAPSHOT_HEADER_RECORD = Message(
    "SnapshotHeaderRecord",
    "0",
    [
        F("Version", "int16"),
        F("LastContainedLogTimestamp", "int64"),
    ],
    flexible="0+",
)

SNAPSHOT_FOOTER_RECORD = Message(
    "SnapshotFooterRecord",
    "0",
    [
        F("Version", "int16"),
    ],
    flexible="0+",
)

KRAFT_VERSION_RECORD = Message(
    "KRaftVersionRecord",
    "0",
    [
        F("Version", "int16"),
        F("KRaftVersion", "int16"),
    ],
    flexible="0+",
)

VOTERS_RECORD = Message(
    "VotersRecord",
    "0",
    [
        F("Version", "int16"),
        F(
            "Voters",
            "[]Voter",
            fields=[
                F("VoterId", "int32"),
                F("VoterDirectoryId", "uuid"),
                F(
                    "Endpoints",
                    "[]Endpoint",
                    fields=[
                        F("Name", "string"),
                        F("Host", "string"),
                        F("Port", "uint16"),
                    ],
                ),
                F(
                    "KRaftVersionFeature",
                    "KRaftVersionFeature",
                    fields=[
                        F("MinSupportedVersion", "int16"),
                        F("MaxSupportedVersion", "int16"),
                    ],
                ),
            ],
        ),
    ],
    flexible="0+",
)

ABORT, COMMIT, LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS = range(7)

# Kafka's ControlRecordType enum: type id -> (name, value schema). Any other id is
# Kafka's UNKNOWN (-1), which consumers ignore.
CONTROL_TYPES: dict[int, tuple[str, Message]] = {
    ABORT: ("ABORT", END_TXN_MARKER),
    COMMIT: ("COMMIT", END_TXN_MARKER),
    LEADER_CHANGE: ("LEADER_CHANGE", LEADER_CHANGE_MESSAGE),
    SNAPSHOT_HEADER: ("SNAPSHOT_HEADER", SNAPSHOT_HEADER_RECORD),
    SNAPSHOT_FOOTER: ("SNAPSHOT_FOOTER", SNAPSHOT_FOOTER_RECORD),
    KRAFT_VERSION: ("KRAFT_VERSION", KRAFT_VERSION_RECORD),
    KRAFT_VOTERS: ("KRAFT_VOTERS", VOTERS_RECORD),
}

# The version Kafka writes and reads each control value with (ControlRecordUtils
# *_CURRENT_VERSION, EndTransactionMarker.CURRENT_END_TXN_MARKER_VERSION).
KAFKA_VERSIONS: dict[int, int] = dict.fromkeys(CONTROL_TYPES, 0)


def body_version(ctype: int, version_field: int) -> int | None:
    """The schema version to decode a control value of type `ctype` whose
    leading Version field is `version_field`; None when Kafka rejects the value
    (a negative version, or an unknown type)."""
    entry = CONTROL_TYPES.get(ctype)
    if entry is None or entry[1] is None or version_field < 0:
        return None
    if entry[1].supports(version_field):
        return version_field
    return KAFKA_VERSIONS[ctype]
