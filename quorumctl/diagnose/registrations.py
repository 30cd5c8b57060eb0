"""Registered nodes that are gone: controllers registered but not voters (a
controller removed with remove-controller stays registered, KAFKA-20395) and
fenced brokers while others run, from the metadata image of the most up-to-date
log (`image_registrations`) or from the live quorum's DescribeCluster
(`live_registrations`); both can block a metadata.version upgrade."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..versions import METADATA_VERSION, NAME_OF
from ..versions import version_name as metadata_version_name
from .findings import Finding, Report

if TYPE_CHECKING:
    from ..wire.access import ClusterAccess

STALE_CONTROLLER_REMEDY = (
    "if it blocks an upgrade: quorumctl cluster clear-registration {id} {via} "
    "{target} plans the fix and checks each step (docs/membership.md). Kafka cannot remove a controller "
    "registration below metadata.version 4.4-IV2 (KIP-1312, KAFKA-20395), so the fix re-registers it: a "
    "controller with node.id {id} on the new release (formatted with --no-initial-controllers, "
    "controller.quorum.bootstrap.servers pointing at the quorum, controller.quorum.auto.join.enable=false) "
    "registers as an observer, not a voter, and is stopped; its registration then carries the new release's "
    "supported range. Never reuse the id for a voter without add-controller"
)
# metadata.version 4.4-IV2 and later (KIP-1312): the registration can be removed
UNREGISTER_REMEDY = (
    "once controller {id} is stopped for good: quorumctl cluster clear-registration {id} {via} "
    "(a dry run; --apply sends UnregisterController, as quorumctl cluster unregister-controller --id {id} "
    "and Kafka 4.4's kafka-cluster.sh unregister-controller --id {id} do)"
)
# the words in place of a value the tool does not know: never a placeholder to type
UNKNOWN_CONTROLLERS = "--bootstrap-controller followed by the controllers' addresses (not known here)"
UNKNOWN_TARGET = "--metadata followed by the metadata.version to upgrade to (the controllers' release not known here)"


def stale_remedy(cid: int, mv, via: str | None = None, target: str | None = None) -> str:
    """How to clear a stale controller registration at the cluster's metadata.version;
    `via`: the controllers' addresses, `target`: the metadata.version to upgrade to (the
    highest the controllers' release supports), each when known, else said in words."""
    from ..versions import CONTROLLER_UNREGISTRATION_LEVEL

    level = getattr(mv, "level", mv)
    text = (
        UNREGISTER_REMEDY if level is not None and level >= CONTROLLER_UNREGISTRATION_LEVEL else STALE_CONTROLLER_REMEDY
    )
    return text.format(
        id=cid,
        via=f"--bootstrap-controller {via}" if via else UNKNOWN_CONTROLLERS,
        target=f"--metadata {target}" if target else UNKNOWN_TARGET,
    )


FENCED_BROKER_REMEDY = (
    "if broker {id} is gone for good: quorumctl cluster clear-registration {id} --bootstrap-server {via} "
    "(a dry run that checks it; --apply sends UnregisterBroker, as kafka-cluster.sh unregister "
    "--bootstrap-server {via} --id {id} does); if it is only stopped, start it again"
)
FENCED_BROKER_REMEDY_NO_ADDRESS = (
    "if broker {id} is gone for good: quorumctl cluster clear-registration {id} with --bootstrap-server and a "
    "running broker's address (not known here; a dry run that checks it; --apply sends UnregisterBroker, as "
    "kafka-cluster.sh unregister --id {id} does); if it is only stopped, start it again"
)


def fenced_broker_remedy(bid: int, via: str | None) -> str:
    """`via`: running brokers' addresses (host:port,...), when known."""
    return (FENCED_BROKER_REMEDY if via else FENCED_BROKER_REMEDY_NO_ADDRESS).format(id=bid, via=via)


def _addresses(listeners) -> list[str]:
    """host:port of a registration's listeners ("NAME://host:port")."""
    return [ln.split("://", 1)[1] for ln in listeners if "://" in ln]


def highest_target(ranges) -> str | None:
    """The highest metadata.version every given node supports (each a (min, max) range, or
    None when unknown): what an upgrade to the controllers' release targets."""
    tops = [r[1] for r in ranges if r]
    if not tops:
        return None
    return _level_name(min(tops)) if min(tops) in NAME_OF else None


def _blocks(features: dict, mv) -> str:
    """What a registration's supported metadata.version range blocks."""
    rng = features.get(METADATA_VERSION)
    if not rng:
        return "it advertises no metadata.version range"
    lo, hi = rng
    span = f"metadata.version {lo}-{hi} ({_level_name(lo)} to {_level_name(hi)})"
    if hi < max(NAME_OF):
        return (
            f"it supports {span}: Kafka refuses any metadata.version upgrade above {_level_name(hi)} "
            "while it stays registered"
        )
    return f"it supports {span}: it blocks no metadata.version upgrade quorumctl knows of"


def _level_name(level: int) -> str:
    try:
        return metadata_version_name(level)
    except Exception:  # a level this catalogue does not name
        return f"level {level}"


