"""The shell at a terminal: prompt_toolkit's line editor (history, Emacs keys, Tab
completing commands and image paths), the prompt saying where in the log the image
is, Ctrl-C stopping the command that runs (or clearing the line), Ctrl-D leaving.
Long output pages a screen at a time. Imported only by `quorumctl shell` when a
person types at a terminal (prompt_toolkit is not loaded otherwise)."""

import os
import shutil
import sys

from ..render.output import Printer
from .shell_session import _OWN, _SPECS, Session, Stop


class _Pager:
    """Writes lines to stdout, pausing after each screenful: Enter or Space goes on,
    q stops the listing (as Ctrl-C does), a shows the rest without pausing."""

    def __init__(self, printer: Printer) -> None:
        self.printer = printer
        self.rows = max(shutil.get_terminal_size().lines - 1, 5)
        self.count = 0
        self.all = False

    def reset(self) -> None:
        self.count = 0
        self.all = False

    def write(self, text: str) -> None:
        self.printer.write(text)
        self.count += text.count("\n")
        if not self.all and self.count >= self.rows:
            self.printer.write("-- more: Enter for the next page, a for all, q to stop --")
            self.printer.flush()
            key = _read_key()
            self.printer.write("\r\x1b[K")
            if key in ("q", "Q", "\x03"):
                raise KeyboardInterrupt
            if key in ("a", "A"):
                self.all = True
            self.count = 0


def _read_key() -> str:
    import termios
    import tty

    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        mode = termios.tcgetattr(fd)
        mode[3] &= ~termios.ISIG  # Ctrl-C arrives as a key: it stops the listing
        termios.tcsetattr(fd, termios.TCSANOW, mode)
        return sys.stdin.read(1)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def _pause(seconds: float) -> bool:
    """follow's wait: True when Ctrl-C or q is pressed within `seconds`."""
    import select
    import termios
    import tty

    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        mode = termios.tcgetattr(fd)
        mode[3] &= ~(termios.ISIG | termios.ECHO)
        termios.tcsetattr(fd, termios.TCSANOW, mode)
        ready, _, _ = select.select([fd], [], [], seconds)
        return bool(ready) and os.read(fd, 1) in (b"\x03", b"q", b"Q")
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def _completer(session: Session):
    from prompt_toolkit.completion import Completer, Completion

    commands = sorted([*_SPECS, *_OWN])
    path_commands = {"cat", "cd", "find", "ls", "tree", "changes"}

    class ShellCompleter(Completer):
        def get_completions(self, document, complete_event):
            from ..image.shell import complete

            text = document.text_before_cursor
            words = text.split(" ")
            word = words[-1]
            if len(words) == 1:
                for c in commands:
                    if c.startswith(word):
                        yield Completion(c + " ", start_position=-len(word), display=c)
                return
            cmd = words[0]
            if cmd == "man" and len(words) == 2:
                for c in sorted(_SPECS):
                    if c.startswith(word):
                        yield Completion(c, start_position=-len(word))
                return
            if cmd not in path_commands or (cmd == "cd" and len(words) > 2):
                return
            for cand, is_dir in complete(session.root(), session.cwd, word):
                yield Completion(cand if is_dir else cand + " ", start_position=-len(word), display=cand)

    return ShellCompleter()


def repl(printer: Printer, timeline) -> None:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import InMemoryHistory

    from ..render.shell import prompt_text

    pager = _Pager(printer)
    width = shutil.get_terminal_size().columns
    session = Session(timeline, pager.write, err=printer.write_err, interactive=True, width=width)
    session.pause = _pause
    prompt: PromptSession = PromptSession(
        history=InMemoryHistory(), completer=_completer(session), complete_while_typing=False
    )
    printer.write("[ quorumctl shell: kafka-metadata-shell's commands, and at/where/changes/diff/follow ]\n")
    printer.write(session.where_line() + "\n")
    printer.flush()
    while True:
        try:
            line = prompt.prompt(prompt_text(session.cwd, timeline.where()))
        except KeyboardInterrupt:
            printer.write("^C\n")
            continue
        except EOFError:
            return
        pager.reset()
        session.width = shutil.get_terminal_size().columns
        try:
            session.run_line(line)
        except KeyboardInterrupt:
            printer.write("^C\n")
        except Stop:
            return
        printer.flush()
