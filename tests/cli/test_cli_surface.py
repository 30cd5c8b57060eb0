"""The CLI as a person first meets it (issue 10): --version, usage errors as one
line, bare commands, the --output values each command really has."""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(cli, flag):
    code, out, err = cli(flag)
    from quorumctl.core import NAME

    assert (code, out, err) == (0, f"quorumctl {version('quorumctl')} (core: {NAME})\n", "")


@pytest.mark.parametrize(
    "args, message",
    [
        (["verfy", "x"], "quorumctl: error: No such command 'verfy'. Did you mean 'verify'? (see 'quorumctl -h')"),
        (["verify", "--bogus", "x"], "quorumctl: error: No such option: --bogus (see 'quorumctl verify -h')"),
        (
            ["describe", "status", "--outptu", "json"],
            "quorumctl: error: No such option: --outptu (Possible options: --output, --status) (see 'quorumctl describe status -h')",
        ),
        (
            ["describe", "status", "-o", "tabel"],
            "quorumctl: error: Invalid value for '--output' / '-o': 'tabel' is not one of 'text', 'table', 'json'. "
            "(see 'quorumctl describe status -h')",
        ),
        (["verify"], "quorumctl: error: Missing argument 'PATH...'. (see 'quorumctl verify -h')"),
        (["truncate"], "quorumctl: error: Missing argument 'LOG_DIR'. (see 'quorumctl truncate -h')"),
        (["spark-export"], "quorumctl: error: Missing argument 'PATH...'. (see 'quorumctl spark-export -h')"),
        (["dump-log"], "quorumctl: error: dump-log needs a FILE_OR_DIR (or --files FILE,...): nothing to dump"),
        (["--debug"], "quorumctl: error: Missing command. (see 'quorumctl -h')"),
    ],
)
def test_usage_error_is_one_line(cli, args, message):
    """No boxed Rich panel, no help dump: one line naming what is wrong, exit 2."""
    code, out, err = cli(*args)
    assert (code, out, err) == (2, "", message + "\n")


@pytest.mark.parametrize(
    "args, first",
    [
        ([], "Usage: quorumctl [OPTIONS] COMMAND [ARGS]..."),
        (["describe"], "Usage: quorumctl describe [OPTIONS] COMMAND [ARGS]..."),
        (["bootstrap"], "Usage: quorumctl bootstrap [OPTIONS] COMMAND [ARGS]..."),
    ],
)
def test_bare_group_prints_its_help(cli, args, first):
    """A group without a command is a request for orientation: its help, exit 0."""
    code, out, err = cli(*args)
    assert (code, err) == (0, "")
    assert out.lstrip().startswith(first), out


@pytest.mark.parametrize(
    "command, args",
    [
        ("truncate", ["somewhere", "--to-offset", "0"]),
        ("bootstrap info", ["--log-dir", "somewhere"]),
        ("bootstrap format", ["--log-dir", "somewhere", "--node-id", "1", "-t", "xScPa4HuQdHtNJ_0TeOP8g"]),
        ("add-controller", ["--bootstrap-controller", "127.0.0.1:1", "--command-config", "c.properties"]),
        ("remove-controller", ["--bootstrap-controller", "127.0.0.1:1", "-i", "3", "-d", "lwoe0T371QW1ZZOn9NBD_A"]),
    ],
)
def test_table_is_refused_where_there_is_none(cli, command, args):
    """These commands print a sentence or a plan: no table is offered, and asking for
    one is a usage error, not silently the text."""
    code, out, err = cli(*command.split(), *args, "-o", "table")
    assert (code, out, err) == (
        2,
        "",
        "quorumctl: error: Invalid value for '--output' / '-o': 'table' is not one "
        f"of 'text', 'json'. (see 'quorumctl {command} -h')\n",
    )
    code, out, err = cli(*command.split(), "-h")
    flat = " ".join(re.sub(r"[│╭╮╰╯─]", " ", out).split())  # Rich's help box, unwrapped
    assert code == 0 and "<text|json>" in out and "text (the default) or json." in flat, out
    assert not re.search(r"\btable\b", out), out


def test_truncate_apply_with_nothing_to_do_is_no_dry_run(cli, tmp_path):
    """node 2's log is a prefix of node 1's: --apply changes nothing, and must not
    call itself a dry run; its verify line is output (stdout), not an error."""
    from quorumctl.testing.examples import write_examples

    write_examples(str(tmp_path))
    c1, c2 = tmp_path / "diverged" / "c1", tmp_path / "diverged" / "c2"
    code, out, err = cli("truncate", str(c2), "--reference", str(c1), "--apply", "-o", "text")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"Truncation plan for {c2}/__cluster_metadata-0 (node 2)",
        "  reason: the log (end offset 46, last epoch 4) is already a prefix of node 1's (end offset 50, last epoch 4)",
        "  nothing to change",
        f"verify {c2}/__cluster_metadata-0: OK",
    ]
    code, out, err = cli("truncate", str(c2), "--reference", str(c1), "-o", "text")
    assert (code, err) == (0, "") and out.splitlines()[0].endswith("(node 2), dry run")


