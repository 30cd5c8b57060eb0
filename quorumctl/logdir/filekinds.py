"""What a file in a Kafka log dir is, from its name alone (as Kafka decides).

Kafka's tools dispatch on the suffix after the last dot; files without a dot
(quorum-state, leader-epoch-checkpoint, ...) are known by their full name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

SNAPSHOT_RE = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
SEGMENT_RE = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)$")

LOG = "log"
SNAPSHOT = "snapshot"  # raft snapshot OOOO-EEEE.checkpoint
BOOTSTRAP = "bootstrap"  # bootstrap.checkpoint
INDEX = "index"
TIMEINDEX = "timeindex"
PRODUCER_SNAPSHOT = "producer-snapshot"
TXNINDEX = "txnindex"
QUORUM_STATE = "quorum-state"
EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
META_PROPERTIES = "meta.properties"
PARTITION_METADATA = "partition.metadata"
OFFSET_CHECKPOINT = "offset-checkpoint"  # recovery-point-offset-checkpoint etc.
UNKNOWN = "unknown"

_BY_NAME = {
    "quorum-state": QUORUM_STATE,
    "leader-epoch-checkpoint": EPOCH_CHECKPOINT,
    "meta.properties": META_PROPERTIES,
    "partition.metadata": PARTITION_METADATA,
    "bootstrap.checkpoint": BOOTSTRAP,
}
_BY_SUFFIX = {
    "log": LOG,
    "index": INDEX,
    "timeindex": TIMEINDEX,
    "snapshot": PRODUCER_SNAPSHOT,
    "txnindex": TXNINDEX,
}
# Suffixes Kafka adds to a file on its way out; the name before it says what the file
# was (segment, index, snapshot ...), and its bytes are still that file's.
RENAMED = {
    ".deleted": "scheduled for deletion (retention, truncation or a replaced snapshot)",
    ".cleaned": "the log cleaner's output, not yet swapped in",
    ".swap": "a cleaned segment about to replace the original",
}

# the order files of one directory are dumped in; also every kind dump-log and verify read
ORDER = [
    META_PROPERTIES,
    BOOTSTRAP,
    PARTITION_METADATA,
    QUORUM_STATE,
    EPOCH_CHECKPOINT,
    LOG,
    INDEX,
    TIMEINDEX,
    TXNINDEX,
    PRODUCER_SNAPSHOT,
    SNAPSHOT,
]

# The registry: what each command that reads every kind does with a file of each
# kind. A handler is declared where it lives, with `@handles(role, *kinds)`:
# dump-log's in quorumctl/dump/log.py and quorumctl/dump/files.py, verify's in
# quorumctl/ops/verify.py (modules above this layer, so they register themselves;
# nothing here imports them). The commands dispatch through handler(); a kind in
# ORDER without a handler for every role is what missing_handlers() names, and
# missing_parts() also a kind without a name or a place in ORDER
# (tests/unit/test_filekinds_registry.py).
ROLES = ("dump", "verify")
_HANDLERS: dict[tuple[str, str], Callable[..., object]] = {}


def handles(role: str, *kinds: str):
    """Decorator: the function is `role`'s handler of files of these kinds."""
    if role not in ROLES:
        raise ValueError(f"no role {role!r} (one of {', '.join(ROLES)})")

    def register(fn):
        for kind in kinds:
            if kind not in ORDER:
                raise ValueError(f"{fn.__qualname__}: {kind!r} is not a kind of ORDER")
            if _HANDLERS.get((role, kind), fn) is not fn:
                raise ValueError(
                    f"{fn.__qualname__}: {role} of {kind!r} is already {_HANDLERS[role, kind].__qualname__}"
                )
            _HANDLERS[role, kind] = fn
        return fn

    return register


def handler(role: str, kind: str):
    """The function registered for `role` on files of `kind` (LookupError if there is none)."""
    try:
        return _HANDLERS[role, kind]
    except KeyError:
        raise LookupError(f"no {role} handler for files of kind {kind!r}") from None


def missing_handlers() -> list[tuple[str, str]]:
    """(role, kind) pairs of ORDER's kinds that no handler is registered for."""
    return [(role, kind) for kind in ORDER for role in ROLES if (role, kind) not in _HANDLERS]


def missing_parts() -> list[tuple[str, str]]:
    """What a kind lacks of its parts (docs/architecture.md, "Adding a file kind"):
    ("name", kind) for a kind of ORDER that kind_of() never gives (no _BY_NAME or
    _BY_SUFFIX entry), ("order", kind) for a kind kind_of() gives that is not in
    ORDER (dump-log and verify would never read it; offset checkpoints are Kafka's
    housekeeping, skipped on purpose), and (role, kind) for each missing handler.
    Each handler reads the file with the kind's reader in logdir/."""
    named = set(_BY_NAME.values()) | set(_BY_SUFFIX.values()) | {SNAPSHOT}
    return (
        [("name", kind) for kind in ORDER if kind not in named]
        + [("order", kind) for kind in sorted(named - set(ORDER))]
        + missing_handlers()
    )


