"""The wire messages quorumctl speaks, each described once (quorumctl.schema).

Facts from Kafka's `clients/src/main/resources/common/message/*.json` (3.9):
field order, version ranges, flexible versions, nullability, tagged fields.
Our own definitions; `codec(MSG).encode(version, dict)` / `.decode(version, buf)`
do the work. Dict keys are Kafka's JSON names (camelCase).

`APIS` lists, per API key, the request/response descriptions and the range of
versions quorumctl itself implements; `negotiate()` picks the highest version
both sides support (what Kafka's clients do with the ApiVersions answer).
"""

from __future__ import annotations

from ..schema.spec import NULL, Field as F, Message

# -- headers ------------------------------------------------------------------
# RequestHeader v1 and v2 share their fields; v2 (flexible) adds a tagged-field
# section after ClientId. ClientId keeps the old int16 length in v2 too
# (`"flexibleVersions": "none"` on that field in Kafka's schema) so that any
# broker can read the header of an ApiVersions request of any version. We
# describe the fixed part as the non-flexible message below and the v2 tail
# as TAGGED_FIELDS (an empty flexible struct: just the tagged-field section).
REQUEST_HEADER = Message(
    "RequestHeader",
    "1",
    [
        F("RequestApiKey", "int16"),
        F("RequestApiVersion", "int16"),
        F("CorrelationId", "int32"),
        F("ClientId", "string", "1+", nullable="1+"),
    ],
    flexible=None,
    kind="header",
)

# ResponseHeader v0 is the correlation id alone; v1 adds the tagged section.
RESPONSE_HEADER = Message(
    "ResponseHeader",
    "0-1",
    [
        F("CorrelationId", "int32"),
    ],
    flexible="1+",
    kind="header",
)

TAGGED_FIELDS = Message("TaggedFields", "0", [], flexible="0+", kind="header")

# -- ApiVersions (18) -----------------------------------------------------------
API_VERSIONS_REQUEST = Message(
    "ApiVersionsRequest",
    "0-4",
    [
        F("ClientSoftwareName", "string", "3+"),
        F("ClientSoftwareVersion", "string", "3+"),
    ],
    flexible="3+",
    api_key=18,
    kind="request",
)

API_VERSIONS_RESPONSE = Message(
    "ApiVersionsResponse",
    "0-4",
    [
        F("ErrorCode", "int16"),
        F(
            "ApiKeys",
            "[]ApiVersion",
            fields=[
                F("ApiKey", "int16"),
                F("MinVersion", "int16"),
                F("MaxVersion", "int16"),
            ],
        ),
        F("ThrottleTimeMs", "int32", "1+"),
        F(
            "SupportedFeatures",
            "[]SupportedFeatureKey",
            "3+",
            tag=0,
            tagged="3+",
            fields=[
                F("Name", "string", "3+"),
                F("MinVersion", "int16", "3+"),
                F("MaxVersion", "int16", "3+"),
            ],
        ),
        F("FinalizedFeaturesEpoch", "int64", "3+", tag=1, tagged="3+", default=-1),
        F(
            "FinalizedFeatures",
            "[]FinalizedFeatureKey",
            "3+",
            tag=2,
            tagged="3+",
            fields=[
                F("Name", "string", "3+"),
                F("MaxVersionLevel", "int16", "3+"),
                F("MinVersionLevel", "int16", "3+"),
            ],
        ),
        F("ZkMigrationReady", "bool", "3+", tag=3, tagged="3+"),
    ],
    flexible="3+",
    api_key=18,
    kind="response",
)

# -- Metadata (3): only used for the cluster id when DescribeCluster is missing --
METADATA_REQUEST = Message(
    "MetadataRequest",
    "0-12",
    [
        F(
            "Topics",
            "[]MetadataRequestTopic",
            nullable="1+",
            fields=[
                F("TopicId", "uuid", "10+"),
                F("Name", "string", nullable="10+"),
            ],
        ),
        F("AllowAutoTopicCreation", "bool", "4+", default=True),
        F("IncludeClusterAuthorizedOperations", "bool", "8-10"),
        F("IncludeTopicAuthorizedOperations", "bool", "8+"),
    ],
    flexible="9+",
    api_key=3,
    kind="request",
)

