"""`quorumctl describe status|replication|health`: the live quorum, over the wire.

Thin: parse the options, ask `quorumctl.live` (`describe.describe_quorum`,
`health_probe.probe_quorum`), print `quorumctl.render.quorum`'s views through
`render.output`; the --watch loops are `cli/watch.py`'s. Everything heavier than typer is imported inside the
commands (Rich only for table output).
"""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from ..render.output import Printer
from .options import (
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    ControllerCommandConfig,
    Deadline,
    FetchTimeoutMs,
    FlappingEpochs,
    OutputOpt,
    ServerConfig,
    Timeout,
    Watch,
    group,
    parse_node_ids,
    positive,
    printer,
)


def _run(printer: Printer, kind: str, access, timeout, output, watch, human_readable=False):
    from ..wire.client import Refresher
    from ..live.describe import describe_quorum

    out = printer.resolve(output)

    def once():  # each refresh reads the configuration afresh, as each sample of a loop does
        return describe_quorum(access.renewed(), timeout)

    if watch is None:
        q = once()
        from .watch import show_quorum  # after the answer: a failed run imports no renderer

        show_quorum(printer, kind, q, out, human_readable=human_readable)
        return
    from .watch import watch_quorum

    if watch_quorum(printer, kind, Refresher(once), out, watch, human_readable):
        raise typer.Exit(ExitStatus.UNREACHABLE)


def status(
    ctx: typer.Context,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = None,
    output: OutputOpt = None,
    watch: Watch = None,
    _status: Annotated[bool, typer.Option("--status", hidden=True)] = False,  # Kafka's flag for this view: a no-op
):
    """Leader, epoch, high watermark, lag and voters: kafka-metadata-quorum describe --status.

    Example: quorumctl describe status --bootstrap-controller localhost:9093
    """
    from ..wire.access import ClusterAccess

    access = ClusterAccess(bootstrap_server, bootstrap_controller, command_config)
    _run(printer(ctx), "status", access, timeout, output, watch)


def replication(
    ctx: typer.Context,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    human_readable: Annotated[
        bool, typer.Option("--human-readable", help="Text output: times as 'N ms ago' (on this machine's clock).")
    ] = False,
    timeout: Timeout = None,
    output: OutputOpt = None,
    watch: Watch = None,
    _replication: Annotated[
        bool, typer.Option("--replication", hidden=True)
    ] = False,  # Kafka's flag for this view: a no-op
):
    """Every replica's log end offset, lag and fetch times: kafka-metadata-quorum describe --replication.

    Example: quorumctl describe replication --bootstrap-server localhost:9092 --watch 2
    """
    from ..wire.access import ClusterAccess

    access = ClusterAccess(bootstrap_server, bootstrap_controller, command_config)
    _run(printer(ctx), "replication", access, timeout, output, watch, human_readable)


def health(
    ctx: typer.Context,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    config: ServerConfig = None,
    command_config: CommandConfig = None,
    controller_command_config: ControllerCommandConfig = None,
    timeout: Deadline = 5.0,
    fetch_timeout_ms: FetchTimeoutMs = None,
    fail_on_lag: Annotated[
        bool, typer.Option("--fail-on-lag", help="Exit 1 when degraded too, not only when unhealthy.")
    ] = False,
    can_restart: Annotated[
        Optional[List[str]],
        typer.Option(
            "--can-restart",
            metavar="ID[,ID...]",
            help="May these nodes be restarted now (together)? Strimzi's rule: the caught-up voters without them "
            "must still be a majority. Exit 0 allowed, 1 refused, 3 nothing answered. Repeatable.",
        ),
    ] = None,
    watch: Watch = None,
    exit_when_healthy: Annotated[
        bool, typer.Option("--exit-when-healthy", help="With --watch: exit 0 at the first healthy sample.")
    ] = False,
    samples: Annotated[
        Optional[int],
        typer.Option(
            "--samples",
            callback=positive,
            metavar="N",
            help="With --watch: stop after N samples (exit with the last one's status).",
        ),
    ] = None,
    flapping_epochs: FlappingEpochs = 3,
    output: OutputOpt = None,
):
    """Probe every controller on its own and judge the quorum (works without a leader).

    Exit 0 healthy or degraded, 1 unhealthy (also degraded with --fail-on-lag; with --watch also stalled or
    flapping), 3 when nothing answered at all. With --can-restart: 0 allowed, 1 refused, 3 nothing answered.

    Example: quorumctl describe health --config /etc/kafka/server.properties --can-restart 2
    """
    from ..errors import InputError
    from ..live.health.probe import probe_quorum
    from ..domain.health_verdict import exit_status
    from ..wire.access import ClusterAccess

    pr = printer(ctx)
    out = pr.resolve(output)
    access = ClusterAccess(bootstrap_server, bootstrap_controller, command_config, controller_command_config)
    ids = parse_node_ids(can_restart, "--can-restart")
    if watch is None:
        for flag, given in (("--exit-when-healthy", exit_when_healthy), ("--samples", samples is not None)):
            if given:
                raise InputError(f"{flag} needs --watch")

    def sample(budget: float):  # each sample reads the client configuration afresh
        return probe_quorum(access.renewed(), config, budget, fetch_timeout_ms, ids)

    if watch is None:
        h = sample(timeout)
        from ..render.quorum import health_doc, health_table, health_text

        pr.emit(out, h, text=health_text, table=health_table, json=health_doc)
        raise typer.Exit(exit_status(h, fail_on_lag))
    from .watch import watch_health

    # a sample never takes longer than the interval: no leader must not slow the view down
    raise typer.Exit(
        watch_health(
            pr,
            lambda: sample(min(timeout, watch)),
            out,
            watch,
            fail_on_lag=fail_on_lag,
            exit_when_healthy=exit_when_healthy,
            samples=samples,
            flapping_epochs=flapping_epochs,
        )
    )


def register(app: typer.Typer) -> None:
    d = group(
        "Describe the live metadata quorum: status, replication, health.\n\n"
        "Example: quorumctl describe replication --bootstrap-controller localhost:9093"
    )
    d.command("status")(status)
    d.command("replication")(replication)
    d.command("health")(health)
    app.add_typer(d, name="describe")
