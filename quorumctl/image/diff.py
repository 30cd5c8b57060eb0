"""What changed between two points of a metadata log: image(to) minus image(from).

One replay: to FROM, keep a copy of the image (the maps, not the values, which
are never mutated), go on to TO, then compare the two by leaf path (see
view.flatten). Unchanged partitions are the very same tuples in both, so the
comparison is cheap. The summary counts what operators ask about first.
"""

from __future__ import annotations

from collections import Counter

from ..errors import InputError
from .model import ELR, ISR, LAST_ELR, LEADER, REPLICAS, Image
from .replay import Point, Replay, check_inside, open_source, plan
from .view import field_changes, flatten, leaf_json, provenance


def changes(before: dict, after: dict) -> dict[str, tuple]:
    """path -> (before, after) for each leaf that differs (None = absent)."""
    out = {}
    for k, a in before.items():
        b = after.get(k)
        if b is not a and b != a:
            out[k] = (a, b)
    for k, b in after.items():
        if k not in before:
            out[k] = (None, b)
    return out


def _kind(path: str) -> str:
    parts = path.split("/")
    if parts[1] == "topics":
        return "partition" if len(parts) == 4 else "topic"
    return parts[1]


def _count(s: Counter, kind: str, a, b) -> None:
    """Adds one change of `kind` (a path's kind: _kind) to the summary's counts."""
    if kind == "topic":
        s["topicsCreated" if a is None else "topicsDeleted" if b is None else "topicsRecreated"] += 1
    elif kind == "partition":
        if a is None:
            s["partitionsCreated"] += 1
        elif b is None:
            s["partitionsDeleted"] += 1
        else:
            s["partitionsChanged"] += 1
            s["leaderChanged"] += a[LEADER] != b[LEADER]
            s["isrChanged"] += a[ISR] != b[ISR]
            s["replicasChanged"] += a[REPLICAS] != b[REPLICAS]
            s["elrChanged"] += a[ELR] != b[ELR] or a[LAST_ELR] != b[LAST_ELR]
    elif kind == "brokers":
        if a is None:
            s["brokersRegistered"] += 1
        elif b is None:
            s["brokersUnregistered"] += 1
        else:
            if a["epoch"] != b["epoch"]:
                s["brokersReregistered"] += 1
            s["brokersFenced"] += not a["fenced"] and b["fenced"]
            s["brokersUnfenced"] += a["fenced"] and not b["fenced"]
            s["brokersInControlledShutdown"] += not a["inControlledShutdown"] and b["inControlledShutdown"]
    elif kind == "configs":
        s["configsRemoved" if b is None else "configsSet"] += 1
    else:
        s[f"{kind}Changed"] += 1


def change_json(path: str, a, b) -> dict:
    ja, jb = leaf_json(path, a), leaf_json(path, b)
    out = {
        "path": path,
        "change": "added" if a is None else "removed" if b is None else "changed",
        "before": ja,
        "after": jb,
    }
    fields = field_changes(ja, jb)
    if fields is not None:
        out["fields"] = fields
    return out


def _name_key(name: str):
    """_sort_key of one path component."""
    return (0, int(name), "") if name.lstrip("-").isdigit() else (1, 0, name)


def _reachable(img) -> dict:
    """name -> Topic of the topics flatten walks (a stale id whose name another took is not)."""
    return {t.name: t for t in img.topics.values() if img.topic_ids.get(t.name) == t.id}