def test_demo_writes_the_readme_example_dirs(cli, tmp_path):
    root = tmp_path / "ex"
    code, out, err = cli("demo", "--write-examples", str(root))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"Wrote {root}/diverged",
        f"Wrote {root}/damaged",
        f"Wrote {root}/crashed",
        f"Run the README's state, truncate and verify examples in {root}.",
    ]
    code, out, err = cli("state", *(str(root / "diverged" / f"c{n}") for n in (1, 2, 3)), "-o", "text")
    assert (
        code == 0
        and "  node 3: diverges from node 1: DivergingEpoch(epoch=2, endOffset=30); truncates to 30" in out.splitlines()
    )
    assert out.splitlines()[-1] == "  node 3: committed below 30; provably uncommitted 30..39 (log end offset 40)"
    code, out, err = cli("verify", str(root / "damaged" / "c2"), "-o", "text")
    assert code == 1 and "crc-mismatch" in out
    # never over what is there
    before = sorted(p.name for p in (root / "diverged").iterdir())
    code, out, err = cli("demo", "--write-examples", str(root))
    assert (code, out, err) == (
        2,
        "",
        f"quorumctl: error: {root}/diverged: already exists; give an empty or new directory\n",
    )
    assert sorted(p.name for p in (root / "diverged").iterdir()) == before


def test_help_paragraphs_are_not_broken_mid_sentence(cli, monkeypatch):
    """Typer's Rich help keeps a docstring's line breaks inside a paragraph, so a docstring
    wrapped at the source's width broke sentences at any other width (`doctor -h`:
    "cannot" / "serve"): every command's help has each paragraph on one line, and Rich
    wraps it to the terminal."""
    from quorumctl.cli.main import root_command

    def walk(command, path):
        yield path, command
        for name, sub in (getattr(command, "commands", None) or {}).items():
            yield from walk(sub, f"{path} {name}")

    broken = [
        path
        for path, c in walk(root_command(), "quorumctl")
        if any("\n" in p for p in (c.help or "").split("\n\n") if not p.startswith("\b"))
    ]
    assert broken == []
    monkeypatch.setenv("COLUMNS", "300")
    code, out, err = cli("doctor", "-h")
    assert (
        code == 0
        and (
            "uncommitted voter changes, settings the cluster's metadata.version cannot serve "
            "(docs/diagnose.md lists every finding)."
        )
        in out
    )


def test_exit_status_table():
    """One table of exit statuses, in the values the README and the man page give."""
    from quorumctl.errors import ExitStatus

    assert {s.name: int(s) for s in ExitStatus} == {
        "OK": 0,
        "PROBLEMS": 1,
        "USAGE": 2,
        "UNREACHABLE": 3,
        "INTERNAL": 4,
        "INTERRUPTED": 130,
    }
    assert (ExitStatus.of([]), ExitStatus.of(["x"]), ExitStatus.of(None), ExitStatus.of("refused")) == (0, 1, 0, 1)


def test_an_internal_error_is_one_line_and_its_own_code(cli, tmp_path, monkeypatch):
    """A bug is not a usage error: exit 4, one line naming it; --debug shows the traceback."""
    from quorumctl.raft import replica

    def broken(*a, **k):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(replica, "load_replica", broken)
    (tmp_path / "__cluster_metadata-0").mkdir()
    code, out, err = cli("state", tmp_path)
    assert (code, out) == (4, "")
    assert err == (
        "quorumctl: internal error: ZeroDivisionError: division by zero (rerun with --debug for the traceback)\n"
    )


def test_a_refused_voter_change_exits_1_not_3():
    """The quorum's refusal of AddRaftVoter/RemoveRaftVoter is a refusal (1), raised as one;
    an unreachable quorum stays 3."""
    from quorumctl.errors import ClusterError, ExitStatus, Refused
    from quorumctl.wire.kerrors import KafkaError
    from quorumctl.live.membership.voters import _refusal

    dup = KafkaError(
        next(c for c, n in _codes().items() if n == "DUPLICATE_VOTER"),
        "voter 2 is already a voter",
        "127.0.0.1:9093",
        "AddRaftVoter",
    )
    r = _refusal(dup)
    assert isinstance(r, Refused) and r.exit_code == ExitStatus.PROBLEMS and str(r) == str(dup)
    assert dup.exit_code == ExitStatus.UNREACHABLE  # the error itself is not rewritten
    assert _refusal(ClusterError("cannot connect")) is None


def _codes() -> dict:
    from quorumctl.wire import kerrors

    return {c: kerrors.error_name(c) for c in range(-1, 130)}


def test_each_command_runs_on_its_branch_of_the_same_tree(monkeypatch):
    """main() builds only the branch of the command named first (a fifth of `verify`'s CPU
    was Typer building the whole tree): every branch is the whole tree's subtree, the same
    commands, options, defaults and help, and the whole tree is used when no command comes
    first (root options, a Kafka-style option, a mistyped name, shell completion)."""
    from quorumctl.cli.main import command_for, root_command

    def shape(command, path=()):
        params = [(p.name, p.opts, p.secondary_opts, repr(p.default), p.required) for p in command.params]
        yield path, command.help, params
        for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
            yield from shape(sub, (*path, name))

    root = root_command()
    assert len(root.commands) >= 20
    for name, whole in root.commands.items():
        branch = command_for([name, "-h"])
        assert branch is not root and list(branch.commands) == [name]
        assert [p.name for p in branch.params] == [p.name for p in root.params]
        assert list(shape(branch.commands[name])) == list(shape(whole)), name
    for args in ([], ["-h"], ["--version"], ["--bootstrap-server", "x", "describe"], ["verfy", "x"]):
        assert command_for(args) is root, args
    monkeypatch.setenv("_QUORUMCTL_COMPLETE", "bash_complete")
    assert command_for(["verify"]) is root
