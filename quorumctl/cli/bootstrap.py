"""`quorumctl bootstrap random-uuid | format | info | version-mapping |
feature-dependencies`: Kafka 4.1's kafka-storage, with valid ids only and dry runs."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..render.output import Output, PlainOutput

app = typer.Typer(help="Cluster ids and storage formatting (like kafka-storage).\n\n"
                       "Example: quorumctl bootstrap info -c /etc/kafka/server.properties",
                  no_args_is_help=True)


@app.command("random-uuid")
def random_uuid():
    """Print a random Kafka Uuid (never reserved, never starting with '-').

    Example: quorumctl bootstrap random-uuid
    """
    import sys

    from .. import ids
    sys.stdout.write(ids.random_uuid() + "\n")


@app.command("format")
def format_(
    config: Optional[str] = typer.Option(None, "--config", "-c", metavar="FILE",
                                          help="The server.properties to format for."),
    cluster_id: str = typer.Option(..., "--cluster-id", "-t", help="The cluster id (see random-uuid)."),
    node_id: Optional[int] = typer.Option(None, "--node-id", help="Node id (default: node.id of --config)."),
    log_dir: List[str] = typer.Option([], "--log-dir", metavar="DIR", help="A log dir to format (repeatable; default: log.dirs "
                                      "of --config)."),
    metadata_log_dir: Optional[str] = typer.Option(None, "--metadata-log-dir", metavar="DIR",
                                                   help="The metadata log dir (default: metadata.log.dir, else "
                                                        "the first log dir)."),
    add_scram: List[str] = typer.Option([], "--add-scram", "-S", help="A SCRAM credential, e.g. "
                                        "'SCRAM-SHA-256=[name=alice,password=alice-secret]' (repeatable)."),
    ignore_formatted: bool = typer.Option(False, "--ignore-formatted", "-g",
                                          help="Skip formatted dirs and format the others."),
    release_version: Optional[str] = typer.Option(None, "--release-version", "-r",
                                                  help="metadata.version to start at (3.3-IV3 .. 4.1-IV1, or a "
                                                       "release like 3.9; default 4.1-IV1)."),
    feature: List[str] = typer.Option([], "--feature", "-f", help="feature=level (repeatable), e.g. "
                                      "group.version=1."),
    standalone: bool = typer.Option(False, "--standalone", "-s",
                                    help="Format a controller as a single-voter dynamic quorum (KIP-853)."),
    no_initial_controllers: bool = typer.Option(False, "--no-initial-controllers", "-N",
                                                help="Format without a dynamic quorum topology."),
    initial_controllers: Optional[str] = typer.Option(None, "--initial-controllers", "-I",
                                                      help="id@host:port:directoryId,... : the initial voters of a "
                                                           "dynamic quorum (the same on every node)."),
    controller_listener_name: Optional[str] = typer.Option(None, "--controller-listener-name",
                                                           help="Listener name for the voters' endpoints "
                                                                "(default: the first of controller.listener.names, "
                                                                "else CONTROLLER)."),
    allow_non_uuid: bool = typer.Option(False, "--allow-non-uuid",
                                        help="Accept a cluster id that is not a Kafka Uuid (Kafka does)."),
    apply: bool = typer.Option(False, "--apply", help="Write (the default is a dry run that prints the plan)."),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text or json."),
):
    """Format log dirs: meta.properties and bootstrap.checkpoint (dry run by default).

    Also the KIP-853 bootstrap snapshot for --standalone / --initial-controllers;
    under Kafka's .lock, crash-safely, never over a formatted dir.

    Example: quorumctl bootstrap format -c server.properties -t $(quorumctl bootstrap random-uuid) --apply
    """
    import os
    import sys
    import time

    from ..errors import InputError
    from ..render.output import json_line, resolve_plain
    from ..storage import config as storage_config
    from ..storage import format as FM
    from ..storage import fsutil

    if sum(bool(x) for x in (standalone, no_initial_controllers, initial_controllers)) > 1:
        raise InputError("--standalone, --no-initial-controllers and --initial-controllers are mutually exclusive")
    cfg = storage_config.load(config) if config else None
    if cfg is not None and not cfg.kraft:
        raise InputError("The kafka configuration file appears to be for a legacy cluster. Formatting is only "
                         "supported for clusters in KRaft mode.")
    nid = node_id if node_id is not None else (cfg.node_id if cfg else None)
    if nid is None:
        raise InputError("give --node-id or -c server.properties with node.id")
    dirs = list(log_dir) or (cfg.log_dirs if cfg else [])
    mdir = metadata_log_dir or (cfg.metadata_log_dir if cfg and not log_dir else (dirs[0] if dirs else None))
    if mdir is None:
        raise InputError("give --log-dir (or -c server.properties)")
    all_dirs = sorted(set(dirs) | {mdir})
    listener = controller_listener_name or (cfg.controller_listener_names[0] if cfg and cfg.controller_listener_names
                                            else "CONTROLLER")
    # Kafka 4 removed inter.broker.protocol.version: kafka-storage 4.1 formats with
    # --release-version or its latest production version, whatever the config says
    release = release_version
    voters = None
    if initial_controllers:
        voters = FM.parse_dynamic_voters(initial_controllers)
    if standalone:
        if cfg is None:
            raise InputError("--standalone needs -c server.properties (for the node's controller listener)")
        if not cfg.is_controller:
            raise InputError("You can only use --standalone on a controller.")
        from .. import ids
        host, port = cfg.advertised_controller_endpoint()
        voters = [FM.DynamicVoter(nid, host, port, ids.random_directory_id())]
    if voters is None and not no_initial_controllers and cfg is not None and cfg.is_controller \
            and not cfg.quorum_voters:
        raise InputError("Because controller.quorum.voters is not set on this controller, you must specify one of "
                         "the following: --standalone, --initial-controllers, or --no-initial-controllers.")
    features = FM.parse_feature_args(feature)
    locks = []
    out_lines: list[str] = []
    try:
        if apply:
            for d in all_dirs:
                if os.path.isdir(d):
                    locks.append(fsutil.LogDirLock(d).acquire())
        plan = FM.plan_format(dirs=all_dirs, metadata_dir=mdir, cluster_id=cluster_id, node_id=nid,
                              release=release, features=features, scram=add_scram, voters=voters,
                              listener_name=listener, ignore_formatted=ignore_formatted,
                              allow_non_uuid=allow_non_uuid, no_initial_controllers=no_initial_controllers,
                              unstable=cfg is not None and
                              cfg.props.get("unstable.feature.versions.enable", "").strip().lower() == "true")
        out_lines.extend(plan.messages)
        results = {}
        if not plan.dirs:
            out_lines.append("All of the log directories are already formatted.")
        else:
            now = int(time.time() * 1000)
            order = FM.java_string_hashmap_order([d.path for d in plan.dirs])
            by_path = {d.path: d for d in plan.dirs}
            for p in order:
                d = by_path[p]
                if apply:
                    out_lines.append(f"Formatting {d.description} {d.path} with metadata.version {plan.release}.")
                    try:
                        results[d.path] = FM.format_dir(plan, d, now, backup_root=None)
                    except fsutil.OutOfSpace as e:
                        if results:   # the directories before it are formatted, wholly
                            raise fsutil.OutOfSpace(f"{e}; already formatted before it: "
                                                    f"{', '.join(results)}") from None
                        raise
                else:
                    out_lines.append(f"Would format {d.description} {d.path} with metadata.version {plan.release}.")
            if not apply:
                out_lines.append("Dry run: nothing was written. Run again with --apply to format.")
    finally:
        for lk in locks:
            lk.release()
    if resolve_plain(output) is Output.json:
        doc = plan.to_json()
        doc["applied"] = apply
        doc["results"] = results
        sys.stdout.write(json_line(doc) + "\n")
    else:
        sys.stdout.write("\n".join(out_lines) + "\n")


@app.command("info")
def info(
    config: Optional[str] = typer.Option(None, "--config", "-c", metavar="FILE",
                                          help="server.properties whose dirs to check."),
    log_dir: List[str] = typer.Option([], "--log-dir", metavar="DIR", help="A log dir to check (repeatable)."),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text or json."),
):
    """Check log dirs: missing, unformatted or mismatched (exit 1 on a problem).

    Mismatched cluster ids, node ids, directory ids or meta.properties versions,
    in Kafka's wording.

    Example: quorumctl bootstrap info -c server.properties
    """
    import sys

    from ..errors import InputError
    from ..render.output import json_line, resolve_plain
    from ..storage import config as storage_config
    from ..storage import format as FM

    if not config and not log_dir:
        raise InputError("give -c server.properties or --log-dir DIR")
    cfg = storage_config.load(config) if config else None
    dirs = list(log_dir) or cfg.all_dirs()
    if cfg is not None and log_dir:
        dirs = sorted(set(dirs) | set(cfg.all_dirs()))
    doc = FM.info(dirs, kraft_mode=cfg.kraft if cfg else True)
    mode = resolve_plain(output)
    if mode is Output.json:
        sys.stdout.write(json_line(doc) + "\n")
    else:
        sys.stdout.write(FM.info_text(doc, len(dirs)))
        for w in doc["warnings"]:
            sys.stderr.write(f"quorumctl: warning: {w}\n")
    raise typer.Exit(1 if doc["problems"] else 0)


@app.command("version-mapping")
def version_mapping(
    release_version: Optional[str] = typer.Option(None, "--release-version", "-r",
                                                  help="A metadata.version or release (default 4.1-IV1)."),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text (Kafka's) or json."),
):
    """The default feature levels at a metadata.version, as kafka-storage 4.1 prints them.

    Example: quorumctl bootstrap version-mapping -r 3.9
    """
    import sys

    from ..render.output import json_line, resolve_plain
    from ..storage import format as FM
    doc = FM.version_mapping(release_version)
    sys.stdout.write(json_line(doc) + "\n" if resolve_plain(output) is Output.json else FM.version_mapping_text(doc))


@app.command("feature-dependencies")
def feature_dependencies(
    feature: List[str] = typer.Option(..., "--feature", "-f", help="feature=level to look up (repeatable)."),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text (Kafka's) or json."),
):
    """What each feature level depends on, as kafka-storage 4.1 prints it.

    Example: quorumctl bootstrap feature-dependencies -f eligible.leader.replicas.version=1
    """
    import sys

    from ..render.output import json_line, resolve_plain
    from ..storage import format as FM
    deps = FM.feature_dependencies(feature)
    sys.stdout.write(json_line(deps) + "\n" if resolve_plain(output) is Output.json else FM.feature_dependencies_text(deps))


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="bootstrap")
