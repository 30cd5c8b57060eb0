"""The one printer: choosing text/table/json, writing a command's result to stdout,
warnings, notes and errors to stderr; JSON encoding, timestamps.

`text` is Kafka-compatible plain text (the default when stdout is not a
terminal), `table` is a Rich table (the default on a terminal), `json` is one
stable JSON document (or JSON Lines for streams of records). Every write goes
through a `Printer` (made once by cli/main and handed to the command): emit,
write, the streaming writers, live views and the stderr lines; no other module
names sys.stdout or sys.stderr (tests/cli/test_printer.py). The other render/
modules only turn values into text, Rich renderables and JSON documents.
"""

from __future__ import annotations

import enum
import functools
import sys

# the time formats are a base helper (image and render both use them); named here too
# for render's many callers
from ..timefmt import MAX_ISO_MS, age, iso_utc, timestamp, when_text  # noqa: F401


@functools.cache
def _encoder():
    """msgspec's JSON encoder, made on first use: text output (verify's, describe's)
    never needs it, and the import is a tenth of a short command's start-up."""
    import msgspec

    return msgspec.json.Encoder()


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


def tagged(message: str) -> str:
    """The one place a "quorumctl: ..." line is made: every error, warning and note of
    ours reads so (`Printer.tell`; dump-log's sink interleaves its own with the dump)."""
    return f"quorumctl: {message}"


class Printer:
    """Where everything a command shows goes, made once at start (`cli/main.main`) and
    handed to the command (click's context object; httpie's Environment is the model):
    the two streams, whether each is a terminal, the width of Rich's tables when a test
    fixes it, the output format's default, and every write: the result (`emit`, `write`,
    `write_bytes`, `live`) and the lines on stderr (`say`; ours through `tell`: `warning`,
    `note`, `error`). Tests make one on StringIOs (`cli/main.run_captured`, or
    directly) instead of patching the process's streams.

    Colour is Rich's choice, from the stream (a terminal or not) and NO_COLOR/FORCE_COLOR."""

    __slots__ = ("stdout", "stderr", "width", "_stdout_isatty", "_stderr_isatty")

    def __init__(self, stdout=None, stderr=None, *, width: int | None = None, stdout_isatty=None, stderr_isatty=None):
        self.stdout = sys.stdout if stdout is None else stdout
        self.stderr = sys.stderr if stderr is None else stderr
        self.width = width  # Rich tables on stdout at this width (a test's); None: the terminal's
        self._stdout_isatty, self._stderr_isatty = stdout_isatty, stderr_isatty

    @property
    def stdout_isatty(self) -> bool:
        """Asked each time (a stream's answer, unless the maker said): spark-export points
        the fds at a pipe while the JVM starts."""
        return self.stdout.isatty() if self._stdout_isatty is None else self._stdout_isatty

    @property
    def stderr_isatty(self) -> bool:
        return self.stderr.isatty() if self._stderr_isatty is None else self._stderr_isatty

    # -- the output format -------------------------------------------------------------

    def resolve(self, output: "Output | PlainOutput | str | None") -> Output:
        """The --output value, or the default for where stdout goes (a table on a
        terminal, for the commands that have one)."""
        if output is None:
            return Output.table if self.stdout_isatty else Output.text
        return Output(output.value if isinstance(output, enum.Enum) else output)

    def resolve_plain(self, output: "PlainOutput | None") -> Output:
        """resolve() for a command without a table: text unless json was asked for."""
        return Output.text if output is None else self.resolve(output)

    # -- stdout: the result ------------------------------------------------------------

    def console(self, *, stderr: bool = False, file=None, **kw):
        """The Rich console every table, live view and spinner prints through: stdout (or
        stderr, or `file`), with Rich's own choice of colour and width from the terminal
        (NO_COLOR, COLUMNS, a pipe), or the printer's width on stdout."""
        from rich.console import Console

        if file is None:
            file = self.stderr if stderr else self.stdout
            if self.width is not None and not stderr:
                kw.setdefault("width", self.width)
        return Console(file=file, **kw)

    def emit(self, output, doc, *, text, table=None, json=None, notes=None) -> None:
        """The one json/table/text dispatch of a command's result: `doc` as one JSON
        line (or `json(doc)` when the JSON form differs, built only then); `table(doc)`, a Rich renderable
        or a list of them (a command without one takes PlainOutput: text unless json);
        else `text(doc)`, a str, after `notes(doc)`'s lines on stderr (what the text
        form does not show: the JSON and the table show it or do not need it)."""
        mode = self.resolve(output) if table is not None else self.resolve_plain(output)
        if mode is Output.table and table is None:  # a streamed line or list: the text is its table
            mode = Output.text
        if mode is Output.json:
            self.stdout.write(json_line(doc if json is None else json(doc)) + "\n")
        elif mode is Output.table:
            con = self.console()
            shown = table(doc)
            for t in shown if isinstance(shown, (list, tuple)) else [shown]:
                con.print(t)
        else:
            for line in notes(doc) if notes is not None else ():
                self.say(line)
            self.stdout.write(text(doc))
        self.stdout.flush()  # a --watch loop's frame, or a result before the stderr lines that follow it

    def write(self, text: str) -> None:
        """Result text as it is (a streaming writer's pieces, a one-line answer such as an id)."""
        self.stdout.write(text)

    def flush(self) -> None:
        self.stdout.flush()

    def clear_screen(self) -> None:
        """Home and clear: a text --watch on a terminal redraws its view in place."""
        self.stdout.write("\x1b[H\x1b[2J")

    def live(self, renderable):
        """A Rich Live view on console(), redrawn only on update(..., refresh=True) (the
        --watch tables); not started: use it in a with block or start()/stop() it."""
        from rich.live import Live

        return Live(renderable, auto_refresh=False, screen=False, console=self.console())

    def write_bytes(self, writer) -> None:
        """writer(write) with a write of bytes to stdout (its buffer; decoded where there is
        none, as a test's StringIO): the streaming JSON writers' way out."""
        buf = getattr(self.stdout, "buffer", None)
        if buf is None:
            writer(lambda b: self.stdout.write(b.decode("utf-8")))
        else:
            self.stdout.flush()
            writer(buf.write)
            buf.flush()

    # -- stderr: what is not the result (warnings, notes, summaries, errors) ------------

    def say(self, line: str) -> None:
        """One line on stderr, as it is (Kafka's own wording where a command copies a tool's)."""
        self.stderr.write(line + "\n")
        self.stderr.flush()

    def write_err(self, text: str) -> None:
        """Text on stderr as it is, after what stdout holds (an interactive shell's error lines)."""
        self.stdout.flush()
        self.stderr.write(text)
        self.stderr.flush()

    def tell(self, message: str) -> None:
        """A line of ours on stderr: "quorumctl: MESSAGE" (`tagged`)."""
        self.say(tagged(message))

    def warning(self, message: str) -> None:
        self.tell(f"warning: {message}")

    def note(self, message: str) -> None:
        self.tell(f"note: {message}")

    def error(self, message: str) -> None:
        """An error: the one that ends a command (reported once, by cli/main) or one a
        command reports and goes on after (a --watch's failed sample)."""
        self.tell(f"error: {message}")


class StatusLine:
    """One line on a stream (a printer's stderr), rewritten in place, shown only on a
    terminal (`wait`'s progress): cut to the terminal's width,
    erased by done()."""

    def __init__(self, stream):
        self.stream = stream
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


_FLUSH = 1 << 20


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
    return _encoder().encode(obj)


def json_line(obj) -> str:
    return _encoder().encode(obj).decode("utf-8")
