"""Every record that touched one entity (a topic or one of its partitions, a
broker, a config resource, a feature, a voter), with offset, time, leader
epoch and what it changed, from one streaming replay.

The replay starts as early as the files allow (bootstrap + log from offset 0,
else the earliest snapshot the log continues from); a snapshot's records are
the entity's state at that point and are reported as such (offset -1).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass

from ..errors import ExitStatus, InputError, QuorumctlError
from ..records import types as rt
from ..records.metadata_schemas import TYPE_NAMES
from ..records.types import CONTROLLER_RECORDS, PARTITION_RECORDS
from .model import CONFIG_TYPE_IDS, TOPIC_CONFIG, Image, apply_record
from .replay import Point, Replay, check_inside, open_source, plan
from .view import field_changes, flatten, leaf_json


@dataclass
class Entity:
    kind: str  # topic, broker, config, feature, voter
    name: str  # topic name, broker id, "TYPE:NAME", feature name, voter id
    partition: int | None = None

    def describe(self) -> str:
        if self.kind == "topic" and self.partition is not None:
            return f"partition {self.name}-{self.partition}"
        return f"{self.kind} {self.name}"


def parse_config(text: str) -> tuple[int, str]:
    typ, sep, name = text.partition(":")
    if not sep or typ not in CONFIG_TYPE_IDS:
        raise InputError(
            f"--config-resource {text}: expected TYPE:NAME with TYPE one of {', '.join(CONFIG_TYPE_IDS)} "
            f"(e.g. topic:orders, broker:1)"
        )
    return CONFIG_TYPE_IDS[typ], name


class Watcher:
    """The observer plugged into Image.replay: applies each record, and for those
    touching the entity records the leaf paths' values before and after."""

    observes_every_record = False  # True: replay's fast path must not skip any record

    def __init__(self, entity: Entity):
        self.e = entity
        self.topic_ids: set[str] = set()
        self.entries: list[dict] = []
        self.replay: Replay | None = None  # to tell which file a record before the log came from
        if entity.kind == "config":
            self.config = parse_config(entity.name)
        if entity.kind in ("broker", "voter"):
            try:
                self.id = int(entity.name)
            except ValueError:
                raise InputError(f"--{entity.kind} {entity.name}: expected a node id (an integer)") from None

    def hot_filter(self) -> tuple[set, str | None, bool]:
        """Which records of the hot types (TopicRecord, PartitionRecord,
        PartitionChangeRecord, RemoveTopicRecord) may concern the entity, from their
        leading ids alone: (topic ids whose records may, the topic name whose
        TopicRecord may, whether every RemoveTopicRecord may). Replay's fast path
        applies the others without decoding them or calling the observer (paths()
        would return None for them). The id set is live: it grows as topics are seen."""
        e = self.e
        if e.kind == "topic":
            return self.topic_ids, e.name, False
        return set(), None, e.kind == "config" and self.config[0] == TOPIC_CONFIG

    def paths(self, img: Image, api_key: int, d: dict) -> list[str] | None:
        """The leaf paths this record may change, if it concerns the entity."""
        e = self.e
        if e.kind == "topic":
            if api_key == rt.TOPIC_RECORD and d["name"] == e.name:
                self.topic_ids.add(d["topicId"])
                return self._topic_paths(img, d["topicId"]) + [f"/topics/{e.name}"]
            if api_key in PARTITION_RECORDS and d["topicId"] in self.topic_ids:
                pid = d.get("partitionId", -1)
                if e.partition is None or pid == e.partition:
                    return [f"/topics/{e.name}/{pid}"]
                return None
            if api_key == rt.REMOVE_TOPIC_RECORD and d["topicId"] in self.topic_ids:
                return (
                    self._topic_paths(img, d["topicId"])
                    + [f"/topics/{e.name}"]
                    + self._config_paths(img, TOPIC_CONFIG, e.name)
                )
            if (
                api_key == rt.CONFIG_RECORD
                and d["resourceType"] == TOPIC_CONFIG
                and d["resourceName"] == e.name
                and e.partition is None
            ):
                return [f"/configs/topic/{e.name}/{d['name']}"]
            if api_key == rt.CLEAR_ELR_RECORD and d.get("topicName", "") in ("", e.name):
                return self._topic_paths(img, img.topic_ids.get(e.name))
            return None
        if e.kind == "broker":
            bid = d.get("brokerId", d.get("id")) if api_key in rt.BROKER_RECORDS else None
            if bid == self.id:
                return [f"/brokers/{self.id}"]
            if (
                api_key == rt.CONFIG_RECORD
                and d["resourceType"] == CONFIG_TYPE_IDS["broker"]
                and d["resourceName"] == str(self.id)
            ):
                return [f"/configs/broker/{self.id}/{d['name']}"]
            return None
        if e.kind == "config":
            typ, name = self.config
            if api_key == rt.CONFIG_RECORD and d["resourceType"] == typ and d["resourceName"] == name:
                return [f"/configs/{e.name.partition(':')[0]}/{name}/{d['name']}"]
            if api_key == rt.REMOVE_TOPIC_RECORD and typ == TOPIC_CONFIG:
                t = img.topics.get(d["topicId"])
                if t is not None and t.name == name:
                    return self._config_paths(img, typ, name)
            return None
        if e.kind == "feature":
            if api_key == rt.FEATURE_LEVEL_RECORD and d["name"] == e.name:
                return [f"/features/{e.name}"]
            return None
        if e.kind == "voter":
            if api_key in CONTROLLER_RECORDS and d["controllerId"] == self.id:
                return [f"/controllers/{self.id}"]
            return None
        return None

    def _topic_paths(self, img: Image, tid) -> list[str]:
        t = img.topics.get(tid) if tid is not None else None
        if t is None:
            return []
        return [f"/topics/{t.name}/{p}" for p in t.partitions if self.e.partition is None or p == self.e.partition]

    def _config_paths(self, img: Image, typ: int, name: str) -> list[str]:
        from .view import _config_type

        return [f"/configs/{_config_type(typ)}/{name}/{k}" for k in img.configs.get((typ, name), {})]

    def __call__(self, img: Image, api_key: int, d: dict, offset: int, ts: int, epoch: int) -> None:
        paths = self.paths(img, api_key, d)
        if paths is None:
            apply_record(img, api_key, d, offset)
            return
        before = _leaves(img, paths)
        apply_record(img, api_key, d, offset)
        after = _leaves(img, paths + [p for p in self.paths_after(img, api_key, d) if p not in paths])
        self.add(offset, ts, epoch, TYPE_NAMES.get(api_key, str(api_key)), before, after)

    def paths_after(self, img: Image, api_key: int, d: dict) -> list[str]:
        if self.e.kind == "topic" and api_key == 2 and d["name"] == self.e.name:
            return self._topic_paths(img, d["topicId"])
        return []

    def add(self, offset, ts, epoch, record, before: dict, after: dict) -> None:
        changes = []
        for path in sorted(set(before) | set(after)):
            a, b = leaf_json(path, before.get(path)), leaf_json(path, after.get(path))
            if a == b:
                continue
            c = {"path": path, "before": a, "after": b}
            fields = field_changes(a, b)
            if fields is not None:
                c["fields"] = fields
            changes.append(c)
        from ..timefmt import iso_utc

        entry = {
            "offset": offset,
            "timestamp": ts,
            "time": iso_utc(ts),
            "epoch": epoch,
            "record": record,
            "source": "log",
            "changes": changes,
        }
        step = self.replay.step if self.replay is not None else None
        if offset < 0 and step is not None and step.kind != "log":
            # bootstrap.checkpoint, or the KIP-853 bootstrap snapshot 0-0: what the cluster was
            # formatted with; another snapshot: the state it holds
            boot = step.kind == "bootstrap" or step.base_offset == 0
            entry.update(source="bootstrap" if boot else "snapshot", file=os.path.basename(step.path))
            if boot:
                entry.update(timestamp=-1, time=None, epoch=-1)
        self.entries.append(entry)

    def control(self, img: Image, kind: str, before_voters, offset: int) -> None:
        """KRaftVoters / LeaderChange control records, for --voter."""
        if self.e.kind != "voter":
            return
        if kind == "KRAFT_VOTERS":
            a = (before_voters or {}).get(self.id)
            b = (img.voters or {}).get(self.id)
            if a != b:
                self.add(offset, img.timestamp, img.epoch, kind, {f"/voters/{self.id}": a}, {f"/voters/{self.id}": b})
        elif kind == "LEADER_CHANGE" and img.leader and img.leader.get("leaderId") == self.id:
            self.add(offset, img.timestamp, img.epoch, kind, {"/leader": None}, {"/leader": dict(img.leader)})


