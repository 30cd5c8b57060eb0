"""No module imports from a layer above its own (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "quorumctl"

# Lowest first. A module may import from its own layer and the layers below.
LAYERS = [
    {"errors", "ids", "openfile", "timefmt", "versions", "core", "_core", "__init__"},  # base (versions: the
    # release and feature catalogue; timefmt: ISO times and ages; core: which core, the compiled _core or none)
    {"schema"},  # the DSL and its codec
    {"records"},  # batches, metadata and control records
    {"config"},  # .properties, server and client configuration
    {"logdir"},  # readers of each file kind of a log dir
    {"raft"},  # Raft's logic over replicas' files
    {"ops"},  # jobs that judge or change a log dir: verify, format, truncate, recover
    {"image"},  # the metadata image replayed from a log dir, its history and diffs
    {"protocol"},  # the wire
    {"render"},  # text, table and JSON views
    {"dump", "testing"},  # dump-log's engine (dump/log, dump/files); the simulated quorum
    {"spark", "schemas", "diagnose"},  # spark-export; the list of every declared schema; doctor, bundle
    {"cli", "__main__"},  # the commands
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}
# spark-submit runs the job through quorumctl's own entry point: an entry point, not a library import
ALLOWED = {("spark/submit.py", "cli")}


def imports(path: Path, text: str | None = None) -> set[str]:
    """The top-level quorumctl packages/modules `path` (or `text` as that file) imports."""
    rel = path.relative_to(PACKAGE).parts
    out = set()
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if not (node.module or "").startswith("quorumctl."):
                    continue
                parts = node.module.split(".")[1:]
            else:
                parts = list(rel[: len(rel) - node.level]) + (node.module.split(".") if node.module else [])
                if not parts:
                    parts = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            parts = [a.name.split(".")[1] for a in node.names if a.name.startswith("quorumctl.")][:1]
        else:
            continue
        if parts:
            out.add(parts[0].removesuffix(".py"))
    return out


def test_every_module_is_in_a_layer():
    tops = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in PACKAGE.rglob("*.py")}
    assert tops - set(RANK) == set()


def test_no_import_runs_upward():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        own = rel.parts[0].removesuffix(".py")
        for target in imports(path):
            if target in RANK and RANK[target] > RANK[own] and (str(rel), target) not in ALLOWED:
                upward.append(f"{rel} imports {target}")
    assert upward == []


def test_the_check_sees_an_upward_import():
    """Not vacuous: the reader finds the imports a check must catch, relative and absolute."""
    where = PACKAGE / "raft" / "replica.py"
    assert imports(where, "def f():\n    from ..render.output import timestamp\n") == {"render"}
    assert imports(where, "from . import segments\nimport quorumctl.cli.main\n") == {"raft", "cli"}
    assert RANK["render"] > RANK["raft"] and RANK["cli"] > RANK["raft"]


def test_every_top_level_folder_says_what_belongs_there():
    """Each package's __init__ has a docstring of at least a paragraph (docs/architecture.md's layout)."""
    bare = [
        p.parent.name
        for p in sorted(PACKAGE.glob("*/__init__.py"))
        if len((ast.get_docstring(ast.parse(p.read_text())) or "").split()) < 25
    ]
    assert bare == []


def _module_imports(path: Path) -> set[str]:
    """The quorumctl modules `path` imports, by dotted name, at any depth (commands
    import lazily), except under `if TYPE_CHECKING:` (names for the type checker only)."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = rel[:-1]
    tree = ast.parse(path.read_text())
    typing_only = {
        id(x)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
        for x in ast.walk(node)
    }
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            mod = base + (node.module.split(".") if node.module else [])
            if not mod or mod[0] != "quorumctl":
                continue
            for a in node.names:  # `from . import x` imports the module x where there is one
                sub = PACKAGE.parent.joinpath(*mod, a.name)
                out.add(".".join(mod + [a.name]) if sub.with_suffix(".py").exists() or sub.is_dir() else ".".join(mod))
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("quorumctl.")}
    return out


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each circle found by a depth-first walk of module -> imported modules."""
    circles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(n, stack):
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                circles.append(stack[stack.index(m) :] + [m])
            elif m not in state and m in graph:
                visit(m, stack + [m])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    return circles


def test_no_import_circle():
    """No module imports (at any depth) a module that imports it back, directly or
    through others: raft/replica's compare calls raft/logmatch, which names Replica
    as a type only."""
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        graph[name] = _module_imports(path) - {name}
    assert import_circles(graph) == []
    # not vacuous: the circle there was
    assert import_circles(
        {"quorumctl.raft.replica": {"quorumctl.raft.logmatch"}, "quorumctl.raft.logmatch": {"quorumctl.raft.replica"}}
    ) == [["quorumctl.raft.logmatch", "quorumctl.raft.replica", "quorumctl.raft.logmatch"]]
    assert _module_imports(PACKAGE / "raft" / "replica.py") >= {"quorumctl.raft.logmatch"}
