"""`quorumctl spark-export`: segments and snapshots to Parquet, on Spark.

The driver finds the files and plans the tasks (plan.py), hands the plan to
the `kraft` data source (source.py), and writes the DataFrame as Parquet,
collecting the summary's counts with a Spark `Observation` while the data is
written (no second pass over the output). A Rich progress bar follows the
write job's tasks through Spark's status tracker.

The same function runs embedded (`local[*]`, PySpark starts its own JVM) and
under `spark-submit` on YARN, Kubernetes or a standalone cluster, where the
session already exists and `--master` comes from spark-submit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass

from ..errors import ExitStatus, InputError
from . import plan as planning
from .classarchive import ClassArchive
from .schema import NAMES

MODES = {"error": "error", "overwrite": "overwrite", "append": "append"}

# What spark-export sets unless --spark-conf says otherwise.
DEFAULT_CONF = {
    "spark.ui.showConsoleProgress": "false",           # our own progress display instead
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",  # standard, not INT96
}
LIGHT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
LOCAL_CONF = {
    "spark.driver.memory": "2g",                       # Parquet writers of all local tasks share it
}


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


# -- can Spark start here? -------------------------------------------------------

def _under_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def require_pyspark():
    """Import PySpark and pyarrow, or say exactly what is missing."""
    missing = []
    try:
        import pyspark
    except ImportError:
        pyspark = None
        missing.append("PySpark")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        missing.append("pyarrow")
    if missing:
        raise InputError(f"spark-export needs {' and '.join(missing)}, which "
                         f"{'is' if len(missing) == 1 else 'are'} not installed in {sys.executable}: "
                         f"pip install 'quorumctl[spark]'")
    major = int(pyspark.__version__.split(".")[0])
    if major < 4:
        raise InputError(f"spark-export needs PySpark 4 (Python data sources); found PySpark "
                         f"{pyspark.__version__}: pip install 'pyspark>=4'")


def find_java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        return java if os.access(java, os.X_OK) else None
    return shutil.which("java")


def java_major(java: str) -> int | None:
    """The Java major version of `java`: from the JDK's `release` file when it
    has one (every JDK since 9 does), else from `java -version`, which is one
    more JVM start (about 0.4 s) before Spark's own two."""
    import re
    pattern = r'version "(\d+)(?:\.(\d+))?'
    try:
        home = os.path.dirname(os.path.dirname(os.path.realpath(java)))
        with open(os.path.join(home, "release"), encoding="utf-8", errors="replace") as f:
            out = f.read(4096).replace('JAVA_VERSION="', 'version "')
    except OSError:
        out = ""
    if not re.search(pattern, out):
        try:
            out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
        except (OSError, subprocess.TimeoutExpired):
            return None
    m = re.search(pattern, out)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major   # "1.8.0" is Java 8


def require_java():
    """Spark 4 runs on Java 17 or 21; say so before PySpark fails obscurely."""
    if _under_spark_submit():
        return
    java = find_java()
    if java is None:
        where = (f"JAVA_HOME={os.environ['JAVA_HOME']} has no bin/java" if os.environ.get("JAVA_HOME")
                 else "no `java` on PATH and JAVA_HOME is not set")
        raise InputError(f"spark-export needs Java 17 or later to run Spark ({where}); install a JDK "
                         f"(e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME")
    major = java_major(java)
    if major is not None and major < 17:
        raise InputError(f"spark-export needs Java 17 or later to run Spark 4; {java} is Java {major} "
                         f"(set JAVA_HOME to a newer JDK)")


