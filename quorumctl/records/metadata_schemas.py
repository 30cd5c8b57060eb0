"""Every KRaft metadata record type, declared once with the schema DSL.

Facts come from Kafka's `metadata/src/main/resources/common/metadata/*.json`
(trunk): the git mirror's trunk of Oct 2024 for everything it has, plus what
trunk added later (ClearElrRecord 28 in 4.0, CordonedLogDirs in 4.3 (KIP-1066),
UnregisterControllerRecord 29 in 4.4 (KIP-1312)). Every metadata record is
flexible from v0. Field names are Kafka's; decoded dicts use Kafka's camelCase
JSON names, so they print exactly as `kafka-dump-log --cluster-metadata-decoder`.

Unused api keys: 6 (AccessControlRecord, removed 2023), 13 (never used),
16 (RemoveFeatureLevelRecord, removed 2022).

Importing this module only builds small description objects; the codec
compiles a decoder per (record, version) on first use.
"""

from __future__ import annotations

from ..schema.spec import NULL, Field as F, Message


def _meta(api_key: int, name: str, valid: str, fields: list[F]) -> Message:
    return Message(name, valid, fields, flexible="0+", api_key=api_key, kind="metadata")


def _endpoints() -> list[F]:
    # BrokerEndpoint / ControllerEndpoint (Name is the map key in Kafka's generated class)
    return [
        F("Name", "string"),
        F("Host", "string"),
        F("Port", "uint16"),
        F("SecurityProtocol", "int16"),
    ]


def _features() -> list[F]:
    # BrokerFeature / ControllerFeature: supported range of one feature
    return [
        F("Name", "string"),
        F("MinSupportedVersion", "int16"),
        F("MaxSupportedVersion", "int16"),
    ]


# v1 InControlledShutdown, v2 IsMigratingZkBroker, v3 LogDirs (KIP-858),
# v4 CordonedLogDirs (KIP-1066, Kafka 4.3).
REGISTER_BROKER = _meta(
    0,
    "RegisterBrokerRecord",
    "0-4",
    [
        F("BrokerId", "int32"),
        F(
            "IsMigratingZkBroker",
            "bool",
            "2+",
            default=False,
            about="a ZooKeeper-mode broker registering during a ZK-to-KRaft migration",
        ),
        F("IncarnationId", "uuid", about="random per process start: tells a restarted node from the old one"),
        F("BrokerEpoch", "int64"),
        F("EndPoints", "[]BrokerEndpoint", fields=_endpoints()),
        F("Features", "[]BrokerFeature", fields=_features()),
        F("Rack", "string", nullable="0+"),
        F("Fenced", "bool", default=True),
        F("InControlledShutdown", "bool", "1+", default=False),
        F("LogDirs", "[]uuid", "3+", tagged="3+", tag=0),
        # Nullable here on purpose: see CORDONED_NOTE below.
        F("CordonedLogDirs", "[]uuid", "4+", nullable="4+", tagged="4+", tag=1, default=NULL),
    ],
)

UNREGISTER_BROKER = _meta(
    1,
    "UnregisterBrokerRecord",
    "0",
    [
        F("BrokerId", "int32"),
        F("BrokerEpoch", "int64"),
    ],
)

TOPIC = _meta(
    2,
    "TopicRecord",
    "0",
    [
        F("Name", "string"),
        F("TopicId", "uuid"),
    ],
)

