"""java.util.Properties, as Kafka reads and writes meta.properties.

Reading follows Properties.load(InputStream): ISO-8859-1 text, `#`/`!`
comments, `=`, `:` or whitespace between key and value, backslash line
continuations and escapes. Writing follows Properties.store(writer, ""): a `#`
line, a `#<Date.toString()>` line, then `key=value` lines in the iteration
order of the ConcurrentHashMap behind Properties (Java 9-17), which is what
Kafka 3.x writes: meta.properties comes out as node.id, directory.id, version,
cluster.id. (Java 18+ sorts the keys instead; readers never depend on order.)

The one reader of .properties files: meta.properties, server.properties and
client configs all go through `loads` (load_properties reads a config file).
The `javaproperties` package implements the same rules but costs ~95 ms to
import (it pulls in xml and urllib), against ~6 ms for this module.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import InputError, at_line
from ..openfile import open_regular

_WS = " \t\f"


class PropertiesError(ValueError):
    def __init__(self, msg: str, line: int):
        super().__init__(msg)
        self.line = line


def _logical_lines(text: str):
    """(first physical line number, logical line) pairs, continuations joined."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    n = len(lines)
    while i < n:
        start = i
        line = lines[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":
            continue
        while True:
            trailing = len(line) - len(line.rstrip("\\"))
            if trailing % 2 == 0 or i >= n:
                if trailing % 2:
                    line = line[:-1]  # a continuation at end of input is dropped, as in Java
                break
            line = line[:-1] + lines[i].lstrip(_WS)
            i += 1
        yield start + 1, line


def _unescape(s: str, line: int) -> str:
    out = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= n:
            break
        c = s[i]
        i += 1
        if c == "u":
            hexpart = s[i : i + 4]
            if len(hexpart) < 4 or any(h not in "0123456789abcdefABCDEF" for h in hexpart):
                raise PropertiesError("Malformed \\uxxxx encoding.", line)
            out.append(chr(int(hexpart, 16)))
            i += 4
        else:
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c))
    return "".join(out)


def loads(data: bytes | str) -> dict[str, str]:
    """Parse properties text (bytes are decoded as ISO-8859-1, as Java does).
    Later duplicates win. Raises PropertiesError (with a line number) on a bad escape."""
    return {k: v for _line, k, v in entries(data)}


def key_lines(data: bytes | str) -> dict[str, int]:
    """key -> the line number of the entry that wins (the last one), for evidence."""
    return {k: line for line, k, _v in entries(data)}


def entries(data: bytes | str):
    """(first line number, key, value) of every entry, in file order."""
    text = data.decode("latin-1") if isinstance(data, (bytes, bytearray)) else data
    for lineno, line in _logical_lines(text):
        # the key ends at the first unescaped '=', ':' or whitespace
        i = 0
        n = len(line)
        while i < n:
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=:" or c in _WS:
                break
            i += 1
        key = line[: min(i, n)]
        j = i
        while j < n and line[j] in _WS:
            j += 1
        if j < n and line[j] in "=:":
            j += 1
        while j < n and line[j] in _WS:
            j += 1
        yield lineno, _unescape(key, lineno), _unescape(line[j:], lineno)


def _escape(s: str, is_key: bool) -> str:
    out = []
    for idx, c in enumerate(s):
        o = ord(c)
        if 61 < o < 127:
            out.append("\\\\" if c == "\\" else c)
        elif c == " ":
            out.append("\\ " if (idx == 0 or is_key) else " ")
        elif c in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        else:
            out.append(c)  # store(Writer) never escapes as \\uXXXX
    return "".join(out)


def _java_string_hash(s: str) -> int:
    """String.hashCode() over UTF-16 code units, as a 32-bit unsigned value."""
    units = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


def java_order(keys: list[str]) -> list[str]:
    """The order a Properties (ConcurrentHashMap of initial capacity 8 -> 16 bins)
    iterates keys inserted in `keys` order: by bin index, then insertion order."""
    table = 16
    while len(keys) > table * 3 // 4:
        table *= 2  # beyond 12 keys CHM resizes; order within a bin is then only approximate

    def spread(k):
        h = _java_string_hash(k)
        return (h ^ (h >> 16)) & 0x7FFFFFFF

    indexed = list(enumerate(keys))
    indexed.sort(key=lambda p: (spread(p[1]) & (table - 1), p[0]))
    return [k for _, k in indexed]


def java_date(epoch_s: float | None = None) -> str:
    """Date.toString() in UTC: 'Sat Nov 21 23:52:36 UTC 2026'."""
    t = time.gmtime(time.time() if epoch_s is None else epoch_s)
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", t)


def dumps(props: dict[str, str], comment: str = "", epoch_s: float | None = None) -> bytes:
    """Properties.store(writer, comment) as UTF-8 bytes, keys in Java's order
    (`props` insertion order is the insertion order Java saw)."""
    out = [f"#{comment}\n", f"#{java_date(epoch_s)}\n"]
    for k in java_order(list(props)):
        out.append(f"{_escape(k, True)}={_escape(props[k], False)}\n")
    return "".join(out).encode("utf-8")


# -- reading a file: client and server configs (--command-config, --config) --------


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """`loads`, with a bad escape as a one-line InputError naming the file and line."""
    try:
        return loads(text)
    except PropertiesError as e:
        raise InputError(at_line(source, e.line, str(e)[0].lower() + str(e)[1:])) from None


def load_properties(path: str | Path, what: str = "properties file") -> dict[str, str]:
    """Read a properties file; a missing or unreadable file is an InputError."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise InputError(f"{what} {p} does not exist")
    with open_regular(str(p), f"a {what}") as f:  # never a FIFO or device: no hang
        data = f.read(1 << 22)
    # Kafka reads these files as ISO-8859-1 unless escaped; UTF-8 is what
    # people write today, so accept it and fall back to Latin-1.
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_properties(text, str(p))
