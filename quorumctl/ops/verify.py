"""verify: check files of a log dir without printing their records.

One pass per record-batch file gathers both the problems and the statistics
(batches, records, offsets, epochs, control and metadata record tallies), so
`verify` can print a summary and the tests can compare every real file with
the corpus catalogue. Checks:
- every batch: length, magic, CRC-32C, records decode and fill the batch exactly;
- offsets strictly increasing, contiguous where Kafka never leaves gaps (the
  metadata log and snapshots are never compacted); segment names match their
  first batch;
- leader epochs non-decreasing, and consistent with leader-epoch-checkpoint;
- snapshots: header first, footer last, epochs matching the name;
- indexes and time indexes against their log (logdir.indexes);
- the tail: a torn or zero-filled tail is reported with its position;
- with several metadata log dirs given (replicas of one cluster): Raft's log
  matching between each pair (raft/logmatch.py), a clash reported on the first
  one's batch, naming the other's.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from ..core import core
from ..errors import InputError
from ..openfile import check_regular
from ..records import metadata as md
from ..records import compression
from ..records.batch import (
    ATTR_COMPRESSION,
    ATTR_CONTROL,
    ATTR_DELETE_HORIZON,
    ATTR_LOG_APPEND_TIME,
    ATTR_TRANSACTIONAL,
    CRC_START,
    BatchError,
    Batch,
    BatchReader,
    LegacyEntry,
    entry_at,
)
from ..records.crc import crc32c
from ..logdir import filekinds
from ..logdir.problems import Problem


# A batch may claim millions of records, each undecodable: list the first few of a batch.
MAX_RECORD_PROBLEMS = 10


@dataclass
class FileReport:
    path: str
    kind: str
    stats: dict = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)  # findings Kafka repairs by itself at startup

    def to_json(self) -> dict:
        return {
            "file": self.path,
            "kind": self.kind,
            "ok": not self.problems,
            "stats": self.stats,
            "problems": [p.to_json() for p in self.problems],
            "notes": [n.to_json() for n in self.notes],
        }


@dataclass
class LogState:
    """What one partition's segments carry forward from one file to the next."""

    last_offset: int | None = None
    last_epoch: int | None = None
    epoch_starts: list = field(default_factory=list)  # (epoch, first offset) as seen in the log
    first_offset: int | None = None


def scan_batches(
    path: str,
    *,
    contiguous: bool,
    state: LogState | None = None,
    expect_epoch: int | None = None,
    metadata: bool | None = None,
    deep: bool = True,
) -> FileReport:
    """Scan one record-batch file; `state` carries offsets/epochs across segments.
    With deep=False only control batches are decoded (a batch-level pass: headers,
    lengths, CRCs, offsets, epochs); record tallies then cover control records only.
    Each check is one method of _Scan."""
    scan = _Scan(
        path,
        contiguous=contiguous,
        state=state or LogState(),
        expect_epoch=expect_epoch,
        metadata=filekinds.is_metadata_path(path) if metadata is None else metadata,
        deep=deep,
    )
    start = 0
    if core is not None and not deep:
        stopped = scan.core_walk()
        if stopped is None:
            return scan.report()
        start = stopped
    reader = BatchReader(path, start=start)
    for b in reader:
        scan.entry(b)
    scan.tail(reader.stop)
    return scan.report()


