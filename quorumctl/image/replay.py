"""Replaying a metadata log dir (bootstrap.checkpoint, a snapshot, the log
segments after it) into an Image, streaming: one batch in memory at a time,
each record decoded once through the shared decoders (records.batch,
records.metadata), so memory grows with the image, not with the log. Plain
batches take a fast path (`_apply_plain`): frames walked inline, the hot record
types read from their bytes, with the same results as the general path.

Where replay starts (`plan`): to reach offset N, the newest snapshot that ends
at or before N+1 and that the log continues from (its end offset >= the log
start), else bootstrap.checkpoint and the log from offset 0. `earliest=True`
(history, diff) starts as early as possible instead, to see more records.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import InputError
from ..records import metadata as md
from ..records.batch import (
    ATTR_COMPRESSION,
    ATTR_CONTROL,
    HEADER_SIZE,
    Batch,
    BatchError,
    BatchReader,
    Record,
    plain_value_spans,
)
from ..schema.codec import uuid_cached, uuid_str
from ..timefmt import parse_time
from ..logdir import segments
from ..logdir.statefiles import BOOTSTRAP_CHECKPOINT
from ..raft.replica import METADATA_PARTITION
from .parallel import LOCAL, SpanFeed
from .model import (
    _APPLY as APPLY,
    TRANSACTION_KEYS,
    Image,
    add_topic,
    cyclic_gc_paused,
    merge_partition,
    partition_from_record,
    remove_topic,
)


@dataclass
class Step:
    kind: str  # "bootstrap", "snapshot" or "log"
    path: str
    base_offset: int = 0  # log: the segment's base; snapshot: its end offset (exclusive)
    epoch: int = -1  # snapshot: its epoch
    data: bytes | None = None  # the batches themselves, read from elsewhere (`path` then names where)


@dataclass
class Source:
    """What a log dir (or a list of files) offers for replay."""

    label: str
    bootstrap: str | None = None
    snapshots: list = field(default_factory=list)  # SnapshotFile, by end offset
    segments: list = field(default_factory=list)  # (base offset, path), by base offset

    @property
    def log_start(self) -> int | None:
        return self.segments[0][0] if self.segments else None


@dataclass
class Point:
    """Where to stop: an offset (inclusive), a time (epoch ms, inclusive), or the end."""

    offset: int | None = None
    time_ms: int | None = None

    def describe(self) -> str:
        if self.offset is not None:
            return f"offset {self.offset}"
        if self.time_ms is not None:
            return f"time {self.time_ms}"
        return "the end"


def parse_point(text: str | None) -> Point:
    """An OFFSET or a TIME (diff's --from/--to): digits below 10^12 are offsets,
    other values times (epoch ms are above 10^12 since 2001)."""
    if text is None:
        return Point()
    t = text.strip()
    if re.fullmatch(r"\d+", t) and int(t) < 10**12:
        return Point(offset=int(t))
    return Point(time_ms=parse_time(t))


def open_source(paths: list[str]) -> Source:
    """A log dir, its __cluster_metadata-0 dir, or files (.log segments, a snapshot
    .checkpoint, bootstrap.checkpoint)."""
    from ..logdir.filekinds import SEGMENT_RE, SNAPSHOT_RE
    from ..raft.replica import resolve_partition_dir

    if not paths:
        raise InputError("give a log dir (or its __cluster_metadata-0 dir, or .log/.checkpoint files)")
    if len(paths) == 1 and os.path.isdir(paths[0]):
        if os.path.basename(os.path.normpath(paths[0])) != METADATA_PARTITION and any(
            SEGMENT_RE.match(n) or SNAPSHOT_RE.match(n) for n in os.listdir(paths[0])
        ):
            log_dir, pdir = paths[0], paths[0]  # a copy of the partition dir under another name
        else:
            log_dir, pdir = resolve_partition_dir(paths[0])
        pf = segments.scan_partition(pdir)
        boot = os.path.join(log_dir, BOOTSTRAP_CHECKPOINT)
        src = Source(paths[0], bootstrap=boot if os.path.isfile(boot) else None)
        src.snapshots = sorted(pf.snapshots, key=lambda s: s.end_offset)
        src.segments = [(s.base_offset, s.log) for s in pf.segments if s.log]
        if not src.segments and not src.snapshots:
            raise InputError(f"{paths[0]}: {METADATA_PARTITION} holds no log segment and no snapshot")
        return src
    src = Source(" ".join(paths))
    for p in paths:
        if os.path.isdir(p):
            raise InputError(f"{p}: a directory among files (give one log dir, or files)")
        if not os.path.exists(p):
            raise InputError(f"{p}: no such file")
        name = os.path.basename(p)
        if name == BOOTSTRAP_CHECKPOINT:
            src.bootstrap = p
        elif m := SNAPSHOT_RE.match(name):
            src.snapshots.append(segments.SnapshotFile(int(m.group(1)), int(m.group(2)), p, os.path.getsize(p)))
        elif (m := SEGMENT_RE.match(name)) and m.group(2) == "log":
            src.segments.append((int(m.group(1)), p))
        else:
            raise InputError(
                f"{p}: not a metadata log file (expected NNNN.log, NNNN-EEEE.checkpoint or bootstrap.checkpoint)"
            )
    src.snapshots.sort(key=lambda s: s.end_offset)
    src.segments.sort()
    return src


def _snapshot_time(path: str) -> int:
    from ..raft.replica import read_snapshot_controls

    header = read_snapshot_controls(path)["header"] or {}
    return header.get("lastContainedLogTimestamp", -1)


def plan(
    src: Source,
    point: Point | None = None,
    *,
    through: Point | None = None,
    earliest: bool = False,
    use_snapshots: bool = True,
) -> list[Step]:
    """The files to replay, in order, to reach `point` (None: the end); the log
    segments go on to `through` when given (diff replays on to its --to)."""
    point = point or Point()
    through = through or point
    target = point.offset
    start = src.log_start
    usable = [
        s
        for s in src.snapshots
        if use_snapshots
        and (target is None or s.end_offset <= target + 1)
        and (start is None or s.end_offset >= start or s is src.snapshots[-1])
    ]
    if point.time_ms is not None:
        usable = [s for s in usable if s.end_offset == 0 or _snapshot_time(s.path) <= point.time_ms]
    snap = None
    if start == 0 and (earliest or not usable):
        snap = next((s for s in usable if s.end_offset == 0), None)  # KIP-853's bootstrap snapshot
    elif usable:
        snap = usable[0] if earliest and start is not None else usable[-1]
    steps: list[Step] = []
    if snap is None:
        if start != 0:
            where = "no log segment" if start is None else f"the log starts at offset {start}"
            raise InputError(
                f"{src.label}: cannot replay to {point.describe()}: {where} and no snapshot ends at or before it"
            )
        if src.bootstrap and not _log_has_data(src):
            steps.append(Step("bootstrap", src.bootstrap))
    else:
        steps.append(Step("snapshot", snap.path, snap.end_offset, snap.epoch))
        if snap.end_offset == 0 and src.bootstrap and not _log_has_data(src):
            # a dynamic quorum's node formatted and never started (or its log still empty): the
            # 0-0 snapshot holds the voters, bootstrap.checkpoint what the first leader will write
            steps.append(Step("bootstrap", src.bootstrap))
    from_offset = 0 if snap is None else snap.end_offset
    for i, (base, path) in enumerate(src.segments):
        nxt = src.segments[i + 1][0] if i + 1 < len(src.segments) else None
        if nxt is not None and nxt <= from_offset:
            continue  # wholly before where we start
        if through.offset is not None and base > through.offset:
            break
        steps.append(Step("log", path, base))
    return steps


def _log_has_data(src: Source) -> bool:
    """Whether the log holds a metadata (non-control) batch. Kafka applies
    bootstrap.checkpoint only to an empty metadata log: the first active controller
    writes its records into the log (ActivationRecordsGenerator's empty-log case), and
    from then on the log, not the file, says what was bootstrapped (a node formatted
    with another release keeps a bootstrap.checkpoint the cluster never used)."""
    for _, path in src.segments:
        try:
            with BatchReader(path) as reader:
                for b in reader:
                    if not isinstance(b, Batch) or not b.is_control:
                        return True
        except (OSError, BatchError):
            return True  # replay reports the damage where it meets it
    return False


class Replay:
    """Drives one image through the steps; `run` stops at a Point. Callable again
    with a later point to go on (diff does), since the reader position is kept."""

    def __init__(self, steps: list[Step], image: Image | None = None):
        self.image = image if image is not None else Image()
        self.steps = steps
        self.start: dict | None = None  # where replay began (snapshot or bootstrap + log)
        self.end_reason: str | None = None  # why the log ended early (torn tail, bad CRC)
        self.batches = 0
        self._gen = self._batches()
        self._held: tuple | None = None  # a (step, batch, records) read past the stop point
        # history's hook: on_control(image, type, voters before, offset)
        self.on_control: Callable[[Image, str, Any, int], None] | None = None
        self.walked: set = set()  # log paths whose frames a worker walks (image.parallel)
        self._feed: SpanFeed | None = None  # the SpanFeed of the segment being read
        self.step: Step | None = None  # the step whose batches are being applied

    def describe_start(self) -> dict:
        s = self.steps[0] if self.steps else None
        if s is None:
            return {"from": "nothing"}
        if s.kind == "snapshot":
            return {"from": "snapshot", "file": s.path, "endOffset": s.base_offset, "epoch": s.epoch}
        return {"from": "bootstrap+log" if s.kind == "bootstrap" else "log", "file": s.path}

    # each item: (step, batch, iterator over the batch's records still to apply)
    def _batches(self):
        img = self.image
        for step in self.steps:
            skip_below = self.image.offset + 1 if step.kind == "log" else None
            try:
                reader = BatchReader(step.path if step.data is None else step.data)
            except OSError as e:
                raise InputError(f"{step.path}: {e.strerror or e}") from None
            with reader:
                for b in reader:
                    if not isinstance(b, Batch):
                        self._stop_log(step, f"unsupported batch magic {b.magic} at byte {b.position}")
                        return
                    if skip_below is not None:  # a log (not a snapshot): its batches past the image
                        if b.last_offset < skip_below:
                            continue
                        if not b.crc_valid():
                            self._stop_log(
                                step,
                                f"CRC mismatch in the batch at offset {b.base_offset} "
                                f"(byte {b.position}): the log ends before it",
                            )
                            return
                    self.batches += 1
                    self.step = step
                    records = self._checked(step, b)
                    yield step, b, records
                    if self.end_reason is not None:
                        return
                st = reader.stop
                if step.kind == "log" and st is not None and st.reason is not None:
                    self.end_reason = f"{os.path.basename(step.path)}: {st.detail or st.reason} at byte {st.position}"
            if step.kind == "snapshot":
                img.offset, img.epoch = step.base_offset - 1, step.epoch

    def _checked(self, step: Step, b):
        """A batch's records; a record that does not decode ends the log there (as Kafka's recovery)."""
        skip_below = self.image.offset + 1 if step.kind == "log" else None
        try:
            for r in b.iter_records():
                if skip_below is not None and r.offset < skip_below:
                    continue
                yield r
        except BatchError as e:
            self._stop_log(step, f"position {e.pos}: {e}")

    def _stop_log(self, step: Step, why: str) -> None:
        self.end_reason = f"{os.path.basename(step.path)}: {why}"

    def run(self, point: Point | None = None) -> Image:
        """Apply records up to the point (inclusive); returns the image. The cyclic
        garbage collector is off meanwhile: replay makes no cycles, and at a million
        partitions each of its full collections walked every tuple of the image again."""
        with cyclic_gc_paused():
            return self._run(point)

    def _run(self, point: Point | None) -> Image:
        img = self.image
        stop_off = point.offset if point else None
        stop_ts = point.time_ms if point else None
        held, self._held = self._held, None
        it = self._gen
        if held is not None:
            it = itertools.chain([held], it)
        for step, b, records in it:
            in_log = step.kind == "log"
            if b.is_control:
                for r in records:
                    if in_log and self._past(r, stop_off, stop_ts):
                        self._held = (step, b, itertools.chain([r], records))
                        return img
                    self._control(img, step, b, r, in_log)
                continue
            if in_log:
                img.epoch = b.leader_epoch
            if not in_log or ((stop_off is None or b.last_offset <= stop_off) and stop_ts is None):
                # the hot path: no per-record stop test, and for a plain batch no Record objects
                if (
                    img.pending is None
                    and not b.attributes & ATTR_COMPRESSION
                    and (not in_log or b.base_offset > img.offset)
                ):
                    feed = self._feed_for(step.path) if self.walked else None
                    done = _apply_plain(img, b, in_log, LOCAL if feed is None else feed.spans(b.position))
                    if done is not None:
                        if done == b.record_count:
                            if in_log and done:
                                img.offset = b.base_offset + done - 1
                            continue
                        first = b.base_offset + done  # a transaction opened: the rest record by record
                        records = (r for r in records if r.offset >= first)
                last = self._apply_all(img, records, in_log)
                if last is not None and in_log:
                    img.offset, img.epoch, img.timestamp = last.offset, b.leader_epoch, last.timestamp
                continue
            for r in records:
                if self._past(r, stop_off, stop_ts):
                    self._held = (step, b, itertools.chain([r], records))
                    return img
                self._apply_all(img, (r,), True)
                img.offset, img.epoch, img.timestamp = r.offset, b.leader_epoch, r.timestamp
        return img

    def use_workers(self, workers: int | None = None) -> "Replay":
        """Have a worker process walk the record frames of the segments of
        parallel.PARALLEL_MIN_BYTES and more (default: where there are 2 cores).
        close() ends it."""
        from . import parallel

        workers = min(2, os.cpu_count() or 1) if workers is None else workers
        if workers >= 2:
            self.walked = {
                s.path for s in self.steps if s.kind == "log" and os.path.getsize(s.path) >= parallel.PARALLEL_MIN_BYTES
            }
        return self

    def _feed_for(self, path: str):
        if self._feed is not None and self._feed.path == path:
            return self._feed
        self.close()
        if path in self.walked:
            self._feed = SpanFeed(path)
        return self._feed

    def close(self) -> None:
        if self._feed is not None:
            self._feed.close()
            self._feed = None

    @staticmethod
    def _past(r, stop_off, stop_ts) -> bool:
        return (stop_off is not None and r.offset > stop_off) or (stop_ts is not None and r.timestamp > stop_ts)

    def _control(self, img: Image, step: Step, b, r, in_log: bool) -> None:
        if in_log:
            img.offset, img.epoch, img.timestamp = r.offset, b.leader_epoch, r.timestamp
        ct = md.control_type(r.key)
        if ct in (md.LEADER_CHANGE, md.KRAFT_VERSION, md.KRAFT_VOTERS):
            d = md.decode_control(r.key, r.value)
            self.apply_control(img, ct, d.type_name, d.data, d.error, r.offset if in_log else -1)
        elif ct == md.SNAPSHOT_HEADER and step.kind == "snapshot":
            d = md.decode_control(r.key, r.value)
            if d.data is not None:
                img.timestamp = d.data.get("lastContainedLogTimestamp", -1)

    def apply_control(self, img: Image, ct: int, type_name: str, data, error, offset: int) -> None:
        """A decoded LeaderChange, KRaftVersion or KRaftVoters control record."""
        if data is None:
            img.problem(offset, f"{type_name}: {error}")
            return
        voters = img.voters
        if ct == md.LEADER_CHANGE:
            img.leader_change(data)
        elif ct == md.KRAFT_VERSION:
            img.set_kraft_version(data)
        else:
            img.set_voters(data)
        if self.on_control is not None:
            self.on_control(img, type_name, voters, offset)

    @staticmethod
    def _apply_all(img: Image, records, in_log: bool):
        """Decode and apply metadata records; returns the last one. Records go straight to
        their apply function unless a transaction is open or history observes."""
        decode_fast = md.decode_metadata_fast
        apply = APPLY.get
        r = None
        n = 0
        for r in records:
            n += 1
            fast = decode_fast(r.value)
            if fast is None:
                d = md.decode_metadata(r.value)
                if d.data is None:
                    n -= 1
                    img.unknown_record(f"{d.type_name} v{d.version}" if d.api_key is not None else "undecodable")
                    if d.name != "Unknown" and not d.name.startswith("UnknownRecord"):
                        img.problem(r.offset if in_log else -1, f"{d.name}: {d.error}")
                    continue
                fast = (d.api_key, d.version, d.data)
            key = fast[0]
            off = r.offset if in_log else -1
            if img.pending is None and img.observer is None and key not in TRANSACTION_KEYS:
                fn = apply(key)
                if fn is not None:
                    fn(img, fast[2], off)
            else:
                if in_log:
                    img.timestamp = r.timestamp  # what a buffered or observed record is stamped with
                img.records -= 1  # replay() counts it
                img.replay(key, fast[2], off)
        img.records += n
        return r


# Memos of the hot record types by the bytes after their leading PartitionId and
# TopicId (the "tail"), one per version: a tail decodes (and so is valid) or not
# whatever the ids are, and a log repeats the same tails over and over (the churn
# perf log has one PartitionRecord tail in 132,061). PartitionRecord: tail -> the
# partition tuple; PartitionChangeRecord: tail -> the decoded change, and
# (id of the partition before, tail) -> (partition before, partition after).
_MEMO_MAX = 1 << 13  # entries per memo: bounded, as each may keep partition tuples alive
# indexed by the version byte: a version with no decoder never fills its memo
_partition_memo: list[dict] = [{} for _ in range(256)]
_change_memo: list[dict] = [{} for _ in range(256)]
_merge_memo: dict = {}
_I32 = __import__("struct").Struct(">i").unpack_from


def _decoded_tail(value, memo: dict, tail, build):
    """Decode a hot record whose tail is not memoised yet; None when it does not
    decode (the general path then reports it exactly)."""
    fast = md.decode_metadata_fast(value)
    if fast is None:
        return None
    if len(memo) >= _MEMO_MAX:
        memo.clear()
    v = memo[tail] = build(fast[2])
    return v


def _apply_plain(img: Image, b, in_log: bool, walked=LOCAL) -> int | None:
    """Apply the metadata records of a plain batch (uncompressed, records framed as
    Kafka writes them: records.batch.plain_value_spans) straight from their bytes. The
    hot types (PartitionRecord, PartitionChangeRecord, TopicRecord, RemoveTopicRecord,
    NoOpRecord) are read in place: leading ids directly, the rest through the tail
    memos; any other value goes through the decoder and model as in _apply_all. The
    same image, problems and counts as _apply_all, record for record. Returns how
    many records were applied: fewer than the batch's when a transaction opens, or
    before a record history's observer wants to see (the caller goes on record by
    record); None when the batch is not plain."""
    watch = img.observer
    if b.attributes & ATTR_CONTROL or (watch is not None and watch.observes_every_record):
        return None
    # records the observer must see: their topic id in `ids`, a TopicRecord named `name`,
    # every RemoveTopicRecord when `removes`
    ids, name_seen, removes = ((), None, False) if watch is None else watch.hot_filter()
    data = bytes(b.data[HEADER_SIZE:])
    if walked is LOCAL:
        walked = plain_value_spans(data, 0, b.record_count)
    if walked is None:
        return None
    tss, spans, ends = walked
    base = b.base_offset if in_log else None
    topics = img.topics
    ucache = uuid_cached
    i32 = _I32
    pmemo = _partition_memo
    cmemo = _change_memo
    mmemo = _merge_memo
    n = 0
    last_raw = tid = t = parts = None  # the topic of the previous hot record (reset by any other record)
    for vs, ve in zip(spans, ends):
        if ve - vs > 23 and data[vs] == 1 and ((key := data[vs + 1]) == 3 or key == 5):
            raw = data[vs + 7 : vs + 23]
            if raw != last_raw:  # records of one topic come in runs: look it up once per run
                tid = ucache(raw) or uuid_str(raw)
                t = topics.get(tid)
                parts = None if t is None else t.partitions
                last_raw = raw
            if ids and tid in ids:
                break
            tail = data[vs + 23 : ve]
            ver = data[vs + 2]
            pid = i32(data, vs + 3)[0]
            if key == 3:
                p = pmemo[ver].get(tail)
                if p is None:
                    p = _decoded_tail(data[vs:ve], pmemo[ver], tail, partition_from_record)
                    if p is None:
                        _apply_value(img, data[vs:ve], _offset(base, spans, vs))
                        last_raw = None
                        continue
                n += 1
                if parts is None:  # (no topic t)
                    img.problem(_offset(base, spans, vs), f"PartitionRecord for unknown topic id {tid}")
                else:
                    parts[pid] = p
                continue
            d = cmemo[ver].get(tail)
            if d is None:
                d = _decoded_tail(data[vs:ve], cmemo[ver], tail, dict)
                if d is None:
                    _apply_value(img, data[vs:ve], _offset(base, spans, vs))
                    last_raw = None
                    continue
            n += 1
            p = None if parts is None else parts.get(pid)
            if parts is None or p is None:
                img.problem(_offset(base, spans, vs), f"PartitionChangeRecord for unknown partition {tid}:{pid}")
                continue
            hit = mmemo.get((id(p), tail))
            if hit is None or hit[0] is not p:
                if len(mmemo) >= _MEMO_MAX:
                    mmemo.clear()
                hit = mmemo[(id(p), tail)] = (p, merge_partition(p, d))
            parts[pid] = hit[1]
            continue
        last_raw = None
        if ve - vs >= 4 and data[vs] == 1 and data[vs + 2] == 0:
            key = data[vs + 1]
            if key == 2:  # TopicRecord v0: Name (compact string), TopicId, no tagged fields
                c = data[vs + 3]
                ne = vs + 3 + c
                if 0 < c < 128 and ne + 17 == ve and data[ve - 1] == 0:
                    try:
                        name = data[vs + 4 : ne].decode("utf-8")
                    except UnicodeDecodeError:
                        pass
                    else:
                        raw = data[ne : ne + 16]
                        tid = ucache(raw) or uuid_str(raw)
                        if name == name_seen:
                            break
                        add_topic(img, tid, name)
                        n += 1
                        continue
            elif key == 9:  # RemoveTopicRecord v0: TopicId, no tagged fields
                if ve - vs == 20 and data[ve - 1] == 0:
                    raw = data[vs + 3 : vs + 19]
                    tid = ucache(raw) or uuid_str(raw)
                    if removes or (ids and tid in ids):
                        break
                    remove_topic(img, tid, _offset(base, spans, vs))
                    n += 1
                    continue
            elif key == 20:  # NoOpRecord v0: nothing but an empty tagged-field section
                if ve - vs == 4 and data[vs + 3] == 0:
                    n += 1
                    continue
        if watch is not None:
            break  # the record goes to the observer with its own timestamp
        _apply_value(img, data[vs:ve], _offset(base, spans, vs))
        if img.pending is not None:
            img.records += n
            return spans.index(vs) + 1
    else:
        img.records += n
        if base is not None and tss:
            img.timestamp = b.base_timestamp + tss[-1]
        return b.record_count
    img.records += n
    return spans.index(vs)


def _offset(base: int | None, spans, vs: int) -> int:
    """The offset of the record whose value starts at vs (-1 outside the log): looked up
    only when needed (a problem, a record for the general path), not counted per record."""
    return -1 if base is None else base + spans.index(vs)


def _apply_value(img: Image, value: bytes, off: int) -> None:
    """One record of a plain batch that is not of a hot type (or does not decode): the general path."""
    Replay._apply_all(img, (Record(off, img.timestamp, 0, None, value, ()),), off >= 0)


def replay(
    paths: list[str] | Source,
    point: Point | None = None,
    *,
    use_snapshots: bool = True,
    earliest: bool = False,
    workers: int | None = None,
) -> Replay:
    """Replay a log dir (or files) to a point; returns the Replay (its `.image`).
    With 2 `workers` (default where there are 2 cores), a worker process walks the
    record frames of large segments while this one applies (Replay.use_workers)."""
    src = paths if isinstance(paths, Source) else open_source(paths)
    point = point or Point()
    rp = Replay(plan(src, point, earliest=earliest, use_snapshots=use_snapshots))
    if point.time_ms is None:  # --at-time tests every record's timestamp: no workers
        rp.use_workers(workers)
    try:
        rp.run(point)
    finally:
        rp.close()
    return rp


def replay_bytes(label: str, snapshot: tuple[int, int, bytes] | None, log_start: int, log: bytes) -> Image:
    """The image of a metadata log read from elsewhere than files (the leader, over the
    wire): a snapshot (end offset, epoch, its bytes) when the log starts after one, then
    the log's batches from `log_start`."""
    steps = [] if snapshot is None else [Step("snapshot", f"{label} snapshot", snapshot[0], snapshot[1], snapshot[2])]
    steps.append(Step("log", f"{label} log", log_start, data=log))
    return Replay(steps).run()


