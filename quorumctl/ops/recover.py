"""Rebuild a working KRaft quorum from the surviving controller(s) after the
majority of voters is permanently lost (etcd's --force-new-cluster, Consul's
peers.json; Kafka ships nothing).

The rules (docs/recovery.md says why, with Kafka's sources):

- **Only voters that are really gone are declared lost.** The caller probes each
  declared-lost voter's endpoints (live/liveness.py) and hands the answers to
  `RecoveryPlan.judge_probes`; any answer refuses the plan.
- **Every surviving replica counts.** Brokers and observers replicate
  `__cluster_metadata` too. The recovered log starts from the most up-to-date
  replica given (Raft's election rule: last epoch, then log end offset), the
  *base*; when the base is not the survivor, the survivor's partition directory
  becomes a copy of the base's. Nothing a given replica holds beyond the base is
  kept; the plan lists it (only a replica that diverges can hold such entries).
- **Write only in a new epoch.** For a dynamic quorum (kraft.version 1) one
  control batch holding a VotersRecord with only the survivor is appended at the
  base's log end in epoch E, one above every epoch any given replica has seen
  (log, leader-epoch-checkpoint, quorum-state, snapshots); quorum-state says "no
  leader, no vote" in E. The survivor, the only voter, elects itself in E+1 and
  its LeaderChange commits everything before it. No replica can hold another
  batch at that (offset, epoch), so log matching holds. (Kafka's own voter
  changes append the VotersRecord in the leader's epoch: KIP-853; a leader's
  epoch is new by construction, an offline append's is not.)
  A static quorum (kraft.version 0) gets no batch: quorum-state goes to the
  highest epoch seen, so the survivor's first epoch as leader is new.
- **Replicas that diverge from the result are truncated** in the same run with
  `truncate`'s machinery (each under its own lock, backed up), so none of them
  meets a leader that asks it to truncate below its high watermark.

At start-up `KafkaRaftClient.initialize` reads the latest snapshot and then the
whole log, committed or not (`KRaftControlRecordStateMachine`), and the last
VotersRecord is the voter set: the appended one makes the survivor the only
voter. Applying follows `truncate`: Kafka's lock on every given log dir, each
changed partition directory built beside the old one and swapped in with one
renameat2 exchange, the replaced files kept as the backup; the other replicas
are changed first, the survivor last (a crash in between leaves a plan that,
run again, plans the same thing).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, Refused
from ..ids import ZERO_UUID
from ..records import metadata as md
from ..raft import epochs
from ..logdir import statefiles as state_files
from . import fsutil
from ..raft import logmatch
from ..raft.replica import Replica, divergence_json
from .backups import check_backup_root, copy_owner, default_backup_root, real_partition_dir, replace_partition_dir
from .plan import RepairPlan, ReplicaStep
from .truncate import Plan as TruncationPlan, apply_plan, plan_truncation


class RecoverError(InputError):
    """A recovery that cannot be planned as asked (log dirs, survivor, lost voters).

    A library error; it subclasses InputError only so the CLI reports it as every
    bad-input error: one line on stderr, exit 2."""


NO_DIRECTORY = ZERO_UUID


@dataclass
class Change:
    path: str  # in the live partition directory
    what: str  # one line for the plan
    new_bytes: bytes = field(repr=False, default=b"")
    append_at: int | None = None  # a segment: copy the first append_at bytes, then new_bytes


@dataclass
class ReplicaPlan(ReplicaStep):
    """What the recovery does to one given replica (action: append, keep, replace, base,
    none or truncate) and what that replica loses."""

    role: str  # survivor | voter | replica (a broker or observer)
    reason: str = ""
    truncation: TruncationPlan | None = None

    def to_json(self) -> dict:
        r = self.replica
        return {
            "node_id": r.node_id,
            "log_dir": r.log_dir,
            "partition_dir": r.partition_dir,
            "role": self.role,
            "last_epoch": r.last_epoch,
            "log_end_offset": r.log_end,
            "action": self.action,
            "keeps_to": self.keeps_to,
            "reason": self.reason,
            "loses": self.losses,
            "truncation": self.truncation.to_json() if self.truncation else None,
        }


@dataclass
class RecoveryPlan(RepairPlan):
    survivor: Replica
    mode: str  # dynamic | static
    voters_before: list[int]
    lost: list[int]
    # new_epoch: the epoch of the appended batch (dynamic) / of quorum-state
    replicas: list[ReplicaPlan] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)  # the survivor's files
    lost_endpoints: dict[int, list] = field(default_factory=dict)  # voter id -> [(host, port)]
    unread: list[int] = field(default_factory=list)  # brokers not read (--no-replica)
    becomes_committed: dict | None = None
    new_end: int | None = None

    def judge_probes(self, probes: list, force_lost: list[int], witnesses: Sequence = ()) -> None:
        """Refuse unless every declared-lost voter is silent on every endpoint (its host
        says nothing listens there) and no witness (another node asked: liveness.Witness)
        sees a leader or an epoch above every given replica's. `force_lost` waives a voter
        that gives no answer at all, accepts TCP and says nothing, or answers as something
        else than a controller of this cluster; never one that answers as a controller of
        this cluster, nor a witness's live quorum."""
        # a voter that is alive is the most serious refusal: it is said first, before any other
        with self.live_refusals_first(probes, witnesses):
            bad_force = [i for i in force_lost if i not in self.lost]
            if bad_force:
                self.refuse(f"--force-lost names {bad_force}, which are not declared lost (--lost-voters {self.lost})")
            for p in self.probes:
                if p.state == "silent":
                    continue
                where = f"voter {p.voter_id} at {p.address}: {p.detail}"
                if p.same_cluster_controller(self.cluster_id):
                    self.refuse(
                        f"{where}: it is alive; a recovery now would split the quorum in two (two leaders, "
                        "two histories). Stop it for good, or start the survivors and let Raft elect a leader"
                    )
                elif p.state == "accepts" and p.frozen:
                    self.refuse(
                        f"{where}: something accepts connections there and stays silent, as a frozen "
                        "(stopped, swapping) controller does, which may wake up and lead the others: kill that "
                        "process or power its host off first (--force-lost does not waive this)"
                    )
                elif p.voter_id in force_lost:
                    self.risks.append(
                        f"--force-lost {p.voter_id}: {where}; taken as not being voter {p.voter_id}. "
                        "If it is that voter (a frozen JVM that wakes up), the quorum splits in two"
                    )
                elif p.state == "unknown":
                    self.refuse(
                        f"{where}: nothing shows voter {p.voter_id} is gone; if it certainly is (the host is "
                        f"off for good), say so with --force-lost {p.voter_id}"
                        + (
                            "; if it runs under a new name (stale endpoints), `quorumctl voters check` and "
                            "`quorumctl voters set-endpoints` are the way, not recover"
                            if p.unresolved
                            else ""
                        )
                    )
                else:
                    self.refuse(
                        f"{where}: if that is not voter {p.voter_id} any more (the address now belongs to "
                        f"something else), say so with --force-lost {p.voter_id}"
                    )
            self._judge_witnesses()
        unresolved = [p for p in self.probes if p.unresolved]
        if unresolved:
            # a stored name that no longer resolves is what a moved controller looks like, not only a lost one
            self.risks.append(
                "stored endpoint(s) that do not resolve: "
                + ", ".join(f"voter {p.voter_id} at {p.address}" for p in unresolved)
                + ": if those controllers still run under new names or addresses, they are not lost and the fix "
                "is not recover: `quorumctl voters check` given every voter's log dir (and -c each one's "
                "server.properties) names stale endpoints, `quorumctl voters set-endpoints` repairs them "
                "(docs/membership.md)"
            )
        for vid in self.lost:
            if vid in self.voters_before and not self.lost_endpoints.get(vid):
                if vid in force_lost:
                    self.risks.append(f"--force-lost {vid}: voter {vid} has no known address; it was not probed")
                else:
                    self.refuse(
                        f"voter {vid} has no known address, so nothing shows it is gone: give the "
                        "survivor's server.properties with -c (controller.quorum.voters), or --force-lost "
                        f"{vid} if it is certainly gone"
                    )

    def _judge_witnesses(self) -> None:
        given = {x.replica.node_id for x in self.replicas} | {self.survivor.node_id}
        for w in self.witnesses:
            where = f"{w.who} at {w.address}" if w.address else w.who
            if w.state == "leader" and w.leader_id == self.survivor.node_id:
                # the survivor still runs and leads, without a majority: the lock refuses --apply until it stops
                self.risks.append(
                    f"{where} {w.detail}: node {w.leader_id}, the survivor, still runs; --apply needs it stopped"
                )
            elif w.state == "leader":
                alive = sorted(set(self.lost) & set(w.recent_voters or [w.leader_id]))
                self.refuse(
                    f"{where} {w.detail}: the quorum is alive"
                    + (f", voter(s) {alive} with it" if alive else "")
                    + f"; the voters declared lost ({self.lost}) only look gone from here (a firewall or a "
                    "partition between this host and them can answer as if nothing listened). A recovery "
                    "now would split the quorum in two: find out why this host cannot reach them"
                )
            elif w.leader_epoch is not None and w.leader_epoch > self.max_epoch_seen:
                self.refuse(
                    f"{where} has seen epoch {w.leader_epoch}, above every epoch the given replicas have "
                    f"seen ({self.max_epoch_seen}): the quorum went on without them; give the most "
                    "up-to-date replicas (`quorumctl state` compares them)"
                )
            elif w.state == "unreachable" and not (w.refused and w.node_id in given):
                self.risks.append(
                    f"{where} could not be asked ({w.detail}): if it still reaches a live quorum, "
                    "nothing here shows it; check from its host that it sees no leader"
                )

    def to_json(self) -> dict:
        r = self.survivor
        return {
            "survivor": {
                "node_id": r.node_id,
                "log_dir": r.log_dir,
                "partition_dir": r.partition_dir,
                "last_epoch": r.last_epoch,
                "log_end_offset": r.log_end,
                "directory_id": r.meta.get("directory.id") if r.meta else None,
            },
            "base": self.base_json(),
            "replicas": [x.to_json() for x in self.replicas],
            "quorum": self.mode,
            "voters_before": self.voters_before,
            "voters_after": [r.node_id],
            "lost_voters": self.lost,
            **self.answers_json(),
            "max_epoch_seen": self.max_epoch_seen,
            "new_epoch": self.new_epoch,
            "changes": [{"file": c.path, "change": c.what} for c in self.changes],
            "log_end_offset_after": self.new_end,
            "becomes_committed": self.becomes_committed,
            **self.verdict_json(),
        }


