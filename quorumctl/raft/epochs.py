"""Leader-epoch histories and KIP-595 divergence, as Kafka computes them.

`EpochHistory` is LeaderEpochFileCache: `assign`, `truncate_from_end`,
`truncate_from_start` and `end_offset_for` follow its code line by line.
`LogView` is what KafkaMetadataLog adds on top (log start/end offsets,
snapshots): `end_offset_for_epoch`, `last_fetched_epoch`,
`validate_offset_and_epoch` (the leader's answer to a Fetch: valid, diverging
or snapshot) and `truncation_offset` (the follower's truncateToEndOffset).
`reconcile(follower, leader)` replays the Fetch exchange until the follower's
log is a prefix of the leader's: the offset it ends at is where they diverge.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
BOOTSTRAP_SNAPSHOT_ID = (0, 0)  # (end offset, epoch) of Snapshots.BOOTSTRAP_SNAPSHOT_ID


class EpochHistory:
    """Ordered (epoch, start offset) entries with LeaderEpochFileCache semantics."""

    def __init__(self, entries=()) -> None:
        self.entries: list[tuple[int, int]] = []
        for e, o in entries:
            self.entries.append((int(e), int(o)))

    def copy(self) -> "EpochHistory":
        return EpochHistory(self.entries)

    def __eq__(self, other):
        return isinstance(other, EpochHistory) and self.entries == other.entries

    def __repr__(self):
        return f"EpochHistory({self.entries})"

    def __len__(self):
        return len(self.entries)

    @property
    def latest_epoch(self) -> int | None:
        return self.entries[-1][0] if self.entries else None

    def epoch_at(self, offset: int) -> int | None:
        """The epoch of the entry covering `offset` (None before the first entry)."""
        starts = [o for _, o in self.entries]
        i = bisect.bisect_right(starts, offset) - 1
        return self.entries[i][0] if i >= 0 else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """LeaderEpochFileCache.assign: append when the epoch changes (or the same
        epoch starts earlier), first dropping entries that are not below the new one."""
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"invalid partition leader epoch entry ({epoch}, {start_offset})")
        if self.entries:
            le, lo = self.entries[-1]
            if not (epoch != le or start_offset < lo):
                return False
        # maybeTruncateNonMonotonicEntries: drop from the end while epoch >= new or start >= new
        while self.entries and (self.entries[-1][0] >= epoch or self.entries[-1][1] >= start_offset):
            self.entries.pop()
        self.entries.append((epoch, start_offset))
        return True

    def truncate_from_end(self, end_offset: int) -> list[tuple[int, int]]:
        """Drop entries whose start offset is >= end_offset (when the last one is)."""
        removed = []
        if end_offset >= 0 and self.entries and self.entries[-1][1] >= end_offset:
            while self.entries and self.entries[-1][1] >= end_offset:
                removed.append(self.entries.pop())
        return removed

    def truncate_from_start(self, start_offset: int) -> list[tuple[int, int]]:
        """Drop entries starting at or before start_offset, keeping the last of them
        moved to start at start_offset."""
        removed = []
        while self.entries and self.entries[0][1] <= start_offset:
            removed.append(self.entries.pop(0))
        if removed:
            self.entries.insert(0, (removed[-1][0], start_offset))
        return removed

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """LeaderEpochFileCache.endOffsetFor: (epoch, end offset), or (-1, -1)."""
        if requested_epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self.entries and self.entries[-1][0] == requested_epoch:
            return requested_epoch, log_end_offset
        higher = next(((e, o) for e, o in self.entries if e > requested_epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        floor = None
        for e, o in self.entries:
            if e <= requested_epoch:
                floor = (e, o)
            else:
                break
        if floor is None:
            return requested_epoch, higher[1]
        return floor[0], higher[1]


def load_history(checkpoint, batch_epochs, log_end: int) -> EpochHistory:
    """The history Kafka holds after loading a metadata log. KafkaMetadataLog
    opens it as an unclean shutdown from recovery point 0, so LogLoader starts
    from the checkpoint, then LogSegment.recover assigns each batch's epoch
    (only when it is above the latest one), then truncateFromEnd(log end)."""
    h = EpochHistory(checkpoint or ())
    for epoch, base in batch_epochs:
        latest = h.latest_epoch
        if epoch >= 0 and (latest is None or epoch > latest):
            h.assign(epoch, base)
    h.truncate_from_end(log_end)
    return h


def history_from_batches(batch_epochs) -> EpochHistory:
    """The history the batches alone imply (for cross-checking the checkpoint)."""
    return load_history((), batch_epochs, 1 << 62)


@dataclass
class LogView:
    """What the Raft layer of one replica sees: epochs, offsets, snapshots
    (snapshot ids as (end offset, epoch)). `boundaries` are the base offsets of
    the batches in the log (plus the end offset); truncation inside a batch
    removes the whole batch, so the log really ends at the batch's base."""

    epochs: EpochHistory
    log_start: int
    log_end: int
    snapshots: list[tuple[int, int]] = field(default_factory=list)
    boundaries: list[int] | None = None

    def copy(self) -> "LogView":
        return LogView(
            self.epochs.copy(),
            self.log_start,
            self.log_end,
            list(self.snapshots),
            None if self.boundaries is None else list(self.boundaries),
        )

    def _sorted_snapshots(self):
        # KafkaMetadataLog keeps a TreeMap of OffsetAndEpoch: ordered by epoch, then offset
        return sorted(self.snapshots, key=lambda s: (s[1], s[0]))

    @property
    def latest_snapshot(self) -> tuple[int, int] | None:
        s = self._sorted_snapshots()
        return s[-1] if s else None

    @property
    def earliest_snapshot(self) -> tuple[int, int] | None:
        s = self._sorted_snapshots()
        return s[0] if s else None

    @property
    def last_fetched_epoch(self) -> int:
        """KafkaMetadataLog.lastFetchedEpoch: the latest epoch in the history, else
        the latest snapshot's epoch when the log is empty at it, else 0."""
        if self.epochs.latest_epoch is not None:
            return self.epochs.latest_epoch
        snap = self.latest_snapshot
        if snap is not None:
            if snap[0] == self.log_start == self.log_end:
                return snap[1]
            raise ValueError(
                f"Log doesn't have a last fetch epoch and there is a snapshot {snap}; "
                f"expected its end offset to match the log's end offset ({self.log_end}) "
                f"and start offset ({self.log_start})"
            )
        return 0

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """KafkaMetadataLog.endOffsetForEpoch -> (offset, epoch)."""
        fe, fo = self.epochs.end_offset_for(epoch, self.log_end)
        found = None if fo == UNDEFINED_EPOCH_OFFSET else (fo, fe)
        earliest = self.earliest_snapshot
        if found is not None and earliest is not None and found[0] == earliest[0] and found[1] == epoch:
            return earliest
        if found is not None:
            return found
        return self.log_end, self.last_fetched_epoch

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> tuple[str, tuple[int, int]]:
        """ReplicatedLog.validateOffsetAndEpoch, on the leader: ("valid" | "diverging"
        | "snapshot", (offset, epoch))."""
        if self.log_start == 0 and offset == 0:
            return "valid", (0, 0)
        earliest, latest = self.earliest_snapshot, self.latest_snapshot  # both None or both set
        if (
            earliest is not None
            and latest is not None
            and (offset < self.log_start or (offset == self.log_start and epoch != earliest[1]) or epoch < earliest[1])
        ):
            return "snapshot", latest
        end = self.end_offset_for_epoch(epoch)
        if end[1] != epoch or end[0] < offset:
            return "diverging", end
        return "valid", (offset, epoch)

    def fetch_response(self, fetch_offset: int, last_fetched_epoch: int) -> tuple[str, tuple[int, int]]:
        """What the leader answers to Fetch(fetchOffset, lastFetchedEpoch)
        (KafkaRaftClient.handleFetchRequest: an empty follower gets the latest
        non-bootstrap snapshot straight away)."""
        latest = self.latest_snapshot
        if fetch_offset == 0 and latest is not None and latest != BOOTSTRAP_SNAPSHOT_ID:
            return "snapshot", latest
        return self.validate_offset_and_epoch(fetch_offset, last_fetched_epoch)

    def truncation_offset(self, diverging: tuple[int, int]) -> int:
        """ReplicatedLog.truncateToEndOffset, on the follower, for the leader's
        DivergingEpoch (end offset, epoch)."""
        end_offset, leader_epoch = diverging
        if leader_epoch == 0:
            return min(end_offset, self.log_end)
        local = self.end_offset_for_epoch(leader_epoch)
        if local[1] == leader_epoch:
            return min(local[0], end_offset)
        return local[0]

    def aligned(self, offset: int) -> int:
        """Where the log really ends after truncateTo(offset): the base of the batch
        that contains `offset` (Kafka cuts whole batches), capped at the log end."""
        if offset >= self.log_end:
            return self.log_end
        if self.boundaries is None:
            return offset
        i = bisect.bisect_right(self.boundaries, offset) - 1
        return self.boundaries[i] if i >= 0 else self.log_start

    def truncate_to(self, offset: int) -> int:
        """UnifiedLog.truncateTo on this view (whole batches; a target below the
        log start empties the log and restarts it at the target). Returns the new
        log end offset."""
        if offset < self.log_start:
            self.log_start = self.log_end = offset
            self.epochs = EpochHistory()
            self.boundaries = [] if self.boundaries is not None else None
            return offset
        new_end = self.aligned(offset)
        self.log_end = min(self.log_end, new_end)
        # as Kafka: epochs from the target on (an entry of a cut batch that starts
        # below the target stays until the next restart truncates it)
        self.epochs.truncate_from_end(offset)
        if self.boundaries is not None:
            self.boundaries = [b for b in self.boundaries if b < self.log_end]
        return self.log_end


