"""Writing KRaft snapshot files (bootstrap.checkpoint, raft snapshots) with
the project's batch writer, in the layout Kafka's writers produce:

- BatchFileWriter (bootstrap.checkpoint): a control batch with SnapshotHeader
  (lastContainedLogTimestamp 0), one data batch with every record, a control
  batch with SnapshotFooter; partitionLeaderEpoch 0 throughout.
- RecordsSnapshotWriter (raft snapshots, the KIP-853 bootstrap snapshot): one
  control batch holding SnapshotHeader, then KRaftVersion and Voters when
  kraft.version >= 1, data batches, then the SnapshotFooter batch; every batch
  carries the snapshot's epoch as partitionLeaderEpoch.
Offsets run from 0 across the batches, as in Kafka's files.
"""

from __future__ import annotations

import time

from ..records import metadata as md
from ..records.batch import encode_batch


def _now_ms() -> int:
    return int(time.time() * 1000)


def control_batch(entries, *, base_offset: int, epoch: int, timestamp_ms: int) -> bytes:
    """entries: [(control type, data dict)]"""
    recs = [md.encode_control(ct, data) for ct, data in entries]
    return encode_batch(recs, base_offset=base_offset, leader_epoch=epoch, base_timestamp=timestamp_ms, control=True)


def encode_snapshot(
    records,
    *,
    epoch: int = 0,
    last_contained_log_timestamp: int = 0,
    kraft_version: int | None = None,
    voters: list[dict] | None = None,
    timestamp_ms: int | None = None,
    records_per_batch: int | None = None,
) -> bytes:
    """records: [(api key or record name, version, data)] metadata records.
    kraft_version/voters: the KIP-853 records written right after the header
    (RecordsSnapshotWriter writes them when kraft.version >= 1).
    timestamp_ms: one time for every batch, or a list (header, data..., footer),
    as Kafka stamps each batch when it is built."""
    if timestamp_ms is None:
        timestamp_ms = _now_ms()
    times = list(timestamp_ms) if isinstance(timestamp_ms, (list, tuple)) else None
    ts = times[0] if times else timestamp_ms

    def batch_time(i):
        return times[min(i, len(times) - 1)] if times else ts

    head: list[tuple[int, dict]] = [
        (md.SNAPSHOT_HEADER, {"version": 0, "lastContainedLogTimestamp": last_contained_log_timestamp})
    ]
    if kraft_version:
        head.append((md.KRAFT_VERSION, {"version": 0, "kRaftVersion": kraft_version}))
        if voters is not None:
            head.append((md.KRAFT_VOTERS, {"version": 0, "voters": voters}))
    out = [control_batch(head, base_offset=0, epoch=epoch, timestamp_ms=batch_time(0))]
    offset = len(head)
    values = [(None, md.encode_metadata(k, v, d)) for k, v, d in records]
    step = records_per_batch or max(len(values), 1)
    for i in range(0, len(values), step):
        chunk = values[i : i + step]
        out.append(encode_batch(chunk, base_offset=offset, leader_epoch=epoch, base_timestamp=batch_time(len(out))))
        offset += len(chunk)
    out.append(
        control_batch(
            [(md.SNAPSHOT_FOOTER, {"version": 0})], base_offset=offset, epoch=epoch, timestamp_ms=batch_time(len(out))
        )
    )
    return b"".join(out)
