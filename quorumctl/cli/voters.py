"""The `voters` group: `voters check` (every stored endpoint and directory id of the
voter set against what answers and what the configs say) and `voters set-endpoints`
(the offline repair of stale endpoints, KAFKA-20661)."""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from .options import (
    Apply,
    BackupDir,
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    Deadline,
    DryRun,
    OutputOpt,
    PlainOutputOpt,
    ServerConfigs,
    group,
    printer,
)


def check(
    ctx: typer.Context,
    paths: Annotated[
        Optional[List[str]],
        typer.Argument(metavar="[LOG_DIR]...", help="Controllers' log dirs: the voter set of the most up-to-date one."),
    ] = None,
    config: ServerConfigs = [],
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Deadline = 5.0,
    output: OutputOpt = None,
):
    """Check every endpoint the voter set stores: resolved, probed, answering as that voter or not.

    The voter set comes from the live quorum (DescribeQuorum, with --bootstrap-controller or
    --bootstrap-server) or, offline or with no leader, from the log dirs given (and -c
    server.properties). Each stored endpoint's name is resolved and each address probed
    (ApiVersions, DescribeCluster, DescribeQuorum): it must answer as a controller of this
    cluster, as that voter. Findings: stale endpoints, observers holding a voter's id (a
    replaced disk), directory ids and configs that disagree with the voter set, each with
    its fix. Exit 0 clean, 1 findings, 2 bad input, 3 the cluster cannot be reached.

    Example: quorumctl voters check --bootstrap-controller c1:9093 -c /etc/kafka/c1.properties
    """
    from ..diagnose.voters import check as run_check
    from ..render.voters import check_lines, check_table
    from ..wire.access import ClusterAccess
    from .source import Source

    # both at once is allowed: the log dirs answer when the quorum has no leader
    source = Source.of([*(paths or []), *config], ClusterAccess(bootstrap_server, bootstrap_controller, command_config))
    source.one(
        neither="give --bootstrap-controller/--bootstrap-server (live), or the controllers' log dirs "
        "or -c server.properties (offline)"
    )
    doc = run_check(list(config), list(paths or []), source.access, timeout)
    printer(ctx).emit(output, doc, text=lambda d: "\n".join(check_lines(d)) + "\n", table=check_table)
    raise typer.Exit(ExitStatus.of(doc["findings"]))


def set_endpoints(
    ctx: typer.Context,
    paths: Annotated[
        List[str], typer.Argument(metavar="LOG_DIR...", help="Every voter's log dir (the controllers stopped).")
    ],
    endpoint: Annotated[
        List[str],
        typer.Option(
            "--endpoint",
            "-e",
            metavar="ID=LISTENER://HOST:PORT",
            help="A voter's new endpoint; repeat for each voter (and each listener).",
        ),
    ] = [],
    config: ServerConfigs = [],
    timeout: Deadline = 5.0,
    command_config: CommandConfig = None,
    apply: Apply = False,
    dry_run: DryRun = False,  # the default, said out loud
    backup_dir: BackupDir = None,
    output: PlainOutputOpt = None,
):
    """Change the voters' stored endpoints on the stopped controllers (dry run by default).

    For a dynamic quorum that elects no leader because the endpoints in its voter set
    are stale (every controller moved to new names or addresses, KAFKA-20661). Every
    voter's log dir must be given. Refuses while any controller answers on a stored or a
    new endpoint, while a registered broker sees a leader, or while Kafka holds a log
    dir's lock. Appends, at the same offset and in a new epoch, one control batch
    holding the voter set with the new endpoints (same ids, same directory ids) to
    every voter's log, from the most up-to-date one; resets quorum-state. With --apply:
    locked, backed up, each directory swapped in atomically. Refused before anything is
    written (exit 2): a listener name neither the voter set nor the controllers'
    controller.listener.names (-c) knows, a voter left without the controllers' listener,
    two voters at one address (what would stop Kafka's controllers or split their requests).

    Example: quorumctl voters set-endpoints /data/c1 /data/c2 /data/c3 -e 1=CONTROLLER://k1:9093 -e 2=CONTROLLER://k2:9093 -e 3=CONTROLLER://k3:9093 --apply
    """
    from ..config.server import load as load_config
    from ..ops import voter_endpoints as ve
    from ..wire.access import ClusterAccess
    from ..live.liveness import probe_voters_and_witnesses
    from ..render.recover import plan_doc
    from ..render.voters import plan_lines

    new = ve.parse_endpoints(list(endpoint))
    client = ClusterAccess(command_config=command_config).client_config()

    def probe(stored: dict[int, list], witnesses: list, cluster_id: str | None):
        return probe_voters_and_witnesses(stored, witnesses, client, timeout, cluster_id)

    configs = [load_config(c) for c in config]
    plan, report = ve.run(list(paths), new, apply, backup_dir, probe, configs)
    doc = plan.to_json()
    printer(ctx).emit(
        output,
        doc,
        text=lambda d: "\n".join(plan_lines(d, not apply, report)) + "\n",
        json=lambda d: plan_doc(d, report, not apply),
    )
    raise typer.Exit(ExitStatus.of(plan.refusal))


def register(app: typer.Typer) -> None:
    g = group(
        "The voter set: check its endpoints and directory ids, repair stale endpoints.\n\n"
        "Example: quorumctl voters check --bootstrap-controller c1:9093"
    )
    g.command("check")(check)
    g.command("set-endpoints")(set_endpoints)
    app.add_typer(g, name="voters")
