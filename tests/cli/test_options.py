"""Each option that several commands take is declared once (cli/options.py): no
command declares --output, --bootstrap-server/-controller, --command-config,
--timeout, --apply, --backup-dir, --config, --dry-run, --release-version,
--at-offset or --at-time by hand, and every command that takes one shows the same
help text for it; no other flag is declared by hand in two places unless it is a
different option under the same name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[2] / "quorumctl" / "cli"
SHARED = {
    "--output",
    "--bootstrap-server",
    "--bootstrap-controller",
    "--command-config",
    "--timeout",
    "--apply",
    "--backup-dir",
    "--config",
    "--dry-run",
    "--release-version",
    "--at-offset",
    "--at-time",
}
# Flags two commands declare by hand because they are different options under one name
# (a different value or meaning in each), with why.
SAME_NAME_OTHER_OPTION = {
    "--snapshot": "image's --snapshot FILE (one more source, the path after it still a PATH) vs shell's "
    "--snapshot FILE (the only source: every word after the options is the command, as kafka-metadata-shell)",
    "--topic": "history's --topic NAME (one topic's history) vs topics describe's --topic REGEX (kafka-topics')",
    "--out": "bundle's --out FILE.tar.gz (the archive) vs spark-export's --out OUT (a directory or URI)",
    "--feature": "history's --feature NAME (one feature's history) vs features disable's --feature NAME (a "
    "feature to take to level 0; upgrade/downgrade's is the shared NAME=LEVEL)",
    "--node-id": "bootstrap format's --node-id (the node.id to format with) vs features describe's --node-id (the "
    "node to ask, kafka-features')",
    "--log-dir": "bootstrap format's dirs to format instead of the config's vs bootstrap info's dirs to check "
    "besides the config's",
    "--id": "cluster unregister's --id (a broker, kafka-cluster unregister's) vs cluster unregister-controller's "
    "--id (a controller, Kafka 4.4's)",
    "--endpoint": "replace-controller's --endpoint NAME://HOST:PORT (the one controller's listeners, sent with "
    "AddRaftVoter) vs voters set-endpoints' --endpoint ID=LISTENER://HOST:PORT (any voter's new "
    "endpoint, written offline)",
}


def test_no_shared_option_is_declared_outside_options_py():
    by_hand = []
    for path in sorted(CLI.glob("*.py")):
        if path.name == "options.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Option":
                flags = {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
                if flags & SHARED:
                    by_hand.append(f"{path.name}:{node.lineno}: {sorted(flags & SHARED)}")
    assert by_hand == []


def _by_hand() -> dict[str, list[str]]:
    """flag -> where a typer.Option declares it by hand (file:line)."""
    out: dict[str, list[str]] = {}
    for path in sorted(CLI.glob("*.py")):
        if path.name == "options.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Option":
                for a in node.args:
                    if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"):
                        out.setdefault(a.value, []).append(f"{path.name}:{node.lineno}")
    return out


def test_no_option_is_declared_by_hand_twice():
    """An option two commands take is declared once, in options.py; the flags left
    declared in several places are the listed ones, each a different option per command."""
    twice = {flag: where for flag, where in _by_hand().items() if len(where) > 1}
    assert set(twice) == set(SAME_NAME_OTHER_OPTION), twice


def test_one_help_text_per_shared_option():
    """Across the whole command tree, as click sees it (what -h prints)."""
    from quorumctl.cli.main import root_command

    helps: dict[str, set[str]] = {}

    def walk(cmd):
        for p in getattr(cmd, "params", []):
            for flag in p.opts:
                if flag in SHARED and flag != "--timeout":
                    helps.setdefault(flag, set()).add(p.help)
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(root_command())
    assert set(helps) == SHARED - {"--timeout"}
    many = {f: h for f, h in helps.items() if len(h) > 1}
    # --output: text/table/json where a table exists, text/json elsewhere; --config: one file or several
    assert set(many) <= {"--output", "--config"} and all(len(h) == 2 for h in many.values()), many


def _bounded_options():
    """(command words, flag, the callback) of every option whose value options.py bounds."""
    from quorumctl.cli import options
    from quorumctl.cli.main import root_command

    found = []

    def walk(cmd, path):
        for p in cmd.params:
            check = getattr(p.callback, "__wrapped__", None)  # Typer wraps the callback it is given
            if check in (options.positive, options.positive_seconds, options.non_negative):
                found.append((tuple(path), p.opts[0], check))
            elif p.metavar == "SECONDS":
                found.append((tuple(path), p.opts[0], None))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, path + [name])

    walk(root_command(), [])
    return found


def test_every_seconds_option_is_bounded_where_it_is_parsed():
    """Each option of seconds, and the counts that must be positive, take their check from
    options.py (no command or protocol module checks them by hand any more)."""
    bounded = _bounded_options()
    assert [(path, flag) for path, flag, check in bounded if check is None] == []
    assert {flag for _, flag, _ in bounded} == {
        "--timeout",
        "--interval",
        "--watch",
        "--samples",
        "--flapping-epochs",
        "--fetch-timeout-ms",
        "--partition-size-limit-per-response",
        "--grace",
    }
    assert len(bounded) == 43
    by_hand = []
    for path in sorted(CLI.parents[0].rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if ("must be positive" in line or "must be a positive" in line) and path.name != "options.py":
                by_hand.append(f"{path.relative_to(CLI.parents[0])}:{n}")
    # left by design: the fetch timeout may come from the server config, not the option;
    # dump/ and spark/plan.py check values that are not options (sizes in a file, a split size)
    allowed = ("live/health/probe.py", "live/automation/node_probe.py", "spark/plan.py")
    assert [w for w in by_hand if not w.startswith(allowed)] == []


@pytest.mark.parametrize(
    "path,flag,check",
    _bounded_options(),
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else v if isinstance(v, str) else "",
)
def test_a_bounded_option_refuses_a_bad_value_with_one_line(cli, path, flag, check):
    """Exit 2 and one line, at parse time (so before a command's other checks)."""
    from quorumctl.cli import options

    bad, rule = {
        options.positive: ("0", "must be positive, not 0"),
        options.positive_seconds: ("0", "must be a positive number of seconds, not 0"),
        options.non_negative: ("-1", "must not be negative, not -1"),
    }[check]
    r = cli(*path, f"{flag}={bad}", code=2)
    assert (r.out, r.err) == ("", f"quorumctl: error: {flag} {rule}\n")


@pytest.mark.parametrize(
    "args,flag",
    [
        (["describe", "health", "--can-restart"], "--can-restart"),
        (["wait", "can-restart", "--"], "node id"),
        (["recover", "/nonexistent", "--lost-voters"], "--lost-voters"),
        (["recover", "/nonexistent", "--lost-voters", "2", "--force-lost"], "--force-lost"),
        (["recover", "/nonexistent", "--lost-voters", "2", "--no-replica"], "--no-replica"),
    ],
)
@pytest.mark.parametrize(
    "value,why",
    [
        ("2,x", "'x': expected a node id (an integer)"),
        ("2,,3", "'': expected a node id (an integer)"),
        ("-1", "'-1': a node id is not negative"),
    ],
)
def test_node_id_lists_are_parsed_one_way(cli, args, flag, value, why):
    """One parser of node-id lists (options.parse_node_ids) for every option that takes one."""
    r = cli(*args, value, code=2)
    assert r.err == f"quorumctl: error: invalid {flag} {why}\n"


def test_parse_node_ids_keeps_the_order_given_and_drops_repeats():
    from quorumctl.cli.options import parse_node_ids

    assert parse_node_ids(["3,1", "2", " 1 "], "--can-restart") == [3, 1, 2]
    assert parse_node_ids("4, 2,4", "--lost-voters") == [4, 2]
    assert parse_node_ids(None, "--can-restart") == []


def test_every_group_is_built_by_the_one_factory():
    """Each command group takes -h and prints its help when given no command; only
    options.group (and the root app in main.py) build a typer.Typer."""
    from quorumctl.cli.main import root_command

    groups = {name: cmd for name, cmd in root_command().commands.items() if hasattr(cmd, "commands")}
    assert sorted(groups) == ["bootstrap", "cluster", "describe", "features", "migrate-quorum", "topics", "voters"]
    for name, cmd in groups.items():
        assert (cmd.no_args_is_help, cmd.context_settings) == (True, {"help_option_names": ["-h", "--help"]}), name
    built = [p.name for p in sorted(CLI.glob("*.py")) for line in p.read_text().splitlines() if "typer.Typer(" in line]
    assert built == ["main.py", "options.py"]


def test_cli_annotations_are_evaluated_once():
    """No cli module postpones its annotations: Typer would compile every Annotated
    option's text again while building the command tree, at every start."""
    late = [
        p.name for p in sorted(CLI.glob("*.py")) if "from __future__ import annotations" in p.read_text().splitlines()
    ]
    assert late == []
