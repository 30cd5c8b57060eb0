"""One printer: every write goes through a `render.output.Printer` that cli/main makes and
hands to the command; render/'s other modules only render."""

from __future__ import annotations

import ast
import io
import sys
from pathlib import Path

import pytest

from quorumctl.render.output import Output, Printer

PACKAGE = Path(__file__).resolve().parents[2] / "quorumctl"

# The printer's module, and the deliberate exceptions: what each may do, and why.
PRINTER = "render/output.py"
EXCEPTIONS = {
    # click and Typer print --help and a bare group's help to sys.stdout themselves: while
    # they run, main points sys.stdout and sys.stderr at the printer's streams
    "cli/main.py": ["redirect_stderr", "redirect_stdout"],
    # while the JVM starts, its stdout and stderr (fds 1 and 2, which it writes itself) are
    # a pipe we filter: Python's own buffered streams are flushed before the fds move
    "spark/session.py": ["os.dup(fd 1|2)", "os.dup2(fd 1|2)", "sys.stderr", "sys.stdout"],
}

_STREAMS = ("sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__")
_FD_CALLS = ("os.write", "os.dup", "os.dup2", "os.fdopen")
_TRACEBACK = ("traceback.print_exc", "traceback.print_exception", "traceback.print_stack", "traceback.print_tb")


