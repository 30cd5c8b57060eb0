"""Rebuild a working KRaft quorum from the surviving controller(s) after the
majority of voters is permanently lost (etcd's --force-new-cluster, Consul's
peers.json; Kafka ships nothing).

Why the changes are what they are (Kafka 4.1's Raft layer, KIP-853):

- At start-up `KafkaRaftClient.initialize` reads the latest snapshot and then
  the *whole* log, committed or not (`KRaftControlRecordStateMachine.updateState`
  reads with `Isolation.UNCOMMITTED`), and takes the last `VotersRecord` it
  meets as the voter set. So for a dynamic quorum (kraft.version 1) one control
  batch holding a `VotersRecord` with only the survivor, appended at the log
  end in the last epoch, makes the survivor the only voter at its next start.
- `QuorumState.initialize` then starts it unattached, resigned or follower
  (a leader outside the voter set has no endpoints: unattached), and
  `KafkaRaftClient.initialize` sends an only voter straight to
  prospective -> candidate -> leader in a new epoch. Its LeaderChange commits
  the appended VotersRecord with everything before it.
- quorum-state is rewritten to "no leader, no vote" in the epoch it already
  had: a clean unattached start whatever the survivor was doing when the
  others died (a vote for a lost node is meaningless now).
- For a static quorum (kraft.version 0) the voter set is
  `controller.quorum.voters` in every node's configuration: the storage change
  is only quorum-state; the operator edits the configs (printed).

Applying follows `truncate`: Kafka's lock held by the caller, the new
partition directory built beside the old one (unchanged files hard-linked,
changed files written and fsynced), swapped in with one renameat2 exchange,
the replaced files kept as the backup.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

from ..errors import InputError
from ..records import metadata as md
from . import files as state_files
from . import fsutil
from .replica import Replica, compare
from .truncate import Refused, _copy_owner, check_backup_root, real_partition_dir, replace_partition_dir


class RecoverError(InputError):
    """A recovery that cannot be planned as asked (log dirs, survivor, lost voters).

    A library error; it subclasses InputError only so the CLI reports it as every
    bad-input error: one line on stderr, exit 2."""


NO_DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAA"


@dataclass
class Change:
    path: str            # in the live partition directory
    what: str            # one line for the plan
    new_bytes: bytes = field(repr=False, default=b"")
    append_at: int | None = None   # a segment: copy the first append_at bytes, then new_bytes


@dataclass
class RecoveryPlan:
    survivor: Replica
    others: list[Replica]
    mode: str                         # dynamic | static
    voters_before: list[int]
    lost: list[int]
    changes: list[Change] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)       # what the operator does afterwards
    risks: list[str] = field(default_factory=list)
    refusal: str | None = None
    new_end: int | None = None

    def to_json(self) -> dict:
        r = self.survivor
        return {
            "survivor": {"node_id": r.node_id, "log_dir": r.log_dir, "partition_dir": r.partition_dir,
                         "last_epoch": r.last_epoch, "log_end_offset": r.log_end,
                         "directory_id": r.meta.get("directory.id") if r.meta else None},
            "other_replicas": [{"node_id": o.node_id, "log_dir": o.log_dir, "last_epoch": o.last_epoch,
                                "log_end_offset": o.log_end} for o in self.others],
            "quorum": self.mode,
            "voters_before": self.voters_before,
            "voters_after": [r.node_id],
            "lost_voters": self.lost,
            "changes": [{"file": c.path, "change": c.what} for c in self.changes],
            "log_end_offset_after": self.new_end,
            "risks": self.risks,
            "next_steps": self.steps,
            "refused": self.refusal,
        }


def parse_ids(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(int(part))
        except ValueError:
            raise RecoverError(f"--lost-voters: {part!r} is not a node id (expected ID[,ID...])") from None
    if not out:
        raise RecoverError("--lost-voters: no node id given (expected ID[,ID...])")
    return sorted(set(out))


def quorum_state_unattached(epoch: int, old: dict | None, voters: list[int]) -> bytes:
    """FileQuorumStateStore's line: no leader, no vote, in `epoch`, in the file's own
    data_version. Version 0 (Kafka before 3.9) also lists the voters, and Kafka
    refuses to start when they differ from controller.quorum.voters
    (QuorumState.initialize), so it lists the new voter set."""
    if old and old.get("data_version") == 0:
        doc = {"clusterId": old.get("clusterId", ""), "leaderId": -1, "leaderEpoch": epoch, "votedId": -1,
               "appliedOffset": old.get("appliedOffset", 0), "currentVoters": [{"voterId": v} for v in voters],
               "data_version": 0}
    else:
        doc = {"leaderId": -1, "leaderEpoch": epoch, "votedId": -1, "votedDirectoryId": NO_DIRECTORY,
               "data_version": 1}
    return json.dumps(doc, separators=(",", ":")).encode()


def plan_recovery(replicas: list[Replica], lost: list[int], static_voters: dict[int, str] | None = None,
                  survivor_id: int | None = None, now_ms: int | None = None) -> RecoveryPlan:
    """replicas: the surviving controllers' log dirs (loaded); lost: the voters the
    operator declares permanently gone; static_voters: controller.quorum.voters of
    the survivor's configuration (a static quorum)."""
    if not replicas:
        raise RecoverError("give the surviving controller's log dir")
    clusters = sorted({r.meta.get("cluster.id") for r in replicas if r.meta})
    if len(clusters) > 1:
        raise RecoverError(f"the log dirs belong to different clusters: {', '.join(map(str, clusters))}")
    ids = [r.node_id for r in replicas]
    if None in ids:
        bad = replicas[ids.index(None)]
        raise RecoverError(f"{bad.log_dir}: no node id (meta.properties missing or unreadable)")
    if len(set(ids)) != len(ids):
        raise RecoverError(f"the same node id was given twice: {ids}")

    cmp = compare(replicas) if len(replicas) > 1 else None
    best = replicas[cmp["winner_index"]] if cmp else replicas[0]
    survivor = best
    refusal = None
    if survivor_id is not None:
        chosen = [r for r in replicas if r.node_id == survivor_id]
        if not chosen:
            raise RecoverError(f"--survivor {survivor_id}: not among the log dirs given (nodes {ids})")
        survivor = chosen[0]
        if survivor is not best and (survivor.last_epoch, survivor.log_end) < (best.last_epoch, best.log_end):
            refusal = (f"node {survivor.node_id} (last epoch {survivor.last_epoch}, log end offset "
                       f"{survivor.log_end}) is not the most up-to-date replica given: node {best.node_id} "
                       f"(last epoch {best.last_epoch}, log end offset {best.log_end}) wins an election against "
                       "it; recovering from it would discard entries that may be committed")

    dynamic = survivor.voters_record is not None
    if dynamic:
        voters = sorted(v["voterId"] for v in survivor.voters_record)
        mode = "dynamic"
    else:
        if static_voters is None and survivor.voters and survivor.voters["source"] == "quorum-state":
            # quorum-state data_version 0 (kraft.version 0, any Kafka) lists the static voters; addresses unknown
            static_voters = {i: "<host:port>" for i in survivor.voters["ids"]}
        if static_voters is None:
            raise RecoverError(f"{survivor.log_dir}: the log holds no VotersRecord (a static quorum, kraft.version 0): "
                             "give the survivor's server.properties with --config (its controller.quorum.voters)")
        voters = sorted(static_voters)
        mode = "static"
    others = [r for r in replicas if r is not survivor]
    plan = RecoveryPlan(survivor, others, mode, voters, lost, refusal=refusal)

    def refuse(msg):
        if plan.refusal is None:
            plan.refusal = msg
    if survivor.node_id not in voters:
        refuse(f"node {survivor.node_id} is not a voter (voters {voters}): only a voter's log can be trusted to "
               "hold every committed entry")
    not_voters = [i for i in lost if i not in voters]
    if not_voters:
        refuse(f"--lost-voters names {not_voters}, which are not voters (voters {voters})")
    given = set(ids)
    lost_but_given = sorted(given & set(lost))
    if lost_but_given:
        refuse(f"--lost-voters names {lost_but_given}, whose log dirs were given as survivors")
    undeclared = [v for v in voters if v not in given and v not in lost]
    if undeclared:
        refuse(f"voter(s) {undeclared} are neither given (log dir) nor declared lost (--lost-voters): every voter "
               "other than the survivors must be declared permanently lost by the operator")
    alive = [v for v in voters if v in given]
    if len(alive) > len(voters) // 2:
        refuse(f"the quorum still has a majority: {len(alive)} of {len(voters)} voters ({alive}) survive; start "
               "them and let Raft elect a leader, then remove the lost voters with remove-controller")
    if survivor.problems:
        refuse(f"{survivor.partition_dir} has problems ({survivor.problems[0]}); check it with `quorumctl state` "
               "and `quorumctl verify` first")
    if survivor.replaced_by_snapshot:
        refuse(f"{survivor.partition_dir}: the log ends before its latest snapshot; start the node once so Kafka "
               "restarts the log at the snapshot, stop it, then recover")

    epoch = survivor.last_epoch
    qs = survivor.quorum_state or {}
    qs_epoch = max(epoch, qs.get("leaderEpoch", 0) if isinstance(qs.get("leaderEpoch"), int) else 0)
    plan.new_end = survivor.log_end
    plan.risks.append(
        f"entries of the lost voters that never reached node {survivor.node_id} are gone for good; entries node "
        f"{survivor.node_id} holds (up to offset {survivor.log_end - 1}) become committed even if the old quorum "
        "never committed them (last epoch " + str(epoch) + ")")
    plan.risks.append("if a 'lost' voter comes back with its old disk it still believes in the old voter set: it "
                      "must never be started again as it was (wipe its metadata log dir and format it afresh)")

    if dynamic:
        me = next(v for v in survivor.voters_record if v["voterId"] == survivor.node_id)
        my_dir = survivor.meta.get("directory.id") if survivor.meta else None
        if my_dir is not None and me.get("voterDirectoryId") != my_dir:
            refuse(f"the voter set holds node {survivor.node_id} with directory id {me.get('voterDirectoryId')}, "
                   f"but {survivor.log_dir}/meta.properties says {my_dir}: this disk is not that voter's")
        record = {"version": 0, "voters": [me]}
        segs = [s for s in survivor.scan.segments if s.files.log]
        if not segs:
            refuse(f"{survivor.partition_dir}: no log segment to append to")
        elif plan.refusal is None:
            from ..records.batch import encode_batch
            last = segs[-1]
            ts = now_ms if now_ms is not None else int(time.time() * 1000)
            batch = encode_batch([md.encode_control(md.KRAFT_VOTERS, record)], base_offset=survivor.log_end,
                                 leader_epoch=epoch, base_timestamp=ts, control=True)
            plan.changes.append(Change(last.files.log,
                                       f"append a control batch at offset {survivor.log_end} (epoch {epoch}, "
                                       f"{len(batch)} bytes at byte {last.valid_bytes}): VotersRecord with only "
                                       f"node {survivor.node_id} ({me.get('voterDirectoryId')}, "
                                       + ", ".join(f"{e['name']}://{e['host']}:{e['port']}" for e in me["endpoints"])
                                       + ")", batch, append_at=last.valid_bytes))
            plan.new_end = survivor.log_end + 1
            entries = list(survivor.history.entries)
            if not entries or entries[-1][0] < epoch:
                entries.append((epoch, survivor.log_end))
                plan.changes.append(Change(os.path.join(survivor.partition_dir, state_files.EPOCH_CHECKPOINT),
                                           f"add {epoch}@{survivor.log_end} to leader-epoch-checkpoint",
                                           state_files.epoch_checkpoint_text(entries)))
    plan.changes.append(Change(os.path.join(survivor.partition_dir, state_files.QUORUM_STATE),
                               f"rewrite quorum-state: no leader, no vote, epoch {qs_epoch} (was "
                               + (f"leader {qs.get('leaderId')}, voted for {qs.get('votedId')}, epoch "
                                  f"{qs.get('leaderEpoch')})" if qs else "missing)"),
                               quorum_state_unattached(qs_epoch, survivor.quorum_state, [survivor.node_id])))
    _next_steps(plan, static_voters)
    return plan


