"""The table of docs/kafka-command-lines.md: Kafka's documented command lines and
the quorumctl line each runs as (test_kafka_live runs the live rows,
test_kafka_help_parity the offline ones)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "kafka-command-lines.md"


def doc_rows(kind: str) -> list[dict]:
    """The rows whose `run` cell is `kind` (live or offline). The exit cell is N, or
    "N (4.1: M)" where a Kafka 4.1 cluster gives M: `exit41`."""
    rows = []
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[3] == kind:
            m = re.fullmatch(r"(\d+)(?: \(4\.1: (\d+)\))?", cells[2])
            assert m is not None, f"{DOC.name}: bad exit cell {cells[2]!r}"
            rows.append(
                {
                    "kafka": cells[0].strip("`"),
                    "quorumctl": cells[1].strip("`"),
                    "exit": int(m[1]),
                    "exit41": int(m[2] or m[1]),
                    "note": cells[4],
                }
            )
    return rows
