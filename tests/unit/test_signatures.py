"""Beside the layer test: what a function below the commands may take
(docs/architecture.md). The connection options travel as one `ClusterAccess`,
never one by one, and no function takes more than ten parameters; both read
from the source with ast, so neither can come back unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "quorumctl"
COMMANDS = ("cli/", "spark/submit.py")  # the CLI layer (test_layers.py places spark/submit.py there)

# the command line's connection options: only the CLI layer names them one by one
CONNECTION_OPTIONS = {"bootstrap_server", "bootstrap_controller", "command_config", "controller_command_config"}
MOST_PARAMETERS = 10


def parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    """A function's parameter names, `self` and `cls` left out; *args and **kwargs count."""
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    return [n for n in names if n not in ("self", "cls")]


def functions(text: str):
    """(name, line, parameters) of every function and lambda in `text`, nested ones too."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, parameters(node)
        elif isinstance(node, ast.Lambda):
            yield "<lambda>", node.lineno, parameters(node)


def below_the_commands():
    """(path relative to quorumctl/, its text) of every module outside the CLI layer."""
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith(COMMANDS):
            yield rel, path.read_text()


def loose_options(rel: str, text: str) -> list[str]:
    return [
        f"{rel}:{line} {name}({', '.join(sorted(CONNECTION_OPTIONS & set(params)))})"
        for name, line, params in functions(text)
        if CONNECTION_OPTIONS & set(params)
    ]


def too_long(rel: str, text: str) -> dict[str, int]:
    return {f"{rel}:{name}": len(params) for name, _, params in functions(text) if len(params) > MOST_PARAMETERS}


def test_no_connection_option_is_a_loose_parameter_below_the_commands():
    """--bootstrap-server, --bootstrap-controller, --command-config and
    --controller-command-config reach the library as one wire.access.ClusterAccess."""
    assert [hit for rel, text in below_the_commands() for hit in loose_options(rel, text)] == []


def test_no_function_below_the_commands_takes_more_than_ten_parameters():
    """Longer lists travel as request or spec objects (dump.log.DumpRequest,
    records.batch.Producer, testing.synth.Layout, ...), with no exception."""
    assert {k: n for rel, text in below_the_commands() for k, n in too_long(rel, text).items()} == {}


def test_the_checks_see_what_they_must_catch():
    """Not vacuous: a loose option (keyword-only, in a method, in a lambda) and an
    eleventh parameter are found; the CLI layer is where the options may be named."""
    text = (
        "class C:\n    def m(self, *, command_config=None): pass\n"
        "f = lambda bootstrap_server: bootstrap_server\n"
        "def g(a, b, c, d, e, f, g, h, i, j, *rest): pass\n"
        "def h(self, a, b, c, d, e, f, g, h, i, j): pass\n"
    )
    assert loose_options("live/x.py", text) == [
        "live/x.py:2 m(command_config)",
        "live/x.py:3 <lambda>(bootstrap_server)",
    ]
    assert too_long("live/x.py", text) == {"live/x.py:g": 11}
    rels = [rel for rel, _ in below_the_commands()]
    assert "live/describe.py" in rels and "wire/access.py" in rels
    assert not [r for r in rels if r.startswith("cli/")] and "spark/submit.py" not in rels
    # the commands do name them: that is where the ClusterAccess is built
    assert loose_options("cli/describe.py", (PACKAGE / "cli" / "describe.py").read_text())
