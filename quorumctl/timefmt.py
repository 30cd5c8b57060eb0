"""Times as quorumctl prints and reads them: epoch milliseconds as ISO-8601 UTC,
a short relative age, the JSON form with both, and a time an operator types
(--at-time, --from-time). A base helper: the image (history, replay), dump-log
and render use it."""

from __future__ import annotations

import time

# The last millisecond ISO-8601 (and Python's datetime) can write: 9999-12-31T23:59:59.999Z.
MAX_ISO_MS = 253402300799999


def now_ms() -> int:
    """This machine's clock in epoch milliseconds."""
    return int(time.time() * 1000)


def iso_utc(ms: int | None) -> str | None:
    """Epoch milliseconds as ISO-8601 UTC with milliseconds; None for None, negative
    times (-1 is Kafka's "no timestamp") and times after the year 9999 (a file may
    hold any int64: the raw value is shown beside it)."""
    if ms is None or not 0 <= ms <= MAX_ISO_MS:
        return None
    from datetime import datetime, timedelta, timezone

    dt = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)  # exact, no float
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def when_text(ms: int, now_ms: int) -> str:
    """A time for text output: `ISO (age)`, or the raw value and why it is not a time."""
    iso = iso_utc(ms)
    if iso is None:
        if ms == -1:
            return "-1 (no timestamp)"
        return f"{ms} ms ({'before 1970' if ms < 0 else 'after the year 9999'}: not a time Kafka writes)"
    return f"{iso} ({age(ms, now_ms)})"


def age(ms: int | None, now_ms: int) -> str | None:
    """A short relative age ("350 ms ago", "4.2 s ago", "3 min ago"); None if unknown."""
    if ms is None or ms < 0:
        return None
    d = now_ms - ms
    if d < 0:
        return f"in {(-d)} ms"
    if d < 1000:
        return f"{d} ms ago"
    if d < 60_000:
        return f"{d / 1000:.1f} s ago"
    if d < 3_600_000:
        return f"{d // 60_000} min ago"
    if d < 86_400_000:
        return f"{d / 3_600_000:.1f} h ago"
    return f"{d / 86_400_000:.1f} d ago"


def timestamp(ms: int | None, now_ms: int) -> dict:
    """The JSON form of a timestamp: raw epoch ms, ISO-8601 UTC, and its age."""
    return {"ms": ms, "iso": iso_utc(ms), "age": age(ms, now_ms)}


def parse_time(text: str) -> int:
    """A time an operator typed (--at-time, --from-time): epoch milliseconds, or
    ISO-8601 (UTC unless it says otherwise)."""
    import re
    from datetime import datetime, timezone

    from .errors import InputError

    t = text.strip()
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    try:
        dt = datetime.fromisoformat(t.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InputError(
            f"{text!r}: expected a time as ISO-8601 (2024-05-01T02:00:00Z) or epoch milliseconds"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)
