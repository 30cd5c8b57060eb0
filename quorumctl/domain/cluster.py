"""What kafka-cluster's commands answer (live/cluster.py asks): the endpoints a
node lists, and the plan of `cluster unregister` with what the registration
still holds. render/cluster.py shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LISTED = 10


@dataclass
class Endpoint:
    id: int
    host: str
    port: int
    rack: str | None
    fenced: bool | None  # None: a controller (no such state)


@dataclass
class UnregisterPlan:
    broker_id: int
    source: str
    registered: bool = False
    fenced: bool | None = None
    endpoint: str | None = None
    replica_of: int | None = 0  # None: not counted (no DescribeTopicPartitions)
    in_isr: int | None = 0
    in_elr: int | None = 0
    partitions: list[str] = field(default_factory=list)
    refused: str | None = None
    applied: bool | None = None
    error: str | None = None

    def doc(self) -> dict:
        return {
            "brokerId": self.broker_id,
            "source": self.source,
            "registered": self.registered,
            "fenced": self.fenced,
            "endpoint": self.endpoint,
            "holds": {
                "replicaOf": self.replica_of,
                "inIsr": self.in_isr,
                "inElr": self.in_elr,
                "partitions": self.partitions,
                "listedAtMost": LISTED,
            },
            "refused": self.refused,
            "dryRun": self.applied is None,
            "applied": self.applied,
        }