METADATA_RESPONSE = Message(
    "MetadataResponse",
    "0-12",
    [
        F("ThrottleTimeMs", "int32", "3+"),
        F(
            "Brokers",
            "[]MetadataResponseBroker",
            fields=[
                F("NodeId", "int32"),
                F("Host", "string"),
                F("Port", "int32"),
                F("Rack", "string", "1+", nullable="1+", default=NULL),
            ],
        ),
        F("ClusterId", "string", "2+", nullable="2+", default=NULL),
        F("ControllerId", "int32", "1+", default=-1),
        F(
            "Topics",
            "[]MetadataResponseTopic",
            fields=[
                F("ErrorCode", "int16"),
                F("Name", "string", nullable="12+"),
                F("TopicId", "uuid", "10+"),
                F("IsInternal", "bool", "1+"),
                F(
                    "Partitions",
                    "[]MetadataResponsePartition",
                    fields=[
                        F("ErrorCode", "int16"),
                        F("PartitionIndex", "int32"),
                        F("LeaderId", "int32"),
                        F("LeaderEpoch", "int32", "7+", default=-1),
                        F("ReplicaNodes", "[]int32"),
                        F("IsrNodes", "[]int32"),
                        F("OfflineReplicas", "[]int32", "5+"),
                    ],
                ),
                F("TopicAuthorizedOperations", "int32", "8+", default=-2147483648),
            ],
        ),
        F("ClusterAuthorizedOperations", "int32", "8-10", default=-2147483648),
    ],
    flexible="9+",
    api_key=3,
    kind="response",
)

# -- SASL (17, 36) --------------------------------------------------------------
SASL_HANDSHAKE_REQUEST = Message(
    "SaslHandshakeRequest",
    "0-1",
    [
        F("Mechanism", "string"),
    ],
    flexible=None,
    api_key=17,
    kind="request",
)

SASL_HANDSHAKE_RESPONSE = Message(
    "SaslHandshakeResponse",
    "0-1",
    [
        F("ErrorCode", "int16"),
        F("Mechanisms", "[]string"),
    ],
    flexible=None,
    api_key=17,
    kind="response",
)

SASL_AUTHENTICATE_REQUEST = Message(
    "SaslAuthenticateRequest",
    "0-2",
    [
        F("AuthBytes", "bytes"),
    ],
    flexible="2+",
    api_key=36,
    kind="request",
)

SASL_AUTHENTICATE_RESPONSE = Message(
    "SaslAuthenticateResponse",
    "0-2",
    [
        F("ErrorCode", "int16"),
        F("ErrorMessage", "string", nullable="0+"),
        F("AuthBytes", "bytes"),
        F("SessionLifetimeMs", "int64", "1+"),
    ],
    flexible="2+",
    api_key=36,
    kind="response",
)

# -- DescribeQuorum (55): v1 adds timestamps (KIP-836), v2 directory ids,
#    error messages and voter endpoints (KIP-853). Flexible in every version.
_REPLICA_STATE = [
    F("ReplicaId", "int32"),
    F("ReplicaDirectoryId", "uuid", "2+"),
    F("LogEndOffset", "int64"),
    F("LastFetchTimestamp", "int64", "1+", default=-1),
    F("LastCaughtUpTimestamp", "int64", "1+", default=-1),
]

DESCRIBE_QUORUM_REQUEST = Message(
    "DescribeQuorumRequest",
    "0-2",
    [
        F(
            "Topics",
            "[]TopicData",
            fields=[
                F("TopicName", "string"),
                F(
                    "Partitions",
                    "[]PartitionData",
                    fields=[
                        F("PartitionIndex", "int32"),
                    ],
                ),
            ],
        ),
    ],
    flexible="0+",
    api_key=55,
    kind="request",
)

DESCRIBE_QUORUM_RESPONSE = Message(
    "DescribeQuorumResponse",
    "0-2",
    [
        F("ErrorCode", "int16"),
        F("ErrorMessage", "string", "2+", nullable="2+"),
        F(
            "Topics",
            "[]TopicData",
            fields=[
                F("TopicName", "string"),
                F(
                    "Partitions",
                    "[]PartitionData",
                    fields=[
                        F("PartitionIndex", "int32"),
                        F("ErrorCode", "int16"),
                        F("ErrorMessage", "string", "2+", nullable="2+"),
                        F("LeaderId", "int32"),
                        F("LeaderEpoch", "int32"),
                        F("HighWatermark", "int64"),
                        F("CurrentVoters", "[]ReplicaState", fields=_REPLICA_STATE),
                        F("Observers", "[]ReplicaState", fields=_REPLICA_STATE),
                    ],
                ),
            ],
        ),
        F(
            "Nodes",
            "[]Node",
            "2+",
            fields=[
                F("NodeId", "int32", "2+"),
                F(
                    "Listeners",
                    "[]Listener",
                    "2+",
                    fields=[
                        F("Name", "string", "2+"),
                        F("Host", "string", "2+"),
                        F("Port", "uint16", "2+"),
                    ],
                ),
            ],
        ),
    ],
    flexible="0+",
    api_key=55,
    kind="response",
)