def replay_snapshot(path: str) -> Image:
    """The image a snapshot file holds (no log after it)."""
    m = re.match(r"^(\d{20})-(\d{10})\.checkpoint$", os.path.basename(path))
    end, epoch = (int(m.group(1)), int(m.group(2))) if m else (0, -1)
    rp = Replay([Step("snapshot", path, end, epoch)])
    return rp.run()


def extent(src: Source) -> dict:
    """Where the log starts and ends: first and last offsets with their times (the first
    batch's base timestamp, the last batch's max timestamp), read from batch headers only.
    A log dir without segments: its newest snapshot's end."""
    first = last = None
    if src.segments:
        try:
            with BatchReader(src.segments[0][1]) as reader:
                for b in reader:
                    if isinstance(b, Batch):
                        first = (b.base_offset, b.base_timestamp)
                        break
            for _, path in reversed(src.segments):
                with BatchReader(path) as reader:
                    for b in reader:
                        if isinstance(b, Batch):
                            last = (b.last_offset, b.max_timestamp)
                if last is not None:
                    break
        except (OSError, BatchError):
            pass
    if first is None and src.snapshots:
        s = src.snapshots[-1]
        first = last = (s.end_offset - 1, _snapshot_time(s.path))
    return {
        "first": None if first is None else first[0],
        "firstTimestamp": None if first is None else first[1],
        "last": None if last is None else last[0],
        "lastTimestamp": None if last is None else last[1],
    }


def check_inside(src: Source, point: Point | None, reached: Image, option: str) -> None:
    """A point the log does not reach is an input error that says where the log starts and
    ends: an offset past the last record, or a time before the first record of a log that
    starts at offset 0 (the cluster did not exist yet). A time after the last record is the
    end's state, not an error."""
    if point is None:
        return
    if point.offset is not None and reached.offset < point.offset:
        asked = str(point.offset)
    elif point.time_ms is not None and reached.offset < 0 and src.log_start == 0:
        from ..timefmt import iso_utc

        asked = f"{iso_utc(point.time_ms)}"
    else:
        return
    e = extent(src)
    from ..timefmt import iso_utc

    if e["first"] is None:
        raise InputError(f"{option} {asked}: {src.label} holds no record")
    raise InputError(
        f"{option} {asked} is outside the log of {src.label}: it starts at offset {e['first']} "
        f"({iso_utc(e['firstTimestamp'])}) and ends at offset {e['last']} ({iso_utc(e['lastTimestamp'])})"
    )