class _Scan:
    """One file's scan: the problems found and the statistics gathered so far."""

    def __init__(
        self, path: str, *, contiguous: bool, state: LogState, expect_epoch: int | None, metadata: bool, deep: bool
    ):
        self.path = path
        self.kind = filekinds.kind_of(path)
        self.contiguous = contiguous
        self.st = state
        self.expect_epoch = expect_epoch
        self.metadata = metadata
        self.deep = deep
        self.seg_base = filekinds.base_offset_of(path) if self.kind == filekinds.LOG else None
        self.probs: list[Problem] = []
        self.batches = self.records = self.control_batches = 0
        self.attrs: Counter = Counter()  # batches by attributes: codecs, timestamp types, txn, delete horizon
        self.epoch = None  # the last batch's epoch in this file (check_epoch runs on a change)
        self.control: Counter = Counter()
        self.mtypes: Counter = Counter()
        self.mversions: Counter = Counter()
        self.epochs: set = set()
        self.feature_levels: list = []
        self.leader_changes: list = []
        self.kraft_versions: list = []
        self.voters_records: list = []
        self.producer_ids: set = set()
        self.broker_mv: set = set()
        self.frames: set = set()
        self.crc_bad: list = []
        self.min_ts = self.max_ts = None
        self.first_offset = self.last_offset = None
        self.first_ctl: str | None = None  # the control type of the first / last batch
        self.last_ctl: str | None = None
        self.torn: dict | None = None

    def problem(self, position, offset, message: str, slug: str) -> None:
        self.probs.append(Problem(self.path, position, offset, message, slug))

    def entry(self, b) -> None:
        if isinstance(b, LegacyEntry):
            self.problem(b.position, b.base_offset, f"magic {b.magic} entry (expected record batch v2)", "bad-magic")
        else:
            self.batch(b)

    def core_walk(self) -> int | None:
        """The batch-level pass on the compiled core (rust/src/verify.rs): it checks and
        tallies the plain data batches that pass every test of batch() and hands each
        other entry to entry(), so the checks and their wording stay here. None when it
        read to a clean end; else the position where the pure path reads on (and
        words the tail, or the read error)."""
        assert core is not None
        with BatchReader(self.path) as r:  # opens as the pure path does: a regular file, else InputError
            end = r.end
        firsts: dict[int, int] = {}  # attributes -> position of the first batch handed back

        def inline_epoch() -> int | None:
            # the epoch a batch needs to pass on the core: the last batch's, when that is also
            # the highest so far (after a regression every batch is checked here, as batch() does)
            return self.epoch if self.epoch == self.st.last_epoch else None

        def handle(position: int, data: bytes, last_offset: int | None):
            self.st.last_offset = last_offset  # as the batches checked on the core left it
            b = entry_at(data, 0, position, data)
            if isinstance(b, Batch):
                firsts.setdefault(b.attributes, position)
            self.entry(b)
            return self.st.last_offset, inline_epoch()

        st = self.st
        stop, clean, batches, records, max_ts, attrs, pids, last, st_last = core.verify_walk(
            self.path, 0, end, self.contiguous, st.last_offset, inline_epoch(), self.expect_epoch, handle
        )
        if batches:
            self.batches += batches
            self.records += records
            st.last_offset = st_last
            if self.max_ts is None or max_ts > self.max_ts:
                self.max_ts = max_ts
            self.producer_ids.update(pids)
            # the attribute counts in order of first occurrence, as the pure path counts them
            for a, _n, pos in attrs:
                firsts[a] = min(pos, firsts.get(a, pos))
            counts = Counter(self.attrs)
            counts.update({a: n for a, n, _pos in attrs})
            self.attrs = Counter({a: counts[a] for a in sorted(counts, key=firsts.__getitem__)})
            if last is not None:  # the file's last batch was one of them
                self.last_offset = last
                self.last_ctl = None
        return None if clean else stop

    def batch(self, b) -> None:
        """One batch's header checks and tallies. The usual batch passes each check's
        cheap test inline (a metadata log has thousands of batches: verify's cost should
        be close to reading and checksumming the file); the check methods below run
        only when a test fails, and word the problem."""
        self.batches += 1
        base, delta = b.base_offset, b.last_offset_delta
        if self.first_offset is None:
            self.first_offset = base
            self.check_segment_name(b)
        last = self.last_offset = base + delta
        count = b.record_count
        if delta < 0 or (count != delta + 1 if self.contiguous else not 0 <= count <= delta + 1):
            self.check_count(b)
        st = self.st
        prev = st.last_offset
        if prev is None:
            st.last_offset = last
            if st.first_offset is None:
                st.first_offset = base
        else:
            if base <= prev or (self.contiguous and base != prev + 1):
                self.offset_problem(b, prev)
            if last > prev:
                st.last_offset = last
        if b.leader_epoch != self.epoch or self.expect_epoch is not None:
            self.check_epoch(b)
        if crc32c(b.data[CRC_START:]) != b.crc:
            self.crc_problem(b)
        self.attrs[b.attributes] += 1
        if b.producer_id >= 0:
            self.producer_ids.add(b.producer_id)
        if not self.deep and not b.attributes & ATTR_CONTROL:
            # the batch-level pass over a data batch: its records are counted, not decoded
            self.records += count
            if self.max_ts is None or b.max_timestamp > self.max_ts:
                self.max_ts = b.max_timestamp
            self.last_ctl = None
            if self.batches == 1:
                self.first_ctl = None
        else:
            self.scan_records(b)

    # -- header checks (the wording; batch() decides when they run) --------------
    def check_segment_name(self, b) -> None:
        base = self.seg_base
        if base is not None and b.base_offset < base:
            self.problem(
                b.position,
                b.base_offset,
                f"first batch offset {b.base_offset} is below the segment's base offset {base}",
                "segment-name",
            )
        elif base is not None and self.contiguous and b.base_offset != base:
            self.problem(
                b.position, b.base_offset, f"segment named {base} starts at offset {b.base_offset}", "segment-name"
            )

    def check_count(self, b) -> None:
        if b.last_offset_delta < 0:
            self.problem(b.position, b.base_offset, f"lastOffsetDelta {b.last_offset_delta} is negative", "bad-batch")
            return
        count_problem = record_count_problem(b, self.contiguous)
        if count_problem:
            self.problem(b.position, b.base_offset, count_problem, "record-count")

    def offset_problem(self, b, prev: int) -> None:
        if b.base_offset <= prev:
            self.problem(
                b.position,
                b.base_offset,
                f"offset {b.base_offset} does not increase (previous batch ended at {prev})",
                "offset-order",
            )
        else:
            self.problem(
                b.position, b.base_offset, f"offset gap: expected {prev + 1}, found {b.base_offset}", "offset-gap"
            )

    def check_epoch(self, b) -> None:
        st, e = self.st, b.leader_epoch
        self.epoch = e
        self.epochs.add(e)
        if self.expect_epoch is not None and e != self.expect_epoch:
            self.problem(
                b.position,
                b.base_offset,
                f"batch epoch {e} differs from the snapshot name's epoch {self.expect_epoch}",
                "snapshot-name",
            )
        if st.last_epoch is not None and e < st.last_epoch:
            self.problem(
                b.position, b.base_offset, f"leader epoch goes backwards: {e} after {st.last_epoch}", "epoch-order"
            )
        if st.last_epoch is None or e > st.last_epoch:
            st.epoch_starts.append((e, b.base_offset))
            st.last_epoch = e

    def crc_problem(self, b) -> None:
        computed = b.computed_crc()
        self.crc_bad.append(b.base_offset)
        self.problem(
            b.position,
            b.base_offset,
            f"CRC-32C mismatch: header says {b.crc}, the batch's bytes give {computed}",
            "crc-mismatch",
        )

    # -- records -----------------------------------------------------------------
    def scan_records(self, b) -> None:
        if self.max_ts is None or b.max_timestamp > self.max_ts:
            self.max_ts = b.max_timestamp
        control_batch = b.is_control
        if control_batch:
            self.control_batches += 1
        name0 = None
        n = 0
        bad = [0]  # undecodable records of this batch: the first MAX_RECORD_PROBLEMS are listed
        prev_delta = -1
        delta_problem = None
        try:
            # one record at a time: a batch may claim millions (see records.batch.iter_records)
            for r in b.iter_records():
                delta = r.offset - b.base_offset
                if delta_problem is None and (
                    delta <= prev_delta or delta > b.last_offset_delta or (self.contiguous and delta != n)
                ):
                    delta_problem = (r.offset, n, delta, prev_delta)
                prev_delta = delta
                n += 1
                if self.min_ts is None or r.timestamp < self.min_ts:  # stored timestamps (also under LogAppendTime)
                    self.min_ts = r.timestamp
                if control_batch:
                    name = self.tally_control(b, r, bad)
                    if n == 1:
                        name0 = name
                elif self.metadata:
                    self.tally_metadata(b, r, bad)
        except BatchError as ex:
            self.problem(ex.pos, b.base_offset, str(ex), "bad-records")
            return
        self.records += n
        if bad[0] > MAX_RECORD_PROBLEMS:
            self.problem(
                b.position,
                b.base_offset,
                f"{bad[0] - MAX_RECORD_PROBLEMS} more undecodable records in "
                f"this batch (the first {MAX_RECORD_PROBLEMS} are listed)",
                "bad-records",
            )
        if delta_problem is not None:
            self.problem(
                b.position,
                delta_problem[0],
                _delta_message(b, *delta_problem, contiguous=self.contiguous),
                "record-offset",
            )
        elif n and prev_delta != b.last_offset_delta:
            self.problem(
                b.position,
                b.base_offset,
                f"last record offset {b.base_offset + prev_delta} differs from "
                f"the batch's lastOffset {self.last_offset}",
                "bad-batch",
            )
        if self.batches == 1:
            self.first_ctl = name0 if control_batch else None
        self.last_ctl = name0 if control_batch else None

    def bad_record(self, b, offset, error: str, slug: str, bad: list) -> None:
        bad[0] += 1
        if bad[0] <= MAX_RECORD_PROBLEMS:
            self.problem(b.position, offset, error, slug)

    def tally_control(self, b, r, bad: list) -> str | None:
        """Count a control record, decode the ones whose contents are statistics; its type name."""
        ct = md.control_type(r.key)
        self.control[md.CONTROL_NAMES.get(ct, f"UNKNOWN({ct})")] += 1
        if ct in (md.LEADER_CHANGE, md.KRAFT_VERSION, md.KRAFT_VOTERS):
            d = md.decode_control(r.key, r.value)
            if d.data is None:
                self.bad_record(b, r.offset, d.error, "bad-control-record", bad)
            elif ct == md.LEADER_CHANGE:
                self.leader_changes.append(
                    [
                        r.offset,
                        b.leader_epoch,
                        d.data["version"],
                        d.data["leaderId"],
                        [v["voterId"] for v in d.data["voters"]],
                    ]
                )
            elif ct == md.KRAFT_VERSION:
                self.kraft_versions.append([r.offset, d.data["kRaftVersion"]])
            else:
                self.voters_records.append([r.offset, [v["voterId"] for v in d.data["voters"]]])
        return md.CONTROL_NAMES.get(ct)

    def tally_metadata(self, b, r, bad: list) -> None:
        d = md.decode_metadata(r.value)
        if d.data is None:
            self.bad_record(b, r.offset, d.error, "bad-metadata-record", bad)
            return
        self.frames.add(md.FRAME_VERSION)
        self.mtypes[d.name] += 1
        self.mversions[f"{d.name} v{d.version}"] += 1
        if d.api_key == md.API_KEYS["FeatureLevelRecord"]:
            self.feature_levels.append([r.offset, d.data["name"], d.data["featureLevel"]])
        elif d.api_key == md.API_KEYS["RegisterBrokerRecord"]:
            for f in d.data["features"]:
                if f["name"] == "metadata.version":
                    self.broker_mv.add((f["minSupportedVersion"], f["maxSupportedVersion"]))

    # -- the end -----------------------------------------------------------------
    def tail(self, stop) -> None:
        if stop is not None and stop.reason:
            self.torn = {"position": stop.position, "bytes": stop.remaining, "reason": stop.reason}
            self.problem(
                stop.position,
                None,
                f"{stop.detail}; {stop.remaining} bytes at the end are not a complete batch",
                "zero-tail" if stop.reason == "corrupt" else "torn-tail",
            )

    def report(self) -> FileReport:
        rep = FileReport(self.path, self.kind, problems=self.probs)
        codecs: Counter = Counter()
        for a, n in self.attrs.items():
            codecs[compression.NAMES.get(a & ATTR_COMPRESSION, "unknown")] += n
        attrs = self.attrs.items()
        rep.stats = {
            "batches": self.batches,
            "records": self.records,
            "first_offset": self.first_offset,
            "last_offset": self.last_offset,
            "epochs": sorted(self.epochs),
            "codecs": dict(codecs),
            "control": dict(self.control),
            "control_batches": self.control_batches,
            "txn_batches": sum(n for a, n in attrs if a & ATTR_TRANSACTIONAL),
            "delete_horizon_batches": sum(n for a, n in attrs if a & ATTR_DELETE_HORIZON),
            "metadata_types": dict(self.mtypes),
            "metadata_versions": dict(self.mversions),
            "feature_levels": self.feature_levels,
            "leader_change": self.leader_changes,
            "kraft_version": self.kraft_versions,
            "voters_records": self.voters_records,
            "producer_ids": sorted(self.producer_ids),
            "broker_mv_ranges": sorted([list(x) for x in self.broker_mv]),
            "frame_versions": sorted(self.frames),
            "ts_types": sorted({"LogAppendTime" if a & ATTR_LOG_APPEND_TIME else "CreateTime" for a in self.attrs}),
            "min_ts": self.min_ts if self.deep else None,  # unknown without records
            "max_ts": self.max_ts,
            "crc_bad": len(self.crc_bad),
            "crc_bad_offsets": self.crc_bad,
            "first_batch_ctl": self.first_ctl,
            "last_batch_ctl": self.last_ctl,
            "size": os.path.getsize(self.path),
            "torn_tail": self.torn,
            "deep": self.deep,
        }
        return rep


