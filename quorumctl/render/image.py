"""Text and table renderings of `image`, `history` and `diff`. Text is ours
(Kafka has no such tool): an indented tree for the image, one line per entry
for history and per change for diff, stable for grep."""

from __future__ import annotations

from ..ids import DIRECTORY_MIGRATING
from .output import Chunks, json_line


def _v(v) -> str:
    if isinstance(v, str):
        return v
    return json_line(v)


def partition_line(p: dict) -> str:
    """One partition on one line: the fields operators look at first, others when set."""
    s = (
        f"leader {p['leader']} leaderEpoch {p['leaderEpoch']} isr {_v(p['isr'])} "
        f"replicas {_v(p['replicas'])} partitionEpoch {p['partitionEpoch']}"
    )
    for k in ("addingReplicas", "removingReplicas", "eligibleLeaderReplicas", "lastKnownElr"):
        if p[k]:
            s += f" {k} {_v(p[k])}"
    if p["leaderRecoveryState"] != "RECOVERED":
        s += f" leaderRecoveryState {p['leaderRecoveryState']}"
    if any(d != DIRECTORY_MIGRATING for d in p["directories"]):
        s += f" directories {_v(p['directories'])}"
    return s


def _is_partition(node) -> bool:
    return isinstance(node, dict) and "leaderEpoch" in node and "isr" in node


def tree_lines(node, indent: int = 0) -> list[str]:
    pad = "  " * indent
    out = []
    if not isinstance(node, dict):
        return [pad + _v(node)]
    for k, v in node.items():
        if _is_partition(v):
            out.append(f"{pad}{k}: {partition_line(v)}")
        elif isinstance(v, dict) and v:
            out.append(f"{pad}{k}:")
            out.extend(tree_lines(v, indent + 1))
        else:
            out.append(f"{pad}{k}: {'(none)' if v is None or v == {} else _v(v)}")
    return out


def names_text(found: list[str]) -> str:
    """`image --names` / `--find`: one name or path a line."""
    return "".join(f"{x}\n" for x in found)


def names_doc(doc: dict, key: str, found: list[str]) -> dict:
    return {"at": doc["at"], "path": doc["path"], key: found}


def at_line(doc: dict) -> str:
    a = doc["at"]
    start = doc["start"]
    src = {"snapshot": f"snapshot {start.get('endOffset')}-{start.get('epoch')}"}.get(start["from"], start["from"])
    where = f"offset {a['offset']}, epoch {a['epoch']}" if a["offset"] >= 0 else "before the first log record"
    time = f", {a['time']}" if a.get("time") else ""
    return f"Image at {where}{time} ({a['records']} records replayed from {src})"


def notes(doc: dict) -> list[str]:
    a = doc["at"]
    out = []
    if doc.get("note"):
        out.append(f"note: {doc['note']}")
    if doc.get("logEnd"):
        out.append(f"note: the log ends early: {doc['logEnd']}")
    if a["openTransaction"]:
        t = a["openTransaction"]
        out.append(
            f"note: a metadata transaction begun at offset {t['since']} is still open: "
            f"its {t['pendingRecords']} records are not in the image"
        )
    for k, n in a["unknownRecords"].items():
        out.append(f"note: {n} record(s) of unknown type or version skipped: {k}")
    if a["problemCount"]:
        out.append(f"note: {a['problemCount']} record(s) Kafka would refuse were skipped:")
        out.extend(f"  {p}" for p in a["problems"])
    return out


# -- streaming: the whole image (or /topics) written topic by topic --------------------------
#
# `image_document(..., lazy=True)` leaves the topics section as a LazyTopics (image.view):
# these write it from the partition tuples, one topic at a time, instead of building a
# dict per partition and the whole document's text (at a million partitions GBs, and
# most of the time). Each distinct partition tuple is rendered once (partitions of a big
# cluster share replicas, ISR, epochs: the tuples repeat) and written as json_line /
# tree_lines write its dict: the same bytes (tools/compare_outputs.py, tests/test_image*).

# distinct renderings kept at once (image, diff): when every tuple differs, memory stays
# bounded instead of growing with the output
_MEMO_CAP = 1 << 16


def _lazy(node) -> bool:
    """image.view.LazyTopics (known by its mark: render does not import image)."""
    return getattr(node, "streams_topics", False)


def _json_topics(topics, out: Chunks) -> None:
    from .output import json_bytes

    partition_json = topics.partition_json
    memo: dict = {}
    out.add(b"{")
    first = True
    for name, t in topics.items():
        pieces = []
        for pid, p in sorted(t.partitions.items()):
            text = memo.get(p)
            if text is None:
                if len(memo) > _MEMO_CAP:  # every tuple distinct: the memo stays small
                    memo.clear()
                text = memo[p] = json_bytes(partition_json(p))
            pieces.append(b'"%d":%s' % (pid, text))
        out.add(
            b'%s%s:{"id":%s,"partitions":{%s}}'
            % (b"" if first else b",", json_bytes(name), json_bytes(t.id), b",".join(pieces))
        )
        first = False
    out.add(b"}")


