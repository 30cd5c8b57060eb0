"""One console: every Rich table and live view prints through render.output.console,
which a test can point at a file at a fixed width (no terminal needed)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from quorumctl.render.output import use_console

PACKAGE = Path(__file__).resolve().parents[2] / "quorumctl"


@pytest.fixture
def table_out():
    buf = io.StringIO()
    use_console(buf, width=100)
    yield buf
    use_console(None)


def test_a_table_goes_to_the_injected_console_at_its_width(cli, tmp_path, table_out):
    from quorumctl.testing.examples import write_examples

    write_examples(str(tmp_path))
    d = tmp_path / "diverged"
    r = cli("state", d / "c1", d / "c2", "-o", "table", code=0)
    assert r.out == "" and r.err == ""
    lines = table_out.getvalue().splitlines()
    assert lines[0].strip() == "quorumctl state" and lines[1].startswith("┏")
    assert re.search(r"│ log end +│ 50 +│ 46 +│", table_out.getvalue())
    assert re.search(r"│ vs\. most up to date +│ most up to date +│ prefix: ok +│", table_out.getvalue())
    assert max(map(len, lines)) <= 100
    assert "\x1b[" not in table_out.getvalue()  # a file, not a terminal: no styles


def test_json_and_text_do_not_go_to_the_console(cli, tmp_path, table_out):
    from quorumctl.testing.examples import write_examples

    write_examples(str(tmp_path))
    r = cli("state", tmp_path / "diverged" / "c1", "-o", "json", code=0)
    assert r.json()["replicas"][0]["log_end_offset"] == 50 and table_out.getvalue() == ""


def test_every_rich_console_is_made_by_render_output():
    """No module builds a Console of its own (dump-log's table streams to its sink's
    file, given to it), nor a Live view on Rich's global console."""
    made = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(PACKAGE))
        text = path.read_text()
        if re.search(r"\bConsole\(", text) and rel not in ("render/output.py", "render/dumplog_table.py"):
            made.append(rel)
        for m in re.finditer(r"\bLive\(([^\n]*)", text):
            if "console=" not in m.group(1):
                made.append(f"{rel}: Live without console=")
    assert made == []
