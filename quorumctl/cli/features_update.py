"""`quorumctl features upgrade|downgrade`: kafka-features upgrade/downgrade, a dry
run by default, naming every registered node that blocks the change.

Thin: the change is read by domain.features, checked live by
live.features (Kafka's verdict: UpdateFeatures with validateOnly) or
offline by image.feature_update (the registrations of a log dir's image), and
printed by render.feature_update. Exit codes: 0 the change can be made (or was
made); 1 a node or Kafka refuses it; 2 bad options (an unknown version ...); 3
the cluster could not be reached.
"""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from ..render.output import Printer
from .options import (
    Apply,
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    DryRun,
    FeatureLevels,
    KafkaRelease,
    KafkaVersion,
    MetadataTarget,
    OutputOpt,
    ReleaseVersion,
    Timeout,
    printer,
)

LogDirs = Optional[List[str]]


def _run(
    out: Printer,
    op: str,
    log_dir,
    bootstrap_server,
    bootstrap_controller,
    command_config,
    timeout,
    metadata,
    feature,
    unsafe,
    apply,
    output,
    release_version=None,
    kafka_version=KafkaRelease.v43,
):
    from ..domain.features import parse_change
    from ..render.feature_update import update_doc, update_table, update_text

    from ..wire.access import ClusterAccess
    from .source import Source

    change = parse_change(op, metadata, feature, unsafe, release_version, kafka_version.catalogue)
    source = Source.of(log_dir, ClusterAccess(bootstrap_server, bootstrap_controller, command_config))
    source.one(
        both="give a LOG_DIR (offline) or --bootstrap-server/--bootstrap-controller (live), not both",
        neither="give --bootstrap-server or --bootstrap-controller (live), or a LOG_DIR (offline)",
    )
    if not source.live:
        source.refuse(
            (("--apply", apply),),
            "{flag} needs the cluster (--bootstrap-server or --bootstrap-controller): a log dir is only read",
        )
        from ..image.feature_update import check_offline

        doc = update_doc(check_offline(source.files, change), apply)
    else:
        from ..live.features import check_live

        doc = update_doc(check_live(source.access, timeout, change, apply), apply)
    out.emit(output, doc, text=update_text, table=update_table)
    if not doc["ok"]:
        raise typer.Exit(ExitStatus.PROBLEMS)


_Unsafe = Annotated[
    bool,
    typer.Option(
        "--unsafe", help="An unsafe downgrade (one that may lose metadata); Kafka 4.3 refuses it for metadata.version."
    ),
]
_LogDir = Annotated[
    LogDirs,
    typer.Argument(
        metavar="LOG_DIR...",
        help="Check offline against this log dir's image (its registrations) instead of a cluster.",
    ),
]


def upgrade(
    ctx: typer.Context,
    log_dir: _LogDir = None,
    metadata: MetadataTarget = None,
    feature: FeatureLevels = [],
    release_version: ReleaseVersion = None,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = None,
    apply: Apply = False,
    dry_run: DryRun = False,
    output: OutputOpt = None,
    kafka_version: KafkaVersion = KafkaRelease.v43,
):
    """Upgrade feature levels (kafka-features upgrade); a dry run that names what blocks it unless --apply.

    Names every registered broker and controller whose supported range excludes the new level, and Kafka's
    own verdict (UpdateFeatures with validateOnly); --apply upgrades when nothing blocks it. Offline from a
    LOG_DIR: the registrations of its image, the controller's checks replayed. The versions known by name
    are those of --kafka-version's kafka-features (4.4: 4.4-IV1, 4.4-IV2).

    Example: quorumctl features upgrade --bootstrap-server localhost:9092 --release-version 4.3
    """
    _run(
        printer(ctx),
        "upgrade",
        log_dir,
        bootstrap_server,
        bootstrap_controller,
        command_config,
        timeout,
        metadata,
        feature,
        False,
        apply,
        output,
        release_version,
        kafka_version,
    )


def downgrade(
    ctx: typer.Context,
    log_dir: _LogDir = None,
    metadata: MetadataTarget = None,
    feature: FeatureLevels = [],
    release_version: ReleaseVersion = None,
    unsafe: _Unsafe = False,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = None,
    apply: Apply = False,
    dry_run: DryRun = False,
    output: OutputOpt = None,
    kafka_version: KafkaVersion = KafkaRelease.v43,
):
    """Downgrade feature levels (kafka-features downgrade); a dry run that names what blocks it unless --apply.

    Names every registered node whose supported range excludes the new level, and Kafka's verdict
    (UpdateFeatures with validateOnly); --apply downgrades when nothing blocks it. Offline from a LOG_DIR:
    the registrations of its image, the controller's checks replayed.

    Example: quorumctl features downgrade --bootstrap-controller localhost:9093 --feature transaction.version=1
    """
    _run(
        printer(ctx),
        "downgrade",
        log_dir,
        bootstrap_server,
        bootstrap_controller,
        command_config,
        timeout,
        metadata,
        feature,
        unsafe,
        apply,
        output,
        release_version,
        kafka_version,
    )


def disable(
    ctx: typer.Context,
    log_dir: _LogDir = None,
    feature: Annotated[
        List[str], typer.Option("--feature", "-f", metavar="NAME", help="A feature to disable (level 0); repeatable.")
    ] = [],
    unsafe: _Unsafe = False,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = None,
    apply: Apply = False,
    dry_run: DryRun = False,
    output: OutputOpt = None,
):
    """Disable features (kafka-features disable: level 0); a dry run naming what blocks it unless --apply.

    Example: quorumctl features disable --bootstrap-server localhost:9092 --feature streams.version
    """
    _run(
        printer(ctx),
        "disable",
        log_dir,
        bootstrap_server,
        bootstrap_controller,
        command_config,
        timeout,
        None,
        feature,
        unsafe,
        apply,
        output,
        None,
    )
