"""Backup runs: how truncate and recover change a partition directory crash-safely.
Where the backup goes (beside the log dir, on the partition's file system, never
inside a log dir), the change itself (a run directory holding the plan, the new
directory built in it with unchanged files hard-linked, one atomic exchange with
the live one, the old one pruned to what was removed or replaced: the backup) and
the runs a crash left unfinished. What to change is the caller's; the durable
primitives (fsync, exchange, the fault hook) are fsutil's."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import stat
from collections.abc import Callable

from ..errors import InputError, Refused
from ..openfile import open_regular
from . import fsutil


def real_partition_dir(partition_dir: str) -> str:
    """Where the partition's files are: a symlinked __cluster_metadata-0 (a partition
    on another volume) is truncated where it points, and the link is kept."""
    return os.path.realpath(partition_dir) if os.path.islink(partition_dir) else partition_dir


def default_backup_root(log_dir: str) -> str:
    """Beside the log dir: <parent>/<log dir name>.quorumctl-backup; beside the real
    partition directory when __cluster_metadata-0 is a symlink (the backup must be
    on the file system that holds the files)."""
    ld = os.path.abspath(log_dir)
    pdir = os.path.join(ld, "__cluster_metadata-0")
    if os.path.islink(pdir):
        ld = os.path.realpath(pdir)
        return os.path.join(os.path.dirname(ld), os.path.basename(os.path.abspath(log_dir)) + ".quorumctl-backup")
    return os.path.join(os.path.dirname(ld), os.path.basename(ld) + ".quorumctl-backup")


def check_backup_root(backup_root: str, log_dir: str, partition_dir: str | None = None) -> None:
    """The backup root must be on the partition directory's file system (hard links
    and the atomic exchange need it) and outside the log dir (Kafka scans it)."""
    ld = os.path.realpath(log_dir)
    br = os.path.realpath(backup_root)
    if br == ld or br.startswith(ld + os.sep):
        raise Refused(
            f"the backup dir {backup_root} is inside the log dir {log_dir}, where a broker would take "
            "it for a partition; choose a directory outside it on the same file system"
        )
    real = os.path.realpath(partition_dir) if partition_dir else ld
    if br == real or br.startswith(real + os.sep):
        raise Refused(f"the backup dir {backup_root} is inside the partition directory {real}")
    probe = br
    while not os.path.lexists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise InputError(
            f"the backup dir {backup_root}: {probe} is a file, not a directory; nothing was changed: "
            "pass --backup-dir a writable directory on the same file system, outside the log dir"
        )
    why = write_probe(probe)
    if why is not None:
        raise InputError(
            f"the backup dir {backup_root}: cannot write in {probe} ({why}); nothing was changed: pass "
            "--backup-dir a writable directory on the same file system, outside the log dir"
        )
    if os.stat(probe).st_dev != os.stat(real).st_dev:
        raise Refused(
            f"the backup dir {backup_root} is not on the file system of {real}; the crash-safe swap "
            "needs both on one file system: pass --backup-dir on it (outside the log dir)"
        )


def write_probe(directory: str) -> str | None:
    """Why nothing can be created in `directory` (a read-only mount, no permission, no inode
    left), or None: a file created and removed again. os.access answers for the permission
    bits, which root passes; an attempt answers for the mount too. A full disk shows later,
    at the first write (fsutil.out_of_space removes the partial run)."""
    import tempfile

    try:
        fd, path = tempfile.mkstemp(prefix=".quorumctl-probe-", dir=directory)
    except OSError as e:
        return e.strerror or str(e)
    os.close(fd)
    try:
        os.unlink(path)
    except OSError:
        pass
    return None


def copy_owner(src_stat, path: str) -> None:
    os.chmod(path, stat.S_IMODE(src_stat.st_mode))
    try:
        os.chown(path, src_stat.st_uid, src_stat.st_gid)
    except PermissionError:
        pass


def replace_partition_dir(
    live: str,
    backup_root: str,
    label: str,
    key: str,
    doc: dict,
    build: Callable[[str, os.stat_result], None],
    keep: set[str],
    what: str,
    extra: dict,
) -> dict:
    """The crash-safe change of a partition directory that truncate and recover share:
    a backup run directory holding the plan (`doc` under `key`, status "prepared"); the new
    directory built in it by `build(staging, live_stat)` (unchanged files hard-linked); an
    atomic exchange with the live one; the old one pruned to `keep` (the files removed or
    replaced: the backup); the plan marked "done" with the report. Until the exchange the
    live directory is untouched, so a crash or a full disk leaves it as it was."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    run = os.path.join(backup_root, f"{stamp}-{label}{os.path.basename(live)}")
    staging = os.path.join(run, os.path.basename(live))
    # a full disk before the exchange: the run directory (ours alone) goes, the partition is untouched
    with fsutil.out_of_space(live, undo=lambda: shutil.rmtree(run, ignore_errors=True)):
        fsutil.step("create backup run directory")
        try:
            os.makedirs(run, exist_ok=False)
        except PermissionError as e:
            raise InputError(
                f"cannot create the backup dir {run}: {e.strerror}; nothing was changed: pass "
                "--backup-dir a writable directory on the same file system"
            ) from None
        fsutil.write_synced(
            os.path.join(run, "plan.json"), json.dumps({"status": "prepared", key: doc}, indent=1).encode()
        )
        fsutil.fsync_dir(run)
        fsutil.fsync_dir(backup_root)

        fsutil.step("build the new partition directory")
        live_stat = os.stat(live)
        os.mkdir(staging)
        try:
            build(staging, live_stat)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)  # the live directory was not touched
            raise

    fsutil.step("swap the new partition directory in (atomic exchange)")
    try:
        fsutil.exchange(staging, live)
    except OSError as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise Refused(
            f"cannot swap {live} atomically ({e}); nothing was changed. The swap needs Linux "
            "renameat2(RENAME_EXCHANGE) on a local file system"
        ) from None
    fsutil.fsync_dir(os.path.dirname(live))
    fsutil.fsync_dir(run)

    # `staging` now holds the old directory: keep only what was removed or replaced
    fsutil.step("prune the backup to the removed and replaced files")
    for name in os.listdir(staging):
        if name not in keep:
            os.unlink(os.path.join(staging, name))
    fsutil.fsync_dir(staging)
    report = {
        "applied": True,
        "backup_dir": run,
        "partition_dir": live,
        **extra,
        "backed_up": sorted(os.listdir(staging)),
    }
    fsutil.step("write the report")
    try:
        fsutil.atomic_write(
            os.path.join(run, "plan.json"),
            json.dumps({"status": "done", key: doc, "report": report}, indent=1).encode(),
        )
    except OSError as e:
        if not fsutil.is_out_of_space(e):
            raise
        # the change is done: say so, and that its record is not
        raise fsutil.OutOfSpace(
            f"{e.strerror} while writing {run}/plan.json: the {what} of {live} WAS applied "
            f"(its backup is in {staging}), but the run stays listed as unfinished"
        ) from None
    return report


def unfinished_runs(backup_root: str) -> list[str]:
    """Backup run directories whose plan never reached "done" (an interrupted
    truncation or recovery: the partition directory was left in its old state, or, if the
    exchange happened, in its new one; the run directory is safe to delete
    after checking)."""
    out: list[str] = []
    if not os.path.isdir(backup_root):
        return out
    for name in sorted(os.listdir(backup_root)):
        pj = os.path.join(backup_root, name, "plan.json")
        try:
            with open_regular(pj, "a plan.json") as f:
                if json.loads(f.read(1 << 24)).get("status") != "done":
                    out.append(os.path.join(backup_root, name))
        except (InputError, ValueError, RecursionError):
            out.append(os.path.join(backup_root, name))
    return out
