"""`describe health`'s data partitions (as `rpk cluster health` counts them): asked of
a broker, page by page, never holding more than one page and the bounded lists.

- live brokers: DescribeCluster (registered and unfenced);
- every partition: DescribeTopicPartitions with an empty topic list, paged by its
  cursor (protocol/topics.partition_pages);
- each page's topics' min.insync.replicas: one DescribeConfigs per page, asking
  for that key alone.

A partition is leaderless when its leader is not a live broker (kafka-topics'
--unavailable-partitions), under-replicated when its ISR is smaller than its
replicas, under min ISR when leaderless or its ISR is below min.insync.replicas
(kafka-topics' definitions). Any leaderless partition makes the verdict
unhealthy; under-replicated or under-min-ISR ones make it degraded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from . import kerrors, messages

LISTED = 20          # partitions named per list; the rest are counted
MIN_INSYNC = "min.insync.replicas"
TOPIC_RESOURCE = 2


@dataclass
class PartitionHealth:
    source: str
    topics: int = 0
    partitions: int = 0
    leaderless: int = 0
    under_replicated: int = 0
    under_min_isr: int = 0
    lists: dict = field(default_factory=lambda: {"leaderless": [], "underReplicated": [], "underMinIsr": []})
    live_brokers: list = field(default_factory=list)
    error: str | None = None
    elapsed_ms: float = 0.0


def _min_isr(conn, names: list[str]) -> dict[str, int]:
    if not names:
        return {}
    _, resp = conn.request(messages.DESCRIBE_CONFIGS, {
        "resources": [{"resourceType": TOPIC_RESOURCE, "resourceName": n, "configurationKeys": [MIN_INSYNC]}
                      for n in names], "includeSynonyms": False, "includeDocumentation": False})
    out = {}
    for r in resp["results"]:
        v = next((c["value"] for c in r["configs"] if c["name"] == MIN_INSYNC), None) if not r["errorCode"] else None
        try:
            out[r["resourceName"]] = int(v) if v is not None else 1
        except ValueError:
            out[r["resourceName"]] = 1
    return out


def check_partitions(conn, live: set[int], limit: int = 2000) -> PartitionHealth:
    """Count and name (up to LISTED each) the partitions in trouble, walking every page."""
    from .topics import partition_pages
    t0 = time.monotonic()
    ph = PartitionHealth(conn.name, live_brokers=sorted(live))
    seen_topics: set[str] = set()
    lists = ph.lists
    for page in partition_pages(conn, None, limit):
        topics = [t for t in page if not t["errorCode"]]
        misr = _min_isr(conn, sorted({t["name"] for t in topics}))
        for t in topics:
            name = t["name"]
            if name not in seen_topics:
                seen_topics.add(name)
            m = misr.get(name, 1)
            for p in t["partitions"]:
                ph.partitions += 1
                isr = len(p["isrNodes"])
                leaderless = p["leaderId"] not in live
                where = f"{name}-{p['partitionIndex']}"
                if leaderless:
                    ph.leaderless += 1
                    if len(lists["leaderless"]) < LISTED:
                        lists["leaderless"].append(where)
                if isr < len(p["replicaNodes"]):
                    ph.under_replicated += 1
                    if len(lists["underReplicated"]) < LISTED:
                        lists["underReplicated"].append(where)
                if leaderless or isr < m:
                    ph.under_min_isr += 1
                    if len(lists["underMinIsr"]) < LISTED:
                        lists["underMinIsr"].append(where)
    ph.topics = len(seen_topics)
    ph.elapsed_ms = round((time.monotonic() - t0) * 1000, 1)
    return ph


def probe_partitions(servers, cfg, deadline: float) -> PartitionHealth | None:
    """The first broker of `servers` that answers, asked for every partition; None when
    no broker serves DescribeTopicPartitions (Kafka before 3.8, the simulated quorum).
    A failure is kept in `error` (the quorum's verdict still stands)."""
    from .client import BROKERS
    from .connection import Connection, NodeError
    last = None
    for addr in servers:
        try:
            conn = Connection(addr, cfg, deadline).open()
        except NodeError as e:
            last = str(e)
            continue
        try:
            if not conn.supports(messages.METADATA):
                return None     # a controller: describe health names it a wrong endpoint elsewhere
            if not conn.supports(messages.DESCRIBE_TOPIC_PARTITIONS) or not conn.supports(messages.DESCRIBE_CLUSTER):
                return None
            _, r = conn.request(messages.DESCRIBE_CLUSTER, {"includeClusterAuthorizedOperations": False,
                                                            "endpointType": BROKERS})
            if r["errorCode"]:
                raise kerrors.KafkaError(r["errorCode"], r.get("errorMessage"), conn.name, "DescribeCluster")
            return check_partitions(conn, {b["brokerId"] for b in r["brokers"]})
        except (NodeError, kerrors.KafkaError) as e:
            return PartitionHealth(conn.name, error=str(e))
        finally:
            conn.close()
    return PartitionHealth(str(servers[0]) if servers else "", error=last or "no broker to ask")


def apply(h, ph: PartitionHealth | None) -> None:
    """The partitions' part of the verdict: leaderless makes it unhealthy,
    under-replicated or under min ISR degraded (never better than the quorum's)."""
    h.partitions = ph
    if ph is None:
        return
    if ph.error:
        h.notes.append(f"partitions not checked: {ph.error}")
        return
    rank = {"healthy": 0, "degraded": 1, "unhealthy": 2}

    def worse(verdict: str, reason: str) -> None:
        h.reasons.append(reason)
        if rank.get(verdict, 0) > rank.get(h.verdict, 2):
            h.verdict = verdict

    def named(key: str, n: int) -> str:
        shown = ph.lists[key]
        return ", ".join(shown) + (f" and {n - len(shown)} more" if n > len(shown) else "")

    if ph.leaderless:
        worse("unhealthy", f"{ph.leaderless} partition(s) without a live leader: {named('leaderless', ph.leaderless)}")
    if ph.under_replicated:
        worse("degraded", f"{ph.under_replicated} partition(s) under-replicated: "
                          f"{named('underReplicated', ph.under_replicated)}")
    below = ph.under_min_isr - ph.leaderless
    if below > 0:
        worse("degraded", f"{below} partition(s) with a leader but fewer in-sync replicas than "
                          f"min.insync.replicas")


def partitions_doc(ph: PartitionHealth | None):
    if ph is None:
        return None
    return {"source": ph.source, "topics": ph.topics, "partitions": ph.partitions, "leaderless": ph.leaderless,
            "underReplicated": ph.under_replicated, "underMinIsr": ph.under_min_isr,
            "listed": ph.lists, "listedAtMost": LISTED, "liveBrokers": ph.live_brokers, "error": ph.error,
            "elapsedMs": ph.elapsed_ms}
