"""Kafka protocol error codes: names, which ones are worth retrying, and the
exception that carries one out of the client.

Codes and names are the protocol's (Kafka `Errors`); the short hints are ours.
"""

from __future__ import annotations

from ..errors import ClusterError

NONE = 0
UNKNOWN_SERVER_ERROR = -1
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
BROKER_NOT_AVAILABLE = 8
NETWORK_EXCEPTION = 13
CLUSTER_AUTHORIZATION_FAILED = 31
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
UNSUPPORTED_VERSION = 35
NOT_CONTROLLER = 41
INVALID_REQUEST = 42
SASL_AUTHENTICATION_FAILED = 58
THROTTLING_QUOTA_EXCEEDED = 89
INVALID_UPDATE_VERSION = 95
INCONSISTENT_CLUSTER_ID = 104
BROKER_ID_NOT_REGISTERED = 102
MISMATCHED_ENDPOINT_TYPE = 114
UNSUPPORTED_ENDPOINT_TYPE = 115
DUPLICATE_VOTER = 126
VOTER_NOT_FOUND = 127
CONTROLLER_ID_NOT_REGISTERED = 136  # Kafka 4.4 (KIP-1312): UnregisterController for an id with no registration

# The codes quorumctl acts on are the constants above; NAMES adds the names of the
# others it may be answered with (for messages), each code written once.
NAMES = {code: name for name, code in dict(globals()).items() if name.isupper() and isinstance(code, int)}
NAMES.update(
    {
        1: "OFFSET_OUT_OF_RANGE",
        2: "CORRUPT_MESSAGE",
        4: "INVALID_FETCH_SIZE",
        9: "REPLICA_NOT_AVAILABLE",
        10: "MESSAGE_TOO_LARGE",
        11: "STALE_CONTROLLER_EPOCH",
        12: "OFFSET_METADATA_TOO_LARGE",
        14: "COORDINATOR_LOAD_IN_PROGRESS",
        15: "COORDINATOR_NOT_AVAILABLE",
        16: "NOT_COORDINATOR",
        17: "INVALID_TOPIC_EXCEPTION",
        29: "TOPIC_AUTHORIZATION_FAILED",
        30: "GROUP_AUTHORIZATION_FAILED",
        32: "INVALID_TIMESTAMP",
        40: "INVALID_CONFIG",
        44: "POLICY_VIOLATION",
        54: "SECURITY_DISABLED",
        55: "OPERATION_NOT_ATTEMPTED",
        56: "KAFKA_STORAGE_ERROR",
        74: "FENCED_LEADER_EPOCH",
        75: "UNKNOWN_LEADER_EPOCH",
        94: "INCONSISTENT_VOTER_SET",
        96: "FEATURE_UPDATE_FAILED",
        97: "PRINCIPAL_DESERIALIZATION_FAILURE",
        116: "UNKNOWN_CONTROLLER_ID",
        125: "INVALID_VOTER_KEY",
    }
)

# Transient conditions: the same request may succeed a moment later, perhaps on
# another node (leader elections, a controller failover, forwarding hiccups).
RETRIABLE = frozenset(
    {
        LEADER_NOT_AVAILABLE,
        NOT_LEADER_OR_FOLLOWER,
        REQUEST_TIMED_OUT,
        BROKER_NOT_AVAILABLE,
        NETWORK_EXCEPTION,
        14,
        15,
        16,
        NOT_CONTROLLER,
        THROTTLING_QUOTA_EXCEEDED,
    }
)

AUTH_ERRORS = frozenset(
    {
        CLUSTER_AUTHORIZATION_FAILED,
        SASL_AUTHENTICATION_FAILED,
        UNSUPPORTED_SASL_MECHANISM,
        ILLEGAL_SASL_STATE,
    }
)


def error_name(code: int) -> str:
    return NAMES.get(code, f"unknown error code {code}")


class KafkaError(ClusterError):
    """A non-zero error code in a response, from `address` (exit 3 unless a
    command maps it otherwise)."""

    def __init__(self, code: int, message: str | None, address: str, api: str):
        self.code = code
        self.server_message = message
        self.address = address
        self.api = api
        self.partition: dict | None = None  # the partition's answer, for an error given at partition level
        text = f"{address} answered {api} with {error_name(code)}"
        if code not in NAMES:
            text = f"{address} answered {api} with an unknown error code {code}"
        if message:
            text += f": {message}"
        super().__init__(text)

    @property
    def retriable(self) -> bool:
        return self.code in RETRIABLE