def start_session(master: str | None, conf: dict[str, str], app_name: str = "quorumctl spark-export",
                  progress: bool | None = False, debug: bool = False, class_archive: bool = False,
                  light_jvm: bool = False):
    """A Spark session (`debug`, the CLI's --debug, keeps Spark's own logging);
    `progress` as export's (None: a spinner on a terminal,
    else a line) says on stderr that the JVM is starting, once we know it can.
    `class_archive`: start the driver JVM from the class archive for this Java
    and PySpark, or have it make one, which `finish_sessions` then keeps
    (classarchive.py); the CLI does, library callers need not. `light_jvm`: the
    JVMs only schedule tasks whose Python workers do the work (the pyarrow
    writer), so they run the client compiler and the serial collector
    (`LIGHT_JVM`), whose threads take far less of the cores from those workers
    than C2's and G1's (measured: a 140 MB export on local[2], 2 cores, load 6:
    15-18 s instead of 24-30 s)."""
    require_pyspark()
    require_java()
    from pyspark.sql import SparkSession
    local = not _under_spark_submit() and (master or "local[*]").startswith("local")
    if not _under_spark_submit():
        # Python workers must run an interpreter with quorumctl (and pyarrow, msgspec ...).
        # Outside spark-submit the driver reads only PYSPARK_PYTHON, not spark.pyspark.python:
        # that setting is passed on; else local and standalone (spark://) workers run this
        # interpreter (a standalone cluster's hosts are usually built from one image), or
        # they would start the system's python3, where the job dies on ModuleNotFoundError
        worker_python = conf.get("spark.pyspark.python") or (
            sys.executable if local or (master or "").startswith("spark://") else None)
        if worker_python:
            os.environ.setdefault("PYSPARK_PYTHON", worker_python)
    if local:
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if master and not _under_spark_submit():
        builder = builder.master(master)
    settings = dict(DEFAULT_CONF)
    if local:
        settings.update(LOCAL_CONF)
    own_options = not _under_spark_submit() and "spark.driver.extraJavaOptions" not in conf
    quiet = own_options and not debug
    java_options = []
    if quiet:
        # Spark's INFO/WARN chatter would bury the summary; errors still show
        java_options.append(f"-Dlog4j2.configurationFile=file:{_log4j_config()}")
    if light_jvm and own_options:
        java_options.append(LIGHT_JVM)
        if "spark.executor.extraJavaOptions" not in conf and not local:
            settings["spark.executor.extraJavaOptions"] = LIGHT_JVM    # (a cluster's executors)
    archive = ClassArchive.for_java(find_java(), conf) if own_options and class_archive else None
    if archive is not None:
        archive_options = archive.java_options()
        if archive_options is None:
            archive = None
        else:
            java_options.append(archive_options)
    settings.update(conf)
    for k, v in settings.items():
        builder = builder.config(k, v)
    filtered = None
    try:
        for attempt in (1, 2):
            if java_options:
                builder = builder.config("spark.driver.extraJavaOptions", " ".join(java_options))
            try:
                retry = attempt == 1 and archive is not None and archive.used
                with _starting(master, progress if attempt == 1 else False):
                    if quiet:
                        with _jvm_stderr_filtered(hold=retry) as filtered:
                            try:
                                spark = builder.getOrCreate()
                            except Exception:
                                if retry:
                                    filtered.drop()
                                raise
                    else:
                        spark = builder.getOrCreate()
                break
            except Exception:
                if not retry:
                    raise
                # a JVM that cannot map the archive aborts (its report is in the cache
                # directory): start again without it
                sys.stderr.write(f"quorumctl: the JVM could not start from its class archive "
                                 f"{archive.path}; removed it, starting without\n")
                java_options.remove(archive_options)
                archive.discard()
                archive = None
    except Exception as e:  # PySpark raises several types here; all mean "no JVM"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"could not start Spark (master {master or 'from spark-submit'}): {first} "
                         f"(check Java 17+, JAVA_HOME and the --spark-conf settings)") from None
    if quiet:
        spark.sparkContext.setLogLevel("ERROR")
    if archive is not None and archive.tmp is not None:
        _WRITING.append((spark, archive, filtered))
    return spark


# sessions whose JVM is writing a new class archive (start_session's class_archive)
_WRITING: list = []


def finish_sessions() -> int:
    """Stop the sessions whose JVM is writing a new class archive and keep the
    archives (a few seconds, once per Java and PySpark: classarchive.py); the
    CLI calls it when its output is out. How many were saved."""
    saved = 0
    while _WRITING:
        spark, archive, filtered = _WRITING.pop()
        if filtered is not None:
            filtered.mute()      # the output is out; what the JVM says as it exits is not for the user
        saved += archive.save(spark)
    return saved


# What the JVM prints on its stderr at every start (Spark 4 loads its vector
# module) and we keep from the user; everything else passes through.
_JVM_NOISE = (b"WARNING: Using incubator modules: jdk.incubator.vector",)