# -- DescribeCluster (60): v1 adds EndpointType (KIP-919: 1 brokers, 2 controllers), v2
# (Kafka 4.0+, KIP-1073) IncludeFencedBrokers and each broker's IsFenced
DESCRIBE_CLUSTER_REQUEST = Message(
    "DescribeClusterRequest",
    "0-2",
    [
        F("IncludeClusterAuthorizedOperations", "bool"),
        F("EndpointType", "int8", "1+", default=1, about="1 brokers, 2 controllers (KIP-919)"),
        F("IncludeFencedBrokers", "bool", "2+"),
    ],
    flexible="0+",
    api_key=60,
    kind="request",
)

DESCRIBE_CLUSTER_RESPONSE = Message(
    "DescribeClusterResponse",
    "0-2",
    [
        F("ThrottleTimeMs", "int32"),
        F("ErrorCode", "int16"),
        F("ErrorMessage", "string", nullable="0+", default=NULL),
        F("EndpointType", "int8", "1+", default=1, about="1 brokers, 2 controllers (KIP-919)"),
        F("ClusterId", "string"),
        F("ControllerId", "int32", default=-1),
        F(
            "Brokers",
            "[]DescribeClusterBroker",
            fields=[
                F("BrokerId", "int32"),
                F("Host", "string"),
                F("Port", "int32"),
                F("Rack", "string", nullable="0+", default=NULL),
                F("IsFenced", "bool", "2+"),
            ],
        ),
        F("ClusterAuthorizedOperations", "int32", default=-2147483648),
    ],
    flexible="0+",
    api_key=60,
    kind="response",
)

# -- UpdateFeatures (57): v1 adds UpgradeType (1 upgrade, 2 safe downgrade, 3 unsafe
# downgrade; v0's AllowDowngrade is gone) and ValidateOnly; v2 answers with the top-level
# error alone (no per-feature Results). Kafka 4.3.0's schema.
UPDATE_FEATURES_REQUEST = Message(
    "UpdateFeaturesRequest",
    "0-2",
    [
        F("timeoutMs", "int32", default=60000),
        F(
            "FeatureUpdates",
            "[]FeatureUpdateKey",
            fields=[
                F("Feature", "string"),
                F("MaxVersionLevel", "int16"),
                F("AllowDowngrade", "bool", "0"),
                F("UpgradeType", "int8", "1+", default=1),
            ],
        ),
        F("ValidateOnly", "bool", "1+", default=False),
    ],
    flexible="0+",
    api_key=57,
    kind="request",
)

UPDATE_FEATURES_RESPONSE = Message(
    "UpdateFeaturesResponse",
    "0-2",
    [
        F("ThrottleTimeMs", "int32"),
        F("ErrorCode", "int16"),
        F("ErrorMessage", "string", nullable="0+"),
        F(
            "Results",
            "[]UpdatableFeatureResult",
            "0-1",
            ignorable=True,
            fields=[
                F("Feature", "string"),
                F("ErrorCode", "int16"),
                F("ErrorMessage", "string", nullable="0+"),
            ],
        ),
    ],
    flexible="0+",
    api_key=57,
    kind="response",
)

# -- AddRaftVoter (80) / RemoveRaftVoter (81), KIP-853 ----------------------------
# AddRaftVoter v1 (Kafka 4.3) adds AckWhenCommitted: true (the default, v0's behaviour) answers
# once the new voter set is committed, false once the leader wrote it. RemoveRaftVoter is v0 in 4.3.
ADD_RAFT_VOTER_REQUEST = Message(
    "AddRaftVoterRequest",
    "0-1",
    [
        F("ClusterId", "string", nullable="0+"),
        F("TimeoutMs", "int32"),
        F("VoterId", "int32"),
        F("VoterDirectoryId", "uuid"),
        F(
            "Listeners",
            "[]Listener",
            fields=[
                F("Name", "string"),
                F("Host", "string"),
                F("Port", "uint16"),
            ],
        ),
        F("AckWhenCommitted", "bool", "1+", default=True),
    ],
    flexible="0+",
    api_key=80,
    kind="request",
)

