"""Benchmark `quorumctl describe status` as a whole process: wall time and
peak memory, next to `python -c pass` measured in the same run.

The target is the simulated quorum (quorumctl.testing) started in this
process on 127.0.0.1, so the number is quorumctl's own cost: interpreter
start, imports, TCP connect, ApiVersions, DescribeCluster, DescribeQuorum,
rendering. Budget (from Kafka 3.7's kafka-metadata-quorum describe --status,
about 0.87 s and 86 MB): at most a fifth of the time (0.17 s) and a third of
the memory (29 MB). Also prints the slowest imports of the describe path
(`python -X importtime`).

Usage: python bench/bench_describe.py [RUNS]   (default 15)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

BUDGET_S = 0.87 / 5
BUDGET_MB = 86 / 3


def quorumctl_exe() -> str:
    exe = Path(sys.executable).parent / "quorumctl"
    return str(exe) if exe.exists() else "quorumctl"


# Runs one command and reports its wall time and peak RSS. It runs in a small
# helper process: a child forked from this (larger) benchmark process would
# start with our RSS, and ru_maxrss would report that instead of its own peak.
_HELPER = r"""
import os, sys, time
null = os.open(os.devnull, os.O_WRONLY)
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(null, 1)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - t, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


# As installed: Python may cache bytecode (this environment's
# PYTHONDONTWRITEBYTECODE=1 would recompile every module on every run).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(argv: list[str], runs: int, warmup: int = 2) -> tuple[list[float], list[float]]:
    """Wall seconds and peak RSS (MB, per process) of each run, after
    `warmup` unmeasured runs (which also write the bytecode caches)."""
    walls, peaks = [], []
    for i in range(warmup + runs):
        p = subprocess.run([sys.executable, "-c", _HELPER, *argv], capture_output=True, text=True, env=ENV)
        if i < warmup:
            continue
        try:
            wall, rss_kib, code = p.stdout.split()
        except ValueError:
            raise SystemExit(f"measuring {' '.join(argv)} failed: {p.stderr.strip()}")
        if int(code) != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({code}): {p.stderr.strip()}")
        walls.append(float(wall))
        peaks.append(int(rss_kib) / 1024)  # KiB on Linux
    return walls, peaks


def slowest_imports(argv: list[str], top: int = 8) -> list[tuple[int, str]]:
    p = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, env=ENV)
    rows = []
    for line in p.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cum, name = [x.strip() for x in line[len("import time:") :].split("|")]
            if cum.isdigit() and not name.startswith(" "):
                rows.append((int(cum), name.strip()))
    return sorted(rows, reverse=True)[:top]


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from quorumctl.testing.scenarios import demo_cluster

    cluster = demo_cluster()
    try:
        target = cluster.brokers()[0].address
        describe = [quorumctl_exe(), "describe", "status", "--bootstrap-server", target, "--output", "text"]
        base_w, base_m = measure([sys.executable, "-c", "pass"], runs)
        q_w, q_m = measure(describe, runs)
        imports = slowest_imports(["-m", "quorumctl", *describe[1:]])
    finally:
        cluster.stop()

    med = statistics.median
    print(f"{runs} runs each, against the simulated quorum at {target}\n")
    print(f"{'command':40} {'median s':>9} {'min s':>7} {'peak MB':>8} {'x baseline':>11}")
    print(f"{'python -c pass (baseline)':40} {med(base_w):9.3f} {min(base_w):7.3f} {max(base_m):8.1f} {1:11.1f}")
    print(
        f"{'quorumctl describe status':40} {med(q_w):9.3f} {min(q_w):7.3f} {max(q_m):8.1f} "
        f"{med(q_w) / med(base_w):11.1f}"
    )
    ok_t = med(q_w) <= BUDGET_S
    ok_m = max(q_m) <= BUDGET_MB
    print(
        f"\nbudget: <= {BUDGET_S:.3f} s ({'met' if ok_t else 'MISSED'}), <= {BUDGET_MB:.1f} MB "
        f"({'met' if ok_m else 'MISSED'}); Kafka 3.7: 0.87 s, 86 MB "
        f"(quorumctl: {0.87 / med(q_w):.1f}x faster, {86 / max(q_m):.1f}x less memory)"
    )
    print("\nslowest imports on the describe path (cumulative ms):")
    for us, name in imports:
        print(f"  {us / 1000:7.1f}  {name}")
    return 0 if ok_t and ok_m else 1


if __name__ == "__main__":
    sys.exit(main())
