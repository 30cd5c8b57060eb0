"""Errors that the CLI turns into one line on stderr, and the exit statuses: the
one table of them (the README and the man page list it)."""

from enum import IntEnum


class ExitStatus(IntEnum):
    """Every status a quorumctl process exits with."""

    OK = 0  # did what was asked, found nothing wrong
    PROBLEMS = 1  # worked and found a problem (corruption, lag, a refused change)
    USAGE = 2  # usage or input error (a bad option, an undecodable file)
    UNREACHABLE = 3  # the cluster could not be reached, or refused us
    INTERNAL = 4  # a bug in quorumctl (--debug shows the traceback)
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)

    @classmethod
    def of(cls, problems) -> "ExitStatus":
        """PROBLEMS when `problems` is true (a non-empty list, a refusal), else OK."""
        return cls.PROBLEMS if problems else cls.OK


def at_line(path, line: int, message: str) -> str:
    """The one wording of a problem on a line of a text file: `path:N: message`,
    as compilers, grep and editors write it (and doctor's evidence lines), so a
    terminal or editor can jump to it. Every reader of a text file uses this."""
    return f"{path}:{line}: {message}"


class QuorumctlError(Exception):
    """A failure to report as one line; `exit_code` is what the process exits with."""

    exit_code: int = ExitStatus.USAGE

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(QuorumctlError):
    """Bad input: a file that does not decode, a bad option value (exit 2).

    Library modules with a job of their own raise their own subclass
    (versions.FormatError, ops.truncate.TruncateError,
    ops.recover.RecoverError), so a caller can tell whose refusal it is;
    the CLI reports every subclass as this: one line, exit 2."""

    exit_code = ExitStatus.USAGE


class ClusterError(QuorumctlError):
    """The cluster could not be reached, or refused us (exit 3)."""

    exit_code = ExitStatus.UNREACHABLE


class Refused(QuorumctlError):
    """A change refused, by quorumctl because it would be unsafe or by the cluster;
    nothing was changed (exit 1)."""

    exit_code = ExitStatus.PROBLEMS
