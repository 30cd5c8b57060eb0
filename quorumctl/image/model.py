"""The cluster metadata image and how each metadata record changes it.

The semantics follow Kafka's `org.apache.kafka.image` package (MetadataDelta
and the *Delta/*Image classes, checked against 3.9.0 and 4.1.0):

- TopicRecord makes a new topic with no partitions (replacing one with that
  id); RemoveTopicRecord drops it with its partitions and its topic configs.
- PartitionRecord replaces a partition; PartitionChangeRecord merges into it
  (PartitionRegistration.merge): each present field replaces the old one,
  Leader -2 means "no change", any other leader value bumps the leader epoch,
  every change bumps the partition epoch, LeaderRecoveryState -1 keeps the old
  one, directories that are all MIGRATING (or absent) read as MIGRATING.
- ClearElrRecord empties ELR and last known ELR by a merge (partition epoch + 1).
- RegisterBrokerRecord replaces a registration, UnregisterBroker drops it,
  Fence/Unfence set `fenced`, BrokerRegistrationChange applies its int8 deltas
  (fenced 1 fence / -1 unfence / 0 none, inControlledShutdown 1 set / 0 none)
  and a non-empty LogDirs. A record naming a broker that is not registered, or
  with another broker epoch, is what Kafka refuses (IllegalStateException):
  here it is counted as a problem and skipped.
- ConfigRecord with a null value deletes the key; a resource with no keys left
  is gone. FeatureLevelRecord level 0 removes a feature (metadata.version is
  never removed). ClientQuotaRecord with Remove drops the key.
- SCRAM credentials keep mechanism and iterations only: salt, stored key and
  server key are never kept, so they cannot be printed. Delegation tokens keep
  owner, requester, renewers and times (the record holds no HMAC).
- Records between BeginTransaction and End/AbortTransaction are applied at the
  end (or dropped on abort), as Kafka's MetadataLoader does.

Every value stored in the image is replaced, never mutated (partitions are
tuples, registrations and config maps new dicts on change): `copy()` is a
shallow copy of the maps, which `diff` uses to keep the "from" image cheaply.
"""

from __future__ import annotations

import gc
from collections import Counter
from contextlib import contextmanager
from typing import Any, Protocol

from ..ids import DIRECTORY_MIGRATING
from ..records import types as rt
from ..records.types import TRANSACTION_RECORDS


class Observer(Protocol):
    """What Image.replay asks of its observer (image/history.Watcher is the one there
    is; history imports this module, so the shape is named here, not imported back)."""

    observes_every_record: bool

    def hot_filter(self) -> tuple[set, str | None, bool]: ...

    def __call__(self, image: Any, api_key: int, data: Any, offset: Any, timestamp: Any, epoch: Any, /) -> None: ...