def _json_node(node, out: Chunks) -> None:
    from .output import json_bytes

    if _lazy(node):
        _json_topics(node, out)
    elif isinstance(node, dict) and any(_lazy(v) for v in node.values()):
        out.add(b"{")
        for i, (k, v) in enumerate(node.items()):
            out.add(b"%s%s:" % (b"," if i else b"", json_bytes(k)))
            _json_node(v, out)
        out.add(b"}")
    else:
        out.add(json_bytes(node))


def write_image_json(doc: dict, write) -> None:
    """json_line(doc) + newline, written in pieces to `write` (bytes): the image
    (doc's last key) streamed."""
    from .output import json_bytes

    head = json_bytes({**doc, "image": None})
    assert list(doc)[-1] == "image" and head.endswith(b"null}")
    out = Chunks(write)
    out.add(head[:-5])
    _json_node(doc["image"], out)
    out.add(b"}\n")
    out.flush()


def _text_topics(topics, indent: int, out: Chunks) -> None:
    partition_json = topics.partition_json
    memo: dict = {}
    pad = "  " * indent
    for name, t in topics.items():
        out.add(f"{pad}{name}:\n{pad}  id: {t.id}\n")
        if not t.partitions:
            out.add(f"{pad}  partitions: (none)\n")
            continue
        lines = [f"{pad}  partitions:\n"]
        for pid, p in sorted(t.partitions.items()):
            text = memo.get(p)
            if text is None:
                if len(memo) > _MEMO_CAP:
                    memo.clear()
                text = memo[p] = partition_line(partition_json(p))
            lines.append(f"{pad}    {pid}: {text}\n")
        out.add("".join(lines))


def _text_node(node, indent: int, out: Chunks) -> None:
    """tree_lines(node, indent), each line ending in a newline, topics streamed."""
    if _lazy(node):
        _text_topics(node, indent, out)
        return
    if isinstance(node, dict) and any(_lazy(v) for v in node.values()):
        pad = "  " * indent
        for k, v in node.items():
            if _lazy(v):
                if v:
                    out.add(f"{pad}{k}:\n")
                    _text_topics(v, indent + 1, out)
                else:
                    out.add(f"{pad}{k}: (none)\n")
            else:
                out.add("".join(line + "\n" for line in tree_lines({k: v}, indent)))
        return
    out.add("".join(line + "\n" for line in tree_lines(node, indent)))


def write_image_text(doc: dict, write) -> None:
    """The image as text (its header, notes and tree), written in pieces to `write`
    (str): the topics streamed."""
    out = Chunks(write)
    out.add("".join(line + "\n" for line in [at_line(doc), *notes(doc), f"{doc['path']}:"]))
    _text_node(doc["image"], 1, out)
    out.flush()


def image_table(doc: dict):
    """Partitions as a table when the subtree holds topics; other leaves as path/value rows."""
    from rich.table import Table

    node = doc["image"]  # (built whole: image_document without lazy)
    path = doc["path"].rstrip("/")
    title: str | None = f"{at_line(doc)}: {doc['path']}"
    parts = [p for p in path.split("/") if p]
    topics = None
    if parts == [] and isinstance(node, dict):
        topics = node.get("topics")
    elif parts == ["topics"]:
        topics = node
    elif len(parts) == 2 and parts[0] == "topics":
        topics = {parts[1]: node}
    elif len(parts) == 3 and parts[0] == "topics":
        topics = {parts[1]: {"partitions": {parts[2]: node}}}
    tables = []
    if topics is not None:
        t = Table(title=title)
        for col in ("topic", "partition", "leader", "leaderEpoch", "isr", "replicas", "elr", "lastKnownElr"):
            t.add_column(col, justify="right" if col in ("partition", "leader", "leaderEpoch") else "left")
        for name, top in topics.items():
            for pid, p in top.get("partitions", {}).items():
                t.add_row(
                    name,
                    pid,
                    str(p["leader"]),
                    str(p["leaderEpoch"]),
                    _v(p["isr"]),
                    _v(p["replicas"]),
                    _v(p["eligibleLeaderReplicas"]),
                    _v(p["lastKnownElr"]),
                )
        tables.append(t)
        title = None
    if not (parts and parts[0] == "topics"):
        t = Table(title=title)
        t.add_column("path", overflow="fold")
        t.add_column("value", overflow="fold")
        for p, v in _leaves(node, "" if path == "" else path, skip_topics=not parts):
            t.add_row(p, v)
        tables.append(t)
    return tables


