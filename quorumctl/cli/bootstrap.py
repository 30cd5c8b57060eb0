"""`quorumctl bootstrap random-uuid | format | info | version-mapping |
feature-dependencies`: Kafka 4.1's kafka-storage, with valid ids only and dry runs."""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from ..render.output import Output
from .options import (
    Apply,
    DryRun,
    FeatureLevels,
    KafkaRelease,
    KafkaVersion,
    PlainOutputOpt,
    ReleaseVersion,
    ServerConfig,
    group,
    printer,
)

app = group(
    "Cluster ids and storage formatting (like kafka-storage).\n\n"
    "Example: quorumctl bootstrap info -c /etc/kafka/server.properties"
)


@app.command("random-uuid")
def random_uuid(
    ctx: typer.Context,
):
    """Print a random Kafka Uuid (never reserved, never starting with '-').

    Example: quorumctl bootstrap random-uuid
    """
    from .. import ids

    printer(ctx).write(ids.random_uuid() + "\n")


@app.command("format")
def format_(
    ctx: typer.Context,
    *,  # keyword-only: a required option below keeps its place in --help
    config: ServerConfig = None,
    cluster_id: Annotated[str, typer.Option("--cluster-id", "-t", help="The cluster id (see random-uuid).")],
    node_id: Annotated[Optional[int], typer.Option("--node-id", help="Node id (default: node.id of --config).")] = None,
    log_dir: Annotated[
        List[str],
        typer.Option(
            "--log-dir", metavar="DIR", help="A log dir to format (repeatable; default: log.dirs of --config)."
        ),
    ] = [],
    metadata_log_dir: Annotated[
        Optional[str],
        typer.Option(
            "--metadata-log-dir",
            metavar="DIR",
            help="The metadata log dir (default: metadata.log.dir, else the first log dir).",
        ),
    ] = None,
    add_scram: Annotated[
        List[str],
        typer.Option(
            "--add-scram",
            "-S",
            help="A SCRAM credential, e.g. 'SCRAM-SHA-256=[name=alice,password=alice-secret]' (repeatable).",
        ),
    ] = [],
    ignore_formatted: Annotated[
        bool, typer.Option("--ignore-formatted", "-g", help="Skip formatted dirs and format the others.")
    ] = False,
    release_version: ReleaseVersion = None,
    feature: FeatureLevels = [],
    standalone: Annotated[
        bool, typer.Option("--standalone", "-s", help="Format a controller as a single-voter dynamic quorum (KIP-853).")
    ] = False,
    no_initial_controllers: Annotated[
        bool, typer.Option("--no-initial-controllers", "-N", help="Format without a dynamic quorum topology.")
    ] = False,
    initial_controllers: Annotated[
        Optional[str],
        typer.Option(
            "--initial-controllers",
            "-I",
            help="id@host:port:directoryId,... : the initial voters of a dynamic quorum (the same on every node).",
        ),
    ] = None,
    controller_listener_name: Annotated[
        Optional[str],
        typer.Option(
            "--controller-listener-name",
            help="Listener name for the voters' endpoints "
            "(default: the first of controller.listener.names, "
            "else CONTROLLER).",
        ),
    ] = None,
    allow_non_uuid: Annotated[
        bool, typer.Option("--allow-non-uuid", help="Accept a cluster id that is not a Kafka Uuid (Kafka does).")
    ] = False,
    kafka_version: KafkaVersion = KafkaRelease.v43,
    apply: Apply = False,
    dry_run: DryRun = False,  # the default, said out loud
    output: PlainOutputOpt = None,
):
    """Format log dirs: meta.properties and bootstrap.checkpoint (dry run by default).

    Also the KIP-853 bootstrap snapshot for --standalone / --initial-controllers;
    under Kafka's .lock, crash-safely, never over a formatted dir. The default is
    Kafka 4.3's layout, which every Kafka from 3.x to 4.4 starts on;
    --kafka-version 4.4 writes what 4.4's kafka-storage writes (no
    bootstrap.checkpoint: a controller's bootstrap records go into its
    00000000000000000000-0000000000.checkpoint, a broker gets only
    meta.properties), which only Kafka 4.4 or newer starts on.

    Example: quorumctl bootstrap format -c server.properties -t $(quorumctl bootstrap random-uuid) --apply
    """
    from ..ops.formatter import FormatRequest, run_format

    request = FormatRequest(
        config=config,
        cluster_id=cluster_id,
        node_id=node_id,
        log_dirs=list(log_dir),
        metadata_log_dir=metadata_log_dir,
        add_scram=list(add_scram),
        ignore_formatted=ignore_formatted,
        release_version=release_version,
        features=list(feature),
        standalone=standalone,
        no_initial_controllers=no_initial_controllers,
        initial_controllers=initial_controllers,
        controller_listener_name=controller_listener_name,
        allow_non_uuid=allow_non_uuid,
        apply=apply,
        kafka=kafka_version.catalogue,
    )
    run = run_format(request)
    printer(ctx).emit(output, run, text=lambda r: "\n".join(r.lines) + "\n", json=lambda r: r.to_json())


