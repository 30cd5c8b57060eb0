"""`quorumctl bundle`: one archive with everything support needs."""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from .options import (
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    Deadline,
    PlainOutputOpt,
    ServerConfigs,
    printer,
)


def bundle(
    ctx: typer.Context,
    *,  # keyword-only: a required option below keeps its place in --help
    paths: Annotated[
        Optional[List[str]], typer.Argument(metavar="LOG_DIR...", help="Log dirs to include (besides the configs').")
    ] = None,
    out: Annotated[str, typer.Option("--out", metavar="FILE.tar.gz", help="The archive to write (never overwritten).")],
    config: ServerConfigs = [],
    bootstrap_controller: BootstrapController = None,
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    include_logs: Annotated[
        bool, typer.Option("--include-logs", help="Include the metadata log files themselves.")
    ] = False,
    timeout: Deadline = 5.0,
    output: PlainOutputOpt = None,
):
    """Write one archive for support: every diagnosis, configs redacted, listings, a manifest.

    doctor, state, verify and describe outputs (text and json), the configs with
    every secret redacted, log dir listings with sizes and checksums, optionally
    the metadata logs (--include-logs), and a manifest. Never overwrites.

    Example: quorumctl bundle --out incident.tar.gz -c /etc/kafka/server.properties --bootstrap-controller c1:9093
    """
    from ..diagnose.bundle import build
    from ..render.diagnose import bundle_doc, bundle_text
    from ..wire.access import ClusterAccess
    from .main import run_captured
    from .source import Source

    # the files and the cluster together: a bundle holds both
    source = Source.of([*config, *(paths or [])], ClusterAccess(bootstrap_server, bootstrap_controller, command_config))
    source.one(neither="nothing to bundle: give --config, log dirs, or a --bootstrap-controller/--bootstrap-server")
    res = build(out, list(config), list(paths or []), source.access, include_logs, timeout, run_captured)
    printer(ctx).emit(output, res, text=bundle_text, json=bundle_doc)
    raise typer.Exit(ExitStatus.OK)


def register(app: typer.Typer) -> None:
    app.command("bundle")(bundle)