def _leaves(node, prefix: str, skip_topics: bool = False):
    if _is_partition(node):
        yield prefix or "/", partition_line(node)
        return
    if not isinstance(node, dict) or not node:
        yield prefix or "/", "(none)" if node is None or node == {} else _v(node)
        return
    for k, v in node.items():
        if skip_topics and k == "topics":
            continue
        if isinstance(v, dict) and v and not _is_partition(v) and not all(not isinstance(x, dict) for x in v.values()):
            yield from _leaves(v, f"{prefix}/{k}")
        else:
            yield (
                f"{prefix}/{k}",
                partition_line(v) if _is_partition(v) else ("(none)" if v is None or v == {} else _v(v)),
            )


# -- history -------------------------------------------------------------------------------


def change_text(c: dict) -> str:
    if c["before"] is None:
        return f"{c['path']}: created {partition_line(c['after']) if _is_partition(c['after']) else _v(c['after'])}"
    if c["after"] is None:
        return f"{c['path']}: removed (was {partition_line(c['before']) if _is_partition(c['before']) else _v(c['before'])})"
    if c.get("fields"):
        return f"{c['path']}: " + ", ".join(f"{k} {_v(a)} -> {_v(b)}" for k, (a, b) in c["fields"].items())
    return f"{c['path']}: {_v(c['before'])} -> {_v(c['after'])}"


def _entry_where(e: dict) -> str:
    source = e.get("source", "log")
    if source == "bootstrap":
        return f"bootstrap ({e['file']})"
    if source == "snapshot" or e["offset"] < 0:
        where = f"snapshot {e['file']}" if e.get("file") else "snapshot"
        return f"{where} {e['time'] or e['timestamp']}"
    return f"offset {e['offset']} epoch {e['epoch']} {e['time'] or e['timestamp']}"


def _entry_offset(e: dict) -> str:
    return e.get("source", "log") if e["offset"] < 0 else str(e["offset"])


def history_head(doc: dict) -> str:
    e = doc["entity"]
    what = f"partition {e['name']}-{e['partition']}" if e["partition"] is not None else f"{e['kind']} {e['name']}"
    s = doc["start"]
    src = f"snapshot {s.get('endOffset')}-{s.get('epoch')}" if s["from"] == "snapshot" else s["from"]
    line = f"History of {what}: {len(doc['entries'])} record(s), replayed from {src} to offset {doc['end']['offset']}"
    if doc.get("leaderChanges") is not None:
        line += f"; {doc['leaderChanges']} leader change(s)"
    return line


def history_text(doc: dict) -> str:
    lines = [history_head(doc)]
    if doc.get("logEnd"):
        lines.append(f"note: the log ends early: {doc['logEnd']}")
    for k, n in doc["unknownRecords"].items():
        lines.append(f"note: {n} record(s) of unknown type or version skipped: {k}")
    for e in doc["entries"]:
        head = f"{_entry_where(e)} {e['record']}"
        if not e["changes"]:
            lines.append(f"{head}: no change")
        for c in e["changes"]:
            lines.append(f"{head} {change_text(c)}")
    if not doc["existsAtEnd"]:
        lines.append("(it does not exist at the end)")
    return "\n".join(lines) + "\n"


def history_table(doc: dict):
    from rich.table import Table

    t = Table(title=history_head(doc))
    for col in ("offset", "time", "epoch", "record", "change"):
        t.add_column(
            col, justify="right" if col in ("offset", "epoch") else "left", overflow="fold", no_wrap=col != "change"
        )
    for e in doc["entries"]:
        for c in e["changes"] or [None]:
            t.add_row(
                _entry_offset(e),
                e["time"] or ("" if e.get("source") == "bootstrap" else str(e["timestamp"])),
                str(e["epoch"]),
                e["record"],
                "no change" if c is None else change_text(c),
            )
    return [t]


# -- diff -------------------------------------------------------------------------------------


def _point(p: dict) -> str:
    return f"offset {p['offset']} (epoch {p['epoch']}{', ' + p['time'] if p.get('time') else ''})"


def diff_head(doc: dict) -> str:
    return (
        f"Changes from {_point(doc['from'])} to {_point(doc['to'])}: {doc['records']} record(s), "
        f"{len(doc['changes'])} change(s)"
    )


def _diff_preamble(doc: dict) -> list[str]:
    """diff's lines before the changes: the head, the summary and the notes."""
    lines = [diff_head(doc)]
    lines += [f"  {k}: {v}" for k, v in doc["summary"].items()] or ["  nothing changed"]
    if doc.get("logEnd"):
        lines.append(f"note: the log ends early: {doc['logEnd']}")
    for k, n in doc["unknownRecords"].items():
        lines.append(f"note: {n} record(s) of unknown type or version skipped: {k}")
    return lines