def _next_steps(plan: RecoveryPlan, static_voters: dict[int, str] | None) -> None:
    r = plan.survivor
    nid = r.node_id
    cid = r.meta.get("cluster.id") if r.meta else "<cluster id>"
    s = plan.steps
    if plan.mode == "dynamic":
        s.append(f"start node {nid}: it reads the voter set {{{nid}}} from its log and elects itself leader in a new "
                 "epoch; check with `quorumctl describe status --bootstrap-controller <its address>`")
        s.append("brokers need no change (controller.quorum.bootstrap.servers still reaches the survivor)")
        s.append(f"for each lost controller: wipe its metadata log dir, format it afresh as an observer: "
                 f"`quorumctl bootstrap format -c <its server.properties> -t {cid} --no-initial-controllers --apply` "
                 "(it gets a new directory id), start it, then add it back: "
                 f"`quorumctl add-controller --bootstrap-controller <node {nid}> --command-config <its server.properties>`")
        s.append("check: `quorumctl describe status` lists every voter, `describe replication` shows equal end offsets")
    else:
        mine = static_voters.get(nid, "<host:port>") if static_voters else "<host:port>"
        s.append(f"edit node {nid}'s server.properties: controller.quorum.voters={nid}@{mine}")
        s.append(f"start node {nid}: with itself the only voter it elects itself leader in a new epoch")
        s.append(f"brokers: their controller.quorum.voters still names node {nid}, so they find the new leader; "
                 f"set it to {nid}@{mine} before their next restart")
        s.append("grow back through a dynamic quorum (Kafka 4.1): "
                 f"`kafka-features.sh --bootstrap-controller <node {nid}> upgrade --feature kraft.version=1`; "
                 "then for each new controller: a server.properties with controller.quorum.bootstrap.servers="
                 f"<node {nid}> instead of controller.quorum.voters, `quorumctl bootstrap format -c <it> -t {cid} "
                 "--no-initial-controllers --apply`, start it, "
                 f"`quorumctl add-controller --bootstrap-controller <node {nid}> --command-config <it>`")
        if (plan.survivor.quorum_state or {}).get("data_version") == 0:
            s.append("this quorum-state (data_version 0) lists the voters; Kafka before 3.9 refuses to start when "
                     "they differ from controller.quorum.voters: when the voter set changes again, stop the node "
                     "and delete its quorum-state (Kafka's advice)")
        s.append("or stay static, one new controller at a time (never two empty voters at once: they could elect "
                 "each other with an empty log): format it with -t " + cid + ", list it in controller.quorum.voters "
                 "on every node, restart the voters, wait until it has caught up, then the next one")
    for o in plan.others:
        s.append(f"node {o.node_id} (given, not chosen): start it after node {nid} leads; it follows and truncates "
                 "where it diverges, then add it back as a voter")


