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

from collections.abc import Iterator

from ..config import topic as topic_config
from ..config.topic_describe import (
    checked_options,
    FILTERS,
    Listed,
    admin_topic_order,
    hashmap_capacity,
    hashmap_order,
    is_internal,
    java_hash,  # noqa: F401 (re-exported)
    replication_factor,
    topic_regex,
)
from ..errors import InputError
from .model import ADDING, ELR, ISR, LAST_ELR, LEADER, REMOVING, REPLICAS, TOPIC_CONFIG, Image, cyclic_gc_paused

BROKER_CONFIG = 4  # ConfigResource.Type.BROKER; the cluster-wide default is the resource named ""


# -- the describe -------------------------------------------------------------------------


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


_MEMO_CAP = 1 << 16  # distinct tuples kept at once: the memo stays small when every tuple differs


class Described:
    """describe's topics, computed as they are iterated (for the renderers that write
    them topic by topic: a million partitions as dicts were a GB): each item is the
    topic's JSON without its partitions, and its listed partitions as (id, Listed).
    `summary` is complete once the iteration ends. `streams_topics` marks it for
    render.topics (render does not import image)."""

    streams_topics = True

    def __init__(
        self,
        img: Image,
        names: list[str],
        live: set,
        static: dict,
        filters: tuple[str, ...],
        overrides: bool = False,
        by_id: bool = False,
    ):
        self.img, self.names, self.live, self.static, self.filters = img, names, live, static, filters
        # --topics-with-overrides: only topics with a non-default config, no partitions;
        # by_id (--topic-id): the admin client describes by id with Metadata, which has no ELR
        self.overrides, self.by_id = overrides, by_id
        self.summary: dict | None = None

    def __iter__(self) -> Iterator[tuple[dict, list]]:
        img, live, filters = self.img, self.live, self.filters
        counts = dict.fromkeys(FILTERS, 0)
        memos: dict[int, dict] = {}
        n_topics = total = listed = 0

        def fold(memo: dict) -> None:
            for info in memo.values():
                for w in info.why:
                    counts[w] += info.n
                info.n = 0

        with cyclic_gc_paused():  # (held while the caller writes each yielded topic)
            no_elr = self.by_id
            for name in self.names if self.by_id else admin_topic_order(self.names):
                t = img.topics[img.topic_ids[name]]
                configs = topic_configs(img, name, self.static)
                if self.overrides and not configs:
                    continue
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
                        info = memo[p] = Listed(
                            p[LEADER],
                            p[REPLICAS],
                            p[ISR],
                            p[ADDING],
                            p[REMOVING],
                            None if no_elr else p[ELR],
                            None if no_elr else p[LAST_ELR],
                            misr,
                            live,
                            filters,
                        )
                    info.n += 1
                    if info.listed and not self.overrides:
                        rows.append((pid, info))
                first = parts[min(parts)] if parts else None
                rf = replication_factor(first[REPLICAS], first[ADDING], first[REMOVING]) if first is not None else 0
                n_topics += 1
                total += len(parts)
                listed += len(rows)
                yield (
                    {
                        "topic": name,
                        "topicId": t.id,
                        "partitionCount": len(parts),
                        "replicationFactor": rf,
                        "configs": [{"name": k, "value": v, "source": s} for k, v, s in configs],
                    },
                    rows,
                )
            for memo in memos.values():
                fold(memo)
            self.summary = {"topics": n_topics, "partitions": total, "listed": listed, **counts}


def describe(
    img: Image,
    *,
    topic: str | None = None,
    filters: tuple[str, ...] = (),
    static: dict | None = None,
    lazy: bool = False,
    topic_id: str | None = None,
    exclude_internal: bool = False,
    overrides: bool = False,
    if_exists: bool = False,
) -> dict:
    """The topics (all, or those --topic or --topic-id selects, without the internal ones
    with exclude_internal) with their partitions as kafka-topics --describe shows them;
    with filters, only the partitions any filter selects (and no topic lines, as Kafka);
    with overrides, only the topic lines of topics with a non-default config. A --topic
    or --topic-id that selects nothing is an error unless if_exists, as Kafka's.
    `lazy`: "topics" is a Described (the renderers stream it and fill "summary")."""
    static = static or {}
    use_id = checked_options(filters, topic_id)
    live = {bid for bid, b in img.brokers.items() if not b["fenced"]}
    names = sorted(n for n in img.topic_ids if not (exclude_internal and is_internal(n)))
    if use_id is not None:
        names = [n for n in names if img.topic_ids[n] == use_id]
        if not names and not if_exists:
            raise InputError(f"TopicId '{use_id}' does not exist as expected")
    elif topic is not None:
        rx = topic_regex(topic)
        names = [n for n in names if rx.fullmatch(n)]
        if not names and topic and not if_exists:
            raise InputError(f"Topic '{topic}' does not exist as expected")
    stream = Described(img, names, live, static, tuple(filters), overrides, use_id is not None)
    head = {
        "filters": list(filters),
        "overrides": overrides,
        "liveBrokers": sorted(live),
        "registeredBrokers": sorted(img.brokers),
    }
    if lazy:
        return {**head, "topics": stream, "summary": None}
    topics = [{**t, "partitions": [{"partition": pid, **info.fields} for pid, info in rows]} for t, rows in stream]
    return {**head, "topics": topics, "summary": stream.summary}


def describe_document(
    paths: list[str],
    point=None,
    *,
    topic: str | None = None,
    filters: tuple[str, ...] = (),
    static: dict | None = None,
    lazy: bool = False,
    **options,
) -> dict:
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
    doc = describe(img, topic=topic, filters=filters, static=static, lazy=lazy, **options)
    return {
        "at": provenance(img),
        "start": rp.describe_start(),
        "asked": point.describe(),
        "note": note,
        "logEnd": rp.end_reason,
        **doc,
    }
