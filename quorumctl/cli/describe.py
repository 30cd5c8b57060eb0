"""`quorumctl describe status|replication|health`: the live quorum, over the wire.

Thin: parse the options, ask `quorumctl.protocol`, render with
`quorumctl.render.quorum`. Everything heavier than typer is imported inside the
commands (Rich only for table output).
"""

from __future__ import annotations

import sys
import time
from typing import Optional

import typer

from ..render.output import Output

BS_HELP = "Comma-separated host:port list of brokers (a broker forwards to the active controller)."
BC_HELP = "Comma-separated host:port list of controllers (DescribeCluster names the active one; asked directly)."
CC_HELP = ("Kafka client properties file: security.protocol, sasl.mechanism, sasl.jaas.config, "
           "ssl.truststore.*, ssl.keystore.*, request.timeout.ms, client.id ...")
TIMEOUT_HELP = "Give up after this many seconds in total (default: default.api.timeout.ms or 15)."
OUTPUT_HELP = "text (Kafka 4.1's exact format; default when piped), table (default on a terminal) or json."
WATCH_HELP = ("Refresh every SECONDS until interrupted (Ctrl-C; exit 3 if the last refresh failed, "
              "else 0).")
# metavars (FILE, DIR, ...) also choose what the shell completions offer: see cli/generate.py
ADDRS = "HOST:PORT,..."


def make_client(bootstrap_server: str | None, bootstrap_controller: str | None,
                command_config: str | None, timeout: float | None):
    """A QuorumClient from the Kafka-style connection options."""
    from ..errors import InputError
    from ..protocol.client import QuorumClient
    from ..protocol.config import load_client_config
    from ..protocol.connection import parse_address_list

    if bootstrap_server and bootstrap_controller:
        raise InputError("--bootstrap-server and --bootstrap-controller cannot be used together")
    if not bootstrap_server and not bootstrap_controller:
        raise InputError("one of --bootstrap-server or --bootstrap-controller is required")
    if timeout is not None and timeout <= 0:
        raise InputError(f"--timeout must be positive, not {timeout:g}")
    cfg = load_client_config(command_config)
    if bootstrap_server:
        return QuorumClient(parse_address_list(bootstrap_server, "--bootstrap-server"), "server", cfg, timeout)
    return QuorumClient(parse_address_list(bootstrap_controller, "--bootstrap-controller"), "controller", cfg, timeout)


def fetch_quorum(client):
    """Cluster id (DescribeCluster, or Metadata on old brokers) + DescribeQuorum."""
    from ..protocol.quorum import quorum_from_partition
    info = client.cluster_info()
    qr = client.describe_quorum()
    return quorum_from_partition(qr.partition, qr.nodes, qr.version, qr.source, info.cluster_id)


def now_ms() -> int:
    return int(time.time() * 1000)


def render(kind: str, q, out: Output, *, human_readable: bool = False, now: int | None = None,
           console=None) -> None:
    """Print one status/replication view of `q` to stdout."""
    from ..render import quorum as render_quorum
    now = now_ms() if now is None else now
    if out is Output.json:
        doc = render_quorum.status_doc(q, now) if kind == "status" else render_quorum.replication_doc(q, now)
        sys.stdout.write(render_quorum.to_json(doc))
    elif out is Output.table:
        from rich.console import Console
        console = console or Console()
        console.print(render_quorum.status_table(q, now) if kind == "status" else render_quorum.replication_table(q, now))
    else:
        for w in (render_quorum.clock_drift(q, now) if human_readable else []):
            sys.stderr.write(w + "\n")
        if q.leader() is None:
            sys.stderr.write(f"warning: leader {q.leader_id} is not among the voters or observers; "
                             "lag values are unknown\n")
        sys.stdout.write(render_quorum.status_text(q) if kind == "status" else
                         render_quorum.replication_text(q, human_readable, now))
    sys.stdout.flush()


def _run(kind: str, bootstrap_server, bootstrap_controller, command_config, timeout, output,
         watch, human_readable=False):
    from ..errors import InputError
    from ..render.output import resolve
    out = resolve(output)
    if watch is not None and watch <= 0:
        raise InputError(f"--watch must be a positive number of seconds, not {watch:g}")

    def once():
        with make_client(bootstrap_server, bootstrap_controller, command_config, timeout) as client:
            return fetch_quorum(client)

    if watch is None:
        render(kind, once(), out, human_readable=human_readable)
        return
    _watch(kind, once, out, watch, human_readable)


