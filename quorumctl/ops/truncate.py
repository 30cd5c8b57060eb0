"""Offline truncation of a replica's metadata log, as Kafka's Fetch path would do it.

Planning (read-only) decides the target offset three ways: from a healthier
replica (`reference`: the KIP-595 Fetch exchange, `epochs.reconcile`), from a
leader's DivergingEpoch (epoch + end offset, `LogView.truncation_offset`), or an
explicit offset. Kafka's UnifiedLog.truncateTo then dictates the changes: whole
batches only (an offset inside a batch removes the batch), segments above the
target removed, the segment holding it cut at a batch boundary with its
offset/time/transaction indexes cut to match, producer-state snapshots above
the new end removed, leader-epoch-checkpoint truncated from the end. Raft
snapshots ending above the new end are removed too (Kafka would otherwise
reload the log from them at start-up); cutting below the latest snapshot needs
`force`.

Applying is crash-safe as a whole: the new partition directory is built in the
backup run directory (unchanged files hard-linked, changed ones written and
fsynced), then swapped with the live one in one atomic renameat2 exchange. The
old directory, left in the run directory, is pruned to exactly the files that
were removed or replaced: that is the backup. A crash before the exchange
leaves the old state, after it the new one.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from ..errors import ExitStatus, InputError, Refused
from ..raft import epochs
from ..logdir import statefiles as state_files
from . import fsutil
from .backups import (
    check_backup_root,
    copy_owner,
    default_backup_root,
    real_partition_dir,
    replace_partition_dir,
    unfinished_runs,
)
from ..logdir import indexes
from ..logdir import producer_state
from ..logdir import segments
from ..raft.replica import Replica


class TruncateError(InputError):
    """A truncation that cannot be planned or carried out as asked.

    A library error; it subclasses InputError only so the CLI reports it as every
    bad-input error: one line on stderr, exit 2."""


@dataclass
class IndexChange:
    path: str
    kind: str  # index | timeindex | txnindex
    entries_before: int
    entries_after: int
    new_bytes: bytes = field(repr=False, default=b"")


@dataclass
class Plan:
    replica: Replica
    mode: str  # reference | diverging-epoch | to-offset
    reason: str
    target: int  # the offset handed to truncateTo
    new_end: int  # the log end offset afterwards (batch aligned)
    divergence: dict | None = None
    removed_segments: list[segments.SegmentFiles] = field(default_factory=list)
    cut_segment: dict | None = None  # base, log, position, old_size, batches dropped, offsets
    index_changes: list[IndexChange] = field(default_factory=list)
    removed_snapshots: list[segments.SnapshotFile] = field(default_factory=list)
    removed_producer_snapshots: list[tuple[int, str]] = field(default_factory=list)
    epochs_before: list = field(default_factory=list)
    epochs_after: list = field(default_factory=list)
    rewrite_checkpoint: bool = False
    needs_force: str | None = None
    refusal: str | None = None

    @property
    def changes(self) -> bool:
        return bool(
            self.removed_segments
            or self.cut_segment
            or self.removed_snapshots
            or self.removed_producer_snapshots
            or self.rewrite_checkpoint
            or self.index_changes
        )

    @property
    def last_epoch_after(self) -> int | None:
        return self.epochs_after[-1][0] if self.epochs_after else None

    def removed_paths(self) -> list[str]:
        out = []
        for seg in self.removed_segments:
            out.extend(seg.paths())
        out.extend(s.path for s in self.removed_snapshots)
        out.extend(p for _, p in self.removed_producer_snapshots)
        return out

    def replaced_paths(self) -> list[str]:
        out = []
        if self.cut_segment:
            out.append(self.cut_segment["log"])
        out.extend(c.path for c in self.index_changes)
        if self.rewrite_checkpoint:
            p = os.path.join(self.replica.partition_dir, state_files.EPOCH_CHECKPOINT)
            if os.path.exists(p):
                out.append(p)
        return out

    def to_json(self) -> dict:
        r = self.replica
        return {
            "partition_dir": r.partition_dir,
            "replica": r.label,
            "mode": self.mode,
            "reason": self.reason,
            "divergence": self.divergence,
            "target_offset": self.target,
            "log_end_offset_before": r.log_end,
            "log_end_offset_after": self.new_end,
            "last_epoch_before": r.last_epoch,
            "last_epoch_after": self.last_epoch_after,
            "removed_segments": [{"base_offset": s.base_offset, "files": s.paths()} for s in self.removed_segments],
            "cut_segment": self.cut_segment,
            "index_changes": [
                {"file": c.path, "kind": c.kind, "entries_before": c.entries_before, "entries_after": c.entries_after}
                for c in self.index_changes
            ],
            "removed_snapshots": [
                {"end_offset": s.end_offset, "epoch": s.epoch, "file": s.path} for s in self.removed_snapshots
            ],
            "removed_producer_snapshots": [{"offset": o, "file": p} for o, p in self.removed_producer_snapshots],
            "epochs_before": [list(e) for e in self.epochs_before],
            "epochs_after": [list(e) for e in self.epochs_after],
            "rewrite_leader_epoch_checkpoint": self.rewrite_checkpoint,
            "needs_force": self.needs_force,
            "refused": self.refusal,
            "changes": self.changes,
        }


# -- choosing the target ------------------------------------------------------------


def reference_caution(r: Replica, ref: Replica) -> str | None:
    """Why truncating `r` to `ref` needs --force: `r` would win an election against it."""
    mine, theirs = epochs.election_key(r.view()), epochs.election_key(ref.view())
    if mine > theirs:
        return (
            f"this replica (last epoch {mine[0]}, end offset {mine[1]}) is more up to date than {ref.label} "
            f"(last epoch {theirs[0]}, end offset {theirs[1]}) by Raft's rule: truncating it to the reference "
            "discards entries that may be committed; that needs --force"
        )
    return None


def target_from_reference(r: Replica, ref: Replica) -> tuple[int | None, str, dict, str | None]:
    """(target, reason, divergence json, refusal) from the Fetch exchange with `ref`,
    and below the first log-matching clash with it (raft/logmatch.py), which
    that exchange, comparing epochs only, cannot see."""
    from ..raft.logmatch import first_clash
    from ..raft.replica import divergence_json

    d = epochs.reconcile(r.view(), ref.view())
    clash = first_clash(ref, r)
    dj = divergence_json(r, d, clash)
    below = None
    if clash is not None:
        below = (
            f"its log clashes with {ref.label}'s (log matching broken): {clash.what()}; cut below the clash, "
            f"at its batch's base offset {clash.b.base_offset}"
        )
    if d.kind == "none":
        if clash is not None and below is not None:  # both, or neither
            return clash.b.base_offset, below, dj, None
        return (
            None,
            (
                f"the log (end offset {r.log_end}, last epoch {r.last_epoch}) is already a prefix of "
                f"{ref.label}'s (end offset {ref.log_end}, last epoch {ref.last_epoch})"
            ),
            dj,
            None,
        )
    if d.kind == "snapshot":
        snap = d.snapshot
        assert snap is not None  # reconcile's "snapshot" names the leader's snapshot
        return (
            None,
            "",
            dj,
            (
                f"{ref.label} would answer with its snapshot {snap[0]}-{snap[1]}: this replica is behind "
                f"the reference's log start offset {ref.log_start} and must fetch that snapshot, which an offline "
                f"truncation cannot do. Stop the node and move its {os.path.basename(r.partition_dir)} away so it "
                "re-replicates from the leader."
            ),
        )
    if d.kind == "stuck":
        return (
            None,
            "",
            dj,
            (
                f"the Fetch exchange with {ref.label} does not converge (the leader keeps asking "
                f"for a truncation to {d.truncate_to}); compare the two logs by hand"
            ),
        )
    de, new_end = d.first_diverging, d.new_end
    assert de is not None and new_end is not None  # "diverging": reconcile sets both
    reason = (
        f"diverges from {ref.label}: its Fetch answer is DivergingEpoch(epoch={de[1]}, endOffset={de[0]})"
        + (f" after {len(d.rounds) - 1} round(s)" if len(d.rounds) > 2 else "")
        + f"; truncateToEndOffset gives {d.truncate_to}"
    )
    if clash is not None and below is not None and clash.b.base_offset < new_end:
        return clash.b.base_offset, f"{reason}; {below}", dj, None
    return new_end, reason, dj, None


def target_from_diverging_epoch(r: Replica, epoch: int, end_offset: int) -> tuple[int, str]:
    if epoch < 0 or end_offset < 0:
        raise TruncateError(f"--diverging-epoch and --end-offset must not be negative (got {epoch}, {end_offset})")
    view = r.view()
    local = view.end_offset_for_epoch(epoch) if epoch != 0 else None
    target = view.truncation_offset((end_offset, epoch))
    if local is None:  # epoch 0
        how = f"epoch 0: min(end offset {end_offset}, log end {r.log_end})"
    elif local[1] == epoch:
        how = f"the local end of epoch {epoch} is {local[0]}: min({local[0]}, {end_offset})"
    else:
        how = f"epoch {epoch} is not in the local history; the local answer is epoch {local[1]} ending at {local[0]}"
    return target, f"DivergingEpoch(epoch={epoch}, endOffset={end_offset}): {how} = {target}"


# -- the plan -----------------------------------------------------------------------


def plan_truncation(
    r: Replica,
    *,
    mode: str,
    target: int | None,
    reason: str,
    divergence: dict | None = None,
    force: bool = False,
    refusal: str | None = None,
    caution: str | None = None,
    committed: dict | None = None,
) -> Plan:
    p = Plan(
        r,
        mode,
        reason,
        target if target is not None else r.log_end,
        r.log_end,
        divergence,
        epochs_before=list(r.history.entries),
        epochs_after=list(r.history.entries),
    )
    if refusal:
        p.refusal = refusal
        return p
    if r.scan.problem:
        p.refusal = (
            f"{r.partition_dir}: the log is damaged ({r.scan.problem}); Kafka repairs that at start-up. "
            "Run `quorumctl verify` and let Kafka recover the log (or repair it) before truncating"
        )
        return p
    latest = r.latest_snapshot
    if latest is not None and r.replaced_by_snapshot:
        p.refusal = (
            f"{r.partition_dir}: its latest snapshot {os.path.basename(latest.path)} is ahead of "
            "the log; Kafka replaces the whole log by it at start-up, so there is nothing to truncate offline"
        )
        return p
    if r.files.unknown:
        p.refusal = (
            f"{r.partition_dir}: unexpected entries {', '.join(map(os.path.basename, r.files.unknown))}; "
            "refusing to rebuild a partition directory with contents quorumctl does not know"
        )
        return p
    if target is None:
        return p
    if target < 0:
        raise TruncateError(f"the target offset must not be negative (got {target})")
    if target < r.log_start:
        p.refusal = (
            f"offset {target} is below the log start offset {r.log_start}: Kafka would empty the log and "
            "restart it there, which needs a snapshot at that offset; let the node re-replicate instead"
        )
        return p
    p.target = target
    if target >= r.log_end:
        p.reason += f"; offset {target} is at or beyond the log end offset {r.log_end}: nothing to truncate"
        return p
    p.new_end = new_end = r.view().aligned(target)
    h = r.history.copy()
    h.truncate_from_end(new_end)
    p.epochs_after = list(h.entries)
    p.rewrite_checkpoint = (r.checkpoint is None and bool(h.entries)) or (
        r.checkpoint is not None and list(r.checkpoint) != p.epochs_after
    )

    for sc in r.scan.segments:
        if sc.files.base_offset > target:
            p.removed_segments.append(sc.files)
    keep = [sc for sc in r.scan.segments if sc.files.base_offset <= target]
    cut = keep[-1]
    dropped = [b for b in cut.batches if b.next_offset > new_end]
    kept = [b for b in cut.batches if b.next_offset <= new_end]
    position = kept[-1].position + kept[-1].size if kept else 0
    if dropped:
        p.cut_segment = {
            "base_offset": cut.files.base_offset,
            "log": cut.files.log,
            "position": position,
            "bytes_before": cut.file_size,
            "batches_dropped": len(dropped),
            "offsets_dropped": [dropped[0].base_offset, dropped[-1].last_offset],
            "target_inside_batch": (
                next(([b.base_offset, b.last_offset] for b in dropped if b.base_offset < target <= b.last_offset), None)
            ),
        }
        p.index_changes = _index_changes(cut, kept)
    latest = r.latest_snapshot
    for s in r.files.snapshots:
        if s.end_offset > new_end:
            p.removed_snapshots.append(s)
    if p.removed_snapshots and latest is not None and latest.end_offset > new_end:
        p.needs_force = (
            f"the new log end offset {new_end} is below the latest snapshot's end offset "
            f"{latest.end_offset} ({os.path.basename(latest.path)}): offsets below a snapshot were "
            "committed by the quorum; cutting them and removing the snapshot needs --force"
        )
    for off, path in r.files.producer_snapshots:
        if off > new_end:
            p.removed_producer_snapshots.append((off, path))
    if committed is not None:
        # several references: what they prove about the entries this truncation drops
        ce, uf = committed["committed_end_offset"], committed["uncommitted_from_offset"]
        if new_end < ce and not p.needs_force:
            p.needs_force = (
                f"offsets {new_end}..{ce - 1} are committed (held by a majority of the voters): "
                "cutting committed entries needs --force"
            )
        elif new_end >= uf:
            p.reason += (
                f"; offsets {new_end}..{r.log_end - 1} are provably uncommitted (too few voters can "
                "hold them to make a majority)"
            )
            caution = None
        elif caution:
            caution += (
                f" (the references prove offsets {uf}..{r.log_end - 1} uncommitted, not {new_end}..{uf - 1})"
                if uf < r.log_end
                else " (the references do not prove the entries it drops uncommitted)"
            )
    if caution:
        p.needs_force = caution + (f"; also {p.needs_force}" if p.needs_force else "")
    if p.needs_force and not force:
        p.refusal = p.needs_force
    return p


def _index_changes(cut: segments.SegmentScan, kept: list[segments.BatchInfo]) -> list[IndexChange]:
    """The cut segment's indexes as LogSegment.truncateTo leaves them: entries
    below the new end kept, the rest dropped (an index that does not read
    cleanly is rebuilt for the kept batches, as LogSegment.recover would)."""
    base = cut.files.base_offset
    end = kept[-1].next_offset if kept else base
    cut_pos = kept[-1].position + kept[-1].size if kept else 0
    rebuilt = None
    out = []
    for kind, path in (("index", cut.files.index), ("timeindex", cut.files.timeindex)):
        if not path:
            continue
        time = kind == "timeindex"
        before, clean = _read_index(path, base, time)
        if not clean:
            rebuilt = rebuilt or indexes.build_indexes(kept, base)
            after = rebuilt[time]
        elif time:
            after = [(t, o) for t, o in before if o < end]
        else:
            after = [(o, pos) for o, pos in before if o < end and pos < cut_pos]
        new_bytes = indexes.time_index_bytes(after, base) if time else indexes.offset_index_bytes(after, base)
        out.append(IndexChange(path, kind, len(before), len(after), new_bytes))
    if cut.files.txnindex:
        entries = producer_state.read_txn_index(cut.files.txnindex)
        keep = [e for e in entries if e.last_offset < end]
        out.append(
            IndexChange(cut.files.txnindex, "txnindex", len(entries), len(keep), producer_state.txn_index_bytes(keep))
        )
    return out


def _read_index(path: str, base: int, time: bool) -> tuple[list[tuple[int, int]], bool]:
    """(entries, clean): an index's entries up to its logical end (indexes.py's
    rule), stopping at the first that does not increase; not clean when one
    does not or when the size is not a whole number of entries."""
    scan = indexes.IndexScan(path, indexes.TIME_ENTRY_SIZE if time else indexes.OFFSET_ENTRY_SIZE, 0)
    it = indexes.iter_time_index(path, base, scan) if time else indexes.iter_offset_index(path, base, scan)
    out: list[tuple[int, int]] = []
    with contextlib.closing(it):
        for a, b in it:
            if time:  # (timestamp, offset): neither goes backwards
                bad = bool(out) and (a < out[-1][0] or b < out[-1][1])
            else:  # (offset, position): at or above the base, strictly increasing
                bad = a < base or b < 0 or (bool(out) and (a <= out[-1][0] or b <= out[-1][1]))
            if bad:
                return out, False
            out.append((a, b))
    return out, not scan.remainder


# -- applying -----------------------------------------------------------------------


def apply_plan(p: Plan, backup_root: str) -> dict:
    """Carry out `p` crash-safely (the caller holds the log dir lock). Returns the report."""
    r = p.replica
    live = real_partition_dir(r.partition_dir)  # the symlink itself is left as it is
    log_dir = r.log_dir
    if p.refusal:
        raise Refused(p.refusal)
    if not p.changes:
        return {"applied": False, "backup_dir": None, "message": "nothing to change"}
    check_backup_root(backup_root, log_dir, live)

    def here(path: str) -> str:  # the plan names files through the partition dir as given (maybe a symlink)
        return os.path.join(live, os.path.basename(path))

    removed = {here(x) for x in p.removed_paths()}
    replaced = {here(c.path): c.new_bytes for c in p.index_changes}
    cp_path = os.path.join(live, state_files.EPOCH_CHECKPOINT)
    if p.rewrite_checkpoint:
        replaced[cp_path] = state_files.epoch_checkpoint_text(p.epochs_after)
    cut_log = here(p.cut_segment["log"]) if p.cut_segment else None
    keep = {os.path.basename(x) for x in removed} | {os.path.basename(x) for x in p.replaced_paths()}
    return replace_partition_dir(
        live,
        backup_root,
        "",
        "plan",
        p.to_json(),
        lambda staging, live_stat: _build(p, live, staging, live_stat, removed, replaced, cut_log, cp_path),
        keep,
        "truncation",
        {"log_end_offset": p.new_end},
    )


def _build(p: Plan, live: str, staging: str, live_stat, removed: set, replaced: dict, cut_log, cp_path) -> None:
    """Fill `staging` with the new partition directory: unchanged files hard-linked,
    the cut segment, the new indexes and checkpoint written and fsynced."""
    copy_owner(live_stat, staging)
    for name in sorted(os.listdir(live)):
        src = os.path.join(live, name)
        dst = os.path.join(staging, name)
        if src in removed:
            continue
        st = os.stat(src)
        if src == cut_log and p.cut_segment is not None:  # cut_log is set only with cut_segment
            fsutil.step(f"write the cut segment {name}")
            fsutil.copy_prefix(src, dst, p.cut_segment["position"])
            copy_owner(st, dst)
        elif src in replaced:
            fsutil.step(f"write the new {name}")
            fsutil.write_synced(dst, replaced.pop(src))
            copy_owner(st, dst)
        else:
            os.link(src, dst)
    if cp_path in replaced:  # the checkpoint did not exist before
        fsutil.step(f"write the new {state_files.EPOCH_CHECKPOINT}")
        fsutil.write_synced(os.path.join(staging, state_files.EPOCH_CHECKPOINT), replaced.pop(cp_path))
        copy_owner(live_stat, os.path.join(staging, state_files.EPOCH_CHECKPOINT))
    fsutil.fsync_dir(staging)


# -- the whole job, as `quorumctl truncate` runs it ------------------------------------


@dataclass
class Result:
    """What a truncate run planned and did; the CLI renders it."""

    plan: Plan
    plan_json: dict
    report: dict | None  # apply_plan's report (with "verify"), None on a dry run or a refusal
    log_dir: str
    partition_dir: str
    backup_root: str
    unfinished: list[str]  # earlier runs whose backups say they did not finish
    lock_holder: int | None  # on a dry run: the process holding the log dir's .lock, if any
    dry_run: bool = True

    def to_json(self) -> dict:
        """`truncate -o json`."""
        return {
            "plan": self.plan_json,
            "applied": self.report,
            "dry_run": self.dry_run,
            "unfinished_backups": self.unfinished,
        }

    @property
    def exit_code(self) -> ExitStatus:
        """PROBLEMS when refused or when the result does not verify, else OK."""
        return ExitStatus.of(
            self.plan.refusal
            or (self.report is not None and self.report.get("verify") and not self.report["verify"]["ok"])
        )


def run(
    log_dir: str,
    *,
    reference: str | list[str] | None = None,
    diverging_epoch: int | None = None,
    end_offset: int | None = None,
    to_offset: int | None = None,
    apply: bool = False,
    force: bool = False,
    backup_dir: str | None = None,
    static_voters: list[int] | None = None,
    static_source: str = "controller.quorum.voters",
) -> Result:
    """Plan a truncation of `log_dir` by one of the three modes (reference
    replicas, a leader's DivergingEpoch, an explicit offset) and, with `apply`,
    carry it out under Kafka's .lock and verify the result.

    With several references the most up to date of them (Raft's rule) is the one
    the Fetch exchange runs against, and all of them with this replica decide which
    entries are committed (raft/committed.py): dropping entries they prove
    uncommitted needs no `force` even from the more up-to-date replica; dropping
    entries they prove committed does."""
    from ..raft.replica import load_replica, resolve_partition_dir

    refs = [reference] if isinstance(reference, str) else list(reference or [])
    modes = [
        m
        for m, on in (
            ("--reference", bool(refs)),
            ("--diverging-epoch/--end-offset", diverging_epoch is not None or end_offset is not None),
            ("--to-offset", to_offset is not None),
        )
        if on
    ]
    if len(modes) != 1:
        raise TruncateError(
            "give exactly one of --reference OTHER_DIR, --diverging-epoch E --end-offset O, "
            f"--to-offset O (got {', '.join(modes) or 'none'})"
        )
    if (diverging_epoch is None) != (end_offset is None):
        raise TruncateError("--diverging-epoch and --end-offset go together")
    ld, _pdir = resolve_partition_dir(log_dir)
    seen = {os.path.realpath(_pdir): log_dir}
    for path in refs:  # the same replica twice is a mistake, not a reference (symlinks included)
        key = os.path.realpath(resolve_partition_dir(path)[1])
        if key in seen:
            raise TruncateError(f"{path} is the same log dir as {seen[key]} ({key}): give another replica's dir")
        seen[key] = path
    backup_root = backup_dir or default_backup_root(ld)
    unfinished = unfinished_runs(backup_root)
    lock = fsutil.LogDirLock(ld).acquire() if apply else None
    try:
        r = load_replica(log_dir)
        refusal = caution = divergence = committed = None
        if refs:
            loaded = []
            for path in refs:
                ref = load_replica(path)
                if ref.meta and r.meta and ref.meta.get("cluster.id") != r.meta.get("cluster.id"):
                    raise TruncateError(
                        f"{path} belongs to cluster {ref.meta.get('cluster.id')}, "
                        f"{log_dir} to {r.meta.get('cluster.id')}"
                    )
                loaded.append(ref)
            ref = _most_up_to_date(loaded)
            target, reason, divergence, refusal = target_from_reference(r, ref)
            caution = reference_caution(r, ref)
            if len(loaded) > 1:
                from ..raft.committed import classify

                committed = classify([r] + loaded, static_voters, static_source)
                reason = f"{ref.label} is the most up to date of the references; " + reason if reason else reason
            mode = "reference"
        elif diverging_epoch is not None and end_offset is not None:  # given together (checked above)
            target, reason = target_from_diverging_epoch(r, diverging_epoch, end_offset)
            mode = "diverging-epoch"
        else:
            assert to_offset is not None  # exactly one mode is given (checked above)
            if to_offset < 0:
                raise TruncateError(f"--to-offset must not be negative (got {to_offset})")
            target, reason, mode = to_offset, f"explicit offset {to_offset}", "to-offset"
        plan = plan_truncation(
            r,
            mode=mode,
            target=target,
            reason=reason,
            divergence=divergence,
            force=force,
            refusal=refusal,
            caution=caution,
            committed=committed["replicas"][0] if committed else None,
        )
        plan_json = plan.to_json()
        if committed is not None:
            plan_json["committed"] = committed
        report = None
        if apply and not plan.refusal:
            report = apply_plan(plan, backup_root)
            report["verify"] = _verify(r.partition_dir)
    finally:
        if lock is not None:
            lock.release()
    holder = None if apply else fsutil.lock_holder(ld)
    return Result(plan, plan_json, report, ld, r.partition_dir, backup_root, unfinished, holder or None, not apply)


def _most_up_to_date(replicas: list[Replica]) -> Replica:
    """The replica that would win an election among these (the first of a tie)."""
    return max(replicas, key=lambda x: x.election_key)


def _verify(partition_dir: str) -> dict:
    """`quorumctl verify` on the result."""
    from .verify import verify_paths

    problems = [p.line() for rep in verify_paths([partition_dir]) for p in rep.problems]
    return {"ok": not problems, "problems": problems}
