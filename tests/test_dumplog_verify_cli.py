"""dump-log and verify as a person runs them: the installed console script, in a
pipe and on a pseudo-terminal, with good input and with the wrong path."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from samples import FIXTURES

QUORUMCTL = str(Path(sys.executable).with_name("quorumctl"))
STATIC = FIXTURES / "kafka-3.7.0-static"
E_IDX = STATIC / "corrupt" / "e_idx"
needs_fixtures = pytest.mark.skipif(not STATIC.is_dir(), reason=f"reference fixtures absent ({STATIC})")


def run(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([QUORUMCTL, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)


def one_line_error(r: subprocess.CompletedProcess, *fragments: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr holding every fragment."""
    assert (r.returncode, r.stdout) == (2, ""), (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("quorumctl: error: "), r.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    assert "Traceback" not in r.stderr


# -- wrong or empty input (issue 10, item 3) -------------------------------------

EXPECTED = "(expected a Kafka log dir, or one of its"


@pytest.mark.parametrize("command", ["dump-log", "verify"])
def test_missing_path_is_exit_2(command, tmp_path):
    for p in (tmp_path / "nonexistent" / "path", f"{tmp_path / 'nonexistent' / 'dir'}/"):
        one_line_error(run(command, p), f"{p}: no such file or directory")


@pytest.mark.parametrize("command", ["dump-log", "verify"])
def test_unknown_file_kind_is_exit_2(command, tmp_path):
    typo = tmp_path / "00000000000000000000.lgo"
    typo.write_bytes(b"\0" * 100)
    one_line_error(run(command, typo), f"{typo}: not a file this command reads", EXPECTED)
    one_line_error(run(command, "/etc/passwd"), "/etc/passwd: not a file this command reads", EXPECTED)


@pytest.mark.parametrize("command", ["dump-log", "verify"])
def test_directory_with_nothing_readable_is_exit_2(command, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    one_line_error(run(command, empty), f"{empty}: nothing to read in it", EXPECTED)
    readme = tmp_path / "readme"
    readme.mkdir()
    (readme / "README").write_text("not a log dir\n")
    (readme / ".lock").write_bytes(b"")
    one_line_error(run(command, f"{readme}/"), f"{readme}/: nothing to read in it", EXPECTED)


@pytest.mark.parametrize("command", ["dump-log", "verify"])
def test_one_bad_path_among_good_ones_stops_before_output(command, tmp_path):
    good = STATIC / "data" / "c1" / "__cluster_metadata-0" / "quorum-state"
    if not good.exists():
        pytest.skip(f"reference fixtures absent ({good})")
    one_line_error(run(command, good, tmp_path / "typo"), f"{tmp_path / 'typo'}: no such file or directory")


@needs_fixtures
@pytest.mark.parametrize("command", ["dump-log", "verify"])
def test_stray_files_in_a_log_dir_are_a_note_not_an_error(command, tmp_path):
    d = tmp_path / "e_idx"
    shutil.copytree(E_IDX, d)
    (d / "README").write_text("notes\n")
    for housekeeping in (".lock", "recovery-point-offset-checkpoint", "00000000000000000000.log.deleted"):
        (d / housekeeping).write_bytes(b"")
    r = run(command, "-o", "json", d)
    assert r.returncode == 1     # e_idx's indexes are damaged: the files were read
    assert r.stderr.splitlines()[0] == f"Ignoring unknown file {d / 'README'}"
    assert "checkpoint" not in r.stderr and ".lock" not in r.stderr and ".deleted" not in r.stderr
    assert "Traceback" not in r.stderr


# -- --record-type (issue 10, item 4) ---------------------------------------------

C1_LOG = STATIC / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"


@needs_fixtures
def test_unknown_record_type_is_refused_with_the_valid_names():
    r = run("dump-log", "--record-type", "PARTITION_CHANGE_RECORD", "--record-type", "BOGUS", C1_LOG)
    one_line_error(r, "--record-type: no record type 'BOGUS'", "PARTITION_CHANGE_RECORD,", "LEADER_CHANGE,",
                   "TOPIC_RECORD,", "REGISTER_BROKER_RECORD,")


@needs_fixtures
def test_record_type_is_case_insensitive_and_the_suffix_optional():
    canonical = run("dump-log", "-o", "json", "--record-type", "REGISTER_BROKER_RECORD",
                    "--record-type", "LEADER_CHANGE", C1_LOG)
    assert canonical.returncode == 0
    lines = canonical.stdout.splitlines()
    assert len(lines) > 3 and all('"REGISTER_BROKER_RECORD"' in ln or '"LEADER_CHANGE"' in ln for ln in lines)
    loose = run("dump-log", "-o", "json", "--record-type", "register_broker", "--record-type", "Leader_Change", C1_LOG)
    assert (loose.returncode, loose.stdout) == (0, canonical.stdout)
