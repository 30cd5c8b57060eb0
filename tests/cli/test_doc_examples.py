"""Every command example in README.md and docs/*.md is run, and its output checked.

The convention is documented for doc writers in docs/README.md ("Examples in
these docs"): `$ quorumctl ...` lines in fenced blocks, followed by the
expected stdout then stderr and an optional `[exit N]`; `...` lines and a few
`{{placeholders}}` for what changes from run to run; paths relative to a
scratch directory per document (`workspace`: links to ../shared's fixtures and
corpus, replicas written by quorumctl's writer); `file=PATH` blocks written
there; 127.0.0.1:190xx/191xx/192xx addresses mapped to the simulated quorums
of SCENARIOS. Usage lines (`quorumctl ...` without `$`) and links between the
documents are checked too, and so is the documents' size budget.

Examples run in process (the entry point's `main()`, stdout/stderr captured),
except spark-export, which runs as a subprocess so that its JVM ends with it.
Documents whose examples read ../shared are marked `shared` (skipped, saying
why, when it is absent); an example this test cannot run fails it.

To see what the examples of a document print now: python tests/cli/test_doc_examples.py docs/NAME.md
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from quorumctl.testing.examples import write_examples

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "reference" / "fixtures"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# scratch-directory name -> what it links to (read only)
SHARED_LINKS = {
    "kafka-3.7.0-static": FIXTURES / "kafka-3.7.0-static",
    "kafka-3.9.0-dynamic": FIXTURES / "kafka-3.9.0-dynamic",
    "corpus": SHARED / "corpus",
}

# -- parsing ----------------------------------------------------------------------------

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
EXIT = re.compile(r"^\[exit (\d+)\]$")


@dataclass
class Example:
    doc: str
    line: int
    command: str
    expected: list[str] = field(default_factory=list)
    exit: int = 0

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


@dataclass
class FileBlock:
    doc: str
    line: int
    path: str
    text: str


def parse(path: Path) -> list:
    """The examples and file blocks of one markdown file, in order."""
    name = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
    items: list = []
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3)
        start = i
        body = []
        i += 1
        while i < len(lines):
            c = FENCE.match(lines[i])
            if c and c.group(2)[0] == fence[0] and len(c.group(2)) >= len(fence) and not c.group(3).strip():
                break
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        fm = re.search(r"(?:^|\s)file=(\S+)", info)
        if fm:
            items.append(FileBlock(name, start + 1, fm.group(1), "\n".join(body) + "\n"))
            continue
        cur = None
        j = 0
        while j < len(body):
            line = body[j]
            if line.startswith("$ "):
                cmd, first = line[2:], start + 2 + j
                while cmd.endswith("\\") and j + 1 < len(body):
                    j += 1
                    cmd = cmd[:-1].rstrip() + " " + body[j].strip()
                cur = Example(name, first, cmd.strip())
                items.append(cur)
            elif cur is not None:
                cur.expected.append(line)
            j += 1
        for ex in (x for x in items if isinstance(x, Example)):
            if ex.expected and EXIT.match(ex.expected[-1]):
                ex.exit = int(EXIT.match(ex.expected.pop()).group(1))
    return items


def argv_of(ex: Example) -> list[str]:
    """The arguments after `quorumctl`, or a failure saying why the example cannot run."""
    if re.search(r"(^|\s)(\||>|<|;|&&|\|\|)(\s|$)|\$\(|`", ex.command):
        pytest.fail(
            f"{ex.where}: cannot run `{ex.command}`: pipes, redirections and $(...) are not "
            "examples this test can check"
        )
    argv = shlex.split(ex.command)
    if not argv or argv[0] != "quorumctl":
        pytest.fail(
            f"{ex.where}: `$ {ex.command}` is not a quorumctl command; only `$ quorumctl ...` "
            "lines may appear in examples"
        )
    return argv[1:]


# -- matching ---------------------------------------------------------------------------

PLACEHOLDERS = {
    "...": r".*?",
    "n": r"-?\d[\d,]*(?:\.\d+)?",
    "uuid": r"[A-Za-z0-9_-]{22}",
    "iso": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",
    "age": r"(?:in )?\d+(?:\.\d+)? (?:ms|s|min|h|d)(?: ago)?",
}
PLACEHOLDER = re.compile(r"\{\{([^{}]*)\}\}( *)")


def line_pattern(expected: str, cwd: str) -> re.Pattern:
    out, pos = [], 0
    for m in PLACEHOLDER.finditer(expected):
        out.append(re.escape(expected[pos : m.start()]))
        name = m.group(1)
        if name == "cwd":
            out.append(re.escape(cwd))
        elif name in PLACEHOLDERS:
            out.append(f"(?:{PLACEHOLDERS[name]})")
        else:
            raise ValueError(f"unknown placeholder {{{{{name}}}}} in {expected!r}")
        if m.group(2):
            out.append(" *")
        pos = m.end()
    out.append(re.escape(expected[pos:]))
    return re.compile("".join(out))


# Columns whose numbers are measured anew at every run: a document shows a real run's
# value, and any number matches there (the reader sees real output, not a placeholder).
VARYING_COLUMNS = {"LatencyMs"}


def varying_as_placeholders(expected: list[str]) -> list[str]:
    """`expected` with the numbers of VARYING_COLUMNS (in a tab-separated table, from
    its header line to the table's end) read as {{n}}."""
    out, cols = [], set()
    for line in expected:
        cells = line.split("\t")
        if {c.strip() for c in cells} & VARYING_COLUMNS:
            cols = {i for i, c in enumerate(cells) if c.strip() in VARYING_COLUMNS}
        elif not line.strip():
            cols = set()
        elif cols:
            for i in cols:
                if i < len(cells) and re.fullmatch(PLACEHOLDERS["n"] + " *", cells[i]):
                    cells[i] = "{{n}}" + " " * (len(cells[i]) - len(cells[i].rstrip()))
            line = "\t".join(cells)
        out.append(line)
    return out


# Values a command prints anew at every run (how long it took, the size of an archive
# holding timestamps, a random id, the scratch directory): in the output of a command
# matching the first pattern, the named groups of the second stand for any value of
# their kind (n: {{n}}, uuid: {{uuid}}, cwd: {{cwd}}, any: {{...}}; a trailing digit
# tells two groups of one kind apart). A document shows a real run's values there.
VARYING_VALUES = [
    (r"^quorumctl wait ", r"\btrue after (?P<n>\S+) s \("),
    (r"^quorumctl wait .*-o json", r'"elapsedSeconds":(?P<n>[^,}]+)'),
    (r"^quorumctl bundle ", r"^Wrote \S+: \d+ part\(s\), (?P<n>\S+) bytes$"),
    (r"^quorumctl spark-export ", r" in (?P<n>\S+) s \((?P<n2>\S+) records/s\) to (?P<cwd>/\S*?)/c1\.parquet$"),
    (r"^quorumctl bootstrap random-uuid$", r"^(?P<uuid>\S+)$"),
    (r"^quorumctl add-controller ", r" with directory id (?P<uuid>\S+) and endpoints"),
    (r"^quorumctl migrate-quorum preflight ", r" has directory id (?P<uuid>\S+) \(meta\.properties\)$"),
    (
        r"^quorumctl truncate .*--apply",
        r" saved in (?P<cwd>/\S*?)/diverged/c3\.quorumctl-backup/(?P<any>[^/]+)-__cluster_metadata-0$",
    ),
    (r"^quorumctl voters check ", r" \(localhost resolves to (?P<any>[^)]+)\)"),
]
_KINDS = {"n": "{{n}}", "uuid": "{{uuid}}", "cwd": "{{cwd}}", "any": "{{...}}"}


def varying_values(command: str, expected: list[str]) -> list[str]:
    """`expected` with the values VARYING_VALUES names for `command` read as placeholders."""
    rules = [re.compile(value) for cmd, value in VARYING_VALUES if re.search(cmd, command)]
    out = []
    for line in expected:
        for rule in rules:
            m = rule.search(line)
            if m:
                spans = sorted(((m.start(g), m.end(g), g) for g in m.groupdict()), reverse=True)
                for start, end, g in spans:
                    line = line[:start] + _KINDS[g.rstrip("0123456789")] + line[end:]
        out.append(line)
    return out


def matches(expected: list[str], actual: list[str], cwd: str = "") -> bool:
    """Whether `actual` fits `expected` (`...` lines match any lines)."""
    chunks: list[list[re.Pattern]] = [[]]
    for e in varying_as_placeholders(expected):
        if e == "...":
            chunks.append([])
        else:
            chunks[-1].append(line_pattern(e, cwd))

    def at(chunk, k):
        return k + len(chunk) <= len(actual) and all(p.fullmatch(actual[k + x]) for x, p in enumerate(chunk))

    first, last = chunks[0], chunks[-1]
    if len(chunks) == 1:
        return len(first) == len(actual) and at(first, 0)
    if not at(first, 0):
        return False
    k = len(first)
    for chunk in chunks[1:-1]:  # leftmost placement leaves the most room for the rest
        while k + len(chunk) <= len(actual) and not at(chunk, k):
            k += 1
        if not at(chunk, k):
            return False
        k += len(chunk)
    return len(actual) - len(last) >= k and at(last, len(actual) - len(last))


def output_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# -- simulated quorums ------------------------------------------------------------------

NOW = 1795305697638  # the simulated quorums' clock: 2026-11-22T00:01:37.638Z
DOC_PORT = re.compile(r"127\.0\.0\.1:(19[0-2]9[1-4])\b")


def _demo_state(c, lag_ms: dict[int, int], leo: dict[int, int]):
    for r in c.voters + c.observers:
        rid = r["replicaId"]
        r["logEndOffset"] = leo[rid]
        r["lastFetchTimestamp"] = r["lastCaughtUpTimestamp"] = NOW - lag_ms[rid]


def healthy():
    """`quorumctl demo`'s quorum (ids, directory ids, log end offset), with a fixed clock."""
    from quorumctl.testing.scenarios import demo_cluster

    c = demo_cluster(start=False)
    c.live = False
    c.now_ms = lambda: NOW  # what the quorum stamps (a voter added later, say) is fixed too
    _demo_state(c, {1: 0, 2: 143, 3: 171, 4: 208}, {1: 1207, 2: 1207, 3: 1207, 4: 1207})
    return c


def lagging():
    """Controller 3 stopped answering 5 s ago, 120 records behind (demo's second act)."""
    c = healthy()
    _demo_state(c, {1: 0, 2: 143, 3: 5171, 4: 208}, {1: 1327, 2: 1327, 3: 1207, 4: 1327})
    c.high_watermark = 1327
    c.silence(3)
    return c


def leaderless():
    """Controllers 1 (the leader) and 2 do not answer; 3 still believes in 1."""
    c = healthy()
    c.silence(1)
    c.silence(2)
    return c


SCENARIOS = {19090: healthy, 19190: lagging, 19290: leaderless}


class Quorums:
    """The simulated quorums one document uses, started on first mention."""

    def __init__(self):
        self.running: dict[int, object] = {}
        self.back: dict[str, str] = {}  # real address -> documented address

    def real(self, text: str) -> str:
        def sub(m):
            port = int(m.group(1))
            return self._address(port - port % 10, port % 10)

        return DOC_PORT.sub(sub, text)

    def _address(self, base: int, node_id: int) -> str:
        if base not in self.running:
            c = SCENARIOS[base]()
            c.start()
            c.advertise_controllers()
            self.running[base] = c
            for n in c.endpoints:
                # documented ports have 5 digits, as Linux's ephemeral ones: table widths stay
                assert len(str(n.port)) == 5, n.port
                self.back[n.address] = f"127.0.0.1:{base + n.node_id}"
        c = self.running[base]
        return c.node_by_id(node_id).address

    def documented(self, text: str) -> str:
        for real, doc in self.back.items():
            text = text.replace(real, doc)
        return text

    def stop(self):
        for c in self.running.values():
            c.stop()


# -- generated data (the same dirs `quorumctl demo --write-examples` writes) ----------------


def workspace(path: Path, shared: bool = True) -> Path:
    """`path` with the generated example dirs, and links to ../shared when `shared`
    (and it is there)."""
    if shared and SHARED.is_dir():
        for name, target in SHARED_LINKS.items():
            (path / name).symlink_to(target, target_is_directory=True)
    write_examples(str(path))
    return path


# -- running ----------------------------------------------------------------------------


def run(cli, argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `quorumctl ARGV` run in `cwd`."""
    if argv and argv[0] == "spark-export":
        r = subprocess.run(
            [sys.executable, "-m", "quorumctl", *argv], cwd=cwd, capture_output=True, text=True, timeout=300
        )
        return r.returncode, r.stdout, r.stderr
    old_cwd = os.getcwd()
    try:
        os.chdir(cwd)
        return cli(*argv)
    finally:
        os.chdir(old_cwd)


def needs_shared(items: list) -> bool:
    text = " ".join(x.command if isinstance(x, Example) else x.text for x in items)
    return any(re.search(rf"(^|[\s=,]){re.escape(name)}/", text) for name in SHARED_LINKS)


def run_document(cli, doc: Path, cwd: Path, report):
    """Run every example of `doc` in order; report(example, code, stdout, stderr) each."""
    quorums = Quorums()
    try:
        for item in parse(doc):
            if isinstance(item, FileBlock):
                target = cwd / item.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(quorums.real(item.text))
                continue
            argv = [quorums.real(a) for a in argv_of(item)]
            code, out, err = run(cli, argv, cwd)
            report(item, code, quorums.documented(out), quorums.documented(err))
    finally:
        quorums.stop()


def _example_docs() -> list:
    """The documents with examples; those whose examples read ../shared marked so."""
    return [
        pytest.param(d, marks=[pytest.mark.shared] if needs_shared(parse(d)) else [], id=str(d.relative_to(REPO)))
        for d in DOCS
        if any(isinstance(x, Example) for x in parse(d))
    ]


@pytest.mark.parametrize("doc", _example_docs())
def test_examples(cli, doc, tmp_path):
    cwd = workspace(tmp_path, needs_shared(parse(doc)))
    failures = []

    def check(ex: Example, code: int, out: str, err: str):
        actual = output_lines(out) + output_lines(err)
        if matches(varying_values(ex.command, ex.expected), actual, str(cwd)) and code == ex.exit:
            return
        diff = "\n".join(difflib.unified_diff(ex.expected, actual, "documented", "actual", lineterm=""))
        failures.append(f"{ex.where}: $ {ex.command}\n  exit {code} (documented: {ex.exit})\n{diff}")

    run_document(cli, doc, cwd, check)
    assert not failures, "\n\n".join(failures)


def test_every_command_has_an_example():
    """One example per command (and per subcommand of a group) in the README or
    docs/ (docs/guide.md shows them all; the README only an incident's five)."""
    from quorumctl.cli.main import root_command

    group = root_command()
    wanted = []
    for name, cmd in group.commands.items():
        subs = getattr(cmd, "commands", None)
        wanted += [f"{name} {s}" for s in subs] if subs else [name]
    examples = [x for d in DOCS for x in parse(d) if isinstance(x, Example)]
    shown = {" ".join(shlex.split(x.command)[1:3]) for x in examples}
    shown |= {" ".join(shlex.split(x.command)[1:2]) for x in examples}
    missing = [w for w in wanted if w not in shown]
    assert not missing, f"no example in README.md or docs/ of: {', '.join(missing)}"


# -- synopses and links ----------------------------------------------------------------


def synopses(path: Path) -> list[tuple[int, str]]:
    """`quorumctl ...` lines without `$` in fenced blocks (usage lines), with
    their indented continuation lines joined."""
    out = []
    fenced = False
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced and line.strip().startswith("quorumctl "):
            text, j = line.strip(), i + 1
            while (
                j < len(lines)
                and lines[j][:1] in (" ", "\t")
                and lines[j].strip()
                and not lines[j].strip().startswith("quorumctl ")
                and not FENCE.match(lines[j])
            ):
                text += " " + lines[j].strip()
                j += 1
            out.append((i + 1, text))
    return out


OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w.-]*)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO)))
def test_usage_lines_name_real_commands_and_options(doc):
    """A usage line is not run, but its command and every option it names must exist."""
    from quorumctl.cli.main import root_command

    root = root_command()
    bad = []
    for line, text in synopses(doc):
        words = text.split()[1:]
        cmd, path = root, ["quorumctl"]
        while words and getattr(cmd, "commands", None) and words[0] in cmd.commands:
            cmd = cmd.commands[words.pop(0)]
            path.append(cmd.name)
        # a group's own options alone (`quorumctl --version`) are a whole command line
        if getattr(cmd, "commands", None) and not (words and all(w.startswith("-") for w in words)):
            bad.append(f"{doc.name}:{line}: `{text}` names no command of {' '.join(path)}")
            continue
        known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"-h", "--help"}
        for opt in OPTION.findall(" ".join(words)):
            if opt not in known:
                bad.append(f"{doc.name}:{line}: {' '.join(path)} has no option {opt}")
    assert not bad, "\n".join(bad)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out, seen, fenced = set(), {}, False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            base = slug(line.lstrip("#"))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO)))
