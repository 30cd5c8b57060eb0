"""`quorumctl recover`: make a surviving controller the only voter after the
majority of the quorum is permanently lost."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..render.output import PlainOutput


def recover(
    paths: List[str] = typer.Argument(None, metavar="LOG_DIR...",
                                      help="The surviving controllers' log dirs (or __cluster_metadata-0 dirs)."),
    lost_voters: str = typer.Option(..., "--lost-voters", metavar="ID[,ID...]",
                                    help="The voters permanently lost (every voter not given must be named)."),
    config: List[str] = typer.Option([], "--config", "-c", metavar="FILE",
                                     help="A survivor's server.properties (its metadata log dir is read; a static "
                                          "quorum's controller.quorum.voters comes from it). Repeatable."),
    survivor: Optional[int] = typer.Option(None, "--survivor", metavar="NODE_ID",
                                           help="The node to keep (default: the most up-to-date one given)."),
    apply: bool = typer.Option(False, "--apply", help="Do it (the default is a dry run that prints the plan)."),
    backup_dir: Optional[str] = typer.Option(None, "--backup-dir", metavar="DIR",
                                             help="Where replaced files are kept (default: <log dir>."
                                                  "quorumctl-backup beside the log dir, same file system)."),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text or json."),
):
    """Rebuild a quorum that lost its majority from the surviving controller (dry run by default).

    Dynamic quorum (kraft.version 1): appends a VotersRecord holding only the
    survivor and resets quorum-state, so the survivor starts as the only voter;
    static quorum: resets quorum-state and prints the config changes. Then
    prints how to grow back (format, add-controller). With --apply: Kafka's
    .lock taken, a backup kept, the directory swapped in atomically.

    Example: quorumctl recover /var/lib/kafka/c1 --lost-voters 2,3 --apply
    """
    import sys

    from ..errors import InputError
    from ..protocol.connection import parse_quorum_voters
    from ..render.output import json_line, resolve_plain
    from ..storage import recover as recovery
    from ..storage.config import load

    lost = recovery.parse_ids(lost_voters)
    cfgs = [load(c) for c in config]
    targets = list(paths or []) + [c.metadata_log_dir for c in cfgs]
    if not targets:
        raise InputError("give the surviving controller's log dir (or -c server.properties)")
    static = None
    for c in cfgs:
        if c.quorum_voters:
            static = {i: str(a) for i, a in parse_quorum_voters(c.quorum_voters, c.path).items()}
    plan, report, holder = recovery.run(targets, lost, static, survivor, apply, backup_dir)
    doc = plan.to_json()
    if resolve_plain(output).value == "json":
        sys.stdout.write(json_line({"plan": doc, "applied": report, "dry_run": not apply}) + "\n")
    else:
        lines = recovery.plan_lines(doc, not apply, report)
        if holder:
            lines.append(f"note: process {holder} holds {plan.survivor.log_dir}/.lock (a running Kafka); "
                         "--apply will refuse")
        sys.stdout.write("\n".join(lines) + "\n")
    raise typer.Exit(1 if plan.refusal else 0)


def register(app: typer.Typer) -> None:
    app.command("recover")(recover)
