"""`quorumctl migrate-quorum preflight|upgrade|configs`: a static quorum
(controller.quorum.voters, kraft.version 0) made dynamic (kraft.version 1,
controller.quorum.bootstrap.servers), one step per command, each a dry run
unless told otherwise.

Thin: facts from live.membership.migrate or ops.migrate.offline_facts (log
dirs and configs, with the image's registrations from image.feature_update),
judged by ops.migrate, printed by render.migrate. Exit codes: 0 ready / done /
consistent; 1 a check found a problem or a step is out of order; 2 bad
input; 3 the cluster could not be reached.
"""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from .options import (
    Apply,
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    DryRun,
    PlainOutputOpt,
    ServerConfigs,
    Timeout,
    group,
    printer,
)

_LogDirs = Annotated[
    Optional[List[str]],
    typer.Argument(
        metavar="LOG_DIR...",
        help="Controllers' metadata log dirs: check offline (node and directory ids, the "
        "KRaft version, the image's registrations) instead of asking a cluster.",
    ),
]


def _source(log_dir, bootstrap_server, bootstrap_controller, command_config):
    """Log dirs (offline) or the cluster (live), not both."""
    from ..wire.access import ClusterAccess
    from .source import Source

    source = Source.of(log_dir, ClusterAccess(bootstrap_server, bootstrap_controller, command_config))
    return source.one(
        both="give LOG_DIRs and -c configs (offline) or --bootstrap-server/--bootstrap-controller (live), not both"
    )


def _live(source):
    """The connection of a live step: refused without a bootstrap address."""
    return source.one(neither="give --bootstrap-server or --bootstrap-controller (live)").access


def _with_files(f, configs: list[str]):
    """Live facts completed from -c files: meta.properties' directory ids of local
    controllers, and the settings of nodes the wire could not show."""
    if not configs:
        return f
    from ..ops.migrate import offline_facts

    local = offline_facts([], configs, None, None)
    for ln in local.nodes:
        n = f.node(ln.id, ln.kind)
        if n is None:
            continue
        n.meta_directory_id = n.meta_directory_id or ln.meta_directory_id
        if n.conf_source is None and ln.conf_source is not None:
            n.voters_conf, n.bootstrap_conf, n.conf_source = ln.voters_conf, ln.bootstrap_conf, ln.conf_source
    return f


def preflight(
    ctx: typer.Context,
    log_dir: _LogDirs = None,
    config: ServerConfigs = [],
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """Check a static quorum before kraft.version 1: versions, directory ids, metadata.version, configs.

    Live: every node's ranges (ApiVersions) and running quorum settings, and Kafka's own verdict
    (UpdateFeatures with validateOnly). Offline: controllers' LOG_DIRs and nodes' -c configs.
    A verdict (ready, blocked, dynamic already) with what to do first.

    Example: quorumctl migrate-quorum preflight --bootstrap-controller localhost:9093
    """
    from ..ops.migrate import connection_args, has_metadata_log, offline_facts, preflight as judge
    from ..render.migrate import preflight_doc, preflight_text

    source = _source(log_dir, bootstrap_server, bootstrap_controller, command_config)
    access = source.access
    if source.files or (config and not source.live):  # -c configs alone: offline
        regs, finalized = None, None
        if log_dir and has_metadata_log(log_dir[0]):
            from ..image.feature_update import check_offline
            from ..domain.features import UPGRADE, Change

            check = check_offline([log_dir[0]], Change("upgrade", {"kraft.version": 1}, UPGRADE))
            regs, finalized = check.nodes, check.finalized
        f = offline_facts(list(log_dir or []), list(config), regs, finalized)
    else:
        _live(source)
        from ..live.membership.migrate import gather

        f = _with_files(gather(access, timeout), list(config))
    doc = preflight_doc(f, judge(f, connection_args(f, access.bootstrap_args(), access.config_args())))
    printer(ctx).emit(output, doc, text=preflight_text)
    if not doc["ok"]:
        raise typer.Exit(ExitStatus.PROBLEMS)


def upgrade(
    ctx: typer.Context,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    config: ServerConfigs = [],
    apply: Apply = False,
    dry_run: DryRun = False,
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """Upgrade kraft.version to 1 (UpdateFeatures) once the preflight passes; a dry run unless --apply.

    After --apply it waits until kraft.version 1 is finalized and every voter shows its directory id.

    Example: quorumctl migrate-quorum upgrade --bootstrap-server localhost:9092 --apply
    """
    from ..ops.migrate import preflight as judge, verify_roll
    from ..live.membership.migrate import gather, upgrade as send, wait_dynamic
    from ..render.migrate import upgrade_doc, upgrade_text

    access = _live(_source([], bootstrap_server, bootstrap_controller, command_config))
    f = _with_files(gather(access, timeout), list(config))
    report = judge(f)
    error, after, verified = None, None, None
    if apply and report["verdict"] == "ready":
        error = send(access, timeout)
        if error is None:
            after = _with_files(wait_dynamic(access, timeout, timeout or 30.0), list(config))
            verified = verify_roll(after)
    doc = upgrade_doc(f, report, apply, error, after, verified)
    printer(ctx).emit(output, doc, text=upgrade_text)
    if not doc["ok"]:
        raise typer.Exit(ExitStatus.PROBLEMS)


def configs(
    ctx: typer.Context,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    config: ServerConfigs = [],
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="After a roll: every controller a voter with its directory id, none an "
            "observer, the settings consistent; names the next node to roll.",
        ),
    ] = False,
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """The config step: controller.quorum.voters replaced by controller.quorum.bootstrap.servers, node by node.

    Prints, per node in the order to roll, the property lines to remove and to add (it edits no file);
    refused before kraft.version 1. With --verify, the checks after a roll and the next node to roll.

    Example: quorumctl migrate-quorum configs --bootstrap-controller localhost:9093 --verify
    """
    from ..ops.migrate import config_plan, verify_roll
    from ..live.membership.migrate import gather
    from ..render.migrate import configs_doc, configs_text

    access = _live(_source([], bootstrap_server, bootstrap_controller, command_config))
    f = _with_files(gather(access, timeout, ask_kafka=False), list(config))
    plan = config_plan(f)
    doc = configs_doc(f, None if verify else plan, verify_roll(f) if verify else None)
    printer(ctx).emit(output, doc, text=configs_text)
    if not doc["ok"]:
        raise typer.Exit(ExitStatus.PROBLEMS)


def register(app: typer.Typer) -> None:
    g = group(
        "A static quorum made dynamic (kraft.version 1), step by step: preflight, upgrade, configs.\n\n"
        "Example: quorumctl migrate-quorum preflight --bootstrap-controller localhost:9093"
    )
    g.command("preflight")(preflight)
    g.command("upgrade")(upgrade)
    g.command("configs")(configs)
    app.add_typer(g, name="migrate-quorum")
