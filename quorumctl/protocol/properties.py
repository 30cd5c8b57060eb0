"""Kafka client and server config files (`--command-config`, `--config`):
reading them from disk with one-line errors. The parsing itself is
`storage.properties` (java.util.Properties.load's rules), shared with
meta.properties."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..openfile import open_regular
from ..storage.properties import PropertiesError, loads


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """Java .properties rules (storage.properties is the one parser); a bad escape
    becomes a one-line InputError naming the file and line."""
    try:
        return loads(text)
    except PropertiesError as e:
        raise InputError(f"{source}:{e.line}: {str(e)[0].lower() + str(e)[1:]}") from None


def load_properties(path: str | Path, what: str = "properties file") -> dict[str, str]:
    """Read a properties file; a missing or unreadable file is an InputError."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise InputError(f"{what} {p} does not exist")
    with open_regular(str(p), f"a {what}") as f:   # never a FIFO or device: no hang
        data = f.read(1 << 22)
    # Kafka reads these files as ISO-8859-1 unless escaped; UTF-8 is what
    # people write today, so accept it and fall back to Latin-1.
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_properties(text, str(p))
