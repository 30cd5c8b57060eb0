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
    replica: List[str] = typer.Option([], "--replica", metavar="DIR",
                                      help="Another replica of the metadata log: a broker's or observer's log dir. "
                                           "The recovery starts from the most up-to-date replica given. Repeatable."),
    config: List[str] = typer.Option([], "--config", "-c", metavar="FILE",
                                     help="A survivor's server.properties (its metadata log dir is read; a static "
                                          "quorum's controller.quorum.voters comes from it). Repeatable."),
    survivor: Optional[int] = typer.Option(None, "--survivor", metavar="NODE_ID",
                                           help="The controller to keep as the only voter (default: the most "
                                                "up-to-date one given)."),
    force_lost: str = typer.Option("", "--force-lost", metavar="ID[,ID...]",
                                   help="Declared-lost voters whose address now answers as something else (not a "
                                        "controller of this cluster): proceed anyway. Dangerous if wrong."),
    timeout: float = typer.Option(5.0, "--timeout", metavar="SECONDS",
                                  help="How long to probe the declared-lost voters' endpoints."),
    command_config: Optional[str] = typer.Option(None, "--command-config", metavar="FILE",
                                                 help="Client settings (TLS, SASL) for probing the lost voters."),
    apply: bool = typer.Option(False, "--apply", help="Do it (the default is a dry run that prints the plan)."),
    backup_dir: Optional[str] = typer.Option(None, "--backup-dir", metavar="DIR",
                                             help="Where the survivor's replaced files are kept (default: <log dir>."
                                                  "quorumctl-backup beside the log dir, same file system)."),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text or json."),
):
    """Rebuild a quorum that lost its majority from the surviving controller (dry run by default).

    Refuses while a declared-lost voter answers on its endpoint. Starts from
    the most up-to-date replica given (brokers too, with --replica). Dynamic
    quorum (kraft.version 1): appends a VotersRecord holding only the survivor
    in a new epoch and resets quorum-state; static quorum: resets quorum-state
    and prints the config changes. Replicas that diverge from the result are
    truncated. With --apply: Kafka's .lock taken on every dir, backups kept,
    each directory swapped in atomically.

    Example: quorumctl recover /var/lib/kafka/c1 --lost-voters 2,3 --replica /var/lib/kafka/b4 --apply
    """
    import sys

    from ..errors import InputError
    from ..protocol.config import load_client_config
    from ..protocol.connection import Address, parse_quorum_voters
    from ..protocol.liveness import probe_voters
    from ..render.output import json_line, resolve_plain
    from ..render.recover import plan_lines
    from ..storage import recover as recovery
    from ..storage.config import load

    lost = recovery.parse_ids(lost_voters)
    forced = recovery.parse_ids(force_lost, "--force-lost") if force_lost.strip() else []
    if timeout <= 0:
        raise InputError(f"--timeout must be positive, not {timeout:g}")
    cfgs = [load(c) for c in config]
    targets = list(paths or []) + [c.metadata_log_dir for c in cfgs]
    if not targets:
        raise InputError("give the surviving controller's log dir (or -c server.properties)")
    static = None
    for c in cfgs:
        if c.quorum_voters:
            static = {i: str(a) for i, a in parse_quorum_voters(c.quorum_voters, c.path).items()}
    client = load_client_config(command_config)

    def probe(endpoints: dict[int, list]) -> list:
        return probe_voters({v: [Address(h, p) for h, p in eps] for v, eps in endpoints.items()}, client, timeout)

    plan, report, holder = recovery.run(targets, lost, static, survivor, apply, backup_dir, replicas=replica,
                                        probe=probe, force_lost=forced)
    doc = plan.to_json()
    if resolve_plain(output).value == "json":
        sys.stdout.write(json_line({"plan": doc, "applied": report, "dry_run": not apply}) + "\n")
    else:
        sys.stdout.write("\n".join(plan_lines(doc, not apply, report, holder)) + "\n")
    raise typer.Exit(1 if plan.refusal else 0)


def register(app: typer.Typer) -> None:
    app.command("recover")(recover)
