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
needs_fixtures = pytest.mark.shared("reference/fixtures/kafka-3.7.0-static")


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
@needs_fixtures
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
    assert r.returncode == 1  # e_idx's indexes are damaged: the files were read
    assert r.stderr.splitlines()[0] == f"Ignoring unknown file {d / 'README'}"
    assert "checkpoint" not in r.stderr and ".lock" not in r.stderr and ".deleted" not in r.stderr
    assert "Traceback" not in r.stderr


# -- --record-type (issue 10, item 4) ---------------------------------------------

C1_LOG = STATIC / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"


@needs_fixtures
def test_unknown_record_type_is_refused_with_the_valid_names():
    r = run("dump-log", "--record-type", "PARTITION_CHANGE_RECORD", "--record-type", "BOGUS", C1_LOG)
    one_line_error(
        r,
        "--record-type: no record type 'BOGUS'",
        "PARTITION_CHANGE_RECORD,",
        "LEADER_CHANGE,",
        "TOPIC_RECORD,",
        "REGISTER_BROKER_RECORD,",
    )


@needs_fixtures
def test_record_type_is_case_insensitive_and_the_suffix_optional():
    canonical = run(
        "dump-log", "-o", "json", "--record-type", "REGISTER_BROKER_RECORD", "--record-type", "LEADER_CHANGE", C1_LOG
    )
    assert canonical.returncode == 0
    lines = canonical.stdout.splitlines()
    assert len(lines) > 3 and all('"REGISTER_BROKER_RECORD"' in ln or '"LEADER_CHANGE"' in ln for ln in lines)
    loose = run("dump-log", "-o", "json", "--record-type", "register_broker", "--record-type", "Leader_Change", C1_LOG)
    assert (loose.returncode, loose.stdout) == (0, canonical.stdout)


# -- the table view, on a terminal (issue 10, item 1) ------------------------------


def on_terminal(*args, columns=120, lines=400, cwd=None) -> tuple[int, list[str]]:
    """(exit code, screen lines) of the console script on a pseudo-terminal, the
    screen rendered by a terminal emulator as a person would see it."""
    pyte = pytest.importorskip("pyte")
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdout/stderr are the terminal
        env = dict(os.environ, COLUMNS=str(columns), LINES=str(lines), TERM="xterm")
        if cwd is not None:
            os.chdir(cwd)
        os.execve(QUORUMCTL, [QUORUMCTL, *map(str, args)], env)
    screen = pyte.Screen(columns, lines)
    stream = pyte.ByteStream(screen)
    while True:
        ready, _, _ = select.select([fd], [], [], 60)
        assert ready, "no output for 60 s"
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        stream.feed(data.replace(b"\n", b"\r\n") if b"\r\n" not in data else data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), [ln.rstrip() for ln in screen.display if ln.strip()]


@needs_fixtures
def test_dump_log_on_a_terminal_is_a_table_of_batches():
    code, screen = on_terminal("dump-log", STATIC / "corrupt" / "a_flip" / "00000000000000000000.log")
    assert code == 1, screen  # batch 1..5 fails its CRC
    assert screen[0].startswith("Dumping ") and screen[1] == "Log starting offset: 0"
    assert screen[2].split() == [
        "offset",
        "position",
        "time",
        "(UTC)",
        "epoch",
        "type",
        "records",
        "size",
        "codec",
        "crc",
        "summary",
    ]
    assert set(screen[3]) == {"─"}
    rows = {ln.split()[0]: ln.split() for ln in screen[4:] if ln.split()[0][0].isdigit()}
    assert rows["0"] == [
        "0",
        "0",
        "2026-11-21T23:52:55.621Z",
        "2",
        "control",
        "1",
        "106",
        "none",
        "ok",
        "LEADER_CHANGE",
    ]
    assert rows["1..5"] == ["1..5", "106", "2026-11-21T23:52:56.195Z", "2", "data", "5", "258", "none", "INVALID"]
    assert rows["6"][-1] == "ok" and len(rows) == 26
    assert "Traceback" not in "\n".join(screen) and "internal error" not in "\n".join(screen)


@needs_fixtures
def test_table_records_and_other_file_kinds_on_a_narrow_terminal():
    d = STATIC / "data" / "c1" / "__cluster_metadata-0"
    code, screen = on_terminal(
        "dump-log",
        "--deep-iteration",
        "--offset-end",
        "3",
        "00000000000000000000.log",
        "leader-epoch-checkpoint",
        "quorum-state",
        "00000000000000000000.index",
        columns=80,
        cwd=d,
    )
    assert code == 0, screen
    text = "\n".join(screen)
    # 80 columns with record types: position, records, codec, size and epoch give way;
    # offset, time, type and CRC stay
    assert screen[2].split() == ["offset", "time", "(UTC)", "type", "crc", "summary"]
    assert screen[4].split() == ["0", "2026-11-21T23:52:55.621Z", "control", "ok"]
    assert screen[5].split()[:3] == ["↳", "0", "2026-11-21T23:52:55.621Z"] and "LEADER_CHANGE" in screen[5]
    assert any(ln.split()[:4] == ["↳", "2", "2026-11-21T23:52:56.195Z", "FEATURE_LEVEL"] for ln in screen)
    # leader-epoch-checkpoint, quorum-state, index: tables of their entries and fields
    i = screen.index("Dumping leader-epoch-checkpoint")
    assert [ln.split() for ln in screen[i + 1 : i + 6]] == [
        ["epoch", "startOffset"],
        ["─" * 80],
        ["2", "0"],
        ["7", "335"],
        ["20", "408"],
    ]
    assert any(ln.split() == ["leaderEpoch", "20"] for ln in screen)
    j = screen.index("Dumping 00000000000000000000.index")
    assert screen[j + 1].split() == ["offset", "position"] and screen[j + 3].split() == ["55", "4167"]
    assert all(len(ln) <= 80 for ln in screen) and "…" in text  # payloads cut to the screen


