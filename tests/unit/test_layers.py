"""No module imports from a layer above its own (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "quorumctl"
ENTRY = "spark/submit.py"  # spark-submit's application file: it runs the CLI

# The layers by concept (docs/architecture.md), each with what it may import besides
# itself: those layers and, in turn, what they may import. A layer is a package or
# module of quorumctl/; ENTRY names the one file that runs the CLI from elsewhere.
LAYERS: dict[str, tuple[set[str], set[str]]] = {
    # base: errors, ids, files opened safely, ISO times, the release and feature catalogue;
    # core: which core runs the hot loops (the compiled _core or none)
    "base": ({"errors", "ids", "openfile", "timefmt", "versions", "core", "_core", "__init__"}, set()),
    "schema": ({"schema"}, {"base"}),  # the DSL and its codec
    "records": ({"records"}, {"schema"}),  # batches, metadata and control records
    "config": ({"config"}, {"schema"}),  # .properties, server and client configuration
    # the shared domain: the quorum model, health verdicts, feature rules, result types
    "domain": ({"domain"}, {"config"}),
    # offline: what is read from files (each file kind; Raft over replicas; jobs on log
    # dirs; the metadata image)
    "logdir": ({"logdir"}, {"records", "config"}),
    "raft": ({"raft"}, {"logdir"}),
    "ops": ({"ops"}, {"raft", "domain"}),
    "image": ({"image"}, {"ops"}),
    # the wire: framing, connections, TLS/SASL/OAuth/Kerberos, messages, the client
    "wire": ({"wire"}, {"config"}),
    # live: what is asked of a running cluster (probe and migrate also read the node's files)
    "live": ({"live"}, {"wire", "ops"}),
    "render": ({"render"}, {"image"}),  # text, table and JSON views: the domain, never the wire
    "dump": ({"dump"}, {"render"}),  # dump-log's engine
    "testing": ({"testing"}, {"live", "render"}),  # the simulated quorum, the demo
    "jobs": ({"spark", "schemas", "diagnose"}, {"live", "dump"}),  # spark-export; every schema; doctor, bundle
    "cli": ({"cli", "__main__", ENTRY}, {"jobs", "testing"}),  # the commands
}


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


LAYER_OF = {name: layer for layer, (names, _) in LAYERS.items() for name in names}


def reach(layer: str) -> set[str]:
    """The layers `layer` may import: its own, those it names, and theirs in turn."""
    out, todo = {layer}, [layer]
    while todo:
        for below in LAYERS[todo.pop()][1]:
            if below not in out:
                out.add(below)
                todo.append(below)
    return out


def layer_of(rel: Path) -> str | None:
    """The layer of a file, by its path under quorumctl/ (ENTRY first), or of an import's target name."""
    return LAYER_OF.get(rel.as_posix()) or LAYER_OF.get(rel.parts[0].removesuffix(".py"))


def test_the_layers_form_no_circle():
    """Every layer names only layers that exist, and none reaches back to itself through another."""
    assert {b for _, below in LAYERS.values() for b in below} <= set(LAYERS)
    assert [name for name, (_, below) in LAYERS.items() if any(name in reach(b) for b in below)] == []


def test_every_module_is_in_a_layer():
    assert [p for p in sorted(PACKAGE.rglob("*.py")) if layer_of(p.relative_to(PACKAGE)) is None] == []


def test_no_import_runs_upward():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        own = layer_of(rel)
        assert own is not None
        for target in imports(path):
            theirs = LAYER_OF.get(target)
            if theirs is not None and theirs not in reach(own):
                upward.append(f"{rel} ({own}) imports {target} ({theirs})")
    assert upward == []


def test_render_and_the_offline_layers_never_reach_the_wire():
    """The views and what is read from files depend on the domain, never on the wire
    nor on what is asked of a running cluster; the domain knows neither side."""
    for layer in ("render", "image", "ops", "raft", "logdir", "domain"):
        assert reach(layer) & {"wire", "live"} == set(), layer
    assert reach("domain") & {"logdir", "raft", "ops", "image", "render"} == set()
    assert reach("wire") & {"domain", "live", "render", "logdir", "raft", "ops", "image"} == set()


def test_the_check_sees_an_upward_import():
    """Not vacuous: the reader finds the imports a check must catch, relative and absolute."""
    where = PACKAGE / "raft" / "replica.py"
    assert imports(where, "def f():\n    from ..render.output import timestamp\n") == {"render"}
    assert imports(where, "from . import segments\nimport quorumctl.cli.main\n") == {"raft", "cli"}
    assert "render" not in reach("raft") and "cli" not in reach("raft")
    assert "cli" not in reach(layer_of(Path("spark/rows.py")) or "") and layer_of(Path(ENTRY)) == "cli"


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
    import lazily), those named for the type checker alone included: a circle of
    types is a circle too."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = rel[:-1]
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
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
    """No module imports (at any depth, for types alone too) a module that imports it
    back, directly or through others: raft/logmatch names the shape of a Replica
    (a Protocol) rather than importing raft/replica, which calls it."""
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


def test_no_private_module_of_a_dependency_is_imported():
    """A dependency's private module (`typer._click` was one) moves at its next release:
    only public names are imported, by import statement or import_module."""
    private = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            ):
                names = [a.value for a in node.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            for name in names:
                top, *rest = name.split(".")
                if top not in ("quorumctl", "__future__") and any(p.startswith("_") for p in rest):
                    private.append(f"{path.relative_to(PACKAGE)}: {name}")
    assert private == []
