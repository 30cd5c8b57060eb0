"""kafka-topics --describe's judgement of a partition and its order of topics and
configs, wherever the partitions come from (an image replayed offline:
image/topics; a broker's answers: live/topics): TopicCommand's
PartitionDescription flags, its --topic regex, its replication factor, and the
Java HashMap orders of the admin client's results. Meaning only: no I/O.
"""

from __future__ import annotations

import functools
import re

from ..errors import InputError

FILTERS = ("unavailable", "under-replicated", "under-min-isr", "at-min-isr")
# Topic.INTERNAL_TOPICS (Kafka 4.3): __consumer_offsets, __transaction_state, __share_group_state
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


# -- Java's HashMap iteration order ------------------------------------------------------------


@functools.lru_cache(maxsize=1 << 16)
def java_hash(s: str) -> int:
    """String.hashCode over UTF-16 code units, as an unsigned 32-bit value (memoised: every
    topic orders the same ~40 config names, 12 k topics spent seconds hashing them again)."""
    h = 0
    b = s.encode("utf-16-be")
    for i in range(0, len(b), 2):
        h = (31 * h + (b[i] << 8 | b[i + 1])) & 0xFFFFFFFF
    return h


def _bucket(s: str, cap: int) -> int:
    h = java_hash(s)
    return (h ^ (h >> 16)) & (cap - 1)


def _table_size_for(n: int) -> int:
    cap = 1
    while cap < n:
        cap <<= 1
    return cap


def _grown(cap: int, n: int) -> int:
    """The table size after n puts into a table of `cap` (resize past 0.75)."""
    while n > int(cap * 0.75):
        cap <<= 1
    return cap


def hashmap_capacity(n: int, *, sized: int | None = None, copy: bool = False) -> int:
    """The table size of a HashMap holding n keys: `new HashMap<>()` (sized None),
    `new HashMap<>(sized)`, or `new HashMap<>(aMapOfN)` (copy)."""
    if copy:
        return _grown(_table_size_for(max(1, int(n / 0.75 + 1.0))), n)
    if sized is None:
        return _grown(16, n)
    return _grown(_table_size_for(max(1, sized)), n)


def hashmap_order(keys, *caps: int) -> list[str]:
    """The iteration order of `keys` put, in their given order, into a HashMap of
    table size caps[0], that map's entries into one of caps[1], and so on: each
    map iterates by bucket, a bucket in insertion order (a bucket of 8 or more
    keys, which Java makes a tree, is not modelled)."""
    order = list(keys)
    for cap in caps:
        order.sort(key=lambda k: _bucket(k, cap))
    return order


def int_hashmap_order(keys, cap: int | None = None) -> list[int]:
    """The iteration order of Integer keys put in their given order into a HashMap
    (`Collectors.toMap`: default table, grown; Integer.hashCode is the value)."""
    keys = list(keys)
    cap = cap or hashmap_capacity(len(keys))
    return sorted(keys, key=lambda k: ((k & 0xFFFFFFFF) ^ ((k & 0xFFFFFFFF) >> 16)) & (cap - 1))


def admin_topic_order(names: list[str]) -> list[str]:
    """describeTopics(names).allTopicNames(): sorted names into HashMap(n), copied
    into a new HashMap, read into HashMap(n)."""
    n = len(names)
    return hashmap_order(
        sorted(names), hashmap_capacity(n, sized=n), hashmap_capacity(n, copy=True), hashmap_capacity(n, sized=n)
    )


def checked_options(filters, topic_id: str | None) -> str | None:
    """The filters known, and --topic-id as a canonical id; None for no id (Kafka takes
    the zero id for none: the name path)."""
    from .. import ids

    bad = [f for f in filters if f not in FILTERS]
    if bad:
        raise InputError(f"unknown filter {bad[0]} (one of {', '.join(FILTERS)})")
    if topic_id is None:
        return None
    try:
        use_id = ids.canonical(topic_id)
    except ids.InvalidUuid as e:
        raise InputError(f"--topic-id {topic_id!r}: {e}") from None
    return None if use_id == ids.ZERO_UUID else use_id


def topic_regex(text: str) -> re.Pattern:
    """TopicFilter.IncludeList: trimmed, commas as alternatives, spaces and outer quotes dropped."""
    raw = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", text.strip().replace(",", "|").replace(" ", "")))
    try:
        return re.compile(raw)
    except re.error as e:
        raise InputError(f"--topic {text!r}: {raw} is an invalid regex ({e})") from None


def replication_factor(replicas, adding, removing) -> int:
    """TopicCommand.getReplicationFactor: during a reassignment, replicas minus adding."""
    if (set(adding) | set(removing)) & set(replicas):
        return len(replicas) - len(adding)
    return len(replicas)


def is_internal(name: str) -> bool:
    """Topic.isInternal: what --exclude-internal leaves out (by name, as Kafka's tool)."""
    return name in INTERNAL_TOPICS


class Listed:
    """What describe shows of one distinct partition state at one min.insync.replicas:
    its flags and its fields (a partition's JSON without its id). Partitions in the
    same state share one (a big cluster's states repeat: the 256 k snapshot has 2), so
    each is rendered once; `text` and `json` are the renderers' cache of it.
    `leader` is the leader's id or None (-1, or a broker that is not live: the admin
    client finds no node for it); elr/last_elr None print as N/A (Metadata's answers)."""

    __slots__ = ("why", "fields", "listed", "n", "text", "json")

    def __init__(self, leader, replicas, isr, adding, removing, elr, last_elr, misr: int, live, filters):
        leader = leader if leader in live else None
        rf = replication_factor(replicas, adding, removing)
        reassigning = bool(adding or removing)
        why = []
        if leader is None:
            why.append("unavailable")
        if rf - len(isr) > 0:
            why.append("under-replicated")
        if leader is None or len(isr) < misr:
            why.append("under-min-isr")
        if len(isr) == misr:
            why.append("at-min-isr")
        self.why = why
        self.listed = not filters or any(w in filters for w in why)
        self.fields = {
            "leader": leader,
            "replicas": list(replicas),
            "isr": list(isr),
            "addingReplicas": list(adding) if reassigning else None,
            "removingReplicas": list(removing) if reassigning else None,
            "elr": None if elr is None else list(elr),
            "lastKnownElr": None if last_elr is None else list(last_elr),
            "minIsr": misr,
            "flags": why,
        }
        self.n = 0
        self.text = self.json = None
