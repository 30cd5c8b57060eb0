"""The standalone executables (tools/build_standalone.py) next to the pip-installed
CLI, in one run: size of each file, and start-up as whole processes, alternated
run by run so all three see the same machine:

- `describe status` against the simulated quorum (quorumctl.testing) on 127.0.0.1;
- `dump-log` of a small segment (a replica `quorumctl demo --write-examples` writes).

Budgets (issue 47): each file at most 40 MB; each command's median wall time at most
2x the pip-installed CLI's. Exit 1 when one is missed. Each run unpacks into TMPDIR
(a fresh directory here, on the same file system as /tmp).

Usage: python bench/bench_standalone.py DIR [RUNS]   (DIR: what build_standalone.py wrote; default 15 runs)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_describe import ENV, measure, quorumctl_exe

MAX_MB = 40
MAX_RATIO = 2.0


def main() -> int:
    d = Path(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from quorumctl.testing.examples import write_examples
    from quorumctl.testing.scenarios import demo_cluster

    exes = {
        "pip-installed": quorumctl_exe(),
        "quorumctl": str(d / "quorumctl"),
        "quorumctl-static": str(d / "quorumctl-static"),
    }
    ok = True
    print(f"{'file':20} {'MB':>6}")
    for name in ("quorumctl", "quorumctl-static"):
        mb = Path(exes[name]).stat().st_size / 1e6
        ok &= mb <= MAX_MB
        print(f"{name:20} {mb:6.1f}")
    tmp = tempfile.mkdtemp(prefix="quorumctl-bench-standalone-")
    os.environ["TMPDIR"] = ENV["TMPDIR"] = tmp
    write_examples(tmp + "/ex")
    segment = next(Path(tmp, "ex", "diverged").rglob("*.log"))
    cluster = demo_cluster()
    try:
        target = cluster.brokers()[0].address
        commands = {
            "describe status": ["describe", "status", "--bootstrap-server", target, "-o", "text"],
            f"dump-log ({segment.stat().st_size} B segment)": ["dump-log", "-o", "text", str(segment)],
        }
        print(f"\n{runs} runs each, alternated; median and min wall s, peak MB; x = median / pip-installed's\n")
        print(f"{'command':34} {'executable':18} {'median':>7} {'min':>7} {'peak MB':>8} {'x':>5}")
        for label, args in commands.items():
            walls: dict[str, list[float]] = {n: [] for n in exes}
            peaks: dict[str, list[float]] = {n: [] for n in exes}
            for i in range(runs):
                for name, exe in exes.items():
                    w, m = measure([exe, *args], 1, warmup=1 if i == 0 else 0)
                    walls[name] += w
                    peaks[name] += m
            base = statistics.median(walls["pip-installed"])
            for name in exes:
                med = statistics.median(walls[name])
                ratio = med / base
                if name != "pip-installed":
                    ok &= ratio <= MAX_RATIO
                print(f"{label:34} {name:18} {med:7.3f} {min(walls[name]):7.3f} {max(peaks[name]):8.1f} {ratio:5.2f}")
    finally:
        cluster.stop()
        subprocess.run(["rm", "-rf", tmp], check=False)
    print(f"\nbudgets: each file <= {MAX_MB} MB, start-up <= {MAX_RATIO}x pip-installed: {'met' if ok else 'MISSED'}")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
