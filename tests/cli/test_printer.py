"""One printing path: commands print through render/output, render/'s other modules only render."""

from __future__ import annotations

import ast
import io
from pathlib import Path

from quorumctl.render import output
from quorumctl.render.output import Output, emit, use_console

PACKAGE = Path(__file__).resolve().parents[2] / "quorumctl"

# cli/main.py is the one place an error that ends a command is reported (and --version, help)
PRINTS_ITSELF = {"cli/main.py"}


def printing(source: str) -> list[str]:
    """What in `source` writes to the terminal or waits: sys.stdout/sys.stderr writes,
    print(), time.sleep(), `while True`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = ast.unparse(f)
            if name in ("sys.stdout.write", "sys.stderr.write", "print", "time.sleep", "sleep"):
                found.append(f"{name} at line {node.lineno}")
        elif isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and node.test.value is True:
            found.append(f"while True at line {node.lineno}")
    return found


def test_the_scan_sees_printing():
    """Not vacuous: what the two tests below must catch is caught."""
    src = (
        "import sys, time\ndef f():\n    sys.stdout.write('x')\n    while True:\n        time.sleep(1)\n"
        "    print('y')\n    sys.stderr.write('z')\n"
    )
    assert sorted(printing(src)) == [
        "print at line 6",
        "sys.stderr.write at line 7",
        "sys.stdout.write at line 3",
        "time.sleep at line 5",
        "while True at line 4",
    ]
    assert printing("def f(out):\n    out.write('x')\n") == []


def test_render_only_renders():
    """render/ turns values into text, renderables and JSON; only output.py writes."""
    found = {
        str(p.relative_to(PACKAGE)): printing(p.read_text())
        for p in sorted((PACKAGE / "render").glob("*.py"))
        if p.name != "output.py"
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_commands_print_through_output():
    found = {
        str(p.relative_to(PACKAGE)): [x for x in printing(p.read_text()) if "sleep" not in x and "while" not in x]
        for p in sorted((PACKAGE / "cli").glob("*.py")) + [PACKAGE / "testing" / "demo.py"]
    }
    assert {k: v for k, v in found.items() if v and k not in PRINTS_ITSELF} == {}


def _table(doc):
    from rich.table import Table

    t = Table(title="T")
    t.add_column("k")
    t.add_column("v")
    for k, v in doc.items():
        t.add_row(k, str(v))
    return t


def test_emit_table_to_an_injected_console(capsys):
    buf = io.StringIO()
    use_console(buf, width=40)
    try:
        emit(Output.table, {"a": 1, "bb": 22}, text=lambda d: "text\n", table=lambda d: [_table(d), _table({})])
    finally:
        use_console(None)
    assert capsys.readouterr().out == ""
    assert buf.getvalue().splitlines() == [
        "     T     ",
        "┏━━━━┳━━━━┓",
        "┃ k  ┃ v  ┃",
        "┡━━━━╇━━━━┩",
        "│ a  │ 1  │",
        "│ bb │ 22 │",
        "└────┴────┘",
        "    T    ",
        "┏━━━┳━━━┓",
        "┃ k ┃ v ┃",
        "┡━━━╇━━━┩",
        "└───┴───┘",
    ]


def test_emit_text_json_and_notes(capsys):
    doc = {"a": 1}
    emit(
        Output.text,
        doc,
        text=lambda d: f"a={d['a']}\n",
        table=_table,
        json=lambda d: {"A": d["a"]},
        notes=lambda d: ["warning: one", "warning: two"],
    )
    assert capsys.readouterr() == ("a=1\n", "warning: one\nwarning: two\n")
    emit(
        Output.json,
        doc,
        text=lambda d: "never\n",
        table=_table,
        json=lambda d: {"A": d["a"]},
        notes=lambda d: ["not with json"],
    )
    assert capsys.readouterr() == ('{"A":1}\n', "")
    emit(Output.json, doc, text=lambda d: "never\n")
    assert capsys.readouterr() == ('{"a":1}\n', "")


def test_emit_without_a_table_prints_text_when_a_table_is_asked(capsys):
    emit(Output.table, ["x", "y"], text=lambda xs: "".join(f"{x}\n" for x in xs))
    assert capsys.readouterr().out == "x\ny\n"


def test_stderr_lines(capsys):
    output.warning("w")
    output.note("n")
    output.error("e")
    output.say("as it is")
    assert capsys.readouterr() == ("", "quorumctl: warning: w\nquorumctl: note: n\nquorumctl: error: e\nas it is\n")


def test_health_watch_frame_renders_without_a_terminal():
    """One --watch frame, as the loop in cli/watch.py hands it to the live view."""
    from quorumctl.domain.health_watch import History, Sample
    from quorumctl.render.quorum import health_watch_doc, history_rows

    h = History()
    h.add(Sample(1_700_000_000.0, "healthy", 1, 4, 200, 210))
    h.add(Sample(1_700_000_002.0, "unreachable", None, None, None, None))
    rows = history_rows(h)
    assert [r[1:] for r in rows] == [["healthy", "1", "4", "200", "210"], ["unreachable", "-", "-", "-", "-"]]

    class Shown:  # health_doc reads these fields
        verdict, reasons, notes, cluster_id, leader_id, leader_epoch, high_watermark = (
            "stalled",
            ["r"],
            [],
            "c",
            1,
            4,
            200,
        )
        voters, majority, caught_up, can_lose, fetch_timeout_ms, timeout_s, elapsed_ms = [], 2, 3, 1, 2000, 5.0, 1.26
        probes, restart, partitions = [], None, None

    doc = health_watch_doc(Shown(), "healthy", h)
    assert (doc["verdict"], doc["sampleVerdict"], doc["elapsedMs"]) == ("stalled", "healthy", 1.3)
    assert [(x["verdict"], x["time"]["ms"], x["highWatermark"]) for x in doc["history"]] == [
        ("healthy", 1_700_000_000_000, 200),
        ("unreachable", 1_700_000_002_000, None),
    ]