def image_registrations(best, voter_ids: set, mv, out: list[Finding]) -> None:
    """Registered controllers that are not voters, and fenced brokers, from the
    image of the most up-to-date metadata log: both stay registered after the
    node is gone (a controller removed with remove-controller and wiped, a broker
    that will not return) and both can block a metadata.version upgrade.
    A stopped cluster's brokers are all fenced (controlled shutdown fences), so
    a fenced broker is named only while another broker is not: the cluster
    runs without it."""
    if not voter_ids:
        return
    from ..errors import QuorumctlError
    from ..image.replay import replay

    try:
        img = replay([best.partition_dir], workers=1).image
    except (QuorumctlError, OSError):
        return  # an unreadable log is reported by verify; doctor judges what it can read
    where = f"{best.partition_dir}: the metadata image"
    # the voters' registrations: their addresses and the release they run, for the remedy's command
    voters_regs = [img.controllers[v] for v in sorted(voter_ids) if v in img.controllers]
    via = ",".join(a for reg in voters_regs for a in _addresses(reg["listeners"])[:1]) or None
    target = highest_target([reg["supportedFeatures"].get(METADATA_VERSION) for reg in voters_regs])
    for cid, reg in sorted(img.controllers.items()):
        if cid in voter_ids:
            continue
        out.append(
            Finding(
                "stale-controller-registration",
                "warning",
                f"controller {cid} is registered (listeners {', '.join(reg['listeners']) or 'none'}) but is not a voter "
                f"(voters {', '.join(map(str, sorted(voter_ids)))}): a removed controller stays registered; "
                + _blocks(reg["supportedFeatures"], mv),
                [f"{where}: /controllers/{cid}"],
                stale_remedy(cid, mv, via, target),
                node_id=cid,
            )
        )
    broker_registrations(img, where, mv, out)


def broker_registrations(img, where: str, mv, out: list[Finding]) -> None:
    """Fenced brokers while another runs, from an image (`where`: what it was replayed from)."""
    running = sorted(b for b, reg in img.brokers.items() if not reg.get("fenced"))
    brokers_via = ",".join(a for b in running for a in _addresses(img.brokers[b]["listeners"])[:1]) or None
    for bid, reg in sorted(img.brokers.items()):
        if not reg.get("fenced") or not running:
            continue
        out.append(
            Finding(
                "fenced-broker-registration",
                "warning",
                f"broker {bid} is registered but fenced while broker{'s' if len(running) > 1 else ''} "
                f"{', '.join(map(str, running))} {'are' if len(running) > 1 else 'is'} not: it stopped heartbeating "
                "(stopped, or gone for good), and its replicas are offline while it stays away; "
                + _blocks(reg["supportedFeatures"], mv),
                [f"{where}: /brokers/{bid}"],
                fenced_broker_remedy(bid, brokers_via),
                node_id=bid,
            )
        )


def live_registrations(report: Report, q, access: ClusterAccess, timeout: float) -> list[Finding]:
    """Registered controllers (DescribeCluster to the controllers `access` reaches, as
    kafka-cluster list-endpoints) that are not voters, unless the files already
    named them."""
    from ..errors import QuorumctlError
    from ..live.describe import registered_controllers

    source = access.controllers
    try:
        registered = registered_controllers(access, timeout)
    except QuorumctlError:
        return []
    known = {f.node_id for f in report.findings if f.code == "stale-controller-registration"}
    voter_ids = {v.id for v in q.voters}
    out = []
    mv: int | None = report.metadata_version.level if report.metadata_version else None
    asked, target = False, None
    for cid, addr in sorted(registered.items()):
        if cid in voter_ids or cid in known:
            continue
        if not asked:  # the remedy depends on the level and the release: ask the controllers once
            live_mv, supported = _live_metadata_version(access, timeout)
            mv, asked = (live_mv if mv is None else mv), True
            target = highest_target([supported])
        out.append(
            Finding(
                "stale-controller-registration",
                "warning",
                f"controller {cid} is registered ({addr}) but is not a voter (voters "
                f"{', '.join(str(v.id) for v in q.voters)}): a removed controller stays registered, and its supported "
                "range can block a metadata.version upgrade (give its log dirs to see the range)",
                [f"{source}: DescribeCluster (controllers)", f"{source}: DescribeQuorum"],
                stale_remedy(cid, mv, source, target),
                node_id=cid,
            )
        )
    return out


def _live_metadata_version(access: ClusterAccess, timeout: float):
    """(the finalized metadata.version, the supported (min, max) range) a controller
    reports in ApiVersions, each None when unknown."""
    from ..errors import QuorumctlError
    from ..live.describe import describe_features

    try:
        f = describe_features(access, timeout)
    except QuorumctlError:
        return None, None
    return f.finalized.get(METADATA_VERSION), f.supported.get(METADATA_VERSION)


def fetched_registrations(report: Report, access: ClusterAccess, timeout: float) -> list[Finding]:
    """With no metadata log dir given: the fenced brokers of the image replayed from the
    committed metadata log the quorum's leader serves (live.metadata_log, the way an
    observer reads it), since the controller listener lists no broker. Sets
    `report.registrations`: what was read, or why the registered brokers are not visible."""
    from ..errors import QuorumctlError
    from ..image.replay import replay_bytes
    from ..live.metadata_log import read_metadata_log

    if any(d.replica is not None for d in report.log_dirs):
        return []  # examine judged the log dir's image
    try:
        with access.connect(timeout) as client:
            log = read_metadata_log(client)
        img = replay_bytes(
            log.source,
            None if log.snapshot is None else (*log.snapshot, log.snapshot_bytes),
            log.log_start,
            log.log_bytes,
        )
    except QuorumctlError as e:
        report.registrations = {"visible": False, "reason": str(e)}
        return []
    report.registrations = {
        "visible": True,
        "source": log.source,
        "high_watermark": log.high_watermark,
        "snapshot": list(log.snapshot) if log.snapshot else None,
        "bytes": log.size,
        "brokers": sorted(img.brokers),
        "fenced": sorted(b for b, reg in img.brokers.items() if reg.get("fenced")),
    }
    out: list[Finding] = []
    where = f"{log.source}: the metadata image of the committed log (Fetch to offset {log.high_watermark - 1})"
    broker_registrations(img, where, report.metadata_version, out)
    return out