def is_election(change: dict) -> bool:
    """A partition created, or given a leader (a new leader epoch)."""
    if not (change["path"].startswith("/topics/") and change["path"].count("/") == 3):
        return False
    if change["before"] is None:
        return change["after"] is not None
    return change["after"] is not None and "leaderEpoch" in change.get("fields", {})


def _leaves(img: Image, paths: list[str]) -> dict:
    if not paths:
        return {}
    flat = _lookup(img, paths)
    return {p: flat.get(p) for p in paths}


def _lookup(img: Image, paths: list[str]) -> dict:
    """The leaves at these paths (a targeted flatten: no walk over the whole image)."""
    out: dict[str, object] = {}
    for p in paths:
        parts = p.split("/")
        sec = parts[1]
        if sec == "topics":
            tid = img.topic_ids.get(parts[2])
            t = img.topics.get(tid) if tid else None
            if t is None:
                continue
            if len(parts) == 3:
                out[p] = {"id": t.id}
            else:
                v = t.partitions.get(int(parts[3]))
                if v is not None:
                    out[p] = v
        elif sec in ("brokers", "controllers"):
            v = getattr(img, sec).get(int(parts[2]))
            if v is not None:
                out[p] = v
        elif sec == "configs":
            typ = CONFIG_TYPE_IDS.get(parts[2])
            kv = img.configs.get((typ, parts[3]), {}) if typ is not None else {}
            if parts[4] in kv:
                out[p] = kv[parts[4]]
        elif sec == "features":
            if parts[2] in img.features:
                out[p] = img.features[parts[2]]
        else:
            v = flatten(img).get(p)
            if v is not None:
                out[p] = v
    return out