def test_links_between_documents_resolve(doc):
    bad = []
    text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            bad.append(f"{doc.name}: link to {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{doc.name}: link to {target}: no such heading in {dest.name}")
    assert not bad, "\n".join(bad)


# -- the budget ----------------------------------------------------------------------------

# Bytes (1 KB = 1000): the README and docs/*.md together, any one document, the README.
DOCS_BUDGET, DOC_BUDGET, README_BUDGET = 350_000, 25_000, 10_000


def over_budget(sizes: dict[str, int]) -> list[str]:
    """What of `sizes` (document -> bytes) breaks the budget, one line each."""
    bad = [
        f"{name}: {size:,} bytes, over {limit:,}"
        for name, size in sizes.items()
        for limit in [README_BUDGET if name == "README.md" else DOC_BUDGET]
        if size > limit
    ]
    total = sum(sizes.values())
    if total > DOCS_BUDGET:
        largest = ", ".join(f"{n} {s:,}" for n, s in sorted(sizes.items(), key=lambda x: -x[1])[:5])
        bad.append(f"all documents: {total:,} bytes, over {DOCS_BUDGET:,} (largest: {largest})")
    return bad


def test_docs_within_budget():
    """The docs stay a size a reader gets through: cut history (git keeps it),
    repetition and over-long explanations; split a document only where it has
    two subjects."""
    bad = over_budget({str(d.relative_to(REPO)): d.stat().st_size for d in DOCS})
    assert not bad, "documentation over its budget:\n" + "\n".join(bad)


