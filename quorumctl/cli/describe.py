"""`quorumctl describe status|replication|health`: the live quorum, over the wire.

Thin: parse the options, ask `quorumctl.protocol` (`client.describe_quorum`,
`health.probe_quorum`), render with `quorumctl.render.quorum` (which also runs
the --watch view). Everything heavier than typer is imported inside the
commands (Rich only for table output).
"""

from __future__ import annotations

from typing import Optional

import typer

from ..errors import ExitStatus
from .options import BootstrapController, BootstrapServer, CommandConfig, Deadline, OutputOpt, ServerConfig, Timeout

WATCH_HELP = ("Refresh every SECONDS until interrupted (Ctrl-C; exit 3 if the last refresh failed, "
              "else 0).")


def _run(kind: str, bootstrap_server, bootstrap_controller, command_config, timeout, output,
         watch, human_readable=False):
    from ..errors import InputError
    from ..protocol.client import Refresher, describe_quorum
    from ..render.output import resolve
    out = resolve(output)
    if watch is not None and watch <= 0:
        raise InputError(f"--watch must be a positive number of seconds, not {watch:g}")

    def once():
        return describe_quorum(bootstrap_server, bootstrap_controller, command_config, timeout)

    if watch is None:
        q = once()
        from ..render.quorum import print_quorum   # after the answer: a failed run imports no renderer
        print_quorum(kind, q, out, human_readable=human_readable)
        return
    from ..render.quorum import watch as watch_view
    if watch_view(kind, Refresher(once), out, watch, human_readable):
        raise typer.Exit(ExitStatus.UNREACHABLE)


def status(
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = None,
    output: OutputOpt = None,
    watch: Optional[float] = typer.Option(None, "--watch", metavar="SECONDS", help=WATCH_HELP),
    _status: bool = typer.Option(False, "--status", hidden=True),   # Kafka's flag for this view: a no-op
):
    """Leader, epoch, high watermark, lag and voters: kafka-metadata-quorum describe --status.

    Example: quorumctl describe status --bootstrap-controller localhost:9093
    """
    _run("status", bootstrap_server, bootstrap_controller, command_config, timeout, output, watch)


def replication(
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    human_readable: bool = typer.Option(False, "--human-readable",
                                        help="Text output: times as 'N ms ago' (on this machine's clock)."),
    timeout: Timeout = None,
    output: OutputOpt = None,
    watch: Optional[float] = typer.Option(None, "--watch", metavar="SECONDS", help=WATCH_HELP),
    _replication: bool = typer.Option(False, "--replication", hidden=True),   # Kafka's flag for this view: a no-op
):
    """Every replica's log end offset, lag and fetch times: kafka-metadata-quorum describe --replication.

    Example: quorumctl describe replication --bootstrap-server localhost:9092 --watch 2
    """
    _run("replication", bootstrap_server, bootstrap_controller, command_config, timeout, output, watch,
         human_readable)


def health(
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    config: ServerConfig = None,
    command_config: CommandConfig = None,
    timeout: Deadline = 5.0,
    fetch_timeout_ms: Optional[int] = typer.Option(None, "--fetch-timeout-ms",
                                                   help="Caught-up threshold (default: the config's "
                                                        "controller.quorum.fetch.timeout.ms, else 2000)."),
    fail_on_lag: bool = typer.Option(False, "--fail-on-lag", help="Exit 1 when degraded too, not only when unhealthy."),
    output: OutputOpt = None,
):
    """Probe every controller on its own and judge the quorum (works without a leader).

    Exit 0 healthy or degraded, 1 unhealthy (also degraded with --fail-on-lag).

    Example: quorumctl describe health --config /etc/kafka/server.properties
    """
    from ..protocol.health import probe_quorum
    from ..render.quorum import print_health
    from ..render.output import resolve
    out = resolve(output)
    h = probe_quorum(bootstrap_server, bootstrap_controller, config, command_config, timeout, fetch_timeout_ms)
    print_health(h, out)
    raise typer.Exit(ExitStatus.of(h.verdict == "unhealthy" or (fail_on_lag and h.verdict == "degraded")))


def register(app: typer.Typer) -> None:
    d = typer.Typer(help="Describe the live metadata quorum: status, replication, health.\n\n"
                         "Example: quorumctl describe replication --bootstrap-controller localhost:9093",
                    no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]})
    d.command("status")(status)
    d.command("replication")(replication)
    d.command("health")(health)
    app.add_typer(d, name="describe")