def history(paths: list[str], entity: Entity, *, until: Point | None = None) -> dict:
    src = open_source(paths)
    steps = plan(src, until, earliest=True)
    watcher = Watcher(entity)
    rp = Replay(steps)
    watcher.replay = rp
    rp.image.observer = watcher
    rp.on_control = watcher.control
    if until is None or until.time_ms is None:
        rp.use_workers()
    try:
        img = rp.run(until)
    finally:
        rp.close()
    img.observer = None
    check_inside(src, until, img, "--until")

    def topic_exists() -> bool:
        if entity.name not in img.topic_ids:
            return False
        t = img.topic(entity.name)
        return entity.partition is None or (t is not None and entity.partition in t.partitions)

    exists = {
        "topic": topic_exists,
        "broker": lambda: watcher.id in img.brokers,
        "config": lambda: watcher.config in img.configs,
        "feature": lambda: entity.name in img.features,
        "voter": lambda: watcher.id in (img.voters or {}) or watcher.id in img.controllers,
    }[entity.kind]()
    touched = [
        e
        for e in watcher.entries
        if entity.kind != "topic"
        or entity.partition is None
        or any(c["path"] == f"/topics/{entity.name}/{entity.partition}" for c in e["changes"])
    ]
    if not touched and not exists and (until is None or (until.offset is None and until.time_ms is None)):
        raise NeverExisted(
            f"{entity.describe()} never existed in {src.label} ({_span_read(src, img.offset)}){_closest(entity, img)}"
        )
    elections = sum(1 for e in watcher.entries for c in e["changes"] if is_election(c))
    return {
        "entity": {"kind": entity.kind, "name": entity.name, "partition": entity.partition},
        "start": rp.describe_start(),
        "end": {"offset": img.offset, "epoch": img.epoch, "timestamp": img.timestamp},
        "existsAtEnd": exists,
        "entries": watcher.entries,
        "leaderChanges": elections if entity.kind == "topic" else None,
        "unknownRecords": dict(sorted(img.unknown.items())),
        "problems": img.problems,
        "problemCount": img.problem_count,
        "logEnd": rp.end_reason,
    }


class NeverExisted(QuorumctlError):
    """history of an entity no record of the log touched (a typo, or another cluster's): exit 1."""

    exit_code = ExitStatus.PROBLEMS


def _span_read(src, end: int) -> str:
    """What the replay read: offsets first..end, or a snapshot with nothing after it
    (a snapshot ending at N covers offsets below N, and the log starts at N)."""
    first = _first_offset(src)
    if first <= end:
        return f"offsets {first} to {end}"
    return f"the snapshot at offset {end}, no records after it"


def _first_offset(src) -> int:
    if src.log_start is not None:
        return src.log_start
    return src.snapshots[0].end_offset if src.snapshots else 0


def _closest(entity: Entity, img: Image) -> str:
    """The names of that kind the image has that are closest to the one asked for."""
    if entity.kind == "topic":
        t = img.topic(entity.name)
        if entity.partition is not None and entity.name in img.topic_ids and t is not None:
            have = sorted(t.partitions)
            return f"; topic {entity.name} has partitions {_span(have)}" if have else ""
        names = list(img.topic_ids)
    elif entity.kind == "broker":
        names = [str(b) for b in img.brokers]
    elif entity.kind == "voter":
        names = [str(v) for v in set(img.voters or {}) | set(img.controllers)]
    elif entity.kind == "feature":
        names = list(img.features)
    else:
        from .view import _config_type

        names = [f"{_config_type(t)}:{n}" for t, n in img.configs]
    close = difflib.get_close_matches(entity.name, names, n=5, cutoff=0.5)
    if not close and entity.kind in ("broker", "voter"):
        close = sorted(names, key=int)[:5]
    if not close:
        return f"; the log has no {entity.kind} at all" if not names else ""
    return "; closest: " + ", ".join(close)