@contextmanager
def cyclic_gc_paused():
    """Python's cyclic garbage collector off for a while: an image holds millions of
    small acyclic tuples, and each full collection walks every one of them again (at a
    million partitions it dominated replay). Replay and topics describe make no cycles."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# Partition tuple layout (a tuple: 60k partitions cost a few MB, not tens).
REPLICAS, ISR, REMOVING, ADDING, LEADER, RECOVERY, LEADER_EPOCH, PARTITION_EPOCH, DIRS, ELR, LAST_ELR = range(11)
MIGRATING = DIRECTORY_MIGRATING
NO_LEADER_CHANGE = -2

# ConfigResource.Type ids (ConfigRecord.ResourceType)
CONFIG_TYPES = {2: "topic", 4: "broker", 8: "broker-logger", 16: "client-metrics", 32: "group"}
CONFIG_TYPE_IDS = {v: k for k, v in CONFIG_TYPES.items()}
TOPIC_CONFIG = 2
ZK_MIGRATION_STATES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION"}
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
# AclBinding enums (org.apache.kafka.common.acl / resource), as Kafka names them
ACL_RESOURCE_TYPES = {
    0: "UNKNOWN",
    1: "ANY",
    2: "TOPIC",
    3: "GROUP",
    4: "CLUSTER",
    5: "TRANSACTIONAL_ID",
    6: "DELEGATION_TOKEN",
    7: "USER",
}
ACL_PATTERN_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}
ACL_OPERATIONS = {
    0: "UNKNOWN",
    1: "ANY",
    2: "ALL",
    3: "READ",
    4: "WRITE",
    5: "CREATE",
    6: "DELETE",
    7: "ALTER",
    8: "DESCRIBE",
    9: "CLUSTER_ACTION",
    10: "DESCRIBE_CONFIGS",
    11: "ALTER_CONFIGS",
    12: "IDEMPOTENT_WRITE",
    13: "CREATE_TOKENS",
    14: "DESCRIBE_TOKENS",
    15: "TWO_PHASE_COMMIT",
}
ACL_PERMISSIONS = {0: "UNKNOWN", 1: "ANY", 2: "DENY", 3: "ALLOW"}

TRANSACTION_KEYS = frozenset((23, 24, 25))  # Begin/End/AbortTransaction
MAX_PROBLEMS = 100  # problems kept word for word; the rest are counted


class Topic:
    __slots__ = ("name", "id", "partitions")

    def __init__(self, name: str, topic_id: str, partitions: dict | None = None):
        self.name = name
        self.id = topic_id
        self.partitions = {} if partitions is None else partitions


def _t(v):
    return () if v is None else tuple(v)


def _dirs(dirs, n: int) -> tuple:
    """PartitionRegistration.defaultToMigrating: absent or all-MIGRATING -> n x MIGRATING."""
    if not dirs or all(d == MIGRATING for d in dirs):
        return (MIGRATING,) * n
    return tuple(dirs)


def partition_from_record(d: dict) -> tuple:
    replicas = _t(d.get("replicas"))
    return (
        replicas,
        _t(d.get("isr")),
        _t(d.get("removingReplicas")),
        _t(d.get("addingReplicas")),
        d.get("leader", -1),
        d.get("leaderRecoveryState", 0),
        d.get("leaderEpoch", -1),
        d.get("partitionEpoch", -1),
        _dirs(d.get("directories"), len(replicas)),
        _t(d.get("eligibleLeaderReplicas")),
        _t(d.get("lastKnownElr")),
    )


def merge_partition(p: tuple, d: dict) -> tuple:
    """PartitionRegistration.merge(PartitionChangeRecord)."""
    g = d.get
    replicas = p[REPLICAS] if (v := g("replicas")) is None else tuple(v)
    dirs = g("directories")
    leader = g("leader", NO_LEADER_CHANGE)
    recovery = g("leaderRecoveryState", -1)
    return (
        replicas,
        p[ISR] if (v := g("isr")) is None else tuple(v),
        p[REMOVING] if (v := g("removingReplicas")) is None else tuple(v),
        p[ADDING] if (v := g("addingReplicas")) is None else tuple(v),
        p[LEADER] if leader == NO_LEADER_CHANGE else leader,
        p[RECOVERY] if recovery == -1 else recovery,
        p[LEADER_EPOCH] if leader == NO_LEADER_CHANGE else p[LEADER_EPOCH] + 1,
        p[PARTITION_EPOCH] + 1,
        _dirs(p[DIRS] if dirs is None else dirs, len(replicas)),
        p[ELR] if (v := g("eligibleLeaderReplicas")) is None else tuple(v),
        p[LAST_ELR] if (v := g("lastKnownElr")) is None else tuple(v),
    )


def partition_json(p: tuple) -> dict:
    return {
        "replicas": list(p[REPLICAS]),
        "isr": list(p[ISR]),
        "removingReplicas": list(p[REMOVING]),
        "addingReplicas": list(p[ADDING]),
        "leader": p[LEADER],
        "leaderRecoveryState": RECOVERY_STATES.get(p[RECOVERY], p[RECOVERY]),
        "leaderEpoch": p[LEADER_EPOCH],
        "partitionEpoch": p[PARTITION_EPOCH],
        "directories": list(p[DIRS]),
        "eligibleLeaderReplicas": list(p[ELR]),
        "lastKnownElr": list(p[LAST_ELR]),
    }


def _endpoints(eps) -> list:
    # a map keyed by listener name in Kafka's registrations: its order means nothing
    return sorted(f"{e['name']}://{e['host']}:{e['port']}" for e in eps or ())


def _features(fs) -> dict:
    return {f["name"]: [f["minSupportedVersion"], f["maxSupportedVersion"]] for f in fs or ()}


def quota_entity(entity) -> str:
    """A client quota entity as Kafka's ClientQuotaEntity prints: type=name pairs
    sorted by type, <default> for the default entity."""
    parts = sorted((e["entityType"], e["entityName"]) for e in entity)
    return ",".join(f"{t}={'<default>' if n is None else n}" for t, n in parts)


class Image:
    """One cluster metadata image plus where it is (provenance) and what was odd."""

    def __init__(self) -> None:
        self.topics: dict[str, Topic] = {}  # topic id -> Topic
        self.topic_ids: dict[str, str] = {}  # name -> topic id
        self.brokers: dict[int, dict] = {}
        self.controllers: dict[int, dict] = {}
        self.configs: dict[tuple[int, str], dict] = {}
        self.quotas: dict[str, dict] = {}
        self.acls: dict[str, dict] = {}
        self.scram: dict[tuple[str, str], dict] = {}  # (mechanism, user) -> {"iterations"}
        self.tokens: dict[str, dict] = {}
        self.producer_ids: dict | None = None
        self.features: dict[str, int] = {}
        self.zk_migration_state = 0
        self.kraft_version: int | None = None
        self.voters: dict[int, dict] | None = None
        # each registration's listener name -> security protocol id, which the JSON tree leaves
        # out and the metadata shell prints (("broker" | "controller", id) -> {name: protocol})
        self.protocols: dict[tuple[str, int], dict[str, int]] = {}
        # provenance: the last record applied
        self.offset = -1
        self.epoch = -1
        self.timestamp = -1
        self.leader: dict | None = None  # last LeaderChange: {"leaderId","epoch"}
        self.records = 0  # metadata records applied (or buffered)
        self.unknown: Counter = Counter()  # "api key N vV" -> count
        self.problem_count = 0
        self.problems: list[str] = []
        self.pending: list | None = None  # records of an open transaction
        self.pending_since = -1
        # history's hook: called instead of applying, as observer(image, api_key, data, offset,
        # timestamp, epoch); it applies the record with apply_record and compares before/after
        self.observer: Observer | None = None

    # -- bookkeeping ----------------------------------------------------------------

    def problem(self, offset: int, text: str) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"offset {offset}: {text}")

    def copy(self) -> "Image":
        """A copy sharing the (never mutated) values: maps copied, values not."""
        c = Image.__new__(Image)
        c.__dict__.update(self.__dict__)
        c.topics = {tid: Topic(t.name, t.id, dict(t.partitions)) for tid, t in self.topics.items()}
        for name in (
            "topic_ids",
            "brokers",
            "controllers",
            "configs",
            "quotas",
            "acls",
            "scram",
            "tokens",
            "features",
            "protocols",
        ):
            setattr(c, name, dict(getattr(self, name)))
        c.voters = None if self.voters is None else dict(self.voters)
        c.unknown = Counter(self.unknown)
        c.problems = list(self.problems)
        c.pending = None if self.pending is None else list(self.pending)
        c.observer = None
        return c

    # -- replay -----------------------------------------------------------------------

    def replay(self, api_key: int, d: dict, offset: int) -> None:
        """Apply one decoded metadata record (or buffer it in a transaction)."""
        self.records += 1
        if api_key in TRANSACTION_RECORDS:
            self._transaction(api_key, offset)
            return
        if self.pending is not None:
            self.pending.append((api_key, d, offset, self.timestamp, self.epoch))
            return
        if self.observer is not None:
            self.observer(self, api_key, d, offset, self.timestamp, self.epoch)
            return
        fn = _APPLY.get(api_key)
        if fn is not None:
            fn(self, d, offset)

    def _transaction(self, api_key: int, offset: int) -> None:
        if api_key == rt.BEGIN_TRANSACTION_RECORD:
            if self.pending is not None:
                self.problem(offset, f"BeginTransaction inside the transaction begun at offset {self.pending_since}")
                self._commit(self.pending)
            self.pending, self.pending_since = [], offset
        elif self.pending is None:
            what = "End" if api_key == rt.END_TRANSACTION_RECORD else "Abort"
            self.problem(offset, f"{what}Transaction outside a transaction")
        elif api_key == rt.END_TRANSACTION_RECORD:
            self._commit(self.pending)
        else:
            self.pending = None

    def _commit(self, pending: list) -> None:
        """Apply the transaction's buffered records (`pending`, which it ends)."""
        self.pending = None
        for api_key, d, offset, ts, epoch in pending:
            if self.observer is not None:
                self.observer(self, api_key, d, offset, ts, epoch)
                continue
            fn = _APPLY.get(api_key)
            if fn is not None:
                fn(self, d, offset)

    def unknown_record(self, label: str) -> None:
        self.unknown[label] += 1

    # -- control records ---------------------------------------------------------------

    def leader_change(self, d: dict) -> None:
        self.leader = {"leaderId": d.get("leaderId"), "epoch": self.epoch}

    def set_kraft_version(self, d: dict) -> None:
        self.kraft_version = d.get("kRaftVersion")

    def set_voters(self, d: dict) -> None:
        self.voters = {
            v["voterId"]: {
                "directoryId": v.get("voterDirectoryId"),
                "endpoints": _endpoints(v.get("endpoints")),
                "kraftVersion": [
                    v["kRaftVersionFeature"]["minSupportedVersion"],
                    v["kRaftVersionFeature"]["maxSupportedVersion"],
                ]
                if v.get("kRaftVersionFeature")
                else None,
            }
            for v in d.get("voters", ())
        }

    # -- lookups --------------------------------------------------------------------------

    def topic(self, name: str) -> Topic | None:
        tid = self.topic_ids.get(name)
        return None if tid is None else self.topics.get(tid)

    @property
    def metadata_version(self) -> int | None:
        return self.features.get("metadata.version")

    def partition_count(self) -> int:
        return sum(len(t.partitions) for t in self.topics.values())