def test_budget_convention():
    assert over_budget({"README.md": 10_000, "docs/a.md": 25_000}) == []
    assert over_budget({"README.md": 10_001}) == ["README.md: 10,001 bytes, over 10,000"]
    assert over_budget({"docs/a.md": 25_001}) == ["docs/a.md: 25,001 bytes, over 25,000"]
    many = {f"docs/{i:02}.md": 20_000 for i in range(18)}
    assert over_budget(many)[0].startswith("all documents: 360,000 bytes, over 350,000 (largest: docs/00.md 20,000")
    assert over_budget(dict(list(many.items())[:17])) == []


# -- the convention itself ----------------------------------------------------------------


def test_matching_convention():
    assert matches(["a", "b"], ["a", "b"])
    assert not matches(["a", "b"], ["a", "b", "c"])
    assert not matches(["a", "b"], ["a", "c"])
    assert matches(["a", "...", "z"], ["a", "z"])
    assert matches(["a", "...", "z"], ["a", "b", "c", "z"])
    assert not matches(["a", "...", "z"], ["a", "b", "c"])
    assert matches(["...", "m", "...", "z"], ["x", "m", "y", "m", "z"])
    assert not matches(["...", "m", "...", "m", "z"], ["x", "m", "z"])
    assert matches(["took {{n}} s, {{n}} records/s"], ["took 8.9 s, 1,115 records/s"])
    assert not matches(["took {{n}} s"], ["took soon s"])
    assert matches(["id {{uuid}}."], ["id qG0UJg_9QRWqOkqE3xedqA."])
    assert not matches(["id {{uuid}}."], ["id qG0UJg_9QRWqOkqE3xedq."])
    assert matches(["at {{iso}} ({{age}})"], ["at 2026-11-22T00:00:27.089Z (1.9 h ago)"])
    assert matches(["{{n}}      \tx"], ["1.6      \tx"]) and matches(["{{n}}      \tx"], ["12.75    \tx"])
    assert not matches(["{{n}} \tx"], ["1\t\tx"])
    assert matches(["CurrentVoters: [{{...}}]"], ['CurrentVoters: [{"id": 1}, {"id": 2}]'])
    assert matches(["out {{cwd}}/x"], ["out /tmp/w/x"], "/tmp/w")
    # a measured column: the documented run's number stands for any number, in that column only
    table = ["Address\tLatencyMs\tEpoch\t", "a      \t0        \t3    \t"]
    assert matches(table, ["Address\tLatencyMs\tEpoch\t", "a      \t12       \t3    \t"])
    assert not matches(table, ["Address\tLatencyMs\tEpoch\t", "a      \t0        \t4    \t"])
    assert not matches(table, ["Address\tLatencyMs\tEpoch\t", "a      \t-        \t3    \t"])
    assert not matches(["out {{cwd}}/x"], ["out /tmp/v/x"], "/tmp/w")
    with pytest.raises(ValueError):
        matches(["{{port}}"], ["1"])
    # values a command prints anew: the documented run's value stands for any, there only
    done = ["Wrote incident.tar.gz: 10 part(s), 48213 bytes"]
    assert matches(varying_values("quorumctl bundle --out x", done), ["Wrote incident.tar.gz: 10 part(s), 51007 bytes"])
    assert not matches(
        varying_values("quorumctl bundle --out x", done), ["Wrote incident.tar.gz: 9 part(s), 48213 bytes"]
    )
    assert not matches(varying_values("quorumctl verify x", done), ["Wrote incident.tar.gz: 10 part(s), 51007 bytes"])
    saved = [
        "Done. Removed and replaced files are saved in /srv/x/diverged/c3.quorumctl-backup/T1-__cluster_metadata-0"
    ]
    actual = [
        "Done. Removed and replaced files are saved in /tmp/w/diverged/c3.quorumctl-backup/T2-__cluster_metadata-0"
    ]
    assert matches(varying_values("quorumctl truncate d --apply", saved), actual, "/tmp/w")
    assert not matches(varying_values("quorumctl truncate d --apply", saved), actual, "/tmp/v")
    assert matches(
        varying_values("quorumctl bootstrap random-uuid", ["AAAAAAAAAAAAAAAAAAAAAB"]), ["qG0UJg_9QRWqOkqE3xedqA"]
    )


