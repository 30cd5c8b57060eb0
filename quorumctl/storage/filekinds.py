"""What a file in a Kafka log dir is, from its name alone (as Kafka decides).

Kafka's tools dispatch on the suffix after the last dot; files without a dot
(quorum-state, leader-epoch-checkpoint, ...) are known by their full name.
"""

from __future__ import annotations

import os
import re

SNAPSHOT_RE = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
SEGMENT_RE = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)$")

LOG = "log"
SNAPSHOT = "snapshot"              # raft snapshot OOOO-EEEE.checkpoint
BOOTSTRAP = "bootstrap"            # bootstrap.checkpoint
INDEX = "index"
TIMEINDEX = "timeindex"
PRODUCER_SNAPSHOT = "producer-snapshot"
TXNINDEX = "txnindex"
QUORUM_STATE = "quorum-state"
EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
META_PROPERTIES = "meta.properties"
PARTITION_METADATA = "partition.metadata"
OFFSET_CHECKPOINT = "offset-checkpoint"   # recovery-point-offset-checkpoint etc.
UNKNOWN = "unknown"

_BY_NAME = {
    "quorum-state": QUORUM_STATE,
    "leader-epoch-checkpoint": EPOCH_CHECKPOINT,
    "meta.properties": META_PROPERTIES,
    "partition.metadata": PARTITION_METADATA,
    "bootstrap.checkpoint": BOOTSTRAP,
}
_BY_SUFFIX = {
    "log": LOG, "index": INDEX, "timeindex": TIMEINDEX, "snapshot": PRODUCER_SNAPSHOT,
    "txnindex": TXNINDEX,
}
# Suffixes Kafka adds to a file on its way out; the name before it says what the file
# was (segment, index, snapshot ...), and its bytes are still that file's.
RENAMED = {
    ".deleted": "scheduled for deletion (retention, truncation or a replaced snapshot)",
    ".cleaned": "the log cleaner's output, not yet swapped in",
    ".swap": "a cleaned segment about to replace the original",
}

# the order files of one directory are dumped in
ORDER = [META_PROPERTIES, BOOTSTRAP, PARTITION_METADATA, QUORUM_STATE, EPOCH_CHECKPOINT,
         LOG, INDEX, TIMEINDEX, TXNINDEX, PRODUCER_SNAPSHOT, SNAPSHOT]


def name_patterns() -> list[str]:
    """Shell globs of the names kind_of() knows (for the shell completions)."""
    return (sorted(_BY_NAME) + ["*offset-checkpoint", "*.checkpoint"] + [f"*.{s}" for s in _BY_SUFFIX]
            + [f"*{s}" for s in RENAMED])


def renamed(path: str) -> str | None:
    """The suffix (".deleted", ".cleaned", ".swap") Kafka renamed this file with, or None."""
    return next((s for s in RENAMED if path.endswith(s) and len(os.path.basename(path)) > len(s)), None)


def original_name(path: str) -> str:
    """The file's name before Kafka renamed it (the name itself if it was not)."""
    name = os.path.basename(path)
    suffix = renamed(name)
    return name[: -len(suffix)] if suffix else name


def kind_of(path: str) -> str:
    """What the file is, or was before Kafka renamed it on its way out."""
    name = original_name(path)
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name.endswith("offset-checkpoint"):
        return OFFSET_CHECKPOINT
    if name.endswith(".checkpoint"):
        return SNAPSHOT
    if "." in name:
        return _BY_SUFFIX.get(name.rsplit(".", 1)[1], UNKNOWN)
    return UNKNOWN


def base_offset_of(path: str) -> int | None:
    """The base offset a segment file's name carries (None if it is not numeric)."""
    stem = os.path.basename(path).split(".", 1)[0]
    return int(stem) if stem.isdigit() else None


def snapshot_id(path: str) -> tuple[int, int] | None:
    """(end offset, epoch) from a snapshot name, or None if the name does not parse."""
    m = SNAPSHOT_RE.match(original_name(path))
    return (int(m.group(1)), int(m.group(2))) if m else None


def is_metadata_path(path: str) -> bool:
    """Files of the KRaft metadata log (decoded as metadata records by default in JSON)."""
    k = kind_of(path)
    if k in (SNAPSHOT, BOOTSTRAP):
        return True
    return os.path.basename(os.path.dirname(os.path.abspath(path))) == "__cluster_metadata-0"


def _dir_order(name: str):
    # small state files first, then each segment's files together, then snapshots
    k = kind_of(name)
    if k in (LOG, INDEX, TIMEINDEX, TXNINDEX, PRODUCER_SNAPSHOT):
        return (1, base_offset_of(name) or 0, ORDER.index(k), name)
    return (2 if k == SNAPSHOT else 0, 0, ORDER.index(k), name)


def expand(paths: list[str]) -> list[str]:
    """Files to process: files as given; directories walked recursively, each
    directory's known files in a stable order (by kind, then name), unknown ones skipped."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                known = [f for f in files if kind_of(f) not in (UNKNOWN, OFFSET_CHECKPOINT)]
                known.sort(key=_dir_order)
                out.extend(os.path.join(root, f) for f in known)
        else:
            out.append(p)
    return out