@app.command("info")
def info(
    ctx: typer.Context,
    config: ServerConfig = None,
    log_dir: Annotated[
        List[str], typer.Option("--log-dir", metavar="DIR", help="A log dir to check (repeatable).")
    ] = [],
    output: PlainOutputOpt = None,
):
    """Check log dirs: missing, unformatted or mismatched (exit 1 on a problem).

    Mismatched cluster ids, node ids, directory ids or meta.properties versions,
    in Kafka's wording; then (in JSON as starts_on) which Kafka releases can start
    each dir: its metadata.version's release or newer, and Kafka 4.4 or newer for a
    dir kafka-storage 4.4 formatted (no bootstrap.checkpoint); a note on stderr
    when the layout or an unstable level restricts it beyond the metadata.version.

    Example: quorumctl bootstrap info -c server.properties
    """
    from ..errors import InputError
    from ..config import server as storage_config
    from ..ops.dirinfo import info as check_dirs
    from ..render.bootstrap import info_text

    if not config and not log_dir:
        raise InputError("give -c server.properties or --log-dir DIR")
    cfg = storage_config.load(config) if config else None
    dirs = list(log_dir)
    if cfg is not None:
        dirs = sorted(set(dirs) | set(cfg.all_dirs())) if log_dir else cfg.all_dirs()
    pr = printer(ctx)
    doc = check_dirs(dirs, kraft_mode=cfg.kraft if cfg else True)
    pr.emit(output, doc, text=lambda d: info_text(d, len(dirs)))
    if pr.resolve_plain(output) is not Output.json:
        for w in doc["warnings"]:
            pr.warning(w)
        # which Kafka releases can start each dir: after kafka-storage's text, on stderr, so
        # stdout stays kafka-storage info's own
        for d in doc["directories"]:
            if d.get("starts_on") and d["starts_on"]["notable"]:
                pr.note(f"{d['path']} starts on {d['starts_on']['text']}: {'; '.join(d['starts_on']['reasons'])}")
    raise typer.Exit(ExitStatus.of(doc["problems"]))


@app.command("version-mapping")
def version_mapping(
    ctx: typer.Context,
    release_version: ReleaseVersion = None,
    kafka_version: KafkaVersion = KafkaRelease.v43,
    output: PlainOutputOpt = None,
):
    """The default feature levels at a metadata.version, as kafka-storage prints them.

    `--kafka-version 4.4` gives the 4.4 branch's catalogue (4.4-IV1, 4.4-IV2, share.version 2).

    Example: quorumctl bootstrap version-mapping -r 3.9
    """

    from ..render.bootstrap import version_mapping_text
    from ..versions import version_mapping as mapping

    printer(ctx).emit(output, mapping(release_version, kafka_version.catalogue), text=version_mapping_text)


@app.command("feature-dependencies")
def feature_dependencies(
    ctx: typer.Context,
    feature: FeatureLevels,
    kafka_version: KafkaVersion = KafkaRelease.v43,
    output: PlainOutputOpt = None,
):
    """What each feature level depends on, as kafka-storage prints it.

    Example: quorumctl bootstrap feature-dependencies -f eligible.leader.replicas.version=1
    """

    from ..render.bootstrap import feature_dependencies_text
    from ..versions import feature_dependencies as dependencies

    printer(ctx).emit(output, dependencies(feature, kafka_version.catalogue), text=feature_dependencies_text)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="bootstrap")
