"""The CLI as a person first meets it (issue 10): --version, usage errors as one
line, bare commands, the --output values each command really has."""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest

from storage_cli import cli


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    code, out, err = cli(flag)
    assert (code, out, err) == (0, f"quorumctl {version('quorumctl')}\n", "")


@pytest.mark.parametrize("args, message", [
    (["verfy", "x"], "quorumctl: error: No such command 'verfy'. Did you mean 'verify'? (see 'quorumctl -h')"),
    (["verify", "--bogus", "x"], "quorumctl: error: No such option: --bogus (see 'quorumctl verify -h')"),
    (["describe", "status", "--outptu", "json"],
     "quorumctl: error: No such option: --outptu (Possible options: --output) (see 'quorumctl describe status -h')"),
    (["describe", "status", "-o", "tabel"],
     "quorumctl: error: Invalid value for '--output' / '-o': 'tabel' is not one of 'text', 'table', 'json'. "
     "(see 'quorumctl describe status -h')"),
    (["verify"], "quorumctl: error: Missing argument 'PATH...'. (see 'quorumctl verify -h')"),
    (["truncate"], "quorumctl: error: Missing argument 'LOG_DIR'. (see 'quorumctl truncate -h')"),
    (["spark-export"], "quorumctl: error: Missing argument 'PATH...'. (see 'quorumctl spark-export -h')"),
    (["dump-log"], "quorumctl: error: dump-log needs a FILE_OR_DIR (or --files FILE,...): nothing to dump"),
    (["--debug"], "quorumctl: error: Missing command. (see 'quorumctl -h')"),
])
def test_usage_error_is_one_line(args, message):
    """No boxed Rich panel, no help dump: one line naming what is wrong, exit 2."""
    code, out, err = cli(*args)
    assert (code, out, err) == (2, "", message + "\n")


@pytest.mark.parametrize("args, first", [
    ([], "Usage: quorumctl [OPTIONS] COMMAND [ARGS]..."),
    (["describe"], "Usage: quorumctl describe [OPTIONS] COMMAND [ARGS]..."),
    (["bootstrap"], "Usage: quorumctl bootstrap [OPTIONS] COMMAND [ARGS]..."),
])
def test_bare_group_prints_its_help(args, first):
    """A group without a command is a request for orientation: its help, exit 0."""
    code, out, err = cli(*args)
    assert (code, err) == (0, "")
    assert out.lstrip().startswith(first), out


@pytest.mark.parametrize("command, args", [
    ("truncate", ["somewhere", "--to-offset", "0"]),
    ("bootstrap info", ["--log-dir", "somewhere"]),
    ("bootstrap format", ["--log-dir", "somewhere", "--node-id", "1", "-t", "xScPa4HuQdHtNJ_0TeOP8g"]),
    ("add-controller", ["--bootstrap-controller", "127.0.0.1:1", "--command-config", "c.properties"]),
    ("remove-controller", ["--bootstrap-controller", "127.0.0.1:1", "-i", "3", "-d", "lwoe0T371QW1ZZOn9NBD_A"]),
])
def test_table_is_refused_where_there_is_none(command, args):
    """These commands print a sentence or a plan: no table is offered, and asking for
    one is a usage error, not silently the text."""
    code, out, err = cli(*command.split(), *args, "-o", "table")
    assert (code, out, err) == (2, "", "quorumctl: error: Invalid value for '--output' / '-o': 'table' is not one "
                                       f"of 'text', 'json'. (see 'quorumctl {command} -h')\n")
    code, out, err = cli(*command.split(), "-h")
    assert code == 0 and "<text|json>" in out and "text or json." in out and not re.search(r"\btable\b", out), out