_SIGN = {"added": "+", "removed": "-", "changed": "~"}


def diff_text(doc: dict) -> str:
    lines = _diff_preamble(doc)
    for c in doc["changes"]:
        lines.append(f"{_SIGN[c['change']]} {change_text(c)}")
    if "timeline" in doc:
        lines.extend(timeline_lines(doc))
    return "\n".join(lines) + "\n"


def timeline_lines(doc: dict) -> list[str]:
    n = sum(len(e["changes"]) for e in doc["timeline"])
    lines = [f"Timeline: {n} change(s) by {len(doc['timeline'])} record(s), in log order"]
    for e in doc["timeline"]:
        for c in e["changes"]:
            lines.append(f"{_entry_where(e)} {e['record']} {change_text(c)}")
    for t in doc["transient"]:
        lines.append(
            f"transient: {t['path']} created at offset {t['createdAt']} ({t['createdTime']}), "
            f"removed at offset {t['removedAt']} ({t['removedTime']})"
        )
    return lines


# -- diff, streamed: `diff(..., lazy=True)` leaves "changes" as an image.diff.Changes, computed
# as it is read; these write it change by change, each distinct partition change (the same
# before and after tuples) rendered once through change_json and change_text: the bytes
# diff_text and json_line write for the built doc.


def _streamed_changes(doc: dict) -> bool:
    return getattr(doc["changes"], "streams_changes", False)


def _rendered_changes(changes, render):
    """(path, render(path, change)[cut:]) per change: a partition's rendering, past its
    path, memoised by its before and after tuples."""
    memo: dict = {}
    change_json = changes.change_json
    for path, a, b, partition in changes.raw():
        if not partition:
            yield path, render(path, change_json(path, a, b))
            continue
        key = (a, b)
        rest = memo.get(key)
        if rest is None:
            if len(memo) > _MEMO_CAP:
                memo.clear()
            rest = memo[key] = render(path, change_json(path, a, b), cut=True)
        yield path, rest


def _text_change(path: str, c: dict, cut: bool = False):
    text = change_text(c)
    sign = _SIGN[c["change"]]
    return (sign, text[len(path) :]) if cut else f"{sign} {text}\n"


def write_diff_text(doc: dict, write) -> None:
    """diff_text(doc), written in pieces to `write` (str)."""
    if not _streamed_changes(doc):
        write(diff_text(doc))
        return
    out = Chunks(write)
    out.add("\n".join(_diff_preamble(doc)) + "\n")
    for path, r in _rendered_changes(doc["changes"], _text_change):
        out.add(r if isinstance(r, str) else f"{r[0]} {path}{r[1]}\n")
    if "timeline" in doc:
        out.add("".join(line + "\n" for line in timeline_lines(doc)))
    out.flush()


def _json_change(path: str, c: dict, cut: bool = False) -> bytes:
    from .output import json_bytes

    text = json_bytes(c)
    return text[len(b'{"path":' + json_bytes(path)) :] if cut else text


def write_diff_json(doc: dict, write) -> None:
    """json_line(doc) + newline, written in pieces to `write` (bytes)."""
    from .output import json_bytes

    if not _streamed_changes(doc):
        write(json_bytes(doc) + b"\n")
        return
    keys = list(doc)
    at = keys.index("changes")
    head = json_bytes({k: doc[k] for k in keys[: at + 1] if k != "changes"} | {"changes": None})
    tail = json_bytes({k: doc[k] for k in keys[at + 1 :]})
    assert head.endswith(b"null}") and tail.startswith(b"{") and len(tail) > 2
    out = Chunks(write)
    out.add(head[:-5] + b"[")
    first = True
    for path, r in _rendered_changes(doc["changes"], _json_change):
        if len(r) and r[:1] == b"{":
            out.add(r if first else b"," + r)
        else:
            out.add(b'%s{"path":%s%s' % (b"" if first else b",", json_bytes(path), r))
        first = False
    out.add(b"]," + tail[1:] + b"\n")
    out.flush()


def diff_table(doc: dict):
    from rich.table import Table

    s = Table(title=diff_head(doc))
    s.add_column("what")
    s.add_column("count", justify="right")
    for k, v in doc["summary"].items():
        s.add_row(k, str(v))
    t = Table()
    t.add_column("change")
    t.add_column("path", overflow="fold")
    t.add_column("detail", overflow="fold")
    for c in doc["changes"]:
        t.add_row(c["change"], c["path"], change_text(c).split(": ", 1)[1])
    return [s, t]
