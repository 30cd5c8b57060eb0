"""`topics describe`: kafka-topics --describe's lines (TopicCommand's
TopicDescription and PartitionDescription, 4.1 and 4.3 print them alike), a
table, and the count summary."""

from __future__ import annotations


def _ids(ids) -> str:
    return ",".join(str(i) for i in ids)


def topic_line(t: dict) -> str:
    configs = ",".join(f"{c['name']}={c['value']}" for c in t["configs"])
    tid = "" if t["topicId"] == "AAAAAAAAAAAAAAAAAAAAAA" else f"\tTopicId: {t['topicId']}"
    return (f"Topic: {t['topic']}{tid}\tPartitionCount: {t['partitionCount']}"
            f"\tReplicationFactor: {t['replicationFactor']}\tConfigs: {configs}")


def partition_line(topic: str, p: dict) -> str:
    s = (f"\tTopic: {topic}\tPartition: {p['partition']}\tLeader: {'none' if p['leader'] is None else p['leader']}"
         f"\tReplicas: {_ids(p['replicas'])}\tIsr: {_ids(p['isr'])}")
    if p["addingReplicas"] is not None:
        s += f"\tAdding Replicas: {_ids(p['addingReplicas'])}\tRemoving Replicas: {_ids(p['removingReplicas'])}"
    return s + f"\tElr: {_ids(p['elr'])}\tLastKnownElr: {_ids(p['lastKnownElr'])}"


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
    a = doc["at"]
    where = f"offset {a['offset']}" + (f", {a['time']}" if a.get("time") else "")
    return (f"{s['listed']} partition(s) listed of {s['partitions']} in {s['topics']} topic(s) at {where}: "
            f"{s['unavailable']} unavailable, {s['under-replicated']} under-replicated, "
            f"{s['under-min-isr']} under min ISR, {s['at-min-isr']} at min ISR; "
            f"live brokers: {_ids(doc['liveBrokers']) or 'none'}")


def describe_text(doc: dict) -> str:
    lines = describe_lines(doc)
    return "".join(line + "\n" for line in lines)


def describe_table(doc: dict):
    from rich.table import Table
    t = Table(title=summary_line(doc))
    for col in ("Topic", "Partition", "Leader", "Replicas", "Isr", "Elr", "LastKnownElr", "MinIsr", "Flags"):
        t.add_column(col)
    for topic in doc["topics"]:
        for p in topic["partitions"]:
            t.add_row(topic["topic"], str(p["partition"]), "none" if p["leader"] is None else str(p["leader"]),
                      _ids(p["replicas"]), _ids(p["isr"]), _ids(p["elr"]), _ids(p["lastKnownElr"]),
                      str(p["minIsr"]), " ".join(p["flags"]))
    return t
