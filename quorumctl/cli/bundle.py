"""`quorumctl bundle`: one archive with everything support needs."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import ExitStatus
from ..render.output import PlainOutput


def bundle(
    paths: List[str] = typer.Argument(None, metavar="LOG_DIR...", help="Log dirs to include (besides the configs')."),
    out: str = typer.Option(..., "--out", metavar="FILE.tar.gz", help="The archive to write (never overwritten)."),
    config: List[str] = typer.Option([], "--config", "-c", metavar="FILE",
                                     help="A node's server.properties (repeatable); secrets are redacted."),
    bootstrap_controller: Optional[str] = typer.Option(None, "--bootstrap-controller", metavar="HOST:PORT,...",
                                                       help="Also describe the live quorum through a controller."),
    bootstrap_server: Optional[str] = typer.Option(None, "--bootstrap-server", metavar="HOST:PORT,...",
                                                   help="Also describe the live quorum through a broker."),
    include_logs: bool = typer.Option(False, "--include-logs", help="Include the metadata log files themselves."),
    timeout: float = typer.Option(5.0, "--timeout", help="Seconds each live call may take (a dead node never blocks)."),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text or json."),
):
    """Write one archive for support: every diagnosis, configs redacted, listings, a manifest.

    doctor, state, verify and describe outputs (text and json), the configs with
    every secret redacted, log dir listings with sizes and checksums, optionally
    the metadata logs (--include-logs), and a manifest. Never overwrites.

    Example: quorumctl bundle --out incident.tar.gz -c /etc/kafka/server.properties --bootstrap-controller c1:9093
    """
    import sys

    from ..diagnose.bundle import build
    from ..errors import InputError
    from ..render.output import json_line, resolve_plain
    from .main import run_captured

    if not config and not paths and not bootstrap_controller and not bootstrap_server:
        raise InputError("nothing to bundle: give --config, log dirs, or a --bootstrap-controller/--bootstrap-server")
    if timeout <= 0:
        raise InputError(f"--timeout must be positive, not {timeout:g}")
    res = build(out, list(config), list(paths or []), bootstrap_controller, bootstrap_server, include_logs, timeout,
                run_captured)
    if resolve_plain(output).value == "json":
        sys.stdout.write(json_line({k: v for k, v in res.items() if k != "manifest"}
                                   | {"parts": res["manifest"]["parts"]}) + "\n")
    else:
        lines = [f"Wrote {res['out']}: {res['parts']} part(s), {res['bytes']} bytes"]
        lines += [f"  {p['name']}: {p['what']}" for p in res["manifest"]["parts"]]
        lines += [f"note: {e}" for e in res["errors"]]
        sys.stdout.write("\n".join(lines) + "\n")
    raise typer.Exit(ExitStatus.OK)


def register(app: typer.Typer) -> None:
    app.command("bundle")(bundle)
