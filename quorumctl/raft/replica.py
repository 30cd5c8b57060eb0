"""One replica's metadata log, offline: everything `state` shows and `truncate`
plans from, and the comparison of several replicas of one quorum.

Inputs are a log dir (holding `__cluster_metadata-0`), the partition directory
itself, or a server.properties (its metadata.log.dir, else the first log dir).
Nothing is written; no lock is taken.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import InputError
from . import epochs
from ..logdir import statefiles as state_files
from ..logdir import segments

METADATA_PARTITION = "__cluster_metadata-0"


def resolve_partition_dir(path: str) -> tuple[str, str]:
    """(log dir, partition dir) for a log dir or a __cluster_metadata-0 dir."""
    p = os.path.normpath(path)
    if not os.path.exists(p):
        raise InputError(f"{path}: no such directory")
    if not os.path.isdir(p):
        raise InputError(f"{path}: not a directory (expected a log dir or its {METADATA_PARTITION})")
    if os.path.basename(p) == METADATA_PARTITION:
        return os.path.dirname(p) or ".", p
    sub = os.path.join(p, METADATA_PARTITION)
    if os.path.isdir(sub):
        return p, sub
    raise InputError(
        f"{path}: has no {METADATA_PARTITION} directory (expected a KRaft log dir or the "
        f"{METADATA_PARTITION} directory itself)"
    )


def metadata_dir_from_config(cfg_path: str) -> str:
    from ..config.server import load

    return load(cfg_path).metadata_log_dir


def read_snapshot_controls(path: str) -> dict:
    """The leading control batch of a snapshot: SnapshotHeader fields, and the
    KRaftVersion / Voters records a KIP-853 snapshot carries (first batch only)."""
    from ..records import metadata as md
    from ..records.batch import Batch, BatchError, BatchReader

    out: dict = {"header": None, "kraft_version": None, "voters": None, "problem": None}
    try:
        with BatchReader(path) as reader:
            for b in reader:
                if not isinstance(b, Batch) or not b.is_control:
                    out["problem"] = "the first batch is not a control batch (expected SnapshotHeader)"
                    break
                for r in b.iter_records():
                    ct = md.control_type(r.key)
                    d = md.decode_control(r.key, r.value)
                    if ct == md.SNAPSHOT_HEADER:
                        out["header"] = d.data
                    elif ct == md.KRAFT_VERSION and d.data is not None:
                        out["kraft_version"] = d.data["kRaftVersion"]
                    elif ct == md.KRAFT_VOTERS and d.data is not None:
                        out["voters"] = d.data["voters"]
                break
    except (BatchError, OSError) as e:
        out["problem"] = str(e)
    return out


def _voter_json(v: dict) -> dict:
    return {
        "id": v["voterId"],
        "directory_id": v.get("voterDirectoryId"),
        "endpoints": [f"{e['name']}://{e['host']}:{e['port']}" for e in v.get("endpoints", [])],
    }


@dataclass
class Replica:
    label: str
    log_dir: str
    partition_dir: str
    meta: dict | None = None
    quorum_state: dict | None = None
    checkpoint: list | None = None
    partition_metadata: dict | None = None
    voters: dict | None = None
    voters_record: list | None = None  # the last VotersRecord's voters, as decoded
    kraft_version: int | None = None
    kraft_version_source: str | None = None  # "snapshot NAME" or "log offset N" of its KRaftVersionRecord
    last_leader_change: dict | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth knowing, not wrong (Kafka copes)
    # set by load_replica (the only constructor) before anything reads them
    files: segments.PartitionFiles = field(init=False)
    scan: segments.LogScan = field(init=False)
    history: epochs.EpochHistory = field(init=False)  # what Kafka holds after loading the log
    log_history: epochs.EpochHistory = field(init=False)  # implied by the batches alone

    @property
    def node_id(self) -> int | None:
        return self.meta.get("node.id") if self.meta else None

    @property
    def log_start(self) -> int:
        return self.scan.log_start

    @property
    def log_end(self) -> int:
        return self.scan.log_end

    @property
    def snapshots(self) -> list[segments.SnapshotFile]:
        """The snapshots Kafka keeps at start-up (end offset >= log start), by (epoch, offset)."""
        return [s for s in self.files.snapshots if s.end_offset >= self.log_start]

    @property
    def latest_snapshot(self) -> segments.SnapshotFile | None:
        snaps = self.snapshots
        return snaps[-1] if snaps else None

    def snapshot_and_log(self) -> list[tuple[str, int]]:
        """What replaying this replica reads, as (file, first offset that counts):
        its latest snapshot whole, then the log segments that reach past it."""
        snap = self.latest_snapshot
        start = snap.end_offset if snap is not None else 0
        return ([(snap.path, 0)] if snap is not None else []) + [
            # a scanned segment always has its .log (scan_log skips the others)
            (seg.files.log, start)
            for seg in self.scan.segments
            if seg.files.log is not None and seg.batches and seg.batches[-1].last_offset >= start
        ]

    @property
    def replaced_by_snapshot(self) -> bool:
        """KafkaMetadataLog.truncateToLatestSnapshot: at start-up a log that ends
        before its latest snapshot is dropped and restarts at the snapshot."""
        snap = self.latest_snapshot
        latest = self.history.latest_epoch if self.history.latest_epoch is not None else 0
        return snap is not None and (snap.epoch > latest or (snap.epoch == latest and snap.end_offset > self.log_end))

    def view(self) -> epochs.LogView:
        """The log as Kafka's Raft layer sees it after start-up."""
        snap = self.latest_snapshot
        if snap is not None and self.replaced_by_snapshot:
            return epochs.LogView(epochs.EpochHistory(), snap.end_offset, snap.end_offset, [snap.id], [])
        return epochs.LogView(
            self.history.copy(), self.log_start, self.log_end, [s.id for s in self.snapshots], self.scan.boundaries()
        )

    @property
    def last_epoch(self) -> int:
        try:
            return self.view().last_fetched_epoch
        except ValueError:
            return -1

    @property
    def election_key(self) -> tuple[int, int]:
        """(last epoch, log end offset): what Raft elects by; (-1, -1) for a log Kafka
        could not load (compare() records why)."""
        try:
            return epochs.election_key(self.view())
        except ValueError:
            return (-1, -1)

    @property
    def last_batch_timestamp(self) -> int | None:
        last = None
        for sc in self.scan.segments:
            if sc.batches:
                last = sc.batches[-1].max_timestamp
        return last