# -- one function per record type -------------------------------------------------------


def _protocols(eps) -> dict[str, int]:
    return {e["name"]: e.get("securityProtocol", -1) for e in eps or ()}


def _register_broker(img: Image, d, off):
    img.protocols[("broker", d["brokerId"])] = _protocols(d.get("endPoints"))
    img.brokers[d["brokerId"]] = {
        "epoch": d["brokerEpoch"],
        "incarnationId": d["incarnationId"],
        "listeners": _endpoints(d.get("endPoints")),
        "supportedFeatures": _features(d.get("features")),
        "rack": d.get("rack"),
        "fenced": d.get("fenced", True),
        "inControlledShutdown": d.get("inControlledShutdown", False),
        "isMigratingZkBroker": d.get("isMigratingZkBroker", False),
        "directories": sorted(d.get("logDirs") or ()),
    }
    if d.get("cordonedLogDirs") is not None:  # KIP-1066 (4.3): absent until the broker says
        img.brokers[d["brokerId"]]["cordonedDirectories"] = list(d["cordonedLogDirs"])


def _broker_for(img: Image, bid: int, epoch: int, action: str, off: int):
    b = img.brokers.get(bid)
    if b is None:
        img.problem(off, f"{action} of broker {bid}, which is not registered (Kafka refuses this record)")
    elif b["epoch"] != epoch:
        img.problem(
            off,
            f"{action} of broker {bid} with epoch {epoch}, but its registration has epoch {b['epoch']} "
            f"(Kafka refuses this record)",
        )
        b = None
    return b


