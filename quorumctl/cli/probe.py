"""`quorumctl probe`: one node's startup, readiness or liveness, for Kubernetes
probes and roll scripts. Thin: `live.automation.node_probe` decides, `render.probe` prints."""

from typing import Annotated, Optional

import typer

from .options import (
    BootstrapController,
    CommandConfig,
    ControllerCommandConfig,
    Deadline,
    FetchTimeoutMs,
    Grace,
    PlainOutputOpt,
    ServerConfig,
    printer,
)


def probe(
    ctx: typer.Context,
    address: Annotated[
        str,
        typer.Argument(
            metavar="NODE_ADDRESS",
            help="The node's host:port (its controller listener for a controller, a broker listener for a broker).",
        ),
    ],
    role: Annotated[str, typer.Option("--role", metavar="controller|broker", help="What the node is.")],
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            metavar="startup|ready|live",
            help="startup: it answers in its role; ready: attached and caught up; live: fails "
            "only on a wedge a restart fixes (default: ready).",
        ),
    ] = "ready",
    bootstrap_controller: BootstrapController = None,
    config: ServerConfig = None,
    command_config: CommandConfig = None,
    controller_command_config: ControllerCommandConfig = None,
    log_dir: Annotated[
        Optional[str],
        typer.Option(
            "--log-dir",
            metavar="DIR",
            help="The node's metadata log dir (read-only): quorum-state, and how long ago its log end last moved.",
        ),
    ] = None,
    node_id: Annotated[
        Optional[int],
        typer.Option(
            "--node-id",
            metavar="ID",
            help="The node's id (default: from --config, --log-dir, or its address among the ones the cluster lists).",
        ),
    ] = None,
    grace: Grace = 30.0,
    fetch_timeout_ms: FetchTimeoutMs = None,
    timeout: Deadline = 5.0,
    output: PlainOutputOpt = None,
):
    """Is this node attached to the quorum? Startup, readiness and liveness for one node.

    Asks the node itself (ApiVersions, DescribeCluster, and its log dir with --log-dir) and the leader
    (DescribeQuorum: the node's log end, last fetch and last caught-up time). ready: a controller
    follows the current leader and is caught up (or leads with a caught-up majority); a broker is
    registered, unfenced and caught up. live fails only when the node has been attached to nothing for
    longer than --grace while the others have a leader: a quorum that lost its majority never makes
    every node fail it.

    Exit 0 passes, 1 fails (the reason on one line), 3 nothing answered at all (startup, ready; live
    passes then, saying why).

    Example: quorumctl probe 127.0.0.1:9093 --role controller --kind live --config /etc/kafka/server.properties
    """
    from ..live.automation.node_probe import probe_node
    from ..render.probe import probe_doc, probe_text
    from ..wire.access import ClusterAccess

    v = probe_node(
        address,
        role,
        kind,
        access=ClusterAccess(None, bootstrap_controller, command_config, controller_command_config),
        config=config,
        timeout=timeout,
        grace_s=grace,
        fetch_timeout_ms=fetch_timeout_ms,
        node_id=node_id,
        log_dir=log_dir,
    )
    printer(ctx).emit(output, v, text=probe_text, json=probe_doc)
    raise typer.Exit(int(v.status))


def register(app: typer.Typer) -> None:
    app.command("probe")(probe)
