"""Errors that the CLI turns into one line on stderr and a documented exit code."""

EXIT_OK = 0
EXIT_PROBLEMS = 1      # the command worked and found a problem (corruption, lag, mismatch)
EXIT_INPUT = 2         # usage or input error
EXIT_UNREACHABLE = 3   # could not reach or authenticate to the cluster


def at_line(path, line: int, message: str) -> str:
    """The one wording of a problem on a line of a text file: `path:N: message`,
    as compilers, grep and editors write it (and doctor's evidence lines), so a
    terminal or editor can jump to it. Every reader of a text file uses this."""
    return f"{path}:{line}: {message}"


class QuorumctlError(Exception):
    """A failure to report as one line; `exit_code` is what the process exits with."""

    exit_code = EXIT_INPUT

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(QuorumctlError):
    """Bad input: a file that does not decode, a bad option value (exit 2).

    Library modules with a job of their own raise their own subclass
    (storage.format.FormatError, storage.truncate.TruncateError,
    storage.recover.RecoverError), so a caller can tell whose refusal it is;
    the CLI reports every subclass as this: one line, exit 2."""

    exit_code = EXIT_INPUT


class ClusterError(QuorumctlError):
    """The cluster could not be reached, or refused us (exit 3)."""

    exit_code = EXIT_UNREACHABLE
