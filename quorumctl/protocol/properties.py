"""Java `.properties` files (Kafka's client and server configs), read the way
`java.util.Properties.load` reads them: `#`/`!` comments, `=`, `:` or
whitespace between key and value, backslash line continuations (leading
whitespace of the next line dropped), `\\t \\n \\r \\f \\uXXXX` escapes, any other
escaped character taken literally, the last duplicate winning.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError

_ESC = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_WS = " \t\f"


def _unescape(text: str, where: str) -> str:
    if "\\" not in text:
        return text
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u":
            hexs = text[i + 2:i + 6]
            if len(hexs) != 4 or any(h not in "0123456789abcdefABCDEF" for h in hexs):
                raise InputError(f"{where}: malformed \\uxxxx escape")
            out.append(chr(int(hexs, 16)))
            i += 6
        else:
            out.append(_ESC.get(nxt, nxt))
            i += 2
    return "".join(out)


def _ends_with_continuation(line: str) -> bool:
    n = 0
    for c in reversed(line):
        if c != "\\":
            break
        n += 1
    return n % 2 == 1


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    props: dict[str, str] = {}
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    while i < len(lines):
        start = i + 1
        line = lines[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":
            continue
        while _ends_with_continuation(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(_WS)
            i += 1
        if _ends_with_continuation(line):
            line = line[:-1]
        # the key ends at the first unescaped '=', ':' or whitespace
        k = 0
        while k < len(line):
            c = line[k]
            if c == "\\":
                k += 2
                continue
            if c in "=:" or c in _WS:
                break
            k += 1
        key = line[:k]
        rest = line[k:].lstrip(_WS)
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(_WS)
        where = f"{source}:{start}"
        props[_unescape(key, where)] = _unescape(rest, where)
    return props


def load_properties(path: str | Path, what: str = "properties file") -> dict[str, str]:
    """Read a properties file; a missing or unreadable file is an InputError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} {p} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} {p} is a directory, not a file") from None
    except OSError as e:
        raise InputError(f"cannot read {what} {p}: {e.strerror or e}") from None
    # Kafka reads these files as ISO-8859-1 unless escaped; UTF-8 is what
    # people write today, so accept it and fall back to Latin-1.
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_properties(text, str(p))
