"""dump-log: stream one file after another to text (Kafka's lines) or JSON Lines.

Memory stays bounded by the largest batch: batches are read one at a time and
output is flushed every few thousand lines. Problems found while dumping
(invalid CRC, torn or zero tail, non-consecutive offsets, undecodable records)
do not stop the dump; they are reported on stderr and make the exit code 1.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice

from ..core import core
from ..errors import ExitStatus, InputError
from ..openfile import check_regular
from ..records.batch import BatchError, BatchReader, LegacyEntry, Record, Stop, batch_cuts
from ..render import dumplog as render_dumplog
from ..render.dumplog import Sink, header_line
from ..render.output import Output, json_line
from ..logdir import filekinds
from ..logdir.indexes import DEFAULT_MAX_MESSAGE_SIZE
from .files import Job, Result  # (registers the dumps of the files that are not record batches)


def known_record_types() -> list[str]:
    """Kafka's metadata and control record type names (its enums' spelling)."""
    from ..records.control_schemas import CONTROL_TYPES
    from ..records.metadata_schemas import TYPE_NAMES

    return sorted(set(TYPE_NAMES.values()) | {name for name, _msg in CONTROL_TYPES.values()})


def record_type_names(incomplete: str) -> list[str]:
    """--record-type completion."""
    return [n for n in known_record_types() if n.startswith(incomplete.upper())]


def check_record_types(values: list[str]) -> list[str]:
    """--record-type values, upper-cased; a name that is no record type is an
    InputError listing the valid ones (a typo must not silently match nothing).
    Case does not matter and the _RECORD suffix may be left out."""
    known = known_record_types()
    accepted = set(known) | {n.removesuffix("_RECORD") for n in known}
    out = [v.strip().upper() for v in values]
    bad = [v for v, u in zip(values, out) if u not in accepted]
    if bad:
        raise InputError(
            f"--record-type: no record type {bad[0]!r} (one of {', '.join(known)}; "
            "case does not matter and _RECORD may be left out)"
        )
    return out


# A record-count bomb can make every record offset a gap: keep the first few.
MAX_GAPS = 1000
# Records are decoded and rendered this many at a time: a batch may claim millions.
RECORD_SLICE = 1024


@dataclass
class Span:
    """What dumping one byte range of a file saw, for stitching ranges together."""

    first_offset: int | None = None
    last_offset: int | None = None
    gaps: list = field(default_factory=list)  # the first MAX_GAPS (offset, next offset) pairs
    gap_count: int = 0
    problems: int = 0
    stop: Stop | None = None  # where and why reading ended (BatchReader.stop)


def dump_range(
    path: str,
    opts: render_dumplog.Options,
    sink: Sink,
    *,
    as_json: bool,
    decode_json: bool,
    start: int = 0,
    end: int | None = None,
    max_bytes: int | None = None,
) -> Span:
    """Dump the batches that start in [start, end) of one record-batch file.
    Records stream out of each batch RECORD_SLICE at a time: memory does not grow
    with the count a batch claims."""
    reader = BatchReader(path, start=start, end=end, max_bytes=max_bytes)
    span = Span()
    lo, hi = opts.offset_start, opts.offset_end
    need_records = as_json or opts.records_needed
    # the usual dump of a metadata log: whole batches from bytes to lines (render_dumplog.fast_metadata_lines)
    fast = (
        sink.plain
        and opts.record_types is None
        and lo is None
        and hi is None
        and not opts.skip_record_metadata
        and (decode_json if as_json else opts.metadata_decoder)
    )
    for b in reader:
        if isinstance(b, LegacyEntry):
            sink.line(_legacy_line(path, b, as_json))
            continue
        if (lo is not None and b.base_offset + b.last_offset_delta < lo) or (hi is not None and b.base_offset > hi):
            continue
        if fast and core is not None and _core_batch(path, b, sink, span, as_json, opts.deep):
            continue
        crc_ok = b.crc_valid()
        if not crc_ok:
            span.problems += 1
        if not need_records:
            if as_json:
                sink.line(json_line(render_dumplog.batch_json(path, b, crc_ok)))
            else:
                sink.batch(b, crc_ok)
            continue
        if fast and _fast_batch(path, b, crc_ok, sink, span, as_json, opts.deep):
            continue
        _record_batch(path, b, crc_ok, sink, span, opts, as_json, decode_json)
    span.stop = reader.stop
    return span


def _legacy_line(path: str, b: LegacyEntry, as_json: bool) -> str:
    """The line of an entry in an old (v0/v1) message format, which is not decoded."""
    if not as_json:
        return render_dumplog.legacy_line(b)
    return json_line(
        {
            "kind": "legacy-entry",
            "file": path,
            "position": b.position,
            "offset": b.base_offset,
            "magic": b.magic,
            "size": b.size,
        }
    )


def _core_batch(path: str, b, sink: Sink, span: Span, as_json: bool, deep: bool) -> bool:
    """The compiled core: the whole batch from bytes to output in one buffer (JSON: the
    batch's object is written around its records, its crcValid from the core). False
    when the core declines the batch (the pure path then dumps it)."""
    assert core is not None
    got = core.metadata_batch(
        bytes(b.data),
        b.position,
        as_json,
        render_dumplog.payload_fallback,
        (lambda ok, b=b: json_line(render_dumplog.batch_json(path, b, ok))[:-1] + ',"records":[') if as_json else None,
    )
    if got is None:
        return False
    out, n, crc_ok = got
    if not crc_ok:
        span.problems += 1
    if deep and n:
        _track(span, b.base_offset, b.base_offset + n - 1)
    sink.raw(out)
    return True


def _fast_batch(path: str, b, crc_ok: bool, sink: Sink, span: Span, as_json: bool, deep: bool) -> bool:
    """A plain metadata batch in pure Python, whole (render_dumplog.fast_metadata_lines);
    False when it is not one (the record-by-record path then dumps it)."""
    lines = render_dumplog.fast_metadata_lines(b, as_json)
    if lines is None:
        return False
    if deep and lines:
        _track(span, b.base_offset, b.base_offset + len(lines) - 1)
    if as_json:
        # the batch's object is one line of a few MB: joined once, not concatenated
        head = json_line(render_dumplog.batch_json(path, b, crc_ok))[:-1] + ',"records":['
        if lines:
            lines[0] = head + lines[0]
            lines[-1] += "]}"
            sink.line(",".join(lines))
        else:
            sink.line(head + "]}")
    else:
        sink.batch(b, crc_ok)
        sink.lines(lines)
    return True


def _record_batch(
    path: str, b, crc_ok: bool, sink: Sink, span: Span, opts: render_dumplog.Options, as_json: bool, decode_json: bool
) -> None:
    """Any batch, record by record: offset and type filters, deep iteration's gap check,
    a record that cannot be read reported where it is (the batch's records before it kept)."""
    lo, hi = opts.offset_start, opts.offset_end
    types = opts.record_types
    # the batch line (object) is written before its first record; with --record-type,
    # only once a record matches (a batch with none is left out)
    opened = False
    written = 0
    try:
        for chunk in _slices(b.iter_records()):
            if opts.deep:  # Kafka checks consecutive offsets in deep iteration
                for r in chunk:
                    if span.last_offset is not None and r.offset != span.last_offset + 1:
                        span.gap_count += 1
                        if len(span.gaps) < MAX_GAPS:
                            span.gaps.append((span.last_offset, r.offset))
                    elif span.first_offset is None:
                        span.first_offset = r.offset
                    span.last_offset = r.offset
            if lo is not None or hi is not None:
                chunk = [r for r in chunk if (lo is None or r.offset >= lo) and (hi is None or r.offset <= hi)]
            if types is not None:
                chunk = [r for r in chunk if render_dumplog.matches_type(b, r, opts)]
            if not chunk and (opened or types is not None):
                continue
            if not opened:
                opened = True
                _open_batch(sink, path, b, crc_ok, as_json)
            if as_json:
                # one encode per slice: the list's text without its brackets
                sink.part(
                    ("," if written else "") + json_line(render_dumplog.records_json(b, chunk, decode_json))[1:-1]
                )
            elif opts.deep:
                sink.records(b, chunk, opts, decode_json)
            written += len(chunk)
    except BatchError as e:
        span.problems += 1
        if not opened:
            _open_batch(sink, path, b, crc_ok, as_json)
        if as_json:
            sink.part("]," + json_line({"error": str(e)})[1:])
            sink.end_line()
        sink.tell(f"{path}: position {e.pos}: {e}")
        return
    if not opened and types is None:  # a batch with no records (compaction leaves them) still shows
        opened = True
        _open_batch(sink, path, b, crc_ok, as_json)
    if as_json and opened:
        sink.part("]}")
        sink.end_line()


def _track(span: Span, first: int, last: int) -> None:
    """Note a run of consecutive offsets first..last (deep iteration's gap check)."""
    if span.last_offset is not None and first != span.last_offset + 1:
        span.gap_count += 1
        if len(span.gaps) < MAX_GAPS:
            span.gaps.append((span.last_offset, first))
    elif span.first_offset is None:
        span.first_offset = first
    span.last_offset = last


def _open_batch(sink: Sink, path: str, b, crc_ok: bool, as_json: bool) -> None:
    if as_json:
        sink.part(json_line(render_dumplog.batch_json(path, b, crc_ok))[:-1] + ',"records":[')
    else:
        sink.batch(b, crc_ok)


def _slices(records):
    """Lists of up to RECORD_SLICE records; the records before a bad one come out
    before its BatchError."""
    it = iter(records)
    while True:
        chunk: list[Record] = []
        try:
            chunk.extend(islice(it, RECORD_SLICE))
        except BatchError:
            if chunk:
                yield chunk
            raise
        if not chunk:
            return
        yield chunk


# Files above this size are dumped by two processes (the machine class has 2 cores).
PARALLEL_MIN_BYTES = 16 << 20
CHUNK_BYTES = 1 << 20  # each process holds one chunk's output at a time


def batch_boundaries(path: str, every: int) -> list[int]:
    """Byte positions of batch starts roughly `every` bytes apart (see batch.batch_cuts)."""
    with open(path, "rb") as f:
        return [0] + batch_cuts(f, os.fstat(f.fileno()).st_size, every)


def dump_batches(
    path: str,
    opts: render_dumplog.Options,
    sink: Sink,
    *,
    as_json: bool,
    max_bytes: int | None,
    result: Result,
    workers: int | None = None,
) -> None:
    """Dump one record-batch file (.log, snapshot .checkpoint, bootstrap.checkpoint)."""
    decode_json = opts.metadata_decoder or filekinds.is_metadata_path(path)
    if not as_json:
        sink.line(header_line(path))
    size = os.path.getsize(path)
    workers = workers if workers is not None else min(2, os.cpu_count() or 1)
    needs_decoding = as_json or opts.records_needed
    if workers > 1 and sink.plain and needs_decoding and max_bytes is None and size >= PARALLEL_MIN_BYTES:
        spans = _dump_parallel(path, opts, sink, as_json, decode_json, workers)
    else:
        spans = None
    if spans is None:
        spans = [dump_range(path, opts, sink, as_json=as_json, decode_json=decode_json, max_bytes=max_bytes)]
    gaps: list[tuple[int, int]] = []
    gap_count = 0
    prev = None
    for sp in spans:
        result.problems += sp.problems
        if prev is not None and sp.first_offset is not None and sp.first_offset != prev + 1:
            gaps.append((prev, sp.first_offset))
            gap_count += 1
        gaps.extend(sp.gaps[: MAX_GAPS - len(gaps)])
        gap_count += sp.gap_count
        if sp.last_offset is not None:
            prev = sp.last_offset
    result.problems += _report_stop(path, spans[-1].stop, sink, as_json, max_bytes)
    if gap_count:
        result.problems += 1
    # Kafka 4.3 starts its check from offset -1, so a file whose first record is
    # not offset 0 is reported ("-1 is followed by N"): printed to match, never
    # counted as a problem nor put in JSON (4.1 started from the first record); a
    # dump cut by offsets or times starts where the cut does, which Kafka cannot do
    first = next((sp.first_offset for sp in spans if sp.first_offset is not None), None)
    whole = opts.offset_start is None and opts.offset_end is None
    lead = [(-1, first)] if opts.kafka != "4.1" and whole and not as_json and first not in (None, 0) else []
    if gaps or lead:
        _report_gaps(path, gaps, gap_count, lead, sink, as_json, opts.kafka)


def _report_stop(path: str, stop: Stop | None, sink: Sink, as_json: bool, max_bytes: int | None) -> int:
    """Where reading the file ended early, said as Kafka says it; the problems it counts (0 or 1)."""
    if stop is not None and stop.reason == "corrupt":
        if as_json:
            sink.line(
                json_line(
                    {
                        "kind": "problem",
                        "file": path,
                        "position": stop.position,
                        "problem": "corrupt-batch-length",
                        "message": stop.detail,
                    }
                )
            )
        sink.tell(f"{path}: position {stop.position}: {stop.detail}")
        return 1
    if stop is not None and stop.reason and max_bytes is None:
        if as_json:
            sink.line(
                json_line(
                    {
                        "kind": "problem",
                        "file": path,
                        "position": stop.position,
                        "problem": "invalid-bytes-at-end",
                        "bytes": stop.remaining,
                        "message": stop.detail,
                    }
                )
            )
        else:
            sink.line(f"Found {stop.remaining} invalid bytes at the end of {os.path.basename(path)}")
        return 1
    return 0


def _report_gaps(
    path: str, gaps: list[tuple[int, int]], gap_count: int, lead: list, sink: Sink, as_json: bool, kafka: str
) -> None:
    """Deep iteration's non-consecutive offsets: the first MAX_GAPS pairs (and how many more)."""
    if as_json:
        for a, z in gaps:
            sink.line(
                json_line(
                    {"kind": "problem", "file": path, "problem": "non-consecutive-offsets", "offset": a, "next": z}
                )
            )
        if gap_count > len(gaps):
            sink.line(
                json_line(
                    {
                        "kind": "problem",
                        "file": path,
                        "problem": "non-consecutive-offsets",
                        "more": gap_count - len(gaps),
                    }
                )
            )
        return
    sink.error(f"Non-consecutive offsets in {os.path.abspath(path)}")
    listed = gaps[: MAX_GAPS - len(lead)]
    # 4.3 sorts the pairs by offset; 4.1 printed the last found first
    for a, z in reversed(listed) if kafka == "4.1" else lead + listed:
        sink.error(f"  {a} is followed by {z}")
    unlisted = gap_count - len(listed)
    if unlisted > 0:
        sink.error(f"  ... and {unlisted} more")


def _out_fd(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Collect:
    """A Sink's stream that keeps what is written (one chunk's output, encoded at its turn;
    the compiled core's output is UTF-8 bytes already, kept as they are when that is the
    stream's encoding)."""

    def __init__(self, utf8: bool = False) -> None:
        self.parts: list[str | bytes] = []
        self.write = self.parts.append
        if utf8:
            self.write_bytes = self.parts.append


def _dump_parallel(path, opts, sink, as_json, decode_json, workers) -> list[Span] | None:
    """Dump a big file with `workers` processes (this one and forked children):
    chunk k of ~1 MiB (cut at batch boundaries) goes to process k % workers, which
    decodes it into its own buffer and, when its turn comes (a token passed round a
    ring of pipes), writes it straight to stdout/stderr: output stays in file order,
    each process holds one chunk's output, nothing is copied between processes.
    None when the sink's streams are not files (then one process does it all)."""
    out_fd, err_fd = _out_fd(sink.out), _out_fd(sink.err)
    if out_fd is None or err_fd is None:
        return None
    cuts = batch_boundaries(path, CHUNK_BYTES)
    ranges = list(zip(cuts, cuts[1:] + [None]))
    workers = min(workers, len(ranges))
    if workers < 2:
        return None
    encoding = getattr(sink.out, "encoding", None) or "utf-8"
    errors = getattr(sink.out, "errors", None) or "strict"
    sink.flush()
    sink.out.flush()
    sink.err.flush()
    ring = [os.pipe() for _ in range(workers)]  # ring[w]: worker w's turn has come
    turns = _Turns(path, opts, as_json, decode_json, ranges, ring, out_fd, err_fd, encoding, errors)
    children = []  # (pid, read end of its results pipe)
    for w in range(1, workers):
        results = os.pipe()
        pid = os.fork()
        if pid == 0:  # a child: do its chunks, send its spans, leave without cleanup
            code = ExitStatus.OK
            try:
                os.close(results[0])
                _keep_turn_fds(ring, w)
                spans = _dump_turns(turns, w)
                import pickle

                _write_all(results[1], pickle.dumps(spans))
            except BaseException:  # the others see its closed pipes and say so
                code = ExitStatus.INTERNAL
            os._exit(code)
        os.close(results[1])
        children.append((pid, results[0]))
    # only this process's own ends stay open here: when a worker dies, the next
    # one reading its turn gets end-of-file instead of waiting for ever
    _keep_turn_fds(ring, 0)
    data = []
    try:
        spans = _dump_turns(turns, 0)
        for _pid, fd in children:
            got = bytearray()
            while chunk := os.read(fd, 1 << 16):
                got += chunk
            data.append(bytes(got))
    finally:
        for _pid, fd in children:
            os.close(fd)
        for fd in (ring[0][0], ring[1 % workers][1]):
            try:
                os.close(fd)
            except OSError:
                pass
        statuses = [os.waitpid(pid, 0)[1] for pid, _fd in children]
    import pickle
    import signal

    for st in statuses:
        if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGPIPE:
            signal.raise_signal(signal.SIGPIPE)  # `| head`: end quietly as the child did
    if any(st != 0 for st in statuses) or not all(data):
        raise OSError(f"a worker process dumping {path} failed")
    for blob in data:
        spans.extend(pickle.loads(blob))
    spans.sort(key=lambda ks: ks[0])
    return [sp for _k, sp in spans]


def _keep_turn_fds(ring, w: int) -> None:
    """Close the ring's pipe ends that worker w does not use (it reads its own turn
    and writes the next worker's)."""
    keep = {ring[w][0], ring[(w + 1) % len(ring)][1]}
    for r, wr in ring:
        for fd in (r, wr):
            if fd not in keep:
                os.close(fd)


AHEAD = 2  # chunks a worker may hold rendered while its turn to write has not come


@dataclass(frozen=True)
class _Turns:
    """What the workers of _dump_parallel share: the file and how to dump it, its chunks
    (byte ranges), the ring of turn pipes (one per worker) and where output goes, in
    which encoding."""

    path: str
    opts: render_dumplog.Options
    as_json: bool
    decode_json: bool
    ranges: list[tuple[int, int | None]]
    ring: list[tuple[int, int]]
    out_fd: int
    err_fd: int
    encoding: str
    errors: str


def _dump_turns(turns: _Turns, w: int) -> list:
    """Worker w's part of _dump_parallel: chunks w, w + workers, ...; returns (chunk, Span)
    pairs. While its turn has not come, a worker renders its next chunk (up to AHEAD
    held), so an uneven chunk does not leave a core idle."""
    import select

    ring, ranges, out_fd, err_fd = turns.ring, turns.ranges, turns.out_fd, turns.err_fd
    encoding, errors, workers = turns.encoding, turns.errors, len(turns.ring)
    my_turn, next_turn = ring[w][0], ring[(w + 1) % workers][1]
    spans = []
    held: list = []  # (chunk, its output parts, its error parts), in order

    def write_first(block: bool) -> bool:
        k, out, err = held[0]
        if k > 0:
            if not block and not select.select([my_turn], [], [], 0)[0]:
                return False
            if os.read(my_turn, 1) != b"x":
                raise OSError("the previous worker ended early")
        for part in out:
            _write_all(out_fd, part if isinstance(part, bytes) else part.encode(encoding, errors))
        for part in err:
            _write_all(err_fd, part if isinstance(part, bytes) else part.encode(encoding, errors))
        if k + 1 < len(ranges):
            os.write(next_turn, b"x")
        held.pop(0)
        return True

    for k in range(w, len(ranges), workers):
        out, err = _Collect(utf8=render_dumplog.is_utf8(encoding)), _Collect()
        sink = Sink(out, err)
        start, end = ranges[k]
        span = dump_range(
            turns.path, turns.opts, sink, as_json=turns.as_json, decode_json=turns.decode_json, start=start, end=end
        )
        spans.append((k, span))
        sink.flush()
        held.append((k, out.parts, err.parts))
        while held and write_first(block=len(held) >= AHEAD):
            pass
    while held:
        write_first(block=True)
    return spans


def offsets_for_times(logs: list[str], from_ms: int | None, to_ms: int | None) -> tuple[int | None, int | None]:
    """--from-time/--to-time as offsets of one partition's log segments: the first record
    stamped at or after from_ms, the last stamped at or before to_ms (record timestamps,
    not file times; a time past every record gives an empty range, not the whole log)."""
    start = end = None
    last = -1
    for path in logs:
        with BatchReader(path) as reader:
            for b in reader:
                if isinstance(b, LegacyEntry):
                    continue
                last = b.last_offset
                if from_ms is not None and start is None and b.max_timestamp >= from_ms:
                    start = next((r.offset for r in b.iter_records() if r.timestamp >= from_ms), b.base_offset)
                if to_ms is not None:
                    if b.max_timestamp <= to_ms:
                        end = b.last_offset
                    else:
                        end = max([r.offset for r in b.iter_records() if r.timestamp <= to_ms], default=end)
    if from_ms is not None and start is None:
        start = last + 1
    if to_ms is not None and end is None:
        end = -1
    return start, end


def _time_cut(files: list[str], from_ms, to_ms, offset_start, offset_end) -> tuple[int | None, int | None]:
    """The offset range the time options give, narrowed by --offset-start/--offset-end."""
    logs = [f for f in files if filekinds.kind_of(f) == "log"]
    dirs = {os.path.dirname(os.path.abspath(f)) for f in logs}
    if len(dirs) != 1:
        raise InputError(
            "--from-time/--to-time cut one partition's log (the metadata log): "
            + ("no .log segment among the files" if not dirs else f"the segments are in {len(dirs)} directories")
        )
    start, end = offsets_for_times(sorted(logs), from_ms, to_ms)
    if offset_start is not None:
        start = offset_start if start is None else max(start, offset_start)
    if offset_end is not None:
        end = offset_end if end is None else min(end, offset_end)
    return start, end


@dataclass(frozen=True, kw_only=True)
class DumpRequest:
    """What dump-log is asked to do: the paths and kafka-dump-log's options, as
    cli/dumplog.py reads them from the command line (times already in epoch ms)."""

    paths: Sequence[str]
    deep: bool = False  # --deep-iteration
    print_data: bool = False  # --print-data-log (implies deep)
    metadata_decoder: bool = False  # --cluster-metadata-decoder (implies print_data)
    skip_record_metadata: bool = False
    max_bytes: int | None = None  # read only the first N bytes of each log or snapshot
    offset_start: int | None = None
    offset_end: int | None = None  # inclusive
    record_types: Sequence[str] | None = None  # as typed: run checks them (a typo is exit 2)
    verify_index_only: bool = False
    index_sanity_check: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    output: Output | str | None = None  # text, table or json; None: as stdout is a terminal or not
    kafka: str = "4.3"  # whose kafka-dump-log text (4.3 or 4.1) where the two differ
    from_time: int | None = None  # epoch ms: cut one partition's log by record timestamps
    to_time: int | None = None


def run(request: DumpRequest, sink: Sink | None = None) -> int:
    """Dump every path of `request`; returns the exit code (0 clean, 1 problems seen,
    2 bad input). Each file is dumped by its kind's handler (filekinds.handler("dump", kind))."""
    from ..render.output import Printer

    if sink is None:
        printer = Printer()
        sink = Sink(printer.stdout, printer.stderr)
    out_mode = Printer(sink.out, sink.err).resolve(request.output)
    # a --record-type typo is exit 2 before anything else
    types = frozenset(check_record_types(list(request.record_types))) if request.record_types else None
    if not request.paths:
        raise InputError("no files given (pass FILE_OR_DIR... or --files)")
    # every path is checked before anything is printed: a typo is exit 2, not an empty dump
    files = filekinds.log_dir_files(list(request.paths), stray=lambda f: sink.error(f"Ignoring unknown file {f}"))
    offset_start, offset_end = request.offset_start, request.offset_end
    from_time, to_time = request.from_time, request.to_time
    if from_time is not None or to_time is not None:
        if from_time is not None and to_time is not None and to_time < from_time:
            raise InputError("--to-time is before --from-time")
        offset_start, offset_end = _time_cut(files, from_time, to_time, offset_start, offset_end)
    opts = render_dumplog.Options(
        deep=request.deep or request.print_data or request.metadata_decoder,
        print_data=request.print_data or request.metadata_decoder,
        metadata_decoder=request.metadata_decoder,
        skip_record_metadata=request.skip_record_metadata,
        offset_start=offset_start,
        offset_end=offset_end,
        record_types=types,
        kafka=request.kafka,
    )
    result = Result()
    if out_mode is Output.table:
        from ..render.dumplog_table import TableSink

        sink = TableSink(sink, opts)
    job = Job(
        sink,
        opts,
        out_mode,
        result,
        max_bytes=request.max_bytes,
        verify_index_only=request.verify_index_only,
        index_sanity_check=request.index_sanity_check,
        max_message_size=request.max_message_size,
    )
    for path in files:
        _dump_file(path, job)
    sink.flush()
    if result.errors and not result.problems:
        return ExitStatus.USAGE
    return ExitStatus.of(result.problems or result.errors)


def _dump_file(path: str, job: Job) -> None:
    """One file: its heading (or, in JSON, what a renamed file is read as), then its kind's dump;
    a file that cannot be read is an error line, and the dump goes on with the next."""
    sink, result = job.sink, job.result
    kind = filekinds.kind_of(path)
    gone = filekinds.renamed(path)
    if job.mode is not Output.json:
        sink.line(f"Dumping {path}")
        if gone:  # Kafka 4.1 ignores these ("Ignoring unknown file"); we decode what they were
            sink.line(f"Renamed {gone}: {filekinds.RENAMED[gone]}; read as {filekinds.original_name(path)}")
    elif gone:
        sink.line(
            json_line(
                {
                    "kind": "renamed",
                    "file": path,
                    "suffix": gone,
                    "as": filekinds.original_name(path),
                    "meaning": filekinds.RENAMED[gone],
                }
            )
        )
    try:
        check_regular(path)  # a FIFO, device, dangling link or loop: one line saying what it is
        filekinds.handler("dump", kind)(path, kind, job)
    except InputError as e:  # a file that is not what its name says: exit 2 unless problems were seen
        result.errors.append(str(e))
        sink.tell(f"error: {e}")
    except OSError as e:
        result.errors.append(str(e))
        sink.tell(f"error: {path}: {e.strerror or e}")


# The record-batch kinds' dump; the other kinds' are files.py's.


@filekinds.handles("dump", filekinds.LOG, filekinds.SNAPSHOT, filekinds.BOOTSTRAP)
def _dump_batch_file(path, kind, job: Job) -> None:
    dump_batches(path, job.opts, job.sink, as_json=job.mode is Output.json, max_bytes=job.max_bytes, result=job.result)
