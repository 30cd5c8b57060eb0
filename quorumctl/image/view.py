"""The image as operators see it: a JSON tree with kafka-metadata-shell's kind
of paths (/topics/NAME/PARTITION, /brokers/ID, /features, /configs/TYPE/NAME,
/clientQuotas, /acls, /scram, /delegationTokens, /producerIds, /controllers,
/voters ...), its leaves by path (`flatten`, what diff compares), and where
the image is (`provenance`)."""

from __future__ import annotations

from ..errors import InputError
from .model import CONFIG_TYPES, ZK_MIGRATION_STATES, Image, partition_json

SECTIONS = (
    "features",
    "metadataVersion",
    "zkMigrationState",
    "kraftVersion",
    "voters",
    "controllers",
    "brokers",
    "topics",
    "configs",
    "clientQuotas",
    "acls",
    "scram",
    "delegationTokens",
    "producerIds",
)


def metadata_version_name(level: int | None) -> str | None:
    if level is None:
        return None
    from ..versions import version_name

    return version_name(level)


def provenance(img: Image) -> dict:
    from ..timefmt import iso_utc

    return {
        "offset": img.offset,
        "epoch": img.epoch,
        "timestamp": img.timestamp,
        "time": iso_utc(img.timestamp),
        "records": img.records,
        "leader": img.leader,
        "openTransaction": None
        if img.pending is None
        else {"since": img.pending_since, "pendingRecords": len(img.pending)},
        "unknownRecords": dict(sorted(img.unknown.items())),
        "problemCount": img.problem_count,
        "problems": img.problems,
    }


def _config_type(t: int) -> str:
    return CONFIG_TYPES.get(t, f"type-{t}")


def topic_json(t) -> dict:
    return {"id": t.id, "partitions": {str(p): partition_json(v) for p, v in sorted(t.partitions.items())}}


def _topics(img: Image) -> dict:
    return {name: topic_json(img.topics[img.topic_ids[name]]) for name in sorted(img.topic_ids)}


class LazyTopics:
    """The /topics section of the tree, not built: the topics by name, in to_json's
    order, for a renderer that writes them one at a time (render.image streams JSON
    and text from the partition tuples; a million partitions as dicts would be GBs).
    A table takes the built section (image_document without lazy)."""

    __slots__ = ("img",)
    streams_topics = True  # how render.image knows it (render does not import image)
    partition_json = staticmethod(partition_json)

    def __init__(self, img: Image):
        self.img = img

    def __bool__(self) -> bool:
        return bool(self.img.topic_ids)

    def items(self):
        """(name, Topic) by name."""
        topics, ids = self.img.topics, self.img.topic_ids
        for name in sorted(ids):
            yield name, topics[ids[name]]


def _configs(img: Image) -> dict:
    configs: dict = {}
    for (typ, name), kv in sorted(img.configs.items()):
        configs.setdefault(_config_type(typ), {})[name] = dict(sorted(kv.items()))
    return configs


def _scram(img: Image) -> dict:
    scram: dict = {}
    for (mech, user), v in sorted(img.scram.items()):
        scram.setdefault(mech, {})[user] = dict(v)
    return scram


# each top-level section of the tree, built on its own (`image LOG /features` builds only that)
_SECTION_JSON = {
    "features": lambda img: dict(sorted(img.features.items())),
    "metadataVersion": lambda img: metadata_version_name(img.metadata_version),
    "zkMigrationState": lambda img: ZK_MIGRATION_STATES.get(img.zk_migration_state, img.zk_migration_state),
    "kraftVersion": lambda img: img.kraft_version,
    "voters": lambda img: None if img.voters is None else {str(k): v for k, v in sorted(img.voters.items())},
    "controllers": lambda img: {str(k): v for k, v in sorted(img.controllers.items())},
    "brokers": lambda img: {str(k): v for k, v in sorted(img.brokers.items())},
    "topics": _topics,
    "configs": _configs,
    "clientQuotas": lambda img: {k: dict(sorted(v.items())) for k, v in sorted(img.quotas.items())},
    "acls": lambda img: dict(sorted(img.acls.items())),
    "scram": _scram,
    "delegationTokens": lambda img: dict(sorted(img.tokens.items())),
    "producerIds": lambda img: img.producer_ids,
}
assert tuple(_SECTION_JSON) == SECTIONS


def to_json(img: Image, only: str | None = None, *, lazy: bool = False) -> dict:
    """The whole image as one JSON tree (keys sorted; ids as strings, as JSON keys are),
    or only its section `only` (a tree with that one key). `lazy`: the topics section
    is a LazyTopics (for the streaming renderers)."""
    build = dict(_SECTION_JSON, topics=LazyTopics) if lazy else _SECTION_JSON
    if only is not None:
        return {only: build[only](img)}
    return {name: fn(img) for name, fn in build.items()}


