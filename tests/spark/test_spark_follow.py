"""`spark-export --follow` on a live log dir: batches appended (half a batch at
a time too) while the stream runs, the process killed mid-batch and
restarted, killed again and restarted, a segment roll, a snapshot appearing,
the oldest segment cleaned away; at the end the dataset holds exactly one row
per record written, no more, no fewer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from spark_cluster import QUORUMCTL, daemon_env, needs_java

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from quorumctl.records import metadata as md  # noqa: E402
from quorumctl.records.batch import encode_batch  # noqa: E402

pytestmark = needs_java()


class Log:
    """A metadata log being written: batches of 1-4 records with consecutive offsets."""

    def __init__(self, root: Path):
        self.part = root / "__cluster_metadata-0"
        self.part.mkdir(parents=True)
        (root / "meta.properties").write_text("node.id=1\nversion=1\ncluster.id=F0ll0wTestClusterId00A\n")
        self.next = 0
        self.offsets: list[int] = []
        self.active = self.part / f"{0:020d}.log"
        self.active.touch()
        self.pending = b""
        self.torn = 0  # bytes of the half-written batch at the end of the active segment

    def batch(self) -> bytes:
        n = 1 + self.next % 4
        rec = (None, md.encode_metadata("NoOpRecord", 0, {}))
        data = encode_batch([rec] * n, base_offset=self.next, base_timestamp=1_735_689_600_000 + self.next)
        self.offsets.extend(range(self.next, self.next + n))
        self.next += n
        return data

    def append(self, batches: int, half: bool = False):
        """Append whole batches, and with `half` the first half of one more
        (completed by the next append), as a writer caught mid-write leaves it."""
        data = self.pending + b"".join(self.batch() for _ in range(batches))
        self.pending = b""
        self.torn = 0
        if half:
            extra = self.batch()
            self.torn = len(extra) // 2
            data += extra[: self.torn]
            self.pending = extra[self.torn :]
        with open(self.active, "ab") as f:
            f.write(data)

    def roll(self):
        assert not self.pending
        self.active = self.part / f"{self.next:020d}.log"
        self.active.touch()


def start(args, env):
    return subprocess.Popen(
        ["nice", "-n", "10", QUORUMCTL, "spark-export", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def committed(checkpoint: Path) -> dict:
    """Positions of the newest committed batch."""
    # a commit is written as N.tmp-PID and renamed to N: only the renamed ones count
    names = [p.name for p in (checkpoint / "commits").glob("*")] if checkpoint.is_dir() else []
    commits = sorted(int(n) for n in names if n.isdigit())
    if not commits:
        return {}
    return json.loads((checkpoint / "offsets" / f"{commits[-1]}.json").read_text())["positions"]


def wait_caught_up(checkpoint: Path, log: Log, proc, timeout=240):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pos = committed(checkpoint)
        sizes = {str(p): p.stat().st_size - (log.torn if p == log.active else 0) for p in log.part.glob("*.log")}
        if sizes and all(pos.get(k) == v for k, v in sizes.items()):
            return
        assert proc.poll() is None, proc.stderr.read()[-3000:]
        time.sleep(0.2)
    raise AssertionError(f"follow did not catch up: {committed(checkpoint)}")


def test_follow_appends_exactly_once_across_two_restarts(tmp_path):
    log = Log(tmp_path / "node1")
    out = tmp_path / "out"
    cp = out / "_checkpoint"
    env = daemon_env(tmp_path)
    args = [
        str(tmp_path / "node1"),
        "--out",
        str(out),
        "--follow",
        "--interval",
        "0.5",
        "--master",
        "local[2]",
        "--split-size",
        "64k",
        "--spark-conf",
        "spark.ui.enabled=false",
        "--no-progress",
        "-o",
        "json",
    ]
    log.append(400)

    # run 1: catches up, follows appends (half a batch left at the end), killed while a batch runs
    p1 = start(args, env)
    try:
        wait_caught_up(cp, log, p1)
        log.append(300, half=True)
        wait_caught_up(cp, log, p1)
        log.append(2000)
        deadline = time.monotonic() + 120
        mid_batch = False
        while time.monotonic() < deadline and p1.poll() is None:
            tmp = out / "_temporary"
            if tmp.is_dir() and any(tmp.iterdir()):
                mid_batch = True
                break
            time.sleep(0.01)
        p1.send_signal(signal.SIGKILL)
        p1.wait(30)
    finally:
        if p1.poll() is None:
            p1.kill()
    first_lines = [json.loads(x) for x in p1.stdout.read().splitlines()]
    assert first_lines and all(x["batch"]["errors"] == 0 for x in first_lines)

    # run 2: finishes (or re-runs) the interrupted batch, then a roll and a snapshot
    p2 = start(args, env)
    try:
        wait_caught_up(cp, log, p2)
        log.append(10)  # completes the half batch too
        log.roll()
        log.append(150)
        snap = log.part / f"{log.next:020d}-{1:010d}.checkpoint"
        snap_records = 3
        snap.write_bytes(encode_batch([(None, md.encode_metadata("NoOpRecord", 0, {}))] * snap_records, base_offset=0))
        wait_caught_up(cp, log, p2)
        p2.send_signal(signal.SIGTERM)
        p2.wait(60)
    finally:
        if p2.poll() is None:
            p2.kill()
    second = [json.loads(x)["batch"] for x in p2.stdout.read().splitlines()]
    if mid_batch:
        assert second[0]["rerun"] is True and second[0]["records"] > 0, second[:2]

    # cleaning: the oldest segment goes (its records are in the dataset already); more appends
    oldest = log.part / f"{0:020d}.log"
    exported_before_cleaning = oldest.stat().st_size
    assert committed(cp)[str(oldest)] == exported_before_cleaning
    oldest.unlink()
    log.append(75, half=True)
    log.append(5)

    # run 3: catches up and stops by itself after two idle rounds
    p3 = start([*args, "--stop-after-idle", "2"], env)
    stdout, stderr = p3.communicate(timeout=300)
    assert p3.returncode == 0, stderr[-3000:]
    assert str(oldest) not in committed(cp)

    t = pq.read_table(str(out), columns=["file_kind", "row_kind", "offset", "source_file"])
    rows = t.to_pylist()
    assert all(r["row_kind"] == "record" for r in rows)  # no torn-tail rows from the live end
    seg = Counter(r["offset"] for r in rows if r["file_kind"] == "segment")
    assert sorted(seg) == log.offsets  # no gaps
    assert set(seg.values()) == {1}  # no duplicates
    assert sum(1 for r in rows if r["file_kind"] == "snapshot") == snap_records
    # every output file belongs to a committed batch; nothing left in _temporary
    assert not (out / "_temporary").exists()
    batches = {p.name for p in (cp / "commits").iterdir()}
    assert {f.name.split("-follow-")[1].split("-")[0].lstrip("0") or "0" for f in out.glob("*.parquet")} <= batches
    assert os.path.exists(out / "_SUCCESS")