class _jvm_stderr_filtered:
    """While the JVM starts, point fds 1 and 2 at a pipe, so the JVM (and the
    Python workers it forks later) inherit the pipe as their stdout and
    stderr; a daemon thread copies it to the real stderr line by line,
    dropping `_JVM_NOISE`. Our stdout is the export's output (one JSON line
    with -o json): whatever the JVM prints (its warnings go to stdout by
    default, as does a fatal error's report) must not land in it. Our own fds
    are restored as soon as the JVM is up.

    With `hold`, lines are held until the JVM is up and dropped if it is not
    (`drop()`): a start that is retried does not show the first one's report."""

    def __init__(self, hold: bool = False):
        self.held: list | None = [] if hold else None
        self.muted = False
        self.lock = threading.Lock()

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = (os.dup(1), os.dup(2))
        read_end, write_end = os.pipe()
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        os.close(write_end)
        self.out = os.dup(self.saved[1])
        self.thread = threading.Thread(target=self._copy, args=(read_end,), daemon=True,
                                       name="quorumctl-jvm-stderr")
        self.thread.start()
        return self

    def __exit__(self, exc_type, *exc):
        for fd, saved in enumerate(self.saved, 1):
            os.dup2(saved, fd)
            os.close(saved)
        if exc_type is not None and self.held is not None:
            self.thread.join(5)     # a dead JVM's last words, to drop with the rest
        with self.lock:
            held, self.held = self.held, None
            if held and exc_type is None:
                os.write(self.out, b"".join(held))

    def drop(self):
        """Forget what the failed start printed so far."""
        with self.lock:
            if self.held is not None:
                self.held.clear()

    def mute(self):
        """Drop whatever comes from now on."""
        with self.lock:
            self.muted = True

    def _write(self, data: bytes):
        with self.lock:
            if self.muted:
                return
            if self.held is not None:
                self.held.append(data)
            else:
                os.write(self.out, data)

    def _copy(self, read_end: int):
        with os.fdopen(read_end, "rb", buffering=0) as pipe:
            pending = b""
            while True:
                chunk = pipe.read(65536)
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                keep = b"".join(line + b"\n" for line in lines if line.rstrip(b"\r") not in _JVM_NOISE)
                if keep:
                    self._write(keep)
            if pending and pending not in _JVM_NOISE:
                self._write(pending)
        os.close(self.out)


_LOG4J = """\
rootLogger.level = warn
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.executor.name = org.apache.spark.executor
logger.executor.level = off
logger.scheduler.name = org.apache.spark.scheduler
logger.scheduler.level = off
logger.python.name = org.apache.spark.api.python.PythonRunner
logger.python.level = off
logger.basepython.name = org.apache.spark.api.python.BasePythonRunner
logger.basepython.level = off
logger.writer.name = org.apache.spark.sql.execution.datasources
logger.writer.level = off
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


def _log4j_config() -> str:
    """A log4j2 configuration that shows only errors, and not even those of
    failing tasks, which spark-export reports in one line itself (written once
    per user). The root level is WARN and the class that first logs at start-up
    (PythonGatewayServer) has no logger of its own, so that PySpark's
    shell-style start-up does not announce a default log level (Spark's
    Logging compares the two). `--debug` keeps Spark's own logging."""
    import hashlib
    import tempfile
    path = os.path.join(tempfile.gettempdir(),
                        f"quorumctl-log4j2-{hashlib.sha1(_LOG4J.encode()).hexdigest()[:12]}-{os.getuid()}"
                        f".properties")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(_LOG4J)
        os.replace(tmp, path)
    return path


# -- progress ---------------------------------------------------------------------

class _Progress(threading.Thread):
    """Follow the write job's tasks on the driver with a Rich progress bar."""

    def __init__(self, sc, group: str, total_tasks: int, description: str):
        super().__init__(daemon=True)
        self.sc = sc
        self.group = group
        self.total = total_tasks
        self.description = description
        self.done = threading.Event()

    def _counts(self, tracker):
        completed = active = total = 0
        for job_id in tracker.getJobIdsForGroup(self.group):
            job = tracker.getJobInfo(job_id)
            if job is None:
                continue
            for sid in job.stageIds:
                st = tracker.getStageInfo(sid)
                if st is not None:
                    completed += st.numCompletedTasks
                    active += st.numActiveTasks
                    total += st.numTasks
        return completed, active, total

    def run(self):
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                                   TextColumn, TimeElapsedColumn)
        tracker = self.sc.statusTracker()
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                      MofNCompleteColumn(), TextColumn("tasks ({task.fields[active]} running)"),
                      TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(self.description, total=self.total, active=0)
            while True:
                finished = self.done.wait(0.5)
                try:
                    completed, active, total = self._counts(tracker)
                except Exception:   # the JVM went away under us: stop showing progress
                    return
                bar.update(task, completed=completed, total=max(total, self.total), active=active)
                if finished:
                    return