def _unregister_broker(img: Image, d, off):
    img.brokers.pop(d["brokerId"], None)
    img.protocols.pop(("broker", d["brokerId"]), None)


def _fence(fenced: bool):
    def apply(img: Image, d, off):
        b = _broker_for(img, d["id"], d["epoch"], "fence" if fenced else "unfence", off)
        if b is not None and b["fenced"] != fenced:
            img.brokers[d["id"]] = {**b, "fenced": fenced}

    return apply


def _broker_change(img: Image, d, off):
    b = _broker_for(img, d["brokerId"], d["brokerEpoch"], "change", off)
    if b is None:
        return
    new = dict(b)
    fenced = d.get("fenced", 0)
    if fenced in (1, -1):
        new["fenced"] = fenced == 1
    elif fenced != 0:
        img.problem(off, f"BrokerRegistrationChange with unknown fenced value {fenced}")
    shutdown = d.get("inControlledShutdown", 0)
    if shutdown == 1:
        new["inControlledShutdown"] = True
    elif shutdown != 0:
        img.problem(off, f"BrokerRegistrationChange with unknown inControlledShutdown value {shutdown}")
    if d.get("logDirs"):
        new["directories"] = sorted(d["logDirs"])
    if d.get("cordonedLogDirs") is not None:  # null: unchanged; a list (even empty) replaces
        new["cordonedDirectories"] = list(d["cordonedLogDirs"])
    if new != b:
        img.brokers[d["brokerId"]] = new


