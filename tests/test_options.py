"""Each option that several commands take is declared once (cli/options.py): no
command declares --output, --bootstrap-server/-controller, --command-config,
--timeout, --apply, --backup-dir or --config by hand, and every command that
takes one shows the same help text for it."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "quorumctl" / "cli"
SHARED = {"--output", "--bootstrap-server", "--bootstrap-controller", "--command-config", "--timeout", "--apply",
          "--backup-dir", "--config"}


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


def test_one_help_text_per_shared_option():
    """Across the whole command tree, as click sees it (what -h prints)."""
    import typer.main

    from quorumctl.cli.main import app
    helps: dict[str, set[str]] = {}

    def walk(cmd):
        for p in getattr(cmd, "params", []):
            for flag in p.opts:
                if flag in SHARED and flag != "--timeout":
                    helps.setdefault(flag, set()).add(p.help)
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)
    walk(typer.main.get_command(app))
    assert set(helps) == SHARED - {"--timeout"}
    many = {f: h for f, h in helps.items() if len(h) > 1}
    # --output: text/table/json where a table exists, text/json elsewhere; --config: one file or several
    assert set(many) <= {"--output", "--config"} and all(len(h) == 2 for h in many.values()), many