# v1 Directories (KIP-858), v2 EligibleLeaderReplicas + LastKnownElr (KIP-966).
PARTITION = _meta(
    3,
    "PartitionRecord",
    "0-2",
    [
        F("PartitionId", "int32", default=-1),
        F("TopicId", "uuid"),
        F("Replicas", "[]int32"),
        F("Isr", "[]int32"),
        F("RemovingReplicas", "[]int32"),
        F("AddingReplicas", "[]int32"),
        F("Leader", "int32", default=-1),
        F(
            "LeaderRecoveryState",
            "int8",
            tagged="0+",
            tag=0,
            default=0,
            about="0 recovered, 1 recovering (the leader was elected uncleanly, KIP-704)",
        ),
        F("LeaderEpoch", "int32", default=-1),
        F("PartitionEpoch", "int32", default=-1),
        F("Directories", "[]uuid", "1+"),
        F(
            "EligibleLeaderReplicas",
            "[]int32",
            "2+",
            nullable="2+",
            tagged="2+",
            tag=1,
            default=NULL,
            about="replicas out of the ISR that may still be elected cleanly (ELR, KIP-966)",
        ),
        F(
            "LastKnownElr",
            "[]int32",
            "2+",
            nullable="2+",
            tagged="2+",
            tag=2,
            default=NULL,
            about="the ELR members last known when the ELR became empty (KIP-966)",
        ),
    ],
)

CONFIG = _meta(
    4,
    "ConfigRecord",
    "0",
    [
        F("ResourceType", "int8"),
        F("ResourceName", "string"),
        F("Name", "string"),
        F("Value", "string", nullable="0+"),  # null deletes the config
    ],
)

