"""`quorumctl spark-export` as users run it: the installed entry point, spark-submit,
the import-time promise, and clear errors when PySpark or Java is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from quorumctl.records import metadata as md
from quorumctl.records.batch import encode_batch

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
QUORUMCTL = str(BIN / "quorumctl")


def run(args, env=None, timeout=600):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    """A small log dir: one clean segment, one with a CRC-failing batch and a torn tail."""
    from quorumctl.spark import synthetic

    root = tmp_path_factory.mktemp("cli") / "node2"
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    (root / "meta.properties").write_text("node.id=2\nversion=1\ncluster.id=c5M0_9gDSzSKNXLYtZaAnw\n")
    good = synthetic.write_segment(str(part / f"{0:020d}.log"), 1 << 20, seed=5)
    base = good.last_offset + 1
    bad = bytearray(encode_batch([(None, md.encode_metadata("NoOpRecord", 0, {}))], base_offset=base))
    bad[40] ^= 0x10
    torn = encode_batch([(None, md.encode_metadata("NoOpRecord", 0, {}))], base_offset=base + 1)[:20]
    (part / f"{base:020d}.log").write_bytes(bytes(bad) + torn)
    return root, good


def test_importing_the_cli_does_not_import_pyspark():
    code = (
        "import sys, quorumctl.cli.main, quorumctl.cli.spark_export, quorumctl.spark, "
        "quorumctl.spark.plan, quorumctl.spark.schema, quorumctl.spark.job, quorumctl.spark.session, "
        "quorumctl.spark.progress, quorumctl.spark.follow; "
        "heavy = [m for m in ('pyspark', 'pyarrow', 'numpy', 'py4j') if m in sys.modules]; "
        "print(heavy)"
    )
    r = run([sys.executable, "-c", code])
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr
    r = run([QUORUMCTL, "--help"])
    assert r.returncode == 0 and "spark-export" in r.stdout


def test_missing_pyspark_is_one_clear_line(tmp_path, log_dir):
    root, _ = log_dir
    code = (
        "import sys; sys.modules['pyspark'] = None; from quorumctl.cli.main import main; "
        f"sys.argv = ['quorumctl', 'spark-export', {str(root)!r}, '--out', {str(tmp_path / 'o')!r}]; main()"
    )
    r = run([sys.executable, "-c", code])
    assert r.returncode == 2
    assert r.stderr == (
        f"quorumctl: error: spark-export needs PySpark, which is not installed in "
        f"{sys.executable}: pip install 'quorumctl[spark]'\n"
    )
    assert not (tmp_path / "o").exists()


def test_missing_java_is_one_clear_line(tmp_path, log_dir):
    root, _ = log_dir
    r = run(
        [QUORUMCTL, "spark-export", str(root), "--out", str(tmp_path / "o")],
        env={"JAVA_HOME": str(tmp_path / "no-jdk")},
    )
    assert r.returncode == 2
    assert r.stderr == (
        f"quorumctl: error: spark-export needs Java 17 or later to run Spark "
        f"(JAVA_HOME={tmp_path / 'no-jdk'} has no bin/java); install a JDK "
        f"(e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME\n"
    )


def _fake_jdk(root, release: str | None, version_output: str):
    """A JDK directory whose bin/java prints `version_output` for -version."""
    (root / "bin").mkdir(parents=True)
    java = root / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_output}' >&2\n")
    java.chmod(0o755)
    if release is not None:
        (root / "release").write_text(release)
    return java


def test_java_version_from_release_file_or_java_version(tmp_path):
    from quorumctl.spark.session import java_major

    # the release file wins: no JVM is started to ask (bin/java here would say 8)
    java = _fake_jdk(
        tmp_path / "jdk21",
        'IMPLEMENTOR="X"\nJAVA_RUNTIME_VERSION="21.0.1+12"\nJAVA_VERSION="21.0.1"\n',
        'openjdk version "1.8.0_392"',
    )
    assert java_major(str(java)) == 21
    # no release file (or none that parses): `java -version`, "1.8.0" being Java 8
    java = _fake_jdk(tmp_path / "jdk8", None, 'openjdk version "1.8.0_392"')
    assert java_major(str(java)) == 8
    java = _fake_jdk(tmp_path / "jdk11", "garbage", 'openjdk version "11.0.2" 2019-01-15')
    assert java_major(str(java)) == 11


def test_old_java_is_one_clear_line(tmp_path, log_dir):
    root, _ = log_dir
    _fake_jdk(tmp_path / "jdk11", 'JAVA_VERSION="11.0.22"\n', 'openjdk version "11.0.22"')
    r = run(
        [QUORUMCTL, "spark-export", str(root), "--out", str(tmp_path / "o")], env={"JAVA_HOME": str(tmp_path / "jdk11")}
    )
    assert r.returncode == 2
    assert r.stderr == (
        f"quorumctl: error: spark-export needs Java 17 or later to run Spark 4; "
        f"{tmp_path / 'jdk11' / 'bin' / 'java'} is Java 11 (set JAVA_HOME to a newer JDK)\n"
    )
    assert not (tmp_path / "o").exists()


def test_input_errors_before_spark_starts(tmp_path, log_dir):
    root, _ = log_dir
    r = run([QUORUMCTL, "spark-export", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert (r.returncode, r.stderr) == (2, f"quorumctl: error: {tmp_path / 'nope'}: no such file or directory\n")
    (tmp_path / "exists").mkdir()
    r = run([QUORUMCTL, "spark-export", str(root), "--out", str(tmp_path / "exists")])
    assert (r.returncode, r.stderr) == (
        2,
        f"quorumctl: error: {tmp_path / 'exists'} already exists (use --mode overwrite or --mode append)\n",
    )
    r = run([QUORUMCTL, "spark-export", str(root), "--out", str(tmp_path / "o"), "--partition-by", "colour"])
    assert r.returncode == 2 and "--partition-by: no column colour" in r.stderr
    r = run([QUORUMCTL, "spark-export", str(root), "--out", str(tmp_path / "o"), "--spark-conf", "novalue"])
    assert (r.returncode, r.stderr) == (2, "quorumctl: error: --spark-conf expects KEY=VALUE, not 'novalue'\n")


@pytest.mark.spark
def test_cli_export_end_to_end(tmp_path, log_dir):
    pq = pytest.importorskip("pyarrow.parquet")
    root, good = log_dir
    out = tmp_path / "out"
    r = run(
        [
            QUORUMCTL,
            "spark-export",
            str(root),
            "--out",
            str(out),
            "--master",
            "local[2]",
            "--partition-by",
            "record_type,date",
            "--spark-conf",
            "spark.ui.enabled=false",
            "--output",
            "json",
        ]
    )
    assert r.returncode == 1, r.stderr  # corrupt data found: exit 1, output still written
    doc = json.loads(r.stdout)
    s = doc["summary"]
    assert doc["ok"] is False
    assert (s["files"], s["records"], s["errors"], s["corrupt_records"], s["batches"]) == (
        2,
        good.records + 1,
        2,
        1,
        good.batches + 1,
    )
    assert s["rows"] == good.records + 2 and s["out"] == str(out)
    # quiet: one line while the JVM starts, not even the JVM's start-up note about Spark's vector module
    assert r.stderr == "quorumctl: starting Spark (master local[2]); the JVM takes a few seconds\n"
    t = pq.read_table(str(out), partitioning="hive")
    assert t.num_rows == good.records + 2
    flagged = [x for x in t.to_pylist() if x["corrupt"]]
    assert sorted(x["row_kind"] for x in flagged) == ["record", "tail_error"]
    assert {x["node_id"] for x in t.to_pylist()} == {2}


@pytest.mark.spark
def test_runs_unchanged_under_spark_submit(tmp_path, log_dir):
    submit = shutil.which("spark-submit", path=str(BIN))
    if submit is None:
        pytest.skip("spark-submit not installed next to this Python")
    root, good = log_dir
    r = run([sys.executable, "-m", "quorumctl.spark.submit", "--path"])
    app = r.stdout.strip()
    assert app.endswith(os.path.join("quorumctl", "spark", "submit.py")) and os.path.isfile(app)
    out = tmp_path / "submitted"
    env = {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    r = run(
        [
            submit,
            "--master",
            "local[2]",
            "--conf",
            "spark.ui.enabled=false",
            app,
            str(root),
            "--out",
            str(out),
            "--master",
            "ignored-under-spark-submit",
            "--output",
            "json",
        ],
        env=env,
    )
    assert r.returncode == 1, r.stderr[-3000:]
    s = json.loads(r.stdout.strip().splitlines()[-1])["summary"]
    assert (s["records"], s["errors"]) == (good.records + 1, 2)
    import pyarrow.parquet as pq

    assert pq.read_table(str(out)).num_rows == good.records + 2


@pytest.mark.spark
def test_terminal_is_not_blank_while_the_jvm_starts(tmp_path, log_dir):
    """On a terminal a spinner says what is happening while the JVM starts, and is
    gone once the summary table is shown; --no-progress prints nothing on stderr."""
    from pty_screen import PtyRun

    root, good = log_dir
    r = PtyRun(
        [
            QUORUMCTL,
            "spark-export",
            str(root),
            "--out",
            str(tmp_path / "tty"),
            "--master",
            "local[1]",
            "--spark-conf",
            "spark.ui.enabled=false",
        ],
        cols=120,
        stderr_on_pty=True,
    )
    assert r.wait_for(lambda t: "starting Spark (master local[1]); the JVM takes a few seconds" in t, 120), r.text()
    code, _ = r.finish(300)
    screen = r.text()
    assert code == 1, screen  # the fixture has a corrupt batch
    assert "quorumctl spark-export" in screen and "│ records" in screen, screen
    assert "starting Spark" not in screen  # transient
    q = run(
        [
            QUORUMCTL,
            "spark-export",
            str(root),
            "--out",
            str(tmp_path / "quiet"),
            "--master",
            "local[1]",
            "--spark-conf",
            "spark.ui.enabled=false",
            "--no-progress",
            "-o",
            "json",
        ]
    )
    assert q.returncode == 1 and q.stderr == "", q.stderr
