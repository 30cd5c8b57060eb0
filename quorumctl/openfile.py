"""Opening an input file: regular files only, never blocking.

Every reader (record batches, indexes, state files, configs) opens through
`open_regular`, so a FIFO, socket or device where a file is expected (or a
symlink to one, such as /dev/zero), a directory named like a file, or a symlink
loop is one InputError line saying what was found, never a hang: the file is
stat'ed before it is opened, and opened with O_NONBLOCK (a FIFO without a
writer would block open(2) forever), then fstat'ed again (it may have been
swapped in between). Symlinks to regular files are followed, as Kafka does.
"""

from __future__ import annotations

import errno
import os
import stat

from .errors import InputError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def what_is(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _refuse(path: str, mode: int, expected: str) -> InputError:
    return InputError(
        f"{path}: is {what_is(mode)}, not a regular file" + ("" if expected == "a file" else f" (expected {expected})")
    )


def _os_error(path: str, e: OSError) -> InputError:
    if e.errno == errno.ENOENT:
        return InputError(f"{path}: no such file")
    if e.errno == errno.ELOOP:
        return InputError(f"{path}: symlink loop (too many levels of symbolic links)")
    return InputError(f"{path}: cannot read: {e.strerror or e}")


def check_regular(path: str, expected: str = "a file") -> os.stat_result:
    """stat `path` (following symlinks): its stat if it is a regular file, else InputError."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise _os_error(path, e) from None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, st.st_mode, expected)
    return st


def open_regular(path: str, expected: str = "a file"):
    """A binary file object for reading `path`, which must be a regular file.
    Raises InputError (one line naming the path and what it is) otherwise."""
    check_regular(path, expected)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise _os_error(path, e) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, st.st_mode, expected)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