def quorum_state_unattached(epoch: int, old: dict | None, voters: list[int]) -> bytes:
    """FileQuorumStateStore's line: no leader, no vote, in `epoch`, in the file's own
    data_version. Version 0 (Kafka before 3.9) also lists the voters, and Kafka
    refuses to start when they differ from controller.quorum.voters
    (QuorumState.initialize), so it lists the new voter set."""
    if old and old.get("data_version") == 0:
        doc = {
            "clusterId": old.get("clusterId", ""),
            "leaderId": -1,
            "leaderEpoch": epoch,
            "votedId": -1,
            "appliedOffset": old.get("appliedOffset", 0),
            "currentVoters": [{"voterId": v} for v in voters],
            "data_version": 0,
        }
    else:
        doc = {"leaderId": -1, "leaderEpoch": epoch, "votedId": -1, "votedDirectoryId": NO_DIRECTORY, "data_version": 1}
    return json.dumps(doc, separators=(",", ":")).encode()


def highest_epoch_seen(r: Replica) -> int:
    """Every epoch a replica's files show it has seen: its log's batches, its
    leader-epoch-checkpoint, its quorum-state (a vote or a candidacy leaves no batch)
    and its snapshots."""
    seen = [0]
    seen.extend(e for e, _ in r.log_history.entries)
    seen.extend(e for e, _ in (r.checkpoint or []))
    qs = r.quorum_state or {}
    if isinstance(qs.get("leaderEpoch"), int):
        seen.append(qs["leaderEpoch"])
    seen.extend(s.epoch for s in r.files.snapshots)
    return max(seen)