class Changes:
    """diff's changes in their order (sorted by _sort_key), computed as they are read:
    the topics are compared topic by topic from the partition tuples, with no path per
    partition and no change built ahead (at a million partitions both were GBs).
    Iterating gives change_json's dicts; `raw()` gives (path, before, after, is a
    partition) for the streaming renderers, which render each distinct partition change
    once. len() and `summary` are known from a first, counting pass."""

    streams_changes = True  # how render.image knows it (render does not import image)
    change_json = staticmethod(change_json)

    def __init__(self, before: Image, after: Image) -> None:
        self.before, self.after = before, after
        rest = changes(flatten(before, topics=False), flatten(after, topics=False))
        items = [(p, a, b) for p, (a, b) in sorted(rest.items(), key=lambda kv: _sort_key(kv[0]))]
        self.head = [x for x in items if x[0].split("/")[1] < "topics"]
        self.tail = [x for x in items if x[0].split("/")[1] > "topics"]
        self.tb, self.ta = _reachable(before), _reachable(after)
        groups: dict = {}
        for name in sorted(self.tb.keys() | self.ta.keys(), key=_name_key):
            groups.setdefault(_name_key(name), []).append(name)
        self.groups = list(groups.values())
        s: Counter = Counter()
        for p, a, b in items:
            _count(s, _kind(p), a, b)
        n = len(items)
        for _name, pid, a, b in self._topics():
            _count(s, "topic" if pid is None else "partition", a, b)
            n += 1
        self.count = n
        self.summary = {k: v for k, v in sorted(s.items()) if v}

    def __len__(self) -> int:
        return self.count

    def _topics(self):
        """(name, partition id or None for the topic itself, before, after) of each change
        under /topics, in _sort_key's order."""
        tb, ta = self.tb, self.ta
        for group in self.groups:
            if len(group) > 1:  # names of one key ("7", "007"): as flatten and sort put them
                yield from self._tied(group)
                continue
            name = group[0]
            x, y = tb.get(name), ta.get(name)
            hx = None if x is None else {"id": x.id}
            hy = None if y is None else {"id": y.id}
            if hx != hy:
                yield name, None, hx, hy
            px = {} if x is None else x.partitions
            py = {} if y is None else y.partitions
            for pid in sorted(px.keys() | py.keys()):
                a, b = px.get(pid), py.get(pid)
                if a is not b and a != b:
                    yield name, pid, a, b

    def _tied(self, group: list[str]):
        names = set(group)

        def leaves(img) -> dict:
            out: dict = {}
            for name, t in _reachable(img).items():
                if name in names:
                    out[f"/topics/{name}"] = {"id": t.id}
                    for p, v in t.partitions.items():
                        out[f"/topics/{name}/{p}"] = v
            return out

        ch = changes(leaves(self.before), leaves(self.after))
        for path, (a, b) in sorted(ch.items(), key=lambda kv: _sort_key(kv[0])):
            parts = path.split("/")
            yield parts[2], int(parts[3]) if len(parts) == 4 else None, a, b

    def raw(self):
        for p, a, b in self.head:
            yield p, a, b, False
        for name, pid, a, b in self._topics():
            if pid is None:
                yield f"/topics/{name}", a, b, False
            else:
                yield f"/topics/{name}/{pid}", a, b, True
        for p, a, b in self.tail:
            yield p, a, b, False

    def __iter__(self):
        for p, a, b, _ in self.raw():
            yield change_json(p, a, b)


def diff(paths: list[str], frm: Point, to: Point, *, timeline: bool = False, lazy: bool = False) -> dict:
    """The changes between two points of one log dir, as a JSON document; with
    `timeline`, every change of every record in between too, in log order.
    `lazy`: "changes" is a Changes (render.image's streaming writers take it)."""
    src = open_source(paths)
    if frm.offset is not None and to.offset is not None and to.offset < frm.offset:
        raise InputError(f"--to {to.offset} is before --from {frm.offset}")
    rp = Replay(plan(src, frm, through=to))
    if frm.time_ms is None and to.time_ms is None:
        rp.use_workers()
    watcher = None
    try:
        before = rp.run(frm).copy()
        if frm.time_ms is not None and to.time_ms is not None and to.time_ms < frm.time_ms:
            raise InputError("--to is before --from")
        if timeline:
            from .history import TimelineWatcher

            watcher = TimelineWatcher()
            watcher.replay = rp
            rp.image.observer = watcher
            rp.on_control = watcher.control
        after = rp.run(to)
        after.observer = None
    finally:
        rp.close()
    check_inside(src, frm, before, "--from")
    check_inside(src, to, after, "--to")
    if after.offset < before.offset:
        raise InputError(f"--to reaches offset {after.offset}, before --from's {before.offset}")
    ch = Changes(before, after)
    return {
        "from": provenance_brief(before),
        "to": provenance_brief(after),
        "records": after.records - before.records,
        "summary": ch.summary,
        "changes": ch if lazy else list(ch),
        "unknownRecords": dict(sorted((after.unknown - before.unknown).items())),
        "problems": after.problems[len(before.problems) :],
        "logEnd": rp.end_reason,
        **({} if watcher is None else _timeline_doc(watcher.entries)),
    }


def _timeline_doc(entries: list[dict]) -> dict:
    from .history import transient

    return {"timeline": entries, "transient": transient(entries)}


def provenance_brief(img) -> dict:
    p = provenance(img)
    return {k: p[k] for k in ("offset", "epoch", "timestamp", "time")}


def _sort_key(path: str):
    return [_name_key(x) for x in path.split("/")]
