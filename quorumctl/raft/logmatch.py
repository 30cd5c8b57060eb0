"""Raft's log matching property, checked across replicas' files.

Raft (and KIP-595) relies on it: two logs holding an entry with the same
offset and epoch hold the same entry there, and the same entries before it.
Kafka's Fetch path never compares batch contents: a follower's divergence is
found from epochs alone (`DivergingEpoch`). So when two replicas hold
*different* batches at one (offset, epoch), nothing in Kafka notices; each
believes the other's log is its own prefix. Only a tool that writes a log
outside Raft (an offline recovery done wrongly, a copied log dir appended
to) can cause it, and only the files show it.

A clash here: two batches of the same epoch whose offset ranges overlap, in two
replicas, that are not the same batch (other offsets, or another CRC-32C over
the batch's attributes, timestamps, producer fields and records).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

from ..logdir.segments import BatchInfo, LogScan


class Replica(Protocol):
    """What this module reads of a raft.replica.Replica (replica.compare calls this
    module, so it names the shape rather than importing the class back)."""

    label: str
    scan: LogScan

    @property
    def replaced_by_snapshot(self) -> bool: ...


@dataclass
class Side:
    replica: str  # the replica's label (node N)
    file: str  # the .log file holding the batch
    position: int  # its byte position there
    base_offset: int
    last_offset: int
    crc: int | None

    def to_json(self) -> dict:
        return {
            "replica": self.replica,
            "file": self.file,
            "position": self.position,
            "base_offset": self.base_offset,
            "last_offset": self.last_offset,
            "crc": self.crc,
        }

    @classmethod
    def from_json(cls, d: dict) -> "Side":
        return cls(d["replica"], d["file"], d["position"], d["base_offset"], d["last_offset"], d["crc"])

    def batch(self) -> str:
        """The batch itself: its offsets and CRC."""
        return f"offsets {self.base_offset}..{self.last_offset}, crc {self.crc}"

    def text(self) -> str:
        """Whose batch, where: replica, file and byte position, offsets and CRC."""
        return f"{self.replica} {self.file} position {self.position} ({self.batch()})"


@dataclass
class Clash:
    offset: int  # the first offset both hold in the same epoch with different contents
    epoch: int
    a: Side
    b: Side

    def to_json(self) -> dict:
        return {"offset": self.offset, "epoch": self.epoch, "a": self.a.to_json(), "b": self.b.to_json()}

    @classmethod
    def from_json(cls, d: dict) -> "Clash":
        return cls(d["offset"], d["epoch"], Side.from_json(d["a"]), Side.from_json(d["b"]))

    @property
    def prefix_end(self) -> int:
        """Where the two logs' common prefix ends: the lower of the two clashing
        batches' base offsets (below it no batch of one epoch differs)."""
        return min(self.a.base_offset, self.b.base_offset)

    def what(self) -> str:
        """The clash without the `log-matching: ` slug (for lines that carry it elsewhere)."""
        return (
            f"offset {self.offset}, epoch {self.epoch}: {self.a.text()} and {self.b.text()} are "
            f"different batches; {UNNOTICED}"
        )

    def describe(self) -> str:
        return f"log-matching: {self.what()}"


# why a clash matters, said once for every command that reports one
UNNOTICED = "Raft assumes one entry per (offset, epoch), so neither replica's Fetch will ever notice"


def _batches(r: Replica) -> list[tuple[BatchInfo, str]]:
    """The batches Kafka keeps at start-up: none when the latest snapshot replaces
    the whole log (Replica.replaced_by_snapshot), else every valid batch."""
    if r.replaced_by_snapshot:
        return []
    # a scanned segment always has its .log (scan_log skips the others)
    return [(b, sc.files.log) for sc in r.scan.segments if sc.files.log is not None for b in sc.batches]


def _side(r: Replica, b: BatchInfo, path: str) -> Side:
    return Side(r.label, path, b.position, b.base_offset, b.last_offset, b.crc)


def first_clash(a: Replica, b: Replica) -> Clash | None:
    """The lowest-offset clash between two replicas' logs, or None (two ordered
    walks; batches of one log never overlap each other)."""
    xs, ys = _batches(a), _batches(b)
    i = j = 0
    while i < len(xs) and j < len(ys):
        x, px = xs[i]
        y, py = ys[j]
        if x.last_offset < y.base_offset:
            i += 1
            continue
        if y.last_offset < x.base_offset:
            j += 1
            continue
        # overlapping offset ranges
        if x.epoch == y.epoch and (
            x.base_offset != y.base_offset
            or x.last_offset != y.last_offset
            or (x.crc is not None and y.crc is not None and x.crc != y.crc)
        ):
            return Clash(max(x.base_offset, y.base_offset), x.epoch, _side(a, x, px), _side(b, y, py))
        if x.last_offset <= y.last_offset:
            i += 1
        else:
            j += 1
    return None


def clashes(replicas: Sequence[Replica]) -> list[Clash]:
    """The first clash of every pair of replicas that has one."""
    out = []
    for i in range(len(replicas)):
        for j in range(i + 1, len(replicas)):
            c = first_clash(replicas[i], replicas[j])
            if c is not None:
                out.append(c)
    return out