def record_count_problem(b, contiguous: bool) -> str | None:
    """recordCount against lastOffsetDelta + 1. Kafka's LogValidator refuses a batch
    whose count differs from its offset range on append, and Raft writes its batches
    with consecutive offsets, never compacted: in the metadata log and snapshots
    (`contiguous`) they are equal. The log cleaner keeps retained records at their
    offsets and may leave a batch emptied to its header, so in a (compacted) topic
    segment the count may be lower, down to 0, but never higher."""
    span = b.last_offset_delta + 1
    if contiguous and b.record_count != span:
        return (
            f"recordCount {b.record_count} differs from lastOffsetDelta + 1 = {span} (a metadata log "
            "or snapshot batch holds one record per offset: it is never compacted)"
        )
    if not contiguous and not 0 <= b.record_count <= span:
        return (
            f"recordCount {b.record_count} does not fit the batch's {span} offsets (lastOffsetDelta "
            f"{b.last_offset_delta}; compaction may lower the count, never raise it)"
        )
    return None


def _delta_message(b, offset: int, index: int, delta: int, prev: int, *, contiguous: bool) -> str:
    if delta <= prev:
        what = f"offset delta {delta} does not increase (the record before has {prev})"
    elif delta > b.last_offset_delta:
        what = f"offset delta {delta} is beyond the batch's lastOffsetDelta {b.last_offset_delta}"
    else:
        what = f"offset delta {delta} (expected {index}: a metadata log batch has no gaps)"
    return f"record {index} of the batch at offset {b.base_offset}: {what}"