def name_patterns() -> list[str]:
    """Shell globs of the names kind_of() knows (for the shell completions)."""
    return (
        sorted(_BY_NAME)
        + ["*offset-checkpoint", "*.checkpoint"]
        + [f"*.{s}" for s in _BY_SUFFIX]
        + [f"*{s}" for s in RENAMED]
    )


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


# Files Kafka itself keeps in a log dir that no command reads: skipped without a word.
_HOUSEKEEPING_NAMES = {".lock", ".kafka_cleanshutdown"}
_HOUSEKEEPING_SUFFIXES = ("deleted", "cleaned", "swap", "tmp", "part")

# What dump-log and verify read, for the one-line errors of discover().
LOG_DIR_FILES = (
    "a Kafka log dir, or one of its .log/.index/.timeindex/.txnindex/.snapshot/.checkpoint files, "
    "quorum-state, leader-epoch-checkpoint, meta.properties or partition.metadata"
)


def is_housekeeping(name: str) -> bool:
    """Kafka's own bookkeeping files (lock, offset checkpoints, files being deleted or swapped)."""
    name = os.path.basename(name)
    return (
        name in _HOUSEKEEPING_NAMES
        or kind_of(name) == OFFSET_CHECKPOINT
        or name.rsplit(".", 1)[-1] in _HOUSEKEEPING_SUFFIXES
    )


def named_like_a_file(name: str) -> bool:
    """A name only Kafka's files have (quorum-state, 0000...0000.log, a snapshot name):
    a directory so named is an impostor, not a directory to walk. (A log dir may
    well be called `kafka.log`: a suffix alone does not make a file.)"""
    name = os.path.basename(name.rstrip(os.sep))
    return name in _BY_NAME or bool(SEGMENT_RE.match(name) or SNAPSHOT_RE.match(name))


def local_files(path: str) -> list[str] | None:
    """The files under a local path: the path itself, or a directory walked
    recursively, each directory's files in dump order (state files, then each
    segment's files, then snapshots; unknown names last); None if it does not exist.
    Symlinked directories are followed (a partition on another volume), each real
    one once (a symlink loop ends); a directory named like a file (`quorum-state/`)
    is listed as that file, not walked into: reading it then says what it is."""
    if os.path.isdir(path) and not named_like_a_file(path):
        out: list[str] = []

        def unreadable(e: OSError):
            from ..errors import InputError

            raise InputError(f"{e.filename}: {e.strerror or e} (while listing {path})")

        seen = {os.path.realpath(path)}
        for root, dirs, files in os.walk(path, onerror=unreadable, followlinks=True):
            impostors = [d for d in dirs if named_like_a_file(d)]
            walk = []
            for d in sorted(dirs):
                real = os.path.realpath(os.path.join(root, d))
                if d not in impostors and real not in seen:
                    seen.add(real)
                    walk.append(d)
            dirs[:] = walk
            names = files + impostors
            names.sort(key=lambda f: _dir_order(f) if kind_of(f) in ORDER else (3, 0, 0, f))
            out.extend(os.path.join(root, f) for f in names)
        return out
    if os.path.isdir(path):  # an impostor named on the command line
        return [path.rstrip(os.sep) or path]
    # lexists: a dangling symlink is reported when it is read, not as missing
    return [path] if os.path.lexists(path) and not path.endswith(os.sep) else None


def discover(paths: list[str], accept, expected: str, *, listing=local_files, is_dir=os.path.isdir, stray=None) -> list:
    """The one rule for the inputs of the commands that read files (dump-log,
    verify, spark-export): accept(item, named) says what to read for each file
    found (None: not ours); `named` is true for a path that names a file.

    A path that does not exist, a named file that is not accepted, and a path
    under which nothing is accepted are InputErrors naming the path and
    `expected` (a wrong path must never look like a clean result). Files in a
    directory that are not accepted are skipped; stray(item) hears of those that
    are not Kafka's own housekeeping files."""
    from ..errors import InputError

    out = []
    for p in paths:
        items = listing(p)
        if items is None:
            raise InputError(f"{p}: no such file or directory")
        named = not is_dir(p)
        found = 0
        strays = []
        for item in items:
            got = accept(item, named)
            if got is None:
                if named:
                    raise InputError(f"{p}: not a file this command reads (expected {expected})")
                if not is_housekeeping(getattr(item, "path", item)):
                    strays.append(item)
                continue
            found += 1
            out.append(got)
        if not found:
            raise InputError(f"{p}: nothing to read in it (expected {expected})")
        if stray is not None:
            for item in strays:  # told only when the path is good: an error stays one line
                stray(item)
    return out


def log_dir_files(paths: list[str], stray=None) -> list[str]:
    """discover() for dump-log and verify: every file of a kind they read (ORDER's)."""
    return discover(paths, lambda f, named: f if kind_of(f) in ORDER else None, LOG_DIR_FILES, stray=stray)