@dataclass
class Round:
    fetch_offset: int
    last_fetched_epoch: int
    answer: str  # valid | diverging | snapshot
    answer_id: tuple[int, int]  # (offset, epoch) the leader returned
    truncate_to: int | None = None  # the follower's truncateToEndOffset result
    new_end: int | None = None  # the follower's log end after cutting whole batches


@dataclass
class Divergence:
    """Result of replaying the Fetch exchange of `follower` against `leader`.

    kind: "none" (the follower's log is a prefix of the leader's), "diverging"
    (it must truncate, to `truncate_to`; its log then ends at `new_end`, batch
    aligned), "snapshot" (it is behind the leader's log start and must fetch
    the leader's snapshot `snapshot`), or "stuck" (Kafka would loop: the
    leader keeps asking for a truncation that does not shorten the log)."""

    kind: str
    truncate_to: int | None
    new_end: int | None
    snapshot: tuple[int, int] | None
    first_diverging: tuple[int, int] | None  # the leader's first DivergingEpoch (offset, epoch)
    rounds: list[Round]


def reconcile(follower: LogView, leader: LogView, max_rounds: int = 10000) -> Divergence:
    """Replay Fetch requests from `follower` to `leader` (KIP-595) until the
    leader accepts the follower's position. The follower is not modified."""
    f = follower.copy()
    rounds: list[Round] = []
    first = None
    truncated = False
    for _ in range(max_rounds):
        fo, fe = f.log_end, f.last_fetched_epoch
        kind, oe = leader.fetch_response(fo, fe)
        r = Round(fo, fe, kind, oe)
        rounds.append(r)
        if kind == "valid":
            if truncated:
                return Divergence("diverging", rounds[-2].truncate_to, f.log_end, None, first, rounds)
            return Divergence("none", None, None, None, None, rounds)
        if kind == "snapshot":
            return Divergence(
                "snapshot",
                rounds[-2].truncate_to if truncated else None,
                f.log_end if truncated else None,
                oe,
                first,
                rounds,
            )
        if first is None:
            first = oe
        target = f.truncation_offset(oe)
        r.truncate_to = target
        before = f.log_end
        r.new_end = f.truncate_to(target)
        if r.new_end >= before:
            return Divergence("stuck", target, r.new_end, None, first, rounds)
        truncated = True
    return Divergence("stuck", None, f.log_end, None, first, rounds)


def election_key(view: LogView) -> tuple[int, int]:
    """Raft's "at least as up to date": compare (last epoch, end offset), as
    OffsetAndEpoch.compareTo does with (log end, lastFetchedEpoch)."""
    return view.last_fetched_epoch, view.log_end
