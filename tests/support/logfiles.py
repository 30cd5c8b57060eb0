"""Reading a log dir's state in tests: file hashes (did anything change?) and a
batch file's structure (what did we write?)."""

from __future__ import annotations

import hashlib
import os

from quorumctl.records import metadata as md
from quorumctl.records.batch import BatchReader


def tree(path) -> dict[str, str]:
    """relative path -> sha256 of every file under `path` (the state of a directory),
    ignoring Kafka's empty .lock files (taking the lock creates one, as Kafka does)."""
    out = {}
    for root, _dirs, files in os.walk(path):
        for f in files:
            if f == ".lock":
                continue
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def decode(path):
    """A batch file as Kafka's structure without times and CRCs: per batch (base, last,
    epoch, control, size), its records as (type, data)."""
    out = []
    for b in BatchReader(str(path)):
        recs = []
        for r in b.records():
            if b.is_control:
                d = md.decode_control(r.key, r.value)
            else:
                d = md.decode_metadata(r.value)
            recs.append((d.type_name, d.data))
        out.append(((b.base_offset, b.last_offset, b.leader_epoch, b.is_control, b.size), recs))
    return out