# -- what entries are: a short account for the plan --------------------------------

CONFIG_RESOURCE = {2: "topic", 4: "broker", 8: "broker-logger", 16: "client-metrics", 32: "group"}


def summarize_entries(r: Replica, lo: int, hi: int, limit: int = 8) -> dict | None:
    """The entries of `r` in offsets [lo, hi): how many, of which record types, the
    topics they create or delete and the configs they set (the first `limit` of each)."""
    if hi <= lo:
        return None
    from ..records.batch import BatchError, BatchReader

    types: dict[str, int] = {}
    topics: list[str | None] = []  # None: a TopicRecord whose fields could not be decoded
    removed: list[str] = []
    configs: list[str] = []
    count = 0
    for sc in r.scan.segments:
        wanted = [b for b in sc.batches if b.last_offset >= lo and b.base_offset < hi]
        if not wanted:
            continue
        try:
            with BatchReader(
                sc.files.log, start=wanted[0].position, end=wanted[-1].position + wanted[-1].size
            ) as reader:
                for b in reader:
                    for rec in b.iter_records():
                        if not lo <= rec.offset < hi:
                            continue
                        count += 1
                        d = md.decode_control(rec.key, rec.value) if b.is_control else md.decode_metadata(rec.value)
                        types[d.type_name] = types.get(d.type_name, 0) + 1
                        data: dict[str, Any] = d.data or {}  # the record's decoded fields
                        if d.type_name == "TOPIC_RECORD":
                            topics.append(data.get("name"))
                        elif d.type_name == "REMOVE_TOPIC_RECORD":
                            removed.append(str(data.get("topicId")))
                        elif d.type_name == "CONFIG_RECORD":
                            kind = CONFIG_RESOURCE.get(data.get("resourceType", -1), f"type {data.get('resourceType')}")
                            configs.append(
                                f"{kind} {data.get('resourceName') or '(default)'}: "
                                f"{data.get('name')}={data.get('value')}"
                            )
        except (BatchError, OSError):
            break  # the plan refuses damaged logs; a summary stops where the file does
    return {
        "from": lo,
        "to": hi - 1,
        "records": count,
        "types": dict(sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))),
        "topics_created": topics[:limit],
        "topics_removed": removed[:limit],
        "configs": configs[:limit],
        "more": max(0, len(topics) - limit) + max(0, len(removed) - limit) + max(0, len(configs) - limit),
    }


# -- the plan ---------------------------------------------------------------------


def _check_given(survivors: list[Replica], replicas: list[Replica]) -> None:
    every = survivors + replicas
    # key=str: a meta.properties without cluster.id gives None, which does not sort with a str
    clusters = sorted({r.meta.get("cluster.id") for r in every if r.meta}, key=str)
    if len(clusters) > 1:
        raise RecoverError(f"the log dirs belong to different clusters: {', '.join(map(str, clusters))}")
    ids = [r.node_id for r in every]
    if None in ids:
        bad = every[ids.index(None)]
        raise RecoverError(f"{bad.log_dir}: no node id (meta.properties missing or unreadable)")
    if len(set(ids)) != len(ids):
        raise RecoverError(f"the same node id was given twice: {ids}")
    parts = [os.path.realpath(r.partition_dir) for r in every]
    if len(set(parts)) != len(parts):
        raise RecoverError("the same log dir was given twice")


def _voter_set(base: Replica, survivor: Replica, static_voters: dict[int, str] | None):
    """(mode, voter ids, voter id -> [(host, port)]) as the recovered log will hold them
    before the appended VotersRecord: the base's (Kafka reads the voter set from the
    log it starts with), else controller.quorum.voters, else a v0 quorum-state's ids."""
    for r in (base, survivor):
        if r.voters_record is not None:
            eps = {v["voterId"]: [(e["host"], e["port"]) for e in v.get("endpoints", [])] for v in r.voters_record}
            return "dynamic", sorted(eps), eps, r
    if static_voters:
        eps = {}
        for vid, addr in static_voters.items():
            host, _, port = str(addr).rpartition(":")
            eps[vid] = [(host.strip("[]"), int(port))] if port.isdigit() else []
        return "static", sorted(static_voters), eps, None
    if survivor.voters and survivor.voters["source"] == "quorum-state":
        # quorum-state data_version 0 (kraft.version 0) lists the static voters; addresses unknown
        return "static", list(survivor.voters["ids"]), {i: [] for i in survivor.voters["ids"]}, None
    raise RecoverError(
        f"{survivor.log_dir}: the log holds no VotersRecord (a static quorum, kraft.version 0): "
        "give the survivor's server.properties with --config (its controller.quorum.voters)"
    )


# An unread replica (a broker named with --no-replica) may have seen epochs the given
# replicas never did, and hold batches in them: the appended batch's epoch then jumps by
# this much, above any epoch the lost voters' quorum can have reached on its own (one
# per election), so no replica can hold another batch at its (offset, epoch); such a
# replica's extra entries are lost, not clashed with (it truncates when it fetches).
UNREAD_EPOCH_MARGIN = 1000