_VOTER_CHANGE_RESPONSE = [
    F("ThrottleTimeMs", "int32"),
    F("ErrorCode", "int16"),
    F("ErrorMessage", "string", nullable="0+"),
]

ADD_RAFT_VOTER_RESPONSE = Message(
    "AddRaftVoterResponse",
    "0-1",
    _VOTER_CHANGE_RESPONSE,  # v1 = v0
    flexible="0+",
    api_key=80,
    kind="response",
)

REMOVE_RAFT_VOTER_REQUEST = Message(
    "RemoveRaftVoterRequest",
    "0",
    [
        F("ClusterId", "string", nullable="0+"),
        F("VoterId", "int32"),
        F("VoterDirectoryId", "uuid"),
    ],
    flexible="0+",
    api_key=81,
    kind="request",
)

REMOVE_RAFT_VOTER_RESPONSE = Message(
    "RemoveRaftVoterResponse", "0", _VOTER_CHANGE_RESPONSE, flexible="0+", api_key=81, kind="response"
)

# KIP-1312 (Kafka 4.4): remove a controller's registration (the controller answers
# with the error; a broker forwards it). Kafka 4.4's kafka-cluster.sh unregister-controller
# and kafka-metadata-quorum.sh remove-controller --unregister send it.
UNREGISTER_CONTROLLER_REQUEST = Message(
    "UnregisterControllerRequest",
    "0",
    [
        F("ControllerId", "int32"),
    ],
    flexible="0+",
    api_key=94,
    kind="request",
)

UNREGISTER_CONTROLLER_RESPONSE = Message(
    "UnregisterControllerResponse",
    "0",
    [
        F("ThrottleTimeMs", "int32"),
        F("ErrorCode", "int16"),
        F("ErrorMessage", "string", nullable="0+"),
    ],
    flexible="0+",
    api_key=94,
    kind="response",
)


# -- DescribeConfigs (32), Kafka 4.3.0's v1-4: `topics describe`'s Configs column and
# min.insync.replicas (ConfigSource 5 = DEFAULT_CONFIG, what kafka-topics leaves out)
DESCRIBE_CONFIGS_REQUEST = Message(
    "DescribeConfigsRequest",
    "1-4",
    [
        F(
            "Resources",
            "[]DescribeConfigsResource",
            fields=[
                F("ResourceType", "int8"),
                F("ResourceName", "string"),
                F("ConfigurationKeys", "[]string", nullable="0+"),
            ],
        ),
        F("IncludeSynonyms", "bool", "1+", default=False),
        F("IncludeDocumentation", "bool", "3+", default=False),
    ],
    flexible="4+",
    api_key=32,
    kind="request",
)

DESCRIBE_CONFIGS_RESPONSE = Message(
    "DescribeConfigsResponse",
    "1-4",
    [
        F("ThrottleTimeMs", "int32"),
        F(
            "Results",
            "[]DescribeConfigsResult",
            fields=[
                F("ErrorCode", "int16"),
                F("ErrorMessage", "string", nullable="0+"),
                F("ResourceType", "int8"),
                F("ResourceName", "string"),
                F(
                    "Configs",
                    "[]DescribeConfigsResourceResult",
                    fields=[
                        F("Name", "string"),
                        F("Value", "string", nullable="0+"),
                        F("ReadOnly", "bool"),
                        F("ConfigSource", "int8", "1+", default=-1, ignorable=True),
                        F("IsSensitive", "bool"),
                        F(
                            "Synonyms",
                            "[]DescribeConfigsSynonym",
                            "1+",
                            ignorable=True,
                            fields=[
                                F("Name", "string", "1+"),
                                F("Value", "string", "1+", nullable="0+"),
                                F("Source", "int8", "1+"),
                            ],
                        ),
                        F("ConfigType", "int8", "3+", default=0, ignorable=True),
                        F("Documentation", "string", "3+", nullable="0+", ignorable=True),
                    ],
                ),
            ],
        ),
    ],
    flexible="4+",
    api_key=32,
    kind="response",
)