def writes(source: str) -> list[str]:
    """What in `source` writes to the terminal past a printer: print(), echo(), the
    process's streams named, redirected, or reached by fd number, a traceback printed
    where it likes, and a "quorumctl: ..." line made anywhere but `output.tagged`."""
    found = []
    tree = ast.parse(source)
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and ast.unparse(node) in _STREAMS:
            found.append(ast.unparse(node))
        elif isinstance(node, ast.Name) and node.id in ("redirect_stdout", "redirect_stderr"):
            found.append(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in ("redirect_stdout", "redirect_stderr"):
            found.append(node.attr)
        elif isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in ("print", "rprint", "rich.print", "pprint", "pprint.pprint") or name.split(".")[-1] in (
                "echo",
                "secho",
            ):
                found.append(f"{name}()")
            elif name in _TRACEBACK and not any(k.arg == "file" for k in node.keywords):
                found.append(f"{name}() without file=")
            elif name in _FD_CALLS and any(isinstance(a, ast.Constant) and a.value in (1, 2) for a in node.args):
                found.append(f"{name}(fd 1|2)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if not node.value.startswith("quorumctl: "):
                continue
            found.append("a 'quorumctl: ' line")
    return found


def test_the_scan_sees_every_way_past_the_printer():
    """Not vacuous: what the rule below must catch is caught, and a printer's writes are not."""
    src = (
        '"""quorumctl: a docstring is no line of output."""\n'
        "import sys, os, traceback, contextlib, typer\n"
        "def f(printer):\n"
        "    sys.stdout.write('x')\n"
        "    print('y')\n"
        "    sys.stderr.flush()\n"
        "    w = sys.__stderr__\n"
        "    typer.echo('z')\n"
        "    os.write(2, b'z')\n"
        "    traceback.print_exc()\n"
        "    traceback.print_exc(file=printer.stderr)\n"
        "    with contextlib.redirect_stdout(None):\n"
        "        pass\n"
        "    printer.error(f'quorumctl: {w}')\n"
        "    printer.write('x'); printer.say('quorumctl serve: up')\n"
    )
    assert sorted(writes(src)) == sorted(
        [
            "sys.stdout",
            "print()",
            "sys.stderr",
            "sys.__stderr__",
            "typer.echo()",
            "os.write(fd 1|2)",
            "traceback.print_exc() without file=",
            "redirect_stdout",
            "a 'quorumctl: ' line",
        ]
    )


def test_every_write_goes_through_the_printer():
    """The rule: outside render/output.py, no module writes to the terminal by itself; the
    exceptions above are exactly what their modules do."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(PACKAGE))
        if rel != PRINTER:
            seen = sorted(set(writes(path.read_text())))
            if seen:
                found[rel] = seen
    assert found == EXCEPTIONS


def test_render_only_renders():
    """render/ turns values into text, renderables and JSON: no module there but the
    printer's sleeps or loops forever."""
    found = {}
    for p in sorted((PACKAGE / "render").glob("*.py")):
        if p.name == "output.py":
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("time.sleep", "sleep"):
                found.setdefault(p.name, []).append(node.lineno)
            elif isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and node.test.value is True:
                found.setdefault(p.name, []).append(node.lineno)
    assert found == {}


def _table(doc):
    from rich.table import Table

    t = Table(title="T")
    t.add_column("k")
    t.add_column("v")
    for k, v in doc.items():
        t.add_row(k, str(v))
    return t


def _printer(**kw) -> Printer:
    return Printer(io.StringIO(), io.StringIO(), **kw)


def _got(p: Printer) -> tuple[str, str]:
    return p.stdout.getvalue(), p.stderr.getvalue()


def test_emit_table_at_the_printers_width(capsys):
    p = _printer(width=40)
    p.emit(Output.table, {"a": 1, "bb": 22}, text=lambda d: "text\n", table=lambda d: [_table(d), _table({})])
    assert capsys.readouterr() == ("", "")  # nothing past the printer
    out, err = _got(p)
    assert err == ""
    assert out.splitlines() == [
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


def test_emit_text_json_and_notes():
    doc = {"a": 1}
    p = _printer()
    p.emit(
        Output.text,
        doc,
        text=lambda d: f"a={d['a']}\n",
        table=_table,
        json=lambda d: {"A": d["a"]},
        notes=lambda d: ["warning: one", "warning: two"],
    )
    assert _got(p) == ("a=1\n", "warning: one\nwarning: two\n")
    p = _printer()
    p.emit(
        Output.json,
        doc,
        text=lambda d: "never\n",
        table=_table,
        json=lambda d: {"A": d["a"]},
        notes=lambda d: ["not with json"],
    )
    assert _got(p) == ('{"A":1}\n', "")
    p = _printer()
    p.emit(Output.json, doc, text=lambda d: "never\n")
    assert _got(p) == ('{"a":1}\n', "")


def test_emit_without_a_table_prints_text_when_a_table_is_asked():
    p = _printer()
    p.emit(Output.table, ["x", "y"], text=lambda xs: "".join(f"{x}\n" for x in xs))
    assert _got(p) == ("x\ny\n", "")


def test_the_default_format_follows_the_printers_stdout():
    """No --output: a table where stdout is a terminal, else text (json only when asked);
    a command without a table prints text either way."""
    assert _printer().resolve(None) is Output.text
    assert _printer(stdout_isatty=True).resolve(None) is Output.table
    assert _printer(stdout_isatty=True).resolve_plain(None) is Output.text
    assert _printer(stdout_isatty=True).resolve("json") is Output.json


def test_stderr_lines():
    p = _printer()
    p.warning("w")
    p.note("n")
    p.error("e")
    p.tell("interrupted")
    p.say("as it is")
    assert _got(p) == (
        "",
        "quorumctl: warning: w\nquorumctl: note: n\nquorumctl: error: e\nquorumctl: interrupted\nas it is\n",
    )


def test_main_writes_through_the_printer_it_is_handed(capsys, monkeypatch):
    """main(printer): the result, click's help and the error line all land in the printer's
    streams; nothing reaches the process's."""
    from quorumctl.cli.main import main

    def run(*args) -> tuple[int, str, str]:
        p = _printer()
        monkeypatch.setattr(sys, "argv", ["quorumctl", *args])
        with pytest.raises(SystemExit) as e:
            main(p)
        return (e.value.code, *_got(p))

    code, out, err = run("bootstrap", "random-uuid")
    assert (code, len(out), out[-1], err) == (0, 23, "\n", "")
    code, out, err = run("describe", "-h")
    assert code == 0 and "Usage: quorumctl describe" in out and err == ""
    assert run("--bogus") == (2, "", "quorumctl: error: No such option: --bogus (see 'quorumctl -h')\n")
    assert run("state") == (2, "", "quorumctl: error: give at least one log dir (or -c server.properties)\n")
    assert capsys.readouterr() == ("", "")


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
