"""`migrate-quorum` live: the facts ops.migrate judges, from the wire.

- the voter set, leader and observers: DescribeQuorum (a static quorum shows no
  directory ids; a dynamic one shows each voter's);
- finalized kraft.version and metadata.version: ApiVersions of the bootstrap node;
- each node's supported ranges: its own ApiVersions; the controllers are the
  voters (their DescribeQuorum endpoints) and, through --bootstrap-controller,
  every registered controller (DescribeCluster); the brokers are the registered
  brokers through --bootstrap-server (DescribeCluster), else DescribeQuorum's
  observers that are not controllers (their addresses unknown);
- each node's running quorum settings: DescribeConfigs of its own BROKER
  resource (every node, controllers too, answers it for itself, KIP-919), so
  the config step sees what a node really runs, not what a file says;
- Kafka's verdict: UpdateFeatures kraft.version=1 with validateOnly (the leader
  checks every voter's kraft.version range and directory id).
"""

from __future__ import annotations

import time

from ...config.addresses import Address, parse_address
from ...errors import ClusterError
from ...domain.features import UPGRADE
from ...ops.migrate import BOOTSTRAP_KEY, KRAFT, MV, VOTERS_KEY, Facts, NodeFacts
from ...wire import messages
from ...wire.access import ClusterAccess
from ...wire.client import BROKERS, QuorumClient
from ...live.describe import fetch_quorum
from ...wire.connection import Connection, NodeError
from ...domain.health_verdict import DEFAULT_FETCH_TIMEOUT_MS, caught_up as caught_up_rule

NODE_TIMEOUT_S = 5.0
BROKER_RESOURCE = 4  # DescribeConfigs ResourceType BROKER


def _ask(addr: str, nid: int, cfg, deadline: float, n: NodeFacts) -> None:
    """Fill n.supported (ApiVersions) and the running quorum settings (DescribeConfigs)
    from the node itself."""
    try:
        c = Connection(parse_address(addr), cfg, min(deadline, time.monotonic() + NODE_TIMEOUT_S)).open()
    except NodeError as e:
        n.error = str(e)
        return
    with c:
        n.supported = dict(c.supported_features)
        try:
            _v, resp = c.request(
                messages.DESCRIBE_CONFIGS,
                {
                    "resources": [
                        {
                            "resourceType": BROKER_RESOURCE,
                            "resourceName": str(nid),
                            "configurationKeys": [VOTERS_KEY, BOOTSTRAP_KEY],
                        }
                    ],
                    "includeSynonyms": False,
                    "includeDocumentation": False,
                },
            )
        except (NodeError, ClusterError) as e:
            n.conf_error = str(e)
            return
        r = resp["results"][0]
        if r["errorCode"]:
            n.conf_error = f"DescribeConfigs of node {nid} at {addr}: {r.get('errorMessage') or r['errorCode']}"
            return
        conf = {e["name"]: e["value"] for e in r["configs"]}
        n.voters_conf, n.bootstrap_conf, n.conf_source = (
            conf.get(VOTERS_KEY) or None,
            conf.get(BOOTSTRAP_KEY) or None,
            "running",
        )


def _brokers(client: QuorumClient) -> dict[int, str]:
    conn = client.bootstrap_connection()
    body = {"includeClusterAuthorizedOperations": False, "endpointType": BROKERS, "includeFencedBrokers": True}
    lo = 2 if conn.version_for(messages.DESCRIBE_CLUSTER, lo=2) is not None else None
    _v, resp = conn.request(messages.DESCRIBE_CLUSTER, body, lo=lo)
    return {b["brokerId"]: str(Address(b["host"], b["port"])) for b in resp["brokers"]}


def gather(access: ClusterAccess, timeout: float | None, ask_kafka: bool = True) -> Facts:
    with access.connect(timeout) as client:
        q = fetch_quorum(client)
        conn = client.bootstrap_connection()
        finalized = dict(conn.finalized_features)
        notes: list[str] = []
        nodes: dict[tuple[str, int], NodeFacts] = {}
        voters: dict[int, list[str]] = {}
        for r in q.voters:
            eps = q.endpoints(r.id)
            n = nodes.setdefault(("controller", r.id), NodeFacts(r.id, "controller"))
            n.voter, n.directory_id = True, r.directory_id
            if eps:
                n.address = str(Address(eps[0].host, eps[0].port))
                voters[r.id] = [n.address]
            n.caught_up = caught_up_rule(q, q.leader(), r, DEFAULT_FETCH_TIMEOUT_MS)[0]  # health's rule
        observers = {r.id: r for r in q.observers}
        if client.mode == "controller":
            for cid, addr in client.cluster_info().nodes.items():
                n = nodes.setdefault(("controller", cid), NodeFacts(cid, "controller"))
                n.address = n.address or str(addr)
            for oid in observers:
                if ("controller", oid) not in nodes:
                    nodes[("broker", oid)] = NodeFacts(
                        oid,
                        "broker",
                        error="controllers do not list brokers' addresses: use --bootstrap-server to check brokers",
                    )
        else:
            brokers = _brokers(client)
            for bid, addr in brokers.items():
                nodes[("broker", bid)] = NodeFacts(bid, "broker", addr)
            for oid in observers:
                if ("broker", oid) not in nodes and ("controller", oid) not in nodes:
                    # an observer that is no registered broker: a controller outside the voter set
                    nodes[("controller", oid)] = NodeFacts(
                        oid, "controller", error="not a voter; its address is known only through --bootstrap-controller"
                    )
            notes.append("controllers that are not voters are listed only through --bootstrap-controller")
        for (kind, nid), n in nodes.items():
            if kind == "controller" and nid in observers:
                n.observer = True
                n.directory_id = n.directory_id or observers[nid].directory_id
            if n.address and n.supported is None:
                _ask(n.address, nid, client.cfg, client.deadline, n)
        verdict, ok = None, None
        kv = finalized.get(KRAFT, 0)
        if ask_kafka and kv == 0:
            answer = client.update_features({KRAFT: 1}, UPGRADE, validate_only=True)[KRAFT]
            ok = answer is None
            verdict = "kraft.version can be upgraded to 1." if ok else f"Can not upgrade kraft.version to 1. {answer}"
        return Facts(
            "live",
            conn.name,
            kv,
            finalized.get(MV),
            q.leader_id,
            voters,
            sorted(nodes.values(), key=lambda n: (n.kind != "controller", n.id)),
            verdict,
            ok,
            notes,
        )


def upgrade(access: ClusterAccess, timeout: float | None) -> str | None:
    """Send UpdateFeatures kraft.version=1 (not a dry run); Kafka's error, or None."""
    with access.connect(timeout) as client:
        return client.update_features({KRAFT: 1}, UPGRADE, validate_only=False)[KRAFT]


def wait_dynamic(access: ClusterAccess, timeout: float | None, limit_s: float) -> Facts:
    """After the upgrade: the facts once kraft.version 1 is finalized and every voter shows
    its directory id, or as they are when `limit_s` ran out."""
    end = time.monotonic() + limit_s
    while True:
        f = gather(access, timeout, ask_kafka=False)
        if (f.kraft_version or 0) >= 1 and all(n.directory_id for n in f.controllers if n.voter):
            return f
        if time.monotonic() >= end:
            return f
        time.sleep(0.5)