# -- ListPartitionReassignments (46), v0: kafka-topics --describe's Adding/Removing Replicas
LIST_PARTITION_REASSIGNMENTS_REQUEST = Message(
    "ListPartitionReassignmentsRequest",
    "0",
    [
        F("TimeoutMs", "int32", default=60000),
        F(
            "Topics",
            "[]ListPartitionReassignmentsTopics",
            nullable="0+",
            default=NULL,
            fields=[
                F("Name", "string"),
                F("PartitionIndexes", "[]int32"),
            ],
        ),
    ],
    flexible="0+",
    api_key=46,
    kind="request",
)

LIST_PARTITION_REASSIGNMENTS_RESPONSE = Message(
    "ListPartitionReassignmentsResponse",
    "0",
    [
        F("ThrottleTimeMs", "int32"),
        F("ErrorCode", "int16"),
        F("ErrorMessage", "string", nullable="0+"),
        F(
            "Topics",
            "[]OngoingTopicReassignment",
            fields=[
                F("Name", "string"),
                F(
                    "Partitions",
                    "[]OngoingPartitionReassignment",
                    fields=[
                        F("PartitionIndex", "int32"),
                        F("Replicas", "[]int32"),
                        F("AddingReplicas", "[]int32"),
                        F("RemovingReplicas", "[]int32"),
                    ],
                ),
            ],
        ),
    ],
    flexible="0+",
    api_key=46,
    kind="response",
)

# -- UnregisterBroker (64), v0 (KIP-919's kafka-cluster unregister) ---------------------------
UNREGISTER_BROKER_REQUEST = Message(
    "UnregisterBrokerRequest",
    "0",
    [
        F("BrokerId", "int32"),
    ],
    flexible="0+",
    api_key=64,
    kind="request",
)

UNREGISTER_BROKER_RESPONSE = Message(
    "UnregisterBrokerResponse",
    "0",
    [
        F("ThrottleTimeMs", "int32"),
        F("ErrorCode", "int16"),
        F("ErrorMessage", "string", nullable="0+"),
    ],
    flexible="0+",
    api_key=64,
    kind="response",
)

# -- DescribeTopicPartitions (75), v0 (KIP-966): the partitions of topics, paged by a
# cursor (ResponsePartitionLimit per answer); an empty topic list means every topic
_CURSOR = [F("TopicName", "string"), F("PartitionIndex", "int32")]

DESCRIBE_TOPIC_PARTITIONS_REQUEST = Message(
    "DescribeTopicPartitionsRequest",
    "0",
    [
        F("Topics", "[]TopicRequest", fields=[F("Name", "string")]),
        F("ResponsePartitionLimit", "int32", default=2000),
        F("Cursor", "Cursor", nullable="0+", default=NULL, fields=_CURSOR),
    ],
    flexible="0+",
    api_key=75,
    kind="request",
)

DESCRIBE_TOPIC_PARTITIONS_RESPONSE = Message(
    "DescribeTopicPartitionsResponse",
    "0",
    [
        F("ThrottleTimeMs", "int32", ignorable=True),
        F(
            "Topics",
            "[]DescribeTopicPartitionsResponseTopic",
            fields=[
                F("ErrorCode", "int16"),
                F("Name", "string", nullable="0+"),
                F("TopicId", "uuid", ignorable=True),
                F("IsInternal", "bool", default=False, ignorable=True),
                F(
                    "Partitions",
                    "[]DescribeTopicPartitionsResponsePartition",
                    fields=[
                        F("ErrorCode", "int16"),
                        F("PartitionIndex", "int32"),
                        F("LeaderId", "int32"),
                        F("LeaderEpoch", "int32", default=-1, ignorable=True),
                        F("ReplicaNodes", "[]int32"),
                        F("IsrNodes", "[]int32"),
                        F("EligibleLeaderReplicas", "[]int32", nullable="0+", default=NULL),
                        F("LastKnownElr", "[]int32", nullable="0+", default=NULL),
                        F("OfflineReplicas", "[]int32", ignorable=True),
                    ],
                ),
                F("TopicAuthorizedOperations", "int32", default=-2147483648),
            ],
        ),
        F("NextCursor", "Cursor", nullable="0+", default=NULL, fields=_CURSOR),
    ],
    flexible="0+",
    api_key=75,
    kind="response",
)