def registrations(r: Replica) -> tuple[dict[int, list], dict[int, list]]:
    """(brokers, controllers) registered in a replica's latest snapshot and the log
    after it, each id -> its endpoints [(host, port)] (RegisterBrokerRecord less
    UnregisterBrokerRecord; RegisterControllerRecord less UnregisterControllerRecord).
    A damaged file counts up to where it can be read: the plan refuses damaged logs
    anyway."""
    keys = {
        md.API_KEYS[n]: n
        for n in (
            "RegisterBrokerRecord",
            "UnregisterBrokerRecord",
            "RegisterControllerRecord",
            "UnregisterControllerRecord",
        )
    }
    brokers: dict[int, list] = {}
    controllers: dict[int, list] = {}
    for path, start in r.snapshot_and_log():
        for _, d in md.records_with_keys(path, tuple(keys), start):
            kind = keys[d.api_key]
            table = brokers if "Broker" in kind else controllers
            nid = d.data.get("brokerId", d.data.get("controllerId"))
            if nid is None:
                continue
            if kind.startswith("Register"):
                table[nid] = [(e["host"], e["port"]) for e in d.data.get("endPoints", [])]
            else:
                table.pop(nid, None)
    return dict(sorted(brokers.items())), dict(sorted(controllers.items()))


def metadata_level(r: Replica) -> int | None:
    """The metadata.version feature level of a replica's latest snapshot and the log after
    it (the last FeatureLevelRecord of metadata.version), or None."""
    key = md.API_KEYS["FeatureLevelRecord"]
    level = None
    for path, start in r.snapshot_and_log():
        for _, d in md.records_with_keys(path, (key,), start):
            if d.data.get("name") == "metadata.version":
                level = d.data.get("featureLevel")
    return level


def plan_recovery(
    survivors: list[Replica],
    lost: list[int],
    static_voters: dict[int, str] | None = None,
    survivor_id: int | None = None,
    now_ms: int | None = None,
    replicas: Sequence[Replica] = (),
    unread: Sequence[int] = (),
) -> RecoveryPlan:
    """survivors: the surviving voters' log dirs (loaded); replicas: other replicas of the
    metadata log (brokers, observers); lost: the voters the operator declares permanently
    gone; static_voters: controller.quorum.voters of the survivor's configuration;
    unread: registered brokers whose log dirs the operator cannot give (--no-replica).
    The steps below run in this order, each refusal kept only when none came before
    (the first reason found is the one said)."""
    replicas = list(replicas)
    if not survivors:
        raise RecoverError("give the surviving controller's log dir")
    _check_given(survivors, replicas)
    every = survivors + replicas
    survivor = _choose_survivor(survivors, survivor_id)
    base = max(every, key=lambda r: (r.election_key, r is survivor))
    mode, voters, endpoints, voters_from = _voter_set(base, survivor, static_voters)
    seen = max(highest_epoch_seen(r) for r in every)
    new_epoch = (seen + 1 if mode == "dynamic" else seen) + (UNREAD_EPOCH_MARGIN if unread else 0)
    plan = RecoveryPlan(
        survivor,
        mode,
        voters,
        lost,
        base=base,
        new_epoch=new_epoch,
        max_epoch_seen=seen,
        lost_endpoints={v: endpoints.get(v, []) for v in lost},
        unread=sorted(unread),
    )
    clashes = logmatch.clashes(every)
    if clashes:  # the given logs already break Raft's invariant: no base can be trusted blindly; so
        # below, a replica differs from the base by its epochs alone (epochs.reconcile)
        plan.refuse(
            clashes[0].describe() + "; the replicas were changed outside Raft before: repair them first "
            "(`quorumctl state` names the replica to truncate)"
        )
    _check_voters(plan, survivors, every)
    _check_registered(plan, every)
    alive = sorted(set(voters) & {r.node_id for r in every})  # the voters whose log dirs were given
    if len(alive) > len(voters) // 2:
        plan.refuse(
            f"the quorum still has a majority: {len(alive)} of {len(voters)} voters ({alive}) survive; start "
            "them and let Raft elect a leader, then remove the lost voters with remove-controller"
        )
    # the base's files are what the cluster restarts from; the survivor's are replaced when it is not the base
    plan.refuse_unusable_base("recover")
    # the survivor's new log: the base's, plus the VotersRecord batch in the new epoch
    me = _survivor_voter(plan, voters_from) if mode == "dynamic" else None
    plan.refuse_no_segment()
    plan.new_end = base.log_end + (1 if mode == "dynamic" else 0)
    view = base.view()
    for r in every:
        _plan_replica(plan, r, view)
    plan.becomes_committed = _becomes_committed(plan, every)
    plan.risks.append(
        f"entries that only the lost voters held are gone for good. A replica not given (a broker, an observer) "
        f"whose last epoch is above {base.last_epoch}, or equal with a log end offset above {base.log_end}, holds "
        "entries this plan loses: check every broker's metadata log dir with `quorumctl state` and give the most "
        "up-to-date one with --replica"
    )
    plan.risks.append(
        "if a 'lost' voter comes back with its old disk it still believes in the old voter set: it "
        "must never be started again as it was (wipe its metadata log dir and format it afresh)"
    )
    if plan.refusal is None:
        _survivor_changes(plan, me, now_ms)
    _next_steps(plan, static_voters, endpoints.get(survivor.node_id, []))
    return plan


def _choose_survivor(survivors: list[Replica], survivor_id: int | None) -> Replica:
    """--survivor's replica, else the most up-to-date voter given (the first of a tie: the fewest changes)."""
    if survivor_id is None:
        return max(survivors, key=lambda r: r.election_key)
    chosen = [r for r in survivors if r.node_id == survivor_id]
    if not chosen:
        raise RecoverError(
            f"--survivor {survivor_id}: not among the controllers' log dirs given "
            f"(nodes {[r.node_id for r in survivors]})"
        )
    return chosen[0]


