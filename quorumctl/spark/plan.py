"""Planning an export: which files, what each log dir says about itself, and
how the bytes are cut into Spark tasks.

Files: directories are searched recursively for metadata log segments
(`*.log` in a `__cluster_metadata-<n>` directory), snapshots
(`<end offset>-<epoch>.checkpoint`) and `bootstrap.checkpoint`; files named
directly are taken as they are (any `.log` is read as a metadata log).

Splits: a file larger than the split size is cut at batch boundaries. A piece
[start, end) owns the batches whose first byte lies in it, and since every cut
is a batch's first byte, a piece ends exactly where its last batch ends: no
batch is read twice or skipped, and no task needs more than one batch in
memory. The boundaries come from a header walk: read a batch's 12-byte prefix
(baseOffset, batchLength), jump batchLength bytes, repeat, never reading a
batch body (small batches are walked inside a 64 KiB window; large ones cost
one seek each), which is disk speed even for GBs. The walk follows lengths
exactly as the decoder does (`BatchReader`), so both agree on every boundary;
where the walk meets an impossible length or a torn tail it stops cutting, and
the rest of the file is one piece whose reader reports the problem as rows.

Pieces are then packed into tasks, largest first into the least loaded task
(each piece costing its size plus an open cost), with the split size lowered
so there are at least `min_partitions` tasks when the input allows (the
export asks for three per core: decoding runs at tens of MB/s per core, not
the hundreds Spark's file sources assume, so balance matters more than task
count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError
from ..records.batch import batch_cuts
from ..logdir import filekinds
from . import fs

SEGMENT = "segment"
SNAPSHOT = "snapshot"
BOOTSTRAP = "bootstrap"

DEFAULT_SPLIT_SIZE = 128 << 20  # as spark.sql.files.maxPartitionBytes
DEFAULT_OPEN_COST = 256 << 10  # opening a file costs about as much as decoding this much
TASKS_PER_SLOT = 3  # tasks per core by default: equal tasks balance, one per core may not
SMALL_JOB_PER_SLOT = 128 << 20  # ... but below this much input per core, one task per core

_METADATA_DIR = re.compile(r"^__cluster_metadata-\d+$")


@dataclass(frozen=True)
class SourceFile:
    """One input file and what its name and its log dir tell about it."""

    path: str
    kind: str
    size: int
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None
    segment_base_offset: int | None = None
    snapshot_end_offset: int | None = None
    snapshot_epoch: int | None = None


@dataclass(frozen=True)
class Piece:
    """Bytes [start, end) of a file: the batches that begin there."""

    file: SourceFile
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def last(self) -> bool:
        """Whether the piece runs to the end of the file (only it reports a bad tail)."""
        return self.end >= self.file.size


@dataclass
class Plan:
    files: list[SourceFile]
    partitions: list[list[Piece]]
    split_bytes: int

    @property
    def total_bytes(self) -> int:
        return sum(max(f.size, 0) for f in self.files)

    @property
    def pieces(self) -> int:
        return sum(len(p) for p in self.partitions)


def parse_size(text) -> int:
    """'128m' -> 134217728; plain numbers are bytes."""
    s = str(text).strip().lower().removesuffix("b")
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}.get(s[-1:], 1)
    if mult != 1:
        s = s[:-1]
    try:
        value = int(float(s) * mult)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (use bytes or a k/m/g suffix)") from None
    if value <= 0:
        raise ValueError(f"size must be positive: {text!r}")
    return value


# -- which files -------------------------------------------------------------


def export_kind(path: str, explicit: bool = False) -> str | None:
    """SEGMENT / SNAPSHOT / BOOTSTRAP for a file the export reads, else None.
    Found in a directory, a `.log` counts only inside a metadata log directory
    and a `.checkpoint` only with a snapshot's name; named directly, any
    `.log` or `.checkpoint` is read."""
    name = fs.basename(path)
    if filekinds.renamed(name) and not explicit:
        return None  # on its way out (.deleted, .cleaned, .swap): its records are in the live files
    kind = filekinds.kind_of(name)
    if kind == filekinds.BOOTSTRAP:
        return BOOTSTRAP
    if kind == filekinds.SNAPSHOT and (explicit or filekinds.snapshot_id(name) is not None):
        return SNAPSHOT
    if kind == filekinds.LOG and (explicit or _METADATA_DIR.match(fs.basename(fs.parent(path)))):
        return SEGMENT
    return None


EXPORTED = "a metadata log segment (.log), snapshot (.checkpoint) or bootstrap.checkpoint"


def discover(paths: list[str], options: dict | None = None) -> list[tuple[str, str, int]]:
    """(path, kind, size) of every file to export, in a stable order: the
    inputs rule of dump-log and verify (filekinds.discover) over local or
    remote listings; a glob is searched like a directory."""
    seen = set()

    def accept(item, named):
        kind = export_kind(item.path, named)
        if kind is None:
            return None
        if item.path in seen:
            return ()
        seen.add(item.path)
        return (item.path, kind, item.size)

    found = filekinds.discover(
        paths,
        accept,
        EXPORTED,
        listing=lambda p: fs.list_files(p, options),
        is_dir=lambda p: any(c in p for c in "*?[") or _is_dir(p, options),
    )
    return [f for f in found if f]


def _is_dir(path: str, options) -> bool:
    if not fs.is_remote(path):
        import os

        return os.path.isdir(fs.local_path(path))
    import pyarrow.fs as pafs

    f, inner = fs._pyarrow_fs(path, options)
    return f.get_file_info(inner).type == pafs.FileType.Directory


def log_dir_identity(directory: str, options: dict | None = None, cache: dict | None = None) -> dict:
    """{"cluster.id", "node.id", "directory.id"} (those present) from the
    meta.properties of the log dir holding `directory`: the directory itself
    (bootstrap.checkpoint sits there) or, for a metadata log directory, its parent."""
    cache = {} if cache is None else cache
    if directory in cache:
        return cache[directory]
    candidates = [directory]
    if _METADATA_DIR.match(fs.basename(directory)):
        candidates.append(fs.parent(directory))
    ident: dict = {}
    for d in candidates:
        raw = fs.read_small(fs.join(d, "meta.properties"), options=options)
        if raw is None:
            continue
        ident = _parse_meta(raw, fs.join(d, "meta.properties"))
        break
    cache[directory] = ident
    return ident


def _parse_meta(raw: bytes, path: str) -> dict:
    from ..logdir import statefiles as files
    from ..config import properties

    try:
        props = properties.loads(raw)
    except properties.PropertiesError:
        return {}
    try:
        return files.parse_meta_properties(props, path)
    except InputError:
        # an odd file still tells what it says; the export only labels rows with it
        out: dict[str, str | int] = {k: props[k] for k in ("cluster.id", "directory.id") if k in props}
        node = props.get("node.id", props.get("broker.id", "")).strip()
        if re.fullmatch(r"-?\d+", node) and -(1 << 31) <= int(node) < (1 << 31):
            out["node.id"] = int(node)
        return out


def source_files(paths: list[str], options: dict | None = None) -> list[SourceFile]:
    cache: dict = {}
    out = []
    for path, kind, size in discover(paths, options):
        ident = log_dir_identity(fs.parent(path), options, cache)
        name = fs.basename(path)
        base = filekinds.base_offset_of(name) if kind == SEGMENT else None
        snap = filekinds.snapshot_id(name) if kind == SNAPSHOT else None
        out.append(
            SourceFile(
                path=path,
                kind=kind,
                size=size,
                cluster_id=ident.get("cluster.id"),
                node_id=ident.get("node.id"),
                directory_id=ident.get("directory.id"),
                segment_base_offset=base,
                snapshot_end_offset=snap[0] if snap else None,
                snapshot_epoch=snap[1] if snap else None,
            )
        )
    return out


# -- where to cut ------------------------------------------------------------


def split_file(sf: SourceFile, split_bytes: int, options: dict | None = None) -> list[Piece]:
    if sf.size <= split_bytes:
        return [Piece(sf, 0, max(sf.size, 0))]
    try:
        with fs.open_input(sf.path, options) as f:
            cuts = batch_cuts(f, sf.size, split_bytes)
    except OSError:
        cuts = []  # unreadable: one piece, whose reader reports the error
    bounds = [0] + cuts + [sf.size]
    return [Piece(sf, a, b) for a, b in zip(bounds, bounds[1:])]


def choose_split_bytes(files: list[SourceFile], split_size: int, min_partitions: int, open_cost: int) -> int:
    """The split size, lowered so the input makes at least `min_partitions`
    tasks when it can, but never below the open cost."""
    total = sum(max(f.size, 0) + open_cost for f in files)
    per_task = -(-total // max(min_partitions, 1))
    return max(1, min(split_size, max(open_cost, per_task)))


def pack(pieces: list[Piece], split_bytes: int, open_cost: int) -> list[list[Piece]]:
    """Pack pieces into ceil(total / split_bytes) tasks, largest piece first
    into the least loaded task (each piece costs its size plus the open cost),
    so tasks come out about equal however the file sizes are spread."""
    import heapq

    if not pieces:
        return []
    total = sum(p.size + open_cost for p in pieces)
    n = max(1, min(len(pieces), -(-total // split_bytes)))
    heap = [(0, i) for i in range(n)]
    parts: list[list[Piece]] = [[] for _ in range(n)]
    for piece in sorted(pieces, key=lambda p: (-p.size, p.file.path, p.start)):
        load, i = heapq.heappop(heap)
        parts[i].append(piece)
        heapq.heappush(heap, (load + piece.size + open_cost, i))
    for part in parts:  # read each file's pieces in file order within a task
        part.sort(key=lambda p: (p.file.path, p.start))
    return parts


def default_min_partitions(total_bytes: int, slots: int) -> int:
    """How many tasks to cut a job into by default. A task launch costs about
    0.1 s (measured on local[2]: Python worker round trip, result, commit),
    which on a small job is more than the imbalance of one task per core
    costs, so small jobs get one task per core and larger ones three."""
    slots = max(1, slots)
    return slots if total_bytes <= SMALL_JOB_PER_SLOT * slots else TASKS_PER_SLOT * slots


def plan_files(
    files: list[SourceFile],
    *,
    split_size: int = DEFAULT_SPLIT_SIZE,
    min_partitions: int | None = 1,
    slots: int = 1,
    open_cost: int = DEFAULT_OPEN_COST,
    options: dict | None = None,
) -> Plan:
    """Cut and pack already discovered files into tasks: at least
    `min_partitions` of them when the input allows, or, when it is None, the
    default for a session with `slots` cores (`default_min_partitions`)."""
    if split_size <= 0:
        raise InputError(f"split size must be positive, not {split_size}")
    if min_partitions is None:
        min_partitions = default_min_partitions(sum(f.size for f in files), slots)
    split_bytes = choose_split_bytes(files, split_size, min_partitions, open_cost)
    pieces = [p for sf in files for p in split_file(sf, split_bytes, options)]
    return Plan(files, pack(pieces, split_bytes, open_cost), split_bytes)


def make_plan(
    paths: list[str],
    *,
    split_size: int = DEFAULT_SPLIT_SIZE,
    min_partitions: int | None = 1,
    slots: int = 1,
    open_cost: int = DEFAULT_OPEN_COST,
    options: dict | None = None,
) -> Plan:
    """Find the files under `paths`, cut and pack them (see the module doc)."""
    return plan_files(
        source_files(paths, options),
        split_size=split_size,
        min_partitions=min_partitions,
        slots=slots,
        open_cost=open_cost,
        options=options,
    )
