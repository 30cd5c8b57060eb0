"""Where a writing command cannot write, it says so before it writes anything, for root too:
a read-only mount (root passes os.access's permission check, not a mount's), a file where a
directory is expected, a full file system. For the backup dir of recover and truncate, the
log dirs themselves, and the target of bootstrap format: exit 2, one line, nothing changed."""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager

import pytest
from logfiles import tree
from samples import FIXTURES

from quorumctl.testing.synth import B, write_replica

DYN = FIXTURES / "kafka-3.9.0-dynamic" / "data"
CID = "MkU3OEVBNTcwNTJENDM2Qg"


@contextmanager
def read_only(path):
    """`path` bind-mounted read-only onto itself (root only)."""
    os.makedirs(path, exist_ok=True)
    if subprocess.run(["mount", "--bind", str(path), str(path)], capture_output=True).returncode != 0:
        pytest.fail(f"cannot bind-mount {path} (the root marker promised root)")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(path)], check=True, capture_output=True)
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


@contextmanager
def full_tmpfs(path, size="512k"):
    """A small tmpfs at `path` (root only), yielded empty; fill() it once the files are in."""
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


def fill(path):
    fd = os.open(os.path.join(path, "filler"), os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def one_line_error(r, *parts):
    code, out, err = r
    assert (code, out) == (2, ""), out + err
    assert err.startswith("quorumctl: error: ") and err.count("\n") == 1, err
    for p in parts:
        assert p in err, err


def replica(root):
    write_replica(str(root / "ld"), [B(1)] * 3 + [B(2)] * 3, node_id=2)
    return root / "ld"


# -- the backup dir --------------------------------------------------------------------------


def _truncate(cli, ld, *extra):
    return cli("truncate", ld, "--to-offset", "4", *extra, "--apply")


def _recover(cli, d, *extra):
    return cli("recover", d / "c1", "--replica", d / "b4", "--lost-voters", "2,3", *extra, "--apply")


@pytest.fixture
def dyn(tmp_path):
    for n in ("c1", "b4"):
        shutil.copytree(DYN / n, tmp_path / n)
    return tmp_path


@pytest.mark.root
def test_truncate_refuses_a_read_only_backup_dir(cli, tmp_path):
    ld = replica(tmp_path)
    before = tree(tmp_path)
    with read_only(tmp_path / "bk") as bk:
        one_line_error(
            _truncate(cli, ld, "--backup-dir", bk),
            f"the backup dir {bk}: cannot write in {bk} (Read-only file system); nothing was changed",
        )
    assert tree(tmp_path) == before and os.listdir(tmp_path / "bk") == []


@pytest.mark.root
@pytest.mark.shared("reference/fixtures")
def test_recover_refuses_a_read_only_backup_dir(cli, dyn):
    before = tree(dyn)
    with read_only(dyn / "bk") as bk:
        one_line_error(
            _recover(cli, dyn, "--backup-dir", bk),
            f"the backup dir {bk}: cannot write in {bk} (Read-only file system); nothing was changed",
        )
    assert tree(dyn) == before and os.listdir(dyn / "bk") == []


@pytest.mark.parametrize("under", ["", "sub"])
def test_truncate_refuses_a_file_as_backup_dir(cli, tmp_path, under):
    ld = replica(tmp_path)
    (tmp_path / "bk").write_text("not a dir")
    before = tree(tmp_path)
    one_line_error(
        _truncate(cli, ld, "--backup-dir", tmp_path / "bk" / under),
        f"{tmp_path / 'bk'} is a file, not a directory; nothing was changed",
    )
    assert tree(tmp_path) == before


@pytest.mark.shared("reference/fixtures")
def test_recover_refuses_a_file_as_backup_dir(cli, dyn):
    (dyn / "bk").write_text("not a dir")
    before = tree(dyn)
    one_line_error(
        _recover(cli, dyn, "--backup-dir", dyn / "bk"), f"{dyn / 'bk'} is a file, not a directory; nothing was changed"
    )
    assert tree(dyn) == before


# -- the log dir itself ---------------------------------------------------------------------


@pytest.mark.root
def test_truncate_refuses_a_read_only_log_dir(cli, tmp_path):
    ld = replica(tmp_path)
    before = tree(tmp_path)
    with read_only(ld):
        one_line_error(_truncate(cli, ld), f"cannot open {ld / '.lock'} to take Kafka's lock (Read-only file system)")
    assert tree(tmp_path) == before


@pytest.mark.root
@pytest.mark.shared("reference/fixtures")
def test_recover_on_a_full_disk_changes_nothing(cli, tmp_path):
    with full_tmpfs(tmp_path / "mnt") as mnt:
        for n in ("c1", "b4"):
            shutil.copytree(DYN / n, mnt / n)
        fill(mnt)
        before = tree(mnt / "c1"), tree(mnt / "b4")
        one_line_error(
            _recover(cli, mnt),
            "no space left on the device (ENOSPC) while writing",
            f"nothing was changed in {mnt / 'c1' / '__cluster_metadata-0'}",
        )
        assert (tree(mnt / "c1"), tree(mnt / "b4")) == before
        assert os.listdir(mnt / "c1.quorumctl-backup") == []  # the partial run dir was removed


# -- the target of bootstrap format ---------------------------------------------------------


def _format(cli, target, *extra):
    return cli("bootstrap", "format", "--node-id", "1", "--log-dir", target, "-t", CID, *extra)


@pytest.mark.root
@pytest.mark.parametrize("below", ["", "new/dir"])
def test_format_refuses_a_read_only_target(cli, tmp_path, below):
    with read_only(tmp_path / "ro") as ro:
        one_line_error(
            _format(cli, ro / below, "--apply"),
            f"{ro / below}: cannot write in {ro} (Read-only file system); nothing was written",
        )
    assert os.listdir(tmp_path / "ro") == []


@pytest.mark.parametrize("apply", [[], ["--apply"]])
@pytest.mark.parametrize("below", ["", "ld"])
def test_format_refuses_a_file_where_a_dir_is_expected(cli, tmp_path, below, apply):
    (tmp_path / "f").write_text("keep me")
    target = tmp_path / "f" / below
    one_line_error(_format(cli, target, *apply), f"{target}: {tmp_path / 'f'} is not a directory; nothing was written")
    assert sorted(os.listdir(tmp_path)) == ["f"] and (tmp_path / "f").read_text() == "keep me"
