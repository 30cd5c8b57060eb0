"""Run a command with stdout on a pseudo-terminal and see what a person would
see: the bytes go through a terminal emulator (pyte), and the test reads the
screen. stderr stays a pipe, so a test can still tell errors from output
(unless stderr_on_pty: what goes to stderr only for a terminal, a spinner)."""

from __future__ import annotations

import errno
import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import time

import pyte
from pyte.screens import wcwidth  # the cached wcwidth Screen.display uses


def screen_lines(screen: pyte.Screen) -> list[str]:
    """`screen.display` with each line right-stripped, read from the cells written only:
    display renders every cell of every row (~15 ms a 200x100 screen), and the tests read
    screens thousands of times. Wide characters take two cells, as in display."""
    lines = []
    for y in range(screen.lines):
        row = screen.buffer.get(y)
        end = max((x for x in row if x < screen.columns), default=-1) + 1 if row else 0
        chars, wide = [], False
        for x in range(end):
            if wide:  # the stub cell after a wide character
                wide = False
                continue
            char = row[x].data
            wide = wcwidth(char[0]) == 2
            chars.append(char)
        lines.append("".join(chars).rstrip())
    return lines


def screen_text(screen: pyte.Screen) -> str:
    """The screen as text: its lines right-stripped, without the empty lines at the bottom."""
    return "\n".join(screen_lines(screen)).rstrip("\n")


def default_sigint() -> None:
    """preexec_fn of a child the tests interrupt with SIGINT: a shell runs background
    jobs (`pytest ... &`) with SIGINT ignored, exec keeps an ignored signal ignored,
    and Python then installs no KeyboardInterrupt handler: the child would never stop."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _terminal_child() -> None:
    """preexec_fn of a child on the pseudo-terminal: as in a person's terminal, the pty
    is its controlling terminal (start_new_session made it a session leader), so Ctrl-C
    typed while it is in the terminal's normal mode is SIGINT, not a lost keystroke."""
    default_sigint()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyRun:
    def __init__(
        self, argv: list[str], *, cols: int = 120, rows: int = 60, cwd=None, env=None, stderr_on_pty: bool = False
    ):
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {k: v for k, v in (env or os.environ).items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
        env.setdefault("TERM", "xterm-256color")
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave if stderr_on_pty else subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
            preexec_fn=_terminal_child,
        )
        os.close(slave)
        self._err = bytearray()
        self.raw = bytearray()

    def _pump(self, wait: float) -> bool:
        """Read what is there (waiting up to `wait` s); False once the terminal is closed."""
        fds = [self.master] + ([self.proc.stderr] if self.proc.stderr and not self.proc.stderr.closed else [])
        ready, _, _ = select.select(fds, [], [], wait)
        alive = True
        for f in ready:
            if f is self.master:
                try:
                    data = os.read(self.master, 65536)
                except OSError as e:  # EIO: every writer of the pty is gone
                    if e.errno != errno.EIO:
                        raise
                    data = b""
                if not data:
                    alive = False
                self.raw += data
                self.stream.feed(data)
            else:
                data = os.read(f.fileno(), 65536)
                if data:
                    self._err += data
                else:
                    f.close()
        return alive

    def text(self) -> str:
        return screen_text(self.screen)

    def wait_for(self, predicate, timeout: float = 30) -> bool:
        """Read until predicate(screen text) holds; False if it never did."""
        deadline = time.monotonic() + timeout
        while not predicate(self.text()):
            if time.monotonic() > deadline or (not self._pump(0.1) and self.proc.poll() is not None):
                return predicate(self.text())
        return True

    def interrupt(self):
        self.proc.send_signal(signal.SIGINT)

    def type_ctrl_c(self, predicate, timeout: float) -> bool:
        """Type Ctrl-C and read until predicate(screen text) holds, typing it again (up to 3
        times) while nothing happens, as a person does: CI saw a first one echoed and no
        signal arrive, 1 run in 180 as an unprivileged user (Linux, Python 3.11.2)."""
        for _ in range(3):
            os.write(self.master, b"\x03")
            if self.wait_for(predicate, timeout):
                return True
        return False

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        """Wait for the exit, reading the screen to the end: (exit code, stderr)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._pump(0.1) and self.proc.poll() is not None:
                break
            if self.proc.poll() is not None and not select.select([self.master], [], [], 0)[0]:
                break
        else:
            self.proc.kill()
        code = self.proc.wait(timeout=10)
        if self.proc.stderr and not self.proc.stderr.closed:
            self._err += self.proc.stderr.read()
            self.proc.stderr.close()
        os.close(self.master)
        return code, self._err.decode("utf-8", "replace")
