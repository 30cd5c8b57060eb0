"""The metadata shell's text (Kafka 4.3's kafka-metadata-shell): `ls` in columns
fitted to the screen width (one column when there is no terminal), `tree` and
`cat` as its ShellNodePrinter indents them, `find` one path a line, `history`,
`help`, the prompt. Each writer yields lines (with their newline), so the shell
can page, cap or stop a 256k-partition listing between two lines."""

from __future__ import annotations

from typing import Iterable, Iterator


def java_sorted(names: Iterable[str]) -> list[str]:
    """String.compareTo's order (UTF-16 code units)."""
    return sorted(names, key=lambda s: s.encode("utf-16-be", "surrogatepass"))


def _column_schema(width: int | None, entries: list[str]) -> tuple[list[int], int]:
    """LsCommandHandler.calculateColumnSchema: (column widths, entries per column)."""
    n = len(entries)
    if width is None or width // 4 <= 1:
        return [0], n
    max_cols = width // 4
    schemas = []
    for cols in range(1, max_cols + 1):
        per = (n + cols - 1) // cols
        widths = [0] * cols
        for i, e in enumerate(entries):
            c = i // per
            widths[c] = max(widths[c], len(e) + 2)
        schemas.append((widths, per))
    for widths, per in reversed(schemas[1:]):
        if widths[-1] != 0 and sum(widths) <= width:
            return widths, per
    return schemas[0]


def entries_lines(entries: list[str], width: int | None) -> Iterator[str]:
    """LsCommandHandler.printEntries, without its intro line."""
    if not entries:
        return
    widths, per = _column_schema(width, entries)
    cols = len(widths)
    lines = (len(entries) + cols - 1) // cols
    for line in range(lines):
        out = []
        for col in range(cols):
            i = line + col * per
            if i < len(entries):
                e = entries[i]
                out.append(e)
                if col < cols - 1:
                    out.append(" " * (widths[col] - len(e)))
        yield "".join(out) + "\n"


def ls_lines(files: list[str], dirs: list[tuple[str, list[str]]], width: int | None) -> Iterator[str]:
    """LsCommandHandler.printTargets: the files first, then each directory's entries,
    under `NAME:` when there is more than one thing to list."""
    yield from entries_lines(files, width)
    need_intro = bool(files) or len(dirs) > 1
    first = not files
    for name, children in dirs:
        intro = ""
        if need_intro:
            intro = ("" if first else "\n") + name + ":\n"
            first = False  # even when the directory is empty and nothing is printed (as Kafka)
        if children:
            yield intro
            yield from entries_lines(children, width)


def node_lines(node, indent: int = 0) -> Iterator[str]:
    """MetadataNode.print through ShellNodePrinter: a leaf's text, or each child (sorted)
    as `name:` with its own lines two spaces further in."""
    if not node.is_dir:
        yield "  " * indent + (node.text or "") + "\n"
        return
    for name in java_sorted(node.child_names()):
        yield "  " * indent + name + ":\n"
        child = node.child(name)
        if child is not None:
            yield from node_lines(child, indent + 1)


def find_lines(path: str, node) -> Iterator[str]:
    """FindCommandHandler.find: the path, then every path under it, sorted at each level."""
    yield path + "\n"
    if node.is_dir:
        for name in java_sorted(node.child_names()):
            child = node.child(name)
            if child is None:
                continue
            yield from find_lines(path + name if path == "/" else f"{path}/{name}", child)


def history_lines(entries: list[tuple[int, str]]) -> Iterator[str]:
    """HistoryCommandHandler: `% 5d  %s`."""
    for i, line in entries:
        yield f"{i:5d}  {line}\n"


# Kafka's commands with its descriptions (argparse4j's help of the shell's parser)
KAFKA_COMMANDS = {
    "cat": "Show the contents of metadata files.",
    "cd": "Set the current working directory.",
    "exit": "Exit the metadata shell.",
    "find": "Search for nodes in the directory hierarchy.",
    "help": "Display this help message.",
    "history": "Print command history.",
    "ls": "List metadata nodes.",
    "man": "Show the help text for a specific command.",
    "pwd": "Print the current working directory.",
    "tree": "Show the contents of metadata nodes in a tree structure.",
}
# quorumctl's own commands, beyond Kafka's
OWN_COMMANDS = {
    "at": "Move to an offset, a time, a time back from the end (-15m) or the end.",
    "changes": "The records that touched a path, as `quorumctl history` prints them.",
    "diff": "What changed between two points (offsets or times), as `quorumctl diff` prints it.",
    "follow": "Re-read the log dir as Kafka writes it (Ctrl-C stops); `follow N` every N seconds.",
    "where": "Where the image is: offset, epoch, time, and what the source holds.",
}


def help_lines(own: bool) -> Iterator[str]:
    """`help`: Kafka's welcome and its parser's help (argparse4j's layout, its wrapping
    of the tree line included), then, at a terminal, quorumctl's own commands."""
    names = sorted(KAFKA_COMMANDS)
    choices = "{" + ",".join(names) + "}"
    yield "Welcome to the Apache Kafka metadata shell.\n"
    yield "\n"
    yield f"usage:  {choices} ...\n"
    yield "\n"
    yield "positional arguments:\n"
    yield f"  {choices}\n"
    for n in names:
        if n == "tree":
            yield f"    {n:<21}Show the contents  of  metadata  nodes  in  a tree\n"
            yield f"{'':25}structure.\n"
        else:
            yield f"    {n:<21}{KAFKA_COMMANDS[n]}\n"
    if own:
        yield "\n"
        yield "quorumctl's own commands:\n"
        for n in sorted(OWN_COMMANDS):
            yield f"    {n:<21}{OWN_COMMANDS[n]}\n"


def prompt_text(cwd: str, where: dict | None) -> str:
    """The interactive prompt: where in the log the image is, then the working directory."""
    if not where:
        return f"{cwd} >> "
    from ..timefmt import iso_utc

    t = iso_utc(where.get("timestamp")) or "-"
    end = "" if not where.get("atEnd") else " end"
    return f"[{where['offset']} e{where['epoch']} {t}{end}] {cwd} >> "
