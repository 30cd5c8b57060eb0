"""`cluster cluster-id`'s line, `cluster list-endpoints`'s table (kafka-cluster 4.3's,
byte for byte) and `cluster unregister`'s plan as text."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..domain.cluster import UnregisterPlan


def cluster_id_text(cid: str | None) -> str:
    return (
        f"Cluster ID: {cid}\n" if cid is not None else "No cluster ID found. The Kafka version is probably too old.\n"
    )


def cluster_id_doc(cid: str | None) -> dict:
    return {"clusterId": cid}


def endpoints_text(doc: dict) -> str:
    """kafka-cluster list-endpoints' table (Java's %-Ns columns)."""
    eps = doc["endpoints"]
    host_w = max((len(e["host"]) for e in eps), default=100)
    rack_w = max((len(e["rack"]) for e in eps if e["rack"] is not None), default=10)

    def row(*cells, widths):
        return " ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + "\n"

    if doc["endpointType"] == "controller":
        widths: tuple[int, ...] = (10, host_w, 10, rack_w, 15)
        out = row("ID", "HOST", "PORT", "RACK", "ENDPOINT_TYPE", widths=widths)
        for e in eps:
            out += row(
                e["id"], e["host"], e["port"], "null" if e["rack"] is None else e["rack"], "controller", widths=widths
            )
        return out
    widths = (10, host_w, 10, rack_w, 10, 15)
    out = row("ID", "HOST", "PORT", "RACK", "STATE", "ENDPOINT_TYPE", widths=widths)
    for e in eps:
        out += row(
            e["id"],
            e["host"],
            e["port"],
            "null" if e["rack"] is None else e["rack"],
            e["state"],
            "broker",
            widths=widths,
        )
    return out


def plan_text(plan: UnregisterPlan) -> str:
    lines = []
    if not plan.registered:
        return f"Refused: {plan.refused}\n"
    lines.append(
        f"Broker {plan.broker_id}: registered, {'fenced' if plan.fenced else 'unfenced'}, "
        f"at {plan.endpoint} (asked {plan.source})."
    )
    if plan.replica_of is None:
        holds = "partitions not counted (the broker does not serve DescribeTopicPartitions, Kafka 3.8+)"
    else:
        holds = (
            f"{plan.replica_of} partition(s) name it as a replica ({plan.in_isr} in the ISR, {plan.in_elr} in the ELR)"
        )
    if plan.partitions:
        more = (plan.replica_of or 0) - len(plan.partitions)
        holds += ": " + ", ".join(plan.partitions) + (f" and {more} more" if more > 0 else "")
    lines.append(
        "Its registration holds: " + holds + "; every feature level change checks its supported "
        "ranges (a registered broker that lacks a level blocks the upgrade)."
    )
    if plan.refused:
        lines.append(f"Refused: {plan.refused}")
    elif plan.applied is None:
        lines.append(f"Dry run: nothing sent. Run with --apply to unregister broker {plan.broker_id}.")
    elif plan.applied:
        lines.append(f"Broker {plan.broker_id} is no longer registered.")
    else:
        lines.append(plan.error or "not applied")
    return "\n".join(lines) + "\n"