def _span(ids: list[int]) -> str:
    return (
        f"{ids[0]}-{ids[-1]}" if ids == list(range(ids[0], ids[-1] + 1)) and len(ids) > 1 else ", ".join(map(str, ids))
    )


class TimelineWatcher(Watcher):
    """Every record's changes, whatever the entity (diff --timeline): the leaf paths a
    record may change come from its type and ids, then the same before/after compare."""

    observes_every_record = True

    def __init__(self):
        super().__init__(Entity("timeline", ""))

    def paths(self, img: Image, api_key: int, d: dict) -> list[str] | None:
        from .view import _config_type
        from .model import SCRAM_MECHANISMS, quota_entity

        if api_key in rt.BROKER_RECORDS:
            return [f"/brokers/{d.get('brokerId', d.get('id'))}"]
        if api_key == rt.TOPIC_RECORD:
            old = img.topics.get(d["topicId"])
            return ([f"/topics/{old.name}"] + self._all_partitions(old) if old else []) + [f"/topics/{d['name']}"]
        if api_key in PARTITION_RECORDS:
            t = img.topics.get(d["topicId"])
            return None if t is None else [f"/topics/{t.name}/{d.get('partitionId', -1)}"]
        if api_key == rt.REMOVE_TOPIC_RECORD:
            t = img.topics.get(d["topicId"])
            if t is None:
                return None
            return [f"/topics/{t.name}"] + self._all_partitions(t) + self._config_paths(img, TOPIC_CONFIG, t.name)
        if api_key == rt.CONFIG_RECORD:
            return [f"/configs/{_config_type(d['resourceType'])}/{d['resourceName']}/{d['name']}"]
        if api_key == rt.FEATURE_LEVEL_RECORD:
            return [f"/features/{d['name']}"]
        if api_key in CONTROLLER_RECORDS:
            return [f"/controllers/{d['controllerId']}"]
        if api_key == rt.CLEAR_ELR_RECORD:
            name = d.get("topicName") or ""
            topics = list(img.topics.values()) if not name else [t for t in img.topics.values() if t.name == name]
            return [p for t in topics for p in self._all_partitions(t)]
        if api_key == rt.CLIENT_QUOTA_RECORD:
            return [f"/clientQuotas/{quota_entity(d['entity'])}/{d['key']}"]
        if api_key in (rt.ACCESS_CONTROL_ENTRY_RECORD, rt.REMOVE_ACCESS_CONTROL_ENTRY_RECORD):
            return [f"/acls/{d['id']}"]
        if api_key in (rt.USER_SCRAM_CREDENTIAL_RECORD, rt.REMOVE_USER_SCRAM_CREDENTIAL_RECORD):
            return [f"/scram/{SCRAM_MECHANISMS.get(d['mechanism'], 'mechanism-' + str(d['mechanism']))}/{d['name']}"]
        if api_key in (rt.DELEGATION_TOKEN_RECORD, rt.REMOVE_DELEGATION_TOKEN_RECORD):
            return [f"/delegationTokens/{d['tokenId']}"]
        if api_key == rt.PRODUCER_IDS_RECORD:
            return ["/producerIds"]
        if api_key == rt.ZK_MIGRATION_STATE_RECORD:
            return ["/zkMigrationState"]
        return None

    def paths_after(self, img: Image, api_key: int, d: dict) -> list[str]:
        return []

    @staticmethod
    def _all_partitions(t) -> list[str]:
        return [f"/topics/{t.name}/{p}" for p in t.partitions]

    def control(self, img: Image, kind: str, before_voters, offset: int) -> None:
        if kind == "KRAFT_VOTERS":
            a, b = before_voters or {}, img.voters or {}
            ids = sorted(set(a) | set(b))
            self.add(
                offset,
                img.timestamp,
                img.epoch,
                kind,
                {f"/voters/{i}": a.get(i) for i in ids},
                {f"/voters/{i}": b.get(i) for i in ids},
            )
            if not self.entries[-1]["changes"]:
                self.entries.pop()


def transient(entries: list[dict]) -> list[dict]:
    """Paths created and then removed inside the window (topics, partitions, brokers,
    configs ... that a net diff never shows), with when."""
    created: dict[str, dict] = {}
    out = []
    for e in entries:
        for c in e["changes"]:
            if c["before"] is None and c["after"] is not None:
                created[c["path"]] = e
            elif c["after"] is None and c["path"] in created:
                born = created.pop(c["path"])
                out.append(
                    {
                        "path": c["path"],
                        "createdAt": born["offset"],
                        "createdTime": born["time"],
                        "removedAt": e["offset"],
                        "removedTime": e["time"],
                    }
                )
    return out
