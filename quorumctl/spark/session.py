"""Starting Spark for spark-export: whether it can start here (PySpark 4,
pyarrow, Java 17+), the session (embedded, under spark-submit, or over Spark
Connect), a quiet light JVM started from its class archive (classarchive.py),
and keeping that archive once the output is out (`finish_sessions`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

from ..errors import InputError
from ..render.output import Printer
from .classarchive import ClassArchive
from .progress import starting

# What spark-export sets unless --spark-conf says otherwise.
DEFAULT_CONF = {
    "spark.ui.showConsoleProgress": "false",  # our own progress display instead
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",  # standard, not INT96
}
LIGHT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
LOCAL_CONF = {
    "spark.driver.memory": "2g",  # Parquet writers of all local tasks share it
}


# -- can Spark start here? -------------------------------------------------------


def under_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def require_pyspark():
    """Import PySpark and pyarrow, or say exactly what is missing."""
    missing = []
    try:
        import pyspark
    except ImportError:
        missing.append("PySpark")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        missing.append("pyarrow")
    if missing:
        raise InputError(
            f"spark-export needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed in {sys.executable}: "
            f"pip install 'quorumctl[spark]'"
        )
    major = int(pyspark.__version__.split(".")[0])
    if major < 4:
        raise InputError(
            f"spark-export needs PySpark 4 (Python data sources); found PySpark "
            f"{pyspark.__version__}: pip install 'pyspark>=4'"
        )


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
    return int(m.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def require_java():
    """Spark 4 runs on Java 17 or 21; say so before PySpark fails obscurely."""
    if under_spark_submit():
        return
    java = find_java()
    if java is None:
        where = (
            f"JAVA_HOME={os.environ['JAVA_HOME']} has no bin/java"
            if os.environ.get("JAVA_HOME")
            else "no `java` on PATH and JAVA_HOME is not set"
        )
        raise InputError(
            f"spark-export needs Java 17 or later to run Spark ({where}); install a JDK "
            f"(e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
        )
    major = java_major(java)
    if major is not None and major < 17:
        raise InputError(
            f"spark-export needs Java 17 or later to run Spark 4; {java} is Java {major} (set JAVA_HOME to a newer JDK)"
        )


def start_session(
    master: str | None,
    conf: dict[str, str],
    app_name: str = "quorumctl spark-export",
    progress: bool | None = False,
    debug: bool = False,
    class_archive: bool = False,
    light_jvm: bool = False,
    printer: Printer | None = None,
):
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
    15-18 s instead of 24-30 s). What it says goes to `printer`'s stderr (the process's
    when None)."""
    printer = Printer() if printer is None else printer
    require_pyspark()
    require_java()
    from pyspark.sql import SparkSession

    local = not under_spark_submit() and (master or "local[*]").startswith("local")
    if not under_spark_submit():
        # Python workers must run an interpreter with quorumctl (and pyarrow, msgspec ...).
        # Outside spark-submit the driver reads only PYSPARK_PYTHON, not spark.pyspark.python:
        # that setting is passed on; else local and standalone (spark://) workers run this
        # interpreter (a standalone cluster's hosts are usually built from one image), or
        # they would start the system's python3, where the job dies on ModuleNotFoundError
        worker_python = conf.get("spark.pyspark.python") or (
            sys.executable if local or (master or "").startswith("spark://") else None
        )
        if worker_python:
            os.environ.setdefault("PYSPARK_PYTHON", worker_python)
    if local:
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if master and not under_spark_submit():
        builder = builder.master(master)
    settings = dict(DEFAULT_CONF)
    if local:
        settings.update(LOCAL_CONF)
    own_options = not under_spark_submit() and "spark.driver.extraJavaOptions" not in conf
    quiet = own_options and not debug
    java_options = []
    if quiet:
        # Spark's INFO/WARN chatter would bury the summary; errors still show
        java_options.append(f"-Dlog4j2.configurationFile=file:{_log4j_config()}")
    if light_jvm and own_options:
        java_options.append(LIGHT_JVM)
        if "spark.executor.extraJavaOptions" not in conf and not local:
            settings["spark.executor.extraJavaOptions"] = LIGHT_JVM  # (a cluster's executors)
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
                with starting(master, progress if attempt == 1 else False, printer):
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
                if not retry or archive is None or archive_options is None:  # a retry has both
                    raise
                # a JVM that cannot map the archive aborts (its report is in the cache
                # directory): start again without it
                printer.tell(
                    f"the JVM could not start from its class archive {archive.path}; removed it, starting without"
                )
                java_options.remove(archive_options)
                archive.discard()
                archive = None
    except Exception as e:  # PySpark raises several types here; all mean "no JVM"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(
            f"could not start Spark (master {master or 'from spark-submit'}): {first} "
            f"(check Java 17+, JAVA_HOME and the --spark-conf settings)"
        ) from None
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
            filtered.mute()  # the output is out; what the JVM says as it exits is not for the user
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
        self.thread = threading.Thread(target=self._copy, args=(read_end,), daemon=True, name="quorumctl-jvm-stderr")
        self.thread.start()
        return self

    def __exit__(self, exc_type, *exc):
        for fd, saved in enumerate(self.saved, 1):
            os.dup2(saved, fd)
            os.close(saved)
        if exc_type is not None and self.held is not None:
            self.thread.join(5)  # a dead JVM's last words, to drop with the rest
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

    path = os.path.join(
        tempfile.gettempdir(),
        f"quorumctl-log4j2-{hashlib.sha1(_LOG4J.encode()).hexdigest()[:12]}-{os.getuid()}.properties",
    )
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(_LOG4J)
        os.replace(tmp, path)
    return path


def connect_session(remote: str, conf: dict[str, str], progress: bool | None = False):
    """A Spark Connect session on `remote` (sc://host:port): no local JVM; the
    kraft data source is registered with the server, whose Python workers need
    quorumctl installed."""
    require_pyspark()
    try:
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies()
    except Exception as e:  # ImportError, or PySpark's own error naming the missing module
        raise InputError(f"--remote needs the Spark Connect client ({e}): pip install 'pyspark[connect]'") from None
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.remote(remote)
    for k, v in conf.items():
        builder = builder.config(k, v)
    try:
        spark = builder.getOrCreate()
        for k, v in DEFAULT_CONF.items():  # the SQL ones can be set per session
            if k.startswith("spark.sql.") and k not in conf:
                spark.conf.set(k, v)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"could not reach Spark Connect at {remote}: {first}") from None
    return spark