def check_snapshot_frame(rep: FileReport) -> None:
    """A snapshot (and bootstrap.checkpoint) starts with SnapshotHeader and ends with SnapshotFooter."""
    s = rep.stats
    if not s.get("batches"):
        rep.problems.append(
            Problem(rep.path, 0, None, "snapshot has no batches (expected a SnapshotHeader)", "snapshot-frame")
        )
        return
    if s["first_batch_ctl"] != "SNAPSHOT_HEADER":
        rep.problems.append(
            Problem(
                rep.path,
                0,
                s["first_offset"],
                f"first batch is {s['first_batch_ctl'] or 'a data batch'}, expected SNAPSHOT_HEADER",
                "snapshot-frame",
            )
        )
    if s["last_batch_ctl"] != "SNAPSHOT_FOOTER":
        rep.problems.append(
            Problem(
                rep.path,
                None,
                s["last_offset"],
                f"last batch is {s['last_batch_ctl'] or 'a data batch'}, expected SNAPSHOT_FOOTER "
                "(snapshot incomplete)",
                "snapshot-frame",
            )
        )


def check_epoch_checkpoint(path: str, st: LogState, probs: list[Problem], notes: list[Problem]) -> list:
    """leader-epoch-checkpoint against the epochs actually in the log."""
    from ..logdir.statefiles import read_epoch_checkpoint

    try:
        entries = read_epoch_checkpoint(path)
    except InputError as e:
        probs.append(Problem(path, None, None, str(e), "unreadable"))
        return []
    prev = None
    for i, (epoch, start) in enumerate(entries):
        if prev is not None and (epoch <= prev[0] or start < prev[1]):
            probs.append(
                Problem(
                    path,
                    None,
                    start,
                    f"entry {i + 1} ({epoch} {start}) does not follow ({prev[0]} {prev[1]}): epochs must "
                    "increase and start offsets must not decrease",
                    "epoch-checkpoint",
                )
            )
        prev = (epoch, start)
    if st.first_offset is None or st.last_offset is None:  # both, or neither
        return entries
    log_end = st.last_offset + 1
    by_epoch = dict(entries)
    # Records below the log start offset (DeleteRecords, snapshots) may still sit
    # in the first segment; Kafka moves the first entry up to the log start.
    log_start = max(st.first_offset, entries[0][1]) if entries else st.first_offset
    in_effect = [(e, s) for e, s in st.epoch_starts if s <= log_start]
    transitions = ([(in_effect[-1][0], log_start)] if in_effect else []) + [
        (e, s) for e, s in st.epoch_starts if s > log_start
    ]
    for epoch, start in transitions:
        if start == log_start:
            ok = epoch in by_epoch and by_epoch[epoch] <= start
        else:
            ok = by_epoch.get(epoch) == start
        if not ok:
            probs.append(
                Problem(
                    path,
                    None,
                    start,
                    f"the log's epoch {epoch} starts at offset {start}, but the checkpoint "
                    f"{'says ' + str(by_epoch[epoch]) if epoch in by_epoch else 'has no entry for it'}",
                    "epoch-checkpoint",
                )
            )
    log_epochs = dict(st.epoch_starts)
    for epoch, start in entries:
        if start > log_end:
            # Kafka truncates the epoch cache to the log end when it loads the log
            notes.append(
                Problem(
                    path,
                    None,
                    start,
                    f"epoch {epoch} starts at {start}, beyond the log end offset {log_end} "
                    "(Kafka drops such entries when it loads the log)",
                    "epoch-beyond-log-end",
                )
            )
        elif log_start < start < log_end and log_epochs.get(epoch) != start:
            probs.append(
                Problem(
                    path,
                    None,
                    start,
                    f"epoch {epoch} at {start} is not where the log's epoch changes "
                    f"(log: {', '.join(f'{e}@{s}' for e, s in st.epoch_starts)})",
                    "epoch-checkpoint",
                )
            )
    return entries