# -- Fetch (1) and FetchSnapshot (59), Kafka 4.3.0's: what a KRaft observer sends the quorum's
# leader to read __cluster_metadata (KafkaRaftClient.buildFetchRequest, RaftUtil's singleton
# requests); with ReplicaId -1 the leader keeps no state for the fetcher (LeaderState.updateReplicaState)
_LEADER_ID_AND_EPOCH = [
    F("LeaderId", "int32", "12+", default=-1),
    F("LeaderEpoch", "int32", "12+", default=-1),
]

FETCH_REQUEST = Message(
    "FetchRequest",
    "4-18",
    [
        F("ClusterId", "string", "12+", nullable="12+", default=NULL, tag=0, tagged="12+", ignorable=True),
        F("ReplicaId", "int32", "0-14", default=-1),
        F(
            "ReplicaState",
            "ReplicaState",
            "15+",
            tag=1,
            tagged="15+",
            fields=[
                F("ReplicaId", "int32", "15+", default=-1),
                F("ReplicaEpoch", "int64", "15+", default=-1),
            ],
        ),
        F("MaxWaitMs", "int32"),
        F("MinBytes", "int32"),
        F("MaxBytes", "int32", "3+", default=0x7FFFFFFF, ignorable=True),
        F("IsolationLevel", "int8", "4+", default=0, ignorable=True),
        F("SessionId", "int32", "7+", default=0, ignorable=True),
        F("SessionEpoch", "int32", "7+", default=-1, ignorable=True),
        F(
            "Topics",
            "[]FetchTopic",
            fields=[
                F("Topic", "string", "0-12", ignorable=True),
                F("TopicId", "uuid", "13+", ignorable=True),
                F(
                    "Partitions",
                    "[]FetchPartition",
                    fields=[
                        F("Partition", "int32"),
                        F("CurrentLeaderEpoch", "int32", "9+", default=-1, ignorable=True),
                        F("FetchOffset", "int64"),
                        F("LastFetchedEpoch", "int32", "12+", default=-1),
                        F("LogStartOffset", "int64", "5+", default=-1, ignorable=True),
                        F("PartitionMaxBytes", "int32"),
                        F("ReplicaDirectoryId", "uuid", "17+", tag=0, tagged="17+", ignorable=True),
                        F(
                            "HighWatermark",
                            "int64",
                            "18+",
                            default=0x7FFFFFFFFFFFFFFF,
                            tag=1,
                            tagged="18+",
                            ignorable=True,
                        ),
                    ],
                ),
            ],
        ),
        F(
            "ForgottenTopicsData",
            "[]ForgottenTopic",
            "7+",
            fields=[
                F("Topic", "string", "7-12", ignorable=True),
                F("TopicId", "uuid", "13+", ignorable=True),
                F("Partitions", "[]int32", "7+"),
            ],
        ),
        F("RackId", "string", "11+", default="", ignorable=True),
    ],
    flexible="12+",
    api_key=1,
    kind="request",
)

FETCH_RESPONSE = Message(
    "FetchResponse",
    "4-18",
    [
        F("ThrottleTimeMs", "int32", "1+", ignorable=True),
        F("ErrorCode", "int16", "7+", ignorable=True),
        F("SessionId", "int32", "7+", default=0),
        F(
            "Responses",
            "[]FetchableTopicResponse",
            fields=[
                F("Topic", "string", "0-12", ignorable=True),
                F("TopicId", "uuid", "13+", ignorable=True),
                F(
                    "Partitions",
                    "[]PartitionData",
                    fields=[
                        F("PartitionIndex", "int32"),
                        F("ErrorCode", "int16"),
                        F("HighWatermark", "int64"),
                        F("LastStableOffset", "int64", "4+", default=-1, ignorable=True),
                        F("LogStartOffset", "int64", "5+", default=-1, ignorable=True),
                        F(
                            "DivergingEpoch",
                            "EpochEndOffset",
                            "12+",
                            tag=0,
                            tagged="12+",
                            fields=[
                                F("Epoch", "int32", "12+", default=-1),
                                F("EndOffset", "int64", "12+", default=-1),
                            ],
                        ),
                        F("CurrentLeader", "LeaderIdAndEpoch", "12+", tag=1, tagged="12+", fields=_LEADER_ID_AND_EPOCH),
                        F(
                            "SnapshotId",
                            "SnapshotId",
                            "12+",
                            tag=2,
                            tagged="12+",
                            fields=[
                                F("EndOffset", "int64", default=-1),
                                F("Epoch", "int32", default=-1),
                            ],
                        ),
                        F(
                            "AbortedTransactions",
                            "[]AbortedTransaction",
                            "4+",
                            nullable="4+",
                            ignorable=True,
                            fields=[
                                F("ProducerId", "int64", "4+"),
                                F("FirstOffset", "int64", "4+"),
                            ],
                        ),
                        F("PreferredReadReplica", "int32", "11+", default=-1),
                        F("Records", "records", nullable="0+"),
                    ],
                ),
            ],
        ),
        F(
            "NodeEndpoints",
            "[]NodeEndpoint",
            "16+",
            tag=0,
            tagged="16+",
            fields=[
                F("NodeId", "int32", "16+"),
                F("Host", "string", "16+"),
                F("Port", "int32", "16+"),
                F("Rack", "string", "16+", nullable="16+", default=NULL),
            ],
        ),
    ],
    flexible="12+",
    api_key=1,
    kind="response",
)

