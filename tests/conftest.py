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
#   standalone                    runs the standalone executables (QUORUMCTL_STANDALONE_DIR)
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
    for m in item.iter_markers("standalone"):
        if (why := _standalone_reason()) is not None:
            return why
    return None


def _standalone_reason() -> str | None:
    """Why the standalone executables' tests cannot run: they need the two files
    tools/build_standalone.py writes, in QUORUMCTL_STANDALONE_DIR, the root file systems
    they run in, QUORUMCTL_STANDALONE_ROOTFS (Debian, no Python) and QUORUMCTL_MUSL_ROOTFS
    (musl only), and bubblewrap (bwrap) and setpriv to enter them: .ci/stages/standalone
    provides all of it."""
    d = os.environ.get("QUORUMCTL_STANDALONE_DIR")
    if not d:
        return "QUORUMCTL_STANDALONE_DIR is not set: .ci/stages/standalone builds the executables and runs these tests"
    missing = [n for n in ("quorumctl", "quorumctl-static") if not (Path(d) / n).is_file()]
    if missing:
        return f"{' and '.join(missing)} not in QUORUMCTL_STANDALONE_DIR={d} (python tools/build_standalone.py {d})"
    for var in ("QUORUMCTL_STANDALONE_ROOTFS", "QUORUMCTL_MUSL_ROOTFS"):
        if not Path(os.environ.get(var) or "/nonexistent").is_dir():
            return f"{var} is not a directory: .ci/stages/standalone makes the root file systems and runs these tests"
    for tool, package in (("bwrap", "bubblewrap"), ("setpriv", "util-linux")):
        if shutil.which(tool) is None:
            return f"needs {tool}: apt-get install {package}"
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


# -- Tests by kind: a folder each, markers from the path -----------------------------------
# Every test module lives in the folder of its kind (docs/testing.md):
#   unit/    the library, in process            cli/    the commands, through the entry point
#   corpus/  reads ../shared's real log dirs    kafka/  runs real Kafka releases
#   spark/   Spark and its JVMs                 lab/    network namespaces (root) and Kafka
#   standalone/  the standalone executables in root file systems with no Python (.ci/stages/standalone)
# A folder implies the markers of its kind (a test there need not repeat them). Every
# test outside unit/ and cli/, and every one there that needs more than the repository
# (shared, kafka, spark, java, root), is also marked `external`, so the fast loop is
#   pytest tests/unit tests/cli -m "not external"
# with no ../shared, no JVM, no root and no skip, and `pytest tests -m external` is the rest. A module of the fast folders whose
# every test is external belongs in another folder, and a module directly in tests/ is
# refused: both stop the run, naming the folders, so a new module is placed before it runs.
TESTS = Path(__file__).resolve().parent
KINDS: dict[str, tuple[str, ...]] = {
    "unit": (),
    "cli": (),
    "corpus": ("shared",),
    "kafka": ("kafka",),
    "spark": (),
    "lab": ("root",),
    "standalone": ("standalone",),
}
EXTERNAL = ("shared", "kafka", "spark", "java", "root", "standalone")


@functools.cache
def _in_tests(path: Path) -> Path:
    """A test module's path relative to tests/ (resolved once a module: a collection
    asks for each of its 2,500 tests several times)."""
    return Path(path).resolve().relative_to(TESTS)


def kind_of(path: Path) -> str | None:
    """The kind of a test module, from its folder under tests/ (None: not in one)."""
    rel = _in_tests(path).parts
    return rel[0] if len(rel) > 1 and rel[0] in KINDS else None


def _mark_by_path(items) -> None:
    unplaced = sorted({str(item.path.relative_to(TESTS.parent)) for item in items if kind_of(item.path) is None})
    if unplaced:
        raise pytest.UsageError(
            f"{', '.join(unplaced)}: a test module belongs in the folder of its kind, "
            f"tests/{{{','.join(KINDS)}}}/ (docs/testing.md says which)"
        )
    for item in items:
        for name in KINDS[kind_of(item.path) or ""]:
            if item.get_closest_marker(name) is None:
                item.add_marker(getattr(pytest.mark, name))


def _mark_external(items) -> None:
    fast: dict[str, list[bool]] = {}
    for item in items:
        external = kind_of(item.path) not in ("unit", "cli") or any(
            item.get_closest_marker(name) is not None for name in EXTERNAL
        )
        if external:
            item.add_marker(pytest.mark.external)
        if kind_of(item.path) in ("unit", "cli"):
            fast.setdefault(str(item.path.relative_to(TESTS.parent)), []).append(external)
    wrong = [module for module, marks in fast.items() if all(marks)]
    if wrong:
        raise pytest.UsageError(
            f"{', '.join(sorted(wrong))}: every test needs more than the repository, so the module belongs "
            "in tests/corpus, tests/kafka, tests/spark or tests/lab, not in the fast loop's folders"
        )


# Scheduling: the suite runs with --dist loadfile (a module on one worker) and
# --no-loadscope-reorder, so xdist hands out modules in collection order, each to the
# next worker that runs low. The modules are collected longest first, so the
# minutes-long Kafka modules do not start last, and the short ones fill the gaps at the
# end. The seconds are measured, not kept by hand: tests/durations.json is written by
# `python tools/test_durations.py JUNIT.xml` from a run's `--junitxml` (CI writes one:
# .ci/run); a module it does not list counts as 0 (tests/unit/test_ci_guard.py checks
# that every Kafka and Spark module is listed).
MODULE_SECONDS: dict[str, float] = json.loads((TESTS / "durations.json").read_text())


def _module_key(item) -> str:
    return _in_tests(item.path).as_posix()


def pytest_collection_modifyitems(config, items):
    _mark_by_path(items)
    _mark_needs(items)
    _mark_external(items)
    counts: dict[str, int] = {}
    for item in items:
        counts[_module_key(item)] = counts.get(_module_key(item), 0) + 1
    order = {name: i for i, name in enumerate(dict.fromkeys(_module_key(item) for item in items))}
    # stable: a module's own tests keep their order
    items.sort(
        key=lambda item: (
            -MODULE_SECONDS.get(_module_key(item), 0),
            -counts[_module_key(item)],
            order[_module_key(item)],
        )
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
    """`verify_clean(path)`: `quorumctl verify PATH` exits 0. A dir holding nothing verify
    reads (only temporary files, or nothing at all) fails the test, unless the caller says
    that state is expected (`temporaries_ok=True`: a write interrupted before its first file
    was complete), and then only when an interrupted write's .tmp/.part is there."""

    def check(path, temporaries_ok: bool = False) -> None:
        from quorumctl.errors import InputError
        from quorumctl.logdir import filekinds

        try:
            filekinds.log_dir_files([str(path)])
        except InputError as e:
            left = sorted(
                os.path.relpath(os.path.join(r, f), path) for r, _, fs in os.walk(path) for f in fs if f != ".lock"
            )
            if temporaries_ok and any(f.endswith((".tmp", ".part")) for f in left):
                return  # an interrupted write's leftovers only: verify refuses such a dir, as expected
            pytest.fail(f"verify_clean({path}): nothing to verify ({e}); files: {left}", pytrace=False)
        cli("verify", "-o", "text", str(path), code=0)

    return check