def is_metadata_log(path: str) -> bool:
    """A metadata log by location, or by content: its first data record decodes as
    a metadata record (a copy of a segment outside __cluster_metadata-0)."""
    if filekinds.is_metadata_path(path):
        return True
    try:
        for i, b in enumerate(BatchReader(path)):
            if i > 8 or isinstance(b, LegacyEntry):
                return False
            if b.is_control:
                continue
            first = next(b.iter_records(), None)
            return first is not None and first.key is None and md.decode_metadata(first.value).data is not None
    except (BatchError, InputError):
        return False
    return False


def _scan_or_report(path: str, **kw) -> FileReport:
    """scan_batches, or a report of the one problem that kept the file from being
    read (not a regular file, unreadable): verify exits 1 on it."""
    try:
        return scan_batches(path, **kw)
    except InputError as e:
        rep = FileReport(path, filekinds.kind_of(path))
        rep.problems.append(Problem(path, None, None, str(e), "unreadable"))
        return rep


@dataclass
class DirContext:
    """What each file of one partition directory is verified against."""

    state: LogState  # what the live log's segments left (their last epoch, epoch starts)
    has_logs: bool  # the directory has live segments
    metadata: bool  # its log is a metadata log
    deep: bool


def verify_paths(paths: list[str], deep: bool = False, stray=None) -> list[FileReport]:
    """Verify every file under `paths`, partition directory by partition directory
    (InputError for a path that is missing or holds nothing verify reads): its live
    segments first, in offset order, then each file by its kind's handler
    (filekinds.handler("verify", kind))."""
    files = filekinds.log_dir_files(paths, stray=stray)
    by_dir: dict[str, list[str]] = {}
    for f in files:
        by_dir.setdefault(os.path.dirname(os.path.abspath(f)) + "|" + os.path.dirname(f), []).append(f)
    reports: list[FileReport] = []
    for _key, fs in by_dir.items():
        kinds = {f: filekinds.kind_of(f) for f in fs}
        st = LogState()
        logs = _live_segments(fs, kinds)
        metadata = (
            is_metadata_log(logs[0]) if logs else any(kinds[f] == filekinds.LOG and is_metadata_log(f) for f in fs)
        )
        for f in logs:
            reports.append(_scan_or_report(f, contiguous=metadata, state=st, metadata=metadata, deep=deep))
        ctx = DirContext(st, bool(logs), metadata, deep)
        for f in fs:
            rep = filekinds.handler("verify", kinds[f])(f, kinds[f], ctx)
            if rep is not None:
                reports.append(rep)
    by_path = {os.path.realpath(rep.path): rep for rep in reports}
    for p in log_matching_problems(paths):
        rep = by_path.get(os.path.realpath(p.path))
        if rep is None:  # a segment verify did not list (cannot happen: both walk the same dirs)
            rep = by_path[os.path.realpath(p.path)] = FileReport(p.path, filekinds.LOG)
            reports.append(rep)
        rep.problems.append(p)
    for rep in reports:
        gone = filekinds.renamed(rep.path)
        if gone:  # Kafka finishes these itself at startup (deletes, or completes the swap)
            rep.stats["renamed"] = gone
            rep.notes.append(
                Problem(
                    rep.path,
                    None,
                    None,
                    f"{gone}: {filekinds.RENAMED[gone]}; verified as {filekinds.original_name(rep.path)}",
                    "renamed",
                )
            )
    return reports


