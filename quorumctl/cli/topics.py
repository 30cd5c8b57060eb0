"""`quorumctl topics describe`: kafka-topics --describe computed offline from a
metadata log dir's image, at its end or any offset or time."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import ExitStatus
from .options import AtOffset, AtTime, OutputOpt, ServerConfig

app = typer.Typer(help="Topics and partitions from a metadata log dir (like kafka-topics, offline).\n\n"
                       "Example: quorumctl topics describe /var/lib/kafka/meta --under-replicated-partitions",
                  no_args_is_help=True)


@app.command("describe")
def describe(
    log_dir: List[str] = typer.Argument(..., metavar="LOG_DIR_OR_FILES...",
                                        help="A log dir (or its __cluster_metadata-0, or .log/.checkpoint files)."),
    topic: Optional[str] = typer.Option(None, "--topic", metavar="REGEX",
                                        help="Only topics whose whole name matches (a Java regex, as kafka-topics; "
                                             "commas separate alternatives)."),
    at_offset: AtOffset = None,
    at_time: AtTime = None,
    unavailable: bool = typer.Option(False, "--unavailable-partitions",
                                     help="Only partitions whose leader is not a live broker."),
    under_replicated: bool = typer.Option(False, "--under-replicated-partitions",
                                          help="Only partitions with fewer ISR than replicas."),
    under_min_isr: bool = typer.Option(False, "--under-min-isr-partitions",
                                       help="Only partitions with no live leader or ISR below min.insync.replicas."),
    at_min_isr: bool = typer.Option(False, "--at-min-isr-partitions",
                                    help="Only partitions whose ISR equals min.insync.replicas."),
    config: ServerConfig = None,
    output: OutputOpt = None,
):
    """The topics' partitions as kafka-topics --describe prints them, from the image.

    Live brokers are the registered, unfenced ones. min.insync.replicas is the topic's,
    else the cluster's dynamic default, else the -c server.properties' value, else 1.
    Text is Kafka's lines on stdout and a count summary on stderr.

    Example: quorumctl topics describe /var/lib/kafka/meta --unavailable-partitions --at-time 2024-05-01T02:00:00Z
    """
    import sys

    from ..errors import InputError
    from ..image.replay import Point, parse_time
    from ..image.topics import describe_document
    from ..render.output import Output, resolve, write_bytes_to_stdout
    from ..render.topics import describe_table, summary_line, write_describe_json, write_describe_text

    if at_offset is not None and at_time is not None:
        raise InputError("give --at-offset or --at-time, not both")
    static = None
    if config is not None:
        from ..config.server import load
        static = load(config).props
    filters = tuple(f for f, on in (("unavailable", unavailable), ("under-replicated", under_replicated),
                                    ("under-min-isr", under_min_isr), ("at-min-isr", at_min_isr)) if on)
    point = Point(offset=at_offset, time_ms=None if at_time is None else parse_time(at_time))
    # the topics written as they are computed (a million partitions built whole were a GB)
    doc = describe_document(list(log_dir), point, topic=topic, filters=filters, static=static, lazy=True)
    mode = resolve(output)
    if mode is Output.json:
        write_bytes_to_stdout(lambda write: write_describe_json(doc, write))
    elif mode is Output.table:
        from rich.console import Console
        Console().print(describe_table(doc))
    else:
        write_describe_text(doc, sys.stdout.write)
    if mode is Output.text:
        sys.stderr.write(summary_line(doc) + "\n")
    if doc.get("note"):
        sys.stderr.write(f"quorumctl: note: {doc['note']}\n")
    if doc.get("logEnd"):
        sys.stderr.write(f"quorumctl: warning: the log ends early: {doc['logEnd']}; "
                         f"replay stopped at offset {doc['at']['offset']}\n")
        raise typer.Exit(ExitStatus.PROBLEMS)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="topics")
