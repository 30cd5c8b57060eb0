"""`describe health`'s data partitions (as `rpk cluster health` counts them): asked of
a broker, page by page, never holding more than one page and the bounded lists.

- live brokers: DescribeCluster (registered and unfenced; v2 also names the fenced);
- every live broker but the one asked: connected to (ApiVersions) in parallel, within
  the deadline. A frozen broker (SIGSTOP, a GC pause, a hung disk) stays registered
  and unfenced, leading its partitions, until the controller's
  broker.session.timeout.ms runs out: kafka-topics still names it the leader, and
  only this probe sees that nothing is served;
- every partition: DescribeTopicPartitions with an empty topic list, paged by its
  cursor (live/topics.partition_pages);
- each page's topics' min.insync.replicas: one DescribeConfigs per page, asking
  for that key alone.

A partition is leaderless when its leader is not a live broker (kafka-topics'
--unavailable-partitions), under-replicated when its ISR is smaller than its
replicas, under min ISR when leaderless or its ISR is below min.insync.replicas
(kafka-topics' definitions). Any leaderless partition makes the verdict
unhealthy; under-replicated or under-min-ISR ones make it degraded. A live broker
that does not answer makes it unhealthy when it leads a partition (nothing serves
those until it is fenced), else degraded; a fenced broker is a note.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...domain.health_verdict import LISTED
from ...wire import kerrors, messages

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
    fenced_brokers: list = field(default_factory=list)
    # live brokers that did not answer: id -> {"address", "error", "leads" (partition count), "listed"}
    silent: dict = field(default_factory=dict)
    error: str | None = None
    elapsed_ms: float = 0.0


def _min_isr(conn, names: list[str]) -> dict[str, int]:
    if not names:
        return {}
    _, resp = conn.request(
        messages.DESCRIBE_CONFIGS,
        {
            "resources": [
                {"resourceType": TOPIC_RESOURCE, "resourceName": n, "configurationKeys": [MIN_INSYNC]} for n in names
            ],
            "includeSynonyms": False,
            "includeDocumentation": False,
        },
    )
    out = {}
    for r in resp["results"]:
        v = next((c["value"] for c in r["configs"] if c["name"] == MIN_INSYNC), None) if not r["errorCode"] else None
        try:
            out[r["resourceName"]] = int(v) if v is not None else 1
        except ValueError:
            out[r["resourceName"]] = 1
    return out


def silent_brokers(brokers: dict, cfg, deadline: float, timeout_s: float) -> dict[int, str]:
    """Connect to each broker (id -> Address) at once, ApiVersions included; the ones
    that did not answer by `deadline` (the end of the --timeout of `timeout_s`), with
    why. A frozen process's kernel still accepts the connection: only the request goes
    unanswered."""
    import threading
    from ...wire.connection import Connection, NodeError

    late = f"no answer within the {timeout_s:g} s timeout"
    done: dict[int, str | None] = {}

    def one(nid, addr):
        try:
            Connection(addr, cfg, deadline).open().close()
            done[nid] = None
        except NodeError as e:
            done[nid] = late if e.kind == "timeout" else str(e)

    threads = [
        threading.Thread(target=one, args=(nid, a), name=f"broker {nid}", daemon=True) for nid, a in brokers.items()
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(deadline - time.monotonic(), 0.0) + 0.2)
    out: dict[int, str] = {}
    for nid in brokers:
        why = done.get(nid, late)  # still waiting at the deadline: the same
        if why is not None:
            out[nid] = why
    return out


def check_partitions(conn, live: set[int], limit: int = 2000, tally=()) -> PartitionHealth:
    """Count and name (up to LISTED each) the partitions in trouble, walking every page;
    and, per broker of `tally`, the partitions it leads (in `silent`, for the caller to
    keep those of the brokers that turn out not to answer)."""
    from ..topics import partition_pages

    t0 = time.monotonic()
    ph = PartitionHealth(conn.name, live_brokers=sorted(live))
    led: dict[int, list] = {nid: [0, []] for nid in tally}
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
                if p["leaderId"] in led:
                    n_names = led[p["leaderId"]]
                    n_names[0] += 1
                    if len(n_names[1]) < LISTED:
                        n_names[1].append(where)
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
    ph.silent = {nid: {"leads": n, "listed": names} for nid, (n, names) in led.items()}
    ph.elapsed_ms = round((time.monotonic() - t0) * 1000, 1)
    return ph


def probe_partitions(servers, cfg, deadline: float, timeout_s: float) -> PartitionHealth | None:
    """The first broker of `servers` that answers, asked for every partition; None when
    no broker serves DescribeTopicPartitions (Kafka before 3.8, the simulated quorum).
    A failure is kept in `error` (the quorum's verdict still stands)."""
    import threading
    from ...config.addresses import Address
    from ...wire.client import BROKERS
    from ...wire.connection import Connection, NodeError

    last = None
    for addr in servers:
        try:
            conn = Connection(addr, cfg, deadline).open()
        except NodeError as e:
            last = str(e)
            continue
        try:
            if not conn.supports(messages.METADATA):
                return None  # a controller: describe health names it a wrong endpoint elsewhere
            if not conn.supports(messages.DESCRIBE_TOPIC_PARTITIONS) or not conn.supports(messages.DESCRIBE_CLUSTER):
                return None
            # v2 (Kafka 4.0+) also lists the fenced brokers; older ones leave them out
            _, r = conn.request(
                messages.DESCRIBE_CLUSTER,
                {"includeClusterAuthorizedOperations": False, "endpointType": BROKERS, "includeFencedBrokers": True},
            )
            if r["errorCode"]:
                raise kerrors.KafkaError(r["errorCode"], r.get("errorMessage"), conn.name, "DescribeCluster")
            live = {b["brokerId"]: Address(b["host"], b["port"]) for b in r["brokers"] if not b.get("isFenced")}
            fenced = sorted(b["brokerId"] for b in r["brokers"] if b.get("isFenced"))
            # the other live brokers, probed while the pages are walked (the one asked answers)
            others = {nid: a for nid, a in live.items() if a != conn.address}
            box: dict = {}
            probe = threading.Thread(
                target=lambda b, o: b.update(silent_brokers(o, cfg, deadline, timeout_s)),
                args=(box, others),
                name="brokers",
                daemon=True,
            )
            probe.start()
            ph = check_partitions(conn, set(live), tally=others)
            probe.join(max(deadline - time.monotonic(), 0.0) + 0.5)
            ph.fenced_brokers = fenced
            ph.silent = {
                nid: {"address": str(others[nid]), "error": why, **ph.silent[nid]} for nid, why in sorted(box.items())
            }
            return ph
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

    def named_of(shown: list, n: int) -> str:
        return ", ".join(shown) + (f" and {n - len(shown)} more" if n > len(shown) else "")

    def named(key: str, n: int) -> str:
        return named_of(ph.lists[key], n)

    for nid, b in ph.silent.items():
        if b["leads"]:
            worse(
                "unhealthy",
                f"broker {nid} ({b['address']}) is registered and unfenced but does not answer "
                f"({b['error']}): the {b['leads']} partition(s) it leads are served by nobody "
                f"until the controller fences it: {named_of(b['listed'], b['leads'])}",
            )
        else:
            worse(
                "degraded",
                f"broker {nid} ({b['address']}) is registered and unfenced but does not answer ({b['error']})",
            )
    if ph.fenced_brokers:
        h.notes.append("registered but fenced (not heartbeating): broker(s) " + ", ".join(map(str, ph.fenced_brokers)))
    if ph.leaderless:
        worse("unhealthy", f"{ph.leaderless} partition(s) without a live leader: {named('leaderless', ph.leaderless)}")
    if ph.under_replicated:
        worse(
            "degraded",
            f"{ph.under_replicated} partition(s) under-replicated: {named('underReplicated', ph.under_replicated)}",
        )
    below = ph.under_min_isr - ph.leaderless
    if below > 0:
        worse("degraded", f"{below} partition(s) with a leader but fewer in-sync replicas than min.insync.replicas")
