"""`features upgrade|downgrade`: the registered nodes, which of them block the
change, and the verdict in kafka-features' own lines ("metadata.version can be
upgraded to 30.", "Can not upgrade metadata.version to 30. <Kafka's reason>").

One document (`update_doc`) from the live or offline check; text, table and JSON
are views of it."""

from __future__ import annotations

from ..domain.features import UPGRADE_TYPE_NAMES, command_lines, failure_line, range_text
from ..versions import METADATA_VERSION, NAME_OF
from .output import iso_utc, timestamp, when_text


def _level_name(feature: str, level: int | None):
    return NAME_OF.get(level) if feature == METADATA_VERSION and level is not None else None


def update_doc(check, apply: bool) -> dict:
    live = hasattr(check, "mode")
    now = getattr(check, "now_ms", 0)
    blocks: dict[tuple[str, int], list[str]] = {}
    for b in check.blockers:
        blocks.setdefault((b["node"].kind, b["node"].id), []).append(b["feature"])

    def node_doc(n):
        return {
            "kind": n.kind,
            "id": n.id,
            "fenced": n.fenced,
            "address": n.address,
            "supported": None
            if n.supported is None
            else {f: list(n.supported.get(f, (0, 0))) for f in check.change.updates},
            "lastSeen": None if n.last_seen_ms is None else {"what": n.last_seen, **timestamp(n.last_seen_ms, now)},
            "error": n.error,
            "blocks": blocks.get((n.kind, n.id), []),
        }

    verdict_lines = command_lines(check.change, check.verdict, dry_run=True)
    applied = getattr(check, "applied", None)
    ok = not check.blockers and not any(check.verdict.values()) and (applied is None or not any(applied.values()))
    return {
        "operation": check.change.op,
        "upgradeType": UPGRADE_TYPE_NAMES[check.change.upgrade_type],
        "mode": "live" if live else "offline",
        "dryRun": not apply or not live,
        "source": check.source if live else None,
        "at": None if live else check.at,
        "updates": [
            {"feature": f, "level": lvl, "levelName": _level_name(f, lvl), "finalizedLevel": check.finalized.get(f, 0)}
            for f, lvl in check.change.updates.items()
        ],
        "nodes": [node_doc(n) for n in check.nodes],
        "blockers": [
            {
                "kind": b["node"].kind,
                "id": b["node"].id,
                "feature": b["feature"],
                "level": b["level"],
                "supported": list(b["supported"]),
                "reason": b["reason"],
            }
            for b in check.blockers
        ],
        "verdict": {
            "by": "kafka" if live else "quorumctl",
            "results": check.verdict,
            "lines": verdict_lines,
            "failure": failure_line(check.verdict),
        },
        "applied": None
        if applied is None
        else {
            "results": applied,
            "lines": command_lines(check.change, applied, dry_run=False),
            "failure": failure_line(applied),
        },
        "notes": list(check.notes),
        "logEnd": getattr(check, "log_end", None),
        "ok": ok,
        "nowMs": now,
    }


def _node_label(n: dict, now_ms: int) -> str:
    bits = []
    if n["fenced"] is not None:
        bits.append("fenced" if n["fenced"] else "unfenced")
    if n["address"]:
        bits.append(n["address"])
    if n["lastSeen"]:
        bits.append(f"{n['lastSeen']['what']} {when_text(n['lastSeen']['ms'], now_ms)}")
    return f"{n['kind']} {n['id']}" + (f" ({', '.join(bits)})" if bits else "")


def _header(doc: dict) -> str:
    want = ", ".join(
        f"{u['feature']}={u['level']}" + (f" ({u['levelName']})" if u["levelName"] else "") for u in doc["updates"]
    )
    have = ", ".join(f"{u['feature']}={u['finalizedLevel']}" for u in doc["updates"])
    kinds = [n["kind"] for n in doc["nodes"]]
    where = (
        f"through {doc['source']}"
        if doc["mode"] == "live"
        else f"image at offset {doc['at']['offset']}, {doc['at']['time'] or 'no time'}"
    )
    return (
        f"{doc['operation'].capitalize()} to {want} (finalized now: {have}); {kinds.count('controller')} "
        f"controller(s) and {kinds.count('broker')} broker(s) checked ({where})\n"
    )


def update_text(doc: dict) -> str:
    now = doc["nowMs"]
    out = [_header(doc)]
    by_node = {(n["kind"], n["id"]): n for n in doc["nodes"]}
    for b in doc["blockers"]:
        out.append(f"Blocker: {_node_label(by_node[(b['kind'], b['id'])], now)}: {b['reason']}\n")
    for n in doc["nodes"]:
        if n["supported"] is None:
            out.append(f"Unknown: {_node_label(n, now)}: supported range not known: {n['error']}\n")
    for note in doc["notes"]:
        out.append(f"Note: {note}\n")
    if doc["mode"] == "live":
        out.append("Kafka's verdict (UpdateFeatures with validateOnly):\n")
    else:
        out.append("Verdict (the active controller's checks, replayed on the image; Kafka's words):\n")
    out += [line + "\n" for line in doc["verdict"]["lines"]]
    if doc["verdict"]["failure"]:
        out.append(doc["verdict"]["failure"] + "\n")
    if doc["applied"] is not None:
        out.append("Applied (UpdateFeatures):\n")
        out += [line + "\n" for line in doc["applied"]["lines"]]
        if doc["applied"]["failure"]:
            out.append(doc["applied"]["failure"] + "\n")
    elif doc["mode"] == "live" and not doc["dryRun"]:
        out.append(f"Not sent: the {doc['operation']} is blocked.\n")
    elif doc["mode"] == "live":
        out.append(f"Dry run: nothing was changed. Run again with --apply to {doc['operation']}.\n")
    else:
        out.append("Offline: nothing can be changed from a log dir; run against the cluster with --apply.\n")
    return "".join(out)


def update_table(doc: dict):
    from rich.table import Table
    from rich.text import Text

    t = Table(title=_header(doc).rstrip())
    features = [u["feature"] for u in doc["updates"]]
    for col in ("Kind", "Id", "State", "Address", "LastSeen", *features, "Blocks / error"):
        t.add_column(col)
    for n in doc["nodes"]:
        state = "-" if n["fenced"] is None else ("fenced" if n["fenced"] else "unfenced")
        seen = "-" if not n["lastSeen"] else f"{iso_utc(n['lastSeen']['ms'])} ({n['lastSeen']['age']})"
        ranges = (
            ["unknown"] * len(features)
            if n["supported"] is None
            else [range_text(*n["supported"][f]) for f in features]
        )
        blocks = ", ".join(n["blocks"])
        t.add_row(
            n["kind"],
            str(n["id"]),
            state,
            n["address"] or "-",
            seen,
            *ranges,
            Text(blocks, style="bold red") if blocks else Text(n["error"] or "", style="yellow"),
        )
    lines = [f"Note: {n}" for n in doc["notes"]] + doc["verdict"]["lines"]
    lines += [doc["verdict"]["failure"]] if doc["verdict"]["failure"] else []
    if doc["applied"]:
        lines += doc["applied"]["lines"] + ([doc["applied"]["failure"]] if doc["applied"]["failure"] else [])
    return [t, Text("\n".join(lines))]  # Kafka's words, not Rich markup
