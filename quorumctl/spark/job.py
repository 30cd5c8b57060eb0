"""`quorumctl spark-export`: segments and snapshots to Parquet, on Spark.

The driver finds the files and plans the tasks (plan.py), hands the plan to
the `kraft` data source (source.py), and writes the DataFrame as Parquet,
collecting the summary's counts with a Spark `Observation` while the data is
written (no second pass over the output). The session comes from session.py;
a Rich progress bar (progress.py) follows the write job's tasks through
Spark's status tracker.

The same function runs embedded (`local[*]`, PySpark starts its own JVM) and
under `spark-submit` on YARN, Kubernetes or a standalone cluster, where the
session already exists and `--master` comes from spark-submit.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from ..errors import ExitStatus, InputError
from ..render.output import Printer
from . import plan as planning
from .progress import TaskBar, human_bytes
from .schema import NAMES
from .session import connect_session, start_session, under_spark_submit

MODES = {"error": "error", "overwrite": "overwrite", "append": "append"}


@dataclass
class Summary:
    files: int
    bytes: int
    tasks: int
    batches: int
    records: int
    rows: int
    errors: int
    corrupt_records: int
    decode_errors: int
    seconds: float
    out: str

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict:
        d = asdict(self)
        d["records_per_second"] = round(self.records_per_second, 1)
        d["seconds"] = round(self.seconds, 3)
        return d

    @property
    def exit_code(self) -> int:
        return ExitStatus.of(self.errors)


# -- the job ----------------------------------------------------------------------


def observed_metrics():
    """The summary's counts as aggregate expressions over the exported rows."""
    from pyspark.sql import functions as F

    kind = F.col("row_kind")
    first_of_batch = (kind == "record") & (F.col("record_index") == 0)
    return [
        F.count(F.lit(1)).alias("rows"),
        F.sum(F.when(kind == "record", 1).otherwise(0)).alias("records"),
        F.sum(F.when(first_of_batch | (kind == "batch_error"), 1).otherwise(0)).alias("batches"),
        F.sum(F.when((kind != "record") | (first_of_batch & F.col("corrupt")), 1).otherwise(0)).alias("errors"),
        F.sum(F.when((kind == "record") & F.col("corrupt"), 1).otherwise(0)).alias("corrupt_records"),
        F.sum(F.when(F.col("decode_error").isNotNull(), 1).otherwise(0)).alias("decode_errors"),
    ]


WRITERS = ("pyarrow", "spark")
# Parquet codecs both writers (pyarrow's and Spark's) write under the same name.
# zstd by default: on the corpus about a third smaller than snappy, and read
# by every engine that reads Parquet (Spark 3+, Trino, DuckDB, pyarrow).
COMPRESSIONS = ("zstd", "snappy", "gzip", "none")


@dataclass(frozen=True, kw_only=True)
class ExportRequest:
    """What spark-export is asked: the inputs, where and how to write them, and the
    session to run on (cli/spark_export.py reads it from the command line)."""

    paths: Sequence[str]
    out: str
    master: str | None = "local[*]"
    mode: str = "error"  # MODES
    partition_by: Sequence[str] = ()
    spark_conf: Mapping[str, str] | None = None
    split_size: int = planning.DEFAULT_SPLIT_SIZE
    # the least number of tasks; by default one per core of the session (its default
    # parallelism) for small inputs, three per core for larger ones (plan.default_min_partitions)
    min_partitions: int | None = None
    writer: str = "pyarrow"  # WRITERS
    progress: bool | None = None  # None: when stderr is a terminal
    debug: bool = False
    fs_options: Mapping[str, str] | None = None
    compression: str = "zstd"  # COMPRESSIONS
    remote: str | None = None  # a Spark Connect server (sc://HOST:PORT)
    class_archive: bool = False