def test_parsing_convention(tmp_path):
    md = tmp_path / "x.md"
    md.write_text(
        "text\n$ quorumctl not-in-a-block\n```\n$ quorumctl verify a \\\n    b\nline 1\n[exit 1]\n"
        "$ quorumctl state c\n```\n\n```properties file=d/e.properties\nk=v\n```\n"
        "  ```console\n  $ quorumctl demo\n  ...\n  ```\n"
    )
    global REPO
    saved, REPO = REPO, tmp_path
    try:
        items = parse(md)
    finally:
        REPO = saved
    ex = [x for x in items if isinstance(x, Example)]
    assert [(x.command, x.expected, x.exit, x.line) for x in ex] == [
        ("quorumctl verify a b", ["line 1"], 1, 4),
        ("quorumctl state c", [], 0, 8),
        ("quorumctl demo", ["..."], 0, 15),
    ]
    assert [(f.path, f.text) for f in items if isinstance(f, FileBlock)] == [("d/e.properties", "k=v\n")]
    with pytest.raises(pytest.fail.Exception):
        argv_of(Example("x.md", 1, "quorumctl bootstrap format -t $(quorumctl bootstrap random-uuid)"))
    with pytest.raises(pytest.fail.Exception):
        argv_of(Example("x.md", 1, "ls -l"))
    with pytest.raises(pytest.fail.Exception):
        argv_of(Example("x.md", 1, "quorumctl dump-log x | head"))


# -- authoring: `python tests/cli/test_doc_examples.py docs/x.md` prints what each example gives --

if __name__ == "__main__":
    import tempfile

    from quorumctl.cli.main import run_captured

    def cli(*args):  # authoring runs outside pytest: what the `cli` fixture runs
        return run_captured(args)

    for arg in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as d:

            def show(ex, code, out, err, d=d):
                print(f"--- {ex.where}\n$ {ex.command}")
                sys.stdout.write((out + err).replace(d, "{{cwd}}"))
                if code:
                    print(f"[exit {code}]")

            run_document(cli, Path(arg).resolve(), workspace(Path(d)), show)