def apply_recovery(plan: RecoveryPlan, backup_root: str) -> dict:
    """Carry out the plan crash-safely (the caller holds the log dir lock)."""
    if plan.refusal:
        raise Refused(plan.refusal)
    r = plan.survivor
    live = real_partition_dir(r.partition_dir)
    check_backup_root(backup_root, r.log_dir, live)
    changed = {os.path.basename(c.path): c for c in plan.changes}
    keep = set(changed)

    def build(staging: str, live_stat) -> None:
        """Unchanged files hard-linked; the log end's segment copied with the control batch
        appended; quorum-state (and any file that did not exist) written new."""
        _copy_owner(live_stat, staging)
        for name in sorted(os.listdir(live)):
            src, dst = os.path.join(live, name), os.path.join(staging, name)
            c = changed.pop(name, None)
            if c is None:
                os.link(src, dst)
                continue
            st = os.stat(src)
            fsutil.step(f"write the new {name}")
            if c.append_at is not None:
                fsutil.copy_prefix(src, dst, c.append_at)
                with open(dst, "ab") as f:
                    f.write(c.new_bytes)
                    f.flush()
                    os.fsync(f.fileno())
            else:
                fsutil.write_synced(dst, c.new_bytes)
            _copy_owner(st, dst)
        for name, c in changed.items():   # files that did not exist (quorum-state, checkpoint)
            fsutil.step(f"write the new {name}")
            fsutil.write_synced(os.path.join(staging, name), c.new_bytes)
            _copy_owner(live_stat, os.path.join(staging, name))
        fsutil.fsync_dir(staging)

    return replace_partition_dir(live, backup_root, "recover-", "recover", plan.to_json(), build, keep,
                                 "recovery", {})


