"""doctor's live checks (`--bootstrap-controller`): DescribeQuorum against the files
(cluster id, each live voter's directory id), voters whose node fetches as an
observer under a new directory id (`voter-directory-replaced`), the registered controllers that are
not voters, and, with no leader or no answer, whether the voters run where the files'
voter set no longer points (`stale-voter-endpoint`, fixed by `voters set-endpoints`)
or a majority of them is gone (`majority-lost`, the case for `recover`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .file_checks import configured_voters
from .findings import Finding, Report
from .live_quorum import live_findings
from .registrations import fetched_registrations, live_registrations

if TYPE_CHECKING:
    from ..wire.access import ClusterAccess


def check_live(report: Report, access: ClusterAccess, timeout: float) -> None:
    """Add the live quorum's findings to `report`: DescribeQuorum against the files,
    or one `live-unreachable` error when the controller does not answer (`access`:
    --bootstrap-controller's)."""
    from ..errors import QuorumctlError
    from ..live.describe import describe_quorum

    bootstrap_controller = access.controllers or ""
    try:
        q = describe_quorum(access, timeout)
    except QuorumctlError as e:
        stale, moved = _stale(report, access, timeout)
        if moved:
            # the controllers run, at addresses the voter set no longer stores: no leader, not a lost majority
            report.findings.append(
                Finding(
                    "live-no-leader",
                    "error",
                    f"{bootstrap_controller}: no answer to DescribeQuorum ({e}): no leader; controllers of this "
                    "cluster answer, but not on the endpoints the voter set stores",
                    [f"{bootstrap_controller}: {e}"],
                    "the stale-voter-endpoint findings say why the voters cannot elect one, and the fix",
                )
            )
            report.findings.extend(stale)
            return
        failed = str(getattr(e, "address", "") or "") or bootstrap_controller
        if failed == bootstrap_controller or failed in bootstrap_controller.split(","):
            message = f"{bootstrap_controller}: {e}"
            evidence = [failed]
        else:
            # the bootstrap controller answered and named the active controller, which failed
            message = f"{bootstrap_controller} answered, but the active controller it named, {failed}, did not: {e}"
            evidence = [f"{bootstrap_controller}: answered (DescribeCluster named {failed})", f"{failed}: {e}"]
        report.findings.append(
            Finding(
                "live-unreachable",
                "error",
                message,
                evidence,
                "check the address and that a controller runs there; `quorumctl describe health` probes each one",
            )
        )
        report.findings.extend(stale)
        _majority(report, access, timeout, stale)
        return
    report.findings.extend(live_findings(report, q, bootstrap_controller))
    from .voters import doctor_findings

    # voters check's findings: the stored endpoints probed, observers holding a voter's id
    report.findings.extend(doctor_findings(report, q, access, timeout))
    if q.leader_id >= 0:
        report.findings.extend(fetched_registrations(report, access, timeout))
    report.findings.extend(live_registrations(report, q, access, timeout))
    if q.leader_id < 0:
        stale, moved = _stale(report, access, timeout)
        seen = {(f.code, f.message) for f in report.findings}
        stale = [f for f in stale if (f.code, f.message) not in seen]
        report.findings.extend(stale)
        if not moved:
            _majority(report, access, timeout, stale)


def _recover_command(report: Report, answering: list[int], lost: list[int]) -> str:
    """recover's command line (a dry run) with a surviving voter's server.properties or
    metadata log dir when one was given, else the command that lacks it, said in words."""
    import shlex

    given = [d for d in report.log_dirs if d.replica is not None and (d.meta or {}).get("node.id") in answering]
    ids = ",".join(map(str, lost))
    if given:  # its server.properties when known: a static quorum's voters are only there
        where = ["-c", given[0].config.path] if given[0].config is not None else [given[0].path]
        return shlex.join(["quorumctl", "recover", *where, "--lost-voters", ids])
    return (
        f"quorumctl recover --lost-voters {ids} followed by the metadata log dir of a surviving voter "
        f"({', '.join(map(str, answering)) or 'none answers'}; not given here)"
    )


def _stale(report: Report, access: ClusterAccess, timeout: float):
    """diagnose.voters.stale_without_leader with the client settings: (findings, moved)."""
    from .voters import stale_without_leader

    return stale_without_leader(report, access, timeout)


def _known_voters(report: Report) -> dict:
    """id -> Address of the voters the files know: the voter set of the most up-to-date
    metadata log, else the configs' controller.quorum.voters."""
    from ..config.addresses import Address

    out: dict[int, Address] = {}
    if report.voters:
        for vid, v in report.voters["by_id"].items():
            eps = v.get("endpoints") or []
            if eps:
                out[vid] = Address(eps[0]["host"], eps[0]["port"])
    if not out:
        for c in report.configs:
            for vid, (host, port) in configured_voters(c).items():
                out.setdefault(vid, Address(host, port))
    return out


def _majority(report: Report, access: ClusterAccess, timeout: float, stale: Sequence[Finding] = ()) -> None:
    """With no leader, or no answer: probe every voter the files know; fewer than a
    majority answering is `majority-lost`, the case `quorumctl recover` exists for,
    unless the voters only look lost because their stored endpoints are stale (`stale`:
    those findings; the remedy then says set-endpoints first)."""
    from ..live.health.probe import check_health

    voters = _known_voters(report)
    if not voters:
        return
    from ..errors import ClusterError

    try:
        probes = check_health(access.client_config(), config_voters=voters, timeout_s=timeout).probes
        failed = None
    except ClusterError as e:  # not one voter answered
        probes, failed = [], str(e)
    answering = sorted(
        p.node_id for p in probes if p.ok and p.node_id is not None and p.node_id in voters and p.kind != "broker"
    )
    need = len(voters) // 2 + 1
    if len(answering) >= need:
        return
    lost = sorted(set(voters) - set(answering))
    evidence = (
        [f"controller {p.node_id} ({p.address}): {p.error or 'no answer'}" for p in probes if p.node_id in lost]
        if failed is None
        else [failed]
    )
    evidence += [f"controller {i} ({voters[i]}): answers" for i in answering]
    first = ""
    moved = sorted({f.node_id for f in stale if f.node_id is not None and f.node_id in lost})
    if moved:
        first = (
            f"first: the stored endpoints of voter(s) {', '.join(map(str, moved))} are stale "
            "(stale-voter-endpoint): if those controllers still run under other names or addresses, the "
            "majority is not lost and the fix is `quorumctl voters set-endpoints` (docs/membership.md), "
            "never recover; otherwise: "
        )
    report.findings.append(
        Finding(
            "majority-lost",
            "error",
            f"majority lost: {len(answering)} of {len(voters)} voters answer ({', '.join(map(str, answering)) or 'none'}); "
            f"the quorum needs {need} to elect a leader, so the metadata log cannot move",
            evidence,
            first
            + "bring the lost voters back if their disks survive; if they are gone for good, see `quorumctl recover` "
            f"(docs/recovery.md): {_recover_command(report, answering, lost)}",
        )
    )
