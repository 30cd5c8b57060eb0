"""Build KRaft log dirs from a compact description with the project's writer:
the divergence scenarios of the tests and benchmarks (several replicas of one
quorum whose logs share a prefix and then differ), multi-segment logs with
their indexes, snapshots and producer-state files.

Every batch's bytes depend only on (offset, epoch, tag), so two replicas that
agree on a prefix have byte-identical prefixes, and a truncated follower can
be compared with its leader byte for byte.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from .. import ids
from ..records import metadata as md
from ..records.batch import encode_batch
from ..raft import epochs
from ..logdir import statefiles as state_files
from ..logdir import indexes
from ..logdir import segments
from ..logdir.producer_state import snapshot_bytes
from ..logdir.snapshots import encode_snapshot

T0 = 1_700_000_000_000
CLUSTER_ID = "XFBpci3ORzK2hz44Gtmrwg"


@dataclass
class B:
    """A batch to write: `count` records in leader epoch `epoch`; `tag` makes the
    payload differ between replicas (uncommitted entries of an old leader)."""

    epoch: int
    count: int = 1
    tag: str = ""


def batch_bytes(offset: int, b: B) -> bytes:
    values = []
    for i in range(b.count):
        value = md.encode_metadata(
            4,
            0,
            {
                "resourceType": 2,
                "resourceName": "quorumctl-test",
                "name": f"k{offset + i}",
                "value": f"e{b.epoch}{b.tag}",
            },
        )
        values.append((None, value))
    return encode_batch(values, base_offset=offset, leader_epoch=b.epoch, base_timestamp=T0 + offset)


@dataclass(frozen=True)
class Layout:
    """How a replica's batches lie in its partition dir.

    segment_starts: batch indexes where a new segment begins (the first is implied);
    log_start: drop the batches below this offset (as after deleteBeforeSnapshot);
    index_interval: bytes between offset and time index entries (log.index.interval.bytes);
    producer_snapshots: offsets of the (empty) producer-state snapshots beside the segments."""

    segment_starts: tuple[int, ...] = ()
    log_start: int = 0
    index_interval: int = 200
    producer_snapshots: tuple[int, ...] = ()


def write_replica(
    log_dir: str,
    batches: list[B],
    *,
    node_id: int = 1,
    cluster_id: str = CLUSTER_ID,
    directory_id: str | None = None,
    voters=(1, 2, 3),
    layout: Layout = Layout(),
    snapshots=(),
    checkpoint="auto",
    quorum_state="auto",
) -> str:
    """Write `<log_dir>/meta.properties` and `<log_dir>/__cluster_metadata-0/...`.

    snapshots: (end offset, epoch) pairs; checkpoint: "auto" (from the batches),
    a list of (epoch, offset), or None (no file); quorum_state: "auto" (the latest
    epoch, `voters`), a dict, or None (no file). Returns the partition dir."""
    pdir = os.path.join(log_dir, "__cluster_metadata-0")
    os.makedirs(pdir, exist_ok=True)
    with open(os.path.join(log_dir, "meta.properties"), "wb") as f:
        f.write(state_files.meta_properties_text(1, cluster_id, node_id, directory_id or ids.random_directory_id(), 0))
    offset = 0
    placed = []  # (segment index, batch offset, bytes, B)
    seg = 0
    starts = set(layout.segment_starts)
    log_start = layout.log_start
    for i, b in enumerate(batches):
        if i in starts and i > 0:
            seg += 1
        raw = batch_bytes(offset, b)
        placed.append((seg, offset, raw, b))
        offset += b.count
    log_end = offset
    segs: dict[int, list] = {}
    for segi, off, raw, b in placed:
        if off + b.count <= log_start:
            continue
        segs.setdefault(segi, []).append((off, raw, b))
    if not segs:
        segs[0] = []
    for segi in sorted(segs):
        items = segs[segi]
        base = items[0][0] if items else log_start
        data = b"".join(raw for _, raw, _ in items)
        with open(os.path.join(pdir, segments.segment_name(base, "log")), "wb") as f:
            f.write(data)
        infos = []
        pos = 0
        for off, raw, b in items:
            infos.append(segments.BatchInfo(off, off + b.count - 1, b.epoch, pos, len(raw), T0 + off, False))
            pos += len(raw)
        oidx, tidx = indexes.build_indexes(infos, base, layout.index_interval)
        with open(os.path.join(pdir, segments.segment_name(base, "index")), "wb") as f:
            f.write(indexes.offset_index_bytes(oidx, base))
        with open(os.path.join(pdir, segments.segment_name(base, "timeindex")), "wb") as f:
            f.write(indexes.time_index_bytes(tidx, base))
    kept_epochs = [(b.epoch, off) for _, off, _, b in placed if off + b.count > log_start]
    hist = epochs.history_from_batches(kept_epochs)
    hist.truncate_from_start(log_start)
    if checkpoint == "auto":
        checkpoint = hist.entries
    if checkpoint is not None:
        with open(os.path.join(pdir, state_files.EPOCH_CHECKPOINT), "wb") as f:
            f.write(state_files.epoch_checkpoint_text(checkpoint))
    with open(os.path.join(pdir, state_files.PARTITION_METADATA), "wb") as f:
        f.write(state_files.partition_metadata_text(ids.METADATA_TOPIC_ID))
    if quorum_state == "auto":
        last = hist.latest_epoch if hist.latest_epoch is not None else 0
        quorum_state = {
            "clusterId": "",
            "leaderId": -1,
            "leaderEpoch": last,
            "votedId": -1,
            "appliedOffset": 0,
            "currentVoters": [{"voterId": v} for v in voters],
            "data_version": 0,
        }
    if quorum_state is not None:
        with open(os.path.join(pdir, state_files.QUORUM_STATE), "w") as f:
            f.write(json.dumps(quorum_state, separators=(",", ":")))
    for end, epoch in snapshots:
        recs = [
            (4, 0, {"resourceType": 2, "resourceName": "quorumctl-test", "name": f"upto{end}", "value": f"e{epoch}"})
        ]
        with open(os.path.join(pdir, segments.snapshot_name(end, epoch)), "wb") as f:
            f.write(
                encode_snapshot(recs, epoch=epoch, last_contained_log_timestamp=T0 + end - 1, timestamp_ms=T0 + end)
            )
    for off in layout.producer_snapshots:
        # an empty producer-state snapshot (what Kafka writes on clean shutdown)
        with open(os.path.join(pdir, f"{off:020d}.snapshot"), "wb") as f:
            f.write(snapshot_bytes([]))
    assert log_end >= log_start
    return pdir