def load_replica(path: str, label: str | None = None) -> Replica:
    log_dir, pdir = resolve_partition_dir(path)
    r = Replica(label or "", log_dir, pdir)
    meta_path = os.path.join(log_dir, state_files.META_PROPERTIES)
    if os.path.lexists(meta_path):  # anything but a regular file is a problem the reader names
        try:
            r.meta = state_files.read_meta_properties(meta_path)
            r.meta.pop("properties", None)
        except InputError as e:
            r.problems.append(str(e))
    else:
        r.problems.append(f"{meta_path}: missing (the log dir is not formatted)")
    for name, reader, attr in (
        (state_files.QUORUM_STATE, state_files.read_quorum_state, "quorum_state"),
        (state_files.EPOCH_CHECKPOINT, state_files.read_epoch_checkpoint, "checkpoint"),
        (state_files.PARTITION_METADATA, state_files.read_partition_metadata, "partition_metadata"),
    ):
        p = os.path.join(pdir, name)
        if os.path.lexists(p):
            try:
                setattr(r, attr, reader(p))
            except InputError as e:
                r.problems.append(str(e))
        elif name != state_files.PARTITION_METADATA:
            # a node that never started has neither; Kafka writes quorum-state at start-up
            # and rebuilds the epoch history from the log
            r.notes.append(f"{p}: missing")
    r.files = segments.scan_partition(pdir)
    r.problems.extend(r.files.not_regular)
    r.scan = segments.scan_log(r.files)
    if r.scan.problem:
        r.problems.append(
            f"{pdir}: {r.scan.problem} (Kafka truncates the log there at start-up"
            + (f" and deletes {len(r.scan.dropped_segments)} later segment(s))" if r.scan.dropped_segments else ")")
        )
    r.history = epochs.load_history(r.checkpoint, r.scan.batch_epochs(), r.log_end)
    r.log_history = epochs.history_from_batches(r.scan.batch_epochs())
    r.log_history.truncate_from_start(r.log_start)
    _cross_check_epochs(r)
    _snapshot_checks(r)
    _find_voters(r)
    if not r.label:
        r.label = f"node {r.node_id}" if r.node_id is not None else os.path.basename(os.path.abspath(log_dir))
    return r


