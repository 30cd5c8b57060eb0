"""`spark-export --follow`: tail live metadata log dirs into a Parquet dataset.

Every `interval` the driver lists the inputs and plans one micro-batch: for
each segment, the bytes from where the last batch stopped to the end of the
last *complete* record batch (a batch Kafka is still appending is left for
the next round); every snapshot and bootstrap.checkpoint not exported yet,
whole (a snapshot appears under its final name only when complete). The
micro-batch runs as an ordinary export job (writer.py's tasks and commit),
appending to OUT.

Exactly once, across crashes and restarts, with a checkpoint directory
(`OUT/_checkpoint` unless --checkpoint), as Structured Streaming keeps one:
1. `offsets/<n>.json` is written (atomically) *before* batch n runs: its
   exact byte ranges and task layout, and the position of every file after it;
2. the batch writes under `_temporary/follow-<n>/` and commits its files,
   named after the batch (`part-<task>-follow-<n>-...`), into OUT;
3. `commits/<n>` marks the batch done.
On start, a batch with an offsets file but no commit marker is run again from
its recorded ranges: files of its earlier, interrupted commit (same names) are
removed first, so no record is written twice and none is skipped.

The log changing underneath: a new segment (a roll) starts at byte 0; a
segment that disappears (cleaned by retention after a snapshot, or renamed
`.deleted`) is dropped from the positions; a segment that is not the newest
of its directory is sealed, so bytes after its last complete batch (a torn
tail) are exported as the error row a batch export gives; a segment that
shrank (a follower truncating a divergent tail) resumes at its new end, and
the summary counts it.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..errors import InputError
from ..render.output import Printer
from ..records import batch
from . import fs
from . import plan as planning
from . import writer as w

if TYPE_CHECKING:
    from .job import ExportRequest

CHECKPOINT = "_checkpoint"


@dataclass
class BatchSummary:
    batch: int
    files: int
    bytes: int
    tasks: int
    records: int
    rows: int
    errors: int
    truncated: list = field(default_factory=list)
    rerun: bool = False
    seconds: float = 0.0

    def to_json(self) -> dict:
        d = dict(self.__dict__)
        d["seconds"] = round(self.seconds, 3)
        return d


class Checkpoint:
    """offsets/<n>.json and commits/<n> under a directory (local or URI)."""

    def __init__(self, root: str, options: dict | None):
        self.target = w._FileSystem(root, options)
        self.options = options

    def _batches(self, sub: str) -> list[int]:
        d = self.target.path(sub)
        if self.target.remote:
            import pyarrow.fs as pafs

            names = [i.base_name for i in self.target.fs.get_file_info(pafs.FileSelector(d, allow_not_found=True))]
        else:
            names = os.listdir(d) if os.path.isdir(d) else []
        return sorted(int(n.split(".")[0]) for n in names if n.split(".")[0].isdigit())

    def latest(self) -> tuple[int | None, dict, bool]:
        """(batch, its offsets, whether it was committed) of the newest batch
        ((None, {}, True) before the first)."""
        batches = self._batches("offsets")
        if not batches:
            return None, {}, True
        n = batches[-1]
        with fs.open_input(self.target.path("offsets", f"{n}.json"), self.options) as f:
            doc = json.loads(f.read())
        return n, doc, n in set(self._batches("commits"))

    def _write(self, rel: str, data: bytes):
        path = self.target.path(rel)
        self.target.makedirs(path.rpartition("/")[0] if self.target.remote else os.path.dirname(path))
        if self.target.remote:  # an object store's PUT is atomic
            with self.target.open_output(path) as f:
                f.write(data)
            return
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def write_offsets(self, n: int, doc: dict):
        self._write(f"offsets/{n}.json", json.dumps(doc).encode())

    def write_commit(self, n: int):
        self._write(f"commits/{n}", b"")


def _sealed(files: list[planning.SourceFile]) -> set[str]:
    """Segments that are not the newest (highest base offset) of their directory."""
    newest: dict[str, planning.SourceFile] = {}
    for sf in files:
        if sf.kind == planning.SEGMENT:
            d = fs.parent(sf.path)
            if d not in newest or (sf.segment_base_offset or 0) > (newest[d].segment_base_offset or 0):
                newest[d] = sf
    return {sf.path for sf in files if sf.kind == planning.SEGMENT and newest[fs.parent(sf.path)] is not sf}


def plan_batch(paths: list[str], positions: dict[str, int], split_size: int, slots: int, options: dict | None):
    """(tasks as lists of pieces, new positions, truncated paths) for the next micro-batch."""
    files = planning.source_files(paths, options)
    sealed = _sealed(files)
    new_positions: dict[str, int] = {}
    pieces: list[planning.Piece] = []
    truncated = []
    for sf in files:
        pos = positions.get(sf.path, 0)
        if sf.kind != planning.SEGMENT:
            new_positions[sf.path] = max(sf.size, 0)
            if sf.path not in positions:
                pieces.append(planning.Piece(sf, 0, max(sf.size, 0)))
            continue
        if sf.size < pos:
            truncated.append(sf.path)
            new_positions[sf.path] = sf.size
            continue
        try:
            with fs.open_input(sf.path, options) as f:
                end = sf.size if sf.path in sealed else batch.complete_end(f, sf.size, pos)
                cuts = planning.batch_cuts(f, end, split_size, start=pos) if end - pos > split_size else []
        except OSError:
            end, cuts = pos, []  # gone between listing and reading: cleaned; next round drops it
        new_positions[sf.path] = end
        if end > pos:
            # a live segment's piece stops exactly at `end` (not at whatever the file holds by then)
            bounded = planning.SourceFile(**{**sf.__dict__, "size": end if sf.path in sealed else end + 1})
            bounds = [pos, *cuts, end]
            pieces.extend(planning.Piece(bounded, a, b) for a, b in zip(bounds, bounds[1:]))
    parts = (
        planning.pack(
            pieces,
            max(1, min(split_size, -(-sum(p.size for p in pieces) // max(slots, 1)))),
            planning.DEFAULT_OPEN_COST,
        )
        if pieces
        else []
    )
    return parts, new_positions, truncated


def _encode_parts(parts) -> list:
    return [[[p.file.__dict__, p.start, p.end] for p in part] for part in parts]


def _decode_parts(doc) -> list:
    return [[planning.Piece(planning.SourceFile(**f), a, b) for f, a, b in part] for part in doc]


def run_batch(sc, n: int, parts, out: str, partition_by, options, compression) -> tuple[int, int, int]:
    """Run micro-batch n (its files named after it) and commit it; (records, rows, errors)."""
    from .rows import Stats

    job = f"follow-{n:08d}"
    w.remove_job_files(out, job, options)  # an interrupted earlier commit of this same batch
    opts = dict(options or {})
    tasks = list(enumerate(parts))

    def task(item):
        index, pieces = item
        return w.run_task(index, pieces, out, job, partition_by, opts, compression=compression)

    try:
        results = sc.parallelize(tasks, len(tasks)).map(task).collect()
        w.commit(out, job, results, "append", options)
    except BaseException:
        try:
            w.abort(out, job, options)
        except Exception:
            pass
        raise
    stats = Stats()
    for r in results:
        stats.add(r["stats"])
    return stats.records, sum(r["rows"] for r in results), stats.errors


@dataclass(frozen=True, kw_only=True)
class Tail:
    """--follow's own settings."""

    checkpoint: str | None = None  # default: OUT/_checkpoint
    interval: float = 5.0  # seconds between micro-batches
    stop_after_idle: int | None = None  # rounds in a row with nothing new; None: until interrupted


