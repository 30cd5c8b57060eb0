"""`topics describe`: what `kafka-topics.sh --describe` shows, computed from an
image instead of asked of a broker (TopicCommand with the admin client and a
broker's metadata cache, Kafka 4.1 and 4.3):

- live brokers are the registered, unfenced ones (DescribeCluster's nodes); a
  leader that is not live prints as `none`, as the admin client finds no node
  for it;
- `--unavailable-partitions`: no live leader; `--under-replicated-partitions`:
  fewer ISR than the replication factor (replicas minus adding ones during a
  reassignment); `--under-min-isr-partitions`: no live leader or ISR below
  min.insync.replicas; `--at-min-isr-partitions`: ISR equal to it;
  several filters print a partition that any of them selects;
- min.insync.replicas is the topic's, else the cluster-wide dynamic broker
  config, else the given server.properties', else 1;
- `--topic` is a Java regex matched against the whole name (commas are `|`);
- the order of topics is the admin client's: its result maps are Java
  HashMaps, so topics come in their buckets' order, not by name.
"""

from __future__ import annotations

import functools
import re

from ..config import topic as topic_config
from ..errors import InputError
from .model import ADDING, ELR, ISR, LAST_ELR, LEADER, REMOVING, REPLICAS, TOPIC_CONFIG, Image, \
    cyclic_gc_paused

FILTERS = ("unavailable", "under-replicated", "under-min-isr", "at-min-isr")
BROKER_CONFIG = 4   # ConfigResource.Type.BROKER; the cluster-wide default is the resource named ""


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


def admin_topic_order(names: list[str]) -> list[str]:
    """describeTopics(names).allTopicNames(): sorted names into HashMap(n), copied
    into a new HashMap, read into HashMap(n)."""
    n = len(names)
    return hashmap_order(sorted(names), hashmap_capacity(n, sized=n), hashmap_capacity(n, copy=True),
                         hashmap_capacity(n, sized=n))


# -- the describe -------------------------------------------------------------------------

def topic_regex(text: str) -> re.Pattern:
    """TopicFilter.IncludeList: trimmed, commas as alternatives, spaces and outer quotes dropped."""
    raw = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", text.strip().replace(",", "|").replace(" ", "")))
    try:
        return re.compile(raw)
    except re.error as e:
        raise InputError(f"--topic {text!r}: {raw} is an invalid regex ({e})") from None


def topic_configs(img: Image, name: str, static: dict) -> list[tuple[str, str, str]]:
    """(name, value, source) of the topic's configs that are not Kafka's defaults, in the
    order kafka-topics prints them (the admin client's Config is a HashMap)."""
    own = img.configs.get((TOPIC_CONFIG, name), {})
    cluster = img.configs.get((BROKER_CONFIG, ""), {})
    # the broker lists keys it does not define (originals) first, then its defined ones in
    # definition order (ties in a bucket keep that order through every map on the way)
    names = sorted(set(own) - set(topic_config.NAMES)) + list(topic_config.NAMES)
    out = []
    for k in hashmap_order(names, hashmap_capacity(len(names))):
        e = topic_config.effective(k, own, cluster, static)
        if e is not None:
            out.append((k, e[0], e[1]))
    return out


def min_isr(configs: list[tuple[str, str, str]]) -> int:
    for k, v, _ in configs:
        if k == topic_config.MIN_INSYNC_REPLICAS:
            try:
                return int(v)
            except ValueError:
                break
    return topic_config.DEFAULT_MIN_INSYNC_REPLICAS


def _replication_factor(p: tuple) -> int:
    """TopicCommand.getReplicationFactor: during a reassignment, replicas minus adding."""
    changing = set(p[ADDING]) | set(p[REMOVING])
    if changing & set(p[REPLICAS]):
        return len(p[REPLICAS]) - len(p[ADDING])
    return len(p[REPLICAS])


class Listed:
    """What describe shows of one distinct partition tuple at one min.insync.replicas:
    its flags and its fields (a partition's JSON without its id). Partitions with the
    same tuple share one (a big cluster's tuples repeat: the 256 k snapshot has 2), so
    each is rendered once; `text` and `json` are the renderers' cache of it."""
    __slots__ = ("why", "fields", "listed", "n", "text", "json")

    def __init__(self, p: tuple, misr: int, live, filters):
        leader = p[LEADER] if p[LEADER] in live else None
        rf = _replication_factor(p)
        reassigning = bool(p[ADDING] or p[REMOVING])
        why = []
        if leader is None:
            why.append("unavailable")
        if rf - len(p[ISR]) > 0:
            why.append("under-replicated")
        if leader is None or len(p[ISR]) < misr:
            why.append("under-min-isr")
        if len(p[ISR]) == misr:
            why.append("at-min-isr")
        self.why = why
        self.listed = not filters or any(w in filters for w in why)
        self.fields = {"leader": leader, "replicas": list(p[REPLICAS]), "isr": list(p[ISR]),
                       "addingReplicas": list(p[ADDING]) if reassigning else None,
                       "removingReplicas": list(p[REMOVING]) if reassigning else None,
                       "elr": list(p[ELR]), "lastKnownElr": list(p[LAST_ELR]), "minIsr": misr, "flags": why}
        self.n = 0
        self.text = self.json = None


