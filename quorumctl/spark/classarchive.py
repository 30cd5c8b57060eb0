"""A class-data archive of the JVM that runs Spark, so later runs start faster.

Starting Spark's driver JVM loads and verifies some 10,000 classes from
PySpark's jars: 7-10 s of a small export on a 2-core machine. Java's
application class-data sharing (AppCDS, JDK 13+) keeps those classes parsed
in a file that the next JVM maps instead: measured here, the session starts in
about 4 s instead of 8. spark-export therefore

- uses the archive for this Java, PySpark and class path when there is one
  (`-XX:SharedArchiveFile`);
- otherwise has this JVM write one as it exits (`-XX:ArchiveClassesAtExit`)
  to a temporary name; `save()` ends the JVM, waits for it, and renames the
  file into place only when the JVM exited cleanly, then writes beside it the
  size and modification time it has. A JVM that maps a cut-off archive dies
  of SIGBUS, so an archive is used only while it still has that size and
  time; and a start that fails with one removes it and starts again without.

Java cannot archive a class path with a non-empty directory on it (Spark's
launcher puts SPARK_CONF_DIR, HADOOP_CONF_DIR and YARN_CONF_DIR there when
set): then no archive is made.

The archive (about 120 MB) lives in $QUORUMCTL_CACHE_DIR, else
$XDG_CACHE_HOME/quorumctl, else ~/.cache/quorumctl, named by a hash of what
it depends on. QUORUMCTL_SPARK_CLASS_ARCHIVE=off neither uses nor makes one;
so does giving spark.driver.extraJavaOptions yourself. The JVM's own CDS
messages are switched off (`-Xlog:cds*=off`): by default they go to stdout.
"""

from __future__ import annotations

import glob
import hashlib
import os
import time

ENV = "QUORUMCTL_SPARK_CLASS_ARCHIVE"
STALE_SECONDS = 3600  # a temporary archive older than this was left by a killed run
QUIET = "-Xlog:cds*=off"
# should the JVM still die, its report goes to stderr (not into stdout's JSON) and
# its hs_err file to the cache, not the working directory
CRASH = "-XX:+DisplayVMOutputToStderr -XX:ErrorFile={dir}/hs_err_pid%p.log"
# settings that change the driver's class path, which the archive must match
CLASS_PATH_CONF = ("spark.driver.extraClassPath", "spark.jars", "spark.jars.packages")
# ... and environment variables Spark's launcher builds the class path from
CLASS_PATH_ENV = ("SPARK_HOME", "SPARK_CONF_DIR", "HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_DIST_CLASSPATH")


def cache_dir() -> str:
    return os.environ.get("QUORUMCTL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "quorumctl"
    )


def _fingerprint(java: str, conf: dict[str, str]) -> str:
    import pyspark

    h = hashlib.sha256()
    real = os.path.realpath(java)
    h.update(real.encode())
    release = os.path.join(os.path.dirname(os.path.dirname(real)), "release")
    for path in (real, release):
        try:
            st = os.stat(path)
            h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}".encode())
        except OSError:
            pass
    h.update(pyspark.__version__.encode())
    for jar in sorted(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "*.jar"))):
        h.update(f"{os.path.basename(jar)}:{os.path.getsize(jar)}".encode())
    for k in CLASS_PATH_CONF:
        h.update(f"{k}={conf.get(k, '')}".encode())
    for k in CLASS_PATH_ENV:
        h.update(f"{k}={os.environ.get(k, '')}".encode())
    return h.hexdigest()[:16]


def _dumpable_class_path() -> bool:
    """Java refuses to archive classes when a directory on the class path has
    files ("Cannot have non-empty directory in paths"): Spark's launcher puts
    the configuration directories there (SPARK_CONF_DIR, else SPARK_HOME/conf,
    which a pip-installed PySpark lacks; HADOOP_CONF_DIR, YARN_CONF_DIR) and
    SPARK_DIST_CLASSPATH's entries."""
    import pyspark

    home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    dirs = [
        os.environ.get("SPARK_CONF_DIR") or os.path.join(home, "conf"),
        os.environ.get("HADOOP_CONF_DIR"),
        os.environ.get("YARN_CONF_DIR"),
    ]
    dirs += os.environ.get("SPARK_DIST_CLASSPATH", "").split(os.pathsep)
    for d in dirs:
        try:
            if d and os.path.isdir(d) and os.listdir(d):
                return False
        except OSError:
            return False
    return True