def _watch(kind: str, once, out: Output, every: float, human_readable: bool):
    """A live view until Ctrl-C. Errors are shown and retried: during an
    incident the view must keep going when the cluster blips. A failed refresh
    keeps the last good view on screen, with the error and its time beneath it.
    Ctrl-C exits 3 when the last refresh failed (the quorum was unreachable when
    the operator stopped watching), else 0."""
    from ..errors import EXIT_UNREACHABLE, ClusterError, InputError
    failure: list[str] = []    # the last refresh's [time, error]; empty when it worked
    try:
        if out is Output.table:
            from rich.console import Group
            from rich.live import Live
            from rich.text import Text
            from ..render import quorum as render_quorum
            view = Text("connecting...")
            with Live(view, auto_refresh=False, screen=False) as live:
                while True:
                    try:
                        q = once()
                        now = now_ms()
                        view = render_quorum.status_table(q, now) if kind == "status" else render_quorum.replication_table(q, now)
                        failure.clear()
                        shown = [view, Text(f"updated {time.strftime('%H:%M:%S')}; refreshing every {every:g} s; "
                                            "Ctrl-C to stop", style="dim")]
                    except InputError:
                        raise
                    except ClusterError as e:
                        failure[:] = [time.strftime('%H:%M:%S'), str(e)]
                        shown = [view, Text(f"{failure[0]} error: {failure[1]}", style="red"),
                                 Text(f"the view above is the last good one; retrying every {every:g} s; "
                                      "Ctrl-C to stop", style="dim")]
                    live.update(Group(*shown), refresh=True)
                    time.sleep(every)
        else:
            clear = out is Output.text and sys.stdout.isatty()
            last = None
            while True:
                try:
                    q = once()
                    last = q
                    failure.clear()
                    if clear:
                        sys.stdout.write("\x1b[H\x1b[2J")
                    render(kind, q, out, human_readable=human_readable)
                    if out is Output.text and not clear:
                        sys.stdout.write("\n")
                except InputError:
                    raise
                except ClusterError as e:
                    failure[:] = [time.strftime('%H:%M:%S'), str(e)]
                    if clear and last is not None:
                        # redraw the last good view so the error sits beneath it, not below old errors
                        sys.stdout.write("\x1b[H\x1b[2J")
                        render(kind, last, out, human_readable=human_readable)
                    sys.stdout.flush()
                    sys.stderr.write(f"quorumctl: error: {failure[1]} (at {failure[0]})\n")
                sys.stdout.flush()
                time.sleep(every)
    except KeyboardInterrupt:
        if failure:
            sys.stderr.write(f"quorumctl: error: stopped after a failed refresh (at {failure[0]}): {failure[1]}\n")
            raise typer.Exit(EXIT_UNREACHABLE)
        return


def status(
    bootstrap_server: Optional[str] = typer.Option(None, "--bootstrap-server", metavar=ADDRS, help=BS_HELP),
    bootstrap_controller: Optional[str] = typer.Option(None, "--bootstrap-controller", metavar=ADDRS,
                                                        help=BC_HELP),
    command_config: Optional[str] = typer.Option(None, "--command-config", metavar="FILE", help=CC_HELP),
    timeout: Optional[float] = typer.Option(None, "--timeout", help=TIMEOUT_HELP),
    output: Optional[Output] = typer.Option(None, "--output", "-o", help=OUTPUT_HELP),
    watch: Optional[float] = typer.Option(None, "--watch", metavar="SECONDS", help=WATCH_HELP),
    _status: bool = typer.Option(False, "--status", hidden=True),   # Kafka's flag for this view: a no-op
):
    """Leader, epoch, high watermark, lag and voters: kafka-metadata-quorum describe --status.

    Example: quorumctl describe status --bootstrap-controller localhost:9093
    """
    _run("status", bootstrap_server, bootstrap_controller, command_config, timeout, output, watch)