def _register_controller(img: Image, d, off):
    img.protocols[("controller", d["controllerId"])] = _protocols(d.get("endPoints"))
    img.controllers[d["controllerId"]] = {
        "incarnationId": d["incarnationId"],
        "zkMigrationReady": d.get("zkMigrationReady", False),
        "listeners": _endpoints(d.get("endPoints")),
        "supportedFeatures": _features(d.get("features")),
    }


def _unregister_controller(img: Image, d, off):
    img.controllers.pop(d["controllerId"], None)
    img.protocols.pop(("controller", d["controllerId"]), None)


def _topic(img: Image, d, off):
    add_topic(img, d["topicId"], d["name"])


def add_topic(img: Image, tid: str, name: str) -> None:
    old = img.topics.get(tid)
    if old is not None and old.name != name:
        img.topic_ids.pop(old.name, None)
    img.topics[tid] = Topic(name, tid)
    img.topic_ids[name] = tid


def _remove_topic(img: Image, d, off):
    remove_topic(img, d["topicId"], off)


def remove_topic(img: Image, tid: str, off: int) -> None:
    t = img.topics.pop(tid, None)
    if t is None:
        img.problem(off, f"RemoveTopic of unknown topic id {tid}")
        return
    if img.topic_ids.get(t.name) == t.id:
        del img.topic_ids[t.name]
    img.configs.pop((TOPIC_CONFIG, t.name), None)


def _partition(img: Image, d, off):
    t = img.topics.get(d["topicId"])
    if t is None:
        img.problem(off, f"PartitionRecord for unknown topic id {d['topicId']}")
        return
    t.partitions[d.get("partitionId", -1)] = partition_from_record(d)


def _partition_change(img: Image, d, off):
    t = img.topics.get(d["topicId"])
    pid = d.get("partitionId", -1)
    p = None if t is None else t.partitions.get(pid)
    if t is None or p is None:
        img.problem(off, f"PartitionChangeRecord for unknown partition {d['topicId']}:{pid}")
        return
    t.partitions[pid] = merge_partition(p, d)


def _clear_elr(img: Image, d, off):
    """ClearElrRecord (Kafka 4.0+): for one topic, or all with an empty name, each partition
    with an ELR or last known ELR is merged with both empty (TopicDelta.maybeClearElr:
    a merge, so its partition epoch goes up)."""
    name = d.get("topicName") or ""
    topic = img.topic(name) if name else None
    if name and topic is None:
        img.problem(off, f"ClearElr of unknown topic {name} (Kafka refuses this record)")
        return
    topics = list(img.topics.values()) if topic is None else [topic]
    for t in topics:
        for pid, p in t.partitions.items():
            if p[ELR] or p[LAST_ELR]:
                t.partitions[pid] = merge_partition(p, _CLEARED_ELR)


_CLEARED_ELR = {"eligibleLeaderReplicas": (), "lastKnownElr": ()}