class ClassArchive:
    """The archive for one Java, PySpark and class path (see the module doc)."""

    def __init__(self, path: str):
        self.path = path
        self.tmp: str | None = None  # being written by this run's JVM
        self.used = False  # this run's JVM maps it

    @classmethod
    def for_java(cls, java: str | None, conf: dict[str, str]) -> "ClassArchive | None":
        if java is None or os.environ.get(ENV, "").strip().lower() in ("off", "0", "no", "false"):
            return None
        try:
            name = f"spark-classes-{_fingerprint(java, conf)}.jsa"
        except Exception:  # PySpark's files unreadable: start as without an archive
            return None
        return cls(os.path.join(cache_dir(), name))

    @property
    def seal(self) -> str:
        return self.path + ".ok"

    def _stamp(self) -> str | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return f"{st.st_size} {st.st_mtime_ns}\n"

    def valid(self) -> bool:
        """The archive is as save() left it (same size and time)."""
        stamp = self._stamp()
        try:
            with open(self.seal, encoding="ascii") as f:
                return stamp is not None and f.read(100) == stamp
        except (OSError, UnicodeDecodeError):
            return False

    def keep(self, tmp: str):
        """Put a complete archive in place, and beside it its size and time."""
        os.replace(tmp, self.path)
        with open(self.seal + ".tmp", "w", encoding="ascii") as f:
            f.write(self._stamp() or "")
        os.replace(self.seal + ".tmp", self.seal)

    def java_options(self) -> str | None:
        """The JVM options that use the archive, or make one; None when neither
        can be done (no archive and an unwritable cache directory)."""
        directory = os.path.dirname(self.path)
        if any(c.isspace() for c in self.path):
            return None  # Spark splits extraJavaOptions at spaces
        if self.valid():
            self.used = True
            return f"-XX:SharedArchiveFile={self.path} {QUIET} {CRASH.format(dir=directory)}"
        if not _dumpable_class_path():
            return None
        try:
            os.makedirs(directory, exist_ok=True)
            self._remove_stale(directory)
            self.tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(self.tmp, "wb"):  # writable? (the JVM would fail silently at exit)
                pass
            os.unlink(self.tmp)
        except OSError:
            self.tmp = None
            return None
        return f"-XX:ArchiveClassesAtExit={self.tmp} {QUIET}"

    def _remove_stale(self, directory: str):
        now = time.time()
        for tmp in glob.glob(os.path.join(directory, "spark-classes-*.jsa*.tmp")):
            try:
                if now - os.path.getmtime(tmp) > STALE_SECONDS:
                    os.unlink(tmp)
            except OSError:
                pass

    def discard(self):
        """The JVM did not start with the archive: remove it (the next run makes
        a new one)."""
        self.used = False
        for path in (self.seal, self.path):
            try:
                os.unlink(path)
            except OSError:
                pass

    def save(self, spark, timeout: float = 120.0) -> bool:
        """When this run's JVM is writing a new archive: stop Spark, let the JVM
        exit (it writes the archive as it does) and put the archive in place if
        it exited cleanly. True when an archive was saved."""
        if self.tmp is None:
            return False
        tmp, self.tmp = self.tmp, None
        try:
            from pyspark import SparkContext

            gateway = SparkContext._gateway
            spark.stop()
            proc = getattr(gateway, "proc", None)
            if proc is None:
                return False
            proc.stdin.close()  # the JVM's signal that its Python driver is gone
            if proc.wait(timeout) != 0 or not os.path.isfile(tmp) or os.path.getsize(tmp) == 0:
                return False
            self.keep(tmp)
            return True
        except Exception:
            return False
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass
