"""The CI guard (tests/conftest.py): with CI=true a skipped test fails, naming what
was missing, so a clone without ../shared, Java or a test dependency cannot pass
CI; without CI the same skips stay skips. Shown on a copy of the real test tree
beside no ../shared, running a real module that needs it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _clone_without_shared(tmp_path: Path) -> Path:
    """The repository's tests in a checkout with no ../shared beside it."""
    clone = tmp_path / "clone" / "repo"
    shutil.copytree(TESTS, clone / "tests", ignore=shutil.ignore_patterns("__pycache__", "kafka_schemas.json"))
    shutil.copy(TESTS.parent / "pyproject.toml", clone / "pyproject.toml")
    assert not (clone.parent / "shared").exists()
    return clone


def _pytest(clone: Path, ci: bool, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *args],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_clone_without_shared_fails_ci_and_only_skips_outside_it(tmp_path):
    clone = _clone_without_shared(tmp_path)
    module = "tests/corpus/test_recover.py"  # every test needs ../shared's real fixtures
    p = _pytest(clone, False, module)
    assert p.returncode == 0 and " failed" not in p.stdout, p.stdout + p.stderr
    skipped = int(re.search(r"(\d+) skipped", p.stdout).group(1))
    p = _pytest(clone, True, module)
    summary = p.stdout.strip().splitlines()[-1]
    assert p.returncode == 1 and " skipped" not in summary, p.stdout + p.stderr
    # every test that skipped outside CI is an error (a skip at setup) under CI
    assert re.match(rf"{skipped} (errors|failed)\b", summary), summary
    assert (
        "CI=true: tests/corpus/test_recover.py::" in p.stdout
        and "was skipped, which CI counts as a failure" in p.stdout
    )
    assert "../shared/reference/fixtures is absent" in p.stdout


def test_a_module_level_skip_fails_ci(tmp_path):
    """importorskip of a missing test dependency skips the whole module at collection."""
    clone = _clone_without_shared(tmp_path)
    (clone / "tests" / "unit" / "test_needs_dep.py").write_text(
        "import pytest\npytest.importorskip('quorumctl_no_such_module', reason='a declared test dependency')\n\n"
        "def test_x():\n    pass\n"
    )
    p = _pytest(clone, False, "tests/unit/test_needs_dep.py")
    # a lone skipped module: pytest says "no tests ran" (5), not a failure (1)
    assert p.returncode == 5 and "1 skipped" in p.stdout, p.stdout + p.stderr
    p = _pytest(clone, True, "tests/unit/test_needs_dep.py")
    # a collection error: pytest stops with "interrupted" (2)
    assert p.returncode == 2 and "CI=true: tests/unit/test_needs_dep.py was skipped" in p.stdout, p.stdout + p.stderr
    assert "a declared test dependency" in p.stdout


def test_the_long_modules_are_scheduled_first(pytestconfig):
    """The suite's wall time on 2 workers is set by when its minutes-long modules
    start (tests/conftest.py): every real-Kafka and Spark module has measured seconds
    in tests/durations.json, none names a module that is gone, xdist keeps the
    collection order, and the collection puts the costliest module first."""
    import tomllib

    # tests/conftest.py as pytest loaded it: `import conftest` is whichever conftest this
    # worker imported last (tests/spark/conftest.py once it collected the Spark tests)
    root = str(TESTS / "conftest.py")
    (conftest,) = [m for m in pytestconfig.pluginmanager.get_plugins() if getattr(m, "__file__", None) == root]

    heavy = {
        p.relative_to(TESTS).as_posix() for kind in ("kafka", "spark", "lab") for p in (TESTS / kind).glob("test_*.py")
    }
    assert heavy - set(conftest.MODULE_SECONDS) - {"spark/test_spark_plan.py", "spark/test_spark_writer.py"} == set()
    assert set(conftest.MODULE_SECONDS) - {p.relative_to(TESTS).as_posix() for p in TESTS.glob("*/test_*.py")} == set()
    addopts = tomllib.loads((TESTS.parent / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "--dist loadfile" in addopts and "--no-loadscope-reorder" in addopts
    # the costed modules and two that are not, named in the wrong order: collecting the
    # whole suite (2,500 tests) would cost twice as much and show nothing more
    named = [
        "tests/unit/test_layers.py",
        *(f"tests/{m}" for m in sorted(conftest.MODULE_SECONDS)),
        "tests/unit/test_ids.py",
    ]
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-n", "0", *named],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    modules = list(
        dict.fromkeys(line.split("::")[0].removeprefix("tests/") for line in p.stdout.splitlines() if "::" in line)
    )
    longest = max(conftest.MODULE_SECONDS, key=conftest.MODULE_SECONDS.get)
    assert modules[0] == longest, modules[:5]
    ranked = [m for m in modules if m in conftest.MODULE_SECONDS]
    assert ranked == sorted(ranked, key=lambda m: -conftest.MODULE_SECONDS[m])
    assert modules[: len(ranked)] == ranked  # every costed module before the rest
    assert set(modules) == {n.removeprefix("tests/") for n in named}


def test_a_module_outside_the_kind_folders_is_refused(tmp_path):
    """A module dropped straight into tests/ (as a branch made before the folders would
    bring it) stops the run, naming the folders; a folder's markers come with it."""
    clone = _clone_without_shared(tmp_path)
    (clone / "tests" / "test_flat.py").write_text("def test_x():\n    pass\n")
    p = _pytest(clone, False, "tests/test_flat.py")
    assert p.returncode == 4 and "tests/test_flat.py: a test module belongs in the folder of its kind" in p.stderr, (
        p.stdout + p.stderr
    )
    (clone / "tests" / "test_flat.py").unlink()
    (clone / "tests" / "unit" / "test_slow.py").write_text(
        "import pytest\n\npytestmark = pytest.mark.kafka('4.3')\n\ndef test_x():\n    pass\n"
    )
    p = _pytest(clone, False, "tests/unit/test_slow.py")
    assert p.returncode == 4 and "tests/unit/test_slow.py: every test needs more than the repository" in p.stderr, (
        p.stdout + p.stderr
    )
    (clone / "tests" / "unit" / "test_slow.py").unlink()
    (clone / "tests" / "corpus" / "test_reads.py").write_text("def test_x():\n    pass\n")
    p = _pytest(clone, False, "-m", "shared", "tests/corpus/test_reads.py")
    # corpus/ implies `shared`: selected by it, and skipped here, where no ../shared is beside the clone
    assert p.returncode == 0 and "1 skipped" in p.stdout and "../shared/ is absent" in p.stdout, p.stdout + p.stderr
