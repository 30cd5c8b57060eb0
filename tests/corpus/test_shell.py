"""`quorumctl shell` driven as a person drives it, in a pseudo-terminal (pyte reads the
screen), and run from scripts: on a real cluster's log dir from the corpus.

At the terminal: Tab completes commands and image paths, Ctrl-C stops a long `tree`
and the shell goes on, a wrong path prints Kafka's line and then the closest names,
`at` a time before the log starts is one line, Ctrl-D leaves with status 0. From a
script: words after the source, `-c`, and commands on standard input print Kafka's
text only, and a path that names nothing makes the exit status 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.shared("corpus")

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
LOG_DIR = CORPUS / "rjmfernandes__flink-on-prem" / "data"  # 64 topics, log from offset 0 to 17026


def _pty(*args: str, cols: int = 120, rows: int = 40):
    from pty_screen import PtyRun

    env = dict(os.environ, PROMPT_TOOLKIT_NO_CPR="1")  # pyte answers no cursor-position request
    return PtyRun(
        [sys.executable, "-m", "quorumctl", "shell", *args], cols=cols, rows=rows, env=env, stderr_on_pty=True
    )


def _type(pr, text: str) -> None:
    os.write(pr.master, text.encode())


def _prompt_ready(pr) -> bool:
    return pr.wait_for(lambda t: t.rstrip().endswith(">>"), 60)


def test_completion_wrong_path_at_and_ctrl_d_at_a_terminal():
    pr = _pty(str(LOG_DIR), cols=250)
    try:
        assert _prompt_ready(pr), pr.text()
        # the prompt says where in the log the image is
        assert "[17026 e1 2024-04-19T15:49:57.311Z end] / >>" in pr.text(), pr.text()
        # Tab completes a command, then a path level by level
        for typed, shown in (
            ("tr\t", "tree "),
            ("/im\t", "tree /image/"),
            ("to\t", "tree /image/topics/"),
            ("byN\t", "tree /image/topics/byName/"),
            ("ord\t", "tree /image/topics/byName/order"),  # orders, order_customer_product: their common part
            ("s\t", "tree /image/topics/byName/orders/"),
        ):
            _type(pr, typed)
            assert pr.wait_for(lambda t, shown=shown: f">> {shown.rstrip()}" in t, 20), (typed, pr.text())
        _type(pr, "\x15")  # Ctrl-U: the line cleared
        _type(pr, "cat /image/topics/byName/orders/0\r")
        assert pr.wait_for(lambda t: "PartitionRegistration(replicas=[1]" in t, 20), pr.text()
        # a wrong path: Kafka's line, then the closest names
        _type(pr, "ls /image/topics/byName/order\r")
        assert pr.wait_for(lambda t: "closest in /image/topics/byName: orders" in t, 20), pr.text()
        lines = pr.text().splitlines()
        i = lines.index("ls: /image/topics/byName/order: no such file or directory.")
        assert lines[i + 1].startswith("  closest in /image/topics/byName: orders"), lines[i : i + 2]
        # at a time before the log starts: one line, and the image stays where it was
        _type(pr, "at 2020-01-01T00:00:00Z\r")
        assert pr.wait_for(lambda t: "at 2020-01-01T00:00:00.000Z is outside the log" in t, 30), pr.text()
        err = [ln for ln in pr.text().splitlines() if "outside the log" in ln]
        assert err == [
            f"at 2020-01-01T00:00:00.000Z is outside the log of {LOG_DIR}: it starts at offset 0 "
            "(2024-04-19T13:20:47.629Z) and ends at offset 17026 (2024-04-19T15:49:57.311Z)"
        ], pr.text()
        _type(pr, "at 2024-04-19T15:40:00Z\r")
        assert pr.wait_for(lambda t: "[15678 e1 2024-04-19T15:39:59.773Z] / >>" in t, 60), pr.text()
        _type(pr, "\x04")  # Ctrl-D
    finally:
        code, err = pr.finish(60)
    assert code == 0, err


def test_ctrl_c_stops_a_long_tree_and_the_shell_goes_on():
    pr = _pty(str(LOG_DIR), rows=30)
    try:
        assert _prompt_ready(pr), pr.text()
        _type(pr, "tree /image\r")
        # the tree pages: the first screen, then the pager's line
        assert pr.wait_for(lambda t: "-- more: Enter for the next page" in t, 30), pr.text()
        _type(pr, "\x03")
        assert pr.wait_for(lambda t: t.rstrip().endswith(">>") and "^C" in t, 30), pr.text()
        _type(pr, "pwd\r")
        assert pr.wait_for(lambda t: t.splitlines()[-2:-1] == ["/"], 20), pr.text()
        _type(pr, "exit\r")
    finally:
        code, err = pr.finish(60)
    assert code == 0, err


def run(*args: str, stdin: str | None = None):
    return subprocess.run(
        [sys.executable, "-m", "quorumctl", "shell", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_scripts_get_kafka_text_and_exit_codes():
    src = str(LOG_DIR)
    one = run(src, "ls", "/image/topics/byName/orders")
    assert (one.returncode, one.stdout, one.stderr) == (0, "0\nid\nname\n", "")
    many = run(src, "-c", "cd /image/topics/byName/orders; pwd; ls; cat name")
    assert (many.returncode, many.stdout) == (0, "/image/topics/byName/orders\n0\nid\nname\norders\n"), many.stderr
    piped = run(src, stdin="cd /image/features\ncat metadataVersion\nls /nope\n")
    assert piped.stdout == "Optional[3.6-IV2]\nls: /nope: no such file or directory.\n"
    assert piped.returncode == 2 and piped.stderr == ""
    # time travel from a script: the image at a time, then its topic's leader
    back = run(src, "-c", "at 2024-04-19T15:40:00Z; cat /image/topics/byName/orders/0")
    assert back.returncode == 0, back.stderr
    assert back.stdout.splitlines()[1].endswith(
        "leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0)"
    )
    end = run(src, "cat", "/image/topics/byName/orders/0")
    assert ", leader=-1, " in end.stdout and "leaderEpoch=1, partitionEpoch=1)" in end.stdout
    bad = run(src, "frobnicate")
    assert bad.returncode == 2 and bad.stdout.startswith("invalid choice: 'frobnicate' (choose from 'cat', 'cd'")


def test_moving_in_time_gives_the_image_a_fresh_replay_gives():
    """`at` back and forth starts from kept images (the end, points visited): each stop
    equals the image replayed from scratch to that point, record for record."""
    from quorumctl.image.replay import Point, replay
    from quorumctl.image.timeline import Timeline
    from quorumctl.image.view import to_json

    tl = Timeline([str(LOG_DIR)])
    tl.load()
    stops = [Point(offset=16000), Point(offset=16900), Point(offset=15000), Point(offset=16500), Point()]
    stops.append(Point(time_ms=1713541200000))  # 2024-04-19T15:40:00Z
    stops.append(Point(offset=16950))
    for point in stops:
        img = tl.goto(point)
        fresh = replay([str(LOG_DIR)], point).image
        assert (img.offset, img.epoch, img.records) == (fresh.offset, fresh.epoch, fresh.records), point
        assert to_json(img) == to_json(fresh), point
    # checkpoints were used and stay few
    assert 1 <= len(tl.checkpoints) <= 4
