"""`quorumctl topics describe`: kafka-topics --describe asked of the brokers
(--bootstrap-server), or computed offline from a metadata log dir's image, at its
end or any offset or time."""

from typing import Annotated, Any, List, Optional

import typer

from ..errors import ExitStatus
from .options import (
    AtOffset,
    AtTime,
    BootstrapServer,
    CommandConfig,
    OutputOpt,
    ServerConfig,
    Timeout,
    group,
    positive,
    printer,
)

app = group(
    "Topics and partitions, live from the brokers or from a metadata log dir (like kafka-topics --describe)."
    "\n\nExample: quorumctl topics describe --bootstrap-server localhost:9092 --unavailable-partitions"
)


@app.command("describe")
def describe(
    ctx: typer.Context,
    log_dir: Annotated[
        Optional[List[str]],
        typer.Argument(
            metavar="[LOG_DIR_OR_FILES...]",
            help="A log dir (or its __cluster_metadata-0, or .log/.checkpoint files); none with --bootstrap-server.",
        ),
    ] = None,
    bootstrap_server: BootstrapServer = None,
    command_config: CommandConfig = None,
    timeout: Timeout = None,
    topic: Annotated[
        Optional[str],
        typer.Option(
            "--topic",
            metavar="REGEX",
            help="Only topics whose whole name matches (a Java regex, as kafka-topics; commas separate alternatives).",
        ),
    ] = None,
    topic_id: Annotated[
        Optional[str],
        typer.Option(
            "--topic-id",
            metavar="ID",
            help="Only the topic of this id (wins over --topic). As Kafka's tool, its partitions show Elr: N/A.",
        ),
    ] = None,
    exclude_internal: Annotated[
        bool,
        typer.Option(
            "--exclude-internal",
            help="Leave out the internal topics (__consumer_offsets, __transaction_state, __share_group_state).",
        ),
    ] = False,
    overrides: Annotated[
        bool,
        typer.Option(
            "--topics-with-overrides", help="Only the topic lines of topics with a config that is not the default."
        ),
    ] = False,
    if_exists: Annotated[
        bool,
        typer.Option(
            "--if-exists", help="A --topic or --topic-id that selects nothing prints nothing instead of failing."
        ),
    ] = False,
    page: Annotated[
        int,
        typer.Option(
            "--partition-size-limit-per-response",
            callback=positive,
            metavar="N",
            help="Live: partitions per DescribeTopicPartitions answer (the broker caps it).",
        ),
    ] = 2000,
    at_offset: AtOffset = None,
    at_time: AtTime = None,
    unavailable: Annotated[
        bool, typer.Option("--unavailable-partitions", help="Only partitions whose leader is not a live broker.")
    ] = False,
    under_replicated: Annotated[
        bool, typer.Option("--under-replicated-partitions", help="Only partitions with fewer ISR than replicas.")
    ] = False,
    under_min_isr: Annotated[
        bool,
        typer.Option(
            "--under-min-isr-partitions", help="Only partitions with no live leader or ISR below min.insync.replicas."
        ),
    ] = False,
    at_min_isr: Annotated[
        bool, typer.Option("--at-min-isr-partitions", help="Only partitions whose ISR equals min.insync.replicas.")
    ] = False,
    config: ServerConfig = None,
    output: OutputOpt = None,
):
    """The topics' partitions as kafka-topics --describe prints them, live or from the image.

    With --bootstrap-server: asked of the brokers as Kafka 4.3's tool asks them
    (DescribeCluster, DescribeTopicPartitions paged, DescribeConfigs,
    ListPartitionReassignments). From a log dir: live brokers are the registered,
    unfenced ones; min.insync.replicas is the topic's, else the cluster's dynamic
    default, else the -c server.properties' value, else 1. Text is Kafka's lines on
    stdout and a count summary on stderr.

    Example: quorumctl topics describe --bootstrap-server localhost:9092 --under-min-isr-partitions

    Example: quorumctl topics describe /var/lib/kafka/meta --unavailable-partitions --at-time 2024-05-01T02:00:00Z
    """
    from ..errors import InputError
    from ..image.replay import Point
    from ..timefmt import parse_time
    from ..image.topics import describe_document
    from ..render.output import Output
    from ..render.topics import describe_table, summary_line, write_describe_json, write_describe_text

    pr = printer(ctx)
    filters = tuple(
        f
        for f, on in (
            ("unavailable", unavailable),
            ("under-replicated", under_replicated),
            ("under-min-isr", under_min_isr),
            ("at-min-isr", at_min_isr),
        )
        if on
    )
    if overrides and filters:
        raise InputError(
            f"--topics-with-overrides cannot be used with --{filters[0]}-partitions (kafka-topics refuses it too)"
        )
    if if_exists and topic is None and topic_id is None:
        raise InputError(
            "--if-exists needs --topic or --topic-id (kafka-topics: --topic or --topic-id is "
            "required to describe a topic)"
        )
    options: dict[str, Any] = {
        "topic": topic,
        "topic_id": topic_id,
        "exclude_internal": exclude_internal,
        "filters": filters,
        "overrides": overrides,
        "if_exists": if_exists,
    }
    from ..wire.access import ClusterAccess
    from .source import Source

    # live is --bootstrap-server given at all (an empty one is the connection's error)
    source = Source.of(log_dir, ClusterAccess(bootstrap_server, None, command_config), bootstrap_server is not None)
    source.one(
        both="give a log dir or --bootstrap-server, not both",
        neither="give a metadata log dir (offline) or --bootstrap-server (live)",
    )
    if source.live:
        source.refuse(
            (
                ("--at-offset", at_offset is not None),
                ("--at-time", at_time is not None),
                ("--config", config is not None),
            ),
            "{flag} reads a log dir's image: it has no meaning with --bootstrap-server",
        )
        from ..live.topics import describe as describe_live

        doc = describe_live(source.access, timeout, page=page, **options)
    else:
        source.refuse(
            (("--command-config", command_config is not None), ("--timeout", timeout is not None)),
            "{flag} is for --bootstrap-server: a log dir is read offline",
        )
        if at_offset is not None and at_time is not None:
            raise InputError("give --at-offset or --at-time, not both")
        static = None
        if config is not None:
            from ..config.server import load

            static = load(config).props
        point = Point(offset=at_offset, time_ms=None if at_time is None else parse_time(at_time))
        # the topics written as they are computed (a million partitions built whole were a GB)
        doc = describe_document(source.files, point, static=static, lazy=True, **options)
    if topic is not None and topic_id is not None and if_exists:
        # kafka-topics says so on stdout in this case (and only this one)
        pr.write(
            "Only topic id will be used when both --topic and --topic-id are specified and topicId "
            "is not Uuid.ZERO_UUID\n"
        )
    mode = pr.resolve(output)
    if mode is Output.json:
        pr.write_bytes(lambda write: write_describe_json(doc, write))
    elif mode is Output.table:
        pr.emit(mode, doc, text=None, table=describe_table)
    else:
        write_describe_text(doc, pr.write)
    if mode is Output.text:
        pr.say(summary_line(doc))
    if doc.get("note"):
        pr.note(doc["note"])
    if doc.get("logEnd"):
        pr.warning(f"the log ends early: {doc['logEnd']}; replay stopped at offset {doc['at']['offset']}")
        raise typer.Exit(ExitStatus.PROBLEMS)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="topics")