def export(request: ExportRequest, spark=None, printer: Printer | None = None) -> Summary:
    """Export the files under `request.paths` to Parquet under `request.out` and return
    the summary; pass `spark` to use an existing session (tests, notebooks). Progress
    and notes go to `printer`'s stderr (the process's when None)."""
    printer = Printer() if printer is None else printer
    t0 = time.monotonic()
    rq = request
    partition_by = list(rq.partition_by)
    # over Spark Connect there is no SparkContext to run our own tasks
    writer = "spark" if rq.remote else rq.writer
    check_export_options(partition_by, rq.compression, writer, rq.mode)
    from . import fs

    # S3 endpoint/credentials may come as Hadoop S3A settings, as Spark users give them
    conf = dict(rq.spark_conf or {})
    fs_options = {**fs.s3_options_from_conf(conf), **(rq.fs_options or {})} or None
    out = rq.out
    if not fs.is_remote(out):
        out = os.path.abspath(fs.local_path(out))  # executors may run elsewhere than our cwd
        if rq.mode == "error" and os.path.exists(out):
            raise InputError(f"{out} already exists (use --mode overwrite or --mode append)")
    files = planning.source_files(list(rq.paths), fs_options)  # bad paths fail before Spark starts

    def plan_for(slots: int) -> planning.Plan:
        return planning.plan_files(
            files, split_size=rq.split_size, min_partitions=rq.min_partitions, slots=slots, options=fs_options
        )

    if rq.remote:
        if spark is None:
            spark = connect_session(rq.remote, conf, rq.progress)
        plan = plan_for(os.cpu_count() or 1)
        counts = _write_with_spark(spark, plan, out, rq.mode, partition_by, fs_options, rq.compression)
        return _summary(plan, counts, out, t0)
    early = None
    if spark is None:
        # cut the files while the JVM starts (seconds for GBs of input): the plan depends
        # on the session's cores, which a local master names
        slots = _local_slots(rq.master)
        if slots is not None:
            early = _Background(lambda: plan_for(slots))
        spark = start_session(
            rq.master,
            conf,
            progress=rq.progress,
            debug=rq.debug,
            class_archive=rq.class_archive,
            light_jvm=writer == "pyarrow",
            printer=printer,
        )
    sc = spark.sparkContext
    planned = early.result() if early is not None and slots == sc.defaultParallelism else None
    plan = planned if planned is not None else plan_for(sc.defaultParallelism)
    group = f"quorumctl-spark-export-{os.getpid()}-{time.time_ns()}"
    description = f"decoding {len(plan.files)} files, {human_bytes(plan.total_bytes)}"
    sc.setJobGroup(group, description)
    show = printer.stderr_isatty if rq.progress is None else rq.progress
    bar = TaskBar(sc, group, len(plan.partitions), description, printer) if show else None
    if bar:
        bar.start()
    try:
        if writer == "spark":
            counts = _write_with_spark(spark, plan, out, rq.mode, partition_by, fs_options, rq.compression)
        else:
            counts = _write_with_pyarrow(sc, plan, out, rq.mode, partition_by, fs_options, rq.compression)
    finally:
        if bar:
            bar.done.set()
            bar.join(5)
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    return _summary(plan, counts, out, t0)


def _summary(plan: planning.Plan, counts: dict, out: str, t0: float) -> Summary:
    return Summary(
        files=len(plan.files),
        bytes=plan.total_bytes,
        tasks=len(plan.partitions),
        seconds=time.monotonic() - t0,
        out=out,
        **counts,
    )


def _local_slots(master: str | None) -> int | None:
    """The cores of a local master (local, local[N], local[*], local[N,F]); None
    for any other, or under spark-submit, whose master we do not see here."""
    if under_spark_submit():
        return None
    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master or "local[*]")
    if m is None:
        return None
    n = m.group(1)
    return 1 if n is None else (os.cpu_count() or 1) if n == "*" else int(n)


class _Background:
    """A function run on a thread; `result()` waits for it and returns its value,
    or None if it raised (the caller then runs it again in the foreground,
    where the error is reported as usual)."""

    def __init__(self, fn):
        self._value = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True, name="quorumctl-plan")
        self._thread.start()

    def _run(self, fn):
        try:
            self._value = fn()
        except BaseException:
            self._value = None

    def result(self):
        self._thread.join()
        return self._value


def check_export_options(partition_by: list[str], compression: str, writer: str, mode: str):
    if mode not in MODES:
        raise InputError(f"--mode must be one of {', '.join(MODES)}, not {mode!r}")
    if writer not in WRITERS:
        raise InputError(f"--writer must be one of {', '.join(WRITERS)}, not {writer!r}")
    if compression not in COMPRESSIONS:
        raise InputError(f"--compression must be one of {', '.join(COMPRESSIONS)}, not {compression!r}")
    unknown = [c for c in partition_by if c not in NAMES]
    if unknown:
        raise InputError(
            f"--partition-by: no column {', '.join(unknown)} (columns: see docs/parquet.md; "
            f"e.g. cluster_id, record_type, date, file_kind, node_id)"
        )


