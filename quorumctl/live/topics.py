"""`topics describe --bootstrap-server`: kafka-topics --describe asked of a broker,
over the requests Kafka 4.3's tool makes (TopicCommand with its admin client):

- DescribeCluster: the live brokers (registered and unfenced); a leader that is
  not one of them prints as `none`, as the admin client finds no node for it;
- DescribeTopicPartitions (KIP-966), paged by its cursor at
  `--partition-size-limit-per-response` partitions an answer (2000): every
  topic (an empty topic list; Kafka lists the names with Metadata first, then
  describes them: one pass here), filtered by `--topic` and
  `--exclude-internal`; `--topic-id` is a Metadata (v10+) request by id, as
  the admin client's describeTopics(ids), whose answers have no ELR (`N/A`);
- DescribeConfigs of every listed topic (the Configs column without
  DEFAULT_CONFIG entries, in the admin client's HashMap order; min.insync.replicas);
- ListPartitionReassignments: Adding/Removing Replicas (none when the broker
  refuses it as unsupported or unauthorized, as Kafka's tool).

`partition_pages` is the paged walk alone, for describe health's counts: it
never holds more than a page.
"""

from __future__ import annotations

from collections.abc import Iterator

from dataclasses import dataclass

from ..config.topic_describe import (
    checked_options,
    FILTERS,
    Listed,
    admin_topic_order,
    hashmap_capacity,
    hashmap_order,
    is_internal,
    replication_factor,
    topic_regex,
)
from ..errors import InputError
from ..wire import kerrors, messages
from ..wire.access import ClusterAccess

TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
DEFAULT_CONFIG = 5  # ConfigEntry.ConfigSource.DEFAULT_CONFIG: what the Configs column leaves out
UNKNOWN_TOPIC_ID = 100
CONFIG_BATCH = 1000  # topics per DescribeConfigs request
MIN_INSYNC = "min.insync.replicas"


class TopicMissing(InputError):
    """--topic or --topic-id names nothing (Kafka's words; exit 2)."""


@dataclass
class Part:
    """One partition as an answer gives it (lists as tuples: states repeat and are memoised)."""

    index: int
    leader: int
    replicas: tuple
    isr: tuple
    elr: tuple | None
    last_elr: tuple | None
    error: int = 0


def _tuple(x):
    return None if x is None else tuple(x)


def partition_pages(conn, names: list[str] | None = None, limit: int = 2000):
    """DescribeTopicPartitions, page by page: yields each answer's topics (dicts as
    decoded) in name order; `names` None means every topic. A topic cut by the page
    limit continues in the next page (the cursor names it and its next partition)."""
    topics = [] if names is None else [{"name": n} for n in sorted(names)]
    cursor = None
    while True:
        body = {"topics": topics, "responsePartitionLimit": limit, "cursor": cursor}
        if names is not None and cursor is not None:
            # the broker wants the cursor's topic in the list: the ones before it are done
            body["topics"] = [t for t in topics if t["name"] >= cursor["topicName"]]
        _, resp = conn.request(messages.DESCRIBE_TOPIC_PARTITIONS, body)
        yield resp["topics"]
        cursor = resp.get("nextCursor")
        if cursor is None:
            return


def _check(code: int, message, conn, api: str) -> None:
    if code:
        raise kerrors.KafkaError(code, message, conn.name, api)


def _parts_of(t: dict) -> list[Part]:
    return [
        Part(
            p["partitionIndex"],
            p["leaderId"],
            tuple(p["replicaNodes"]),
            tuple(p["isrNodes"]),
            _tuple(p.get("eligibleLeaderReplicas")),
            _tuple(p.get("lastKnownElr")),
            p["errorCode"],
        )
        for p in t["partitions"]
    ]


