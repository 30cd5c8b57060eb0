"""`migrate-quorum`: the preflight's checks and verdict, the upgrade's result,
the config plan per node and the verification after a roll. One document per
step; text and JSON are views of it."""

from __future__ import annotations

from ..ops.migrate import Facts, voters_text
from ..versions import NAME_OF, version_name


def _node_doc(n) -> dict:
    return {
        "kind": n.kind,
        "id": n.id,
        "address": n.address,
        "voter": n.voter,
        "observer": n.observer,
        "directoryId": n.directory_id,
        "metaDirectoryId": n.meta_directory_id,
        "supported": None
        if n.supported is None
        else {k: list(v) for k, v in sorted(n.supported.items()) if k in ("kraft.version", "metadata.version")},
        "config": None
        if n.conf_source is None
        else {
            "source": n.conf_source,
            "state": n.conf_state,
            "controller.quorum.voters": n.voters_conf,
            "controller.quorum.bootstrap.servers": n.bootstrap_conf,
        },
        "error": n.error,
        "configError": n.conf_error,
    }


def _check_doc(c) -> dict:
    return {"check": c.name, "status": c.status, "node": c.node, "detail": c.detail, "fix": c.fix}


def facts_doc(f: Facts) -> dict:
    mv = f.metadata_version
    return {
        "mode": f.mode,
        "source": f.source,
        "kraftVersion": f.kraft_version,
        "metadataVersion": mv,
        "metadataVersionName": None if mv is None else NAME_OF.get(mv, version_name(mv)),
        "leader": f.leader,
        "voters": {str(k): v for k, v in sorted(f.voters.items())},
        "nodes": [_node_doc(n) for n in f.nodes],
        "kafkaVerdict": f.verdict,
        "notes": list(f.notes),
    }


def preflight_doc(f: Facts, report: dict) -> dict:
    return {
        "step": "preflight",
        **facts_doc(f),
        "verdict": report["verdict"],
        "checks": [_check_doc(c) for c in report["checks"]],
        "first": report["first"],
        "next": report["next"],
        "ok": report["verdict"] != "blocked",
    }


def upgrade_doc(
    f: Facts, report: dict, apply: bool, error: str | None, after: Facts | None, verified: dict | None
) -> dict:
    doc = preflight_doc(f, report)
    doc.update(step="upgrade", dryRun=not apply, applied=None, after=None)
    if apply and report["verdict"] == "ready":
        doc["applied"] = {
            "ok": error is None,
            "line": "kraft.version was upgraded to 1."
            if error is None
            else f"Could not upgrade kraft.version to 1. {error}",
        }
    if after is not None and verified is not None:
        doc["after"] = {
            **facts_doc(after),
            "checks": [_check_doc(c) for c in verified["checks"] if c.name in ("kraft.version", "quorum", "voters")],
        }
    doc["ok"] = (
        report["verdict"] != "blocked"
        and (doc["applied"] is None or doc["applied"]["ok"])
        and (doc["after"] is None or all(c["status"] == "ok" for c in doc["after"]["checks"]))
    )
    return doc


def configs_doc(f: Facts, plan: dict | None, verified: dict | None) -> dict:
    doc = {"step": "configs", **facts_doc(f), "plan": None, "verify": None}
    if plan is not None:
        doc["bootstrapServers"] = plan["bootstrap"]
        doc["plan"] = [
            {
                "order": i,
                "kind": s["node"].kind,
                "id": s["node"].id,
                "address": s["node"].address,
                "state": s["state"],
                "done": s["done"],
                "remove": s["remove"],
                "add": s["add"],
            }
            for i, s in enumerate(plan["steps"], 1)
        ]
    if verified is not None:
        nxt = verified["next"]
        doc["verify"] = {
            "ok": verified["ok"],
            "done": verified["done"],
            "checks": [_check_doc(c) for c in verified["checks"]],
            "next": None if nxt is None else {"kind": nxt.kind, "id": nxt.id},
            "pending": [{"kind": n.kind, "id": n.id} for n in verified["pending"]],
            "unknown": [{"kind": n.kind, "id": n.id} for n in verified["unknown"]],
        }
    doc["ok"] = verified is None or verified["ok"]
    return doc


# -- text ------------------------------------------------------------------------------------