def _cross_check_epochs(r: Replica) -> None:
    if r.checkpoint is None:
        return
    cp = epochs.EpochHistory(r.checkpoint)
    cp.truncate_from_end(r.log_end)
    # While Kafka runs, a snapshot moves the log start offset and the checkpoint's first
    # entry with it (LeaderEpochFileCache.truncateFromStart), but only whole segments are
    # deleted; at start-up the log starts at the first segment's base offset again
    # (LogLoader) and the checkpoint is kept as it is. So on a long-lived node the first
    # entry usually starts inside the log: Kafka's own state, as `verify` reads it too.
    start = r.log_start
    if cp.entries and r.log_start < cp.entries[0][1] < r.log_end:
        start = cp.entries[0][1]
    if start > 0:
        cp.truncate_from_start(start)
    log_h = r.log_history.copy()
    log_h.truncate_from_start(start)
    if cp.entries != log_h.entries:
        r.problems.append(
            f"{os.path.join(r.partition_dir, state_files.EPOCH_CHECKPOINT)}: epochs {_fmt(r.checkpoint)} do not match the "
            f"epochs in the log {_fmt(r.log_history.entries)}"
            + (f"; Kafka will use {_fmt(r.history.entries)}" if r.history.entries != r.log_history.entries else "")
        )
    elif start != r.log_start:
        r.notes.append(
            f"{os.path.join(r.partition_dir, state_files.EPOCH_CHECKPOINT)}: starts at offset {start}, "
            f"inside the log (first batch at {r.log_start}): the log start moved to a snapshot while Kafka "
            "ran, and Kafka deletes only whole segments; Kafka keeps it so"
        )


def _fmt(entries) -> str:
    return "[" + ", ".join(f"{e}@{o}" for e, o in entries) + "]"


def _snapshot_checks(r: Replica) -> None:
    for s in r.files.snapshots:
        if s.end_offset < r.log_start:
            r.problems.append(f"{s.path}: below the log start offset {r.log_start} (Kafka deletes it at start-up)")
    if r.log_start > 0 and not any(s.end_offset >= r.log_start for s in r.files.snapshots):
        r.problems.append(
            f"{r.partition_dir}: the log starts at {r.log_start} but no snapshot reaches it "
            "(Kafka refuses to start: Inconsistent snapshot state)"
        )
    latest = r.latest_snapshot
    if latest is not None and r.replaced_by_snapshot:
        r.problems.append(
            f"{latest.path}: is ahead of the log (end offset {r.log_end}, last epoch "
            f"{r.history.latest_epoch}); Kafka drops the log at start-up and restarts it at the snapshot"
        )


def _find_voters(r: Replica) -> None:
    """Voters: the last VotersRecord (latest snapshot, then the log after it), else
    the static list a v0 quorum-state carries."""
    latest = r.latest_snapshot
    source = None
    voters = None
    if latest is not None:
        snap = read_snapshot_controls(latest.path)
        if snap["kraft_version"] is not None:
            r.kraft_version = snap["kraft_version"]
            r.kraft_version_source = f"snapshot {os.path.basename(latest.path)}"
        if snap["voters"] is not None:
            voters = snap["voters"]
            source = f"snapshot {os.path.basename(latest.path)}"
    start = latest.end_offset if latest is not None else 0
    for offset, name, data in r.scan.controls():
        if data is None:
            continue
        if name == "LEADER_CHANGE":
            r.last_leader_change = {
                "offset": offset,
                "leader_id": data["leaderId"],
                "voters": [v["voterId"] for v in data["voters"]],
                "granting_voters": [v["voterId"] for v in data["grantingVoters"]],
            }
        if offset < start:
            continue
        if name == "KRAFT_VERSION":
            r.kraft_version = data["kRaftVersion"]
            r.kraft_version_source = f"log offset {offset}"
        elif name == "KRAFT_VOTERS":
            voters = data["voters"]
            source = f"log offset {offset}"
    if voters is not None:
        r.voters_record = voters
        r.voters = {
            "ids": sorted(v["voterId"] for v in voters),
            "source": source,
            "dynamic": True,
            "voters": [_voter_json(v) for v in voters],
        }
        return
    static = state_files.quorum_state_voters(r.quorum_state) if r.quorum_state else None
    if static is not None and static:
        r.voters = {"ids": sorted(static), "source": "quorum-state", "dynamic": False, "voters": None}
    elif r.quorum_state is not None:
        r.voters = {
            "ids": [],
            "source": "none in the files (static quorum: controller.quorum.voters)",
            "dynamic": False,
            "voters": None,
        }