def log_matching_problems(paths: list[str]) -> list[Problem]:
    """The first log-matching clash of each pair of the metadata logs among `paths`
    (log dirs or __cluster_metadata-0 dirs; none with fewer than two, nor between
    two whose meta.properties name different clusters), each a `log-matching`
    problem of the first one's clashing batch that names the other's."""
    if len(paths) < 2:
        return []  # raft's modules are not even imported: verify of one path starts faster
    from ..raft.logmatch import UNNOTICED, first_clash
    from ..raft.replica import METADATA_PARTITION, load_replica

    seen, dirs = set(), []
    for p in paths:
        q = os.path.normpath(p)
        pdir = q if os.path.basename(q) == METADATA_PARTITION else os.path.join(q, METADATA_PARTITION)
        if os.path.isdir(pdir) and os.path.realpath(pdir) not in seen:
            seen.add(os.path.realpath(pdir))
            dirs.append(q)
    if len(dirs) < 2:
        return []
    replicas = [load_replica(d) for d in dirs]
    out = []
    for i, a in enumerate(replicas):
        for b in replicas[i + 1 :]:
            ca, cb = ((r.meta or {}).get("cluster.id") for r in (a, b))
            x = None if ca and cb and ca != cb else first_clash(a, b)
            if x is not None:
                out.append(
                    Problem(
                        x.a.file,
                        x.a.position,
                        x.offset,
                        f"epoch {x.epoch}: {x.a.replica}'s batch ({x.a.batch()}) and {x.b.text()} are "
                        f"different batches; {UNNOTICED}",
                        "log-matching",
                    )
                )
    return out