def run(targets: list[str], lost: list[int], static_voters: dict[int, str] | None, survivor: int | None,
        apply: bool, backup_dir: str | None) -> tuple[RecoveryPlan, dict | None, str | None]:
    """Plan the recovery from the given controllers' log dirs and, with `apply` and no
    refusal, carry it out holding every survivor's .lock (the plan is rebuilt under the
    locks: it must come from logs no Kafka can still append to). Returns the plan, the
    apply report (None on a dry run) and, on a dry run, the pid of a Kafka holding the
    chosen survivor's lock (--apply would refuse)."""
    from .replica import load_replica, resolve_partition_dir
    from .truncate import default_backup_root

    log_dirs = [resolve_partition_dir(t)[0] for t in targets]
    plan = plan_recovery([load_replica(t) for t in targets], lost, static_voters, survivor)
    ld = plan.survivor.log_dir
    report = None
    if apply and not plan.refusal:
        locks = []
        try:
            for d in log_dirs:
                locks.append(fsutil.LogDirLock(d).acquire())
            plan = plan_recovery([load_replica(t) for t in targets], lost, static_voters, survivor)
            if not plan.refusal:
                report = apply_recovery(plan, backup_dir or default_backup_root(ld))
        finally:
            for lk in locks:
                lk.release()
    holder = None if apply else fsutil.lock_holder(ld)
    return plan, report, holder