def _head(doc: dict, what: str) -> list[str]:
    via = f"through {doc['source']}" if doc["mode"] == "live" else f"from {doc['source']}"
    voters = voters_text({int(k): v for k, v in doc["voters"].items()}) or "unknown"
    leader = doc["leader"] if doc["leader"] is not None and doc["leader"] >= 0 else "none"
    kv = doc["kraftVersion"] if doc["kraftVersion"] is not None else "unknown"
    lines = [
        f"Static to dynamic quorum: {what} ({doc['mode']}, {via})",
        f"kraft.version {kv}, metadata.version {doc['metadataVersionName'] or 'unknown'}, "
        + (f"leader {leader}, " if doc["mode"] == "live" else "")
        + f"voters {voters}",
    ]
    return lines


def _check_lines(checks: list[dict]) -> list[str]:
    out = []
    for c in checks:
        out.append(f"  {c['status']:<8} {c['check']:<16} {c['detail']}")
        if c["fix"]:
            out.append(f"  {'':<8} {'':<16} fix: {c['fix']}")
    return out


def preflight_text(doc: dict) -> str:
    lines = _head(doc, "preflight") + _check_lines(doc["checks"])
    lines += [f"Note: {n}" for n in doc["notes"]]
    verdict = {
        "ready": "ready for kraft.version 1",
        "blocked": "blocked",
        "dynamic": "the quorum is dynamic already (kraft.version 1)",
    }[doc["verdict"]]
    lines.append(f"Verdict: {verdict}.")
    if doc["next"]:
        lines.append(("First: " if doc["verdict"] == "blocked" else "Next: ") + doc["next"])
    return "\n".join(lines) + "\n"


def upgrade_text(doc: dict) -> str:
    lines = _head(doc, "upgrade")
    problems = [c for c in doc["checks"] if c["status"] == "problem"]
    if doc["verdict"] == "dynamic":
        lines.append("kraft.version is 1 already: nothing to upgrade.")
        lines.append("Next: quorumctl migrate-quorum configs")
        return "\n".join(lines) + "\n"
    if doc["verdict"] == "blocked":
        lines.append("Refused: the preflight found problems (nothing was changed):")
        lines += _check_lines(problems)
        return "\n".join(lines) + "\n"
    lines.append("Kafka's verdict (UpdateFeatures with validateOnly):")
    lines.append(doc["kafkaVerdict"] or "")
    if doc["dryRun"]:
        lines.append("Dry run: nothing was changed. Run again with --apply to upgrade kraft.version to 1.")
        return "\n".join(lines) + "\n"
    lines.append("Applied (UpdateFeatures):")
    lines.append(doc["applied"]["line"])
    if doc["after"] is not None:
        lines.append("Verified:")
        lines += _check_lines(doc["after"]["checks"])
        if doc["ok"]:
            lines.append(
                "Next: quorumctl migrate-quorum configs (replace controller.quorum.voters on every node, "
                "one roll at a time)"
            )
    return "\n".join(lines) + "\n"


def configs_text(doc: dict) -> str:
    lines = _head(doc, "configs" + (" --verify" if doc["verify"] is not None else ""))
    if doc["plan"] is not None:
        lines.append(
            "Roll one node at a time, in this order; after each roll run "
            "`quorumctl migrate-quorum configs --verify` before the next:"
        )
        for s in doc["plan"]:
            state = {
                "static": "runs controller.quorum.voters",
                "both": "runs both settings",
                "dynamic": "runs controller.quorum.bootstrap.servers",
                "none": "runs neither setting",
                None: "running settings not known",
            }[s["state"]]
            mark = "done" if s["done"] else "to do"
            lines.append(
                f"{s['order']}. {s['kind']} {s['id']}"
                + (f" ({s['address']})" if s["address"] else "")
                + f": {state}; {mark}"
            )
            if not s["done"]:
                if s["remove"]:
                    lines.append(f"   - {s['remove']}")
                lines.append(f"   + {s['add']}")
    v = doc["verify"]
    if v is not None:
        lines += _check_lines(v["checks"])
        if v["unknown"]:
            lines.append(
                "Not known (give their properties with -c, or ask through --bootstrap-server): "
                + ", ".join(f"{n['kind']} {n['id']}" for n in v["unknown"])
            )
        if not v["ok"]:
            lines.append("Verdict: a problem: fix it before the next roll.")
        elif v["next"] is not None:
            lines.append(f"Verdict: consistent. Next to roll: {v['next']['kind']} {v['next']['id']}.")
        elif v["done"]:
            lines.append("Verdict: the migration is complete: every node runs controller.quorum.bootstrap.servers.")
        else:
            lines.append("Verdict: consistent so far; the nodes above are not known.")
    return "\n".join(lines) + "\n"
