"""The one printer: choosing text/table/json, writing a command's result to stdout,
warnings and notes to stderr, JSON encoding, timestamps.

`text` is Kafka-compatible plain text (the default when stdout is not a
terminal), `table` is a Rich table (the default on a terminal), `json` is one
stable JSON document (or JSON Lines for streams of records). Commands print
only through this module (emit, write, the streaming writers, live views and
the stderr lines below); the other render/ modules only turn values into text,
Rich renderables and JSON documents.
"""

from __future__ import annotations

import enum
import sys

# the time formats are a base helper (image and render both use them); named here too
# for render's many callers
from ..timefmt import MAX_ISO_MS, age, iso_utc, timestamp, when_text  # noqa: F401


def _encoder():
    """msgspec's JSON encoder, made on first use: text output (verify's, describe's)
    never needs it, and the import is a tenth of a short command's start-up."""
    global _encode
    import msgspec

    _encode = msgspec.json.Encoder().encode
    return _encode


def _encode(obj, /) -> bytes:  # positional, as msgspec's encode that replaces it
    return _encoder()(obj)


class Output(str, enum.Enum):
    text = "text"
    table = "table"
    json = "json"


class PlainOutput(str, enum.Enum):
    """--output of the commands whose result is a sentence or a plan (truncate,
    bootstrap, add/remove-controller): a table would only box the same lines, so
    none is offered (and `-o table` is refused by the option parser)."""

    text = "text"
    json = "json"


def resolve(output: "Output | PlainOutput | str | None") -> Output:
    """The --output value, or the default for where stdout goes (a table on a
    terminal, for the commands that have one)."""
    if output is None:
        return Output.table if sys.stdout.isatty() else Output.text
    return Output(output.value if isinstance(output, enum.Enum) else output)


def resolve_plain(output: "PlainOutput | None") -> Output:
    """resolve() for a command without a table: text unless json was asked for."""
    return Output.text if output is None else resolve(output)


# where console() sends what it prints when a test asks (use_console): a file and a width
_console_target: dict = {}


def console(**kw):
    """The Rich console every table, live view and spinner prints through: stdout,
    with Rich's own choice of colour and width from the terminal (NO_COLOR,
    COLUMNS, a pipe), unless `kw` names another file or stderr, or a test set one
    (use_console), so tables are tested without a terminal at a fixed width."""
    from rich.console import Console

    if _console_target and "file" not in kw and not kw.get("stderr"):
        kw = {**_console_target, **kw}
    return Console(**kw)


def use_console(file=None, width: int = 100):
    """Send console()'s stdout output to `file` at `width` columns (None: back to stdout)."""
    _console_target.clear()
    if file is not None:
        _console_target.update(file=file, width=width)


def emit(output, doc, *, text, table=None, json=None, notes=None) -> None:
    """The one json/table/text dispatch of a command's result: `doc` as one JSON
    line (or `json(doc)` when the JSON form differs, built only then); `table(doc)`, a Rich renderable
    or a list of them (a command without one takes PlainOutput: text unless json);
    else `text(doc)`, a str, after `notes(doc)`'s lines on stderr (what the text
    form does not show: the JSON and the table show it or do not need it)."""
    mode = resolve(output) if table is not None else resolve_plain(output)
    if mode is Output.table and table is None:  # a streamed line or list: the text is its table
        mode = Output.text
    if mode is Output.json:
        sys.stdout.write(json_line(doc if json is None else json(doc)) + "\n")
    elif mode is Output.table:
        con = console()
        shown = table(doc)
        for t in shown if isinstance(shown, (list, tuple)) else [shown]:
            con.print(t)
    else:
        for line in notes(doc) if notes is not None else ():
            say(line)
        sys.stdout.write(text(doc))
    sys.stdout.flush()  # a --watch loop's frame, or a result before the stderr lines that follow it


def write(text: str) -> None:
    """Result text as it is (a streaming writer's pieces, a one-line answer such as an id)."""
    sys.stdout.write(text)


def flush() -> None:
    sys.stdout.flush()


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def clear_screen() -> None:
    """Home and clear: a text --watch on a terminal redraws its view in place."""
    sys.stdout.write("\x1b[H\x1b[2J")


def live(renderable):
    """A Rich Live view on console(), redrawn only on update(..., refresh=True) (the
    --watch tables); not started: use it in a with block or start()/stop() it."""
    from rich.live import Live

    return Live(renderable, auto_refresh=False, screen=False, console=console())


class StatusLine:
    """One line on stderr (or `stream`), rewritten in place, shown only on a terminal
    (`wait`'s progress): cut to the terminal's width, erased by done()."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.on = self.stream.isatty()
        self.shown = False

    def show(self, line: str) -> None:
        if not self.on:
            return
        width = 200
        try:
            import shutil

            width = shutil.get_terminal_size().columns
        except OSError:
            pass
        self.stream.write("\r\x1b[K" + line[: max(width - 1, 20)])
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


# -- stderr: what is not the result (warnings, notes, summaries, errors of a --watch) --------


def say(line: str) -> None:
    """One line on stderr, as it is (Kafka's own wording where a command copies a tool's)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def write_err(text: str) -> None:
    """Text on stderr as it is, after what stdout holds (an interactive shell's error lines)."""
    sys.stdout.flush()
    sys.stderr.write(text)
    sys.stderr.flush()


def warning(message: str) -> None:
    say(f"quorumctl: warning: {message}")


def note(message: str) -> None:
    say(f"quorumctl: note: {message}")


def error(message: str) -> None:
    """An error a command reports and goes on after (a --watch's failed sample); the ones
    that end a command are raised and reported once, by cli/main."""
    say(f"quorumctl: error: {message}")


_FLUSH = 1 << 20


def write_bytes_to_stdout(writer) -> None:
    """writer(write) with a write of bytes to stdout (its buffer; decoded where there is
    none, as under a test's captured stdout): the streaming JSON writers' way out."""
    buf = getattr(sys.stdout, "buffer", None)
    if buf is None:
        writer(lambda b: sys.stdout.write(b.decode("utf-8")))
    else:
        sys.stdout.flush()
        writer(buf.write)
        buf.flush()


class Chunks:
    """Pieces gathered and written in writes of about a MiB (the streaming writers of
    image, topics describe and diff: str or bytes, one kind per Chunks)."""

    __slots__ = ("write", "parts", "size")

    def __init__(self, write):
        self.write, self.parts, self.size = write, [], 0

    def add(self, piece) -> None:
        self.parts.append(piece)
        self.size += len(piece)
        if self.size >= _FLUSH:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.write(self.parts[0][:0].join(self.parts))
            self.parts, self.size = [], 0


def json_bytes(obj) -> bytes:
    """Compact JSON (UTF-8); bytes become standard base64 as in Kafka's JSON."""
    return _encode(obj)


def json_line(obj) -> str:
    return _encode(obj).decode("utf-8")
