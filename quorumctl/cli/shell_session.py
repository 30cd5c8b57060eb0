"""The shell's session: Kafka's commands (parsed as its argparse4j parser parses
them, with its error lines) and quorumctl's own over one Timeline, each line of
output handed to `out`. `quorumctl shell` (cli/shell) runs it from words, -c or
standard input; cli/shell_repl at a terminal."""

import shlex
from typing import Any, Callable, Iterable

# command -> (positional arguments (name, nargs), usage after the name, Kafka's)
_SPECS: dict[str, tuple[list[tuple[str, str]], str]] = {
    "cat": ([("targets", "+")], "targets [targets ...]"),
    "cd": ([("target", "?")], "[target]"),
    "exit": ([], ""),
    "find": ([("paths", "*")], "[paths [paths ...]]"),
    "help": ([], ""),
    "history": ([("numEntriesToShow", "?")], "[numEntriesToShow]"),
    "ls": ([("targets", "*")], "[targets [targets ...]]"),
    "man": ([("cmd", "1")], "cmd"),
    "pwd": ([], ""),
    "tree": ([("targets", "+")], "targets [targets ...]"),
}
_ARG_HELP = {
    ("cat", "targets"): "The metadata files to display.",
    ("cd", "target"): "The directory to change to.",
    ("find", "paths"): "The paths to start at.",
    ("history", "numEntriesToShow"): "The number of entries to show.",
    ("ls", "targets"): "The metadata node paths to list.",
    ("man", "cmd"): "The command to get help text for.",
    ("tree", "targets"): "The metadata nodes to display.",
}
# quorumctl's own commands: they parse their own words
_OWN = ("at", "changes", "diff", "follow", "where")
PAGE_CAP = 5000  # on a terminal, a listing stops after this many entries (`find` lists them all)


class Stop(Exception):
    """`exit`."""


