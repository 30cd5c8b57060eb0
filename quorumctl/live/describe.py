"""The describe jobs: Kafka's connection options in, the answer out.
`describe status|replication` (a Quorum), `features describe` (a node's feature
levels) and the registered controllers. The wire client (wire/client.py) finds
the node and asks; the Quorum model is the domain's (domain/quorum.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config.addresses import Address
from ..domain.quorum import quorum_from_partition
from ..errors import ClusterError, InputError
from ..wire.access import ClusterAccess
from ..wire.client import QuorumClient


def registered_controllers(access: ClusterAccess, timeout: float | None) -> dict[int, Address]:
    """Every registered controller (DescribeCluster with EndpointType=2, what
    kafka-cluster list-endpoints prints): id -> address. A registration stays
    after its controller is removed from the voters."""
    with access.connect(timeout) as client:
        return dict(client.cluster_info().nodes)


@dataclass
class Features:
    """A node's feature levels, from its ApiVersions answer (as Kafka's
    Admin.describeFeatures reads them)."""

    supported: dict[str, tuple[int, int]]
    finalized: dict[str, int]
    epoch: int | None  # None: the node has no finalized features epoch (-1)
    source: str


def describe_features(access: ClusterAccess, timeout: float | None, node_id: int | None = None) -> Features:
    """`features describe`: the first bootstrap address that answers (of the kind
    the option says) gives its supported ranges and finalized levels; with `node_id`
    (kafka-features describe --node-id), that node, found among the brokers
    (--bootstrap-server) or the controllers (--bootstrap-controller) DescribeCluster lists."""
    if node_id is not None and node_id < 0:
        raise InputError(f"Invalid node id {node_id}: must be non-negative.")
    with access.connect(timeout) as client:
        conn = client.bootstrap_connection()
        if node_id is not None:
            nodes = client.cluster_info().nodes
            if node_id not in nodes:
                kind = "brokers" if client.mode == "server" else "controllers"
                raise ClusterError(
                    f"node {node_id} is not among the {kind} {conn.name} lists "
                    f"({', '.join(map(str, sorted(nodes))) or 'none'})"
                )
            conn = client._conn(nodes[node_id])
        epoch = conn.finalized_features_epoch
        return Features(
            dict(conn.supported_features),
            dict(conn.finalized_features),
            epoch if epoch is not None and epoch >= 0 else None,
            conn.name,
        )


def fetch_quorum(client: QuorumClient):
    """Cluster id (DescribeCluster, or Metadata on old brokers) + DescribeQuorum."""
    info = client.cluster_info()
    qr = client.describe_quorum()
    return quorum_from_partition(qr.partition, qr.nodes, qr.version, qr.source, info.cluster_id)


def describe_quorum(access: ClusterAccess, timeout: float | None):
    """`describe status|replication`: connect, ask, return the Quorum."""
    with access.connect(timeout) as client:
        return fetch_quorum(client)
