"""`quorumctl add-controller` / `remove-controller` (KIP-853, as Kafka 3.9's
kafka-metadata-quorum): AddRaftVoter (80) / RemoveRaftVoter (81), with --dry-run.

add-controller reads the new controller's own server.properties (given as
--command-config, as in Kafka): node.id, process.roles, metadata.log.dir (else
the first of log.dirs), the directory.id in that dir's meta.properties, and its
endpoints: the controller.listener.names resolved through listeners and
advertised.listeners (an empty host becomes localhost).

Exit codes: 0 done; 1 the quorum refused the change (DUPLICATE_VOTER,
VOTER_NOT_FOUND, INVALID_REQUEST, UNSUPPORTED_VERSION e.g. kraft.version 0);
2 bad options or properties; 3 cluster unreachable or authentication failed.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from ..render.output import Output, PlainOutput
from ..storage.config import controller_from_properties
from .describe import ADDRS, BC_HELP, BS_HELP, TIMEOUT_HELP

REFUSALS = {"DUPLICATE_VOTER", "VOTER_NOT_FOUND", "INVALID_REQUEST", "UNSUPPORTED_VERSION",
            "INCONSISTENT_CLUSTER_ID", "INVALID_VOTER_KEY"}


def _endpoint_text(name: str, host: str, port: int) -> str:
    return f"{name}://[{host}]:{port}" if ":" in host else f"{name}://{host}:{port}"


def _refusal(e) -> int:
    from ..protocol.kerrors import KafkaError, error_name
    if isinstance(e, KafkaError) and error_name(e.code) in REFUSALS:
        return 1
    return e.exit_code


def _emit(out: Output, text: str, doc: dict):
    if out is Output.json:
        from ..render.quorum import to_json
        sys.stdout.write(to_json(doc))
    else:
        sys.stdout.write(text + "\n")


def add_controller(
    bootstrap_server: Optional[str] = typer.Option(None, "--bootstrap-server", metavar=ADDRS, help=BS_HELP),
    bootstrap_controller: Optional[str] = typer.Option(None, "--bootstrap-controller", metavar=ADDRS,
                                                        help=BC_HELP),
    command_config: Optional[str] = typer.Option(
        None, "--command-config", metavar="FILE",
        help="The new controller's server.properties (node.id, log dirs, listeners); also read for "
             "client security settings, as in Kafka."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be done, but do not do it."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help=TIMEOUT_HELP),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text or json."),
):
    """Add a controller to the KRaft voter set (AddRaftVoter).

    Example: quorumctl add-controller --bootstrap-controller localhost:9093 --command-config controller.properties
    """
    from ..errors import InputError, QuorumctlError
    from ..storage.properties import load_properties
    from ..render.output import resolve_plain
    from .describe import make_client

    out = resolve_plain(output)
    if command_config is None:
        raise InputError("add-controller needs --command-config: the configuration file of the controller "
                         "you are adding")
    node_id, dir_id, endpoints, meta_path, meta_cluster = controller_from_properties(
        load_properties(command_config, "command config"), command_config)
    client = make_client(bootstrap_server, bootstrap_controller, command_config, timeout)
    checked: list[str] = []
    if dry_run:
        with client:
            checked = _add_checks(client, node_id, endpoints, command_config, meta_path, meta_cluster)
    else:
        try:
            with client:
                client.add_raft_voter(node_id, dir_id, [{"name": n, "host": h, "port": p} for n, h, p in endpoints])
        except QuorumctlError as e:
            e.exit_code = _refusal(e)
            raise
    eps = ", ".join(_endpoint_text(*e) for e in endpoints)
    # the first line is Kafka's; what the dry run checked follows it
    text = "\n".join([f"{'DRY RUN of adding' if dry_run else 'Added'} controller {node_id} with directory id "
                      f"{dir_id} and endpoints: {eps}", *checked])
    doc = {"action": "add-controller", "dryRun": dry_run, "controllerId": node_id,
           "directoryId": dir_id, "endpoints": [_endpoint_text(*e) for e in endpoints]}
    if dry_run:
        doc["checked"] = [c.strip() for c in checked]
    _emit(out, text, doc)


def _add_checks(client, node_id: int, endpoints, config: str, meta_path: str,
                meta_cluster: str | None) -> list[str]:
    """What a dry run can know before AddRaftVoter: the quorum answers, the
    controller belongs to this cluster, its id is not a voter yet (the leader
    refuses a voter id already in the set, whatever its directory id), and
    whether it already fetches as an observer (the leader times out a voter
    that has not caught up). A refusal raises (exit 1), as the leader's would."""
    from ..errors import QuorumctlError
    from .describe import fetch_quorum

    q = fetch_quorum(client)
    lines = [f"  checked: {q.source} answered DescribeQuorum: leader {q.leader_id}, epoch {q.leader_epoch}, "
             f"cluster {q.cluster_id}"]
    if meta_cluster is not None and q.cluster_id is not None and meta_cluster != q.cluster_id:
        raise QuorumctlError(f"{meta_path}: cluster.id {meta_cluster} is not the quorum's ({q.cluster_id}): "
                             "this controller was formatted for another cluster", 1)
    if meta_cluster is not None:
        lines.append(f"  checked: {meta_path} has the quorum's cluster id")
    voters = ", ".join(str(v.id) for v in q.voters)
    if any(v.id == node_id for v in q.voters):
        raise QuorumctlError(f"controller {node_id} is already a voter (voters {voters}): the leader would "
                             "refuse it with DUPLICATE_VOTER", 1)
    lines.append(f"  checked: node id {node_id} is not a voter (voters {voters})")
    lines.append(f"  checked: endpoints of {config}: " + ", ".join(_endpoint_text(*e) for e in endpoints))
    observer = next((o for o in q.observers if o.id == node_id), None)
    leo = q.leader().log_end_offset if q.leader() is not None else None
    if observer is None:
        lines.append(f"  note: controller {node_id} is not fetching from the leader yet; start it and let it "
                     "catch up first, or AddRaftVoter times out")
    elif leo is not None:
        lines.append(f"  checked: controller {node_id} fetches as an observer, "
                     f"{max(leo - observer.log_end_offset, 0)} offset(s) behind the leader")
    return lines


