"""Benchmark dump-log and verify on a large, realistic metadata log.

Writes a metadata log with quorumctl's own writer (bench/metadata_log.py,
default 2,300,000 records), then times, as whole `quorumctl` processes:
reading the file raw (the baseline), `dump-log --cluster-metadata-decoder`
(text), `dump-log --output json`, and `verify`; each is reported as a ratio
to the raw read in the same run, with records/s and peak memory (max RSS).
Usage: python bench/bench_dumplog.py [RECORDS] [--keep DIR]
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metadata_log  # noqa: E402

EXE = [sys.executable, "-m", "quorumctl"]


def run(argv, repeat=3):
    """Best wall time of `repeat` runs and the peak RSS (MiB) of the children."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - t)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return best, peak


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 2_300_000
    tmp = tempfile.mkdtemp(prefix="quorumctl-bench-")
    try:
        d = os.path.join(tmp, "__cluster_metadata-0")
        t = time.perf_counter()
        path = metadata_log.write(d, n)
        size = os.path.getsize(path)
        print(f"wrote {n} records, {size / 1e6:.1f} MB in {time.perf_counter() - t:.1f} s: {path}")
        raw, _ = run([sys.executable, "-c", f"f=open({path!r},'rb')\nwhile f.read(1<<20): pass"])
        rows = [("raw read (baseline)", raw, None)]
        # each measured in a fresh process group so max RSS is per command
        for label, argv in [("verify", EXE + ["verify", "-o", "text", path]),
                            ("dump-log text --cluster-metadata-decoder",
                             EXE + ["dump-log", "-o", "text", "--cluster-metadata-decoder", path]),
                            ("dump-log --output json", EXE + ["dump-log", "-o", "json", path])]:
            wall, _ = run(argv)
            peak = peak_rss(argv)
            rows.append((label, wall, peak))
        print(f"\n{'command':44} {'wall s':>8} {'x raw':>8} {'records/s':>12} {'peak MiB':>9}")
        for label, wall, peak in rows:
            print(f"{label:44} {wall:8.2f} {wall / raw:8.1f} {n / wall:12,.0f} "
                  f"{'' if peak is None else f'{peak:9.0f}'}")
    finally:
        if "--keep" not in sys.argv:
            shutil.rmtree(tmp, ignore_errors=True)


def peak_rss(argv) -> float:
    """Max RSS of one run, measured with a wrapper process so runs do not mix."""
    code = ("import resource,subprocess,sys;subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code] + argv, capture_output=True, text=True).stdout
    return int(out.strip() or 0) / 1024


if __name__ == "__main__":
    main()