def _check_voters(plan: RecoveryPlan, survivors: list[Replica], every: list[Replica]) -> None:
    """Who is a voter, who is declared lost: the survivors are voters, the lost are voters
    whose log dirs were not given, and every other voter is given or declared lost."""
    voters, lost, survivor = plan.voters_before, plan.lost, plan.survivor
    if survivor.node_id not in voters:
        plan.refuse(
            f"node {survivor.node_id} is not a voter (voters {voters}): give a voter as the survivor; brokers "
            "and observers go with --replica"
        )
    for r in survivors:
        if r.node_id not in voters and r is not survivor:
            plan.refuse(f"node {r.node_id} is not a voter (voters {voters}): give brokers and observers with --replica")
    not_voters = [i for i in lost if i not in voters]
    if not_voters:
        plan.refuse(f"--lost-voters names {not_voters}, which are not voters (voters {voters})")
    given_ids = {r.node_id for r in every}
    lost_but_given = sorted(set(lost) & given_ids)
    if lost_but_given:
        plan.refuse(f"--lost-voters names {lost_but_given}, whose log dirs were given")
    undeclared = [v for v in voters if v not in given_ids and v not in lost]
    if undeclared:
        plan.refuse(
            f"voter(s) {undeclared} are neither given (log dir) nor declared lost (--lost-voters): every voter "
            "other than the survivors must be declared permanently lost by the operator"
        )


def _check_registered(plan: RecoveryPlan, every: list[Replica]) -> None:
    """The nodes registered in the base's metadata: each is a witness to ask, and each broker
    or observer (they replicate the log too) must be given, or named unread (--no-replica)."""
    voters, lost, unread, base = plan.voters_before, plan.lost, plan.unread, plan.base
    given_ids = {r.node_id for r in every}
    broker_eps, controller_eps = registrations(base)
    brokers = sorted(broker_eps)
    # every other node that may see the quorum is asked too (liveness.probe_voters)
    plan.witness_endpoints = [(f"broker {b}", b, eps) for b, eps in broker_eps.items()] + [
        (f"controller {c}", c, eps) for c, eps in controller_eps.items() if c not in lost
    ]
    # observers (registered controllers outside the voter set) replicate the log as brokers do
    observers = [c for c in controller_eps if c not in voters]
    unknown = sorted(set(unread) - set(brokers) - set(observers))
    if unknown:
        plan.refuse(
            f"--no-replica names {unknown}, which are not registered brokers (registered: {brokers})"
            + (f" or observers ({observers})" if observers else "")
        )
    missing_obs = [c for c in observers if c not in given_ids and c not in unread]
    if missing_obs:
        plan.refuse(
            f"observer(s) {missing_obs} (registered controllers outside the voter set) not given with "
            "--replica: an observer fetches the metadata log and may hold acknowledged entries the base lacks. "
            "Give each one's metadata log dir with --replica, or name the ones you cannot read with --no-replica "
            + ",".join(map(str, missing_obs))
        )
    missing = [b for b in brokers if b not in given_ids and b not in unread]
    if missing:
        plan.refuse(
            f"registered broker(s) {missing} not given with --replica: a broker fetches the metadata log too and "
            "may hold acknowledged entries the base lacks, in epochs the given replicas never saw (recovering "
            "without it can put another batch at an (offset, epoch) it holds, and it stops when it restarts). "
            "Give each broker's metadata log dir with --replica (it may keep running if nothing is done to it), "
            f"or name the ones you cannot read with --no-replica {','.join(map(str, missing))}"
        )
    if unread:
        plan.risks.append(
            f"node(s) {sorted(unread)} not read (--no-replica): what their metadata logs hold beyond offset "
            f"{base.log_end} is unknown. Kafka never truncates a replica below its high watermark (after a restart, "
            "its log start offset), so such a node stops with a fatal error when the new leader asks it to "
            "truncate: wipe its metadata log as the steps say (it then fetches the recovered log; entries only it "
            f"held are lost). The new epoch jumps to {plan.new_epoch} so that none of their batches can share an "
            "(offset, epoch) with the recovery's"
        )


def _survivor_voter(plan: RecoveryPlan, voters_from: Replica | None) -> dict | None:
    """The survivor's entry in the voter set (a dynamic quorum's), which the appended
    VotersRecord keeps alone; refused when the survivor's disk is not that voter's."""
    assert voters_from is not None and voters_from.voters_record is not None  # (_voter_set: dynamic)
    survivor = plan.survivor
    me = next((v for v in voters_from.voters_record if v["voterId"] == survivor.node_id), None)
    my_dir = survivor.meta.get("directory.id") if survivor.meta else None
    if me is not None and my_dir is not None and me.get("voterDirectoryId") != my_dir:
        plan.refuse(
            f"the voter set holds node {survivor.node_id} with directory id {me.get('voterDirectoryId')}, "
            f"but {survivor.log_dir}/meta.properties says {my_dir}: this disk is not that voter's"
        )
    return me


