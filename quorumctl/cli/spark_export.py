"""`quorumctl spark-export`: metadata log segments and snapshots to Parquet, on Spark.

PySpark is imported only when the command runs (never by `quorumctl --help`).
"""

import sys
from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from .options import OutputOpt, positive, printer


def spark_export(
    ctx: typer.Context,
    paths: Annotated[
        List[str],
        typer.Argument(
            metavar="PATH...", help="Files, log dirs (searched recursively), globs, or URIs (hdfs://, s3a://, file://)."
        ),
    ],
    out: Annotated[str, typer.Option("--out", metavar="OUT", help="Output directory (local path or URI).")],
    master: Annotated[
        str, typer.Option("--master", help="Spark master (ignored under spark-submit, which sets it).")
    ] = "local[*]",
    mode: Annotated[str, typer.Option("--mode", help="error (OUT must not exist), overwrite or append.")] = "error",
    partition_by: Annotated[
        List[str],
        typer.Option(
            "--partition-by",
            metavar="COLUMN",
            help="Partition the output by a column, e.g. cluster_id, record_type, date (repeat or comma-separate).",
        ),
    ] = [],
    spark_conf: Annotated[
        List[str], typer.Option("--spark-conf", metavar="KEY=VALUE", help="Spark setting passed through (repeatable).")
    ] = [],
    split_size: Annotated[
        str,
        typer.Option(
            "--split-size", help="Largest byte range one task decodes (big files are cut at batch boundaries)."
        ),
    ] = "128m",
    writer: Annotated[
        str,
        typer.Option(
            "--writer",
            help="pyarrow: tasks write Parquet with pyarrow (fast); spark: "
            "Spark's own Parquet writer through the kraft data source.",
        ),
    ] = "pyarrow",
    compression: Annotated[
        str, typer.Option("--compression", help="Parquet codec: zstd (default), snappy, gzip or none.")
    ] = "zstd",
    progress: Annotated[
        Optional[bool],
        typer.Option(
            "--progress/--no-progress",
            help="Progress on stderr: a spinner while the JVM starts, then a bar over the "
            "tasks (default: when stderr is a terminal; otherwise one line "
            "at start; --no-progress: nothing).",
        ),
    ] = None,
    s3_endpoint: Annotated[
        Optional[str], typer.Option("--s3-endpoint", help="S3 endpoint for s3a:// input/output read by pyarrow.")
    ] = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            help="Keep tailing the inputs (live log dirs), appending new records to OUT in "
            "micro-batches; resumes exactly where it stopped (see --checkpoint).",
        ),
    ] = False,
    checkpoint: Annotated[
        Optional[str],
        typer.Option("--checkpoint", metavar="DIR", help="--follow's progress (default: OUT/_checkpoint)."),
    ] = None,
    interval: Annotated[
        float,
        typer.Option(
            "--interval", callback=positive, metavar="SECONDS", help="--follow: seconds between micro-batches."
        ),
    ] = 5.0,
    stop_after_idle: Annotated[
        Optional[int],
        typer.Option(
            "--stop-after-idle",
            metavar="N",
            help="--follow: stop after N rounds in a row found nothing new (default: run until interrupted).",
        ),
    ] = None,
    remote: Annotated[
        Optional[str],
        typer.Option(
            "--remote",
            metavar="sc://HOST:PORT",
            help="Run on a Spark Connect server instead of starting Spark (Spark's own Parquet writer, on the server).",
        ),
    ] = None,
    output: OutputOpt = None,
):
    """Export metadata logs, snapshots and bootstrap.checkpoint files to Parquet, on Spark.

    One row per record (schema: docs/parquet.md). Exit 1 when corrupt data was
    found (flagged rows are still written).

    Example: quorumctl spark-export /var/lib/kafka/meta --out /tmp/kraft.parquet --partition-by date
    """
    from ..errors import InputError

    pr = printer(ctx)
    if getattr(sys, "frozen", False):  # the standalone executable (tools/build_standalone.py) leaves Spark out
        raise InputError(
            "spark-export needs Spark, which the standalone executable leaves out: "
            "run it where quorumctl is pip-installed with its spark extra (pip install 'quorumctl[spark]')"
        )
    conf = {}
    for item in spark_conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--spark-conf expects KEY=VALUE, not {item!r}")
        conf[key.strip()] = value
    columns = [c.strip() for item in partition_by for c in item.split(",") if c.strip()]
    from ..spark.plan import parse_size

    try:
        split = parse_size(split_size)
    except ValueError as e:
        raise InputError(f"--split-size: {e}") from None
    fmt = pr.resolve(output)
    from ..spark.job import ExportRequest
    from .main import _state

    request = ExportRequest(
        paths=list(paths),
        out=out,
        master=master,
        mode=mode,
        partition_by=columns,
        spark_conf=conf,
        split_size=split,
        writer=writer,
        progress=progress,
        debug=_state["debug"],
        fs_options={"s3endpoint": s3_endpoint} if s3_endpoint else None,
        compression=compression,
        remote=remote,
        class_archive=True,
    )
    if follow:
        from ..render.spark_export import follow_batch_doc, follow_batch_line
        from ..spark.follow import Tail, follow_export

        if remote:
            raise InputError("--follow runs its micro-batches with the pyarrow writer; it cannot use --remote")

        def report(batch):
            pr.emit(fmt, batch, text=lambda b: follow_batch_line(b) + "\n", json=follow_batch_doc)

        tail = Tail(checkpoint=checkpoint, interval=interval, stop_after_idle=stop_after_idle)
        follow_export(request, tail, report=report, printer=pr)
        raise typer.Exit(ExitStatus.OK)

    from ..render.spark_export import summary_doc, summary_line, summary_table
    from ..spark.job import export
    from ..spark.session import finish_sessions

    summary = export(request, printer=pr)
    pr.emit(fmt, summary, text=lambda s: summary_line(s) + "\n", table=summary_table, json=summary_doc)
    finish_sessions()  # after the output: a first run then keeps the JVM's class archive
    raise typer.Exit(summary.exit_code)


def register(app: typer.Typer) -> None:
    app.command("spark-export")(spark_export)