def _by_names(conn, topic: str | None, exclude_internal: bool, limit: int) -> dict[str, tuple[str, list[Part]]]:
    """name -> (topic id, partitions) of the topics --topic and --exclude-internal select."""
    rx = topic_regex(topic) if topic is not None else None
    out: dict[str, tuple[str, list[Part]]] = {}
    for page in partition_pages(conn, None, limit):
        for t in page:
            name = t["name"]
            if t["errorCode"]:
                # every topic was asked for: a topic we may not describe is left out, as listTopics does
                if t["errorCode"] == kerrors.UNKNOWN_TOPIC_OR_PARTITION or t["errorCode"] == 29:
                    continue
                _check(t["errorCode"], None, conn, "DescribeTopicPartitions")
            if exclude_internal and is_internal(name):
                continue
            if rx is not None and not rx.fullmatch(name):
                continue
            have = out.get(name)
            if have is None:
                out[name] = (t["topicId"], _parts_of(t))
            else:
                have[1].extend(_parts_of(t))
    return out


def _by_id(conn, topic_id: str, exclude_internal: bool) -> dict[str, tuple[str, list[Part]]]:
    """describeTopics(ids): Metadata by topic id (v10+); its partitions have no ELR."""
    version, resp = conn.request(
        messages.METADATA,
        {
            "topics": [{"topicId": topic_id, "name": None}],
            "allowAutoTopicCreation": False,
            "includeClusterAuthorizedOperations": False,
            "includeTopicAuthorizedOperations": False,
        },
        lo=10,
    )
    out = {}
    for t in resp["topics"]:
        if t["errorCode"] == UNKNOWN_TOPIC_ID or (exclude_internal and t.get("isInternal")):
            continue
        _check(t["errorCode"], None, conn, "Metadata")
        parts = [
            Part(
                p["partitionIndex"],
                p["leaderId"],
                tuple(p["replicaNodes"]),
                tuple(p["isrNodes"]),
                None,
                None,
                p["errorCode"],
            )
            for p in t["partitions"]
        ]
        out[t["name"]] = (t["topicId"], parts)
    return out


def topic_configs(conn, names: list[str]) -> dict[str, tuple[list[tuple[str, str, int]], int]]:
    """name -> (the non-default configs as (name, value, source) in kafka-topics' order,
    min.insync.replicas), from DescribeConfigs in batches."""
    out = {}
    for i in range(0, len(names), CONFIG_BATCH):
        batch = names[i : i + CONFIG_BATCH]
        _, resp = conn.request(
            messages.DESCRIBE_CONFIGS,
            {
                "resources": [
                    {"resourceType": TOPIC_RESOURCE, "resourceName": n, "configurationKeys": None} for n in batch
                ],
                "includeSynonyms": False,
                "includeDocumentation": False,
            },
        )
        for r in resp["results"]:
            _check(r["errorCode"], r.get("errorMessage"), conn, f"DescribeConfigs of topic {r['resourceName']}")
            entries = {c["name"]: c for c in r["configs"]}
            # Config's entries are a HashMap filled in the answer's order
            order = hashmap_order(list(entries), hashmap_capacity(len(entries)))
            shown = [
                (k, "null" if entries[k]["value"] is None else entries[k]["value"], entries[k].get("configSource", -1))
                for k in order
                if entries[k].get("configSource", -1) != DEFAULT_CONFIG
            ]
            misr_entry = entries.get(MIN_INSYNC)
            try:
                misr = int(misr_entry["value"]) if misr_entry else 1
            except (TypeError, ValueError):
                misr = 1
            out[r["resourceName"]] = (shown, misr)
    return out


def reassignments(conn) -> dict[tuple[str, int], tuple[tuple, tuple, tuple]]:
    """(topic, partition) -> (replicas, adding, removing) of every ongoing reassignment."""
    if not conn.supports(messages.LIST_PARTITION_REASSIGNMENTS):
        return {}
    _, resp = conn.request(messages.LIST_PARTITION_REASSIGNMENTS, {"timeoutMs": 60000, "topics": None})
    if resp["errorCode"] in (kerrors.UNSUPPORTED_VERSION, kerrors.CLUSTER_AUTHORIZATION_FAILED):
        return {}
    _check(resp["errorCode"], resp.get("errorMessage"), conn, "ListPartitionReassignments")
    return {
        (t["name"], p["partitionIndex"]): (
            tuple(p["replicas"]),
            tuple(p["addingReplicas"]),
            tuple(p["removingReplicas"]),
        )
        for t in resp["topics"]
        for p in t["partitions"]
    }


