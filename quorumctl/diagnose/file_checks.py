"""`doctor`: the misconfigurations that today are found only when a node fails
to start (or, worse, starts and silently does the wrong thing), found from
the files: each finding with a severity, its evidence (file and line, or file
and offset) and the remedy.

What is read: each server.properties given (node.id, process.roles, listeners,
controller.quorum.voters / bootstrap.servers, log dirs), the meta.properties of
every log dir (the configs' and the ones given), and the metadata log of each
(`raft.replica`: the voter set from the last VotersRecord of the latest
snapshot and the log, kraft.version). The voter set the quorum believes in is
the one of the most up-to-date replica given (Raft's election rule), which may
hold an uncommitted change; the others are compared with it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from ..errors import InputError, at_line
from ..openfile import open_regular
from ..config.addresses import parse_address_list, parse_quorum_voters
from ..logdir import statefiles as state_files
from ..config import properties
from ..config.server import ServerConfig, load
from ..versions import KRAFT_V1_MIN_LEVEL
from ..versions import version_name as metadata_version_name
from .findings import Finding, LogDir, Report
from .registrations import image_registrations
from .traps import TRAPS


def _lines(path: str) -> dict[str, int]:
    try:
        with open_regular(path, "a properties file") as f:
            return properties.key_lines(f.read(1 << 22))
    except (InputError, OSError, properties.PropertiesError):
        return {}


def _at(cfg: ServerConfig, key: str) -> str:
    from .bundle import REDACTED, SECRET

    line = _lines(cfg.path).get(key)
    # evidence lands in terminals, tickets and bundles: never a secret's value (SASL mechanism names are not secret)
    value = (
        REDACTED
        if SECRET.search(key) and not key.endswith("mechanisms") and not key.endswith(".protocol")
        else cfg.props.get(key, "")
    )
    return at_line(cfg.path, line, f"{key}={value}") if line else f"{cfg.path}: {key} is not set"


def _endpoint_text(e: dict) -> str:
    return f"{e['name']}://{e['host']}:{e['port']}"


def configured_voters(c: ServerConfig) -> dict[int, tuple[str, int]]:
    """{id: (host, port)} of a config's controller.quorum.voters ({} when it does not parse:
    describe and Kafka report that; doctor compares only what it can read)."""
    try:
        return {i: (a.host, a.port) for i, a in parse_quorum_voters(c.quorum_voters, c.path).items()}
    except InputError:
        return {}


def examine(config_paths: list[str], log_dir_paths: list[str], live_only: bool = False) -> Report:
    """The files' findings; `live_only`: no file given is no error (doctor with only
    --bootstrap-controller: the live checks fill the report)."""
    from ..raft.replica import compare, load_replica

    configs = [load(p) for p in config_paths]
    dirs: dict[str, LogDir] = {}
    for c in configs:
        for path in c.all_dirs():
            entry = dirs.setdefault(os.path.abspath(path), LogDir(path, c))
            if entry.config is not c:
                entry.also.append(c)
    for p in log_dir_paths:
        if not os.path.exists(p):
            raise InputError(f"{p}: no such file or directory")
        if not os.path.isdir(p):
            raise InputError(f"{p}: not a directory (expected a log dir)")
        key = os.path.abspath(p.rstrip("/"))
        if key.endswith("__cluster_metadata-0"):
            key = os.path.dirname(key)
        dirs.setdefault(key, LogDir(key if p.rstrip("/").endswith("__cluster_metadata-0") else p, None))
    if not dirs and not live_only:
        raise InputError("give at least one server.properties (--config), log dir, or --bootstrap-controller")
    for d in dirs.values():
        if not os.path.isdir(d.path):
            d.problem = "missing"
            continue
        if os.path.lexists(d.meta_path):
            try:
                d.meta = state_files.read_meta_properties(d.meta_path)
                d.meta_lines = _lines(d.meta_path)
            except InputError as e:
                d.problem = str(e)
        if os.path.isdir(os.path.join(d.path, "__cluster_metadata-0")):
            d.replica = load_replica(d.path)
        if d.meta is not None:
            from ..ops.dirinfo import starts_on

            d.starts_on = starts_on(d.path)
    findings: list[Finding] = []
    ld = list(dirs.values())

    # the voter set the quorum believes in: the most up-to-date metadata log's (a log
    # without a VotersRecord, kraft.version 0, means a static quorum)
    replicas = [d.replica for d in ld if d.replica is not None]
    voters = best = cmp = None
    followers: dict[str, dict] = {}
    if replicas:
        cmp = compare(replicas) if len(replicas) > 1 else None
        best = replicas[cmp["winner_index"]] if cmp else replicas[0]
        followers = {f["replica"]: f for f in cmp["followers"]} if cmp else {}
    if best is not None and best.voters_record is not None and best.voters is not None:  # both, or neither
        voters = {
            "ids": sorted(v["voterId"] for v in best.voters_record),
            "source": best.voters["source"],
            "node": best.label,
            "partition_dir": best.partition_dir,
            "by_id": {v["voterId"]: v for v in best.voters_record},
        }
    mv = _metadata_version(ld, best)

    _roles_and_listeners(configs, findings)
    _ids(configs, ld, findings)
    _quorum_mode(configs, ld, mv, findings)
    clashing: set = set()
    if best is not None:
        _kraft_versions(ld, best, findings)
        _voter_set_lost(ld, findings)
        clashing = _log_matching(replicas, best, cmp["log_matching"] if cmp and "log_matching" in cmp else [], findings)
    if voters:
        _directory_ids(ld, voters, findings)
        _endpoints(configs, voters, findings, ld)
        uncommitted = _uncommitted_voter_change(ld, best, followers, findings)
        _voter_set_agreement(ld, voters, findings, skip=uncommitted | clashing)
    _node_claimed_twice(ld, findings)
    _static_voters(configs, findings)
    _traps(configs, mv, findings)
    if best is not None:
        voter_ids = set(voters["ids"]) if voters else {i for c in configs for i in configured_voters(c)}
        image_registrations(best, voter_ids, mv, findings)
    for d in ld:
        if d.problem and d.problem != "missing":
            findings.append(
                Finding(
                    "unreadable-meta-properties",
                    "error",
                    d.problem,
                    [d.meta_path],
                    "restore meta.properties from a backup or reformat the directory",
                )
            )
        elif d.problem == "missing" and d.config is not None:
            findings.append(
                Finding(
                    "log-dir-missing",
                    "error",
                    f"{d.path} does not exist",
                    [_at(d.config, "log.dirs" if "log.dirs" in d.config.props else "log.dir")],
                    "create and format it (quorumctl bootstrap format), or fix the configuration",
                )
            )
        elif d.meta is None and not d.problem:
            findings.append(
                Finding(
                    "not-formatted",
                    "error",
                    f"{d.path} has no meta.properties (not formatted)",
                    [d.meta_path],
                    "format it with `quorumctl bootstrap format` (the node refuses "
                    "to start with an unformatted log dir)",
                )
            )
    return Report(configs, ld, voters, findings, mv)


def _roles_and_listeners(configs: list[ServerConfig], out: list[Finding]) -> None:
    for c in configs:
        if not c.process_roles:
            out.append(
                Finding(
                    "no-process-roles",
                    "error",
                    f"{c.path}: process.roles is not set: a ZooKeeper-mode configuration, which Kafka 4 no longer runs",
                    [_at(c, "process.roles")],
                    "set process.roles=broker, controller or broker,controller (KIP-500, KIP-833)",
                )
            )
            continue
        bad = [r for r in c.process_roles if r not in ("broker", "controller")]
        if bad:
            out.append(
                Finding(
                    "bad-process-roles",
                    "error",
                    f"{c.path}: process.roles names {bad}",
                    [_at(c, "process.roles")],
                    "only broker and controller are roles",
                )
            )
        if c.node_id is None:
            out.append(
                Finding(
                    "no-node-id",
                    "error",
                    f"{c.path}: node.id is not set (KRaft needs it)",
                    [_at(c, "node.id")],
                    "set node.id to the id this node was formatted with",
                )
            )
        if not c.controller_listener_names:
            out.append(
                Finding(
                    "no-controller-listener",
                    "error",
                    f"{c.path}: controller.listener.names is not set",
                    [_at(c, "controller.listener.names")],
                    "set it to the controllers' listener name (e.g. CONTROLLER)",
                )
            )
            continue
        name = c.controller_listener_names[0]
        listeners = [ep.split("://", 1)[0].strip() for ep in c.props.get("listeners", "").split(",") if "://" in ep]
        if c.is_controller and name not in listeners:
            out.append(
                Finding(
                    "controller-listener-not-listening",
                    "error",
                    f"{c.path}: a controller, but its controller listener {name} is not in listeners",
                    [_at(c, "controller.listener.names"), _at(c, "listeners")],
                    f"add {name}://host:port to listeners",
                )
            )
        if not c.is_controller and name in listeners:
            out.append(
                Finding(
                    "broker-listens-on-controller-listener",
                    "error",
                    f"{c.path}: a broker only, but listeners has the controller listener {name} "
                    "(Kafka refuses to start: controller listeners are for controllers)",
                    [_at(c, "listeners")],
                    f"remove {name} from the broker's listeners",
                )
            )
        pmap = dict(
            kv.split(":", 1) for kv in c.props.get("listener.security.protocol.map", "").split(",") if ":" in kv
        )
        known = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}
        if name not in pmap and name not in known and "listener.security.protocol.map" in c.props:
            out.append(
                Finding(
                    "controller-listener-no-protocol",
                    "error",
                    f"{c.path}: listener.security.protocol.map has no entry for {name}",
                    [_at(c, "listener.security.protocol.map")],
                    f"add {name}:PLAINTEXT (or SSL/SASL_*)",
                )
            )
        if c.quorum_voters and c.quorum_bootstrap_servers:
            out.append(
                Finding(
                    "both-quorum-settings",
                    "warning",
                    f"{c.path}: both controller.quorum.voters and controller.quorum.bootstrap.servers are "
                    "set; Kafka uses controller.quorum.voters as the (static) voter set",
                    [_at(c, "controller.quorum.voters"), _at(c, "controller.quorum.bootstrap.servers")],
                    "keep one: voters for a static quorum, bootstrap.servers for a dynamic one (KIP-853)",
                )
            )
        if not c.quorum_voters and not c.quorum_bootstrap_servers:
            out.append(
                Finding(
                    "no-quorum-setting",
                    "error",
                    f"{c.path}: neither controller.quorum.voters nor controller.quorum.bootstrap.servers",
                    [c.path],
                    "set one of them",
                )
            )


def _ids(configs: list[ServerConfig], dirs: list[LogDir], out: list[Finding]) -> None:
    clusters: dict[str, list[LogDir]] = {}
    for d in dirs:
        if d.meta and d.meta.get("cluster.id"):
            clusters.setdefault(d.meta["cluster.id"], []).append(d)
    if len(clusters) > 1:
        main = max(clusters, key=lambda k: len(clusters[k]))
        for cid, ds in sorted(clusters.items()):
            if cid == main:
                continue
            for d in ds:
                out.append(
                    Finding(
                        "cluster-id-mismatch",
                        "error",
                        f"{d.path} belongs to cluster {cid}, the other log dirs to {main}",
                        [
                            f"{d.meta_at('cluster.id')}: cluster.id={cid}",
                            f"{clusters[main][0].meta_at('cluster.id')}: cluster.id={main}",
                        ],
                        f"the node refuses to join cluster {main} with it; if it was formatted by mistake, "
                        f"wipe it and format it with -t {main}",
                    )
                )
    for d in dirs:
        if d.also:
            out.append(
                Finding(
                    "log-dir-shared",
                    "error",
                    f"{d.path} is a log dir of several nodes' configs",
                    [_at(x, "log.dirs" if "log.dirs" in x.props else "log.dir") for x in [d.config] + d.also],
                    "every node needs its own log dirs; Kafka's lock lets only one start",
                )
            )
    for d, c in [(x, c) for x in dirs for c in [x.config] + x.also]:
        if c is None or not d.meta or c.node_id is None or d.meta.get("node.id") is None:
            continue
        if d.meta["node.id"] != c.node_id:
            out.append(
                Finding(
                    "node-id-mismatch",
                    "error",
                    f"{d.path} was formatted for node {d.meta['node.id']}, but {c.path} is node {c.node_id}",
                    [f"{d.meta_at('node.id')}: node.id={d.meta['node.id']}", _at(c, "node.id")],
                    "Kafka refuses to start (node.id does not match meta.properties): point the node at "
                    "its own log dirs, or fix node.id",
                )
            )
    seen: dict[str, LogDir] = {}
    for d in dirs:
        did = (d.meta or {}).get("directory.id")
        if did and did in seen:
            out.append(
                Finding(
                    "duplicate-directory-id",
                    "error",
                    f"{d.path} and {seen[did].path} have the same directory.id {did}",
                    [d.meta_at("directory.id"), seen[did].meta_at("directory.id")],
                    "a copied log dir: wipe the copy and format it (each directory needs its own id)",
                )
            )
        elif did:
            seen[did] = d


def _how_histories_differ(a, b) -> str:
    """Two metadata logs of one node id: where they stop agreeing. A log-matching clash
    (different batches at one offset and epoch), else Raft's Fetch exchange of the less
    up-to-date against the other (the first diverging offset and epoch), else one is a
    prefix of the other."""
    from ..raft import epochs
    from ..raft.logmatch import first_clash

    try:
        ka, kb = epochs.election_key(a.view()), epochs.election_key(b.view())
    except ValueError as e:
        return f"their epoch histories cannot be compared ({e})"
    lead, follow = (a, b) if ka >= kb else (b, a)
    end = lambda r, k: f"{r.log_dir} ends at offset {k[1]} in epoch {k[0]}"  # noqa: E731
    ends = f"{end(a, ka)}, {end(b, kb)}"
    clash = first_clash(lead, follow)
    if clash is not None:
        return (
            f"their histories differ from offset {clash.offset}: both hold a batch of epoch {clash.epoch} "
            f"there, different ones ({ends})"
        )
    d = epochs.reconcile(follow.view(), lead.view())
    if d.kind == "diverging" and d.first_diverging is not None:
        off, ep = d.first_diverging
        return (
            f"their histories differ from offset {d.truncate_to}: {lead.log_dir} has epoch {ep} up to offset "
            f"{off}, {follow.log_dir} another history there ({ends})"
        )
    if d.kind == "snapshot":
        return f"{follow.log_dir} ends before {lead.log_dir}'s log starts ({ends})"
    if ka == kb:
        return f"their histories are the same ({ends}): one is a copy of the other"
    return f"{follow.log_dir} holds a prefix of {lead.log_dir}'s history, an older life of the node ({ends})"


def _node_claimed_twice(dirs: list[LogDir], out: list[Finding]) -> None:
    """Two metadata log dirs whose meta.properties claim one node id: a copied or restored
    dir beside the live one, or an older life of the node. Only one can vote as that node;
    the other's history is not the quorum's (Kafka cannot tell them apart by id alone,
    and a static quorum not even by directory id)."""
    by_node: dict[int, list[LogDir]] = {}
    for d in dirs:
        nid = (d.meta or {}).get("node.id")
        if d.replica is not None and nid is not None:
            by_node.setdefault(nid, []).append(d)
    for nid, ds in sorted(by_node.items()):
        for i in range(len(ds)):
            for j in range(i + 1, len(ds)):
                a, b = ds[i], ds[j]
                ida, idb = (a.meta or {}).get("directory.id"), (b.meta or {}).get("directory.id")
                same = (
                    ("the same directory.id " + ida)
                    if ida and ida == idb
                    else f"directory.id {ida or 'none'} and {idb or 'none'}"
                )
                out.append(
                    Finding(
                        "node-claimed-twice",
                        "error",
                        f"{a.path} and {b.path} both claim node {nid} ({same}): "
                        f"{_how_histories_differ(a.replica, b.replica)}",
                        [f"{a.meta_at('node.id')}: node.id={nid}", f"{b.meta_at('node.id')}: node.id={nid}"],
                        f"only one dir can be node {nid}: keep the one its server.properties names and runs on, "
                        "move the other away (or format it for another node); `quorumctl state` on both shows "
                        "their logs side by side",
                    )
                )


def _metadata_version(dirs: list[LogDir], best):
    """The cluster's finalized metadata.version: the most up-to-date metadata log's
    (snapshot, then log), else the bootstrap.checkpoint of a dir that has one."""
    from ..logdir.features import finalized_levels

    if best is not None:
        lv = finalized_levels(best).get("metadata.version")
        if lv is not None:
            return lv
    for d in dirs:
        if d.meta and d.problem is None and os.path.isdir(d.path):
            lv = finalized_levels(None, d.path).get("metadata.version")
            if lv is not None:
                return lv
    return None


def _quorum_mode(configs: list[ServerConfig], dirs: list[LogDir], mv, out: list[Finding]) -> None:
    for d in dirs:
        c, r = d.config, d.replica
        if c is None or r is None or os.path.abspath(c.metadata_log_dir) != os.path.abspath(d.path):
            continue
        dynamic_storage = r.voters_record is not None or (r.kraft_version or 0) >= 1
        where = f"{r.partition_dir} ({r.voters['source']})" if r.voters else r.partition_dir
        if dynamic_storage and c.quorum_voters:
            out.append(
                Finding(
                    "static-config-on-dynamic-storage",
                    "warning",
                    f"{c.path} configures a static quorum (controller.quorum.voters) but node "
                    f"{c.node_id}'s metadata log holds a dynamic voter set (kraft.version "
                    f"{r.kraft_version}): Kafka uses the log's voter set and ignores the configured one",
                    [_at(c, "controller.quorum.voters"), f"{where}: VotersRecord"],
                    "replace controller.quorum.voters with controller.quorum.bootstrap.servers "
                    "(KIP-853); voter changes go through add-controller/remove-controller",
                )
            )
        if not dynamic_storage and c.quorum_bootstrap_servers and not c.quorum_voters and c.is_controller:
            out.append(
                Finding(
                    "dynamic-config-on-static-storage",
                    "error",
                    f"{c.path} configures a dynamic quorum (controller.quorum.bootstrap.servers only) but "
                    f"node {c.node_id}'s metadata log has no VotersRecord (kraft.version 0, formatted "
                    "without --initial-controllers or --standalone): it has no voter set and no leader "
                    "can be elected",
                    [_at(c, "controller.quorum.bootstrap.servers"), r.partition_dir]
                    + ([mv.evidence] if mv is not None and mv.level < KRAFT_V1_MIN_LEVEL else []),
                    "use controller.quorum.voters (static); to move to a dynamic quorum, from a working "
                    "static one: "
                    + (
                        f"first upgrade metadata.version from {metadata_version_name(mv.level)}"
                        " to 3.9-IV0 or newer (Kafka 4.1 needs it for kraft.version 1; 4.3 no longer does, "
                        "KAFKA-19719), then "
                        if mv is not None and mv.level < KRAFT_V1_MIN_LEVEL
                        else ""
                    )
                    + "kafka-features upgrade --feature kraft.version=1, which needs Kafka 4.1 or newer on "
                    "every node (KAFKA-16538, KIP-853)",
                )
            )


def _directory_ids(dirs: list[LogDir], voters: dict, out: list[Finding]) -> None:
    for d in dirs:
        is_metadata_dir = d.replica is not None or (
            d.config is not None and os.path.abspath(d.config.metadata_log_dir) == os.path.abspath(d.path)
        )
        if not is_metadata_dir or not d.meta:
            continue
        nid, did = d.meta.get("node.id"), d.meta.get("directory.id")
        v = voters["by_id"].get(nid)
        if v is None or did is None or v["voterDirectoryId"] == did:
            continue
        out.append(
            Finding(
                "directory-id-not-in-voter-set",
                "error",
                f"node {nid}'s metadata log dir {d.path} has directory.id {did}, but the voter set holds "
                f"node {nid} with directory id {v['voterDirectoryId']} (a reformatted or replaced disk): "
                f"the node runs as an observer and the quorum is one voter short",
                [
                    f"{d.meta_at('directory.id')}: directory.id={did}",
                    f"{voters['partition_dir']}: {voters['source']}: VotersRecord voter {nid} "
                    f"({v['voterDirectoryId']})",
                ],
                f"with the node running on it: quorumctl replace-controller {nid} {_voters_via(voters)} "
                "(RemoveRaftVoter of the old directory id, then AddRaftVoter of this one; "
                "docs/membership.md)",
            )
        )


def _voters_via(voters: dict) -> str:
    """--bootstrap-controller with the voters' stored endpoints (the first of each), or the
    option said in words when the voter set stores none (a static quorum's)."""
    eps = [(v.get("endpoints") or [None])[0] for _, v in sorted(voters["by_id"].items())]
    addrs = [f"[{e['host']}]:{e['port']}" if ":" in e["host"] else f"{e['host']}:{e['port']}" for e in eps if e]
    if addrs:
        return "--bootstrap-controller " + ",".join(addrs)
    return "with --bootstrap-controller and a controller's address (the voter set stores none)"


def voter_dirs_of(dirs: Sequence[LogDir], voters: dict) -> list[str]:
    """The log dirs holding a voter's metadata log: what `voters set-endpoints` is given; none
    unless every voter's is there (set-endpoints refuses fewer)."""
    out: dict = {}
    for d in dirs:
        nid = (d.meta or {}).get("node.id")
        if d.replica is not None and nid in voters["by_id"]:
            out.setdefault(nid, d.path)
    return list(out.values()) if set(out) == set(voters["by_id"]) else []


def _endpoints(configs: list[ServerConfig], voters: dict, out: list[Finding], dirs: Sequence[LogDir] = ()) -> None:
    """Each controller's advertised endpoint against the one the voter set stores for it
    (the fix: the voter restarted with a leader, else `voters set-endpoints` offline), and
    the configs' controller.quorum.bootstrap.servers against the stored endpoints."""
    for c in configs:
        v = voters["by_id"].get(c.node_id)
        if v is None or not c.is_controller or not c.controller_listener_names:
            continue
        try:
            host, port = c.advertised_controller_endpoint()
        except InputError:
            continue
        name = c.controller_listener_names[0]
        theirs = [e for e in v["endpoints"] if e["name"] == name]
        if not theirs:
            out.append(
                Finding(
                    "voter-endpoint-listener-missing",
                    "error",
                    f"the voter set holds node {c.node_id} without a {name} endpoint "
                    f"({', '.join(map(_endpoint_text, v['endpoints']))})",
                    [f"{voters['partition_dir']}: {voters['source']}", _at(c, "controller.listener.names")],
                    "the controller listener was renamed: remove and add the controller again",
                )
            )
        elif (theirs[0]["host"], theirs[0]["port"]) != (host, port):
            key = "advertised.listeners" if "advertised.listeners" in c.props else "listeners"
            out.append(
                Finding(
                    "stale-voter-endpoint",
                    "warning",
                    f"node {c.node_id} advertises {name}://{host}:{port}, but the voter set holds "
                    f"{_endpoint_text(theirs[0])}: the other voters and the brokers reach it at the "
                    "old address",
                    [_at(c, key), f"{voters['partition_dir']}: {voters['source']}"],
                    endpoint_fix(
                        {"voter_id": c.node_id, "name": name},
                        None,
                        configs,
                        voter_dirs_of(dirs, voters),
                    ),
                    node_id=c.node_id,
                    fix=(name, configs, voter_dirs_of(dirs, voters)),
                )
            )
    out.extend(bootstrap_findings(configs, voters))


def _advertised(configs: list, vid: int, name: str) -> str | None:
    """NAME://host:port a voter's own config advertises for its controller listener."""
    for cfg in configs:
        if cfg.node_id == vid and cfg.is_controller:
            try:
                host, port = cfg.advertised_controller_endpoint()
            except InputError:
                continue
            return f"{name}://[{host}]:{port}" if ":" in host else f"{name}://{host}:{port}"
    return None


def set_endpoints_advice(stale: dict[int, str], configs: list, log_dirs: list[str]) -> str:
    """The offline fix of the stale endpoints of the voters `stale` (id -> listener name): one
    `voters set-endpoints` command line that runs as printed (a dry run), with every voter's
    log dir and each stale voter's new endpoint from its config; or, when the inputs do not
    say them, which inputs the command needs."""
    dirs = list(log_dirs)
    new = {vid: _advertised(configs, vid, name) for vid, name in sorted(stale.items())}
    unknown = [vid for vid, e in new.items() if e is None]
    if unknown or not dirs:
        need = []
        if unknown:
            need.append(f"the new endpoint of voter(s) {', '.join(map(str, unknown))} (-c its server.properties)")
        if not dirs:
            need.append("every voter's log dir (as arguments, or -c each controller's server.properties)")
        return (
            "stop every controller and change the stored endpoints with `quorumctl voters set-endpoints` "
            f"(docs/membership.md); the complete command needs {' and '.join(need)}: run this check again with them"
        )
    cmd = " ".join(
        ["quorumctl voters set-endpoints", *(shlex.quote(d) for d in dirs)]
        + [f"--endpoint {vid}={e}" for vid, e in new.items()]
    )
    return f"stop every controller, then change the stored endpoints (a dry run; add --apply to write): `{cmd}`"


def endpoint_fix(c: dict, leader: bool | None, configs: list, log_dirs: list[str]) -> str:
    """The fix of a stale endpoint: with a leader, the voter restarted with its new listener
    updates it; with none (or offline: unknown), set-endpoints (merge_set_endpoints widens the
    command to every stale voter once all findings are known)."""
    vid = c["voter_id"]
    adv = _advertised(configs, vid, c["name"])
    live = (
        f"start voter {vid} with advertised.listeners"
        + (f"={adv}" if adv else f" set to its {c['name']} listener's new host:port (its config not given here)")
        + ": a "
        "running voter whose endpoint differs updates it itself (UpdateRaftVoter, KIP-853), or fix the name's "
        "DNS record"
    )
    offline = set_endpoints_advice({vid: c["name"]}, configs, log_dirs)
    if leader:
        return live
    if leader is None:
        return f"while the quorum has a leader: {live}; if no leader can be elected: {offline}"
    return f"no leader can be elected while the voters cannot reach each other: fix the name's DNS record, or {offline}"


def merge_set_endpoints(findings: list[Finding]) -> None:
    """Every stale-endpoint finding's set-endpoints command widened to all stale voters: one
    command line with every --endpoint, not one per voter to merge by hand."""
    groups: dict[tuple, list[tuple[Finding, int, tuple]]] = {}
    for f in findings:
        if f.fix is not None and f.node_id is not None:
            groups.setdefault(tuple(f.fix[2]), []).append((f, f.node_id, f.fix))
    for group in groups.values():
        stale = {nid: fix[0] for _, nid, fix in group}
        configs, dirs = group[0][2][1], group[0][2][2]
        every = set_endpoints_advice(stale, configs, dirs)
        for f, nid, fix in group:
            f.remedy = f.remedy.replace(set_endpoints_advice({nid: fix[0]}, configs, dirs), every)


def bootstrap_findings(configs: list, voters: dict) -> list[Finding]:
    """controller.quorum.bootstrap.servers entries that are no voter's stored endpoint:
    the node bootstraps from an address the quorum no longer has."""
    stored = {(e["host"], e["port"]) for v in voters["by_id"].values() for e in v.get("endpoints") or []}
    out = []
    for c in configs:
        if not c.quorum_bootstrap_servers:
            continue
        try:
            boot = parse_address_list(c.quorum_bootstrap_servers, f"{c.path}: controller.quorum.bootstrap.servers")
        except InputError:
            continue
        odd = [str(a) for a in boot if (a.host, a.port) not in stored]
        if odd:
            out.append(
                Finding(
                    "bootstrap-server-not-a-voter",
                    "warning",
                    f"{c.path}: controller.quorum.bootstrap.servers names {', '.join(odd)}, which no voter's stored "
                    "endpoint is" + (": none of its entries is" if len(odd) == len(boot) else ""),
                    [
                        _at(c, "controller.quorum.bootstrap.servers"),
                        f"{voters['partition_dir']}: {voters['source']}: "
                        + ", ".join(sorted(f"{h}:{p}" for h, p in stored)),
                    ],
                    "list the voters' endpoints (host:port of each voter) in controller.quorum.bootstrap.servers on "
                    "every node, or fix the voters' endpoints (quorumctl voters check names the stale ones)",
                    node_id=c.node_id,
                )
            )
    return out


def _log_matching(replicas: list, best, clashes: list[dict], out: list[Finding]) -> set:
    """Two logs holding different batches at one (offset, epoch) (raft/logmatch.py,
    as `compare` found them): Kafka never notices, so the replica that is not the
    most up to date must be truncated below the clash; of two others, both against
    the most up-to-date one (that cuts each where it differs from it). Returns the
    partition dirs of the logs clashing with `best`: their voter sets are no change
    still to replicate."""
    from ..raft.logmatch import UNNOTICED, Clash

    by_dir = {r.partition_dir: r for r in replicas}
    clashing = set()
    for j in clashes:
        x = Clash.from_json(j)
        ra, rb = by_dir[os.path.dirname(x.a.file)], by_dir[os.path.dirname(x.b.file)]
        cut = [(r, s) for r, s in ((ra, x.a), (rb, x.b)) if r is not best]
        if len(cut) == 1:
            clashing.add(cut[0][0].partition_dir)
            what = (
                f"truncate {cut[0][0].label} below the clash (to offset {cut[0][1].base_offset}): it is not the "
                f"most up-to-date replica ({best.label})"
            )
        else:
            what = (
                f"truncate both against the most up-to-date replica ({best.label}), which cuts each below "
                "where it differs from it"
            )
        out.append(
            Finding(
                "log-matching",
                "error",
                f"{ra.label} and {rb.label} hold different batches at offset {x.offset}, epoch {x.epoch}: "
                f"log matching is broken (a log was written outside Raft); {UNNOTICED}",
                [
                    f"{s.file} position {s.position}: {s.replica}'s batch, epoch {x.epoch}, {s.batch()}"
                    for s in (x.a, x.b)
                ],
                f"{what}: "
                + "; ".join(
                    f"quorumctl truncate {shlex.quote(r.log_dir)} --reference {shlex.quote(best.log_dir)}"
                    for r, _ in cut
                )
                + " (a dry run; add --apply with the node stopped)",
            )
        )
    return clashing


def _voter_set_agreement(dirs: list[LogDir], voters: dict, out: list[Finding], skip=frozenset()) -> None:
    """A metadata log whose last voter set differs from the most up-to-date one: a
    change it has not replicated yet, or one only it holds (uncommitted). `skip`:
    the logs an uncommitted-voter-change or log-matching finding already names."""
    for d in dirs:
        r = d.replica
        # (a log with a VotersRecord has its voters set)
        if (
            r is None
            or r.voters_record is None
            or r.voters is None
            or r.partition_dir == voters["partition_dir"]
            or r.partition_dir in skip
        ):
            continue
        ids = sorted(v["voterId"] for v in r.voters_record)
        dirs_ = {v["voterId"]: v["voterDirectoryId"] for v in r.voters_record}
        best = {i: v["voterDirectoryId"] for i, v in voters["by_id"].items()}
        if dirs_ != best:
            out.append(
                Finding(
                    "voter-set-differs",
                    "warning",
                    f"{r.label}'s log holds voters {ids}, the most up-to-date log ({voters['node']}) "
                    f"{voters['ids']}: a voter change not yet replicated to it, or not committed",
                    [f"{r.partition_dir}: {r.voters['source']}", f"{voters['partition_dir']}: {voters['source']}"],
                    "check `quorumctl describe status`: if the leader shows the newer set the follower "
                    "catches up; a set only one replica holds is uncommitted and may be lost",
                )
            )


def _static_voters(configs: list[ServerConfig], out: list[Finding]) -> None:
    static = [c for c in configs if c.quorum_voters]
    sets: dict[tuple, list[ServerConfig]] = {}
    for c in static:
        sets.setdefault(tuple(sorted(configured_voters(c).items())), []).append(c)
    if len(sets) > 1:
        out.append(
            Finding(
                "static-voters-differ",
                "error",
                "the configs disagree on controller.quorum.voters",
                [_at(cs[0], "controller.quorum.voters") for cs in sets.values()],
                "every node must list the same voters (Kafka before 3.9 also checks quorum-state)",
            )
        )
    for c in static:
        if not c.is_controller or not c.controller_listener_names or c.node_id is None:
            continue
        mine = configured_voters(c).get(c.node_id)
        try:
            adv = c.advertised_controller_endpoint()
        except InputError:
            continue
        if mine is None:
            out.append(
                Finding(
                    "controller-not-in-static-voters",
                    "warning",
                    f"{c.path}: node {c.node_id} is a controller but not in controller.quorum.voters "
                    "(it runs as an observer)",
                    [_at(c, "controller.quorum.voters")],
                    "add it to controller.quorum.voters on every node, one voter at a time",
                )
            )
        elif mine != adv:
            out.append(
                Finding(
                    "static-voter-endpoint-differs",
                    "error",
                    f"{c.path}: controller.quorum.voters has node {c.node_id} at {mine[0]}:{mine[1]}, "
                    f"but it listens at {adv[0]}:{adv[1]}",
                    [
                        _at(c, "controller.quorum.voters"),
                        _at(c, "advertised.listeners" if "advertised.listeners" in c.props else "listeners"),
                    ],
                    "make them agree on every node",
                )
            )


def _kraft_where(r) -> str:
    return (
        f"{r.partition_dir} ({r.kraft_version_source}): KRaftVersionRecord kraft.version={r.kraft_version}"
        if r.kraft_version_source
        else f"{r.partition_dir}: no KRaftVersionRecord (kraft.version 0)"
    )


def _kraft_versions(dirs: list[LogDir], best, out: list[Finding]) -> None:
    """kraft.version only goes up (0 -> 1, KIP-853) and replicates from the leader: a
    log holding a higher one than the most up-to-date log did not get it from this
    quorum. (A lower one is a follower not caught up yet: normal.)"""
    top = best.kraft_version or 0
    for d in dirs:
        r = d.replica
        if r is None or r is best or (r.kraft_version or 0) <= top:
            continue
        out.append(
            Finding(
                "kraft-version-differs",
                "error",
                f"{r.label}'s metadata log has kraft.version {r.kraft_version}, but the most up-to-date "
                f"log ({best.label}) has {top}: it was formatted for another (dynamic) quorum, e.g. with "
                "--standalone or --initial-controllers, and does not follow this one's voter set",
                [_kraft_where(r), _kraft_where(best)],
                f"wipe {d.path} and format it like the others"
                + (" (without --standalone/--initial-controllers: the quorum is static)" if top == 0 else "")
                + "; kraft.version cannot be downgraded (KIP-853)",
            )
        )


def _voter_set_lost(dirs: list[LogDir], out: list[Finding]) -> None:
    """Kafka writes kraft.version and the voter set into every snapshot once kraft.version
    is 1 (RecordsSnapshotWriter), and kraft.version never goes down. A latest snapshot
    without them, over a kraft.version 1 the same replica held before it, is Kafka's bug
    (4.1 to 4.4): a follower that truncates its log below the voters record never reads
    it again, and its snapshots carry no voter set from then on."""
    from ..raft.replica import read_snapshot_controls

    for d in dirs:
        r = d.replica
        snap = r.latest_snapshot if r is not None else None
        if r is None or snap is None or snap.end_offset == 0:
            continue
        if read_snapshot_controls(snap.path)["kraft_version"] is not None:
            continue
        held, voter_ids = None, None
        for off, name, data in r.scan.controls():
            if data is None or off >= snap.end_offset:
                continue
            if name == "KRAFT_VERSION" and data["kRaftVersion"] >= 1:
                held = f"log offset {off}"
            elif name == "KRAFT_VOTERS":
                voter_ids = {v["voterId"] for v in data["voters"]}
        for older in reversed(r.snapshots[:-1] if held is None else []):
            c = read_snapshot_controls(older.path)
            if (c["kraft_version"] or 0) >= 1:
                held = f"snapshot {os.path.basename(older.path)}"
                voter_ids = {v["voterId"] for v in c["voters"] or []}
                break
        if held is None:
            continue
        name = os.path.basename(snap.path)
        if r.node_id is not None and voter_ids and r.node_id in voter_ids:
            remedy = (
                f"stop node {r.node_id} and give it a new log dir: it is a voter, so its log is not "
                f"to be dropped; `quorumctl replace-controller {r.node_id}` swaps the new directory "
                "into the voter set (docs/membership.md)"
            )
        else:
            remedy = (
                f"stop the node, move {r.partition_dir} out of {d.path} (keep it until the node "
                "runs), and start it: it fetches the metadata log from the controllers again"
            )
        out.append(
            Finding(
                "voter-set-lost",
                "error",
                f"{r.label}'s latest snapshot {name} holds no kraft.version and no voter set, but its "
                f"{held} holds kraft.version 1: Kafka writes both into every snapshot of a dynamic quorum, "
                "so this node lost its voter set (a Kafka bug: a follower truncated below the voters "
                "record never reads it again). It cannot find the controllers (a broker gives up: "
                '"unable to register with the controller quorum"), and each start loads this snapshot again',
                [f"{snap.path}: no KRaftVersionRecord", f"{r.partition_dir} ({held}): KRaftVersionRecord"],
                remedy,
                node_id=r.node_id,
            )
        )


def _previous_voters(r, offset: int):
    """The voter set of `r` before its VotersRecord at `offset` (log, then the
    latest snapshot's), or None when the files do not hold it."""
    from ..raft.replica import read_snapshot_controls

    prev = None
    for off, name, data in r.scan.controls():
        if (
            name == "KRAFT_VOTERS"
            and data is not None
            and off < offset
            and (r.latest_snapshot is None or off >= r.latest_snapshot.end_offset)
        ):
            prev = data["voters"]
    if prev is None and r.latest_snapshot is not None:
        prev = read_snapshot_controls(r.latest_snapshot.path)["voters"]
    return sorted(v["voterId"] for v in prev) if prev is not None else None


def _uncommitted_voter_change(dirs: list[LogDir], best, followers: dict, out: list[Finding]) -> set:
    """The most up-to-date log's last VotersRecord (when it is in the log, not a
    snapshot: a snapshot holds only committed records) when raft.committed
    proves it uncommitted: too few voters' logs hold it for a majority of the new
    voter set and of the one before it (the followers' logs without it still hold
    that one), voters whose logs were not given counting as holders. Returns the
    partition dirs of the logs without it."""
    from ..raft.committed import classify

    src = best.voters["source"]
    if not src.startswith("log offset "):
        return set()
    x = int(src.rsplit(" ", 1)[1])
    new = sorted(v["voterId"] for v in best.voters_record)
    prev = _previous_voters(best, x)
    logs = {}  # voter id -> (replica, holds the record)
    for d in dirs:
        r = d.replica
        if r is None or r.node_id is None:
            continue
        if r is best:
            logs[r.node_id] = (r, True)
        elif r.label in followers:
            f = followers[r.label]
            logs.setdefault(r.node_id, (r, f["common_prefix_end"] is not None and f["common_prefix_end"] > x))
    replicas = [r for r, _ in logs.values()]
    split = next(c for c in classify(replicas)["replicas"] if c["replica"] == best.label)
    if split["uncommitted_from_offset"] > x:
        return set()
    if prev is None:
        return set()
    missing = [(i, logs[i][0]) for i in sorted(set(new) | set(prev)) if i in logs and not logs[i][1]]
    holders = sorted(i for i in set(new) | set(prev) if i in logs and logs[i][1])
    out.append(
        Finding(
            "uncommitted-voter-change",
            "error",
            f"{best.label}'s log holds a voter change at offset {x} (voters {prev} -> {new}) that only "
            f"node(s) {holders} hold: fewer than a majority of either voter set, so it is uncommitted; "
            "the next leader elected without it drops it",
            [f"{best.partition_dir}@{x}: VotersRecord voters {new}"]
            + [
                f"{r.partition_dir}: log ends at offset {r.log_end}"
                + (
                    f", its last VotersRecord ({r.voters['source']}) holds {r.voters['ids']}"
                    if r.voters and r.voters_record is not None
                    else ""
                )
                for _, r in missing
            ],
            "do not assume the change took effect: once the quorum has a leader, check `quorumctl "
            "describe status` and run add-controller/remove-controller again if the voters are not the "
            "intended ones (KIP-853)",
        )
    )
    return {r.partition_dir for _, r in missing}


def _traps(configs: list[ServerConfig], mv, out: list[Finding]) -> None:
    """Every entry of the known-traps table (diagnose/traps.py) against every config."""
    if mv is None:
        return
    for t in TRAPS:
        if mv.level >= t.min_level:
            continue
        for c in configs:
            key = t.setting(c)
            if key is None:
                continue
            out.append(
                Finding(
                    t.code,
                    t.severity,
                    f"{c.path}: {key} needs metadata.version {t.min_version} or newer, but the cluster's "
                    f"is {metadata_version_name(mv.level)}: {t.what} ({t.reference})",
                    [_at(c, key), mv.evidence],
                    t.remedy,
                )
            )
