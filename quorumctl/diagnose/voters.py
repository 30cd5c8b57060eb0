"""`voters check` (and doctor's live voter findings): every endpoint the voter set
stores, each address its name resolves to, whether a controller of this cluster
answers there as that voter, and the configs against the voter set.

The voter set: live, DescribeQuorum v2's voters with their directory ids and
`Nodes` endpoints (the leader's view); offline, the last VotersRecord of the most
up-to-date metadata log given (file_checks.examine). With no leader, the live
check falls back on the log dirs given (and says so): the stored endpoints are
exactly what a quorum without a leader cannot correct itself. doctor, with no
leader, probes the same stored endpoints together with the voters' configured ones
and the bootstrap addresses (`stale_without_leader`): voters answering only
elsewhere moved (set-endpoints), they are not lost (recover).

Findings (docs/membership.md lists them with their fixes):
  stale-voter-endpoint       a stored endpoint whose name does not resolve, where
                             nothing answers, or where another node (or cluster)
                             answers; with the configs: a node advertising
                             another endpoint than the stored one (file_checks)
  voter-directory-replaced   an observer with a voter's id and another directory
                             id: the voter's disk was replaced, the quorum is one
                             voter short
  bootstrap-server-not-a-voter  a config's controller.quorum.bootstrap.servers
                             entry that no voter's stored endpoint matches
  and file_checks' findings about the voter set (directory ids, listener names,
  static settings on dynamic storage, voter sets that differ between logs).
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from ..config.addresses import Address, parse_address_list
from ..errors import InputError, QuorumctlError
from .file_checks import bootstrap_findings, endpoint_fix, merge_set_endpoints, voter_dirs_of
from .findings import Finding
from .live_quorum import live_findings, observer_findings

if TYPE_CHECKING:
    from ..wire.access import ClusterAccess

# file_checks' findings that are about the voter set, its endpoints and directory ids
VOTER_CODES = (
    "stale-voter-endpoint",
    "voter-endpoint-listener-missing",
    "directory-id-not-in-voter-set",
    "static-config-on-dynamic-storage",
    "dynamic-config-on-static-storage",
    "voter-set-differs",
    "uncommitted-voter-change",
    "static-voters-differ",
    "static-voter-endpoint-differs",
    "controller-not-in-static-voters",
    "cluster-id-mismatch",
    "node-claimed-twice",
)


def _ep(e: dict) -> str:
    host = f"[{e['host']}]" if ":" in e["host"] else e["host"]
    return f"{e['name']}://{host}:{e['port']}"


def voters_from_quorum(q, source: str) -> dict:
    """A live quorum's voter set in file_checks' form (by_id: VotersRecord-like voters)."""
    by_id = {
        v.id: {
            "voterId": v.id,
            "voterDirectoryId": v.directory_id,
            "endpoints": [{"name": e.name, "host": e.host, "port": e.port} for e in q.endpoints(v.id)],
        }
        for v in q.voters
    }
    return {"ids": sorted(by_id), "source": "DescribeQuorum", "node": source, "partition_dir": source, "by_id": by_id}


def resolve(host: str, port: int) -> tuple[list[str], str | None]:
    """(the addresses `host` resolves to, in the resolver's order, or the error)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        return [], f"does not resolve ({e.strerror})"
    except UnicodeError:
        return [], "is not a valid host name"
    return list(dict.fromkeys(str(i[4][0]) for i in infos)), None


def probe_endpoints(voters: dict, cluster_id: str | None, client_cfg, timeout: float) -> list[dict]:
    """Each stored endpoint of each voter: its addresses and what answers there (every
    address probed when a name has several, else the name itself), with a verdict:
    ok | unresolvable | silent (nothing answers) | other (another node or cluster answers)."""
    return _probe(voters, cluster_id, client_cfg, timeout, {})[0]


def _probe(
    voters: dict, cluster_id: str | None, client_cfg, timeout: float, elsewhere: dict[int, list[Address]]
) -> tuple[list[dict], list]:
    """probe_endpoints' checks, and the VoterProbes of `elsewhere` (id -> addresses that
    are no stored endpoint), probed in the same round within one deadline."""
    from ..live.liveness import probe_voters

    checks = []
    jobs: dict[int, list[Address]] = {k: list(v) for k, v in elsewhere.items()}
    for vid, v in sorted(voters["by_id"].items()):
        for e in v.get("endpoints") or []:
            addrs, err = resolve(e["host"], e["port"])
            c = {
                "voter_id": vid,
                "directory_id": v.get("voterDirectoryId"),
                "endpoint": _ep(e),
                "host": e["host"],
                "port": e["port"],
                "name": e["name"],
                "addresses": addrs,
                "resolve_error": err,
                "probes": [],
                "verdict": "unresolvable" if err else None,
            }
            checks.append(c)
            if err is None:
                c["targets"] = (
                    [Address(e["host"], e["port"])] if len(addrs) == 1 else [Address(a, e["port"]) for a in addrs]
                )
                jobs.setdefault(vid, []).extend(c["targets"])
    probes = probe_voters(jobs, client_cfg, timeout, (), cluster_id)[0] if jobs else []
    for c in checks:
        if c["verdict"]:
            continue
        targets = c.pop("targets")
        mine = [p for p in probes if p.voter_id == c["voter_id"] and p.address in targets]
        c["probes"] = [p.to_json() for p in mine]
        good = [
            p
            for p in mine
            if p.same_cluster_controller(cluster_id) and (p.node_id is None or p.node_id == c["voter_id"])
        ]
        # something else answering at one of its addresses; an address where nothing listens
        # beside one that answers is no harm (Kafka's clients try every address of a name)
        other = [p for p in mine if p.state == "answers" and p not in good]
        if good and not other:
            c["verdict"] = "ok"
        elif other:
            c["verdict"] = "partly" if good else "other"
        else:
            c["verdict"] = "silent"
    for c in checks:
        c.pop("targets", None)
    extra = [p for p in probes if p.address in elsewhere.get(p.voter_id, ())]
    return checks, extra


def endpoint_findings(checks: list[dict], leader: bool | None, configs: list, log_dirs: list[str]) -> list[Finding]:
    out = []
    for c in checks:
        v, vid = c["verdict"], c["voter_id"]
        if v == "ok":
            continue
        if v == "unresolvable":
            what = f"its name {c['host']} {c['resolve_error']}"
            evidence = [f"getaddrinfo({c['host']!r}): {c['resolve_error']}"]
        else:
            evidence = [
                f"{p['address']}: {p['state']}: {p['detail']}"
                + (f" (node {p['node_id']})" if p.get("node_id") is not None else "")
                for p in c["probes"]
            ]
            addrs = ", ".join(c["addresses"])
            if v == "silent":
                what = (
                    f"nothing answers there as a controller ({c['host']} resolves to {addrs}): the voter is down, "
                    "or it runs elsewhere"
                )
            elif v == "other":
                what = f"another node answers there ({c['host']} resolves to {addrs})"
            else:
                what = (
                    f"another node answers at some of its addresses, voter {vid} at others ({c['host']} "
                    f"resolves to {addrs})"
                )
        for cfg in configs:
            if cfg.node_id == vid and cfg.is_controller:
                try:
                    host, port = cfg.advertised_controller_endpoint()
                except InputError:
                    continue
                mine, _ = resolve(host, port)
                evidence.append(
                    f"{cfg.path}: node {vid} advertises {host}:{port}"
                    + (f" ({host} resolves to {', '.join(mine)})" if mine else "")
                )
                if mine and c["addresses"] and not set(mine) & set(c["addresses"]):
                    what += f"; the node's own name resolves elsewhere ({', '.join(mine)})"
        out.append(
            Finding(
                "stale-voter-endpoint",
                "error",
                f"voter {vid}'s stored endpoint {c['endpoint']} is stale: {what}",
                evidence,
                endpoint_fix(c, leader, configs, log_dirs),
                node_id=vid,
                fix=(c["name"], configs, log_dirs),
            )
        )
    return out


def check(
    configs: list[str],
    log_dirs: list[str],
    access: ClusterAccess,
    timeout: float,
) -> dict:
    """`voters check`: the document (voters, endpoint checks, findings)."""
    from ..live.describe import describe_quorum
    from .file_checks import _endpoints, examine

    client_cfg = access.client_config()
    report = examine(configs, log_dirs) if configs or log_dirs else None
    live = access.servers or access.controllers
    findings: list[Finding] = []
    q = None
    voters = None
    source = None
    if live:
        try:
            q = describe_quorum(access, timeout)
        except QuorumctlError as e:
            if report is None or report.voters is None or isinstance(e, InputError):
                raise
            findings.append(
                Finding(
                    "live-no-leader",
                    "error",
                    f"{live}: no answer to DescribeQuorum ({e}): no leader answers; the voter set is "
                    f"read from the log dirs given",
                    [f"{live}: {e}"],
                    "the findings below say why the voters cannot elect one",
                )
            )
        else:
            source = q.source or live
            voters = voters_from_quorum(q, source)
            if q.leader_id < 0:
                findings.append(
                    Finding(
                        "live-no-leader",
                        "error",
                        f"{source}: the quorum has no leader (epoch {q.leader_epoch})",
                        [f"{source}: DescribeQuorum"],
                        "the findings below say why the voters cannot elect one",
                    )
                )
    if voters is None:
        if report is None or report.voters is None:
            raise InputError(
                "no voter set: give --bootstrap-controller/--bootstrap-server, or the controllers' "
                "log dirs (or -c server.properties) of a dynamic quorum (kraft.version 1)"
            )
        voters = report.voters
        source = f"{voters['partition_dir']} ({voters['source']})"
    cluster_id = (
        q.cluster_id
        if q is not None and q.cluster_id
        else next((d.meta.get("cluster.id") for d in (report.log_dirs if report else []) if d.meta), None)
    )
    cfgs = report.configs if report else []
    if report is not None:
        findings += [f for f in report.findings if f.code in VOTER_CODES]
        if q is not None:
            _endpoints(cfgs, voters, findings, report.log_dirs)
            # the live voters' directory ids against the log dirs' meta.properties, the cluster id
            findings += [f for f in live_findings(report, q, str(source)) if f.code != "live-no-leader"]
    if q is not None:
        findings += observer_findings(
            q,
            str(source),
            str(access.controllers or access.servers),
            "--bootstrap-controller" if access.controllers else "--bootstrap-server",
        )
    findings += bootstrap_findings(cfgs, voters)
    checks = probe_endpoints(voters, cluster_id, client_cfg, timeout)
    dirs = voter_dirs_of(report.log_dirs, voters) if report else []
    leader = None if not live else (q is not None and q.leader_id >= 0)
    findings += endpoint_findings(checks, leader, cfgs, dirs)
    merge_set_endpoints(findings)
    seen, unique = set(), []
    for f in findings:
        if (f.code, f.message) not in seen:
            seen.add((f.code, f.message))
            unique.append(f)
    return {
        "source": source,
        "live": q is not None,
        "cluster_id": cluster_id,
        "leader": {"id": q.leader_id, "epoch": q.leader_epoch} if q is not None else None,
        "voters": [
            {
                "id": vid,
                "directory_id": v.get("voterDirectoryId"),
                "endpoints": [_ep(e) for e in v.get("endpoints") or []],
            }
            for vid, v in sorted(voters["by_id"].items())
        ],
        "observers": [{"id": o.id, "directory_id": o.directory_id} for o in q.observers] if q is not None else None,
        "endpoints": checks,
        "findings": [f.to_json() for f in unique],
        "ok": not unique,
    }


def doctor_findings(report, q, access: ClusterAccess, timeout: float) -> list[Finding]:
    """doctor's share of the same checks, with a live quorum (`--bootstrap-controller`):
    the live voter set's stored endpoints probed, the configs' bootstrap servers against
    the stored endpoints (observers with a voter's id: live_quorum.live_findings)."""
    voters = voters_from_quorum(q, q.source or access.controllers or "")
    checks = probe_endpoints(voters, q.cluster_id, access.client_config(), timeout)
    seen = {(f.code, f.message) for f in report.findings}  # the files' bootstrap findings, when the sets agree
    return endpoint_findings(checks, q.leader_id >= 0, report.configs, voter_dirs_of(report.log_dirs, voters)) + [
        f for f in bootstrap_findings(report.configs, voters) if (f.code, f.message) not in seen
    ]


def stale_without_leader(report, access: ClusterAccess, timeout: float) -> tuple[list[Finding], bool]:
    """doctor with no leader (or no answer) and the files' voter set: are the voters gone,
    or do they run where the voter set no longer points (every controller moved,
    KAFKA-20661)? The stored endpoints are probed (as voters check does), and in the
    same round each voter's own endpoint from its config (-c) and the bootstrap
    addresses. Returns (the stale-voter-endpoint findings, moved): `moved` when fewer
    than a majority answer on their stored endpoints but a majority of controllers of
    this cluster answer counting the other addresses: then set-endpoints is the fix, and
    recover (which would throw away live voters) is not. Without that, only endpoints
    shown stale (a name that does not resolve, another node answering, the voter
    answering at its configured endpoint) are reported: a voter that is simply down is
    majority-lost's business."""
    client_cfg = access.client_config()  # a bad --command-config is reported first, voters or not
    voters = report.voters
    if not voters:
        return [], False
    by_id = voters["by_id"]
    cluster_id = next((c for d in report.log_dirs if (c := (d.meta or {}).get("cluster.id"))), None)
    stored = {(e["host"], e["port"]) for v in by_id.values() for e in v.get("endpoints") or []}
    elsewhere: dict[int, list[Address]] = {}
    where: dict[Address, str] = {}  # an address probed besides the stored ones -> where it comes from
    for cfg in report.configs:
        if cfg.node_id in by_id and cfg.is_controller:
            try:
                host, port = cfg.advertised_controller_endpoint()
            except InputError:
                continue
            if (host, port) not in stored:
                elsewhere.setdefault(cfg.node_id, []).append(Address(host, port))
                where[Address(host, port)] = f"{cfg.path}: node {cfg.node_id} advertises it"
    known = {a for addrs in elsewhere.values() for a in addrs}
    others: list[tuple[str, str]] = [(access.controllers or "", "--bootstrap-controller")]
    others += [(c.quorum_bootstrap_servers, f"{c.path}: controller.quorum.bootstrap.servers") for c in report.configs]
    for text, origin in others:
        try:
            addrs = parse_address_list(text, origin) if text else []
        except InputError:
            continue
        for a in addrs:
            if (a.host, a.port) not in stored and a not in known:
                known.add(a)
                elsewhere.setdefault(-1, []).append(a)  # -1: which node answers there is not known
                where.setdefault(a, origin)
    checks, extra = _probe(voters, cluster_id, client_cfg, timeout, elsewhere)
    live = [p for p in extra if p.same_cluster_controller(cluster_id)]
    ok = {c["voter_id"] for c in checks if c["verdict"] == "ok"}
    moved = {p.voter_id for p in live if p.voter_id >= 0 and p.voter_id not in ok and p.node_id in (None, p.voter_id)}
    # an address of unknown node counts once per distinct address, and not when it is one a
    # voter already answers at (another name of the same host)
    taken = {(ip, p.address.port) for p in live if p.voter_id >= 0 for ip in resolve(p.address.host, p.address.port)[0]}
    taken |= {(ip, c["port"]) for c in checks if c["verdict"] == "ok" for ip in c["addresses"]}
    anonymous = []
    for p in live:
        if p.voter_id >= 0:
            continue
        mine = {(ip, p.address.port) for ip in resolve(p.address.host, p.address.port)[0]}
        if mine and not mine & taken:
            taken |= mine
            anonymous.append(p)
    need = len(by_id) // 2 + 1
    is_moved = len(ok) < need <= len(ok) + len(moved) + len(anonymous)
    shown = [
        c
        for c in checks
        if c["verdict"] in ("unresolvable", "other", "partly")
        or (c["verdict"] == "silent" and (is_moved or c["voter_id"] in moved))
    ]
    findings = endpoint_findings(shown, False, report.configs, voter_dirs_of(report.log_dirs, voters))
    for f in findings:  # where the voter itself (from its config), or some controller of this cluster, answers
        f.evidence += [
            f"{p.address}: {p.detail} ({where.get(p.address, 'probed')})" for p in live if p.voter_id in (f.node_id, -1)
        ]
    return findings, is_moved