def flatten(img: Image, *, topics: bool = True) -> dict[str, object]:
    """path -> leaf value, one entry per entity: what `diff` compares (without /topics
    when `topics` is false: diff walks the topics itself, a path per partition was GBs)."""
    out: dict[str, object] = {}
    out.update((f"/features/{k}", v) for k, v in img.features.items())
    out["/zkMigrationState"] = ZK_MIGRATION_STATES.get(img.zk_migration_state, img.zk_migration_state)
    if img.kraft_version is not None:
        out["/kraftVersion"] = img.kraft_version
    out.update((f"/voters/{k}", v) for k, v in (img.voters or {}).items())
    out.update((f"/controllers/{k}", v) for k, v in img.controllers.items())
    out.update((f"/brokers/{k}", v) for k, v in img.brokers.items())
    for t in img.topics.values() if topics else ():
        if img.topic_ids.get(t.name) != t.id:
            continue  # a stale id whose name another topic took (not reachable by name)
        out[f"/topics/{t.name}"] = {"id": t.id}
        for p, v in t.partitions.items():
            out[f"/topics/{t.name}/{p}"] = v
    for (typ, name), kv in img.configs.items():
        for k, v in kv.items():
            out[f"/configs/{_config_type(typ)}/{name}/{k}"] = v
    for ent, kv in img.quotas.items():
        for k, v in kv.items():
            out[f"/clientQuotas/{ent}/{k}"] = v
    out.update((f"/acls/{k}", v) for k, v in img.acls.items())
    out.update((f"/scram/{mech}/{user}", v) for (mech, user), v in img.scram.items())
    out.update((f"/delegationTokens/{k}", v) for k, v in img.tokens.items())
    if img.producer_ids is not None:
        out["/producerIds"] = img.producer_ids
    return out


def field_changes(a, b) -> dict | None:
    """For two dict leaves: {field: [before, after]} of the fields that differ."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return None
    return {k: [a.get(k), b.get(k)] for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def leaf_json(path: str, value):
    """A flattened leaf as JSON (partitions are tuples inside the image)."""
    if path.startswith("/topics/") and path.count("/") == 3 and isinstance(value, tuple):
        return partition_json(value)
    return value


def split_path(path: str) -> list[str]:
    return [p for p in path.split("/") if p]


def select(doc: dict, path: str | None):
    """The subtree of to_json's document at PATH; /topics/NAME/P reaches into 'partitions'."""
    if not path or path == "/":
        return doc
    node = doc
    parts = split_path(path)
    walked = ""
    for i, part in enumerate(parts):
        if isinstance(node, dict) and part not in node and i == 2 and parts[0] == "topics" and "partitions" in node:
            node = node["partitions"]
        if not isinstance(node, dict) or part not in node:
            have = sorted(node) if isinstance(node, dict) else []
            hint = f" (it has: {', '.join(have[:12])}{' ...' if len(have) > 12 else ''})" if have else ""
            raise InputError(
                f"{path}: no such path in the image: nothing at {walked or '/'}{'/' if walked else ''}{part}{hint}"
            )
        node = node[part]
        walked += "/" + part
    return node


def children(node) -> list[str]:
    """The names under a node of the tree (the metadata shell's `ls`): a topic's
    partitions stand beside its id, as its paths (/topics/NAME/P) have them."""
    if not isinstance(node, dict):
        return []
    if set(node) == {"id", "partitions"} and isinstance(node["partitions"], dict):
        return ["id", *node["partitions"]]
    return list(node)


def walk_paths(node, prefix: str = ""):
    """Every path of the tree under `node` (at `prefix`), parents before children
    (the metadata shell's `find`)."""
    yield prefix or "/"
    if not isinstance(node, dict):
        return
    topic = set(node) == {"id", "partitions"} and isinstance(node["partitions"], dict)
    for name in children(node):
        child = node["partitions"][name] if topic and name != "id" else node[name]
        yield from walk_paths(child, f"{prefix}/{name}")


def _topic_subtree(img: Image, path: str | None):
    """The tree for a path under /topics/NAME with only that topic built (None when
    the path is not one, or names no topic: select then words the error from all)."""
    parts = split_path(path) if path else []
    if len(parts) >= 2 and parts[0] == "topics":
        tid = img.topic_ids.get(parts[1])
        if tid is not None:
            return {"topics": {parts[1]: topic_json(img.topics[tid])}}
    return None


def image_document(
    paths: list[str], point=None, path: str | None = None, *, use_snapshots: bool = True, lazy: bool = False
) -> dict:
    """`quorumctl image`: the image (or the subtree at PATH) at a point, with where it is.
    `lazy`: the whole topics section, when the subtree holds it, is a LazyTopics
    (render.image's streaming writers take it)."""
    from .replay import Point, check_inside, open_source, replay

    point = point or Point()
    src = open_source(paths)
    rp = replay(src, point, use_snapshots=use_snapshots)
    img = rp.image
    check_inside(src, point, img, point_option(point))
    note = None
    first = split_path(path)[0] if path and split_path(path) else None
    lazy = lazy and len(split_path(path or "/")) < 2  # select words a missing topic from the built section
    doc = _topic_subtree(img, path) or to_json(img, only=first if first in _SECTION_JSON else None, lazy=lazy)
    return {
        "at": provenance(img),
        "start": rp.describe_start(),
        "asked": point.describe(),
        "note": note,
        "logEnd": rp.end_reason,
        "path": path or "/",
        "image": select(doc, path),
    }


def point_option(point) -> str:
    """The option a Point of image or topics describe came from, for messages."""
    return "--at-offset" if point.offset is not None else "--at-time"
