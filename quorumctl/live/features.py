"""`features upgrade|downgrade` live: who is registered, what each node supports,
and Kafka's own verdict on the change (UpdateFeatures, API 57).

Kafka's FeatureCommand sends UpdateFeatures with ValidateOnly for `--dry-run`;
this job always asks that first, and sends the real change only with `apply`
when neither Kafka nor the nodes' ranges refuse it.

What each node supports comes from its own ApiVersions answer (what
`features describe` reads); a controller's answer shows unstable levels only
with unstable.api.versions.enable, so there Kafka's verdict decides
(domain.features.settle_advertised). The nodes come from where Kafka's tools can see them:
- through a broker (--bootstrap-server): DescribeCluster v2 with
  IncludeFencedBrokers lists every registered broker with its fenced state (an
  older broker lists the unfenced ones only), DescribeQuorum (forwarded) the
  voters with their endpoints;
- through a controller (--bootstrap-controller): DescribeCluster lists every
  registered controller (voters or not, KIP-919); brokers are not listed there
  (Kafka's admin client refuses it too), so they appear as DescribeQuorum's
  observers, their ranges unknown.
Last seen: the leader's lastFetchTimestamp of each replica (DescribeQuorum):
brokers and controllers fetch the metadata log continuously, so a node that
stopped shows an old time. Heartbeats themselves are not exposed by any API.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..config.addresses import Address, parse_address
from ..domain.features import Change, Node, blockers, ghost_notes, settle_advertised
from ..wire import kerrors, messages
from ..wire.access import ClusterAccess
from ..wire.client import BROKERS, QuorumClient
from ..live.describe import fetch_quorum
from ..wire.connection import Connection, NodeError

NODE_TIMEOUT_S = 5.0  # at most this long for one node's ApiVersions


@dataclass
class LiveCheck:
    change: Change
    mode: str  # "server" or "controller"
    source: str  # the address that answered
    finalized: dict[str, int]
    nodes: list[Node]
    blockers: list[dict]
    verdict: dict[str, str | None]  # Kafka's ValidateOnly answer: feature -> error message or None
    applied: dict[str, str | None] | None = None  # the real answer, when sent
    notes: list[str] = field(default_factory=list)
    now_ms: int = 0


def _features_of(conn: Connection) -> dict[str, tuple[int, int]]:
    return {n: (lo, hi) for n, (lo, hi) in conn.supported_features.items()}


def _ask(addr: Address, cfg, deadline: float) -> tuple[dict | None, str | None]:
    """A node's supported feature ranges (ApiVersions), or why they are unknown."""
    try:
        c = Connection(addr, cfg, min(deadline, time.monotonic() + NODE_TIMEOUT_S)).open()
    except NodeError as e:
        return None, str(e)
    try:
        return _features_of(c), None
    finally:
        c.close()


def _brokers_through_broker(client: QuorumClient, notes: list[str]) -> list[Node]:
    conn = client.bootstrap_connection()
    v2 = conn.version_for(messages.DESCRIBE_CLUSTER, lo=2)
    body = {"includeClusterAuthorizedOperations": False, "endpointType": BROKERS, "includeFencedBrokers": True}
    if v2 is None:
        notes.append(f"{conn.name} does not support DescribeCluster v2 (Kafka 4.0+): fenced brokers are not listed")
        _v, resp = conn.request(messages.DESCRIBE_CLUSTER, body)
    else:
        _v, resp = conn.request(messages.DESCRIBE_CLUSTER, body, lo=2)
    if resp["errorCode"]:
        raise kerrors.KafkaError(resp["errorCode"], resp.get("errorMessage"), conn.name, "DescribeCluster")
    return [
        Node(
            "broker",
            b["brokerId"],
            None,
            b.get("isFenced") if v2 is not None else False,
            str(Address(b["host"], b["port"])),
        )
        for b in resp["brokers"]
    ]


def check_live(access: ClusterAccess, timeout: float | None, change: Change, apply: bool = False) -> LiveCheck:
    with access.connect(timeout) as client:
        notes: list[str] = []
        quorum = fetch_quorum(client)
        seen = {r.id: r.last_fetch for r in (*quorum.voters, *quorum.observers)}
        nodes: list[Node] = []
        if client.mode == "server":
            nodes += _brokers_through_broker(client, notes)
            for vid in sorted(r.id for r in quorum.voters):
                eps = quorum.endpoints(vid)
                addr = str(Address(eps[0].host, eps[0].port)) if eps else None
                nodes.append(
                    Node(
                        "controller",
                        vid,
                        None,
                        None,
                        addr,
                        error=None if addr else "no endpoint known (DescribeQuorum before v2)",
                    )
                )
            notes.append(
                "controllers: the voters (DescribeQuorum); a controller registered but not a voter is seen "
                "only with --bootstrap-controller (Kafka's verdict covers it)"
            )
        else:
            info = client.cluster_info()
            for cid, addr in sorted(info.nodes.items()):
                nodes.append(Node("controller", cid, None, None, str(addr)))
            known = set(info.nodes)
            for r in sorted(quorum.observers, key=lambda r: r.id):
                if r.id not in known:
                    nodes.append(
                        Node(
                            "broker",
                            r.id,
                            None,
                            None,
                            None,
                            error="controllers do not list brokers' addresses: "
                            "use --bootstrap-server to check its range",
                        )
                    )
            notes.append(
                "brokers: DescribeQuorum's observers (controllers do not list brokers); a broker that "
                "stopped fetching is not among them (Kafka's verdict covers it)"
            )
        for n in nodes:
            n.last_seen_ms, n.last_seen = seen.get(n.id), "last fetch"
            if n.address is not None and n.supported is None and n.error is None:
                n.supported, n.error = _ask(parse_address(n.address), client.cfg, client.deadline)
        conn = client.bootstrap_connection()
        finalized = dict(conn.finalized_features)
        verdict = client.update_features(change.updates, change.upgrade_type, validate_only=True)
        found, doubts = settle_advertised(blockers(nodes, change, finalized.get("metadata.version")), verdict)
        notes += doubts
        # asked through a broker: the voters' endpoints DescribeQuorum names (v2) reach the controllers
        eps = [e for r in sorted(quorum.voters, key=lambda r: r.id) for e in quorum.endpoints(r.id)[:1]]
        via = access.controllers or ",".join(str(Address(e.host, e.port)) for e in eps) or None
        notes += ghost_notes(change, found, verdict, {r.id for r in quorum.voters}, via)
        applied = None
        if apply and not found and not any(verdict.values()):
            applied = client.update_features(change.updates, change.upgrade_type, validate_only=False)
        return LiveCheck(
            change, client.mode, conn.name, finalized, nodes, found, verdict, applied, notes, int(time.time() * 1000)
        )