def _live_segments(fs: list[str], kinds: dict) -> list[str]:
    """The directory's live segments in offset order: those Kafka renamed on their way
    out (.deleted, .cleaned, .swap) are not part of the live log."""
    live = [f for f in fs if kinds[f] == filekinds.LOG and not filekinds.renamed(f)]
    return sorted(live, key=lambda f: (filekinds.base_offset_of(f) or 0, f))


# Each kind's verify: a FileReport, or None for a file verified otherwise.


@filekinds.handles("verify", filekinds.LOG)
def _verify_segment(f, kind, ctx: DirContext) -> FileReport | None:
    if not filekinds.renamed(f):
        return None  # verify_paths verified the live log first, in offset order
    # a renamed segment is checked on its own, as the segment it was
    return _scan_or_report(f, contiguous=ctx.metadata, state=LogState(), metadata=ctx.metadata, deep=ctx.deep)


@filekinds.handles("verify", filekinds.SNAPSHOT, filekinds.BOOTSTRAP)
def _verify_snapshot(f, kind, ctx: DirContext) -> FileReport:
    sid = filekinds.snapshot_id(f)
    rep = _scan_or_report(f, contiguous=True, expect_epoch=(sid[1] if sid else 0), deep=ctx.deep)
    if rep.problems and rep.problems[0].kind == "unreadable":
        return rep
    if kind == filekinds.SNAPSHOT and sid is None:
        rep.problems.append(
            Problem(f, None, None, "name is not <20-digit end offset>-<10-digit epoch>.checkpoint", "snapshot-name")
        )
    check_snapshot_frame(rep)
    return rep