def _write_with_pyarrow(sc, plan, out, mode, partition_by, fs_options, compression="zstd") -> dict:
    """Tasks decode and write Parquet themselves (writer.py); the driver commits."""
    import uuid

    from . import writer as w
    from .rows import Stats

    target = w._FileSystem(out, fs_options)
    if mode == "error" and target.exists(target.root):
        raise InputError(f"{out} already exists (use --mode overwrite or --mode append)")
    job = f"{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:8]}"
    try:  # fail here, in one line, rather than in every task
        target.makedirs(target.path("_temporary", job))
    except OSError as e:
        raise InputError(f"cannot write to {out}: {e.strerror or e}") from None
    tasks = list(enumerate(plan.partitions))
    if not tasks:
        tasks = [(0, [])]
    opts = dict(fs_options or {})

    def task(item):
        index, pieces = item
        return w.run_task(index, pieces, out, job, partition_by, opts, compression=compression)

    try:
        results = sc.parallelize(tasks, len(tasks)).map(task).collect()
        w.commit(out, job, results, mode, fs_options)
    except BaseException as e:  # Ctrl-C included: leave no _temporary/<job> behind
        try:
            w.abort(out, job, fs_options)
        except Exception:
            pass
        if not isinstance(e, Exception):
            raise
        raise InputError(f"writing {out} failed: {_one_line(e)}") from e
    stats = Stats()
    rows = 0
    for r in results:
        stats.add(r["stats"])
        rows += r["rows"]
    return {
        "batches": stats.batches,
        "records": stats.records,
        "rows": rows,
        "errors": stats.errors,
        "corrupt_records": stats.corrupt_records,
        "decode_errors": stats.decode_errors,
    }


def _write_with_spark(spark, plan, out, mode, partition_by, fs_options, compression="zstd") -> dict:
    """The kraft data source and Spark's own Parquet writer; the counts come
    from an Observation on the rows as they are written."""
    from pyspark.sql import Observation

    from .source import KraftDataSource, plan_to_json

    spark.dataSource.register(KraftDataSource)
    if not _is_connect(spark):
        _require_hadoop_s3(spark, out)
    reader = spark.read.format("kraft").option("plan", plan_to_json(plan))
    for k, v in (fs_options or {}).items():
        reader = reader.option(k, v)
    obs = Observation("quorumctl_spark_export")
    df = reader.load().observe(obs, *observed_metrics())
    try:
        writer = df.write.mode(MODES[mode]).option("compression", compression)
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.parquet(out)
    except Exception as e:
        raise InputError(f"writing {out} failed: {_one_line(e)}") from e
    m = obs.get
    return {k: int(m[k] or 0) for k in ("batches", "records", "rows", "errors", "corrupt_records", "decode_errors")}


def _is_connect(spark) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _require_hadoop_s3(spark, out: str):
    """Spark's own writer reaches S3 only through Hadoop's S3A file system,
    which PySpark does not ship (hadoop-aws and the AWS SDK bundle are Maven
    artifacts, not on PyPI): say so in one line instead of Hadoop's
    'No FileSystem for scheme'."""
    scheme = out.split("://", 1)[0].lower() if "://" in out else ""
    if scheme not in ("s3", "s3a", "s3n"):
        return
    try:
        spark.sparkContext._jvm.java.lang.Class.forName("org.apache.hadoop.fs.s3a.S3AFileSystem")
        present = True
    except Exception:
        present = False
    if not present or scheme != "s3a":
        why = (
            "Hadoop's S3A file system is not on Spark's classpath: PySpark ships no hadoop-aws "
            "jar nor the AWS SDK bundle it needs"
            if not present
            else f"Hadoop names S3 s3a://, not {scheme}://"
        )
        raise InputError(
            f"--writer spark cannot write {out}: {why}; use the default --writer pyarrow "
            f"(S3 through pyarrow), or add org.apache.hadoop:hadoop-aws (the version of "
            f"Spark's Hadoop) with --spark-conf spark.jars.packages=... and write to s3a://"
        )


_PY_ERROR = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt)): (.+?)(?: SQLSTATE: \w+)?$")


def _one_line(e: BaseException) -> str:
    """The cause of a failed Spark job in one line: for a task that failed in
    Python, the last exception line of its traceback (not the JVM's wrapper)."""
    text = str(e).strip()
    found = [m for m in (_PY_ERROR.match(x.strip()) for x in text.splitlines()) if m]
    found = [
        m for m in found if m.group(1).rsplit(".", 1)[-1] not in ("PythonException", "Py4JJavaError", "SparkException")
    ]
    if found:
        name, message = found[-1].groups()
        return f"{name.rsplit('.', 1)[-1]}: {message}"[:500]
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:500]
    return type(e).__name__
