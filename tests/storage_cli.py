"""Helpers for the storage command tests: run the `quorumctl` entry point in
process (same exit-code handling as the installed script, without a
subprocess per call) and check that `quorumctl verify` is clean."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sys

import pytest


def cli(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `quorumctl ARGS...`."""
    from quorumctl.cli import main as M

    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["quorumctl", *map(str, args)]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            M.main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()


def assert_verify_clean(path) -> None:
    """`quorumctl verify PATH` exits 0 (skips only while verify is not registered)."""
    from quorumctl.cli import main as M

    if "verify" not in M.COMMAND_MODULES:
        pytest.skip("the verify command is not registered yet")
    from quorumctl.errors import InputError
    from quorumctl.storage import filekinds
    try:
        filekinds.log_dir_files([str(path)])
    except InputError:
        return   # only temporary files (an interrupted write): verify refuses such a dir, nothing to check
    code, out, err = cli("verify", "-o", "text", str(path))
    assert code == 0, out + err


def tree(path) -> dict[str, str]:
    """relative path -> sha256 of every file under `path` (the state of a directory),
    ignoring Kafka's empty .lock files (taking the lock creates one, as Kafka does)."""
    out = {}
    for root, _dirs, files in os.walk(path):
        for f in files:
            if f == ".lock":
                continue
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = hashlib.sha256(fh.read()).hexdigest()
    return out
