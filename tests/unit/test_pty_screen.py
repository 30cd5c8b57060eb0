"""The test helpers' screen reader (tests/support/pty_screen.py) reads what pyte's own
Screen.display shows: plain and styled text, wide and combining characters, a line
overwritten, cleared and wrapped, rows left empty between written ones."""

from __future__ import annotations

import pyte
import pytest

from pty_screen import screen_lines, screen_text

SCREENS = {
    "plain": b"hello\r\nworld  \r\n",
    "styled": b"\x1b[1;31mred\x1b[0m and \x1b[4munderlined\x1b[0m\r\n\x1b[7m inverse \x1b[0m",
    "wide": "表 ok\r\n宽字符在末尾表\r\nab表\r\n".encode(),
    "wide-half-overwritten": "表表\x1b[1;2HZ".encode(),  # display hides a wide char's stub cell
    "combining": "e\u0301 cafe\u0301\r\n".encode(),
    "gaps": b"\x1b[5;3Hrow five\x1b[9;1Hrow nine",
    "overwritten": b"a long first line\r\x1b[Kshort\r\n\x1b[2J\x1b[Hafter a clear",
    "wrapped": b"x" * 45 + b"\r\n" + b"y" * 12,
    "empty": b"",
    "spaces": b"   \r\n\x1b[3;10H   \r\n",
}


@pytest.mark.parametrize("name", SCREENS)
def test_screen_lines_are_what_display_shows(name):
    screen = pyte.Screen(20, 8)
    pyte.ByteStream(screen).feed(SCREENS[name])
    expected = [line.rstrip() for line in screen.display]
    assert screen_lines(screen) == expected
    assert screen_text(screen) == "\n".join(expected).rstrip("\n")
    assert any(expected) or name in ("empty", "spaces")


def test_a_wide_character_in_the_last_column():
    screen = pyte.Screen(5, 2)
    pyte.ByteStream(screen).feed("abc表表".encode())  # the second one wraps
    assert screen_lines(screen) == [line.rstrip() for line in screen.display] == ["abc表", "表"]


def test_ctrl_c_typed_at_the_terminal_interrupts_the_child():
    """The pty is the child's controlling terminal, as a person's is: Ctrl-C typed while
    the child is not reading keys is SIGINT. Without it the keystroke is echoed and lost
    (a test of the shell's `follow` once hung that way, for lack of a terminal, not a bug)."""
    import sys

    from pty_screen import PtyRun

    code = "import sys, time\ntry:\n    print('ready', flush=True)\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    sys.exit(42)\n"
    pr = PtyRun([sys.executable, "-c", code], cols=40, rows=5)
    try:
        assert pr.wait_for(lambda t: "ready" in t, 20), pr.text()
        pr.type_ctrl_c(lambda t: pr.proc.poll() is not None, 3)
    finally:
        status, _err = pr.finish(10)
    assert status == 42
