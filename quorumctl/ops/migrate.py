"""`migrate-quorum`: a static quorum (controller.quorum.voters, kraft.version 0)
made dynamic (KIP-853, kraft.version 1), in the order Kafka 4.3's operations
guide gives ("Upgrade"): check, upgrade kraft.version, then replace
controller.quorum.voters by controller.quorum.bootstrap.servers on every node
and roll it. This module judges facts gathered live (live.membership.migrate) or from
log dirs and configs (`offline_facts`); it sends nothing.

Facts from Kafka 4.3.0 (a9ce3221):
- LeaderState.maybeAppendUpgradedKRaftVersion: every voter must support
  kraft.version 1 and the leader must know every voter's directory id (each
  voter sends it in UpdateRaftVoter once it follows a leader);
- FeatureControlManager: every registered broker and controller must support
  the new level; KRaftVersion 1 needs metadata.version 3.9-IV0;
- KafkaRaftServer: a node whose meta.properties lacks directory.id writes one
  when it starts;
- the upgrade from a static voter set exists from Kafka 4.1 (KAFKA-16538): a
  4.0 controller advertises kraft.version 0-1 but cannot take part. Its
  ApiVersions tell 4.1 apart by metadata.version: 4.1-IV0 is 4.1's.
A node restarted with controller.quorum.bootstrap.servers while kraft.version
is still 0 finds no voter set in the log: it cannot join the quorum. Hence the
order, and `configs` refuses to plan before the upgrade.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import InputError, Refused
from ..versions import KRAFT_V1_MIN_LEVEL, NAME_OF, version_name

KRAFT = "kraft.version"
MV = "metadata.version"
VOTERS_KEY = "controller.quorum.voters"
BOOTSTRAP_KEY = "controller.quorum.bootstrap.servers"
KAFKA41_MV = 26  # 4.1-IV0: a node supporting it runs Kafka 4.1 or newer


@dataclass
class NodeFacts:
    """One node as far as it is known."""

    id: int
    kind: str  # "controller" or "broker"
    address: str | None = None
    voter: bool = False
    observer: bool = False
    directory_id: str | None = None  # the voter set's (dynamic) or meta.properties'
    meta_directory_id: str | None = None  # meta.properties' directory.id, when read
    supported: dict[str, tuple[int, int]] | None = None
    voters_conf: str | None = None  # controller.quorum.voters as the node runs it / its file says
    bootstrap_conf: str | None = None  # controller.quorum.bootstrap.servers
    conf_source: str | None = None  # "running" (DescribeConfigs) or a file path
    caught_up: bool | None = None
    error: str | None = None  # why its ranges are not known (it did not answer)
    conf_error: str | None = None  # why its running settings are not known

    @property
    def conf_state(self) -> str | None:
        """ "static" (voters set), "dynamic" (only bootstrap servers), "both", "none"; None: not known."""
        if self.conf_source is None:
            return None
        v, b = bool(self.voters_conf), bool(self.bootstrap_conf)
        return "both" if v and b else "static" if v else "dynamic" if b else "none"


@dataclass
class Facts:
    mode: str  # "live" or "offline"
    source: str
    kraft_version: int | None
    metadata_version: int | None
    leader: int | None
    voters: dict[int, list[str]]  # voter id -> its controller endpoints (host:port)
    nodes: list[NodeFacts]
    verdict: str | None = None  # Kafka's answer to UpdateFeatures kraft.version=1 validateOnly
    verdict_ok: bool | None = None
    notes: list[str] = field(default_factory=list)

    def node(self, nid: int, kind: str | None = None) -> NodeFacts | None:
        return next((n for n in self.nodes if n.id == nid and (kind is None or n.kind == kind)), None)

    @property
    def controllers(self) -> list[NodeFacts]:
        return sorted((n for n in self.nodes if n.kind == "controller"), key=lambda n: n.id)

    @property
    def brokers(self) -> list[NodeFacts]:
        return sorted((n for n in self.nodes if n.kind == "broker"), key=lambda n: n.id)


@dataclass
class Check:
    name: str
    status: str  # "ok", "problem", "unknown"
    detail: str
    fix: str | None = None
    node: int | None = None


def _check(
    out: list[Check], name: str, ok: bool | None, detail: str, fix: str | None = None, node: int | None = None
) -> None:
    out.append(Check(name, "ok" if ok else "unknown" if ok is None else "problem", detail, None if ok else fix, node))


def _mv_name(level: int | None) -> str:
    return "unknown" if level is None else NAME_OF.get(level, version_name(level))


# -- the preflight -----------------------------------------------------------------------


def connection_args(f: Facts, given: list[str] | None = None, config_args: Sequence[str] = ()) -> list[str] | None:
    """The options that reach the cluster in a printed command line: the bootstrap option
    the preflight was given (live: `given`, as `ClusterAccess.bootstrap_args()` writes it),
    or the voters' stored endpoints (offline), then `config_args` (--command-config);
    None when no address is known."""
    if not given:
        eps = [e[0] for _, e in sorted(f.voters.items()) if e]
        if not eps:
            return None
        given = ["--bootstrap-controller", ",".join(eps)]
    return given + list(config_args)


def _command(*args: str) -> str:
    import shlex

    return shlex.join(["quorumctl", *args])


def preflight(f: Facts, via: list[str] | None = None) -> dict:
    """Every check before kraft.version 1, in the order to fix them: the nodes'
    software, metadata.version, directory ids, the quorum, the configs, Kafka's
    own verdict. Verdict "dynamic" (already kraft.version 1: the configs step is
    next), "ready" (next: the upgrade's command line) or "blocked" (with what to do first).
    The command lines printed reach the cluster with `via` (connection_args): they run as
    printed."""
    via = via if via is not None else connection_args(f)
    checks: list[Check] = []
    kv = f.kraft_version
    _check(
        checks,
        "kraft.version",
        kv is not None,
        "kraft.version is not known"
        if kv is None
        else f"finalized kraft.version {kv}: " + ("a dynamic quorum already" if kv >= 1 else "a static quorum"),
        "ask a node that answers (or give a controller's log dir)",
    )
    for n in f.controllers + f.brokers:
        checks.append(_software(n, f.mode))
    mv = f.metadata_version
    _check(
        checks,
        "metadata.version",
        None if mv is None else mv >= KRAFT_V1_MIN_LEVEL,
        f"finalized metadata.version {_mv_name(mv)} (kraft.version 1 needs {NAME_OF[KRAFT_V1_MIN_LEVEL]} or newer)",
        # metadata.version alone: a --release-version of 3.9-IV0 or newer also asks for kraft.version 1
        _command("features", "upgrade", "--metadata", NAME_OF[KRAFT_V1_MIN_LEVEL], *via, "--apply")
        if via
        else f"features upgrade --metadata {NAME_OF[KRAFT_V1_MIN_LEVEL]} (or newer) --apply against a controller",
    )
    for n in f.controllers:
        checks.append(_directory_id(f, n))
    if f.mode == "live":
        _check(
            checks,
            "quorum",
            f.leader is not None and f.leader >= 0,
            f"leader {f.leader}" if f.leader is not None and f.leader >= 0 else "no leader",
            "bring a majority of the voters up (describe health names who is missing)",
        )
        for n in f.controllers:
            if n.voter and n.caught_up is False:
                _check(
                    checks,
                    "quorum",
                    False,
                    f"voter {n.id} is not caught up with the leader",
                    f"wait until voter {n.id} has caught up (describe replication)",
                    n.id,
                )
        for n in f.controllers:
            if not n.voter:
                _check(
                    checks,
                    "quorum",
                    True,
                    f"controller {n.id} is not a voter (an observer): it stays one after "
                    f"the migration; add-controller adds it once the quorum is dynamic",
                    node=n.id,
                )
    for n in f.controllers + f.brokers:
        if (c := _static_config(f, n)) is not None:
            checks.append(c)
    if f.mode == "live" and kv == 0:
        _check(
            checks,
            "kafka verdict",
            f.verdict_ok,
            f.verdict or "Kafka was not asked",
            "fix what Kafka names above, then run the preflight again",
        )
    problems = [c for c in checks if c.status == "problem"]
    verdict = "dynamic" if kv is not None and kv >= 1 else "blocked" if problems or kv is None else "ready"
    first = problems[0].fix if problems else None
    nxt: str | None
    if verdict == "dynamic":
        nxt = "quorumctl migrate-quorum configs (replace controller.quorum.voters on every node, one roll at a time)"
    elif verdict == "ready":
        nxt = (
            _command("migrate-quorum", "upgrade", *via, "--apply")
            if via
            else "quorumctl migrate-quorum upgrade --apply with --bootstrap-controller and a controller's address "
            "(not known here): kraft.version 1"
        )
    else:
        nxt = first
    return {"verdict": verdict, "checks": checks, "first": first, "next": nxt}


def _software(n: NodeFacts, mode: str) -> Check:
    what = f"{n.kind} {n.id}"
    if n.supported is None:
        return Check(
            "software",
            "problem" if n.kind == "controller" and mode == "live" else "unknown",
            f"{what}: supported ranges not known ({n.error or 'not asked'})",
            f"make controller {n.id} reachable, or check it runs Kafka 4.1+" if mode == "live" else None,
            n.id,
        )
    lo, hi = n.supported.get(KRAFT, (0, 0))
    mv_hi = n.supported.get(MV, (0, 0))[1]
    if not lo <= 1 <= hi:
        return Check(
            "software",
            "problem",
            f"{what} does not support kraft.version 1 (supports {lo}-{hi})",
            f"roll {what} to Kafka 4.1 or newer first",
            n.id,
        )
    if n.kind == "controller" and mv_hi < KAFKA41_MV:
        return Check(
            "software",
            "problem",
            f"{what} runs Kafka older than 4.1 (supports metadata.version up to {_mv_name(mv_hi)}): it "
            f"cannot move a static voter set to kraft.version 1",
            f"roll {what} to Kafka 4.1 or newer first",
            n.id,
        )
    return Check(
        "software",
        "ok",
        f"{what} supports kraft.version {lo}-{hi}, metadata.version up to {_mv_name(mv_hi)}",
        None,
        n.id,
    )


def _directory_id(f: Facts, n: NodeFacts) -> Check:
    did = n.directory_id or n.meta_directory_id
    if did:
        where = "the voter set" if n.directory_id else "meta.properties"
        if n.directory_id and n.meta_directory_id and n.directory_id != n.meta_directory_id:
            return Check(
                "directory id",
                "problem",
                f"controller {n.id}: the voter set holds directory id {n.directory_id}, its meta.properties "
                f"{n.meta_directory_id} (a replaced disk?)",
                f"controller {n.id} runs as an observer: remove the old directory id and add the new one "
                f"(remove-controller, add-controller)",
                n.id,
            )
        return Check("directory id", "ok", f"controller {n.id} has directory id {did} ({where})", None, n.id)
    if f.mode == "live" and f.kraft_version == 0 and f.verdict_ok:
        return Check(
            "directory id",
            "ok",
            f"controller {n.id}: the leader knows its directory id (Kafka's verdict; a static quorum does not show it)",
            None,
            n.id,
        )
    if f.mode == "live":
        return Check(
            "directory id",
            "unknown",
            f"controller {n.id}: a static quorum does not show directory ids; "
            "Kafka's verdict says whether the leader knows them",
            None,
            n.id,
        )
    return Check(
        "directory id",
        "problem",
        f"controller {n.id}: no directory id known",
        f"restart controller {n.id} on Kafka 4.1 or newer: it writes a directory.id into meta.properties "
        f"when it starts, and tells the leader (UpdateRaftVoter)",
        n.id,
    )


def _static_config(f: Facts, n: NodeFacts) -> Check | None:
    """Before the upgrade: a node's controller.quorum.voters names the voter set."""
    if n.conf_source is None or (f.kraft_version or 0) >= 1:
        return None
    name = "config"
    if not n.voters_conf:
        return Check(
            name,
            "problem",
            f"{n.kind} {n.id} ({n.conf_source}): {VOTERS_KEY} is not set in a static quorum",
            f"set {VOTERS_KEY} on {n.kind} {n.id} as on the other nodes",
            n.id,
        )
    try:
        theirs = parse_voters(n.voters_conf, n.conf_source)
    except InputError as e:
        return Check(name, "problem", str(e), f"fix {VOTERS_KEY} of {n.kind} {n.id}", n.id)
    if f.voters and theirs != f.voters:
        return Check(
            name,
            "problem",
            f"{n.kind} {n.id} ({n.conf_source}): {VOTERS_KEY}={n.voters_conf} differs from "
            f"the voter set {voters_text(f.voters)}",
            f"make {VOTERS_KEY} the same on every node first",
            n.id,
        )
    return Check(name, "ok", f"{n.kind} {n.id} ({n.conf_source}): {VOTERS_KEY}={n.voters_conf}", None, n.id)


def parse_voters(text: str, source: str) -> dict[int, list[str]]:
    """controller.quorum.voters (`id@host:port,...`) as voter id -> [host:port]."""
    out: dict[int, list[str]] = {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        vid, at, addr = entry.partition("@")
        if not at or not vid.strip().isdigit() or ":" not in addr:
            raise InputError(f"{source}: {VOTERS_KEY}: cannot parse {entry!r} as id@host:port")
        out.setdefault(int(vid), []).append(addr.strip())
    return out


def voters_text(voters: dict[int, list[str]]) -> str:
    return ",".join(f"{i}@{a}" for i, addrs in sorted(voters.items()) for a in addrs[:1])


def bootstrap_value(voters: dict[int, list[str]]) -> str:
    """controller.quorum.bootstrap.servers for this voter set: every voter's endpoint, by id."""
    return ",".join(addrs[0] for _i, addrs in sorted(voters.items()) if addrs)


# -- the config step -----------------------------------------------------------------------


def roll_order(f: Facts) -> list[NodeFacts]:
    """Controllers first (so that every controller a broker may bootstrap from already
    runs the dynamic setting), the leader last among them (one leader change, not
    one per roll); then the brokers. By id within each."""
    ctl = f.controllers
    ctl = [n for n in ctl if n.id != f.leader] + [n for n in ctl if n.id == f.leader]
    return ctl + f.brokers


def config_plan(f: Facts) -> dict:
    """The per-node property lines, in roll order; refused before kraft.version 1."""
    if f.kraft_version is None or f.kraft_version < 1:
        raise MigrateRefused(
            f"kraft.version is {f.kraft_version if f.kraft_version is not None else 'unknown'}: run "
            "`quorumctl migrate-quorum upgrade --apply` first. A node restarted without "
            f"{VOTERS_KEY} before kraft.version 1 finds no voter set and cannot join the quorum"
        )
    value = bootstrap_value(f.voters)
    steps = []
    for n in roll_order(f):
        state = n.conf_state
        remove = (
            f"{VOTERS_KEY}={n.voters_conf}"
            if n.voters_conf
            else (None if state is not None else f"{VOTERS_KEY} (its value not known here)")
        )
        steps.append(
            {
                "node": n,
                "state": state,
                "remove": remove,
                "add": f"{BOOTSTRAP_KEY}={value}",
                "done": state == "dynamic" and _same_servers(n.bootstrap_conf, value),
            }
        )
    return {"bootstrap": value, "steps": steps}


def _same_servers(a: str | None, b: str) -> bool:
    return a is not None and sorted(x.strip() for x in a.split(",") if x.strip()) == sorted(b.split(","))


def _add_controller_fix(f: Facts, n: NodeFacts) -> str:
    """add-controller's command line for an observer controller: the voters' endpoints and its
    server.properties when read from a file; what is not known is said in words."""
    via = connection_args(f)
    conf = n.conf_source if n.conf_source not in (None, "running") else None
    if via and conf:
        return "add it: " + _command("add-controller", *via, "--command-config", conf)
    return (
        "add it: "
        + (
            _command("add-controller", *via)
            if via
            else "quorumctl add-controller with --bootstrap-controller and the voters' addresses (not known here), and"
        )
        + f" --command-config followed by controller {n.id}'s server.properties"
        + ("" if conf else " (not read here)")
    )


def verify_roll(f: Facts) -> dict:
    """After a roll: every controller a voter with its directory id, none an observer,
    configs consistent; the next node to roll (or none: the migration is done)."""
    checks: list[Check] = []
    _check(
        checks,
        "kraft.version",
        f.kraft_version is not None and f.kraft_version >= 1,
        f"finalized kraft.version {f.kraft_version}",
        "run `quorumctl migrate-quorum upgrade --apply` first",
    )
    _check(
        checks,
        "quorum",
        f.leader is not None and f.leader >= 0,
        f"leader {f.leader}" if f.leader is not None and f.leader >= 0 else "no leader",
        "bring the rolled node back (its log names why it stopped): the quorum has no leader",
    )
    value = bootstrap_value(f.voters)
    for n in f.controllers:
        if not n.voter:
            _check(
                checks,
                "voters",
                False,
                f"controller {n.id} is an observer, not a voter",
                _add_controller_fix(f, n),
                n.id,
            )
        elif not n.directory_id:
            _check(
                checks,
                "voters",
                False,
                f"voter {n.id} has no directory id in the voter set",
                "kraft.version 1 is not in effect yet: run the upgrade step",
                n.id,
            )
        elif n.meta_directory_id and n.meta_directory_id != n.directory_id:
            _check(
                checks,
                "voters",
                False,
                f"voter {n.id}: directory id {n.directory_id} in the voter set, {n.meta_directory_id} in "
                f"meta.properties",
                "a replaced disk: remove-controller the old id, add-controller the new",
                n.id,
            )
        else:
            _check(
                checks, "voters", True, f"controller {n.id} is a voter with directory id {n.directory_id}", node=n.id
            )
        if n.voter and n.supported is None and f.mode == "live":
            _check(
                checks,
                "reachable",
                False,
                f"controller {n.id}: {n.error or 'did not answer'}",
                f"wait until controller {n.id} is back up before the next roll",
                n.id,
            )
    for n in roll_order(f):
        st = n.conf_state
        if st in ("dynamic", "both") and not _same_servers(n.bootstrap_conf, value):
            _check(
                checks,
                "config",
                False,
                f"{n.kind} {n.id} ({n.conf_source}): {BOOTSTRAP_KEY}={n.bootstrap_conf} "
                f"does not list every voter ({value})",
                f"set {BOOTSTRAP_KEY}={value} on {n.kind} {n.id}",
                n.id,
            )
        elif st == "none":
            _check(
                checks,
                "config",
                False,
                f"{n.kind} {n.id} ({n.conf_source}): neither {VOTERS_KEY} nor {BOOTSTRAP_KEY} is set",
                f"set {BOOTSTRAP_KEY}={value} on {n.kind} {n.id}",
                n.id,
            )
    pending = [n for n in roll_order(f) if n.conf_state in ("static", "both")]
    unknown = [n for n in roll_order(f) if n.conf_state is None]
    problems = [c for c in checks if c.status == "problem"]
    nxt = pending[0] if pending else None
    return {
        "checks": checks,
        "ok": not problems,
        "next": nxt,
        "pending": pending,
        "unknown": unknown,
        "done": not pending and not unknown and not problems,
        "bootstrap": value,
    }


class MigrateRefused(Refused):
    """A step asked for out of order (exit 1: nothing was done)."""


# -- offline facts: log dirs and configs ---------------------------------------------------


def offline_facts(
    log_dirs: list[str], configs: list[str], registrations: list | None, finalized: dict[str, int] | None
) -> Facts:
    """Facts from controllers' log dirs (meta.properties' node and directory ids, the
    KRaftVersion/Voters records) and nodes' configs (-c); `registrations` and
    `finalized`: the image's (image.feature_update.check_offline), when read."""
    from ..config.server import load
    from ..logdir.features import finalized_levels

    nodes: dict[tuple[str, int], NodeFacts] = {}
    notes: list[str] = []
    voters: dict[int, list[str]] = {}
    kv: int | None = None
    for path in configs:
        cfg = load(path)
        if cfg.node_id is None:
            raise InputError(f"{path}: node.id is not set")
        kind = "controller" if cfg.is_controller else "broker"
        n = nodes.setdefault((kind, cfg.node_id), NodeFacts(cfg.node_id, kind))
        n.voters_conf, n.bootstrap_conf, n.conf_source = (
            cfg.quorum_voters or None,
            cfg.quorum_bootstrap_servers or None,
            path,
        )
        if cfg.quorum_voters and not voters:
            voters = parse_voters(cfg.quorum_voters, path)
        if kind == "controller":
            meta = os.path.join(cfg.metadata_log_dir, "meta.properties")
            if os.path.isfile(meta) and cfg.metadata_log_dir not in log_dirs:
                log_dirs = [*log_dirs, cfg.metadata_log_dir]
    levels: dict[str, int] | None = None
    for d in log_dirs:
        meta, replica = _read_log_dir(d)
        nid = meta.get("node.id")
        if nid is None:
            raise InputError(f"{d}: no node.id in meta.properties")
        n = nodes.setdefault(("controller", nid), NodeFacts(nid, "controller"))
        n.meta_directory_id = meta.get("directory.id")
        if replica is not None and replica.kraft_version is not None:
            kv = max(kv or 0, replica.kraft_version)
        for v in ((replica.voters if replica else None) or {}).get("voters") or ():  # a VotersRecord: dynamic
            vn = nodes.setdefault(("controller", v["id"]), NodeFacts(v["id"], "controller"))
            vn.voter, vn.directory_id = True, v["directory_id"]
            if v["endpoints"] and v["id"] not in voters:
                voters[v["id"]] = [v["endpoints"][0].split("://", 1)[-1]]
        if levels is None:
            levels = {k: lv.level for k, lv in finalized_levels(replica, d).items()}
    if log_dirs and kv is None:
        kv = 0  # no KRaftVersionRecord anywhere: a static quorum
    for vid in voters:
        n = nodes.setdefault(("controller", vid), NodeFacts(vid, "controller"))
        n.voter = True
        n.address = voters[vid][0]
    for reg in registrations or ():
        n = nodes.setdefault((reg.kind, reg.id), NodeFacts(reg.id, reg.kind))
        n.supported = reg.supported
        n.address = n.address or reg.address
    for n in nodes.values():
        if n.supported is None:
            n.error = (
                "offline: no registration in the image"
                if registrations is not None
                else "offline: no registration read (the log dir of a node that has run holds them)"
            )
    fin = finalized if finalized is not None else (levels or {})
    if kv is None and KRAFT in fin:
        kv = fin[KRAFT]
    src = ", ".join([*log_dirs, *configs])
    return Facts("offline", src, kv, fin.get(MV), None, voters, list(nodes.values()), notes=notes)


def has_metadata_log(d: str) -> bool:
    """A log dir with a metadata partition (a node that started), or that partition itself."""
    return (
        os.path.isdir(os.path.join(d, "__cluster_metadata-0"))
        or os.path.basename(os.path.normpath(d)) == "__cluster_metadata-0"
    )


def _read_log_dir(d: str):
    """(meta.properties, the metadata replica or None when the dir holds no
    __cluster_metadata-0 yet: formatted, never started)."""
    from ..raft.replica import load_replica
    from .dirinfo import read_dir

    if has_metadata_log(d):
        r = load_replica(d)
        if r.meta is None:
            raise InputError(f"{d}: {r.problems[0] if r.problems else 'no meta.properties'}")
        return r.meta, r
    st = read_dir(d)
    if not st.exists:
        raise InputError(f"{d}: no such directory")
    if not st.is_dir:
        raise InputError(f"{d}: not a directory (expected a controller's metadata log dir)")
    if st.error:
        raise InputError(st.error)
    if st.meta is None:
        raise InputError(f"{d}: not formatted (no meta.properties)")
    return st.meta, None
