"""One console: every Rich table and live view prints through the printer's console
(render.output.Printer.console), which a test makes on a StringIO at a fixed width (no
terminal needed)."""

from __future__ import annotations

import re
from pathlib import Path

from quorumctl.cli.main import run_captured

PACKAGE = Path(__file__).resolve().parents[2] / "quorumctl"


def test_a_table_goes_to_the_injected_printer_at_its_width(tmp_path):
    from quorumctl.testing.examples import write_examples

    write_examples(str(tmp_path))
    d = tmp_path / "diverged"
    code, out, err = run_captured(["state", d / "c1", d / "c2", "-o", "table"], width=100)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].strip() == "quorumctl state" and lines[1].startswith("┏")
    assert re.search(r"│ log end +│ 50 +│ 46 +│", out)
    assert re.search(r"│ vs\. most up to date +│ most up to date +│ prefix: ok +│", out)
    assert max(map(len, lines)) <= 100
    assert "\x1b[" not in out  # a file, not a terminal: no styles


def test_json_is_one_document_at_any_width(tmp_path):
    from quorumctl.testing.examples import write_examples

    write_examples(str(tmp_path))
    code, out, err = run_captured(["state", tmp_path / "diverged" / "c1", "-o", "json"], width=100)
    import json

    assert (code, err) == (0, "") and json.loads(out)["replicas"][0]["log_end_offset"] == 50


def test_every_rich_console_is_made_by_render_output():
    """No module builds a Console of its own (dump-log's table streams to its sink's
    file, through a printer on it), nor a Live view on Rich's global console."""
    made = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(PACKAGE))
        text = path.read_text()
        if re.search(r"\bConsole\(", text) and rel != "render/output.py":
            made.append(rel)
        for m in re.finditer(r"\bLive\(([^\n]*)", text):
            if "console=" not in m.group(1):
                made.append(f"{rel}: Live without console=")
    assert made == []
