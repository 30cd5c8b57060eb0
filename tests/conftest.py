"""Fixtures shared by every test module (test modules never import each other:
what two of them need lives here or in a helper module in tests/support/).

`cli` runs the `quorumctl` entry point in process, with the exit-code
handling of the installed script and without a subprocess per call. It is
session-scoped (a plain function, no per-test state) so module-scoped
fixtures and hypothesis tests can use it too."""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

# The suite's Spark JVMs (in-process sessions, spark-export and spark-submit
# children, a standalone cluster's daemons, the Connect server) start with the
# client compiler and the serial GC: CPU-cheaper for short test JVMs on a
# 2-core CI machine (tests/support/spark-conf/spark-defaults.conf says why and how much).
# An explicit setting in the environment wins.
SPARK_TEST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("SPARK_CONF_DIR", str(Path(__file__).parent / "support" / "spark-conf"))
os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", SPARK_TEST_JVM)


# CI honesty: on CI (CI=true) every test must run. A skip there means something
# the suite needs is missing (../shared, Java, zsh/fish, a declared test
# dependency), and a green run without it would prove nothing: it fails instead,
# saying what was missing. Outside CI the skips stay, with their reasons.
IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _skip_reason(longrepr) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _fail_skip(rep, where: str) -> None:
    rep.outcome = "failed"
    rep.longrepr = f"CI=true: {where} was skipped, which CI counts as a failure: {_skip_reason(rep.longrepr)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    _check_needs(item, rep)
    if IN_CI and rep.skipped and not hasattr(rep, "wasxfail"):
        _fail_skip(rep, item.nodeid)
    if rep.failed and call.when == "call":
        _add_cluster_state(item, rep)


# -- What a test needs: markers -------------------------------------------------------------
# Each test that needs more than the repository and the test extra says so with a
# marker (registered in pyproject.toml, described in docs/testing.md), on its module
# (`pytestmark`), on itself, or on one parameter:
#   shared("reference/fixtures")  reads ../shared (the argument: the part it reads)
#   kafka("4.3")                  runs a real Kafka release from ../shared/kafka (4.1 unless
#                                 named); implies shared
#   spark                         starts a Spark JVM; a test using the
#                                 `spark` fixture gets it here
#   java                          starts a JVM of its own (not Spark's, not Kafka's)
#   root                          needs root
# A marked test skips, saying why, where what it needs is absent. So the fast loop,
#   pytest -m "not kafka and not spark and not shared"
# runs everything else, with no skip, in a clone with no ../shared beside it. That a test
# using one of these is marked is checked while it runs: an audit hook sees every file it
# opens or lists, every link and every process it starts, and a test that touches
# ../shared without `shared`, runs Kafka's scripts without `kafka`, or starts a JVM
# (java, spark-submit, ...) with none of kafka, spark, java fails, naming the marker.
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
_SHARED_PREFIXES = tuple(dict.fromkeys(str(p) + os.sep for p in (SHARED, SHARED.resolve())))
_KAFKA_PREFIXES = tuple(p + "kafka" + os.sep for p in _SHARED_PREFIXES)
_JVM_PROGRAMS = {"java", "spark-submit", "spark-class", "spark-shell", "pyspark", "start-connect-server.sh"}
_watch: dict = {"on": False, "needs": {}}  # needs: marker -> the first thing seen that needs it


def _as_path(x) -> str | None:
    if isinstance(x, (str, bytes, os.PathLike)):
        try:
            p = os.fsdecode(os.fspath(x))
        except TypeError:
            return None
        return os.path.abspath(p) + (os.sep if os.path.isabs(p) or p else "")
    return None


def _touches(paths, what: str) -> None:
    for x in paths:
        p = _as_path(x)
        if p is None:
            continue
        if p.startswith(_KAFKA_PREFIXES) and what == "runs":
            _watch["needs"].setdefault("kafka", f"runs {p.rstrip(os.sep)}")
        elif p.startswith(_SHARED_PREFIXES):
            _watch["needs"].setdefault("shared", f"{what} {p.rstrip(os.sep)}")