class _starting:
    """Something on stderr while the JVM starts (~10 s of nothing otherwise): a
    Rich spinner on a terminal (gone once Spark is up), else one line; nothing
    with --no-progress. The spinner writes to a duplicate of fd 2 taken first:
    start_session points fd 2 at a filtering pipe meanwhile, which would hold
    back a line without a newline."""

    def __init__(self, master: str | None, progress: bool | None):
        self.what = f"starting Spark (master {master or 'from spark-submit'}); the JVM takes a few seconds"
        self.progress = progress
        self.status = None
        self.file = None

    def __enter__(self):
        if self.progress is False:
            return self
        sys.stderr.flush()
        if sys.stderr.isatty():
            from rich.console import Console
            self.file = os.fdopen(os.dup(2), "w", encoding="utf-8", errors="replace")
            self.status = Console(file=self.file).status(self.what)
            self.status.__enter__()
        else:
            sys.stderr.write(f"quorumctl: {self.what}\n")
            sys.stderr.flush()
        return self

    def __exit__(self, *exc):
        if self.status is not None:
            self.status.__exit__(*exc)
        if self.file is not None:
            self.file.close()


def _human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


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
        F.sum(F.when((kind != "record") | (first_of_batch & F.col("corrupt")), 1).otherwise(0))
         .alias("errors"),
        F.sum(F.when((kind == "record") & F.col("corrupt"), 1).otherwise(0)).alias("corrupt_records"),
        F.sum(F.when(F.col("decode_error").isNotNull(), 1).otherwise(0)).alias("decode_errors"),
    ]


WRITERS = ("pyarrow", "spark")
# Parquet codecs both writers (pyarrow's and Spark's) write under the same name.
# zstd by default: on the corpus about a third smaller than snappy, and read
# by every engine that reads Parquet (Spark 3+, Trino, DuckDB, pyarrow).
COMPRESSIONS = ("zstd", "snappy", "gzip", "none")


def export(paths: list[str], out: str, *, master: str | None = "local[*]", mode: str = "error",
           partition_by: list[str] | None = None, spark_conf: dict[str, str] | None = None,
           split_size: int = planning.DEFAULT_SPLIT_SIZE, min_partitions: int | None = None,
           writer: str = "pyarrow", progress: bool | None = None, spark=None, debug: bool = False,
           fs_options: dict | None = None, compression: str = "zstd", remote: str | None = None,
           class_archive: bool = False) -> Summary:
    """Export the files under `paths` to Parquet under `out` and return the summary.
    `min_partitions` (the least number of tasks) defaults to one per core of
    the session (its default parallelism) for small inputs, three per core for
    larger ones (`plan.default_min_partitions`); pass `spark` to use an existing
    session (tests, notebooks)."""
    t0 = time.monotonic()
    partition_by = list(partition_by or [])
    if remote:
        writer = "spark"      # over Spark Connect there is no SparkContext to run our own tasks
    check_export_options(partition_by, compression, writer, mode)
    from . import fs
    # S3 endpoint/credentials may come as Hadoop S3A settings, as Spark users give them
    fs_options = {**fs.s3_options_from_conf(spark_conf or {}), **(fs_options or {})} or None
    if not fs.is_remote(out):
        out = os.path.abspath(fs.local_path(out))   # executors may run elsewhere than our cwd
        if mode == "error" and os.path.exists(out):
            raise InputError(f"{out} already exists (use --mode overwrite or --mode append)")
    files = planning.source_files(paths, fs_options)    # bad paths fail before Spark starts

    early = None
    if spark is None:
        # cut the files while the JVM starts (seconds for GBs of input): the plan depends
        # on the session's cores, which a local master names
        slots = None if remote else _local_slots(master)
        if slots is not None:
            early = _Background(lambda: planning.plan_files(
                files, split_size=split_size, min_partitions=min_partitions, slots=slots,
                options=fs_options))
        spark = (connect_session(remote, spark_conf or {}, progress) if remote
                 else start_session(master, spark_conf or {}, progress=progress, debug=debug,
                                    class_archive=class_archive, light_jvm=writer == "pyarrow"))
    if remote:
        plan = planning.plan_files(files, split_size=split_size, min_partitions=min_partitions,
                                   slots=os.cpu_count() or 1, options=fs_options)
        counts = _write_with_spark(spark, plan, out, mode, partition_by, fs_options, compression)
        return Summary(files=len(plan.files), bytes=plan.total_bytes, tasks=len(plan.partitions),
                       seconds=time.monotonic() - t0, out=out, **counts)
    sc = spark.sparkContext
    plan = early.result() if early is not None and slots == sc.defaultParallelism else None
    if plan is None:
        plan = planning.plan_files(files, split_size=split_size,
                                   min_partitions=min_partitions, slots=sc.defaultParallelism,
                                   options=fs_options)
    group = f"quorumctl-spark-export-{os.getpid()}-{time.time_ns()}"
    description = f"decoding {len(plan.files)} files, {_human_bytes(plan.total_bytes)}"
    sc.setJobGroup(group, description)
    show = sys.stderr.isatty() if progress is None else progress
    bar = _Progress(sc, group, len(plan.partitions), description) if show else None
    if bar:
        bar.start()
    try:
        if writer == "spark":
            counts = _write_with_spark(spark, plan, out, mode, partition_by, fs_options, compression)
        else:
            counts = _write_with_pyarrow(sc, plan, out, mode, partition_by, fs_options, compression)
    finally:
        if bar:
            bar.done.set()
            bar.join(5)
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    return Summary(files=len(plan.files), bytes=plan.total_bytes, tasks=len(plan.partitions),
                   seconds=time.monotonic() - t0, out=out, **counts)


def _local_slots(master: str | None) -> int | None:
    """The cores of a local master (local, local[N], local[*], local[N,F]); None
    for any other, or under spark-submit, whose master we do not see here."""
    if _under_spark_submit():
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
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True,
                                        name="quorumctl-plan")
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
        raise InputError(f"--partition-by: no column {', '.join(unknown)} (columns: see docs/parquet.md; "
                         f"e.g. cluster_id, record_type, date, file_kind, node_id)")


def connect_session(remote: str, conf: dict[str, str], progress: bool | None = False):
    """A Spark Connect session on `remote` (sc://host:port): no local JVM; the
    kraft data source is registered with the server, whose Python workers need
    quorumctl installed."""
    require_pyspark()
    try:
        from pyspark.sql.connect.utils import check_dependencies
        check_dependencies()
    except Exception as e:      # ImportError, or PySpark's own error naming the missing module
        raise InputError(f"--remote needs the Spark Connect client ({e}): pip install 'pyspark[connect]'") \
            from None
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.remote(remote)
    for k, v in conf.items():
        builder = builder.config(k, v)
    try:
        spark = builder.getOrCreate()
        for k, v in DEFAULT_CONF.items():      # the SQL ones can be set per session
            if k.startswith("spark.sql.") and k not in conf:
                spark.conf.set(k, v)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"could not reach Spark Connect at {remote}: {first}") from None
    return spark


def _write_with_pyarrow(sc, plan, out, mode, partition_by, fs_options, compression="zstd") -> dict:
    """Tasks decode and write Parquet themselves (writer.py); the driver commits."""
    import uuid

    from . import writer as w
    from .rows import Stats
    target = w._FileSystem(out, fs_options)
    if mode == "error" and target.exists(target.root):
        raise InputError(f"{out} already exists (use --mode overwrite or --mode append)")
    job = f"{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:8]}"
    try:   # fail here, in one line, rather than in every task
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
    except BaseException as e:      # Ctrl-C included: leave no _temporary/<job> behind
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
    return dict(batches=stats.batches, records=stats.records, rows=rows, errors=stats.errors,
                corrupt_records=stats.corrupt_records, decode_errors=stats.decode_errors)


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
    return {k: int(m[k] or 0) for k in ("batches", "records", "rows", "errors", "corrupt_records",
                                         "decode_errors")}


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
        why = ("Hadoop's S3A file system is not on Spark's classpath: PySpark ships no hadoop-aws "
               "jar nor the AWS SDK bundle it needs" if not present else
               f"Hadoop names S3 s3a://, not {scheme}://")
        raise InputError(f"--writer spark cannot write {out}: {why}; use the default --writer pyarrow "
                         f"(S3 through pyarrow), or add org.apache.hadoop:hadoop-aws (the version of "
                         f"Spark's Hadoop) with --spark-conf spark.jars.packages=... and write to s3a://")


_PY_ERROR = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt)): (.+?)(?: SQLSTATE: \w+)?$")


def _one_line(e: BaseException) -> str:
    """The cause of a failed Spark job in one line: for a task that failed in
    Python, the last exception line of its traceback (not the JVM's wrapper)."""
    text = str(e).strip()
    found = [m for m in (_PY_ERROR.match(x.strip()) for x in text.splitlines()) if m]
    found = [m for m in found if m.group(1).rsplit(".", 1)[-1] not in
             ("PythonException", "Py4JJavaError", "SparkException")]
    if found:
        name, message = found[-1].groups()
        return f"{name.rsplit('.', 1)[-1]}: {message}"[:500]
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:500]
    return type(e).__name__