def plan_lines(doc: dict, dry_run: bool, report: dict | None) -> list[str]:
    s = doc["survivor"]
    lines = [f"Recovery plan for node {s['node_id']} ({s['partition_dir']}), {doc['quorum']} quorum"
             + (", dry run" if dry_run else "")]
    lines.append(f"  survivor: node {s['node_id']}, last epoch {s['last_epoch']}, log end offset {s['log_end_offset']}")
    for o in doc["other_replicas"]:
        lines.append(f"  also given: node {o['node_id']}, last epoch {o['last_epoch']}, "
                     f"log end offset {o['log_end_offset']}")
    lines.append(f"  voters: {doc['voters_before']} -> {doc['voters_after']} (lost: {doc['lost_voters']})")
    if doc["refused"]:
        lines.append(f"  refused: {doc['refused']}")
        return lines
    lines.append("  risks:")
    lines.extend(f"    - {x}" for x in doc["risks"])
    lines.append("  changes to the survivor's files:")
    lines.extend(f"    - {c['file']}: {c['change']}" for c in doc["changes"])
    lines.append("  then:")
    lines.extend(f"    {i}. {x}" for i, x in enumerate(doc["next_steps"], 1))
    if report:
        lines.append(f"applied; replaced files kept in {report['backup_dir']}")
    elif dry_run:
        lines.append("Run again with --apply to do it (the node must be stopped).")
    return lines