def _audit(event: str, args) -> None:
    if not _watch["on"]:
        return
    if event == "open" or event in ("os.listdir", "os.scandir", "glob.glob"):
        _touches(args[:1], "reads")
    elif event in ("os.symlink", "os.link", "shutil.copytree", "shutil.copyfile"):
        _touches(args[:1], "links or copies")
    elif event in ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn"):
        exe, argv = args[0], args[1]
        argv = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv or ())
        cwd = args[2] if event == "subprocess.Popen" and len(args) > 2 else None
        _touches([exe, *argv, cwd], "runs")
        program = exe if exe is not None else (argv[0] if argv else None)
        if isinstance(program, (str, bytes, os.PathLike)) and _is_jvm(os.fsdecode(program)):
            _watch["needs"].setdefault("jvm", f"starts {os.fsdecode(program)}")


def _is_jvm(program: str) -> bool:
    """Spark's launch scripts, or a real `java` (a binary: a test's stand-in is a script)."""
    name = os.path.basename(program)
    if name != "java":
        return name in _JVM_PROGRAMS
    _watch["on"] = False  # reading it is not the test's doing
    try:
        path = program if os.sep in program else shutil.which(program)
        with open(path or program, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False
    finally:
        _watch["on"] = True


sys.addaudithook(_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _watch["on"], _watch["needs"] = True, {}
    try:
        yield
    finally:
        _watch["on"] = False


def _check_needs(item, rep) -> None:
    """Fail a test phase that used what its markers do not declare."""
    needs, _watch["needs"] = _watch["needs"], {}
    marks = {m.name for m in item.iter_markers()}
    if "jvm" in needs and marks & {"spark", "kafka", "java"}:
        needs.pop("jvm")
    missing = {
        ("java" if k == "jvm" else k): why for k, why in needs.items() if ("java" if k == "jvm" else k) not in marks
    }
    if missing and not rep.failed:
        rep.outcome = "failed"
        rep.longrepr = "; ".join(
            f"{item.nodeid} {why} but is not marked `{m}`: add @pytest.mark.{m} "
            f"(or pytestmark = pytest.mark.{m}; docs/testing.md)"
            for m, why in missing.items()
        )


def _cannot_run(item) -> str | None:
    """Why a marked test cannot run here, or None."""
    for m in item.iter_markers("root"):
        if os.geteuid() != 0:
            return "needs root"
    for m in item.iter_markers("shared"):
        part = SHARED / m.args[0] if m.args else SHARED
        if not part.exists():
            return f"../shared/{m.args[0] if m.args else ''} is absent (docs/testing.md says how to provide it)"
    for m in item.iter_markers("kafka"):
        if (why := _kafka_reason(m.args[0] if m.args else "4.1")) is not None:
            return why
    for m in item.iter_markers("spark"):
        if (why := _spark_reason()) is not None:
            return why
    for m in item.iter_markers("java"):
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            return "needs Java (none on PATH or in JAVA_HOME)"
    return None


@functools.cache
def _kafka_reason(release: str) -> str | None:
    import recover_chaos

    return recover_chaos.skip_reason(release)


@functools.cache
def _spark_reason() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "PySpark is not installed (pip install -e '.[test,spark]')"
    from quorumctl.spark.session import find_java

    return None if find_java() is not None else "Spark needs Java 17+ (none found on PATH or JAVA_HOME)"


def _mark_needs(items) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) and item.get_closest_marker("spark") is None:
            item.add_marker(pytest.mark.spark)
        if item.get_closest_marker("kafka") is not None and item.get_closest_marker("shared") is None:
            item.add_marker(pytest.mark.shared("kafka"))


def pytest_runtest_setup(item):
    if (why := _cannot_run(item)) is not None:
        pytest.skip(why)


def _add_cluster_state(item, rep) -> None:
    """A test against a real Kafka cluster failed: say which nodes still run
    and how each dead one ended, so a CI failure can be told from a crash."""
    c = getattr(item, "funcargs", {}).get("cluster")
    if c is None or not hasattr(c, "run") or not hasattr(c, "d"):
        return
    try:
        status = c.run("status", check=False, timeout=30).stdout
        lines = [status]
        for node in (line.split()[0] for line in status.splitlines() if " down " in line):
            for log in (c.d / "logs" / f"{node}.out", c.d / "logs" / f"{node}.log"):
                if log.exists():
                    tail = log.read_text(errors="replace").splitlines()[-20:]
                    lines.append(f"--- tail of {log.name}\n" + "\n".join(tail))
        rep.sections.append(("kafka cluster state", "\n".join(lines)))
    except Exception as e:  # diagnostics must never hide the failure itself
        rep.sections.append(("kafka cluster state", f"could not read it: {e}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    rep = outcome.get_result()
    if IN_CI and rep.skipped:
        _fail_skip(rep, collector.nodeid or "collection")


# Scheduling: the suite runs with --dist loadfile (a module on one worker) and
# --no-loadscope-reorder, so xdist hands out modules in collection order, each to
# the next worker that runs low. Its default (most tests first) started the
# real-Kafka modules, with one to four tests and minutes each, last: the run's
# end waited for a 4-minute module begun late. So the modules are collected
# longest first (the costliest first, then by number of tests as xdist would),
# and the short ones fill the gaps at the end. Seconds of one worker on the
# 2-core CI machine, rounded, from the last CI run's durations and single-module
# runs; only the order matters (refresh them from a full run's --durations=0).
# A module missing here that takes minutes belongs here (tests/test_ci_guard.py
# checks the Kafka and Spark modules are listed).
MODULE_SECONDS = {
    # one cluster per release (4.1, 4.3, 4.4), one chained scenario: 153 + 182 + 152 s at load 8-13
    # (before: two tests per release, 4 clusters for 4.1 and 4.3 only: 698 s at load 8-12);
    # 4.4 then restarted twice and a controller added: 633 s for 4.4 alone at load 16-17
    "test_kafka_recover_safety.py": 590,
    "test_kafka_recover_vantage.py": 480,
    # dynamic + static on 4.1 (245 s at load 8-15) and on 4.4 (166 + 134 s at load 11-13); 4.1 alone was 228 s
    "test_kafka41_recover.py": 410,
    # 1 controller + 3 brokers of 4.3, then of 4.1, a broker killed then one frozen: 4.3 alone was
    # 105 s at load 5-14, 4.1's half 138 s at load 7; both 1214 s at load 24-42. With
    # __consumer_offsets, paging, a second broker killed and unregistered, applied downgrades:
    # 247 s both (4.3 119 s, 4.1 128 s) at load 1-3, 374 s at load 4 (one frozen-broker retry, 66 s);
    # the module before was 294 s at load 3-10 (one retry, 72 s)
    "test_kafka_live.py": 300,
    "test_kafka_rolling_upgrade.py": 260,
    # 4.1 rolled to 4.3, migrated, controller 5 added/removed ~210 s + 4.3 the same 116 s at load 20-50
    # (461 + 175 s at 55); add/remove on 4.3 added: before 134 + 65 s, after 139 + 47 s and 146 + 116 s at 5-12
    "test_kafka_migrate.py": 370,
    "test_kafka_automation.py": 240,
    "test_kafka_membership.py": 205,  # 4.1 -> 4.3 roll of 5 nodes + 1 re-registering controller: 202 s (548 s at load 30)
    "test_kafka_security.py": 220,
    "test_kafka_security_quorum.py": 175,  # 3 controllers + 2 brokers, SASL_SSL + TLS: 66 s at load 7, 170 s at 15-25
    "test_kafka44_rolling.py": 175,  # 1+1 and 3+1 rolled 4.3 -> 4.4: 52 + 120 s at load 1-5 (315 s at 30-50)
    "test_kafka_lab_recover.py": 150,
    "test_spark_standalone.py": 160,
    "test_kafka41_committed.py": 145,  # 4.1 + 4.4, no broker: 74 + 70 s at load 13 (4.1 with a broker: 108 s at 5-8)
    "test_kafka_health.py": 150,
    "test_kafka_recover_chaos.py": 140,
    "test_kafka41_topics.py": 130,
    "test_kafka_dynamic.py": 130,
    # a cold restart after replace-controller, the old leader reconfigured and elected for the
    # two-leaders case, a broker fenced and behind: 429 s at load 23-27 (before the last: 291 s at 8-14)
    "test_kafka_lab.py": 260,
    "test_kafka43_files.py": 110,
    "test_kafka_static.py": 95,
    "test_spark_classarchive.py": 90,
    "test_spark_export.py": 100,  # + the 4.4 layout's export: 25 s alone at load 10, its session included
    "test_lab_probe.py": 90,
    "test_kafka44.py": 200,  # fresh dirs 20 s, 1-controller static + standalone 25 s, 3+1 c44 145 s: 196 s at load 8-12
    "test_kafka_lab_voters.py": 90,  # one lab: 63 s idle, 116 s at load 45
    "test_voters.py": 90,  # 330 s at load 40-57; the crash-at-every-step test most of it
    "test_kafka_features.py": 70,
    "test_kafka_help_parity.py": 80,  # 23 --help JVMs of Kafka 4.3, 4 at a time; measured 67-88 s at load 55; 4.4's 2: 12 s
    "test_spark_connect.py": 60,
    "test_spark_follow.py": 50,
    "test_spark_s3.py": 50,
    "test_spark_cli.py": 50,
    "test_kafka_doctor.py": 45,
    "test_kafka_dumplog.py": 30,
    "test_spark_analysis.py": 30,
    "test_lab_net.py": 30,
    "test_kafka_storage.py": 30,
    "test_spark_writer.py": 20,
    "test_spark_rows_fastpath.py": 20,
    "test_kafka_options.py": 15,
    "test_kafka_order.py": 6,  # no Kafka: Kafka's option order, on the simulated quorum
    "test_kafka_dumplog_utf8.py": 10,
    "test_spark_plan.py": 10,
}


def pytest_collection_modifyitems(config, items):
    _mark_needs(items)
    counts: dict[str, int] = {}
    for item in items:
        counts[item.path.name] = counts.get(item.path.name, 0) + 1
    order = {name: i for i, name in enumerate(dict.fromkeys(item.path.name for item in items))}
    # stable: a module's own tests keep their order
    items.sort(
        key=lambda item: (-MODULE_SECONDS.get(item.path.name, 0), -counts[item.path.name], order[item.path.name])
    )


class Result(NamedTuple):
    """What `quorumctl ARGS` did: unpacks as (code, out, err)."""

    code: int
    out: str
    err: str

    def json(self):
        """stdout read as one JSON document."""
        return json.loads(self.out)


def _run(*args, code: int | None = None) -> Result:
    """`quorumctl ARGS...`; with `code`, the test fails unless it exits with it."""
    from quorumctl.cli.main import run_captured

    r = Result(*run_captured(args))
    if code is not None and r.code != code:
        pytest.fail(
            f"quorumctl {' '.join(map(str, args))}: exit {r.code}, expected {code}\n"
            f"--- stdout\n{r.out[-3000:]}--- stderr\n{r.err[-3000:]}",
            pytrace=False,
        )
    return r


@pytest.fixture(scope="session")
def cli():
    """`cli(*args, code=None) -> Result(code, out, err)`: the real entry point, in
    process. `code=N` fails the test unless quorumctl exits N; `.json()` parses stdout."""
    return _run


@pytest.fixture(scope="session")
def verify_clean(cli):
    """`verify_clean(path)`: `quorumctl verify PATH` exits 0."""

    def check(path) -> None:
        from quorumctl.errors import InputError
        from quorumctl.logdir import filekinds

        try:
            filekinds.log_dir_files([str(path)])
        except InputError:
            return  # only temporary files (an interrupted write): verify refuses such a dir, nothing to check
        cli("verify", "-o", "text", str(path), code=0)

    return check


@pytest.fixture(scope="module")
def spark():
    """A local[2] Spark session for one module (skips without Java)."""
    from quorumctl.spark.session import find_java, start_session

    if find_java() is None:
        pytest.skip("Spark needs Java 17+ (none found on PATH or JAVA_HOME)")
    session = start_session("local[2]", {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()
