"""The JVM class archive that makes spark-export's later start-ups faster
(quorumctl/spark/classarchive.py): made by a first run's JVM as it exits, kept
only when complete, used while unchanged, and a damaged one never stops an
export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quorumctl.spark.classarchive import ClassArchive

QUORUMCTL = str(Path(sys.executable).parent / "quorumctl")
JAVA = "/usr/bin/java"  # only named, never run, by the option tests


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("QUORUMCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("QUORUMCTL_SPARK_CLASS_ARCHIVE", raising=False)
    # (conftest points SPARK_CONF_DIR at the tests' Spark defaults: a non-empty
    # directory on the class path, which Java cannot archive)
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    return tmp_path / "cache"


def test_first_run_makes_an_archive_later_runs_use_it_while_unchanged(cache):
    a = ClassArchive.for_java(JAVA, {})
    assert Path(a.path).parent == cache and Path(a.path).name.startswith("spark-classes-")
    assert a.java_options() == f"-XX:ArchiveClassesAtExit={a.path}.{os.getpid()}.tmp -Xlog:cds*=off"
    # the JVM wrote it; the run keeps it
    Path(a.tmp).write_bytes(b"archive" * 1000)
    a.keep(a.tmp)
    b = ClassArchive.for_java(JAVA, {})
    assert b.path == a.path and b.valid()
    assert b.java_options() == (
        f"-XX:SharedArchiveFile={a.path} -Xlog:cds*=off -XX:+DisplayVMOutputToStderr "
        f"-XX:ErrorFile={cache}/hs_err_pid%p.log"
    )
    assert b.used and b.tmp is None
    # cut short (or rewritten) since: not used, made again
    with open(a.path, "r+b") as f:
        f.truncate(100)
    c = ClassArchive.for_java(JAVA, {})
    assert not c.valid()
    assert c.java_options().startswith("-XX:ArchiveClassesAtExit=") and not c.used
    c.discard()
    assert not Path(a.path).exists() and not Path(a.path + ".ok").exists()


def test_archive_names_follow_the_class_path_and_can_be_switched_off(cache, monkeypatch):
    plain = ClassArchive.for_java(JAVA, {"spark.ui.enabled": "false"}).path
    assert ClassArchive.for_java(JAVA, {}).path == plain
    assert ClassArchive.for_java(JAVA, {"spark.jars": "/x/hadoop-aws.jar"}).path != plain
    monkeypatch.setenv("SPARK_CONF_DIR", "/etc/spark")  # on the launcher's class path
    assert ClassArchive.for_java(JAVA, {}).path != plain
    assert ClassArchive.for_java(None, {}) is None
    monkeypatch.setenv("QUORUMCTL_SPARK_CLASS_ARCHIVE", "off")
    assert ClassArchive.for_java(JAVA, {}) is None


def test_an_unwritable_cache_means_no_archive_options(cache):
    cache.parent.mkdir(exist_ok=True)
    cache.write_text("a file where the directory should be")
    assert ClassArchive.for_java(JAVA, {}).java_options() is None


def test_no_archive_is_made_with_a_non_empty_directory_on_the_class_path(cache, tmp_path, monkeypatch):
    conf = tmp_path / "spark-conf"
    conf.mkdir()
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf))
    assert ClassArchive.for_java(JAVA, {}).java_options().startswith("-XX:ArchiveClassesAtExit=")
    (conf / "spark-defaults.conf").write_text("spark.ui.enabled false\n")
    assert ClassArchive.for_java(JAVA, {}).java_options() is None


def test_stale_temporary_archives_are_removed(cache):
    cache.mkdir()
    old = cache / "spark-classes-0123456789abcdef.jsa.99999.tmp"
    new = cache / "spark-classes-0123456789abcdef.jsa.99998.tmp"
    old.write_bytes(b"x")
    new.write_bytes(b"x")
    os.utime(old, (0, 0))
    ClassArchive.for_java(JAVA, {}).java_options()
    assert not old.exists() and new.exists()


def _java():
    from quorumctl.spark.session import find_java

    return find_java()


@pytest.mark.spark
def test_cli_makes_uses_and_survives_a_damaged_archive(tmp_path, cache):
    from quorumctl.spark import synthetic

    log = tmp_path / "in" / "__cluster_metadata-0"
    log.mkdir(parents=True)
    synthetic.write_segment(str(log / f"{0:020d}.log"), 200_000, seed=3)
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONF_DIR"}
    env["QUORUMCTL_CACHE_DIR"] = str(cache)
    work = tmp_path / "cwd"
    work.mkdir()

    def export(n):
        r = subprocess.run(
            [
                QUORUMCTL,
                "spark-export",
                str(tmp_path / "in"),
                "--out",
                str(tmp_path / f"o{n}"),
                "--master",
                "local[2]",
                "--spark-conf",
                "spark.ui.enabled=false",
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
            cwd=work,
        )
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)  # stdout is the one JSON line, nothing from the JVM
        assert doc["ok"] and doc["summary"]["rows"] > 100
        assert "Traceback" not in r.stderr and "fatal error" not in r.stderr, r.stderr
        return doc, r.stderr

    archive = ClassArchive.for_java(_java(), {"spark.ui.enabled": "false"})
    first, _ = export(1)
    assert archive.valid() and os.path.getsize(archive.path) > 10 << 20
    assert [p.name for p in cache.iterdir() if p.name.endswith(".tmp")] == []
    seal = Path(archive.seal).read_text()
    assert export(2)[0]["summary"]["rows"] == first["summary"]["rows"]  # with the archive
    assert Path(archive.seal).read_text() == seal  # used, not made again
    # damage the archive behind the seal's back: its JVM dies; the export starts again without
    with open(archive.path, "r+b") as f:
        f.truncate(os.path.getsize(archive.path) // 2)
    Path(archive.seal).write_text(archive._stamp())
    third, stderr = export(3)
    assert third["summary"]["rows"] == first["summary"]["rows"]
    assert (
        f"quorumctl: the JVM could not start from its class archive {archive.path}; removed it, starting without\n"
    ) in stderr
    assert not os.path.exists(archive.path)  # the damaged one is gone
    assert list(work.iterdir()) == []  # no hs_err file left here