@needs_fixtures
def test_table_is_streamed_in_chunks_that_line_up(tmp_path):
    """More batches than one chunk: one header, and every row's CRC cell in one column."""
    from quorumctl.render.dumplog_table import CHUNK_ROWS

    log = STATIC / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"
    r = subprocess.run(
        [QUORUMCTL, "dump-log", "-o", "table", log],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, COLUMNS="160"),
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    rows = [ln for ln in lines[4:] if ln.strip()]
    assert len(rows) == 849 > 4 * CHUNK_ROWS
    assert sum(1 for ln in lines if ln.split()[:2] == ["offset", "position"]) == 1
    crc_at = lines[2].index("crc")
    assert all(ln[crc_at : crc_at + 2] == "ok" for ln in rows)


@needs_fixtures
def test_table_through_head_ends_like_cat():
    """A closed pipe ends the dump as it ends `cat` (SIGPIPE), not with an error or 0."""
    log = STATIC / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"'{QUORUMCTL}' dump-log -o table '{log}' | head -n 3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.stdout.splitlines()[0] == f"Dumping {log}" and len(r.stdout.splitlines()) == 3
    assert (r.returncode, r.stderr) == (141, "")


# -- one rule for index consistency (issue 10, item 8) -----------------------------


@needs_fixtures
def test_verify_and_dump_log_give_one_answer_for_e_idx():
    idx = E_IDX / "00000000000000000000.index"
    v = run("verify", "-o", "json", idx.parent)
    assert v.returncode == 1
    import json

    doc = json.loads(v.stdout)
    [rep] = [f for f in doc["files"] if f["file"] == str(idx)]
    assert [(p["kind"], p["position"], p["offset"]) for p in rep["problems"]] == [("index-offset-mismatch", 0, 6)]
    assert "(kafka-dump-log: Index offset: 6, log offset: 5)" in rep["problems"][0]["message"]
    d = run("dump-log", "--verify-index-only", idx)
    assert (d.returncode, d.stdout) == (1, f"Dumping {idx}\n")
    assert d.stderr == f"Mismatches in :{idx}\n  Index offset: 6, log offset: 5\n"


@needs_fixtures
def test_index_out_of_order_is_a_problem_for_dump_log_too(tmp_path):
    """Entries that each point at their batch but go backwards: kafka-dump-log sees
    nothing wrong, verify does (lookups binary-search the index): dump-log says so too."""
    import struct

    d = tmp_path / "seg"
    d.mkdir()
    shutil.copy(E_IDX / "00000000000000000000.log", d)
    idx = d / "00000000000000000000.index"
    idx.write_bytes(struct.pack(">ii", 10, 810) + struct.pack(">ii", 6, 364))
    v = run("verify", idx.parent)
    assert v.returncode == 1
    assert f"{idx}: position 8: offset 6: index-offset-decreasing: offset 6 is not greater" in v.stdout
    r = run("dump-log", "--verify-index-only", idx)
    assert r.returncode == 1
    assert f"{idx}: position 8: offset 6: index-offset-decreasing: offset 6 is not greater" in r.stderr
    assert f"{idx}: position 8: offset 6: index-position-decreasing: position 364" in r.stderr


# -- smaller items (issue 10, item 11) --------------------------------------------


@needs_fixtures
def test_crc_mismatch_names_both_crcs():
    import crc32c

    log = STATIC / "corrupt" / "a_flip" / "00000000000000000000.log"
    data = log.read_bytes()
    computed = crc32c.crc32c(data[106 + 21 : 106 + 258])  # batch 1..5: 258 bytes at 106, CRC over byte 21 on
    r = run("verify", log)
    assert r.returncode == 1
    assert (
        f"{log}: position 106: offset 1: crc-mismatch: CRC-32C mismatch: header says 2485404383, "
        f"the batch's bytes give {computed}\n"
    ) in r.stdout
    assert computed != 2485404383


@needs_fixtures
def test_verify_table_keeps_the_end_of_file_names():
    d = STATIC / "data" / "c1"
    code, screen = on_terminal("verify", d, columns=100)
    assert code == 0, screen
    assert str(d) in screen[0]  # the shared directory is the title, the cells name what differs
    text = "".join(ln.split("│")[1].strip() for ln in screen if ln.count("│") > 2)
    for snap in sorted((d / "__cluster_metadata-0").glob("*.checkpoint")):
        assert f"__cluster_metadata-0/{snap.name}" in text  # folded across lines, never cut
    assert "…" not in "\n".join(screen)
