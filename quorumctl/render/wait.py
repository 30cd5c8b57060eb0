"""`quorumctl wait`'s outcome (one line, or one JSON document) and its progress
line on a terminal's stderr (nothing when stderr is not a terminal)."""

from __future__ import annotations

from .output import StatusLine


def _what(r) -> str:
    return r.condition + ("" if not r.ids else " " + " ".join(str(i) for i in r.ids))


def wait_text(r) -> str:
    if r.interrupted:
        return f"interrupted after {r.elapsed_s:.1f} s waiting for {_what(r)}: {r.reason}\n"
    if r.ok:
        return (
            f"{_what(r)}: true after {r.elapsed_s:.1f} s ({r.samples} sample{'s' if r.samples != 1 else ''}): "
            f"{r.reason}\n"
        )
    return (
        f"{_what(r)}: still false after {r.elapsed_s:.1f} s (timeout {r.timeout_s:g} s, {r.samples} "
        f"sample{'s' if r.samples != 1 else ''}): {r.reason}\n"
    )


def wait_doc(r) -> dict:
    return {
        "condition": r.condition,
        "ids": r.ids,
        "ok": r.ok,
        "interrupted": r.interrupted,
        "reason": r.reason,
        "samples": r.samples,
        "elapsedSeconds": round(r.elapsed_s, 2),
        "timeoutSeconds": r.timeout_s,
    }


class Progress(StatusLine):
    """One line on stderr, rewritten per sample, when stderr is a terminal."""

    def __call__(self, r) -> None:
        self.show(f"waiting for {_what(r)} ({r.elapsed_s:.0f}/{r.timeout_s:g} s): {r.reason}")
