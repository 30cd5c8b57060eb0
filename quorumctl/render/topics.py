"""`topics describe`: kafka-topics --describe's lines (TopicCommand's
TopicDescription and PartitionDescription, 4.1 and 4.3 print them alike), a
table, and the count summary."""

from __future__ import annotations

from ..ids import ZERO_UUID


def _ids(ids) -> str:
    return ",".join(str(i) for i in ids)


def _elr(ids) -> str:
    """ELR lists; None (the admin client's describe by topic id, from Metadata) is N/A."""
    return "N/A" if ids is None else _ids(ids)


def topic_line(t: dict) -> str:
    configs = ",".join(f"{c['name']}={c['value']}" for c in t["configs"])
    tid = "" if t["topicId"] == ZERO_UUID else f"\tTopicId: {t['topicId']}"
    return (
        f"Topic: {t['topic']}{tid}\tPartitionCount: {t['partitionCount']}"
        f"\tReplicationFactor: {t['replicationFactor']}\tConfigs: {configs}"
    )


def partition_line(topic: str, p: dict) -> str:
    return f"\tTopic: {topic}\tPartition: {p['partition']}" + partition_rest(p)


def partition_rest(p: dict) -> str:
    """A partition line after its id (the same for partitions alike: rendered once)."""
    s = (
        f"\tLeader: {'none' if p['leader'] is None else p['leader']}"
        f"\tReplicas: {_ids(p['replicas'])}\tIsr: {_ids(p['isr'])}"
    )
    if p["addingReplicas"] is not None:
        s += f"\tAdding Replicas: {_ids(p['addingReplicas'])}\tRemoving Replicas: {_ids(p['removingReplicas'])}"
    return s + f"\tElr: {_elr(p['elr'])}\tLastKnownElr: {_elr(p['lastKnownElr'])}"


def describe_lines(doc: dict) -> list[str]:
    """Exactly kafka-topics --describe's stdout: a topic line per topic unless a filter is given."""
    out = []
    for t in doc["topics"]:
        if not doc["filters"] and t["partitionCount"]:
            out.append(topic_line(t))
        out.extend(partition_line(t["topic"], p) for p in t["partitions"])
    return out


def summary_line(doc: dict) -> str:
    s = doc["summary"]
    a = doc.get("at")
    if a is None:  # asked of a broker
        where = f"from {doc['source']}"
    else:
        where = f"at offset {a['offset']}" + (f", {a['time']}" if a.get("time") else "")
    return (
        f"{s['listed']} partition(s) listed of {s['partitions']} in {s['topics']} topic(s) {where}: "
        f"{s['unavailable']} unavailable, {s['under-replicated']} under-replicated, "
        f"{s['under-min-isr']} under min ISR, {s['at-min-isr']} at min ISR; "
        f"live brokers: {_ids(doc['liveBrokers']) or 'none'}"
    )


def describe_text(doc: dict) -> str:
    lines = describe_lines(doc)
    return "".join(line + "\n" for line in lines)


def describe_table(doc: dict):
    """The listed partitions as a Rich table (its rows are strings: Rich holds them all);
    with --topics-with-overrides, the topics (the text's only lines then). A streamed
    doc's summary is filled once its topics are read."""
    from rich.table import Table

    t = Table()
    if doc.get("overrides"):
        for col in ("Topic", "TopicId", "PartitionCount", "ReplicationFactor", "Configs"):
            t.add_column(col)
        for topic, _ in _topics(doc):
            if topic["partitionCount"]:  # as the text: a topic without partitions has no line
                t.add_row(
                    topic["topic"],
                    topic["topicId"],
                    str(topic["partitionCount"]),
                    str(topic["replicationFactor"]),
                    ",".join(f"{c['name']}={c['value']}" for c in topic["configs"]),
                )
        t.title = summary_line(doc)
        return t
    for col in ("Topic", "Partition", "Leader", "Replicas", "Isr", "Elr", "LastKnownElr", "MinIsr", "Flags"):
        t.add_column(col)
    memo: dict = {}
    for topic, rows in _topics(doc):
        for pid, p in rows:
            cells = memo.get(id(p))
            if cells is None:
                cells = memo[id(p)] = (
                    "none" if p["leader"] is None else str(p["leader"]),
                    _ids(p["replicas"]),
                    _ids(p["isr"]),
                    _elr(p["elr"]),
                    _elr(p["lastKnownElr"]),
                    str(p["minIsr"]),
                    " ".join(p["flags"]),
                    p,
                )
            t.add_row(topic["topic"], str(pid), *cells[:7])
    t.title = summary_line(doc)
    return t


# -- streaming: text and JSON written topic by topic ------------------------------------------
#
# `describe_document(..., lazy=True)` leaves "topics" as an image.topics.Described: these
# write it as it is computed, each distinct partition (a Listed: its fields and flags)
# rendered once, with the bytes describe_text and json_line write for the built doc.


def _streamed(doc: dict) -> bool:
    return getattr(doc["topics"], "streams_topics", False)


def _topics(doc: dict):
    """(topic's JSON without partitions, [(partition id, fields)]) of either form; a
    streamed doc gets its summary at the end."""
    topics = doc["topics"]
    if not _streamed(doc):
        for t in topics:
            yield t, [(p["partition"], p) for p in t["partitions"]]
        return
    for t, rows in topics:
        yield t, [(pid, info.fields) for pid, info in rows]
    doc["summary"] = topics.summary


def write_describe_text(doc: dict, write) -> None:
    """describe_text(doc), written in pieces to `write` (str); fills a streamed doc's summary."""
    from .output import Chunks

    if not _streamed(doc):
        write(describe_text(doc))
        return
    out = Chunks(write)
    heads = not doc["filters"]
    topics = doc["topics"]
    for t, rows in topics:
        if heads and t["partitionCount"]:
            out.add(topic_line(t) + "\n")
        if not rows:
            continue
        prefix = f"\tTopic: {t['topic']}\tPartition: "
        lines = []
        for pid, info in rows:
            text = info.text
            if text is None:
                text = info.text = partition_rest(info.fields) + "\n"
            lines.append(f"{prefix}{pid}{text}")
        out.add("".join(lines))
    out.flush()
    doc["summary"] = topics.summary


def write_describe_json(doc: dict, write) -> None:
    """json_line(doc) + newline, written in pieces to `write` (bytes); fills a streamed
    doc's summary (the key after "topics")."""
    from .output import Chunks, json_bytes

    if not _streamed(doc):
        write(json_bytes(doc) + b"\n")
        return
    keys = list(doc)
    assert keys[-2:] == ["topics", "summary"]
    head = json_bytes({k: doc[k] for k in keys[:-1] if k != "topics"} | {"topics": None})
    assert head.endswith(b"null}")
    out = Chunks(write)
    out.add(head[:-5] + b"[")
    topics = doc["topics"]
    first = True
    for t, rows in topics:
        pieces = []
        for pid, info in rows:
            text = info.json
            if text is None:
                text = info.json = json_bytes(info.fields)[1:]
            pieces.append(b'{"partition":%d,%s' % (pid, text))
        th = json_bytes({**t, "partitions": None})
        out.add(b"%s%s[%s]}" % (b"" if first else b",", th[:-5], b",".join(pieces)))
        first = False
    doc["summary"] = topics.summary
    out.add(b'],"summary":' + json_bytes(doc["summary"]) + b"}\n")
    out.flush()
