"""Fixtures shared by every test module (test modules never import each other:
what two of them need lives here or in a helper module such as samples.py).

`cli` runs the `quorumctl` entry point in process, with the exit-code
handling of the installed script and without a subprocess per call. It is
session-scoped (a plain function, no per-test state) so module-scoped
fixtures and hypothesis tests can use it too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The suite's Spark JVMs (in-process sessions, spark-export and spark-submit
# children, a standalone cluster's daemons, the Connect server) start with the
# client compiler and the serial GC: CPU-cheaper for short test JVMs on a
# 2-core CI machine (tests/spark-conf/spark-defaults.conf says why and how much).
# An explicit setting in the environment wins.
SPARK_TEST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("SPARK_CONF_DIR", str(Path(__file__).parent / "spark-conf"))
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
    if IN_CI and rep.skipped and not hasattr(rep, "wasxfail"):
        _fail_skip(rep, item.nodeid)
    if rep.failed and call.when == "call":
        _add_cluster_state(item, rep)


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
    except Exception as e:   # diagnostics must never hide the failure itself
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
    "test_kafka_recover_safety.py": 500,
    "test_kafka_rolling_upgrade.py": 260,
    "test_kafka41_recover.py": 170,
    "test_spark_standalone.py": 160,
    "test_kafka41_committed.py": 150,
    "test_kafka_health.py": 150,
    "test_kafka_recover_chaos.py": 140,
    "test_kafka41_topics.py": 130,
    "test_kafka_dynamic.py": 130,
    "test_kafka43_files.py": 110,
    "test_kafka_static.py": 95,
    "test_spark_classarchive.py": 90,
    "test_spark_export.py": 90,
    "test_kafka44.py": 90,
    "test_kafka_features.py": 70,
    "test_spark_connect.py": 60,
    "test_spark_follow.py": 50,
    "test_spark_s3.py": 50,
    "test_spark_cli.py": 50,
    "test_kafka_doctor.py": 45,
    "test_kafka_dumplog.py": 30,
    "test_spark_analysis.py": 30,
    "test_kafka_storage.py": 30,
    "test_spark_writer.py": 20,
    "test_spark_rows_fastpath.py": 20,
    "test_kafka_options.py": 15,
    "test_kafka_dumplog_utf8.py": 10,
    "test_spark_plan.py": 10,
}


def pytest_collection_modifyitems(config, items):
    counts: dict[str, int] = {}
    for item in items:
        counts[item.path.name] = counts.get(item.path.name, 0) + 1
    order = {name: i for i, name in enumerate(dict.fromkeys(item.path.name for item in items))}
    # stable: a module's own tests keep their order
    items.sort(key=lambda item: (-MODULE_SECONDS.get(item.path.name, 0), -counts[item.path.name],
                                 order[item.path.name]))


def _run(*args) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `quorumctl ARGS...`."""
    from quorumctl.cli.main import run_captured
    return run_captured(args)


@pytest.fixture(scope="session")
def cli():
    """`cli(*args) -> (exit code, stdout, stderr)`: the real entry point, in process."""
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
            return   # only temporary files (an interrupted write): verify refuses such a dir, nothing to check
        code, out, err = cli("verify", "-o", "text", str(path))
        assert code == 0, out + err
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
