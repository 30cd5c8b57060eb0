"""The cluster's committed metadata log, read from the quorum's leader through the
controller listener as a KRaft observer reads it: Fetch (API 1) of __cluster_metadata-0
from offset 0 with ReplicaId -1 (a fetcher the leader keeps no state for: it is neither
a voter nor an observer in DescribeQuorum), and, when the leader answers with a
SnapshotId (its log starts after a snapshot), FetchSnapshot (API 59) of that snapshot
first, then Fetch from the snapshot's end. Only whole batches below the high watermark
are kept (what is committed); reading stops at the high watermark of the first answer,
at `max_bytes` in all (an error, never a partial log) and at the client's deadline.

The bytes are returned as they came; the image layer replays them (image.replay.replay_bytes).
The leader authorizes both requests as CLUSTER_ACTION on the cluster (what controllers
and brokers hold), so an authorizer may refuse an operator's principal."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ClusterError
from ..records.batch import Batch, BatchReader

CHUNK_BYTES = 4 * 1024 * 1024  # MaxBytes of each request (Kafka's fetch.max.bytes default is 50 MiB)
MAX_BYTES = 256 * 1024 * 1024  # the snapshot and the log together, at most


@dataclass
class MetadataLog:
    """What was read: the leader asked, the snapshot (end offset, epoch) and its bytes when
    the log starts after one, and the log's whole committed batches from `log_start`."""

    source: str
    leader_id: int
    leader_epoch: int
    high_watermark: int
    snapshot: tuple[int, int] | None
    snapshot_bytes: bytes
    log_start: int
    log_bytes: bytes

    @property
    def size(self) -> int:
        return len(self.snapshot_bytes) + len(self.log_bytes)


class TooLarge(ClusterError):
    """The metadata log is larger than the bytes allowed for reading it."""


def _present(pair: dict | None, a: str, b: str) -> bool:
    """A tagged (offset, epoch) pair in an answer, set (Kafka writes it only when not -1, -1)."""
    return pair is not None and (pair.get(a, -1) != -1 or pair.get(b, -1) != -1)


def _committed(records: bytes, below: int) -> tuple[bytes, int | None, int | None]:
    """The whole batches of a Fetch answer that end below the high watermark `below`:
    (their bytes, the next offset to fetch, the last one's epoch); (b"", None, None) when
    none (a partial batch at the end of an answer is left for the next fetch)."""
    end = 0
    nxt = epoch = None
    with BatchReader(records) as reader:
        for b in reader:
            if not isinstance(b, Batch) or b.last_offset >= below:
                break
            end = b.position + b.size
            nxt, epoch = b.next_offset, b.leader_epoch
    return records[:end], nxt, epoch


def read_metadata_log(client, max_bytes: int = MAX_BYTES, chunk: int = CHUNK_BYTES) -> MetadataLog:
    """Read the committed metadata log through `client` (a wire QuorumClient on the
    controllers), bounded by `max_bytes` and the client's deadline."""
    q = client.describe_quorum()
    leader_id, epoch = q.partition["leaderId"], q.partition["leaderEpoch"]
    if leader_id < 0:
        raise ClusterError(f"{q.source}: the quorum has no leader to read the metadata log from")
    part = client.fetch_metadata(0, 0, epoch, chunk)
    snapshot = None
    snap = bytearray()
    offset, last_epoch = 0, 0
    sid = part.get("snapshotId")
    if _present(sid, "endOffset", "epoch"):
        assert sid is not None
        snapshot = (sid["endOffset"], sid["epoch"])
        size = None
        while size is None or len(snap) < size:
            sp = client.fetch_snapshot(snapshot, len(snap), epoch, chunk)
            size, data = sp["size"], sp["unalignedRecords"] or b""
            if sp["position"] != len(snap) or not data:
                raise ClusterError(
                    f"the leader answered FetchSnapshot of snapshot {snapshot} at byte {len(snap)} "
                    f"with {len(data)} bytes from byte {sp['position']}"
                )
            if size > max_bytes:
                raise TooLarge(f"the metadata snapshot is {size} bytes, more than the {max_bytes} allowed")
            snap += data
        offset, last_epoch = snapshot
        part = client.fetch_metadata(offset, last_epoch, epoch, chunk)
    start = offset
    target = part["highWatermark"]
    log = bytearray()
    while offset < target:
        if _present(part.get("divergingEpoch"), "epoch", "endOffset") or _present(
            part.get("snapshotId"), "endOffset", "epoch"
        ):
            raise ClusterError(
                f"the metadata log changed under the reader at offset {offset} (a new leader, or a new "
                "snapshot): run the command again"
            )
        kept, nxt, batch_epoch = _committed(part.get("records") or b"", target)
        if nxt is None or batch_epoch is None:
            raise ClusterError(
                f"the leader answered Fetch at offset {offset} (high watermark {target}) with no whole batch"
            )
        log += kept
        if len(snap) + len(log) > max_bytes:
            raise TooLarge(f"the metadata log is larger than the {max_bytes} bytes allowed (at offset {nxt})")
        offset, last_epoch = nxt, batch_epoch
        if offset < target:
            part = client.fetch_metadata(offset, last_epoch, epoch, chunk)
    return MetadataLog(q.source, leader_id, epoch, target, snapshot, bytes(snap), start, bytes(log))