FETCH_SNAPSHOT_REQUEST = Message(
    "FetchSnapshotRequest",
    "0-1",
    [
        F("ClusterId", "string", nullable="0+", default=NULL, tag=0, tagged="0+"),
        F("ReplicaId", "int32", default=-1),
        F("MaxBytes", "int32", default=0x7FFFFFFF),
        F(
            "Topics",
            "[]TopicSnapshot",
            fields=[
                F("Name", "string"),
                F(
                    "Partitions",
                    "[]PartitionSnapshot",
                    fields=[
                        F("Partition", "int32"),
                        F("CurrentLeaderEpoch", "int32"),
                        F("SnapshotId", "SnapshotId", fields=[F("EndOffset", "int64"), F("Epoch", "int32")]),
                        F("Position", "int64"),
                        F("ReplicaDirectoryId", "uuid", "1+", tag=0, tagged="1+", ignorable=True),
                    ],
                ),
            ],
        ),
    ],
    flexible="0+",
    api_key=59,
    kind="request",
)

FETCH_SNAPSHOT_RESPONSE = Message(
    "FetchSnapshotResponse",
    "0-1",
    [
        F("ThrottleTimeMs", "int32", ignorable=True),
        F("ErrorCode", "int16"),
        F(
            "Topics",
            "[]TopicSnapshot",
            fields=[
                F("Name", "string"),
                F(
                    "Partitions",
                    "[]PartitionSnapshot",
                    fields=[
                        F("Index", "int32"),
                        F("ErrorCode", "int16"),
                        F("SnapshotId", "SnapshotId", fields=[F("EndOffset", "int64"), F("Epoch", "int32")]),
                        F(
                            "CurrentLeader",
                            "LeaderIdAndEpoch",
                            tag=0,
                            tagged="0+",
                            fields=[F("LeaderId", "int32"), F("LeaderEpoch", "int32")],
                        ),
                        F("Size", "int64"),
                        F("Position", "int64"),
                        F("UnalignedRecords", "records"),
                    ],
                ),
            ],
        ),
        F(
            "NodeEndpoints",
            "[]NodeEndpoint",
            "1+",
            tag=0,
            tagged="1+",
            fields=[
                F("NodeId", "int32", "1+"),
                F("Host", "string", "1+"),
                F("Port", "uint16", "1+"),
            ],
        ),
    ],
    flexible="0+",
    api_key=59,
    kind="response",
)


# -- the API table ------------------------------------------------------------------


class Api:
    """One API: its key, name, messages and the versions quorumctl implements."""

    __slots__ = ("key", "name", "request", "response", "lo", "hi")

    def __init__(self, key, name, request, response, lo, hi):
        self.key, self.name, self.request, self.response = key, name, request, response
        self.lo, self.hi = lo, hi

    def request_header_version(self, version: int) -> int:
        return 2 if self.request.flexible_in(version) else 1

    def response_header_version(self, version: int) -> int:
        # ApiVersions answers always use header v0, so that a client that
        # sent a version the server does not know can still read the answer.
        if self.key == API_VERSIONS:
            return 0
        return 1 if self.response.flexible_in(version) else 0


