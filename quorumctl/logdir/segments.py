"""A partition directory's files and its batches as Kafka recovers them.

Scanning names files as Kafka does: `<20-digit base>.log|.index|.timeindex|
.txnindex` segments, `<20-digit>.snapshot` producer state, raft snapshots
`%020d-%010d.checkpoint` (end offset exclusive, epoch); `.checkpoint.part`,
`.deleted`, `.cleaned`, `.swap` and other transient files are listed as
ignored. Reading a log follows LogSegment.recover, which the metadata log
always runs on every segment at start-up: batches are taken while their CRC,
magic and offsets are valid; the first bad batch ends the log there (later
segments would be deleted). The index files themselves are read and written
by logdir.indexes and logdir.producer_state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import InputError
from ..openfile import check_regular

from . import statefiles as state_files
from .filekinds import SEGMENT_RE, SNAPSHOT_RE

TRANSIENT_SUFFIXES = (".deleted", ".cleaned", ".swap", ".tmp")
STATE_FILES = (state_files.QUORUM_STATE, state_files.EPOCH_CHECKPOINT, state_files.PARTITION_METADATA)


def segment_name(base_offset: int, suffix: str) -> str:
    return f"{base_offset:020d}.{suffix}"


def snapshot_name(end_offset: int, epoch: int) -> str:
    return f"{end_offset:020d}-{epoch:010d}.checkpoint"


@dataclass
class SegmentFiles:
    base_offset: int
    log: str | None = None
    index: str | None = None
    timeindex: str | None = None
    txnindex: str | None = None

    def paths(self) -> list[str]:
        return [p for p in (self.log, self.index, self.timeindex, self.txnindex) if p]


@dataclass
class SnapshotFile:
    end_offset: int
    epoch: int
    path: str
    size: int

    @property
    def id(self) -> tuple[int, int]:
        return self.end_offset, self.epoch


@dataclass
class PartitionFiles:
    path: str
    segments: list[SegmentFiles] = field(default_factory=list)
    snapshots: list[SnapshotFile] = field(default_factory=list)  # by (epoch, offset)
    producer_snapshots: list[tuple[int, str]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # partial/deleted/transient
    unknown: list[str] = field(default_factory=list)
    not_regular: list[str] = field(default_factory=list)  # "<path>: is a FIFO ..." lines


def scan_partition(path: str) -> PartitionFiles:
    """List a partition directory (no file is opened)."""
    pf = PartitionFiles(path)
    segs: dict[int, SegmentFiles] = {}
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if not os.path.isfile(full):
            if SEGMENT_RE.match(name) or SNAPSHOT_RE.match(name):
                try:  # a FIFO, device, directory or symlink loop named like a file of ours
                    check_regular(full)
                except InputError as e:
                    pf.not_regular.append(str(e))
                    continue
            pf.unknown.append(full)
            continue
        m = SEGMENT_RE.match(name)
        if m:
            base, suffix = int(m.group(1)), m.group(2)
            if suffix == "snapshot":
                pf.producer_snapshots.append((base, full))
            else:
                setattr(segs.setdefault(base, SegmentFiles(base)), suffix, full)
            continue
        m = SNAPSHOT_RE.match(name)
        if m:
            pf.snapshots.append(SnapshotFile(int(m.group(1)), int(m.group(2)), full, os.path.getsize(full)))
            continue
        if name.endswith(".checkpoint.part") or name.endswith(TRANSIENT_SUFFIXES):
            pf.ignored.append(full)
            continue
        if name in STATE_FILES or name == ".lock":
            continue
        pf.unknown.append(full)
    pf.segments = [segs[b] for b in sorted(segs)]
    pf.snapshots.sort(key=lambda s: (s.epoch, s.end_offset))
    pf.producer_snapshots.sort()
    return pf


# -- batches -------------------------------------------------------------------


class BatchInfo:
    """The header facts of one valid batch (no record data kept)."""

    __slots__ = ("base_offset", "last_offset", "epoch", "position", "size", "max_timestamp", "is_control", "crc")

    def __init__(self, base_offset, last_offset, epoch, position, size, max_timestamp, is_control, crc=None):
        self.base_offset = base_offset
        self.last_offset = last_offset
        self.epoch = epoch
        self.position = position
        self.size = size
        self.max_timestamp = max_timestamp
        self.is_control = is_control
        self.crc = crc  # the header's CRC-32C (valid: scan_segment checks it); Raft's log matching

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    def __repr__(self):
        return (
            f"BatchInfo({self.base_offset}..{self.last_offset}, epoch={self.epoch}, "
            f"pos={self.position}, size={self.size})"
        )


@dataclass
class SegmentScan:
    files: SegmentFiles
    batches: list[BatchInfo]
    file_size: int
    valid_bytes: int
    problem: str | None = None  # why recovery would cut this segment (torn tail, bad CRC, ...)
    # (offset, control type name, decoded dict or None) for LEADER_CHANGE, KRAFT_VERSION, KRAFT_VOTERS
    controls: list = field(default_factory=list)

    @property
    def next_offset(self) -> int:
        return self.batches[-1].next_offset if self.batches else self.files.base_offset


@dataclass
class LogScan:
    segments: list[SegmentScan]
    dropped_segments: list[SegmentFiles]  # after a corrupt one: Kafka deletes them at start-up
    log_start: int
    log_end: int
    problem: str | None

    def batches(self):
        for s in self.segments:
            yield from s.batches

    def batch_epochs(self):
        for s in self.segments:
            for b in s.batches:
                yield b.epoch, b.base_offset

    def controls(self):
        for s in self.segments:
            yield from s.controls

    def boundaries(self) -> list[int]:
        return [b.base_offset for b in self.batches()]


def control_records(batch) -> list:
    """(offset, type name, data or None) of the Raft control records in a control batch."""
    from ..records import metadata as md
    from ..records.batch import BatchError

    out = []
    try:
        for r in batch.iter_records():
            ct = md.control_type(r.key)
            if ct in (md.LEADER_CHANGE, md.KRAFT_VERSION, md.KRAFT_VOTERS):
                d = md.decode_control(r.key, r.value)
                out.append((r.offset, md.CONTROL_NAMES[ct], d.data))
    except BatchError:
        return []
    return out


def scan_segment(seg: SegmentFiles, expect_from: int | None = None, want_controls: bool = True) -> SegmentScan:
    """The batches Kafka's LogSegment.recover keeps (CRC, magic 2, offsets
    increasing and within the segment's int32 relative range)."""
    from ..records.batch import Batch, BatchReader

    if seg.log is None:
        return SegmentScan(seg, [], 0, 0, "the .log file is missing")
    batches: list[BatchInfo] = []
    controls: list = []
    problem = None
    valid = 0
    prev_next = expect_from
    reader = BatchReader(seg.log)
    size = reader.file_size
    for b in reader:
        if not isinstance(b, Batch):
            problem = f"unsupported magic {b.magic} at byte {b.position}"
            break
        if not b.crc_valid():
            problem = (
                f"CRC mismatch in the batch at offset {b.base_offset} (byte {b.position}): "
                f"stored {b.crc}, computed over its data differs"
            )
            break
        if b.last_offset_delta < 0 or (prev_next is not None and b.base_offset < prev_next):
            problem = (
                f"batch at byte {b.position} has offsets {b.base_offset}..{b.last_offset}, "
                f"expected to start at or after {prev_next}"
            )
            break
        if b.last_offset - seg.base_offset > 0x7FFFFFFF or b.base_offset < seg.base_offset:
            problem = f"batch at byte {b.position}: offset {b.last_offset} is outside segment {seg.base_offset}"
            break
        batches.append(
            BatchInfo(
                b.base_offset, b.last_offset, b.leader_epoch, b.position, b.size, b.max_timestamp, b.is_control, b.crc
            )
        )
        if b.is_control and want_controls:
            controls.extend(control_records(b))
        valid = b.position + b.size
        prev_next = b.last_offset + 1
    else:
        st = reader.stop
        if st is not None and st.reason is not None:
            problem = f"{st.detail} at byte {st.position}" if st.detail else f"{st.reason} at byte {st.position}"
    return SegmentScan(seg, batches, size, valid, problem, controls)


def scan_log(pf: PartitionFiles, want_controls: bool = True) -> LogScan:
    scans: list[SegmentScan] = []
    dropped: list[SegmentFiles] = []
    problem = None
    expect = None
    for i, seg in enumerate(pf.segments):
        if seg.log is None:
            continue  # an orphan index: Kafka deletes it at start-up
        sc = scan_segment(seg, expect, want_controls)
        scans.append(sc)
        if sc.problem is not None:
            problem = f"{os.path.basename(seg.log)}: {sc.problem}"
            dropped = [s for s in pf.segments[i + 1 :] if s.log is not None]
            break
        expect = sc.next_offset
    if scans:
        log_start = scans[0].files.base_offset
        log_end = scans[-1].next_offset
    else:
        log_start = log_end = 0
    return LogScan(scans, dropped, log_start, log_end, problem)
