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

CLI = Path(__file__).resolve().parents[1] / "quorumctl" / "cli"
SHARED = {"--output", "--bootstrap-server", "--bootstrap-controller", "--command-config", "--timeout", "--apply",
          "--backup-dir", "--config", "--dry-run", "--release-version", "--at-offset", "--at-time"}
# Flags two commands declare by hand because they are different options under one name
# (a different value or meaning in each), with why.
SAME_NAME_OTHER_OPTION = {
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


@pytest.mark.parametrize("args,flag", [
    (["describe", "health", "--can-restart"], "--can-restart"),
    (["wait", "can-restart", "--"], "node id"),
    (["recover", "/nonexistent", "--lost-voters"], "--lost-voters"),
    (["recover", "/nonexistent", "--lost-voters", "2", "--force-lost"], "--force-lost"),
    (["recover", "/nonexistent", "--lost-voters", "2", "--no-replica"], "--no-replica")])
@pytest.mark.parametrize("value,why", [
    ("2,x", "'x': expected a node id (an integer)"),
    ("2,,3", "'': expected a node id (an integer)"),
    ("-1", "'-1': a node id is not negative")])
def test_node_id_lists_are_parsed_one_way(cli, args, flag, value, why):
    """One parser of node-id lists (options.parse_node_ids) for every option that takes one."""
    r = cli(*args, value, code=2)
    assert r.err == f"quorumctl: error: invalid {flag} {why}\n"


def test_parse_node_ids_keeps_the_order_given_and_drops_repeats():
    from quorumctl.cli.options import parse_node_ids
    assert parse_node_ids(["3,1", "2", " 1 "], "--can-restart") == [3, 1, 2]
    assert parse_node_ids("4, 2,4", "--lost-voters") == [4, 2]
    assert parse_node_ids(None, "--can-restart") == []
