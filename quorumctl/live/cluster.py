"""`cluster cluster-id | list-endpoints | unregister`: kafka-cluster's commands
(Kafka 4.3's ClusterTool), over DescribeCluster (v2 for fenced brokers, KIP-1073;
EndpointType 2 lists the controllers, KIP-919) and UnregisterBroker (KIP-919's
API 64).

`unregister` plans first: it asks a broker for every registered broker, fenced
ones included, and refuses while the broker is unfenced (it heartbeats: the
controller would fence and re-register it, and a running broker loses its
partitions' leadership). The plan names what the registration still holds: the
partitions that list the broker as a replica, in the ISR or the ELR, and the
feature level checks every registered broker takes part in.
"""

from __future__ import annotations

from ..domain.cluster import LISTED, Endpoint, UnregisterPlan
from ..errors import InputError
from ..wire import kerrors, messages
from ..wire.access import ClusterAccess
from ..wire.client import BROKERS, CONTROLLERS


def _describe_cluster(client, include_fenced: bool = False) -> tuple[str, dict, list[Endpoint], int]:
    """(answering node, raw answer, endpoints in the admin client's order, controller id)."""
    from ..config.topic_describe import int_hashmap_order

    conn = client.bootstrap_connection()
    controllers = client.mode == "controller"
    if include_fenced and controllers:
        raise InputError("The option --include-fenced-brokers is only supported with --bootstrap-server option")
    lo = 2 if include_fenced else (1 if controllers else 0)
    _, r = conn.request(
        messages.DESCRIBE_CLUSTER,
        {
            "includeClusterAuthorizedOperations": False,
            "endpointType": CONTROLLERS if controllers else BROKERS,
            "includeFencedBrokers": include_fenced,
        },
        lo=lo,
    )
    if r["errorCode"]:
        raise kerrors.KafkaError(r["errorCode"], r.get("errorMessage"), conn.name, "DescribeCluster")
    by_id = {b["brokerId"]: b for b in r["brokers"]}
    # DescribeClusterResponse.nodes() is a HashMap by id: the admin client lists its values
    eps = [
        Endpoint(
            i,
            by_id[i]["host"],
            by_id[i]["port"],
            by_id[i].get("rack"),
            None if controllers else bool(by_id[i].get("isFenced", False)),
        )
        for i in int_hashmap_order(list(by_id))
    ]
    return conn.name, r, eps, r["controllerId"]


def cluster_id(access: ClusterAccess, timeout: float | None) -> str | None:
    with access.connect(timeout) as client:
        return client.cluster_info().cluster_id


def list_endpoints(access: ClusterAccess, timeout: float | None, include_fenced: bool = False) -> dict:
    with access.connect(timeout) as client:
        source, _, eps, _ = _describe_cluster(client, include_fenced)
        kind = "controller" if client.mode == "controller" else "broker"
    return {
        "source": source,
        "endpointType": kind,
        "includeFencedBrokers": include_fenced,
        "endpoints": [
            {
                "id": e.id,
                "host": e.host,
                "port": e.port,
                "rack": e.rack,
                **({} if e.fenced is None else {"state": "fenced" if e.fenced else "unfenced"}),
                "endpointType": kind,
            }
            for e in eps
        ],
    }


def unregister(access: ClusterAccess, timeout: float | None, broker_id: int, apply: bool) -> UnregisterPlan:
    """Plan (and with `apply`, send) UnregisterBroker for `broker_id`; see the module's doc."""
    from .topics import partition_pages

    if access.servers is None:
        raise InputError(
            "cluster unregister checks the broker's registration through a broker (DescribeCluster "
            "with fenced brokers, which controllers do not serve): give --bootstrap-server"
        )
    with access.connect(timeout) as client:
        conn = client.bootstrap_connection()
        fenced_known = conn.version_for(messages.DESCRIBE_CLUSTER, lo=2) is not None
        source, _, eps, _ = _describe_cluster(client, include_fenced=fenced_known)
        plan = UnregisterPlan(broker_id, source)
        me = next((e for e in eps if e.id == broker_id), None)
        if me is None and not fenced_known:
            # before Kafka 4.0 (DescribeCluster v2) only the unfenced brokers are listed
            plan.refused = (
                f"broker {broker_id} is not among the unfenced brokers {source} lists, and it cannot "
                "list the fenced ones (DescribeCluster v2, Kafka 4.0+): whether it is registered "
                "cannot be checked"
            )
            return plan
        if me is None:
            plan.refused = (
                f"broker {broker_id} is not registered (registered: "
                f"{', '.join(str(e.id) for e in sorted(eps, key=lambda e: e.id)) or 'none'})"
            )
            return plan
        plan.registered, plan.fenced, plan.endpoint = True, me.fenced, f"{me.host}:{me.port}"
        if not conn.supports(messages.DESCRIBE_TOPIC_PARTITIONS):
            plan.replica_of = plan.in_isr = plan.in_elr = None  # not counted (Kafka before 3.8)
        else:
            replica_of = in_isr = in_elr = 0
            for page in partition_pages(conn):
                for t in page:
                    for p in t["partitions"]:
                        hit = broker_id in p["replicaNodes"]
                        replica_of += hit
                        in_isr += broker_id in p["isrNodes"]
                        in_elr += broker_id in (p.get("eligibleLeaderReplicas") or ())
                        if hit and len(plan.partitions) < LISTED:
                            plan.partitions.append(f"{t['name']}-{p['partitionIndex']}")
            plan.replica_of, plan.in_isr, plan.in_elr = replica_of, in_isr, in_elr
        if not me.fenced:
            plan.refused = (
                f"broker {broker_id} is registered and unfenced at {plan.endpoint}: it is running and "
                "heartbeating (the controller would take it back as soon as it heartbeats again); "
                "stop it, wait until it is fenced, then unregister"
            )
            return plan
        if not apply:
            return plan
        if not conn.supports(messages.UNREGISTER_BROKER):
            plan.applied = False
            plan.error = "The target cluster does not support the broker unregistration API."
            return plan
        _, r = conn.request(messages.UNREGISTER_BROKER, {"brokerId": broker_id})
        if r["errorCode"]:
            raise kerrors.KafkaError(r["errorCode"], r.get("errorMessage"), conn.name, "UnregisterBroker")
        plan.applied = True
        return plan
