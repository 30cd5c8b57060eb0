"""`quorumctl recover`: make a surviving controller the only voter after the
majority of the quorum is permanently lost."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import ExitStatus
from .options import Apply, BackupDir, CommandConfig, Deadline, PlainOutputOpt, ServerConfigs


def recover(
    paths: List[str] = typer.Argument(None, metavar="LOG_DIR...",
                                      help="The surviving controllers' log dirs (or __cluster_metadata-0 dirs)."),
    lost_voters: str = typer.Option(..., "--lost-voters", metavar="ID[,ID...]",
                                    help="The voters permanently lost (every voter not given must be named)."),
    replica: List[str] = typer.Option([], "--replica", metavar="DIR",
                                      help="Another replica of the metadata log: a broker's or observer's log dir. "
                                           "The recovery starts from the most up-to-date replica given. Repeatable."),
    config: ServerConfigs = [],
    survivor: Optional[int] = typer.Option(None, "--survivor", metavar="NODE_ID",
                                           help="The controller to keep as the only voter (default: the most "
                                                "up-to-date one given)."),
    no_replica: str = typer.Option("", "--no-replica", metavar="ID[,ID...]",
                                   help="Registered brokers whose metadata log dir cannot be given: their extra "
                                        "entries are lost (the new epoch jumps past theirs)."),
    force_lost: str = typer.Option("", "--force-lost", metavar="ID[,ID...]",
                                   help="Declared-lost voters whose address now answers as something else (not a "
                                        "controller of this cluster): proceed anyway. Dangerous if wrong."),
    timeout: Deadline = 5.0,
    command_config: CommandConfig = None,
    apply: Apply = False,
    backup_dir: BackupDir = None,
    output: PlainOutputOpt = None,
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

    from ..errors import InputError
    from ..protocol.connection import load_client_config
    from ..config.addresses import Address, parse_quorum_voters
    from ..protocol.liveness import probe_voters
    from ..render.output import emit
    from ..render.recover import plan_lines
    from ..ops import recover as recovery
    from ..config.server import load

    lost = recovery.parse_ids(lost_voters)
    forced = recovery.parse_ids(force_lost, "--force-lost") if force_lost.strip() else []
    unread = recovery.parse_ids(no_replica, "--no-replica") if no_replica.strip() else []
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
                                        probe=probe, force_lost=forced, unread=unread)
    doc = plan.to_json()
    emit(output, doc, text=lambda d: "\n".join(plan_lines(d, not apply, report, holder)) + "\n",
         json=lambda d: {"plan": d, "applied": report, "dry_run": not apply})
    raise typer.Exit(ExitStatus.of(plan.refusal))


def register(app: typer.Typer) -> None:
    app.command("recover")(recover)