class Session:
    """The shell's state (working directory, history, where in time) and its commands.
    `out` takes each line, `err` each error line (the printer's stderr); `interactive`: a person at a terminal (wider ls, closest
    names after a wrong path, caps on huge listings)."""

    def __init__(
        self,
        timeline,
        out: Callable[[str], object],
        *,
        err: Callable[[str], object],
        interactive: bool = False,
        width: int | None = None,
    ):
        self.tl = timeline
        self.out = out
        self.interactive = interactive
        self.width = width
        self.cwd = "/"
        self.history: list[str] = []
        self.failed = False  # a command named nothing or was misused (exit 2 when not interactive)
        self.err = err
        self._root: Any = None
        # waits between two reads of `follow`; True: the person asked to stop (a terminal's REPL
        # reads Ctrl-C or q meanwhile; elsewhere SIGINT stops it)
        self.pause: Callable[[float], bool] = _sleep

    # -- the tree -------------------------------------------------------------------

    def root(self):
        if self._root is None:
            from .. import __version__
            from ..image.shell import kafka_provenance, root

            prov = None
            single = self.tl.single_file()
            if single is not None and self.tl.at_end:
                prov = kafka_provenance(single)
            self._root = root(self.tl.image, prov, version=__version__)
        return self._root

    def moved(self) -> None:
        self._root = None

    # -- running lines ----------------------------------------------------------------

    def run_line(self, line: str, record: bool = True) -> None:
        if record and line.strip():
            self.history.append(line)
        try:
            words = shlex.split(line)
        except ValueError as e:
            self._fail(f"{e}")
            return
        self.run_words(words)

    def run_words(self, words: list[str]) -> None:
        while words and words[-1] == "":
            words = words[:-1]
        if not words:
            return
        name = words[0]
        if name in _OWN:
            self._own(name, words[1:])
            return
        names = sorted(_SPECS)
        if name not in _SPECS:
            matches = [n for n in names if n.startswith(name)]
            if not matches:
                self._fail(f"invalid choice: '{name}' (choose from {', '.join(repr(n) for n in names)})")
                return
            if len(matches) > 1:
                self._fail(f"ambiguous command: {name} could match {', '.join(matches)}")
                return
            args = self._parse(matches[0], words[1:])
            if args is not None:
                self._fail(f"invalid choice: '{name}': did you mean '{matches[0]}'?")
            return
        if name == "cat" and len(words) > 2 and words[1] in ("-o", "--output"):
            self._cat_json(words[2], words[3:])
            return
        args = self._parse(name, words[1:])
        if args is None:
            return
        getattr(self, f"_do_{name}")(*args)

    def _fail(self, text: str) -> None:
        self.failed = True
        self.out(text + "\n")

    def _parse(self, name: str, words: list[str]):
        """argparse4j's way with the command's arguments: -h prints its usage, an
        unknown option or an extra word is unrecognized, a missing one too few."""
        spec, usage = _SPECS[name]
        pos: list[str] = []
        unknown: list[str] = []
        only_pos = False
        for w in words:
            if not only_pos and w == "--":
                only_pos = True
            elif not only_pos and w in ("-h", "--help"):
                self._usage(name, spec, usage)
                return None
            elif not only_pos and w.startswith("-") and len(w) > 1:
                unknown.append(w)
            else:
                pos.append(w)
        values: list = []
        i = 0
        for _arg, nargs in spec:
            if nargs == "?":
                values.append(pos[i] if i < len(pos) else None)
                i += 1 if i < len(pos) else 0
            elif nargs == "1":
                if i >= len(pos):
                    self._fail("too few arguments")
                    return None
                values.append(pos[i])
                i += 1
            else:
                if nargs == "+" and i >= len(pos):
                    self._fail("too few arguments")
                    return None
                values.append(pos[i:])
                i = len(pos)
        unknown += pos[i:]
        if unknown:
            self._fail("unrecognized arguments: " + " ".join(f"'{w}'" for w in unknown))
            return None
        if name == "history" and values[0] is not None:
            try:
                values[0] = int(values[0])
            except ValueError:
                self._fail(
                    f"argument numEntriesToShow: could not convert '{values[0]}' to Integer "
                    f'(For input string: "{values[0]}")'
                )
                return None
        return values

    def _usage(self, name: str, spec, usage: str) -> None:
        self.out(f"usage:  {name} [-h]{' ' + usage if usage else ''}\n")
        if spec:
            self.out("\npositional arguments:\n")
            for arg, _ in spec:
                self.out(f"  {arg:<23}{_ARG_HELP[(name, arg)]}\n")
        self.out("\noptional arguments:\n")
        self.out(f"  {'-h, --help':<23}show this help message and exit\n")

    def _lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.out(line)

    # -- Kafka's commands -------------------------------------------------------------

    def _visit(self, target: str):
        from ..image.shell import visit

        return visit(self.root(), self.cwd, target)

    def _missing(self, line: str, target: str) -> None:
        self._fail(line)
        if self.interactive:
            from ..image.shell import closest

            where, names = closest(self.root(), self.cwd, target)
            if names:
                self.err(f"  closest in {where}: {', '.join(names)}\n")

    def _do_ls(self, targets: list[str]) -> None:
        from ..image.shell import java_sorted
        from ..render.shell import ls_lines

        files: list[str] = []
        dirs: list[tuple[str, list[str]]] = []
        for t in [t for t in targets if t] or ["."]:
            found = self._visit(t)
            if not found:
                self._missing(f"ls: {t}: no such file or directory.", t)
            for path, node in found:
                last = path[-1] if path else "/"
                if node.is_dir:
                    dirs.append((last, java_sorted(node.child_names())))
                else:
                    files.append(last)
        if self.interactive:
            dirs = [(n, self._capped(c, f"ls: {n}")) for n, c in dirs]
        self._lines(ls_lines(files, dirs, self.width if self.interactive else None))

    def _capped(self, names: list[str], what: str) -> list[str]:
        if len(names) <= PAGE_CAP:
            return names
        self.err(f"{what}: the first {PAGE_CAP} of {len(names)} entries (find lists them all)\n")
        return names[:PAGE_CAP]

    def _do_cat(self, targets: list[str]) -> None:
        from ..render.shell import node_lines

        for t in targets:
            found = self._visit(t)
            if not found:
                self._missing(f"cat: {t}: No such file or directory.", t)
            for _path, node in found:
                if node.is_dir:
                    self._fail(f"cat: {t}: Is a directory")
                else:
                    self._lines(node_lines(node))

    def _do_tree(self, targets: list[str]) -> None:
        from ..render.shell import node_lines

        for t in targets:
            found = self._visit(t)
            if not found:
                self._missing(f"tree: {t}: No such file or directory.", t)
            for _path, node in found:
                self._lines(node_lines(node))

    def _do_find(self, paths: list[str]) -> None:
        from ..render.shell import find_lines

        for p in [p for p in paths if p] or ["."]:
            found = self._visit(p)
            if not found:
                self._missing(f"find: {p}: no such file or directory.", p)
            for _path, node in found:
                self._lines(find_lines(p, node))

    def _do_cd(self, target: str | None) -> None:
        t = target or "/"
        found = self._visit(t)
        if not found:
            self._missing(f"cd: {t}: no such directory.", t)
        for path, node in found:
            if not node.is_dir:
                self._fail(f"cd: {t}: not a directory.")
            else:
                self.cwd = "/" + "/".join(path)

    def _do_pwd(self) -> None:
        self.out(self.cwd + "\n")

    def _do_exit(self) -> None:
        raise Stop()

    def _do_help(self) -> None:
        from ..render.shell import help_lines

        self._lines(help_lines(self.interactive))

    def _do_history(self, n: int | None) -> None:
        from ..render.shell import history_lines

        entries = list(enumerate(self.history))
        if n is not None:
            entries = entries[len(entries) - max(n, 0) :] if n > 0 else []
        self._lines(history_lines(entries))

    def _do_man(self, cmd: str) -> None:
        from ..render.shell import KAFKA_COMMANDS

        if cmd not in _SPECS:
            self.out(f"man: unknown command {cmd}. Type help to get a list of commands.\n")
            return
        spec, usage = _SPECS[cmd]
        desc = KAFKA_COMMANDS[cmd]
        self.out(f"{cmd}: {desc}\n\nusage: {cmd}{' ' + usage if usage else ''}\n")
        if spec:
            self.out("\npositional arguments:\n")
            for arg, _ in spec:
                self.out(f"  {arg:<23}{_ARG_HELP[(cmd, arg)]}\n")

    # -- quorumctl's own --------------------------------------------------------------

    def _own(self, name: str, words: list[str]) -> None:
        from ..errors import QuorumctlError

        try:
            getattr(self, f"_own_{name}")(words)
        except QuorumctlError as e:
            self.failed = True
            text = str(e)
            self.err((text if text.startswith(f"{name} ") else f"{name}: {text}") + "\n")

    def _own_where(self, words: list[str]) -> None:
        self.out(self.where_line() + "\n")

    def where_line(self) -> str:
        from ..timefmt import iso_utc

        w = self.tl.where()
        start = w.get("start") or {}
        src = start.get("from", "")
        if start.get("file"):
            import os

            src += " " + os.path.basename(start["file"])
        end = ", the end of the log" if w["atEnd"] else ""
        return (
            f"Image at offset {w['offset']}, epoch {w['epoch']}, {iso_utc(w['timestamp']) or 'no time'}{end} "
            f"({w['records']} records replayed from {src or 'nothing'})"
        )

    def _own_at(self, words: list[str]) -> None:
        from ..errors import InputError
        from ..image.replay import extent
        from ..image.timeline import parse_at

        if len(words) != 1:
            raise InputError("give one point: an offset, a time, -15m (back from the end) or end")
        end_ms = extent(self.tl.src).get("lastTimestamp")
        self.tl.goto(parse_at(words[0], end_ms=end_ms))
        self.moved()
        self.out(self.where_line() + "\n")

    def _entity(self, path: str):
        """A Kafka path as the entity `history` follows."""
        from ..errors import InputError
        from ..image.history import Entity
        from ..image.shell import CONFIG_TYPE_NAMES, absolute
        from ..image.model import CONFIG_TYPES

        parts = absolute(self.cwd, path)
        if parts[:1] == ["image"]:
            parts = parts[1:]
        img = self.tl.image
        if parts[:2] in (["topics", "byName"], ["topics", "byId"]) and len(parts) >= 3:
            name = parts[2]
            if parts[1] == "byId":
                t = img.topics.get(name)
                if t is None:
                    raise InputError(f"{path}: no topic with id {name} in the image")
                name = t.name
            part = int(parts[3]) if len(parts) >= 4 and parts[3].lstrip("-").isdigit() else None
            return Entity("topic", name, part)
        if parts[:2] == ["cluster", "brokers"] and len(parts) >= 3:
            return Entity("broker", parts[2])
        if parts[:2] == ["cluster", "controllers"] and len(parts) >= 3:
            return Entity("voter", parts[2])
        if parts[:1] == ["features"] and len(parts) >= 2:
            f = parts[1]
            return Entity("feature", "metadata.version" if f == "metadataVersion" else f.removeprefix("finalized_"))
        if parts[:1] == ["configs"] and len(parts) >= 2:
            typ, _, name = parts[1].partition(":")
            ids = {v: k for k, v in CONFIG_TYPE_NAMES.items()}
            if typ in ids and ids[typ] in CONFIG_TYPES:
                return Entity("config", f"{CONFIG_TYPES[ids[typ]]}:{name}")
        raise InputError(
            f"{path}: changes follows a topic or partition (/image/topics/byName/NAME[/P]), a broker "
            "or controller (/image/cluster/brokers/ID), a config (/image/configs/TOPIC:NAME) or a feature"
        )

    def _own_changes(self, words: list[str]) -> None:
        from ..errors import InputError
        from ..image.history import history
        from ..image.replay import Point
        from ..render.image import history_text

        if len(words) != 1:
            raise InputError("give one path, e.g. changes /image/topics/byName/orders/0")
        until = None if self.tl.at_end else Point(offset=self.tl.image.offset)
        doc = history(self.tl.paths, self._entity(words[0]), until=until)
        self._lines(history_text(doc).splitlines(keepends=True))

    def _own_diff(self, words: list[str]) -> None:
        from ..errors import InputError
        from ..image.diff import diff
        from ..image.replay import Point
        from ..image.timeline import parse_at
        from ..image.replay import extent
        from ..render.image import write_diff_text

        if len(words) not in (1, 2):
            raise InputError("give two points (diff FROM TO), or one (diff FROM: to where the image is)")
        end_ms = extent(self.tl.src).get("lastTimestamp")
        frm = parse_at(words[0], end_ms=end_ms)
        to = parse_at(words[1], end_ms=end_ms) if len(words) == 2 else None
        if to is None:
            to = Point() if self.tl.at_end else Point(offset=self.tl.image.offset)
        doc = diff(self.tl.paths, frm, to, lazy=True)
        buf: list[str] = []
        write_diff_text(doc, buf.append)
        self._lines("".join(buf).splitlines(keepends=True))

    def _own_follow(self, words: list[str]) -> None:
        from ..errors import InputError
        from ..image.diff import Changes
        from ..render.image import _text_change

        every = 1.0
        if words:
            try:
                every = float(words[0])
            except ValueError:
                raise InputError(f"follow {words[0]}: expected seconds between reads") from None
        if self.tl.single_file() is not None:
            raise InputError("follow reads a log dir (a file given alone does not grow into new segments)")
        if not self.tl.at_end:
            self.tl.goto(__import__("quorumctl.image.replay", fromlist=["Point"]).Point())
            self.moved()
        self.out(self.where_line() + "\n")
        self.out(f"following the log, read every {every:g} s (Ctrl-C stops)\n")
        try:
            while True:
                got = self.tl.refresh()
                if got is not None:
                    before, after = got
                    self.moved()
                    ch = Changes(before, after)
                    if not len(ch):
                        if self.pause(every):
                            break
                        continue  # NoOp records and the like: nothing to say
                    self.out(
                        f"offset {after.offset}, epoch {after.epoch}: {after.records - before.records} record(s), "
                        f"{len(ch)} change(s)\n"
                    )
                    for path, a, b, _part in ch.raw():
                        self.out(_text_change(path, Changes.change_json(path, a, b)).rstrip("\n") + "\n")
                if self.pause(every):
                    break
        except KeyboardInterrupt:
            pass
        self.out(self.where_line() + "\n")

    def _cat_json(self, fmt: str, targets: list[str]) -> None:
        from ..render.output import json_bytes

        if fmt != "json":
            self._fail(f"cat -o {fmt}: only json is known")
            return
        if not targets:
            self._fail("too few arguments")
            return
        for t in targets:
            found = self._visit(t)
            if not found:
                self._missing(f"cat: {t}: No such file or directory.", t)
            for path, node in found:
                doc = {"path": "/" + "/".join(path), "value": _node_json(node)}
                self.out(json_bytes(doc).decode("utf-8") + "\n")


def _sleep(seconds: float) -> bool:
    import time

    time.sleep(seconds)
    return False


def _node_json(node, depth: int = 0):
    if not node.is_dir:
        return node.data if node.data is not None else node.text
    from ..image.shell import java_sorted

    return {n: _node_json(c, depth + 1) for n in java_sorted(node.child_names()) if (c := node.child(n)) is not None}
