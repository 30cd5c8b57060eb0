"""add-controller / remove-controller (KIP-853, as Kafka 3.9's
kafka-metadata-quorum): AddRaftVoter (80) / RemoveRaftVoter (81), with a dry run.

add-controller reads the new controller's own server.properties (given as
--command-config, as in Kafka): node.id, process.roles, metadata.log.dir (else
the first of log.dirs), the directory.id in that dir's meta.properties, and its
endpoints: the controller.listener.names resolved through listeners and
advertised.listeners (an empty host becomes localhost).

Errors: the quorum refusing the change (DUPLICATE_VOTER, VOTER_NOT_FOUND,
INVALID_REQUEST, UNSUPPORTED_VERSION e.g. kraft.version 0, ...) exits 1; bad
options or properties 2; an unreachable cluster or failed authentication 3.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import InputError, QuorumctlError, Refused
from ...wire.access import ClusterAccess
from ...live.describe import fetch_quorum

REFUSALS = {
    "DUPLICATE_VOTER",
    "VOTER_NOT_FOUND",
    "INVALID_REQUEST",
    "UNSUPPORTED_VERSION",
    "INCONSISTENT_CLUSTER_ID",
    "INVALID_VOTER_KEY",
}


@dataclass
class VoterChange:
    """What was done (or, in a dry run, would be done) to the voter set."""

    action: str  # "add-controller" or "remove-controller"
    dry_run: bool
    controller_id: int
    directory_id: str
    endpoints: list[str] = field(default_factory=list)  # name://host:port (add-controller)
    checked: list[str] = field(default_factory=list)  # what an add-controller dry run checked


def endpoint_text(name: str, host: str, port: int) -> str:
    return f"{name}://[{host}]:{port}" if ":" in host else f"{name}://{host}:{port}"


def _refusal(e: QuorumctlError) -> Refused | None:
    """The quorum refused the voter change (exit 1) when its error is one of REFUSALS;
    other errors (unreachable, bad input) stay what they are."""
    from ...wire.kerrors import KafkaError, error_name

    if isinstance(e, KafkaError) and error_name(e.code) in REFUSALS:
        return Refused(str(e))
    return None


def add_controller(access: ClusterAccess, timeout: float | None, dry_run: bool) -> VoterChange:
    """AddRaftVoter for the controller whose server.properties is the command config
    (as Kafka's tool reads it: its own properties, which also reach the quorum)."""
    from ...config.server import controller_from_properties
    from ...config.properties import load_properties

    command_config = access.command_config
    if command_config is None:
        raise InputError(
            "add-controller needs --command-config: the configuration file of the controller you are adding"
        )
    node_id, dir_id, endpoints, meta_path, meta_cluster = controller_from_properties(
        load_properties(command_config, "command config"), command_config
    )
    client = access.connect(timeout)
    change = VoterChange("add-controller", dry_run, node_id, dir_id, [endpoint_text(*e) for e in endpoints])
    if dry_run:
        with client:
            change.checked = _add_checks(client, node_id, change.endpoints, command_config, meta_path, meta_cluster)
        return change
    try:
        with client:
            client.add_raft_voter(node_id, dir_id, [{"name": n, "host": h, "port": p} for n, h, p in endpoints])
    except QuorumctlError as e:
        if (refusal := _refusal(e)) is None:
            raise
        raise refusal from e
    return change


def _add_checks(
    client, node_id: int, endpoints: list[str], config: str, meta_path: str, meta_cluster: str | None
) -> list[str]:
    """What a dry run can know before AddRaftVoter: the quorum answers, the
    controller belongs to this cluster, its id is not a voter yet (the leader
    refuses a voter id already in the set, whatever its directory id), and
    whether it already fetches as an observer (the leader times out a voter
    that has not caught up). A refusal raises (exit 1), as the leader's would."""
    q = fetch_quorum(client)
    lines = [
        f"checked: {q.source} answered DescribeQuorum: leader {q.leader_id}, epoch {q.leader_epoch}, "
        f"cluster {q.cluster_id}"
    ]
    if meta_cluster is not None and q.cluster_id is not None and meta_cluster != q.cluster_id:
        raise Refused(
            f"{meta_path}: cluster.id {meta_cluster} is not the quorum's ({q.cluster_id}): "
            "this controller was formatted for another cluster"
        )
    if meta_cluster is not None:
        lines.append(f"checked: {meta_path} has the quorum's cluster id")
    voters = ", ".join(str(v.id) for v in q.voters)
    if any(v.id == node_id for v in q.voters):
        raise Refused(
            f"controller {node_id} is already a voter (voters {voters}): the leader would "
            "refuse it with DUPLICATE_VOTER"
        )
    lines.append(f"checked: node id {node_id} is not a voter (voters {voters})")
    lines.append(f"checked: endpoints of {config}: " + ", ".join(endpoints))
    observer = next((o for o in q.observers if o.id == node_id), None)
    leo = q.leader().log_end_offset if q.leader() is not None else None
    if observer is None:
        lines.append(
            f"note: controller {node_id} is not fetching from the leader yet; start it and let it "
            "catch up first, or AddRaftVoter times out"
        )
    elif leo is not None:
        lines.append(
            f"checked: controller {node_id} fetches as an observer, "
            f"{max(leo - observer.log_end_offset, 0)} offset(s) behind the leader"
        )
    return lines


def _remove_check(q, controller_id: int, directory_id: str) -> None:
    """A dry run refuses (exit 1) what the leader would refuse with VOTER_NOT_FOUND: an
    (id, directory id) that is not in the voter set (a mistyped id or directory id)."""
    if any(v.id == controller_id and v.directory_id == directory_id for v in q.voters):
        return
    voters = ", ".join(f"{v.id} (directory id {v.directory_id})" for v in q.voters)
    raise Refused(
        f"controller {controller_id} with directory id {directory_id} is not a voter (voters {voters}): "
        "the leader would refuse it with VOTER_NOT_FOUND"
    )


def remove_controller(
    access: ClusterAccess, timeout: float | None, controller_id: int, directory_id: str, dry_run: bool
) -> VoterChange:
    from ...schema.codec import EncodeError, uuid_bytes, uuid_str

    if controller_id < 0:
        raise InputError(f"invalid negative --controller-id: {controller_id}")
    did = directory_id.strip()
    try:
        raw = uuid_bytes(did)
        if len(did) != 22 or uuid_str(raw) != did:
            raise EncodeError("not canonical")
    except EncodeError:
        raise InputError(
            f"invalid --controller-directory-id {directory_id!r}: expected a "
            "22-character base64url directory id, as in meta.properties"
        ) from None
    client = access.connect(timeout)
    if dry_run:  # what the leader would answer, asked before saying "DRY RUN of removing"
        with client:
            _remove_check(fetch_quorum(client), controller_id, did)
    else:
        try:
            with client:
                client.remove_raft_voter(controller_id, did)
        except QuorumctlError as e:
            if (refusal := _refusal(e)) is None:
                raise
            raise refusal from e
    return VoterChange("remove-controller", dry_run, controller_id, did)
