"""`quorumctl doctor`: misconfigurations of a KRaft quorum found from its files."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..render.output import Output


def doctor(
    paths: List[str] = typer.Argument(None, metavar="LOG_DIR...", help="Log dirs to examine (besides the configs')."),
    config: List[str] = typer.Option([], "--config", "-c", metavar="FILE",
                                     help="A node's server.properties (repeatable: one per node)."),
    bootstrap_controller: Optional[str] = typer.Option(None, "--bootstrap-controller", metavar="HOST:PORT,...",
                                                       help="Also compare the live quorum (DescribeQuorum)."),
    timeout: float = typer.Option(5.0, "--timeout", help="Seconds for the live quorum to answer."),
    output: Optional[Output] = typer.Option(None, "--output", "-o", help="text, table or json."),
):
    """Find misconfigurations: ids, static vs dynamic quorum, directory ids, voter endpoints, listeners.

    Each finding has a severity, its evidence (file and line, or log and offset)
    and the remedy. Exit 0 when nothing is found, 1 otherwise.

    Example: quorumctl doctor -c /etc/kafka/c1.properties -c /etc/kafka/c2.properties -c /etc/kafka/c3.properties
    """
    import sys

    from ..diagnose import doctor as D
    from ..errors import QuorumctlError
    from ..render.output import json_line, resolve

    report = D.examine(list(config), list(paths or []))
    live_error = None
    if bootstrap_controller:
        from ..protocol.client import describe_quorum
        try:
            q = describe_quorum(None, bootstrap_controller, None, timeout)
            report.findings.extend(D.live_findings(report, q, bootstrap_controller))
        except QuorumctlError as e:
            live_error = str(e)
            report.findings.append(D.Finding("live-unreachable", "error", f"{bootstrap_controller}: {e}",
                                             [bootstrap_controller], "check the address and that a controller "
                                             "runs there; `quorumctl describe health` probes each one"))
    doc = report.to_json()
    mode = resolve(output)
    if mode is Output.json:
        sys.stdout.write(json_line(doc) + "\n")
    elif mode is Output.table:
        from rich.console import Console
        from rich.table import Table
        t = Table(title=D.text_lines({**doc, "findings": []})[0])
        for col in ("severity", "finding", "evidence", "remedy"):
            t.add_column(col)
        for f in doc["findings"]:
            t.add_row(f["severity"], f"{f['code']}: {f['message']}", "\n".join(f["evidence"]), f["remedy"])
        if not doc["findings"]:
            t.add_row("-", "No findings.", "", "")
        Console().print(t)
    else:
        sys.stdout.write("\n".join(D.text_lines(doc)) + "\n")
    raise typer.Exit(1 if doc["findings"] else 0)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