_MEMO_CAP = 1 << 16     # distinct tuples kept at once: the memo stays small when every tuple differs


class Described:
    """describe's topics, computed as they are iterated (for the renderers that write
    them topic by topic: a million partitions as dicts were a GB): each item is the
    topic's JSON without its partitions, and its listed partitions as (id, Listed).
    `summary` is complete once the iteration ends. `streams_topics` marks it for
    render.topics (render does not import image)."""
    streams_topics = True

    def __init__(self, img: Image, names: list[str], live: set, static: dict, filters: tuple[str, ...]):
        self.img, self.names, self.live, self.static, self.filters = img, names, live, static, filters
        self.summary: dict | None = None

    def __iter__(self):
        img, live, filters = self.img, self.live, self.filters
        counts = dict.fromkeys(FILTERS, 0)
        memos: dict[int, dict] = {}
        n_topics = total = listed = 0

        def fold(memo: dict) -> None:
            for info in memo.values():
                for w in info.why:
                    counts[w] += info.n
                info.n = 0

        with cyclic_gc_paused():     # (held while the caller writes each yielded topic)
            for name in admin_topic_order(self.names):
                t = img.topics[img.topic_ids[name]]
                configs = topic_configs(img, name, self.static)
                misr = min_isr(configs)
                memo = memos.get(misr)
                if memo is None or len(memo) > _MEMO_CAP:
                    if memo is not None:
                        fold(memo)
                    memo = memos[misr] = {}
                rows = []
                parts = t.partitions
                for pid in sorted(parts):
                    p = parts[pid]
                    info = memo.get(p)
                    if info is None:
                        info = memo[p] = Listed(p, misr, live, filters)
                    info.n += 1
                    if info.listed:
                        rows.append((pid, info))
                rf = _replication_factor(parts[min(parts)]) if parts else 0
                n_topics += 1
                total += len(parts)
                listed += len(rows)
                yield ({"topic": name, "topicId": t.id, "partitionCount": len(parts), "replicationFactor": rf,
                        "configs": [{"name": k, "value": v, "source": s} for k, v, s in configs]}, rows)
            for memo in memos.values():
                fold(memo)
            self.summary = {"topics": n_topics, "partitions": total, "listed": listed, **counts}


def describe(img: Image, *, topic: str | None = None, filters: tuple[str, ...] = (),
             static: dict | None = None, lazy: bool = False) -> dict:
    """The topics (all, or those --topic matches) with their partitions as kafka-topics
    --describe shows them; with filters, only the partitions any filter selects (and no
    topic lines, as Kafka). A --topic that matches nothing is an error, as Kafka's.
    `lazy`: "topics" is a Described (the renderers stream it and fill "summary")."""
    static = static or {}
    bad = [f for f in filters if f not in FILTERS]
    if bad:
        raise InputError(f"unknown filter {bad[0]} (one of {', '.join(FILTERS)})")
    live = {bid for bid, b in img.brokers.items() if not b["fenced"]}
    names = sorted(img.topic_ids)
    if topic is not None:
        rx = topic_regex(topic)
        names = [n for n in names if rx.fullmatch(n)]
        if not names and topic:
            raise InputError(f"Topic '{topic}' does not exist as expected")
    stream = Described(img, names, live, static, tuple(filters))
    head = {"filters": list(filters), "liveBrokers": sorted(live), "registeredBrokers": sorted(img.brokers)}
    if lazy:
        return {**head, "topics": stream, "summary": None}
    topics = [{**t, "partitions": [{"partition": pid, **info.fields} for pid, info in rows]} for t, rows in stream]
    return {**head, "topics": topics, "summary": stream.summary}


def describe_document(paths: list[str], point=None, *, topic: str | None = None, filters: tuple[str, ...] = (),
                      static: dict | None = None, lazy: bool = False) -> dict:
    """`topics describe`: replay to the point, then describe (`lazy`: see describe);
    with where the image is."""
    from .replay import Point, check_inside, open_source, replay
    from .view import point_option, provenance
    point = point or Point()
    src = open_source(paths)
    rp = replay(src, point)
    img = rp.image
    check_inside(src, point, img, point_option(point))
    note = None
    doc = describe(img, topic=topic, filters=filters, static=static, lazy=lazy)
    return {"at": provenance(img), "start": rp.describe_start(), "asked": point.describe(), "note": note,
            "logEnd": rp.end_reason, **doc}