def _plan_replica(plan: RecoveryPlan, r: Replica, base_view: epochs.LogView) -> None:
    """One given replica against the result: the base is the result; the others keep what
    agrees with it (Fetch's divergence exchange) and, but for the survivor (which becomes a
    copy of the base), are truncated where they diverge."""
    base, survivor = plan.base, plan.survivor
    role = "survivor" if r is survivor else ("voter" if r.node_id in plan.voters_before else "replica")
    rp = ReplicaPlan(role, replica=r, action="none", keeps_to=r.log_end)
    plan.replicas.append(rp)
    if r is base:
        rp.action = ("append" if plan.mode == "dynamic" else "keep") if r is survivor else "base"
        rp.reason = (
            "the most up-to-date replica given (Raft's rule: last epoch, then log end offset): "
            "the recovered log starts from it"
        )
        return
    d = epochs.reconcile(r.view(), base_view)
    cut = r.log_end
    if d.kind == "diverging":
        # reconcile sets both for a diverging follower: where it ends and the first DivergingEpoch
        assert d.new_end is not None and d.first_diverging is not None
        cut = d.new_end
        rp.reason = (
            f"diverges from {base.label}: DivergingEpoch(epoch={d.first_diverging[1]}, "
            f"endOffset={d.first_diverging[0]}); truncateToEndOffset gives {d.new_end}"
        )
    elif d.kind == "snapshot":
        rp.reason = f"behind {base.label}'s log start offset {base.log_start}: it fetches the snapshot when it starts"
    elif d.kind == "stuck":
        plan.refuse(f"{r.label}: the Fetch exchange with {base.label} does not converge; compare the logs by hand")
    else:
        rp.reason = f"its log is a prefix of {base.label}'s"
    rp.keeps_to = cut
    rp.losses = summarize_entries(r, cut, r.log_end)
    if r is survivor:
        rp.action = "replace"
        rp.reason += f"; its partition directory becomes a copy of {base.label}'s"
        return
    if cut < r.log_end:
        rp.action = "truncate"
        tp = plan_truncation(r, mode="reference", target=cut, reason=rp.reason, divergence=divergence_json(r, d))
        rp.truncation = tp
        if tp.refusal:
            plan.refuse(f"{r.label} ({r.partition_dir}) must be truncated to {cut}, but: {tp.refusal}")


def _becomes_committed(plan: RecoveryPlan, every: list[Replica]) -> dict | None:
    """The base's entries that become committed when the survivor leads (all of them when
    what is provably committed cannot be told)."""
    from ..raft.committed import classify

    base = plan.base
    try:
        cm = classify(every, plan.voters_before if plan.mode == "static" else None)
        mine = next(x for x in cm["replicas"] if x["replica"] == base.label)
        return summarize_entries(base, mine["committed_end_offset"], base.log_end)
    except ValueError:
        return summarize_entries(base, 0, base.log_end)


def _survivor_changes(plan: RecoveryPlan, me: dict | None, now_ms: int | None) -> None:
    survivor = plan.survivor
    # the plan was refused otherwise: a log dir without a node id, a survivor outside the voter set
    assert survivor.node_id is not None
    voters = None
    what = ""
    if plan.mode == "dynamic":
        assert me is not None
        voters = [me]
        what = (
            f"VotersRecord with only node {survivor.node_id} ({me.get('voterDirectoryId')}, "
            + ", ".join(f"{e['name']}://{e['host']}:{e['port']}" for e in me["endpoints"])
            + ")"
        )
    plan.changes.extend(
        partition_changes(survivor, plan.base, plan.new_epoch, voters, what, [survivor.node_id], now_ms)
    )


def partition_changes(
    target: Replica,
    base: Replica,
    epoch: int,
    voters: list[dict] | None,
    what: str,
    voter_ids: list[int],
    now_ms: int | None = None,
) -> list[Change]:
    """The changes that make `target`'s partition directory the base's log (a copy
    when it is another replica's), plus, with `voters`, one control batch holding a
    VotersRecord of them appended at the base's log end in `epoch`, the
    leader-epoch-checkpoint to match, and quorum-state "no leader, no vote" in
    `epoch`. recover (one survivor) and voters set-endpoints (every voter, the same
    batch on each) share it."""
    pdir = target.partition_dir
    out: list[Change] = []
    entries = list(base.history.entries)
    last = [s for s in base.scan.segments if s.files.log][-1]
    if base is not target:
        out.append(
            Change(
                pdir,
                f"replace every file with a copy of {base.label}'s {base.partition_dir} "
                f"(log {base.log_start}..{base.log_end - 1}, last epoch {base.last_epoch}), "
                "quorum-state excepted",
            )
        )
    if voters is not None:
        from ..records.batch import encode_batch

        ts = now_ms if now_ms is not None else int(time.time() * 1000)
        batch = encode_batch(
            [md.encode_control(md.KRAFT_VOTERS, {"version": 0, "voters": voters})],
            base_offset=base.log_end,
            leader_epoch=epoch,
            base_timestamp=ts,
            control=True,
        )
        assert last.files.log is not None  # `last` is picked among the segments with a .log
        name = os.path.basename(last.files.log)
        out.append(
            Change(
                os.path.join(pdir, name),
                f"append a control batch at offset {base.log_end} in the new epoch {epoch} "
                f"({len(batch)} bytes at byte {last.valid_bytes}): {what}",
                batch,
                append_at=last.valid_bytes,
            )
        )
        entries.append((epoch, base.log_end))
    before = target.checkpoint if base is target else base.checkpoint
    if list(before or []) != entries:
        out.append(
            Change(
                os.path.join(pdir, state_files.EPOCH_CHECKPOINT),
                "epochs " + ", ".join(f"{e}@{o}" for e, o in entries),
                state_files.epoch_checkpoint_text(entries),
            )
        )
    qs = target.quorum_state or {}
    out.append(
        Change(
            os.path.join(pdir, state_files.QUORUM_STATE),
            f"rewrite quorum-state: no leader, no vote, epoch {epoch} (was "
            + (
                f"leader {qs.get('leaderId')}, voted for {qs.get('votedId')}, epoch {qs.get('leaderEpoch')})"
                if qs
                else "missing)"
            ),
            quorum_state_unattached(epoch, target.quorum_state, voter_ids),
        )
    )
    return out