def remove_controller(
    bootstrap_server: Optional[str] = typer.Option(None, "--bootstrap-server", metavar=ADDRS, help=BS_HELP),
    bootstrap_controller: Optional[str] = typer.Option(None, "--bootstrap-controller", metavar=ADDRS,
                                                        help=BC_HELP),
    command_config: Optional[str] = typer.Option(None, "--command-config", metavar="FILE",
                                                help="Kafka client properties file."),
    controller_id: int = typer.Option(..., "--controller-id", "-i", help="The id of the controller to remove."),
    controller_directory_id: str = typer.Option(..., "--controller-directory-id", "-d",
                                                help="The directory id of the controller to remove."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be done, but do not do it."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help=TIMEOUT_HELP),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text or json."),
):
    """Remove a controller from the KRaft voter set (RemoveRaftVoter).

    Example: quorumctl remove-controller --bootstrap-controller localhost:9093 -i 3 -d eAmx4J3YZ63RPobrVgXBAw
    """
    from ..errors import InputError, QuorumctlError
    from ..render.output import resolve_plain
    from ..schema.codec import EncodeError, uuid_bytes, uuid_str
    from .describe import make_client

    out = resolve_plain(output)
    if controller_id < 0:
        raise InputError(f"invalid negative --controller-id: {controller_id}")
    did = controller_directory_id.strip()
    try:
        raw = uuid_bytes(did)
        if len(did) != 22 or uuid_str(raw) != did:
            raise EncodeError("not canonical")
    except EncodeError:
        raise InputError(f"invalid --controller-directory-id {controller_directory_id!r}: expected a "
                         "22-character base64url directory id, as in meta.properties") from None
    client = make_client(bootstrap_server, bootstrap_controller, command_config, timeout)
    if not dry_run:
        try:
            with client:
                client.remove_raft_voter(controller_id, did)
        except QuorumctlError as e:
            e.exit_code = _refusal(e)
            raise
    # Kafka prints "Removed  KRaft..." with a double space (a bug); we print one.
    text = f"{'DRY RUN of removing' if dry_run else 'Removed'} KRaft controller {controller_id} with directory id {did}"
    _emit(out, text, {"action": "remove-controller", "dryRun": dry_run, "controllerId": controller_id,
                      "directoryId": did})


def register(app: typer.Typer) -> None:
    app.command("add-controller")(add_controller)
    app.command("remove-controller")(remove_controller)
