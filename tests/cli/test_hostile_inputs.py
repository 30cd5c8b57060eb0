"""Hostile files and file systems (issue 13): every offline command on generated
hostile inputs, as a separate process (forked: tests/support/forkrun.py) under an
address-space limit and a time limit. None may hang, print a traceback or an internal error; verify exits
1 on every corrupted input.

Classes: record-count bombs (every codec), special files where a file is
expected (FIFO, socket, character device, directory, symlink loop, dangling
symlink), values outside the ranges renderers assume (times, epochs, ids),
hostile JSON and numbers in the small state files, a full file system under the
writers, and a symlinked partition directory under truncate --apply."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import subprocess
import time

import forkrun
import pytest

from hostile import (
    LAST_OFFSET_DELTA_AT,
    MAX_TIMESTAMP_AT,
    PRODUCER_ID_AT,
    BASE_TIMESTAMP_AT,
    plain_batch,
    record_count_bomb,
    set_field,
)
from quorumctl.records import compression
from quorumctl.records.batch import encode_batch

MEMORY = 256 << 20  # address space a command may add: a process had 300 MB, ~44 MB of it the
# interpreter with the package imported, which a forked child starts with
TIME_LIMIT = 120  # seconds of CPU and of wall clock per command (a hang fails, it does not block)


def _forked(args, keep_out: bool) -> forkrun.Forked:
    r = forkrun.run(args, memory=MEMORY, cpu=TIME_LIMIT, timeout=TIME_LIMIT, keep_out=keep_out)
    if r.code == -9:
        pytest.fail(f"quorumctl {' '.join(map(str, args))} did not finish in {TIME_LIMIT} s (a hang)")
    err = r.err.decode("utf-8", "replace")
    assert "Traceback" not in err and "internal error" not in err and "MemoryError" not in err, (
        f"quorumctl {' '.join(map(str, args))}: {err[-600:]}"
    )
    assert r.code in (0, 1, 2), (args, r.code, err[-600:])  # not killed (-9, -24)
    return r


def run(*args) -> subprocess.CompletedProcess:
    """quorumctl ARGS as a process of its own (tests/support/forkrun.py) under the limits; stdout
    is read and dropped as it comes (its size is not the point)."""
    r = _forked(args, keep_out=False)
    return subprocess.CompletedProcess(["quorumctl", *map(str, args)], r.code, None, r.err.decode("utf-8", "replace"))


def run_out(*args) -> subprocess.CompletedProcess:
    """As run(), keeping stdout (for small outputs)."""
    r = _forked(args, keep_out=True)
    return subprocess.CompletedProcess(
        ["quorumctl", *map(str, args)], r.code, r.out.decode("utf-8", "replace"), r.err.decode("utf-8", "replace")
    )


def offline_commands(log_dir: str) -> list[tuple]:
    pdir = os.path.join(log_dir, "__cluster_metadata-0")
    return [
        ("dump-log", pdir),
        ("dump-log", "--deep-iteration", pdir),
        ("dump-log", "-o", "json", pdir),
        ("dump-log", "--cluster-metadata-decoder", pdir),
        ("verify", "--deep", log_dir),
        ("state", log_dir),
        ("state", "-o", "json", log_dir),
        ("truncate", log_dir, "--to-offset", "0"),
        ("bootstrap", "info", "--log-dir", log_dir),
    ]


def assert_verify_flags(log_dir, *needles) -> str:
    """verify (plain and --deep) exits 1 and its report names every needle; the
    --deep report returned."""
    for deep in ((), ("--deep",)):
        p = run_out("verify", *deep, log_dir)
        assert p.returncode == 1, p.stdout + p.stderr
        for n in needles:
            assert n in p.stdout, (n, p.stdout[-2000:])
    return p.stdout


# -- 1. record-count bombs -------------------------------------------------------------------


def write_log(root, name, data: bytes) -> str:
    pdir = root / name / "__cluster_metadata-0"
    pdir.mkdir(parents=True)
    (pdir / "00000000000000000000.log").write_bytes(data)
    return str(root / name)


@pytest.mark.parametrize("codec", ["zstd", "gzip", "lz4", "snappy", "none"])
def test_record_count_bomb_every_codec(tmp_path, codec):
    # 600,000 seven-byte records, all at offset delta 0, in one batch (zstd: ~1 KB on disk);
    # the old code needed ~900 bytes per record for -o json and ~470 for --deep-iteration:
    # past MEMORY (256 MB) from ~575,000 records on
    count = 600_000 if codec == "zstd" else 200_000
    ld = write_log(tmp_path, codec, record_count_bomb(count, compression.BY_NAME[codec]))
    for args in offline_commands(ld):
        if args[0] != "verify":  # verify: below, under the same limits
            run(*args)
    deep = assert_verify_flags(ld, f"recordCount {count} differs from lastOffsetDelta + 1 = 1")
    assert "record 1 of the batch at offset 0: offset delta 0 does not increase (the record before has 0)" in deep
    assert f"{count - 10} more undecodable records in this batch" in deep


def test_deep_iteration_reports_the_first_gaps_only(tmp_path):
    ld = write_log(tmp_path, "b", record_count_bomb(5000, compression.ZSTD))
    p = run("dump-log", "--deep-iteration", os.path.join(ld, "__cluster_metadata-0"))
    assert p.returncode == 1
    assert p.stderr.count("  0 is followed by 0") == 1000 and "  ... and 3999 more" in p.stderr


@pytest.mark.parametrize(
    "count,last_delta,contiguous,needle",
    [
        (5, 9, True, "recordCount 5 differs from lastOffsetDelta + 1 = 10"),  # fewer records than offsets
        (5, 2, True, "recordCount 5 differs from lastOffsetDelta + 1 = 3"),  # more
        (5, 2, False, "recordCount 5 does not fit the batch's 3 offsets"),  # a topic segment: more is wrong
    ],
)
def test_record_count_against_offset_range(tmp_path, count, last_delta, contiguous, needle):
    data = record_count_bomb(count, compression.NONE, last_offset_delta=last_delta)
    name = "__cluster_metadata-0" if contiguous else "topic-0"
    pdir = tmp_path / "ld" / name
    pdir.mkdir(parents=True)
    (pdir / "00000000000000000000.log").write_bytes(data)
    p = run_out("verify", pdir)
    assert p.returncode == 1 and needle in p.stdout and "position 0: offset 0: record-count" in p.stdout


def test_compacted_topic_batch_with_fewer_records_is_legal(tmp_path):
    # the log cleaner keeps retained records at their offsets: 3 records at deltas 0, 2, 4 of 5
    recs = b"".join(bytes([0x0C, 0, 0, d * 2, 1, 1, 0]) for d in (0, 2, 4))
    from hostile import fix_crc
    import struct

    data = bytearray(record_count_bomb(3, compression.NONE))
    data[61:] = recs
    struct.pack_into(">i", data, LAST_OFFSET_DELTA_AT, 4)
    pdir = tmp_path / "ld" / "topic-0"
    pdir.mkdir(parents=True)
    (pdir / "00000000000000000000.log").write_bytes(fix_crc(data))
    p = run_out("verify", "--deep", pdir)
    assert p.returncode == 0, p.stdout


# -- 2. special files ----------------------------------------------------------------------------

NAMES = [
    "quorum-state",
    "leader-epoch-checkpoint",
    "partition.metadata",
    "00000000000000000000.log",
    "00000000000000000000.index",
    "00000000000000000010-0000000001.checkpoint",
]


def make_special(path: str, kind: str, tmp_path) -> str:
    """Create `path` as `kind`; returns the words verify uses for it."""
    if kind == "fifo":
        os.mkfifo(path)
        return "is a FIFO (named pipe), not a regular file"
    if kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        short = f"/tmp/qc-{os.getpid()}-{abs(hash(path)) % 10**8}.sock"  # AF_UNIX paths are short
        s.bind(short)
        s.close()
        os.rename(short, path)
        return "is a socket, not a regular file"
    if kind == "chardev":
        os.symlink("/dev/zero", path)
        return "is a character device, not a regular file"
    if kind == "directory":
        os.mkdir(path)
        return "is a directory, not a regular file"
    if kind == "loop":
        os.symlink(path + ".other", path)
        os.symlink(path, path + ".other")
        return "symlink loop"
    if kind == "dangling":
        os.symlink(str(tmp_path / "nowhere"), path)
        return "no such file"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["fifo", "socket", "chardev", "directory", "loop", "dangling"])
def test_special_files_where_files_are_expected(tmp_path, kind):
    ld = tmp_path / "ld"
    pdir = ld / "__cluster_metadata-0"
    pdir.mkdir(parents=True)
    words = None
    for name in NAMES + ["../meta.properties"]:
        words = make_special(str(pdir / name), kind, tmp_path)
    t = time.monotonic()
    for args in offline_commands(str(ld)):
        run(*args)
    p = run_out("verify", ld)
    assert p.returncode == 1
    for name in [
        "quorum-state",
        "leader-epoch-checkpoint",
        "partition.metadata",
        "00000000000000000000.log",
        "00000000000000000010-0000000001.checkpoint",
    ]:
        assert f"{pdir / name}: {words}" in p.stdout, (name, p.stdout)
    assert f"{ld / 'meta.properties'}: {words}" in p.stdout
    # each file named on its own: dump-log reports it in one line (exit 2)
    for name in ["quorum-state", "00000000000000000000.log"]:
        q = run_out("dump-log", pdir / name)
        assert q.returncode == 2 and words in q.stderr, q.stderr
    s = run_out("state", ld)
    assert s.returncode == 1 and f"problem: {pdir / 'quorum-state'}: {words}" in s.stdout
    assert time.monotonic() - t < TIME_LIMIT


# -- 3. values outside the ranges renderers assume -------------------------------------------


@pytest.mark.parametrize(
    "field,fmt,value",
    [
        (MAX_TIMESTAMP_AT, ">q", 1 << 62),
        (MAX_TIMESTAMP_AT, ">q", -(1 << 63)),
        (MAX_TIMESTAMP_AT, ">q", (1 << 63) - 1),
        (MAX_TIMESTAMP_AT, ">q", 253402300800000),
        (BASE_TIMESTAMP_AT, ">q", (1 << 63) - 1),
        (PRODUCER_ID_AT, ">q", -(1 << 63)),
        (12, ">i", -(1 << 31)),
        (12, ">i", (1 << 31) - 1),
    ],
)
def test_out_of_range_header_values(tmp_path, field, fmt, value):
    data = set_field(plain_batch(3, leader_epoch=1), field, fmt, value)
    ld = write_log(tmp_path, "v", data)
    for args in offline_commands(ld) + [("state", "-o", "table", ld)]:
        run(*args)


def test_state_prints_a_time_beyond_9999_raw(tmp_path):
    ld = write_log(tmp_path, "v", set_field(plain_batch(3), MAX_TIMESTAMP_AT, ">q", 1 << 62))
    p = run_out("state", "-o", "text", ld)
    assert "last batch written: 4611686018427387904 ms (after the year 9999: not a time Kafka writes)" in p.stdout


def test_out_of_range_record_timestamps_and_offsets(tmp_path):
    data = encode_batch([(None, b"x", (), (1 << 63) - 1)], base_offset=(1 << 63) - 2, base_timestamp=-(1 << 62))
    ld = write_log(tmp_path, "r", data)
    for args in offline_commands(ld):
        run(*args)


# -- 4. hostile JSON and numbers in the state files ------------------------------------------------

HOSTILE_TEXT = {
    "nested": "[" * 200_000,
    "nested-object": '{"a":' * 100_000,
    "5000-digit-leaderId": '{"data_version":1,"leaderId":'
    + "9" * 5000
    + ',"leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}',
    "4000-digit-leaderId": '{"data_version":1,"leaderId":'
    + "9" * 4000
    + ',"leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}',
    "huge-string": '{"data_version":0,"clusterId":"' + "x" * 900_000 + '"}',
    "binary": "\x00\xff\xfe" * 1000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_TEXT))
def test_hostile_quorum_state(tmp_path, name):
    ld = write_log(tmp_path, "q", plain_batch(3))
    qs = os.path.join(ld, "__cluster_metadata-0", "quorum-state")
    with open(qs, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(HOSTILE_TEXT[name])
    for args in offline_commands(ld):
        run(*args)
    p = run_out("verify", ld)
    assert p.returncode == 1 and f"{qs}: unreadable: {qs}: " in p.stdout
    # one readable line, not the hostile value (the path, twice in it, is the test's: its length varies)
    assert max(len(line.replace(qs, "QS")) for line in p.stdout.splitlines()) < 400
    q = run_out("dump-log", qs)
    assert q.returncode == 2 and q.stderr.startswith(f"quorumctl: error: {qs}: ") and q.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "file,text",
    [
        ("meta.properties", "version=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\nnode.id=" + "9" * 5000 + "\n"),
        ("__cluster_metadata-0/leader-epoch-checkpoint", "0\n1\n" + "9" * 5000 + " 0\n"),
        ("__cluster_metadata-0/leader-epoch-checkpoint", "0\n" + "9" * 5000 + "\n"),
        ("__cluster_metadata-0/partition.metadata", "version: " + "9" * 5000 + "\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"),
    ],
)
def test_hostile_numbers_in_text_files(tmp_path, file, text):
    ld = write_log(tmp_path, "n", plain_batch(3))
    with open(os.path.join(ld, file), "w") as f:
        f.write(text)
    for args in offline_commands(ld):
        run(*args)
    p = run_out("verify", ld)
    assert p.returncode == 1 and os.path.join(ld, file) + ": unreadable" in p.stdout


# -- 5. a full file system under the writers -------------------------------------------------------


def _tmpfs(path) -> bool:
    """A 64 KiB tmpfs at `path` (root only); False where mounting is not allowed."""
    os.makedirs(path, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(path)], capture_output=True).returncode
        == 0
    )


def _fill(path):
    """Fill the file system holding `path` to the last byte."""
    fd = os.open(os.path.join(path, "filler"), os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 512)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)


CONTROLLER = (
    "process.roles=controller\nnode.id=1\ncontroller.quorum.bootstrap.servers=localhost:19191\n"
    "listeners=CONTROLLER://localhost:19191\nadvertised.listeners=CONTROLLER://localhost:19191\n"
    "controller.listener.names=CONTROLLER\nlog.dirs={}\n"
)


@pytest.mark.root
def test_bootstrap_format_on_a_full_disk(tmp_path):
    mnt = tmp_path / "mnt"
    if not _tmpfs(mnt):
        pytest.skip("cannot mount a tmpfs here (needs root); the injected ENOSPC test covers the writer")
    try:
        (mnt / "ld").mkdir()
        _fill(mnt)
        cfg = tmp_path / "c.properties"
        cfg.write_text(CONTROLLER.format(mnt / "ld"))
        before = sorted(os.listdir(mnt)), sorted(os.listdir(mnt / "ld"))
        p = run_out("bootstrap", "format", "-c", cfg, "-t", "MkU3OEVBNTcwNTJENDM2Qg", "--standalone", "--apply")
        assert p.returncode == 2, p.stdout + p.stderr
        assert p.stderr.startswith("quorumctl: error: no space left on the device (ENOSPC) while writing ")
        assert f"nothing was changed in {mnt / 'ld'}" in p.stderr and p.stderr.count("\n") == 1
        # Kafka's empty .lock (taken on the existing dir, as Kafka does) is all that is new
        assert (sorted(os.listdir(mnt)), sorted(set(os.listdir(mnt / "ld")) - {".lock"})) == before
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.root
def test_truncate_apply_on_a_full_disk(tmp_path):
    from quorumctl.testing.synth import B, write_replica
    from logfiles import tree

    mnt = tmp_path / "mnt"
    if not _tmpfs(mnt):
        pytest.skip("cannot mount a tmpfs here (needs root); the injected ENOSPC test covers the writer")
    try:
        write_replica(str(mnt / "ld"), [B(1)] * 3 + [B(2)] * 3, node_id=2)
        _fill(mnt)
        before = tree(mnt / "ld")
        p = run_out("truncate", mnt / "ld", "--to-offset", "4", "--apply")
        assert p.returncode == 2, p.stdout + p.stderr
        assert "no space left on the device (ENOSPC) while writing" in p.stderr
        assert f"nothing was changed in {mnt / 'ld' / '__cluster_metadata-0'}" in p.stderr
        assert tree(mnt / "ld") == before
        assert os.listdir(mnt / "ld.quorumctl-backup") == []  # the partial run dir was removed
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EDQUOT])
def test_truncate_apply_injected_out_of_space(cli, tmp_path, monkeypatch, err):
    """The same at the write layer, where no tmpfs can be mounted: every write fails."""
    from quorumctl.ops import fsutil
    from quorumctl.testing.synth import B, write_replica
    from logfiles import tree

    write_replica(str(tmp_path / "ld"), [B(1)] * 3 + [B(2)] * 3, node_id=2)
    before = tree(tmp_path / "ld")

    def full(fd, data):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(fsutil.os, "write", full)
    code, out, errout = cli("truncate", tmp_path / "ld", "--to-offset", 4, "--apply")
    assert code == 2 and errout.count("\n") == 1, errout
    assert f"({errno.errorcode[err]}) while writing {tmp_path / 'ld.quorumctl-backup'}" in errout
    assert f"nothing was changed in {tmp_path / 'ld' / '__cluster_metadata-0'}" in errout
    assert tree(tmp_path / "ld") == before and os.listdir(tmp_path / "ld.quorumctl-backup") == []


def test_bootstrap_format_injected_out_of_space(cli, tmp_path, monkeypatch):
    from quorumctl.ops import fsutil

    cfg = tmp_path / "c.properties"
    cfg.write_text(CONTROLLER.format(tmp_path / "ld"))

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(fsutil.os, "write", full)
    code, out, err = cli("bootstrap", "format", "-c", cfg, "-t", "MkU3OEVBNTcwNTJENDM2Qg", "--standalone", "--apply")
    assert code == 2 and "no space left on the device (ENOSPC) while writing" in err
    assert f"nothing was changed in {tmp_path / 'ld'}" in err
    assert sorted(os.listdir(tmp_path)) == ["c.properties"]  # no ld, no staging dir left


# -- 6. a symlinked partition directory -----------------------------------------------------------


def test_truncate_keeps_a_symlinked_partition_dir(cli, tmp_path):
    from quorumctl.testing.synth import B, write_replica
    from quorumctl.logdir import statefiles as state_files

    pdir = write_replica(str(tmp_path / "ld"), [B(1)] * 3 + [B(2)] * 3, node_id=2)
    (tmp_path / "vol2").mkdir()
    real = tmp_path / "vol2" / "meta-part"
    os.rename(pdir, real)
    os.symlink(real, pdir)
    code, out, err = cli("truncate", tmp_path / "ld", "--to-offset", 4, "--apply")
    assert code == 0, out + err
    assert os.path.islink(pdir) and os.readlink(pdir) == str(real)
    assert state_files.read_epoch_checkpoint(str(real / "leader-epoch-checkpoint")) == [(1, 0), (2, 3)]
    assert os.path.getsize(real / "00000000000000000000.log") == 376  # offsets 0..3 kept
    assert os.listdir(tmp_path / "vol2" / "ld.quorumctl-backup")  # the backup is beside the real dir
    code, out, err = cli("verify", "-o", "text", tmp_path / "ld")
    assert code == 0 and "Verified 7 file(s), 4 batch(es)" in out, out


# -- dump-log's streamed JSON stays one valid object per batch ----------------------------------


def test_streamed_json_batches_are_whole_objects(tmp_path):
    import io
    import json
    from quorumctl.dump.log import dump_range
    from quorumctl.render.dumplog import Sink
    from quorumctl.records import batch as RB
    from quorumctl.render.dumplog import Options

    empty = record_count_bomb(0, compression.NONE, last_offset_delta=4)  # compaction leaves these
    many = record_count_bomb(3000, compression.GZIP, base_offset=5, last_offset_delta=2999)
    short = bytearray(record_count_bomb(2500, compression.NONE, base_offset=3005, last_offset_delta=2499))
    from hostile import fix_crc

    short = fix_crc(short[: 61 + 7 * 2000])  # claims 2500, holds 2000
    import struct

    short = bytearray(short)
    struct.pack_into(">i", short, 8, len(short) - 12)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(empty + many + fix_crc(short))
    out, err = io.StringIO(), io.StringIO()
    sink = Sink(out, err)
    span = dump_range(str(path), Options(), sink, as_json=True, decode_json=False)
    sink.flush()
    objs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [o["count"] for o in objs] == [0, 3000, 2500]
    assert objs[0]["records"] == [] and len(objs[1]["records"]) == 3000
    assert len(objs[2]["records"]) == 2000 and objs[2]["error"] == "batch at offset 3005: record data cut short"
    assert span.problems == 1 and RB.WINDOW == 4 << 20