def replication(
    bootstrap_server: Optional[str] = typer.Option(None, "--bootstrap-server", metavar=ADDRS, help=BS_HELP),
    bootstrap_controller: Optional[str] = typer.Option(None, "--bootstrap-controller", metavar=ADDRS,
                                                        help=BC_HELP),
    command_config: Optional[str] = typer.Option(None, "--command-config", metavar="FILE", help=CC_HELP),
    human_readable: bool = typer.Option(False, "--human-readable",
                                        help="Text output: times as 'N ms ago' (on this machine's clock)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help=TIMEOUT_HELP),
    output: Optional[Output] = typer.Option(None, "--output", "-o", help=OUTPUT_HELP),
    watch: Optional[float] = typer.Option(None, "--watch", metavar="SECONDS", help=WATCH_HELP),
    _replication: bool = typer.Option(False, "--replication", hidden=True),   # Kafka's flag for this view: a no-op
):
    """Every replica's log end offset, lag and fetch times: kafka-metadata-quorum describe --replication.

    Example: quorumctl describe replication --bootstrap-server localhost:9092 --watch 2
    """
    _run("replication", bootstrap_server, bootstrap_controller, command_config, timeout, output, watch,
         human_readable)


def health(
    bootstrap_server: Optional[str] = typer.Option(None, "--bootstrap-server", metavar=ADDRS, help=BS_HELP),
    bootstrap_controller: Optional[str] = typer.Option(None, "--bootstrap-controller", metavar=ADDRS,
                                                        help=BC_HELP),
    config: Optional[str] = typer.Option(None, "--config", "-c", metavar="FILE",
                                         help="A server.properties: controller.quorum.voters or "
                                              "controller.quorum.bootstrap.servers, controller.quorum.fetch.timeout.ms."),
    command_config: Optional[str] = typer.Option(None, "--command-config", metavar="FILE", help=CC_HELP),
    timeout: float = typer.Option(5.0, "--timeout", help="Answer within this many seconds, whatever the nodes do."),
    fetch_timeout_ms: Optional[int] = typer.Option(None, "--fetch-timeout-ms",
                                                   help="Caught-up threshold (default: the config's "
                                                        "controller.quorum.fetch.timeout.ms, else 2000)."),
    fail_on_lag: bool = typer.Option(False, "--fail-on-lag", help="Exit 1 when degraded too, not only when unhealthy."),
    output: Optional[Output] = typer.Option(None, "--output", "-o", help="text, table or json."),
):
    """Probe every controller on its own and judge the quorum (works without a leader).

    Exit 0 healthy or degraded, 1 unhealthy (also degraded with --fail-on-lag).

    Example: quorumctl describe health --config /etc/kafka/server.properties
    """
    code = run_health(bootstrap_server, bootstrap_controller, config, command_config, timeout,
                      fetch_timeout_ms, fail_on_lag, output)
    raise typer.Exit(code)


def run_health(bootstrap_server, bootstrap_controller, config, command_config, timeout,
               fetch_timeout_ms, fail_on_lag, output) -> int:
    from ..errors import InputError
    from ..protocol.config import load_client_config
    from ..protocol.connection import parse_address_list
    from ..protocol.health import DEFAULT_FETCH_TIMEOUT_MS, check_health, targets_from_server_config
    from ..render.output import resolve

    out = resolve(output)
    if timeout <= 0:
        raise InputError(f"--timeout must be positive, not {timeout:g}")
    cfg = load_client_config(command_config)
    voters, boot, cfg_fetch = {}, [], None
    if config:
        from ..storage.properties import load_properties
        voters, boot, cfg_fetch = targets_from_server_config(load_properties(config, "server config"), config)
    controllers = parse_address_list(bootstrap_controller, "--bootstrap-controller") if bootstrap_controller else []
    servers = parse_address_list(bootstrap_server, "--bootstrap-server") if bootstrap_server else []
    if not (controllers or servers or voters or boot):
        raise InputError("nothing to probe: give --bootstrap-controller, --bootstrap-server, or --config "
                         "with controller.quorum.voters / controller.quorum.bootstrap.servers")
    fetch = fetch_timeout_ms if fetch_timeout_ms is not None else (cfg_fetch or DEFAULT_FETCH_TIMEOUT_MS)
    if fetch <= 0:
        raise InputError(f"--fetch-timeout-ms must be positive, not {fetch}")
    h = check_health(cfg, controllers=controllers, servers=servers, config_voters=voters,
                     config_bootstrap=boot, timeout_s=timeout, fetch_timeout_ms=fetch)
    emit_health(h, out)
    if h.verdict == "unhealthy" or (fail_on_lag and h.verdict == "degraded"):
        return 1
    return 0


def emit_health(h, out: Output, console=None) -> None:
    from ..render import quorum as render_quorum
    if out is Output.json:
        sys.stdout.write(render_quorum.to_json(render_quorum.health_doc(h)))
    elif out is Output.table:
        from rich.console import Console
        console = console or Console()
        for t in render_quorum.health_table(h):
            console.print(t)
    else:
        sys.stdout.write(render_quorum.health_text(h))
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    d = typer.Typer(help="Describe the live metadata quorum: status, replication, health.\n\n"
                         "Example: quorumctl describe replication --bootstrap-controller localhost:9093",
                    no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]})
    d.command("status")(status)
    d.command("replication")(replication)
    d.command("health")(health)
    app.add_typer(d, name="describe")
