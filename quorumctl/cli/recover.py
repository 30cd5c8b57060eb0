"""`quorumctl recover`: make a surviving controller the only voter after the
majority of the quorum is permanently lost."""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from .options import (
    Apply,
    BackupDir,
    BootstrapServer,
    CommandConfig,
    Deadline,
    DryRun,
    PlainOutputOpt,
    ServerConfigs,
    parse_node_ids,
    printer,
)


def recover(
    ctx: typer.Context,
    *,  # keyword-only: a required option below keeps its place in --help
    paths: Annotated[
        Optional[List[str]],
        typer.Argument(
            metavar="LOG_DIR...", help="The surviving controllers' log dirs (or __cluster_metadata-0 dirs)."
        ),
    ] = None,
    lost_voters: Annotated[
        str,
        typer.Option(
            "--lost-voters",
            metavar="ID[,ID...]",
            help="The voters permanently lost (every voter not given must be named).",
        ),
    ],
    replica: Annotated[
        List[str],
        typer.Option(
            "--replica",
            metavar="DIR",
            help="Another replica of the metadata log: a broker's or observer's log dir. "
            "The recovery starts from the most up-to-date replica given. Repeatable.",
        ),
    ] = [],
    config: ServerConfigs = [],
    survivor: Annotated[
        Optional[int],
        typer.Option(
            "--survivor",
            metavar="NODE_ID",
            help="The controller to keep as the only voter (default: the most up-to-date one given).",
        ),
    ] = None,
    no_replica: Annotated[
        str,
        typer.Option(
            "--no-replica",
            metavar="ID[,ID...]",
            help="Registered brokers whose metadata log dir cannot be given: their extra "
            "entries are lost (the new epoch jumps past theirs).",
        ),
    ] = "",
    force_lost: Annotated[
        str,
        typer.Option(
            "--force-lost",
            metavar="ID[,ID...]",
            help="Declared-lost voters whose address now answers as something else (not a "
            "controller of this cluster): proceed anyway. Dangerous if wrong.",
        ),
    ] = "",
    timeout: Deadline = 5.0,
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    apply: Apply = False,
    dry_run: DryRun = False,  # the default, said out loud
    backup_dir: BackupDir = None,
    output: PlainOutputOpt = None,
):
    """Rebuild a quorum that lost its majority from the surviving controller (dry run by default).

    Refuses while a declared-lost voter answers on its endpoint, or while any
    other node that can be asked (the registered brokers and controllers, and
    --bootstrap-server) sees a leader: a voter may look gone only from here. Starts from
    the most up-to-date replica given (brokers too, with --replica). Dynamic
    quorum (kraft.version 1): appends a VotersRecord holding only the survivor
    in a new epoch and resets quorum-state; static quorum: resets quorum-state
    and prints the config changes. Replicas that diverge from the result are
    truncated. With --apply: Kafka's .lock taken on every dir, backups kept,
    each directory swapped in atomically.

    Example: quorumctl recover /var/lib/kafka/c1 --lost-voters 2,3 --replica /var/lib/kafka/b4 --apply
    """

    from ..errors import InputError
    from ..wire.access import ClusterAccess
    from ..config.addresses import parse_address_list, parse_quorum_voters
    from ..live.liveness import probe_voters_and_witnesses
    from ..render.recover import plan_doc, plan_lines
    from ..ops import recover as recovery
    from ..config.server import load

    lost = sorted(parse_node_ids(lost_voters, "--lost-voters"))
    forced = sorted(parse_node_ids(force_lost, "--force-lost")) if force_lost.strip() else []
    unread = sorted(parse_node_ids(no_replica, "--no-replica")) if no_replica.strip() else []
    cfgs = [load(c) for c in config]
    given = list(paths or [])
    _refuse_twice(given + list(replica))
    targets = _distinct_dirs(given + [c.metadata_log_dir for c in cfgs])
    if not targets:
        raise InputError("give the surviving controller's log dir (or -c server.properties)")
    static = None
    for c in cfgs:
        if c.quorum_voters:
            static = {i: str(a) for i, a in parse_quorum_voters(c.quorum_voters, c.path).items()}
    asked = [
        ("bootstrap server", None, [(a.host, a.port)])
        for a in (parse_address_list(bootstrap_server, "--bootstrap-server") if bootstrap_server else [])
    ]
    for c in cfgs:  # the controllers a config bootstraps from may include observers
        boot = c.props.get("controller.quorum.bootstrap.servers", "").strip()
        asked += [
            ("bootstrap controller", None, [(a.host, a.port)])
            for a in (parse_address_list(boot, f"{c.path}: controller.quorum.bootstrap.servers") if boot else [])
        ]
    client = ClusterAccess(bootstrap_server, None, command_config).client_config()

    def probe(endpoints: dict[int, list], witnesses: list, cluster_id: str | None):
        return probe_voters_and_witnesses(endpoints, witnesses, client, timeout, cluster_id)

    request = recovery.RecoverRequest(
        targets=targets,
        lost=lost,
        static_voters=static,
        survivor=survivor,
        replicas=replica,
        force_lost=forced,
        unread=unread,
        witnesses=asked,
        apply=apply,
        backup_dir=backup_dir,
    )
    plan, report, holder = recovery.run(request, probe)
    doc = plan.to_json()
    printer(ctx).emit(
        output,
        doc,
        text=lambda d: "\n".join(plan_lines(d, not apply, report, holder)) + "\n",
        json=lambda d: plan_doc(d, report, not apply),
    )
    raise typer.Exit(ExitStatus.of(plan.refusal))


def _dir_key(t: str) -> str:
    import os
    from ..errors import InputError
    from ..raft.replica import resolve_partition_dir

    try:
        return os.path.realpath(resolve_partition_dir(t)[1])
    except InputError:  # the loader names a bad path in its own words, later
        return os.path.realpath(t)


def _refuse_twice(paths: list[str]) -> None:
    """One rule for a destructive command: a log dir given twice (two arguments, an argument
    and --replica, two paths to one directory through a symlink) is refused, not merged."""
    from ..errors import InputError

    seen: dict[str, str] = {}
    for t in paths:
        key = _dir_key(t)
        if key in seen:
            same = f"{seen[key]} and {t}" if seen[key] != t else f"{t} twice"
            raise InputError(f"the same log dir was given twice ({same}, both {key}): give each replica's dir once")
        seen[key] = t


def _distinct_dirs(targets: list[str]) -> list[str]:
    """Each metadata log dir once: `LOG_DIR -c its server.properties` (as the static
    quorum's advice says) names the survivor twice; a dir given twice as an argument is
    refused before (_refuse_twice)."""
    seen: set[str] = set()
    out = []
    for t in targets:
        key = _dir_key(t)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def register(app: typer.Typer) -> None:
    app.command("recover")(recover)