def _config(img: Image, d, off):
    key = (d["resourceType"], d["resourceName"])
    old = img.configs.get(key, {})
    value = d.get("value")
    if value is None:
        if d["name"] not in old:
            return
        new = {k: v for k, v in old.items() if k != d["name"]}
    else:
        new = {**old, d["name"]: value}
    if new:
        img.configs[key] = new
    else:
        img.configs.pop(key, None)


def _feature(img: Image, d, off):
    name, level = d["name"], d.get("featureLevel")
    if level is None:  # the 3.0-3.2 layout: min/max levels
        level = d.get("maxFeatureLevel", 0)
    if level == 0 and name != "metadata.version":
        img.features.pop(name, None)
    else:
        img.features[name] = level


def _zk_migration(img: Image, d, off):
    img.zk_migration_state = d["zkMigrationState"]


def _client_quota(img: Image, d, off):
    entity = quota_entity(d["entity"])
    old = img.quotas.get(entity, {})
    if d.get("remove"):
        new = {k: v for k, v in old.items() if k != d["key"]}
    else:
        new = {**old, d["key"]: d["value"]}
    if new:
        img.quotas[entity] = new
    else:
        img.quotas.pop(entity, None)


def _producer_ids(img: Image, d, off):
    # ProducerIdsImage keeps the next id only: which broker took the last block is not image state
    img.producer_ids = {"nextProducerId": d["nextProducerId"]}


def _acl(img: Image, d, off):
    img.acls[d["id"]] = {
        "resourceType": ACL_RESOURCE_TYPES.get(d["resourceType"], d["resourceType"]),
        "resourceName": d["resourceName"],
        "patternType": ACL_PATTERN_TYPES.get(d["patternType"], d["patternType"]),
        "principal": d["principal"],
        "host": d["host"],
        "operation": ACL_OPERATIONS.get(d["operation"], d["operation"]),
        "permissionType": ACL_PERMISSIONS.get(d["permissionType"], d["permissionType"]),
    }


def _remove_acl(img: Image, d, off):
    if img.acls.pop(d["id"], None) is None:
        img.problem(off, f"RemoveAccessControlEntry of unknown ACL {d['id']}")


def _scram(img: Image, d, off):
    # salt, storedKey and serverKey are deliberately not kept
    mech = SCRAM_MECHANISMS.get(d["mechanism"], f"mechanism-{d['mechanism']}")
    img.scram[(mech, d["name"])] = {"iterations": d["iterations"]}


def _remove_scram(img: Image, d, off):
    mech = SCRAM_MECHANISMS.get(d["mechanism"], f"mechanism-{d['mechanism']}")
    img.scram.pop((mech, d["name"]), None)


def _token(img: Image, d, off):
    img.tokens[d["tokenId"]] = {
        "owner": d["owner"],
        "requester": d["requester"],
        "renewers": list(d.get("renewers") or ()),
        "issueTimestamp": d["issueTimestamp"],
        "maxTimestamp": d["maxTimestamp"],
        "expirationTimestamp": d["expirationTimestamp"],
    }


def _remove_token(img: Image, d, off):
    img.tokens.pop(d["tokenId"], None)


_APPLY = {
    0: _register_broker,
    1: _unregister_broker,
    2: _topic,
    3: _partition,
    4: _config,
    5: _partition_change,
    7: _fence(True),
    8: _fence(False),
    9: _remove_topic,
    10: _token,
    11: _scram,
    12: _feature,
    14: _client_quota,
    15: _producer_ids,
    17: _broker_change,
    18: _acl,
    19: _remove_acl,
    21: _zk_migration,
    22: _remove_scram,
    26: _remove_token,
    27: _register_controller,
    28: _clear_elr,
    29: _unregister_controller,
    # 20 NoOp: nothing to do
}


def apply_record(img: Image, api_key: int, d: dict, offset: int) -> None:
    """Apply one record with no transaction buffering and no observer (history uses it)."""
    fn = _APPLY.get(api_key)
    if fn is not None:
        fn(img, d, offset)
