"""`quorumctl shell` next to Kafka 4.3's kafka-metadata-shell on the real 256 k-partition
snapshot (../shared/perf/snapshot-256k-partitions.checkpoint.gz, gunzipped once into
--work): how long until the shell is ready and `ls /image/topics/byName | head`
has answered, and the peak memory of all its processes.

Kafka's shell answers a command line before its loader has published a big snapshot
(an empty listing), so it is driven as a person drives it: in a pseudo-terminal, asked
`cat /image/provenance` until the image is at the snapshot's end, then `ls`; the time
is from its start to the listing. quorumctl's non-interactive shell loads the whole
image before it answers: `quorumctl shell --snapshot F ls /image/topics/byName | head`.
Runs alternate (Kafka, quorumctl, Kafka, quorumctl, ...) so both see the same machine;
the ratios are the best wall and the peaks of one run.

Usage: python bench/bench_shell.py [--repeat N] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench_image_scale import SHELL, Prompted, snapshot_256k
from bench_vs_kafka import ENV, _rss_kb, _tree, quorumctl


class _Peak(threading.Thread):
    """The peak of the summed resident sets of a process tree, sampled every 20 ms."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0, False

    def run(self) -> None:
        while not self.done:
            self.peak = max(self.peak, sum(_rss_kb(q) for q in _tree(self.pid)))
            time.sleep(0.02)


def kafka_run(snapshot: Path, provenance: str) -> dict:
    import pty

    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(str(SHELL), [str(SHELL), "--snapshot", str(snapshot)], ENV)
    peak = _Peak(pid)
    peak.start()
    shell = Prompted(fd)
    until_prompt, run = shell.until_prompt, shell.run

    try:
        until_prompt()
        while provenance not in run("cat /image/provenance"):
            time.sleep(0.05)
        listing = run("ls /image/topics/byName")
        wall = time.perf_counter() - t0
    finally:
        peak.done = True
        try:
            os.kill(pid, 9)
        except OSError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    # in columns on the terminal, after the echo of the command; sorted down the columns
    import re

    text = re.sub(r"\x1b(\[[?0-9;]*[a-zA-Z]|[=>])", "", listing.replace("\r", ""))
    words = [re.sub(r"^>\.*", "", w) for ln in text.split("\n") if "ls /image" not in ln for w in ln.split()]
    return {"wall": wall, "peak_mb": peak.peak / 1024, "first": sorted(words)[:10]}


def ours_run(snapshot: Path) -> dict:
    qc = " ".join(quorumctl())
    t0 = time.perf_counter()
    p = subprocess.Popen(
        ["sh", "-c", f"{qc} shell --snapshot {snapshot} ls /image/topics/byName | head"],
        stdout=subprocess.PIPE,
        env=ENV,
    )
    peak = _Peak(p.pid)
    peak.start()
    out = p.communicate()[0].decode()
    wall = time.perf_counter() - t0
    peak.done = True
    assert p.returncode == 0, p.returncode
    return {"wall": wall, "peak_mb": peak.peak / 1024, "first": out.split()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/quorumctl-bench/scale"))
    a = ap.parse_args()
    snap = snapshot_256k(a.work)
    provenance = subprocess.run(
        [*quorumctl(), "shell", "--snapshot", str(snap), "cat", "/image/provenance"],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    ).stdout.strip()
    kafka, ours = [], []
    for _ in range(a.repeat):
        kafka.append(kafka_run(snap, provenance))
        ours.append(ours_run(snap))
    assert all(r["first"] == kafka[0]["first"] for r in kafka + ours), (kafka[0]["first"], ours[0]["first"])
    k_wall, o_wall = min(r["wall"] for r in kafka), min(r["wall"] for r in ours)
    k_mem, o_mem = max(r["peak_mb"] for r in kafka), max(r["peak_mb"] for r in ours)
    print(
        f"# {snap.name}: {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}, {a.repeat} runs each, alternating\n"
    )
    print("| ready, then `ls /image/topics/byName \\| head` | wall s (best) | peak MB (all processes) | all walls |")
    print("|---|---|---|---|")
    for label, rs, wall, mem in (
        ("kafka-metadata-shell 4.3 (pty, until provenance at the end)", kafka, k_wall, k_mem),
        ("quorumctl shell --snapshot F ls ... \\| head", ours, o_wall, o_mem),
    ):
        walls = ", ".join(f"{r['wall']:.2f}" for r in rs)
        print(f"| {label} | {wall:.2f} | {mem:.0f} | {walls} |")
    print(f"\nquorumctl: {k_wall / o_wall:.1f}x faster, {o_mem / k_mem:.2f} of the memory; same first 10 names")
    sys.exit(0 if k_wall / o_wall >= 5 and o_mem <= k_mem / 2 else 1)


if __name__ == "__main__":
    main()