def _next_steps(plan: RecoveryPlan, static_voters: dict[int, str] | None, mine_eps: list) -> None:
    """The steps after the recovery, each command with the values known here (the
    survivor's address from the voter set or controller.quorum.voters, the cluster id);
    a value not known here (a lost controller's server.properties) is said in words,
    after the command it completes, never as a placeholder to type."""
    from ..config.addresses import Address

    r = plan.survivor
    nid = r.node_id
    assert nid is not None  # plan_recovery refuses a log dir without a node id
    cid = plan.cluster_id
    s = plan.steps
    if mine_eps:
        addr: str | None = str(Address(mine_eps[0][0], int(mine_eps[0][1])))
    else:
        addr = static_voters.get(nid) if static_voters else None
    # the survivor's address, or words where it is not known (a v0 quorum-state names no address)
    at = f"--bootstrap-controller {addr}" if addr else f"--bootstrap-controller and node {nid}'s address"
    mine = f"{nid}@{addr}" if addr else f"{nid}@ followed by node {nid}'s host:port"
    from ..versions import NAME_OF

    # a fresh controller formatted at the cluster's metadata.version: one above its release's
    # range (quorumctl's default) stops it at start-up
    level = metadata_level(plan.base) if plan.base is not None else None
    rv = f" --release-version {NAME_OF[level]}" if level in NAME_OF else ""
    fmt = (
        f"quorumctl bootstrap format -t {cid}{rv} --no-initial-controllers --apply -c"
        if cid
        else "quorumctl bootstrap format --no-initial-controllers --apply with the cluster id (-t, not known "
        "here: `quorumctl bootstrap info` on the survivor's log dir names it) and -c"
    )
    brokers = [x for x in plan.replicas if x.role == "replica"]
    for b in plan.unread:
        s.append(
            f"node {b} (not read, --no-replica): before node {nid} starts, stop node {b} if it runs, and "
            f"delete only the directory __cluster_metadata-0 in its metadata log dir (metadata.log.dir, else the "
            "first of log.dirs; meta.properties and the topic partitions stay). Started again, it fetches the "
            f"recovered log from node {nid}; left as it is, it stops with a fatal error if its log holds "
            "entries past the base it saw committed (Kafka never truncates below the high watermark)"
        )
    if plan.mode == "dynamic":
        s.append(
            f"start node {nid}: it reads the voter set {{{nid}}} from its log and elects itself leader in epoch "
            f"{plan.new_epoch + 1}; check with `quorumctl describe status {at}`"
        )
    else:
        s.append(f"edit node {nid}'s server.properties: controller.quorum.voters={mine}")
        s.append(f"start node {nid}: with itself the only voter it elects itself leader in epoch {plan.new_epoch + 1}")
    s.append(
        "start the brokers given with --replica ("
        + (", ".join(f"node {x.replica.node_id}" for x in brokers) if brokers else "none given")
        + "), then every other broker: each fetches from the new leader and truncates where its log diverges"
        + (
            " (controller.quorum.bootstrap.servers still reaches the survivor)"
            if plan.mode == "dynamic"
            else f"; their controller.quorum.voters still names node {nid}, so they find the new leader: set it to "
            f"{mine} before their next restart"
        )
    )
    if plan.mode == "dynamic":
        s.append(
            f"for each lost controller ({', '.join(map(str, plan.lost))}), on its host: wipe its metadata log dir, "
            f"format it afresh as an observer: `{fmt}` followed by its server.properties (it gets a new directory "
            f"id), start it, then add it back: `quorumctl add-controller {at} --command-config` followed by its "
            "server.properties"
        )
        s.append("check: `quorumctl describe status` lists every voter, `describe replication` shows equal end offsets")
    else:
        s.append(
            "grow back through a dynamic quorum (Kafka 4.1): "
            f"`kafka-features.sh {at} upgrade --feature kraft.version=1`; "
            "then for each new controller: a server.properties with controller.quorum.bootstrap.servers="
            + (addr or f"node {nid}'s host:port")
            + f" instead of controller.quorum.voters, `{fmt}` followed by that file, start it, "
            f"`quorumctl add-controller {at} --command-config` followed by that file"
        )
        if (r.quorum_state or {}).get("data_version") == 0:
            s.append(
                "this quorum-state (data_version 0) lists the voters; Kafka before 3.9 refuses to start when "
                "they differ from controller.quorum.voters: when the voter set changes again, stop the node "
                "and delete its quorum-state (Kafka's advice)"
            )
        s.append(
            "or stay static, one new controller at a time (never two empty voters at once: they could elect "
            "each other with an empty log): format it with -t "
            + (cid or "the cluster id")
            + ", list it in controller.quorum.voters "
            "on every node, restart the voters, wait until it has caught up, then the next one"
        )
    for o in plan.replicas:
        if o.role == "voter":
            s.append(
                f"node {o.replica.node_id} (given, not chosen): start it after node {nid} leads; it follows as "
                "an observer, then add it back as a voter"
            )


# -- applying -----------------------------------------------------------------------


def apply_recovery(plan: RecoveryPlan, backup_root: str, backup_roots: dict[str, str] | None = None) -> dict:
    """Carry out the plan crash-safely (the caller holds every given log dir's lock):
    the other replicas' truncations first, then the survivor's directory."""
    if plan.refusal:
        raise Refused(plan.refusal)
    report: dict = {"truncated": []}
    r = plan.survivor
    live = real_partition_dir(r.partition_dir)
    check_backup_root(backup_root, r.log_dir, live)
    cuts = [
        (rp, (backup_roots or {}).get(rp.replica.log_dir) or default_backup_root(rp.replica.log_dir))
        for rp in plan.replicas
        if rp.truncation is not None and rp.truncation.changes
    ]
    for rp, root in cuts:  # every backup dir checked before the first change
        check_backup_root(root, rp.replica.log_dir, real_partition_dir(rp.replica.partition_dir))
    for rp, root in cuts:
        assert rp.truncation is not None  # cuts holds only the replicas with a truncation
        rep = apply_plan(rp.truncation, root)
        report["truncated"].append({"node_id": rp.replica.node_id, **rep})
    report.update(
        rebuild_partition(r, plan.base, plan.changes, backup_root, plan.to_json(), "recover-", "recover", "recovery")
    )
    return report