def follow(request: ExportRequest, tail: Tail, *, spark, report=None) -> list[BatchSummary]:
    """Tail `request.paths` into `request.out` until interrupted, or until
    `tail.stop_after_idle` consecutive rounds found nothing new; `report(summary)`
    after each batch. `request.fs_options` are the file systems' options as they are
    (follow_export merges the S3A settings in)."""
    paths, out, options = list(request.paths), request.out, dict(request.fs_options or {}) or None
    split_size, compression = request.split_size, request.compression
    partition_by = list(request.partition_by)
    checkpoint, interval, stop_after_idle = tail.checkpoint, tail.interval, tail.stop_after_idle
    if not fs.is_remote(out):
        out = os.path.abspath(fs.local_path(out))
    cp = Checkpoint(checkpoint or fs.join(out, CHECKPOINT), options)
    sc = spark.sparkContext
    slots = sc.defaultParallelism
    done: list[BatchSummary] = []
    n, doc, committed = cp.latest()
    if n is not None and doc.get("paths") != list(paths):
        raise InputError(
            f"the checkpoint {cp.target.root} follows {', '.join(doc.get('paths', []))}, "
            f"not {', '.join(paths)}: give another --checkpoint"
        )
    positions = doc["positions"] if doc else {}
    if n is not None and not committed:
        t0 = time.monotonic()
        parts = _decode_parts(doc["tasks"])
        records, rows, errors = run_batch(sc, n, parts, out, partition_by, options, compression)
        cp.write_commit(n)
        s = BatchSummary(
            n,
            len({p.file.path for part in parts for p in part}),
            sum(p.size for part in parts for p in part),
            len(parts),
            records,
            rows,
            errors,
            doc.get("truncated", []),
            rerun=True,
            seconds=time.monotonic() - t0,
        )
        done.append(s)
        if report:
            report(s)
    n = -1 if n is None else n
    idle = 0
    while True:
        t0 = time.monotonic()
        parts, new_positions, truncated = plan_batch(paths, positions, split_size, slots, options)
        if parts or truncated or new_positions.keys() != positions.keys():
            n += 1
            cp.write_offsets(
                n,
                {
                    "paths": list(paths),
                    "positions": new_positions,
                    "tasks": _encode_parts(parts),
                    "truncated": truncated,
                    "written": time.time(),
                },
            )
            records, rows, errors = (
                run_batch(sc, n, parts, out, partition_by, options, compression) if parts else (0, 0, 0)
            )
            cp.write_commit(n)
            positions = new_positions
            s = BatchSummary(
                n,
                len({p.file.path for part in parts for p in part}),
                sum(p.size for part in parts for p in part),
                len(parts),
                records,
                rows,
                errors,
                truncated,
                seconds=time.monotonic() - t0,
            )
            done.append(s)
            if report:
                report(s)
        if parts:
            idle = 0
        else:
            idle += 1
            if stop_after_idle is not None and idle >= stop_after_idle:
                return done
        time.sleep(max(0.0, interval - (time.monotonic() - t0)))


def follow_export(request: ExportRequest, tail: Tail, report=None, printer: Printer | None = None) -> None:
    """What `spark-export --follow` runs: the options checked and the inputs found
    before Spark starts, a session with a light JVM (from its class archive), then
    `follow` until it stops or is interrupted (the checkpoint says where the next
    run starts); the session's new class archive is kept last. Micro-batches append
    with the pyarrow writer: the request's mode and writer do not apply."""
    from .job import check_export_options
    from .session import finish_sessions, start_session

    conf = dict(request.spark_conf or {})
    check_export_options(list(request.partition_by), request.compression, "pyarrow", "append")
    fs_options = {**fs.s3_options_from_conf(conf), **(request.fs_options or {})} or None
    planning.source_files(list(request.paths), fs_options)  # bad paths fail before Spark starts
    spark = start_session(
        request.master,
        conf,
        progress=request.progress,
        debug=request.debug,
        class_archive=True,
        light_jvm=True,
        printer=printer,
    )
    try:
        follow(replace(request, fs_options=fs_options), tail, spark=spark, report=report)
    except KeyboardInterrupt:
        pass
    finish_sessions()