def _verifies_file(*kinds: str):
    """Register check(f, kind, rep, ctx) as verify's handler of these kinds: it fills
    the file's report; a file that is not a regular one is never read, and one that is
    not what its name says (InputError) is an `unreadable` problem."""

    def register(check):
        @filekinds.handles("verify", *kinds)
        def verify_file(f, kind, ctx: DirContext) -> FileReport:
            rep = FileReport(f, kind)
            try:
                check_regular(f)  # a FIFO, device, directory or symlink loop: a problem, never read
                check(f, kind, rep, ctx)
            except InputError as e:
                rep.problems.append(Problem(f, None, None, str(e), "unreadable"))
            return rep

        return check

    return register


@_verifies_file(filekinds.EPOCH_CHECKPOINT)
def _verify_epoch_checkpoint(f, kind, rep: FileReport, ctx: DirContext) -> None:
    entries = check_epoch_checkpoint(f, ctx.state if ctx.has_logs else LogState(), rep.problems, rep.notes)
    rep.stats = {"entries": [list(e) for e in entries]}


@_verifies_file(filekinds.QUORUM_STATE)
def _verify_quorum_state(f, kind, rep: FileReport, ctx: DirContext) -> None:
    from ..logdir.statefiles import read_quorum_state

    qs = read_quorum_state(f)
    rep.stats = qs
    st = ctx.state
    if st.last_epoch is not None and qs["leaderEpoch"] < st.last_epoch:
        rep.problems.append(
            Problem(
                f,
                None,
                None,
                f"leaderEpoch {qs['leaderEpoch']} is below the log's last epoch {st.last_epoch}",
                "quorum-state",
            )
        )


@_verifies_file(filekinds.META_PROPERTIES)
def _verify_meta_properties(f, kind, rep: FileReport, ctx: DirContext) -> None:
    from ..logdir.statefiles import read_meta_properties

    rep.stats = read_meta_properties(f)


@_verifies_file(filekinds.PARTITION_METADATA)
def _verify_partition_metadata(f, kind, rep: FileReport, ctx: DirContext) -> None:
    from ..logdir.statefiles import read_partition_metadata

    rep.stats = read_partition_metadata(f)


@_verifies_file(filekinds.INDEX, filekinds.TIMEINDEX)
def _verify_index(f, kind, rep: FileReport, ctx: DirContext) -> None:
    from ..logdir import indexes
    from ..logdir import index_checks

    log = indexes.sibling(f, "log")
    base = filekinds.base_offset_of(f) or 0
    if not os.path.exists(log):
        # an orphaned index: Kafka deletes it when it loads the log
        rep.notes.append(
            Problem(
                f,
                None,
                None,
                f"no segment {os.path.basename(log)} beside it (Kafka deletes orphaned indexes at startup)",
                "orphaned-index",
            )
        )
    else:
        check = index_checks.check_offset_index if kind == filekinds.INDEX else index_checks.check_time_index
        remarks: list[str] = []
        rep.problems.extend(check(f, log, base, notes=remarks))
        rep.notes.extend(Problem(f, None, None, r, "index-note") for r in remarks)


@_verifies_file(filekinds.PRODUCER_SNAPSHOT)
def _verify_producer_snapshot(f, kind, rep: FileReport, ctx: DirContext) -> None:
    from ..logdir import producer_state

    rep.stats = {"producers": len(producer_state.read_producer_snapshot(f))}


@_verifies_file(filekinds.TXNINDEX)
def _verify_txn_index(f, kind, rep: FileReport, ctx: DirContext) -> None:
    from ..logdir import producer_state

    rep.stats = {"entries": len(producer_state.read_txn_index(f))}
