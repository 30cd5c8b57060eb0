"""Two trees of quorumctl side by side, in one run: `describe status` start-up
(against the simulated quorum, started in this process) and verify, dump-log
and image on a log, each command run alternately from tree A and tree B, so a
loaded machine slows both alike. Prints the median wall and CPU of each and the
ratio B/A (below 1: B is faster).

    git worktree add /tmp/before <commit>      # or any checkout of the old tree
    python bench/bench_ab.py /tmp/before . --log DIR [--repeat 5] [--only image]

A tree is put first on PYTHONPATH of each run (`python -m quorumctl`); DIR is a
log dir holding __cluster_metadata-0 (the 140 MB log of ../shared/perf:
tools/perfdata.py, or any other).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def run(tree: Path, args: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of `python -m quorumctl ARGS` from `tree`, stdout discarded."""
    env = dict(os.environ, PYTHONPATH=str(tree.resolve()))
    t = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "quorumctl", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{tree}: quorumctl {' '.join(args)}: exit {code}: {err.decode()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", type=Path, help="tree A (the baseline)")
    ap.add_argument("b", type=Path, help="tree B")
    ap.add_argument("--log", type=Path, required=True, help="a log dir holding __cluster_metadata-0")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--startup-repeat", type=int, default=25)
    ap.add_argument("--only", default="", help="only the commands whose name contains this")
    o = ap.parse_args()
    from quorumctl.testing.scenarios import demo_cluster

    cluster = demo_cluster()
    pdir = str(o.log / "__cluster_metadata-0")
    cases = [
        (
            "describe status",
            ["describe", "status", "--bootstrap-controller", cluster.node_by_id(1).address],
            o.startup_repeat,
        ),
        ("verify", ["verify", "-o", "text", str(o.log)], o.repeat),
        ("dump-log --cluster-metadata-decoder", ["dump-log", "--cluster-metadata-decoder", pdir], o.repeat),
        ("dump-log -o json", ["dump-log", "-o", "json", pdir], o.repeat),
        ("image /features", ["image", str(o.log), "/features"], o.repeat),
    ]
    print(f"A {o.a}\nB {o.b}\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.1f}\n")
    print("| command | A wall s | B wall s | B/A wall | A CPU s | B CPU s | B/A CPU |")
    print("|---|---|---|---|---|---|---|")
    try:
        for name, args, n in (c for c in cases if o.only in c[0]):
            got: dict[str, list[tuple[float, float]]] = {"a": [], "b": []}
            run(o.a, args)  # warm the page cache and .pyc files of both
            run(o.b, args)
            for _ in range(n):
                got["a"].append(run(o.a, args))
                got["b"].append(run(o.b, args))
            wa, wb = (statistics.median(w for w, _ in got[k]) for k in "ab")
            ca, cb = (statistics.median(c for _, c in got[k]) for k in "ab")
            print(
                f"| {name} (median of {n}) | {wa:.3f} | {wb:.3f} | {wb / wa:.2f} | {ca:.3f} | {cb:.3f} | "
                f"{cb / ca:.2f} |",
                flush=True,
            )
    finally:
        cluster.stop()
    print(f"\nload at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
