"""`quorumctl dump-log`: kafka-dump-log for every file of a KRaft log dir."""

from __future__ import annotations

from typing import List, Optional

import typer

from .options import KafkaRelease, KafkaVersion, OutputOpt


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
    paths: Optional[List[str]] = typer.Argument(None, metavar="FILE_OR_DIR...",
                                                help="Files or directories (a directory means all of its files, in order)."),
    files: Optional[str] = typer.Option(None, "--files", metavar="FILE,...", help="Comma-separated files, as kafka-dump-log takes them."),
    deep_iteration: bool = typer.Option(False, "--deep-iteration", help="One line per record."),
    print_data_log: bool = typer.Option(False, "--print-data-log", help="Print record keys and payloads (implies --deep-iteration)."),
    cluster_metadata_decoder: bool = typer.Option(False, "--cluster-metadata-decoder",
                                                  help="Decode KRaft metadata records as JSON (implies --print-data-log)."),
    skip_record_metadata: bool = typer.Option(False, "--skip-record-metadata", help="Drop the per-record metadata prefix."),
    max_bytes: Optional[int] = typer.Option(None, "--max-bytes", metavar="N", min=0, help="Read only the first N bytes of each log or snapshot."),
    offset_start: Optional[int] = typer.Option(None, "--offset-start", metavar="N", help="Only records (and batches) with offset >= N."),
    offset_end: Optional[int] = typer.Option(None, "--offset-end", metavar="N", help="Only records (and batches) with offset <= N."),
    from_time: Optional[str] = typer.Option(None, "--from-time", metavar="TIME",
                                            help="Only records stamped at or after TIME (ISO-8601 or epoch ms): "
                                                 "one partition's log, e.g. the metadata log."),
    to_time: Optional[str] = typer.Option(None, "--to-time", metavar="TIME",
                                          help="Only records stamped at or before TIME (ISO-8601 or epoch ms)."),
    record_type: Optional[List[str]] = typer.Option(None, "--record-type", metavar="TYPE",
                                                    autocompletion=record_type_names,
                                                    help="Only records of this type, e.g. PARTITION_CHANGE_RECORD or LEADER_CHANGE (repeatable)."),
    verify_index_only: bool = typer.Option(False, "--verify-index-only", help="Indexes: print only the mismatches with the log."),
    index_sanity_check: bool = typer.Option(False, "--index-sanity-check", help="Indexes: run Kafka's sanity check."),
    max_message_size: int = typer.Option(5 * 1024 * 1024, "--max-message-size", help="Size limit when verifying an index entry."),
    kafka_version: KafkaVersion = KafkaRelease.v43,
    output: OutputOpt = None,
    value_decoder_class: Optional[str] = typer.Option(None, "--value-decoder-class", hidden=True),
    key_decoder_class: Optional[str] = typer.Option(None, "--key-decoder-class", hidden=True),
    offsets_decoder: bool = typer.Option(False, "--offsets-decoder", hidden=True),
    transaction_log_decoder: bool = typer.Option(False, "--transaction-log-decoder", hidden=True),
    remote_log_metadata_decoder: bool = typer.Option(False, "--remote-log-metadata-decoder", hidden=True),
    share_group_state_decoder: bool = typer.Option(False, "--share-group-state-decoder", hidden=True),
):
    """Dump segments, snapshots, indexes and the other files of a log dir.

    Example: quorumctl dump-log --cluster-metadata-decoder /var/lib/kafka/data/__cluster_metadata-0
    """
    from ..dump.log import run
    from ..errors import InputError

    given = {"--value-decoder-class": value_decoder_class is not None, "--key-decoder-class": key_decoder_class is not None,
             "--offsets-decoder": offsets_decoder, "--transaction-log-decoder": transaction_log_decoder,
             "--remote-log-metadata-decoder": remote_log_metadata_decoder,
             "--share-group-state-decoder": share_group_state_decoder}
    for opt, on in given.items():
        if on:
            raise InputError(f"{opt} (a kafka-dump-log option) is not supported: {REFUSED[opt]}")
    from ..timefmt import parse_time
    from_ms = None if from_time is None else parse_time(from_time)
    to_ms = None if to_time is None else parse_time(to_time)
    all_paths = list(paths or []) + ([p for p in files.split(",") if p] if files else [])
    if not all_paths:
        raise InputError("dump-log needs a FILE_OR_DIR (or --files FILE,...): nothing to dump")
    raise typer.Exit(run(all_paths, deep=deep_iteration, print_data=print_data_log,
                         metadata_decoder=cluster_metadata_decoder, skip_record_metadata=skip_record_metadata,
                         max_bytes=max_bytes, offset_start=offset_start, offset_end=offset_end,
                         record_types=record_type,
                         verify_index_only=verify_index_only,
                         index_sanity_check=index_sanity_check, max_message_size=max_message_size,
                         output=output, kafka=kafka_version.value, from_time=from_ms, to_time=to_ms))


def register(app: typer.Typer) -> None:
    app.command("dump-log")(dump_log)