# A delta: a tagged field is present only when it changed (Leader -2 = unchanged,
# -1 = no leader). Tags are not in declaration order (Directories is tag 8).
PARTITION_CHANGE = _meta(
    5,
    "PartitionChangeRecord",
    "0-2",
    [
        F("PartitionId", "int32", default=-1),
        F("TopicId", "uuid"),
        F("Isr", "[]int32", nullable="0+", tagged="0+", tag=0, default=NULL),
        F("Leader", "int32", tagged="0+", tag=1, default=-2),
        F("Replicas", "[]int32", nullable="0+", tagged="0+", tag=2, default=NULL),
        F("RemovingReplicas", "[]int32", nullable="0+", tagged="0+", tag=3, default=NULL),
        F("AddingReplicas", "[]int32", nullable="0+", tagged="0+", tag=4, default=NULL),
        F(
            "LeaderRecoveryState",
            "int8",
            tagged="0+",
            tag=5,
            default=-1,
            about="-1 unchanged, 0 recovered, 1 recovering (KIP-704)",
        ),
        F("Directories", "[]uuid", "1+", nullable="1+", tagged="1+", tag=8, default=NULL),
        F("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tagged="2+", tag=6, default=NULL),
        F("LastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=7, default=NULL),
    ],
)

FENCE_BROKER = _meta(
    7,
    "FenceBrokerRecord",
    "0",
    [
        F("Id", "int32"),
        F("Epoch", "int64"),
    ],
)

UNFENCE_BROKER = _meta(
    8,
    "UnfenceBrokerRecord",
    "0",
    [
        F("Id", "int32"),
        F("Epoch", "int64"),
    ],
)

REMOVE_TOPIC = _meta(
    9,
    "RemoveTopicRecord",
    "0",
    [
        F("TopicId", "uuid"),
    ],
)

DELEGATION_TOKEN = _meta(
    10,
    "DelegationTokenRecord",
    "0",
    [
        F("Owner", "string"),
        F("Requester", "string"),
        F("Renewers", "[]string"),
        F("IssueTimestamp", "int64"),
        F("MaxTimestamp", "int64"),
        F("ExpirationTimestamp", "int64"),
        F("TokenId", "string"),
    ],
)

# Mechanism: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512.
USER_SCRAM_CREDENTIAL = _meta(
    11,
    "UserScramCredentialRecord",
    "0",
    [
        F("Name", "string"),
        F("Mechanism", "int8"),
        F("Salt", "bytes"),
        F("StoredKey", "bytes"),
        F("ServerKey", "bytes"),
        F("Iterations", "int32"),
    ],
)

# Stays at v0 forever: new logs begin with it and old readers must parse it.
FEATURE_LEVEL = _meta(
    12,
    "FeatureLevelRecord",
    "0",
    [
        F("Name", "string"),
        F("FeatureLevel", "int16"),
    ],
)

# Kafka 3.0-3.2 wrote version 0 with another layout; 3.3 (KIP-778) replaced the
# min/max pair by one level without a new version. Not in METADATA_RECORDS:
# decode_metadata falls back to it when a v0 value does not fit the 3.3 layout.
FEATURE_LEVEL_PRE_3_3 = Message(
    "FeatureLevelRecord",
    "0",
    [
        F("Name", "string"),
        F("MinFeatureLevel", "int16"),
        F("MaxFeatureLevel", "int16"),
    ],
    flexible="0+",
    api_key=12,
    kind="metadata",
)

CLIENT_QUOTA = _meta(
    14,
    "ClientQuotaRecord",
    "0",
    [
        F(
            "Entity",
            "[]EntityData",
            fields=[
                F("EntityType", "string"),
                F("EntityName", "string", nullable="0+"),  # null = the default entity
            ],
        ),
        F("Key", "string"),
        F("Value", "float64"),
        F("Remove", "bool"),
    ],
)

PRODUCER_IDS = _meta(
    15,
    "ProducerIdsRecord",
    "0",
    [
        F("BrokerId", "int32"),
        F("BrokerEpoch", "int64", default=-1),
        F("NextProducerId", "int64"),
    ],
)

# Fenced / InControlledShutdown are int8 deltas: -1 unfenced, 0 no change, 1 fenced.
# v1 InControlledShutdown, v2 LogDirs, v3 CordonedLogDirs (KIP-1066, Kafka 4.3).
BROKER_REGISTRATION_CHANGE = _meta(
    17,
    "BrokerRegistrationChangeRecord",
    "0-3",
    [
        F("BrokerId", "int32"),
        F("BrokerEpoch", "int64"),
        F("Fenced", "int8", tagged="0+", tag=0),
        F("InControlledShutdown", "int8", "1+", tagged="1+", tag=1),
        F("LogDirs", "[]uuid", "2+", tagged="2+", tag=2),
        F("CordonedLogDirs", "[]uuid", "3+", nullable="3+", tagged="3+", tag=3, default=NULL),
    ],
)

ACCESS_CONTROL_ENTRY = _meta(
    18,
    "AccessControlEntryRecord",
    "0",
    [
        F("Id", "uuid"),
        F("ResourceType", "int8"),
        F("ResourceName", "string"),
        F("PatternType", "int8"),
        F("Principal", "string"),
        F("Host", "string"),
        F("Operation", "int8"),
        F("PermissionType", "int8"),
    ],
)

REMOVE_ACCESS_CONTROL_ENTRY = _meta(
    19,
    "RemoveAccessControlEntryRecord",
    "0",
    [
        F("Id", "uuid"),
    ],
)

NO_OP = _meta(20, "NoOpRecord", "0", [])

# The schema file is ZkMigrationRecord.json but the message is ZkMigrationStateRecord.
# Values since 3.5: 0 None, 1 Migration, 2 PreMigration, 3 PostMigration.
ZK_MIGRATION_STATE = _meta(
    21,
    "ZkMigrationStateRecord",
    "0",
    [
        F("ZkMigrationState", "int8", about="0 None, 1 Migration, 2 PreMigration, 3 PostMigration"),
    ],
)

REMOVE_USER_SCRAM_CREDENTIAL = _meta(
    22,
    "RemoveUserScramCredentialRecord",
    "0",
    [
        F("Name", "string"),
        F("Mechanism", "int8"),
    ],
)

BEGIN_TRANSACTION = _meta(
    23,
    "BeginTransactionRecord",
    "0",
    [
        F("Name", "string", nullable="0+", tagged="0+", tag=0, default=NULL),
    ],
)

END_TRANSACTION = _meta(24, "EndTransactionRecord", "0", [])

ABORT_TRANSACTION = _meta(
    25,
    "AbortTransactionRecord",
    "0",
    [
        F("Reason", "string", nullable="0+", tagged="0+", tag=0, default=NULL),
    ],
)

REMOVE_DELEGATION_TOKEN = _meta(
    26,
    "RemoveDelegationTokenRecord",
    "0",
    [
        F("TokenId", "string"),
    ],
)

REGISTER_CONTROLLER = _meta(
    27,
    "RegisterControllerRecord",
    "0",
    [
        F("ControllerId", "int32"),
        F("IncarnationId", "uuid", about="random per process start: tells a restarted node from the old one"),
        F("ZkMigrationReady", "bool"),
        F("EndPoints", "[]ControllerEndpoint", fields=_endpoints()),
        F("Features", "[]ControllerFeature", fields=_features()),
    ],
)

# Empty TopicName clears the ELRs of every topic.
CLEAR_ELR = _meta(
    28,
    "ClearElrRecord",
    "0",
    [
        F("TopicName", "string"),
    ],
)

UNREGISTER_CONTROLLER = _meta(
    29,
    "UnregisterControllerRecord",
    "0",
    [
        F("ControllerId", "int32"),
    ],
)

CORDONED_NOTE = (
    "CordonedLogDirs (RegisterBrokerRecord v4 tag 1, BrokerRegistrationChangeRecord v3 "
    "tag 3) is declared nullable with a null default: Kafka 4.3 descriptions call it "
    "'tagged nullable', an earlier KIP-1066 branch had it non-nullable; a nullable "
    "declaration decodes both forms."
)

METADATA_RECORDS: dict[int, Message] = {
    m.api_key: m
    for m in (
        REGISTER_BROKER,
        UNREGISTER_BROKER,
        TOPIC,
        PARTITION,
        CONFIG,
        PARTITION_CHANGE,
        FENCE_BROKER,
        UNFENCE_BROKER,
        REMOVE_TOPIC,
        DELEGATION_TOKEN,
        USER_SCRAM_CREDENTIAL,
        FEATURE_LEVEL,
        CLIENT_QUOTA,
        PRODUCER_IDS,
        BROKER_REGISTRATION_CHANGE,
        ACCESS_CONTROL_ENTRY,
        REMOVE_ACCESS_CONTROL_ENTRY,
        NO_OP,
        ZK_MIGRATION_STATE,
        REMOVE_USER_SCRAM_CREDENTIAL,
        BEGIN_TRANSACTION,
        END_TRANSACTION,
        ABORT_TRANSACTION,
        REMOVE_DELEGATION_TOKEN,
        REGISTER_CONTROLLER,
        CLEAR_ELR,
        UNREGISTER_CONTROLLER,
    )
    if m.api_key is not None
}  # (every one has its api key)

# Class-style names ("PartitionRecord"), as used in statistics ("PartitionRecord v1").
CLASS_NAMES: dict[int, str] = {k: m.name for k, m in METADATA_RECORDS.items()}

API_KEYS_BY_CLASS_NAME: dict[str, int] = {v: k for k, v in CLASS_NAMES.items()}


def enum_name(message_name: str) -> str:
    """Kafka's MessageGenerator.toSnakeCase(name).toUpperCase(): an underscore
    before each capital that follows a lower-case letter or digit."""
    out = []
    prev_cap = True
    for c in message_name:
        if c.isupper():
            if not prev_cap:
                out.append("_")
            out.append(c.lower())
            prev_cap = True
        else:
            out.append(c)
            prev_cap = False
    return "".join(out).upper()


# Kafka's MetadataRecordType enum names, the "type" in dump-log JSON, derived the
# way Kafka's generator (MetadataRecordTypeGenerator) derives them.
TYPE_NAMES: dict[int, str] = {k: enum_name(m.name) for k, m in METADATA_RECORDS.items()}
API_KEYS_BY_TYPE_NAME: dict[str, int] = {v: k for k, v in TYPE_NAMES.items()}