def rebuild_partition(
    target: Replica, base: Replica, changes: list[Change], backup_root: str, doc: dict, label: str, key: str, what: str
) -> dict:
    """`partition_changes` carried out on `target` crash-safely (the caller holds its
    lock and checked the backup root): the new directory built from the target's own
    (unchanged files hard-linked) or from a copy of the base's, with the control batch
    appended and the checkpoint and quorum-state written new, then swapped in."""
    live = real_partition_dir(target.partition_dir)
    base_dir = real_partition_dir(base.partition_dir)
    copy_base = base is not target
    changed = {os.path.basename(c.path): c for c in changes if c.path != target.partition_dir}

    def build(staging: str, live_stat) -> None:
        copy_owner(live_stat, staging)
        src_dir = base_dir if copy_base else live
        skip = {state_files.QUORUM_STATE} | {os.path.basename(x) for x in base.files.ignored}
        for name in sorted(os.listdir(src_dir)):
            if name in skip:  # ours is written below; transient files Kafka deletes at start-up
                continue
            src, dst = os.path.join(src_dir, name), os.path.join(staging, name)
            c = changed.get(name)
            if c is None:
                if copy_base:
                    fsutil.step(f"copy {name}")
                    fsutil.copy_prefix(src, dst, os.path.getsize(src))
                    _own(live_stat, dst)
                else:
                    os.link(src, dst)
                continue
            fsutil.step(f"write the new {name}")
            if c.append_at is not None:
                fsutil.copy_prefix(src, dst, c.append_at)
                with open(dst, "ab") as f:
                    f.write(c.new_bytes)
                    f.flush()
                    os.fsync(f.fileno())
            else:
                fsutil.write_synced(dst, c.new_bytes)
            _own(live_stat, dst)
        for name, c in changed.items():  # files the source did not have (quorum-state, checkpoint)
            if not os.path.exists(os.path.join(staging, name)):
                fsutil.step(f"write the new {name}")
                fsutil.write_synced(os.path.join(staging, name), c.new_bytes)
                _own(live_stat, os.path.join(staging, name))
        fsutil.fsync_dir(staging)

    keep = set(os.listdir(live)) if copy_base else set(changed)
    return replace_partition_dir(live, backup_root, label, key, doc, build, keep, what, {})


def _own(dir_stat, path: str) -> None:
    """A file written into the survivor's directory: owned as that directory (Kafka's
    user), mode 0644 as Kafka creates its files."""
    os.chmod(path, 0o644)
    try:
        os.chown(path, dir_stat.st_uid, dir_stat.st_gid)
    except PermissionError:
        pass


@dataclass(frozen=True, kw_only=True)
class RecoverRequest:
    """What `recover` is asked: the replicas' log dirs, the voters declared lost and how
    to act (cli/recover.py reads it from the command line and the configs)."""

    targets: Sequence[str]  # the surviving controllers' log dirs
    lost: Sequence[int]  # --lost-voters
    static_voters: dict[int, str] | None = None  # controller.quorum.voters of the survivor's config
    survivor: int | None = None  # --survivor
    replicas: Sequence[str] = ()  # --replica: brokers' and observers' log dirs
    force_lost: Sequence[int] = ()
    unread: Sequence[int] = ()  # --no-replica
    witnesses: Sequence = ()  # [(who, None, [(host, port)])] also asked, such as --bootstrap-server
    apply: bool = False
    backup_dir: str | None = None


def run(request: RecoverRequest, probe=None) -> tuple[RecoveryPlan, dict | None, int | None]:
    """Plan the recovery from the given log dirs, probe the declared-lost voters and ask
    every other node with `probe(lost endpoints, witnesses, cluster id) -> ([VoterProbe],
    [Witness])` (live/liveness.probe_voters, given by the caller: storage does not
    speak the wire; the witnesses are the registered brokers and controllers and the
    request's), and, with `apply` and no refusal, carry it out holding the .lock of every
    log dir it writes or copies from (the survivor, the base, the replicas it truncates;
    a replica only read may keep running: with no leader its log cannot change). Under
    the locks everything is planned and probed again: the plan must come from logs no
    Kafka can still change, and from voters that are still silent. Returns the plan, the
    apply report (None on a dry run) and, on a dry run, the pid of a Kafka holding the
    survivor's lock."""
    from ..raft.replica import load_replica, resolve_partition_dir

    def make() -> RecoveryPlan:
        p = plan_recovery(
            [load_replica(t) for t in request.targets],
            list(request.lost),
            request.static_voters,
            request.survivor,
            replicas=[load_replica(t) for t in request.replicas],
            unread=list(request.unread),
        )
        if probe is not None:
            found, seen = probe(p.lost_endpoints, p.witness_endpoints + list(request.witnesses), p.cluster_id)
            p.judge_probes(found, list(request.force_lost), seen)
        return p

    plan = make()
    report = None
    if request.apply and not plan.refusal:
        locks = []
        touched = [
            x.replica.log_dir
            for x in plan.replicas
            if x.action in ("append", "keep", "replace", "base") or x.truncation is not None
        ]
        try:
            for d in dict.fromkeys(resolve_partition_dir(t)[0] for t in touched):
                locks.append(fsutil.LogDirLock(d).acquire())
            plan = make()
            if not plan.refusal:
                report = apply_recovery(plan, request.backup_dir or default_backup_root(plan.survivor.log_dir))
        finally:
            for lk in locks:
                lk.release()
    holder = None if request.apply else fsutil.lock_holder(plan.survivor.log_dir)
    return plan, report, holder
