"""A problem found in a file: what verify reports (and dump-log, and state)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Problem:
    path: str
    position: int | None  # byte position in `path`, when it has one
    offset: int | None  # the log offset concerned, when there is one
    message: str  # what was found and what was expected
    kind: str = "problem"  # short slug: crc-mismatch, torn-tail, offset-gap, ...

    def line(self) -> str:
        where = [self.path]
        if self.position is not None:
            where.append(f"position {self.position}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        return f"{': '.join(where)}: {self.kind}: {self.message}"

    def to_json(self) -> dict:
        return asdict(self)
