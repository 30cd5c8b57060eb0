"""`voters set-endpoints`: change the endpoints the voter set stores, offline, on
every stopped controller, when no leader can be elected because they are stale
(KAFKA-20661: a dynamic quorum whose controllers all moved to new names or
addresses cannot reach each other; nothing live can update the VotersRecord).

The rules are recover's (ops/recover.py; docs/recovery.md says why):

- **Every voter's log dir is given** (its directory id must be the voter set's),
  and nothing else: the most up-to-date of them (Raft's election rule: last
  epoch, then log end offset) holds every committed entry, since a committed
  entry is on a majority and the election winner among all voters has it. It is
  the *base*. Brokers and observers hold nothing committed that the base lacks,
  and every epoch they have seen was started by a vote some voter's files record.
- **Write only in a new epoch, the same batch everywhere.** One control batch
  holding a VotersRecord (the same voter ids, directory ids and supported
  kraft.version ranges; the new endpoints) is appended at the base's log end in
  epoch E, one above every epoch any voter's files show (log, checkpoint,
  quorum-state, snapshots), to every voter's log: each voter's partition
  directory becomes the base's log plus that batch, and quorum-state says "no
  leader, no vote" in E. No replica can hold another batch at that (offset, E).
  At start-up Kafka reads the whole log, committed or not, and the last
  VotersRecord is the voter set (KRaftControlRecordStateMachine): the voters
  reach each other at the new endpoints and elect a leader in E+1, whose
  LeaderChange commits the batch.
- **Refuse while any controller answers**, on a stored endpoint or a new one (the
  caller's probe, live/liveness.py), while any registered broker sees a leader,
  and (with --apply) while Kafka holds any voter's `.lock`.
- Applying: every voter's `.lock` taken, the plan made again under the locks,
  each partition directory rebuilt beside the live one and swapped in with one
  atomic exchange (recover's `rebuild_partition`), the replaced files kept as the
  backup; the other voters first, the base last. A crash in between leaves some
  voters with the batch and some without; run again, the plan takes the most
  up-to-date voter (one with the batch) as the base and copies it to the rest
  without a second batch (its voter set already holds the new endpoints).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

from ..errors import InputError, Refused
from ..raft import epochs, logmatch
from ..raft.replica import Replica
from . import fsutil
from .backups import check_backup_root, default_backup_root, real_partition_dir
from .plan import RepairPlan, ReplicaStep
from .recover import Change, highest_epoch_seen, partition_changes, rebuild_partition, registrations, summarize_entries


class EndpointsError(InputError):
    """A change of endpoints that cannot be planned as asked (exit 2, as every bad input)."""


ENDPOINT = re.compile(r"^(\d+)=([A-Za-z0-9_.-]+)://(\[[0-9A-Fa-f:.]+\]|[^:/\s\[\]]+):(\d+)$")
# the characters Kafka accepts in a listener's host (its listener parser, config/server.py)
HOST = re.compile(r"^[0-9A-Za-z%._-]+$")


def parse_endpoints(specs: list[str]) -> dict[int, list[dict]]:
    """`ID=LISTENER://host:port` (repeatable, several listeners of one id by
    repeating it) as id -> [{name, host, port}]."""
    out: dict[int, list[dict]] = {}
    for spec in specs:
        m = ENDPOINT.match(spec.strip())
        if not m:
            raise EndpointsError(
                f"--endpoint {spec!r}: expected ID=LISTENER://HOST:PORT (e.g. 1=CONTROLLER://c1.new.example:9093)"
            )
        port = int(m.group(4))
        if not 0 < port < 65536:
            raise EndpointsError(f"--endpoint {spec!r}: port {port} is not between 1 and 65535")
        # Kafka upper-cases listener names wherever it reads them (ListenerName.normalised)
        vid, name, host = int(m.group(1)), m.group(2).upper(), m.group(3).strip("[]")
        if not m.group(3).startswith("[") and not HOST.match(host):
            raise EndpointsError(
                f"--endpoint {spec!r}: {host!r} is not a host name or address (letters, digits, '.', '-', '_')"
            )
        if any(e["name"] == name for e in out.get(vid, [])):
            raise EndpointsError(f"--endpoint {spec!r}: voter {vid} is given the listener {name} twice")
        out.setdefault(vid, []).append({"name": name, "host": host, "port": port})
    if not out:
        raise EndpointsError(
            "give the new endpoints with --endpoint ID=LISTENER://HOST:PORT (one per voter and listener)"
        )
    return out


def _fatal(vid: int, name: str) -> str:
    return (
        f"Kafka's controllers would stop on it (IllegalStateException \"Unknown endpoint for voter id {vid} "
        f'for listener name {name}") and elect no leader'
    )


def check_listeners(before: list[dict], after: list[dict], new: dict[int, list[dict]], configs: list) -> None:
    """Refuse (EndpointsError, before anything is written) a voter set Kafka's controllers
    could not run on. A controller reaches the other voters at their endpoint for its own
    listener name, the first of its controller.listener.names (KafkaRaftClient looks it up in
    the voter set and throws when it is missing). The names known: those of the voter set
    and of the controllers' controller.listener.names (`configs`); the names every voter
    needs: each controller config's first one, or without a controller config those every
    voter has in the voter set now."""
    import difflib

    known: dict[str, str] = {}
    for v in before:
        for e in v["endpoints"]:
            known.setdefault(e["name"].upper(), "the voter set")
    required: dict[str, str] = {}
    for c in configs:
        if c.is_controller and c.controller_listener_names:
            for n in c.controller_listener_names:
                known.setdefault(n.upper(), f"controller.listener.names of {c.path}")
            required.setdefault(
                c.controller_listener_names[0].upper(), f"the first of {c.path}'s controller.listener.names"
            )
    if not required and before:
        common = set.intersection(*({e["name"].upper() for e in v["endpoints"]} for v in before))
        required = dict.fromkeys(sorted(common), "every voter has it in the voter set")
    for vid, eps in sorted(new.items()):
        for e in eps:
            if e["name"] in known:
                continue
            close = difflib.get_close_matches(e["name"], list(known), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}? " if close else ""
            raise EndpointsError(
                f"--endpoint {vid}={endpoint_text(e)}: {e['name']} is no controller listener "
                f"(known: {', '.join(sorted(known)) or 'none'}: the voter set's listeners and the "
                f"controller.listener.names of the configs given with -c); {hint}a listener renamed needs the "
                "controllers' new server.properties with -c"
            )
    for v in after:
        names = {e["name"].upper() for e in v["endpoints"]}
        for name, why in required.items():
            if name not in names:
                raise EndpointsError(
                    f"voter {v['voterId']} would have no {name} endpoint ({why}; its endpoints: "
                    f"{', '.join(endpoint_text(e) for e in v['endpoints'])}): {_fatal(v['voterId'], name)}"
                )
    seen: dict[tuple[str, int], int] = {}
    for v in after:
        for e in v["endpoints"]:
            key = (e["host"].lower(), e["port"])
            other = seen.setdefault(key, v["voterId"])
            if other != v["voterId"]:
                raise EndpointsError(
                    f"voters {other} and {v['voterId']} would both be at {endpoint_text(e).split('://', 1)[1]}: "
                    f"one process listens on one address, so Kafka would send voter {v['voterId']}'s requests "
                    f"to voter {other} (or the reverse); give each voter its own endpoint"
                )
            if sum((x["host"].lower(), x["port"]) == key for x in v["endpoints"]) > 1:
                raise EndpointsError(
                    f"voter {v['voterId']} would have two listeners at {e['host']}:{e['port']}: one port serves "
                    "one listener"
                )


def endpoint_text(e: dict) -> str:
    host = f"[{e['host']}]" if ":" in e["host"] else e["host"]
    return f"{e['name']}://{host}:{e['port']}"


@dataclass
class VoterPlan(ReplicaStep):
    """What the change does to one voter (action: append, to the base; replace, by a copy
    of the base, then the batch) and what that voter loses."""

    changes: list[Change] = field(default_factory=list)

    def to_json(self) -> dict:
        r = self.replica
        return {
            "node_id": r.node_id,
            "log_dir": r.log_dir,
            "partition_dir": r.partition_dir,
            "last_epoch": r.last_epoch,
            "log_end_offset": r.log_end,
            "action": self.action,
            "keeps_to": self.keeps_to,
            "loses": self.losses,
            "changes": [{"file": c.path, "change": c.what} for c in self.changes],
        }


@dataclass
class EndpointsPlan(RepairPlan):
    voters_before: list[dict]  # the base's last VotersRecord's voters
    voters_after: list[dict]
    append: bool  # False: the base already holds the new endpoints (a run interrupted)
    voters: list[VoterPlan] = field(default_factory=list)
    stored: dict[int, list[tuple[str, int]]] = field(default_factory=dict)  # what to probe: old and new

    @property
    def nothing_to_do(self) -> bool:
        return not any(v.changes for v in self.voters)

    def judge_probes(self, probes: list, witnesses: list) -> None:
        """Refuse while a controller of this cluster answers on any endpoint, something
        accepts and stays silent (a frozen controller may wake up), or a witness sees a
        leader. A name that no longer resolves, or an address where nothing answers or
        something else does, is what a stale endpoint looks like: noted."""
        with self.live_refusals_first(probes, witnesses):
            for p in self.probes:
                where = f"voter {p.voter_id}'s endpoint {p.address}: {p.detail}"
                if p.same_cluster_controller(self.cluster_id):
                    self.refuse(
                        f"{where}: a controller of this cluster runs there; stop every controller first "
                        "(set-endpoints changes the logs of stopped controllers only)"
                    )
                elif p.state == "accepts" and p.frozen:
                    self.refuse(
                        f"{where}: something accepts connections there and stays silent, as a frozen "
                        "controller does: kill that process first"
                    )
                elif p.state != "silent" and not p.detail.startswith("cannot resolve"):  # gone, or a stale name
                    self.risks.append(f"{where}: taken as not being a controller of this cluster")
            for w in self.witnesses:
                if w.state == "leader":
                    self.refuse(
                        f"{w.who} at {w.address} {w.detail}: the quorum has a leader, so its endpoints "
                        "are not stale beyond repair: a voter that restarts with new listeners updates "
                        "its endpoints itself (UpdateRaftVoter, KIP-853)"
                    )

    def to_json(self) -> dict:
        return {
            "base": self.base_json(),
            "voters_before": [_voter_json(v) for v in self.voters_before],
            "voters_after": [_voter_json(v) for v in self.voters_after],
            "max_epoch_seen": self.max_epoch_seen,
            "new_epoch": self.new_epoch,
            "append": self.append,
            "replicas": [v.to_json() for v in self.voters],
            **self.answers_json(),
            **self.verdict_json(),
        }


def _voter_json(v: dict) -> dict:
    return {
        "id": v["voterId"],
        "directory_id": v.get("voterDirectoryId"),
        "endpoints": [endpoint_text(e) for e in v.get("endpoints", [])],
    }


def _check_given(replicas: list[Replica]) -> None:
    clusters = sorted({str(r.meta.get("cluster.id")) for r in replicas if r.meta})
    if len(clusters) > 1:
        raise EndpointsError(f"the log dirs belong to different clusters: {', '.join(map(str, clusters))}")
    for r in replicas:
        if r.node_id is None:
            raise EndpointsError(f"{r.log_dir}: no node id (meta.properties missing or unreadable)")
    ids = [r.node_id for r in replicas]
    if len(set(ids)) != len(ids):
        raise EndpointsError(f"the same node id was given twice: {ids}")
    parts = [os.path.realpath(r.partition_dir) for r in replicas]
    if len(set(parts)) != len(parts):
        raise EndpointsError("the same log dir was given twice")


def plan_endpoints(
    replicas: list[Replica], new: dict[int, list[dict]], now_ms: int | None = None, configs: list | None = None
) -> EndpointsPlan:
    """The plan for the voters' log dirs `replicas` (loaded) and the new endpoints `new`
    (parse_endpoints): refused (plan.refusal) when it would not be safe."""
    if not replicas:
        raise EndpointsError("give every voter's log dir")
    # one timestamp for every copy of the batch: the same bytes at the same (offset, epoch) everywhere
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    _check_given(replicas)
    base = max(replicas, key=lambda r: r.election_key)
    if base.voters_record is None:
        raise EndpointsError(
            f"{base.log_dir}: the log holds no VotersRecord (a static quorum, kraft.version 0): "
            "the voters' endpoints are controller.quorum.voters in every node's server.properties; "
            "edit it there"
        )
    before = base.voters_record
    by_id = {v["voterId"]: v for v in before}
    unknown = sorted(set(new) - set(by_id))
    if unknown:
        raise EndpointsError(f"--endpoint names {unknown}, which are not voters (voters {sorted(by_id)})")
    after = [{**v, "endpoints": new.get(v["voterId"], v["endpoints"])} for v in before]
    check_listeners(before, after, new, configs or [])
    seen = max(highest_epoch_seen(r) for r in replicas)
    append = after != before
    plan = EndpointsPlan(before, after, append, base=base, new_epoch=seen + 1 if append else seen, max_epoch_seen=seen)
    refuse = plan.refuse
    for v in before:  # every stored endpoint and every new one: nothing may answer as this cluster's controller
        eps = [(e["host"], e["port"]) for e in v["endpoints"]]
        eps += [(e["host"], e["port"]) for e in new.get(v["voterId"], []) if (e["host"], e["port"]) not in eps]
        plan.stored[v["voterId"]] = eps
    brokers, controllers = registrations(base)
    plan.witness_endpoints = [(f"broker {b}", b, eps) for b, eps in brokers.items()] + [
        (f"controller {c}", c, eps) for c, eps in controllers.items() if c not in by_id
    ]

    given = {r.node_id: r for r in replicas if r.node_id is not None}  # every one has one (_check_given)
    missing = sorted(set(by_id) - set(given))
    if missing:
        refuse(
            f"voter(s) {missing} not given: every voter's log dir must be given (each counts: the most "
            "up-to-date one is the base, and every voter must get the same batch at the same offset and "
            "epoch); a voter whose disk is lost is a case for `quorumctl recover` first"
        )
    extra = sorted(set(given) - set(by_id))
    if extra:
        refuse(
            f"node(s) {extra} are not voters (voters {sorted(by_id)}): give only the voters' log dirs "
            "(brokers and observers fetch the new voter set from the leader)"
        )
    for vid, r in sorted(given.items()):
        mine = (r.meta or {}).get("directory.id")
        if vid in by_id and mine != by_id[vid]["voterDirectoryId"]:
            refuse(
                f"{r.log_dir}: directory id {mine}, but the voter set holds voter {vid} with "
                f"{by_id[vid]['voterDirectoryId']}: not that voter's disk (a replaced disk is a case for "
                f"`quorumctl replace-controller {vid}` once the quorum has a leader)"
            )
    clashes = logmatch.clashes(replicas)
    if clashes:
        refuse(
            clashes[0].describe() + "; the replicas were changed outside Raft before: repair them first "
            "(`quorumctl state` names the replica to truncate)"
        )
    plan.refuse_unusable_base("run this again")
    plan.refuse_no_segment()
    changed = [v["voterId"] for v in after if v != by_id[v["voterId"]]]
    what = "VotersRecord with the same voters, new endpoints for " + "; ".join(
        f"voter {v['voterId']}: " + ", ".join(endpoint_text(e) for e in v["endpoints"])
        for v in after
        if v["voterId"] in changed
    )
    view = base.view()
    for vid, r in sorted(given.items()):
        if vid not in by_id:
            continue
        vp = VoterPlan(replica=r, action="append" if r is base else "replace", keeps_to=r.log_end)
        plan.voters.append(vp)
        if r is not base:
            d = epochs.reconcile(r.view(), view)
            if d.kind == "diverging" and d.new_end is not None:
                vp.keeps_to = d.new_end
                vp.losses = summarize_entries(r, d.new_end, r.log_end)
        same = (r.log_end, r.last_epoch) == (base.log_end, base.last_epoch) and not logmatch.clashes([r, base])
        if plan.refusal is None and (append or not same or (r.quorum_state or {}).get("leaderEpoch") != seen):
            vp.changes = partition_changes(
                r, base, plan.new_epoch, after if append else None, what, sorted(by_id), now_ms
            )
    if not append:
        plan.risks.append(
            f"the voter set of {base.label} already holds these endpoints (a run interrupted "
            "before every voter was changed, or nothing to change): no batch is appended; the "
            "voters that differ become copies of it"
        )
    boot = ",".join(f"{e['host']}:{e['port']}" for v in after for e in v["endpoints"][:1])
    plan.steps = [
        "in every controller's server.properties: advertised.listeners (and listeners) with its new endpoint, and "
        "controller.quorum.bootstrap.servers="
        + ",".join(f"{e['host']}:{e['port']}" for v in after for e in v["endpoints"][:1]),
        "the same controller.quorum.bootstrap.servers in every broker's server.properties",
        "start every controller: they elect a leader in epoch "
        + str(plan.new_epoch + 1)
        + f"; check: `quorumctl describe status --bootstrap-controller {boot}`, then `quorumctl voters "
        f"check --bootstrap-controller {boot}`",
        "restart the brokers with the new controller.quorum.bootstrap.servers",
    ]
    return plan


def apply_endpoints(plan: EndpointsPlan, backup_dir: str | None) -> dict:
    """Carry out the plan (the caller holds every voter's lock): the others first, the base last."""
    if plan.refusal:
        raise Refused(plan.refusal)
    todo = sorted((v for v in plan.voters if v.changes), key=lambda v: v.replica is plan.base)
    roots = {v.replica.log_dir: backup_dir or default_backup_root(v.replica.log_dir) for v in todo}
    for v in todo:  # every backup dir checked before the first change
        check_backup_root(roots[v.replica.log_dir], v.replica.log_dir, real_partition_dir(v.replica.partition_dir))
    done = []
    doc = plan.to_json()
    for v in todo:
        rep = rebuild_partition(
            v.replica,
            plan.base,
            v.changes,
            roots[v.replica.log_dir],
            doc,
            "set-endpoints-",
            "set_endpoints",
            "endpoint change",
        )
        done.append({"node_id": v.replica.node_id, **rep})
    return {"changed": done}


def run(
    targets: list[str],
    new: dict[int, list[dict]],
    apply: bool,
    backup_dir: str | None,
    probe=None,
    configs: list | None = None,
):
    """Plan (and with `apply`, carry out under every voter's lock, planned and probed
    again there) the change of endpoints; `configs`: the controllers' server.properties
    (config.server.load), whose controller.listener.names the new endpoints must match. `probe(stored endpoints, witnesses, cluster id)
    -> ([VoterProbe], [Witness])` is the caller's (ops does not speak the wire).
    Returns (plan, apply report or None, pids of Kafka processes holding a lock)."""
    from ..raft.replica import load_replica, resolve_partition_dir

    def make() -> EndpointsPlan:
        p = plan_endpoints([load_replica(t) for t in targets], new, configs=configs)
        if probe is not None:
            found, seen = probe(p.stored, p.witness_endpoints, p.cluster_id)
            p.judge_probes(found, seen)
        return p

    plan = make()
    report = None
    holders = {}
    for t in targets:
        d = resolve_partition_dir(t)[0]
        pid = fsutil.lock_holder(d)
        if pid is not None:
            holders[d] = pid
    if holders:
        plan.refuse(
            "Kafka still runs on "
            + ", ".join(f"{d} (pid {pid})" for d, pid in holders.items())
            + ": stop every controller first"
        )
    if apply and not plan.refusal and not plan.nothing_to_do:
        locks = []
        try:
            for t in targets:
                locks.append(fsutil.LogDirLock(resolve_partition_dir(t)[0]).acquire())
            plan = make()
            if not plan.refusal:
                report = apply_endpoints(plan, backup_dir)
        finally:
            for lk in locks:
                lk.release()
    return plan, report
