"""`quorumctl probe`'s result: one line of text (what a Kubernetes probe's
event shows), or one JSON document with the facts the verdict rests on."""

from __future__ import annotations

from .output import iso_utc


def probe_text(v) -> str:
    return f"{v.kind} {'ok' if v.ok else 'failed'}: {v.reason}\n"


def _ld_doc(ld) -> dict | None:
    if ld is None:
        return None
    return {
        "path": ld.path,
        "nodeId": ld.node_id,
        "quorumStateLeaderId": ld.state_leader_id,
        "quorumStateEpoch": ld.state_epoch,
        "quorumStateAgeSeconds": None if ld.state_age_s is None else round(ld.state_age_s, 1),
        "logEndOffset": ld.log_end_offset,
        "logAgeSeconds": None if ld.log_age_s is None else round(ld.log_age_s, 1),
        "error": ld.error,
    }


def probe_doc(v) -> dict:
    f = v.facts
    return {
        "kind": v.kind,
        "role": v.role,
        "ok": v.ok,
        "exitStatus": int(v.status),
        "reason": v.reason,
        "address": f.address,
        "nodeId": f.node_id,
        "graceSeconds": v.grace_s,
        "detachedSeconds": None if v.detached_s is None else round(v.detached_s, 1),
        "own": {
            "answers": f.answers,
            "answeredAs": f.answered_as,
            "error": f.error,
            "follows": f.follows,
            "registered": f.registered,
            "fenced": f.fenced,
        },
        "leader": None
        if f.leader_id is None
        else {
            "leaderId": f.leader_id,
            "leaderEpoch": f.leader_epoch,
            "highWatermark": f.high_watermark,
            "replica": f.replica,
            "logEndOffset": f.log_end_offset,
            "lastFetchTimestamp": {"ms": f.last_fetch_ms, "iso": iso_utc(f.last_fetch_ms)},
            "lastCaughtUpTimestamp": {"ms": f.last_caught_up_ms, "iso": iso_utc(f.last_caught_up_ms)},
            "silentMs": f.silent_ms(),
            "caughtUp": f.caught_up(),
            "voters": f.voters,
            "caughtUpWithoutIt": f.caught_up_without,
            "majority": f.majority,
        },
        "peersAnswered": f.peers_answered,
        "fetchTimeoutMs": f.fetch_timeout_ms,
        "logDir": _ld_doc(f.log_dir),
    }