# -- several replicas ------------------------------------------------------------


def compare(replicas: list[Replica]) -> dict:
    """The most up-to-date replica by Raft's rule (last epoch, then log end
    offset) and, for every other one, the Fetch exchange against it (KIP-595)
    and its first log-matching clash with it (raft/logmatch.py), which that
    exchange cannot see. `log_matching` (present only when there is one) lists
    the clashes of every pair, the winner's first (the winner as side a)."""
    from .logmatch import clashes, first_clash

    keys = []
    for r in replicas:
        try:
            keys.append(epochs.election_key(r.view()))
        except ValueError as e:
            r.problems.append(f"{r.partition_dir}: {e}")
            keys.append((-1, -1))
    best = max(keys)
    winners = [i for i, k in enumerate(keys) if k == best]
    clusters = sorted({r.meta["cluster.id"] for r in replicas if r.meta and "cluster.id" in r.meta})
    w = winners[0]
    leader_view = replicas[w].view()
    out = []
    found = []
    for i, r in enumerate(replicas):
        if i == w:
            continue
        d = epochs.reconcile(r.view(), leader_view)
        clash = first_clash(replicas[w], r)
        out.append(divergence_json(r, d, clash))
        found += [clash] if clash else []
    found += clashes([r for i, r in enumerate(replicas) if i != w])
    doc = {
        "winner": replicas[w].label,
        "winner_index": w,
        "tied": [replicas[i].label for i in winners] if len(winners) > 1 else [],
        "election_key": {"last_epoch": best[0], "end_offset": best[1]},
        "followers": out,
        "cluster_ids": clusters,
    }
    if found:
        doc["log_matching"] = [c.to_json() for c in found]
    return doc


def divergence_json(r: Replica, d: epochs.Divergence, clash=None) -> dict:
    """The Fetch exchange of `r` against the most up-to-date replica as JSON;
    `clash` (logmatch.Clash, that replica as side a, `r` as b) ends the common
    prefix at the clashing batches and adds `log_matching`."""
    doc = {
        "replica": r.label,
        "kind": d.kind,
        "diverging_epoch": (
            {"epoch": d.first_diverging[1], "end_offset": d.first_diverging[0]} if d.first_diverging else None
        ),
        "truncate_to": d.truncate_to,
        "new_end_offset": d.new_end,
        "common_prefix_end": (d.new_end if d.kind == "diverging" else r.log_end if d.kind == "none" else d.new_end),
        "snapshot": ({"end_offset": d.snapshot[0], "epoch": d.snapshot[1]} if d.snapshot else None),
        "fetch_rounds": [
            {
                "fetch_offset": x.fetch_offset,
                "last_fetched_epoch": x.last_fetched_epoch,
                "answer": x.answer,
                "offset": x.answer_id[0] if x.answer_id else None,
                "epoch": x.answer_id[1] if x.answer_id else None,
                "truncate_to": x.truncate_to,
                "new_end": x.new_end,
            }
            for x in d.rounds
        ],
    }
    if clash is not None:
        cp = doc["common_prefix_end"]
        doc["common_prefix_end"] = clash.prefix_end if cp is None else min(cp, clash.prefix_end)
        doc["log_matching"] = [clash.to_json()]
    return doc
