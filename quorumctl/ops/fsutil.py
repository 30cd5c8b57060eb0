"""Crash-safe file system steps and Kafka's log-dir lock.

Every change quorumctl makes to a log dir goes through here:
- `atomic_write`: write `<name>.tmp`, fsync it, rename over `<name>`, fsync
  the directory (what Kafka does for meta.properties, quorum-state and
  checkpoints), so a crash leaves the old file or the new one.
- `exchange`: Linux renameat2(RENAME_EXCHANGE), swapping two directories in one
  atomic step; truncation builds the new partition directory beside the backup
  and swaps it in, so the partition directory is always wholly old or wholly new.
- `LogDirLock`: the POSIX record lock Kafka takes on `<dir>/.lock`
  (FileChannel.tryLock is fcntl F_SETLK on Linux; flock would not see it),
  held through one descriptor for the whole operation.

`step(name)` marks each durable step. Tests use it to crash the process at
step N (environment variable QUORUMCTL_TEST_CRASH_AT_STEP=N: the process exits
at once with status 86, as a kill would leave it) or to inject an exception
(`set_fault_hook`), proving that every step leaves the old or the new state.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from typing import Callable, TypedDict

from ..errors import QuorumctlError, Refused
from ..openfile import open_regular

CRASH_ENV = "QUORUMCTL_TEST_CRASH_AT_STEP"
CRASH_EXIT = 86


class _Steps(TypedDict):
    n: int  # steps taken since the hook was set
    hook: Callable[[int, str], None] | None
    log: list[str]  # their names


_steps: _Steps = {"n": 0, "hook": None, "log": []}


def set_fault_hook(hook) -> None:
    """hook(step_number, step_name) is called at every step (None to clear);
    raising from it simulates a failure at that point."""
    _steps["hook"] = hook
    _steps["n"] = 0
    _steps["log"] = []


def steps_taken() -> list[str]:
    return list(_steps["log"])


def step(name: str) -> None:
    """A durable step is about to happen (crash-test hook point)."""
    _steps["n"] += 1
    n = _steps["n"]
    _steps["log"].append(name)
    crash_at = os.environ.get(CRASH_ENV)
    if crash_at and crash_at.isdigit() and int(crash_at) == n:
        os._exit(CRASH_EXIT)
    hook = _steps["hook"]
    if hook is not None:
        hook(n, name)


# errno values that mean "the file system is full" (for this user or this file)
_NO_SPACE = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large for the file system",
}


def is_out_of_space(e: OSError) -> bool:
    return e.errno in _NO_SPACE


class OutOfSpace(QuorumctlError):
    """A write ran out of space; the caller has undone its own partial work (exit 2)."""


@contextlib.contextmanager
def out_of_space(target: str, undo=None):
    """Turn a full file system (ENOSPC, EDQUOT, EFBIG) inside the block into one
    OutOfSpace line: what ran out, which file, that `target` was not changed.
    `undo()` removes the block's partial work first (staging files, a run dir)."""
    try:
        yield
    except OSError as e:
        if e.errno not in _NO_SPACE:
            raise
        if undo is not None:
            undo()
        where = e.filename or target
        detail = f": {e.strerror}" if e.strerror and e.strerror != os.strerror(e.errno) else ""
        raise OutOfSpace(
            f"{_NO_SPACE[e.errno]} ({errno.errorcode[e.errno]}{detail}) while writing {where}: nothing was "
            f"changed in {target} (the partial copies were removed); free space on that file "
            "system and run again"
        ) from None


def fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_synced(path: str, data: bytes, mode: int = 0o644) -> None:
    """Create or replace `path` with `data` and fsync it (no rename: callers
    use this only for files nobody reads yet). A file left there by an interrupted run
    (a read-only snapshot's .part, 0400) is removed first: opening it for writing would
    fail for anyone but root, and a new file gets `mode`."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    except OSError as e:  # name the file (os.write does not)
        raise OSError(e.errno, e.strerror, path) from None
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes, tmp_suffix: str = ".tmp", mode: int = 0o644) -> None:
    """Write new, fsync, rename over the old, fsync the directory."""
    tmp = path + tmp_suffix
    step(f"write {tmp}")
    write_synced(tmp, data, mode)
    step(f"rename {tmp} -> {path}")
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(os.path.abspath(path)))


def copy_prefix(src: str, dst: str, length: int) -> None:
    """Copy the first `length` bytes of `src` into a new file `dst`, fsynced."""
    with open_regular(src) as fi, open(dst, "wb") as fo:
        try:
            left = length
            while left > 0:
                chunk = fi.read(min(left, 1 << 20))
                if not chunk:
                    raise QuorumctlError(f"{src}: file shorter than the {length} bytes expected")
                fo.write(chunk)
                left -= len(chunk)
            fo.flush()
            os.fsync(fo.fileno())
        except OSError as e:  # name the file being written
            raise OSError(e.errno, e.strerror, dst) from None


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_libc = None


def exchange(a: str, b: str) -> None:
    """Atomically swap the directory entries `a` and `b` (both must exist, on
    one file system). Raises OSError (ENOSYS/EINVAL when unsupported, EXDEV
    across file systems)."""
    import ctypes  # here, not at the top: readers import this module too

    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    fn = getattr(_libc, "renameat2", None)
    if fn is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available on this system")
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot exchange {a} and {b}: {os.strerror(err)}")


class LockHeld(Refused):
    """Another process (a running Kafka) holds the lock (exit 1: nothing was changed)."""


class LogDirLock:
    """Kafka's lock on `<dir>/.lock`: fcntl.lockf(LOCK_EX | LOCK_NB) through one
    descriptor kept open until release (closing any descriptor of the file
    would drop a POSIX lock, so the file is opened exactly once here).

    A leftover `.lock` that nobody holds (Kafka leaves it after a clean
    shutdown) does not block; the file is created when missing, as Kafka does."""

    def __init__(self, directory: str):
        self.directory = directory
        self.path = os.path.join(directory, ".lock")
        self.fd: int | None = None

    def acquire(self) -> "LogDirLock":
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            if e.errno not in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.ENOENT):
                raise
            from ..errors import InputError

            raise InputError(
                f"cannot open {self.path} to take Kafka's lock ({e.strerror}): {self.directory} is not a "
                "directory this user can write in (a read-only mount, another user's files); nothing was changed"
            ) from None
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EAGAIN, errno.EACCES):
                raise LockHeld(
                    f"Failed to acquire lock on file .lock in {self.directory}. A Kafka instance in "
                    "another process or thread is using this directory. Stop that Kafka process "
                    "(broker or controller) before changing its files offline."
                ) from None
            raise
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            try:
                fcntl.lockf(self.fd, fcntl.LOCK_UN)
            finally:
                os.close(self.fd)
                self.fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def lock_holder(directory: str) -> int | None:
    """The pid holding a POSIX write lock on `<dir>/.lock`, if any (read-only
    probe through F_GETLK; None when free, missing, or not determinable)."""
    path = os.path.join(directory, ".lock")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        import struct

        # struct flock on Linux x86-64/aarch64: short l_type, short l_whence, off_t l_start,
        # off_t l_len, pid_t l_pid (+ padding)
        fmt = "hhqqi4x"
        req = struct.pack(fmt, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        try:
            res = fcntl.fcntl(fd, fcntl.F_GETLK, req)
        except OSError:
            return None
        l_type, _wh, _st, _ln, pid = struct.unpack(fmt, res)
        return pid if l_type != fcntl.F_UNLCK else None
    finally:
        os.close(fd)
