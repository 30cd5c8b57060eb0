"""Reading Kafka's real tool transcripts in ../shared/reference/samples.

Each transcript is a sequence of blocks: a `$ command` line, then the tool's
stdout and stderr, then `[exit=N]`.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SAMPLES = SHARED / "reference" / "samples"
FIXTURES = SHARED / "reference" / "fixtures"
CORPUS = SHARED / "corpus"

needs_shared = pytest.mark.shared("reference")  # Kafka's transcripts and files


def corpus_record_files() -> list[Path]:
    """Every corpus file that holds record batches (snapshots, bootstrap checkpoints,
    metadata log segments), from CATALOG.json; empty without ../shared."""
    if not (CORPUS / "CATALOG.json").exists():
        return []
    cat = json.loads((CORPUS / "CATALOG.json").read_text())
    kinds = ("snapshot", "bootstrap.checkpoint", "metadata-log")
    return [CORPUS / f["local"] for repo in cat.values() for f in repo["files"] if f["kind"] in kinds]


@dataclass
class Block:
    command: str
    argv: list[str]
    lines: list[str]
    exit: int


def blocks(name: str) -> list[Block]:
    text = (SAMPLES / name).read_bytes().decode("utf-8", "replace")
    out: list[Block] = []
    cur = None
    for line in text.split("\n"):
        if line.startswith("$ "):
            cur = Block(line[2:], shlex.split(line[2:]), [], -1)
            continue
        if cur is None:
            continue
        m = re.fullmatch(r"\[exit=(\d+)\]", line)
        if m:
            cur.exit = int(m.group(1))
            out.append(cur)
            cur = None
        else:
            cur.lines.append(line)
    return out


def sample_blocks(path: Path) -> list[tuple[str, str]]:
    """(command line, output text) for each `$ ...` in a transcript; unlike
    blocks(), a block ends at any `[exit=...` line (some say `[exit=0 after 2s]`)."""
    out, cmd, lines = [], None, []
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("$ "):
            cmd, lines = line[2:].rstrip("\n"), []
        elif cmd is not None and line.startswith("[exit="):
            out.append((cmd, "".join(lines)))
            cmd = None
        elif cmd is not None:
            lines.append(line)
    return out