SOURCES = {
    1: "TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
}


class LiveDescribed:
    """The described topics in kafka-topics' order, computed as they are iterated: each
    item is the topic's JSON without its partitions and its listed partitions as
    (id, Listed), the contract of image.topics.Described (render.topics streams either).
    `summary` is complete once the iteration ends."""

    streams_topics = True

    def __init__(self, order, found, configs, moving, live, filters, overrides) -> None:
        self.order, self.found, self.configs, self.moving = order, found, configs, moving
        self.live, self.filters, self.overrides = live, filters, overrides
        self.summary: dict | None = None

    def __iter__(self) -> Iterator[tuple[dict, list]]:
        counts = dict.fromkeys(FILTERS, 0)
        memo: dict = {}
        n_topics = total = listed = 0
        for name in self.order:
            tid, parts = self.found[name]
            shown, misr = self.configs.get(name, ([], 1))
            if self.overrides and not shown:
                continue
            parts = sorted(parts, key=lambda p: p.index)
            rows = []
            for p in parts:
                ra = self.moving.get((name, p.index))
                adding, removing = (ra[1], ra[2]) if ra else ((), ())
                key = (p.leader, p.replicas, p.isr, adding, removing, p.elr, p.last_elr, misr)
                info = memo.get(key)
                if info is None:
                    if len(memo) > 1 << 16:
                        memo.clear()
                    info = memo[key] = Listed(
                        p.leader, p.replicas, p.isr, adding, removing, p.elr, p.last_elr, misr, self.live, self.filters
                    )
                for w in info.why:
                    counts[w] += 1
                if info.listed and not self.overrides:
                    rows.append((p.index, info))
            first = parts[0] if parts else None
            if first is not None:
                ra = self.moving.get((name, first.index))
                rf = replication_factor(ra[0] if ra else first.replicas, ra[1] if ra else (), ra[2] if ra else ())
            else:
                rf = 0
            n_topics += 1
            total += len(parts)
            listed += len(rows)
            yield (
                {
                    "topic": name,
                    "topicId": tid,
                    "partitionCount": len(parts),
                    "replicationFactor": rf,
                    "configs": [{"name": k, "value": v, "source": SOURCES.get(s, str(s))} for k, v, s in shown],
                },
                rows,
            )
        self.summary = {"topics": n_topics, "partitions": total, "listed": listed, **counts}


def describe(
    access: ClusterAccess,
    timeout: float | None,
    *,
    topic: str | None = None,
    topic_id: str | None = None,
    exclude_internal: bool = False,
    filters: tuple[str, ...] = (),
    overrides: bool = False,
    if_exists: bool = False,
    page: int = 2000,
) -> dict:
    """The document `topics describe` renders (its "topics" a LiveDescribed, its
    "summary" filled once they are read), asked of the brokers."""
    use_id = checked_options(filters, topic_id)
    client = access.connect(timeout)
    with client:
        conn = client.bootstrap_connection()
        info = client.cluster_info()
        live = set(info.nodes)
        if use_id is not None:
            found = _by_id(conn, use_id, exclude_internal)
            if not found and not if_exists:
                raise TopicMissing(f"TopicId '{use_id}' does not exist as expected")
            order = list(found)
        else:
            found = _by_names(conn, topic, exclude_internal, page)
            if not found and topic and not if_exists:
                raise TopicMissing(f"Topic '{topic}' does not exist as expected")
            order = admin_topic_order(sorted(found))
        configs = topic_configs(conn, sorted(found)) if found else {}
        moving = reassignments(conn) if found else {}
    stream = LiveDescribed(order, found, configs, moving, live, tuple(filters), overrides)
    return {
        "source": conn.name,
        "clusterId": info.cluster_id,
        "filters": list(filters),
        "overrides": overrides,
        "liveBrokers": sorted(live),
        "topics": stream,
        "summary": None,
    }
