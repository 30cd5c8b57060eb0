"""`quorumctl doctor`: misconfigurations of a KRaft quorum found from its files."""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from .options import BootstrapController, CommandConfig, Deadline, OutputOpt, ServerConfigs, printer


def doctor(
    ctx: typer.Context,
    paths: Annotated[
        Optional[List[str]], typer.Argument(metavar="LOG_DIR...", help="Log dirs to examine (besides the configs').")
    ] = None,
    config: ServerConfigs = [],
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Deadline = 5.0,
    output: OutputOpt = None,
):
    """Find misconfigurations: ids, quorum kind, directory ids, voters, listeners, version traps.

    Static vs dynamic quorum against the storage, kraft.version and log matching
    across the logs, uncommitted voter changes, settings the cluster's metadata.version cannot
    serve (docs/diagnose.md lists every finding). Each finding has a severity, its evidence (file and line, or log and offset)
    and the remedy. Exit 0 when nothing is found, 1 otherwise.

    Example: quorumctl doctor -c /etc/kafka/c1.properties -c /etc/kafka/c2.properties -c /etc/kafka/c3.properties
    """
    from ..diagnose.file_checks import examine, merge_set_endpoints
    from ..diagnose.live_checks import check_live
    from ..render.diagnose import doctor_table, doctor_text

    from ..wire.access import ClusterAccess

    report = examine(list(config), list(paths or []), live_only=bool(bootstrap_controller))
    if bootstrap_controller:
        check_live(report, ClusterAccess(None, bootstrap_controller, command_config), timeout)
    merge_set_endpoints(report.findings)
    doc = report.to_json()
    printer(ctx).emit(output, doc, text=doctor_text, table=doctor_table)
    raise typer.Exit(ExitStatus.of(doc["findings"]))


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
