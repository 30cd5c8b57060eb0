"""`quorumctl wait`'s outcome (one line, or one JSON document) and its progress
line on a terminal's stderr (nothing when stderr is not a terminal)."""

from __future__ import annotations

import sys


def _what(r) -> str:
    return r.condition + ("" if not r.ids else " " + " ".join(str(i) for i in r.ids))


def wait_text(r) -> str:
    if r.interrupted:
        return f"interrupted after {r.elapsed_s:.1f} s waiting for {_what(r)}: {r.reason}\n"
    if r.ok:
        return f"{_what(r)}: true after {r.elapsed_s:.1f} s ({r.samples} sample{'s' if r.samples != 1 else ''}): " \
               f"{r.reason}\n"
    return f"{_what(r)}: still false after {r.elapsed_s:.1f} s (timeout {r.timeout_s:g} s, {r.samples} " \
           f"sample{'s' if r.samples != 1 else ''}): {r.reason}\n"


def wait_doc(r) -> dict:
    return {"condition": r.condition, "ids": r.ids, "ok": r.ok, "interrupted": r.interrupted, "reason": r.reason,
            "samples": r.samples, "elapsedSeconds": round(r.elapsed_s, 2), "timeoutSeconds": r.timeout_s}


class Progress:
    """One line on stderr, rewritten per sample, when stderr is a terminal."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.on = self.stream.isatty()
        self.shown = False

    def __call__(self, r) -> None:
        if not self.on:
            return
        width = 200
        try:
            import shutil
            width = shutil.get_terminal_size().columns
        except OSError:
            pass
        line = f"waiting for {_what(r)} ({r.elapsed_s:.0f}/{r.timeout_s:g} s): {r.reason}"
        self.stream.write("\r\x1b[K" + line[:max(width - 1, 20)])
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
