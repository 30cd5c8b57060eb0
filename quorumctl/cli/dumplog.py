"""`quorumctl dump-log`: kafka-dump-log for every file of a KRaft log dir."""

from typing import Annotated, List, Optional

import typer

from .options import KafkaRelease, KafkaVersion, OutputOpt, printer


def record_type_names(incomplete: str) -> list[str]:
    """--record-type completion."""
    from ..dump.log import record_type_names as names

    return names(incomplete)


# kafka-dump-log 4.1 options quorumctl does not implement: each is refused with why
# (one line, exit 2) rather than being unknown or silently ignored
REFUSED = {
    "--value-decoder-class": "quorumctl cannot load Java decoder classes; --print-data-log prints the raw "
    "payload (-o json: base64)",
    "--key-decoder-class": "quorumctl cannot load Java decoder classes; --print-data-log prints the raw key "
    "(-o json: base64)",
    "--offsets-decoder": "__consumer_offsets records are not decoded (quorumctl decodes the KRaft metadata log); "
    "--print-data-log prints them raw",
    "--transaction-log-decoder": "__transaction_state records are not decoded (quorumctl decodes the KRaft metadata "
    "log); --print-data-log prints them raw",
    "--remote-log-metadata-decoder": "__remote_log_metadata records are not decoded (quorumctl decodes the KRaft "
    "metadata log); --print-data-log prints them raw",
    "--share-group-state-decoder": "__share_group_state records are not decoded (quorumctl decodes the KRaft "
    "metadata log); --print-data-log prints them raw",
}


def dump_log(
    ctx: typer.Context,
    paths: Annotated[
        Optional[List[str]],
        typer.Argument(
            metavar="FILE_OR_DIR...", help="Files or directories (a directory means all of its files, in order)."
        ),
    ] = None,
    files: Annotated[
        Optional[str],
        typer.Option("--files", metavar="FILE,...", help="Comma-separated files, as kafka-dump-log takes them."),
    ] = None,
    deep_iteration: Annotated[bool, typer.Option("--deep-iteration", help="One line per record.")] = False,
    print_data_log: Annotated[
        bool, typer.Option("--print-data-log", help="Print record keys and payloads (implies --deep-iteration).")
    ] = False,
    cluster_metadata_decoder: Annotated[
        bool,
        typer.Option(
            "--cluster-metadata-decoder", help="Decode KRaft metadata records as JSON (implies --print-data-log)."
        ),
    ] = False,
    skip_record_metadata: Annotated[
        bool, typer.Option("--skip-record-metadata", help="Drop the per-record metadata prefix.")
    ] = False,
    max_bytes: Annotated[
        Optional[int],
        typer.Option("--max-bytes", metavar="N", min=0, help="Read only the first N bytes of each log or snapshot."),
    ] = None,
    offset_start: Annotated[
        Optional[int], typer.Option("--offset-start", metavar="N", help="Only records (and batches) with offset >= N.")
    ] = None,
    offset_end: Annotated[
        Optional[int], typer.Option("--offset-end", metavar="N", help="Only records (and batches) with offset <= N.")
    ] = None,
    from_time: Annotated[
        Optional[str],
        typer.Option(
            "--from-time",
            metavar="TIME",
            help="Only records stamped at or after TIME (ISO-8601 or epoch ms): "
            "one partition's log, e.g. the metadata log.",
        ),
    ] = None,
    to_time: Annotated[
        Optional[str],
        typer.Option(
            "--to-time", metavar="TIME", help="Only records stamped at or before TIME (ISO-8601 or epoch ms)."
        ),
    ] = None,
    record_type: Annotated[
        Optional[List[str]],
        typer.Option(
            "--record-type",
            metavar="TYPE",
            autocompletion=record_type_names,
            help="Only records of this type, e.g. PARTITION_CHANGE_RECORD or LEADER_CHANGE (repeatable).",
        ),
    ] = None,
    verify_index_only: Annotated[
        bool, typer.Option("--verify-index-only", help="Indexes: print only the mismatches with the log.")
    ] = False,
    index_sanity_check: Annotated[
        bool, typer.Option("--index-sanity-check", help="Indexes: run Kafka's sanity check.")
    ] = False,
    max_message_size: Annotated[
        int, typer.Option("--max-message-size", help="Size limit when verifying an index entry.")
    ] = 5 * 1024 * 1024,
    kafka_version: KafkaVersion = KafkaRelease.v43,
    output: OutputOpt = None,
    value_decoder_class: Annotated[Optional[str], typer.Option("--value-decoder-class", hidden=True)] = None,
    key_decoder_class: Annotated[Optional[str], typer.Option("--key-decoder-class", hidden=True)] = None,
    offsets_decoder: Annotated[bool, typer.Option("--offsets-decoder", hidden=True)] = False,
    transaction_log_decoder: Annotated[bool, typer.Option("--transaction-log-decoder", hidden=True)] = False,
    remote_log_metadata_decoder: Annotated[bool, typer.Option("--remote-log-metadata-decoder", hidden=True)] = False,
    share_group_state_decoder: Annotated[bool, typer.Option("--share-group-state-decoder", hidden=True)] = False,
):
    """Dump segments, snapshots, indexes and the other files of a log dir.

    Example: quorumctl dump-log --cluster-metadata-decoder /var/lib/kafka/data/__cluster_metadata-0
    """
    from ..dump.log import DumpRequest, run
    from ..render.dumplog import Sink
    from ..errors import InputError

    pr = printer(ctx)

    given = {
        "--value-decoder-class": value_decoder_class is not None,
        "--key-decoder-class": key_decoder_class is not None,
        "--offsets-decoder": offsets_decoder,
        "--transaction-log-decoder": transaction_log_decoder,
        "--remote-log-metadata-decoder": remote_log_metadata_decoder,
        "--share-group-state-decoder": share_group_state_decoder,
    }
    for opt, on in given.items():
        if on:
            raise InputError(f"{opt} (a kafka-dump-log option) is not supported: {REFUSED[opt]}")
    from ..timefmt import parse_time

    from_ms = None if from_time is None else parse_time(from_time)
    to_ms = None if to_time is None else parse_time(to_time)
    all_paths = list(paths or []) + ([p for p in files.split(",") if p] if files else [])
    if not all_paths:
        raise InputError("dump-log needs a FILE_OR_DIR (or --files FILE,...): nothing to dump")
    request = DumpRequest(
        paths=all_paths,
        deep=deep_iteration,
        print_data=print_data_log,
        metadata_decoder=cluster_metadata_decoder,
        skip_record_metadata=skip_record_metadata,
        max_bytes=max_bytes,
        offset_start=offset_start,
        offset_end=offset_end,
        record_types=record_type,
        verify_index_only=verify_index_only,
        index_sanity_check=index_sanity_check,
        max_message_size=max_message_size,
        output=pr.resolve(output),
        kafka=kafka_version.value,
        from_time=from_ms,
        to_time=to_ms,
    )
    raise typer.Exit(run(request, Sink(pr.stdout, pr.stderr)))


def register(app: typer.Typer) -> None:
    app.command("dump-log")(dump_log)