FETCH = 1
METADATA = 3
DESCRIBE_CONFIGS = 32
LIST_PARTITION_REASSIGNMENTS = 46
UNREGISTER_BROKER = 64
DESCRIBE_TOPIC_PARTITIONS = 75
SASL_HANDSHAKE = 17
API_VERSIONS = 18
SASL_AUTHENTICATE = 36
DESCRIBE_QUORUM = 55
UPDATE_FEATURES = 57
DESCRIBE_CLUSTER = 60
FETCH_SNAPSHOT = 59
ADD_RAFT_VOTER = 80
REMOVE_RAFT_VOTER = 81
UNREGISTER_CONTROLLER = 94

APIS: dict[int, Api] = {
    a.key: a
    for a in (
        Api(FETCH, "Fetch", FETCH_REQUEST, FETCH_RESPONSE, 13, 18),
        Api(FETCH_SNAPSHOT, "FetchSnapshot", FETCH_SNAPSHOT_REQUEST, FETCH_SNAPSHOT_RESPONSE, 0, 1),
        Api(METADATA, "Metadata", METADATA_REQUEST, METADATA_RESPONSE, 0, 12),
        Api(SASL_HANDSHAKE, "SaslHandshake", SASL_HANDSHAKE_REQUEST, SASL_HANDSHAKE_RESPONSE, 0, 1),
        Api(API_VERSIONS, "ApiVersions", API_VERSIONS_REQUEST, API_VERSIONS_RESPONSE, 0, 4),
        Api(SASL_AUTHENTICATE, "SaslAuthenticate", SASL_AUTHENTICATE_REQUEST, SASL_AUTHENTICATE_RESPONSE, 0, 2),
        Api(DESCRIBE_QUORUM, "DescribeQuorum", DESCRIBE_QUORUM_REQUEST, DESCRIBE_QUORUM_RESPONSE, 0, 2),
        Api(UPDATE_FEATURES, "UpdateFeatures", UPDATE_FEATURES_REQUEST, UPDATE_FEATURES_RESPONSE, 1, 2),
        Api(DESCRIBE_CLUSTER, "DescribeCluster", DESCRIBE_CLUSTER_REQUEST, DESCRIBE_CLUSTER_RESPONSE, 0, 2),
        Api(ADD_RAFT_VOTER, "AddRaftVoter", ADD_RAFT_VOTER_REQUEST, ADD_RAFT_VOTER_RESPONSE, 0, 1),
        Api(REMOVE_RAFT_VOTER, "RemoveRaftVoter", REMOVE_RAFT_VOTER_REQUEST, REMOVE_RAFT_VOTER_RESPONSE, 0, 0),
        Api(DESCRIBE_CONFIGS, "DescribeConfigs", DESCRIBE_CONFIGS_REQUEST, DESCRIBE_CONFIGS_RESPONSE, 1, 4),
        Api(
            LIST_PARTITION_REASSIGNMENTS,
            "ListPartitionReassignments",
            LIST_PARTITION_REASSIGNMENTS_REQUEST,
            LIST_PARTITION_REASSIGNMENTS_RESPONSE,
            0,
            0,
        ),
        Api(UNREGISTER_BROKER, "UnregisterBroker", UNREGISTER_BROKER_REQUEST, UNREGISTER_BROKER_RESPONSE, 0, 0),
        Api(
            DESCRIBE_TOPIC_PARTITIONS,
            "DescribeTopicPartitions",
            DESCRIBE_TOPIC_PARTITIONS_REQUEST,
            DESCRIBE_TOPIC_PARTITIONS_RESPONSE,
            0,
            0,
        ),
        Api(
            UNREGISTER_CONTROLLER,
            "UnregisterController",
            UNREGISTER_CONTROLLER_REQUEST,
            UNREGISTER_CONTROLLER_RESPONSE,
            0,
            0,
        ),
    )
}


def api_name(key: int) -> str:
    api = APIS.get(key)
    return api.name if api else f"API {key}"


def negotiate(
    key: int, server_range: tuple[int, int] | None, lo: int | None = None, hi: int | None = None
) -> int | None:
    """The highest version of API `key` that both we (optionally narrowed to
    lo..hi) and the server (`server_range` from its ApiVersions answer)
    support; None when the ranges do not overlap or the server lacks the API."""
    if server_range is None:
        return None
    api = APIS[key]
    ours_lo = api.lo if lo is None else max(api.lo, lo)
    ours_hi = api.hi if hi is None else min(api.hi, hi)
    top = min(ours_hi, server_range[1])
    if top < max(ours_lo, server_range[0]):
        return None
    return top
