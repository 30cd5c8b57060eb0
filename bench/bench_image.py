"""Benchmark `image` and `history` on the 140 MB real perf log (../shared/perf).

Builds the log as ../shared/perf/README.md says (the real churn segment of a
Kafka 3.7 controller repeated to 128 MB: 2,277,297 records), then times, as
whole `quorumctl` processes, best of `--repeat` runs: reading the file raw and
`verify` (the batch-level pass) as baselines, `image LOG /features` (the whole
log replayed, a small subtree printed), `image LOG -o json` (the whole image,
64,061 partitions, printed), `history LOG --topic demo` (one topic over the whole
log) and `dump-log --cluster-metadata-decoder -o json` (the same records decoded
and printed, in two processes). Each with records/s and peak memory (max RSS).
Usage: python bench/bench_image.py [--log PATH] [--repeat N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERF = os.path.join(os.path.dirname(REPO), "shared", "perf")
EXE = [sys.executable, "-m", "quorumctl"]
RECORDS = 2_277_297


def build(dst_dir: str) -> str:
    src = os.path.join(dst_dir, "churn.log")
    with gzip.open(os.path.join(PERF, "churn-controller-1.log.gz")) as f, open(src, "wb") as out:
        shutil.copyfileobj(f, out)
    dst = os.path.join(dst_dir, "__cluster_metadata-0", f"{0:020d}.log")
    subprocess.run([sys.executable, os.path.join(PERF, "make-perf-log"), src, dst, "128"], check=True)
    os.remove(src)
    return dst


def measure(argv, repeat: int) -> tuple[float, float, float]:
    """Best wall time, its CPU time (user + sys of the process tree) and peak RSS (MiB)."""
    code = ("import resource,subprocess,sys,time;t=time.perf_counter();"
            "subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,check=True);"
            "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
            "print(time.perf_counter()-t,r.ru_utime+r.ru_stime,r.ru_maxrss)")
    best = None
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code] + argv, capture_output=True, text=True, check=True).stdout
        wall, cpu, rss = (float(x) for x in out.split())
        if best is None or wall < best[0]:
            best = (wall, cpu, rss / 1024)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", help="an existing perf log (built from ../shared/perf otherwise)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", help="build the log in this directory and keep it")
    args = ap.parse_args()
    tmp = args.keep or tempfile.mkdtemp(prefix="quorumctl-bench-image-")
    try:
        path = args.log or build(tmp)
        log_dir = os.path.dirname(path)
        size = os.path.getsize(path)
        print(f"log: {path}, {size / 1e6:.1f} MB, {RECORDS:,} records; load average {os.getloadavg()[0]:.1f}")
        rows = [
            ("raw read (baseline)", [sys.executable, "-c", f"f=open({path!r},'rb')\nwhile f.read(1<<20): pass"]),
            ("verify (batch-level pass)", EXE + ["verify", "-o", "text", path]),
            ("image LOG /features (replay all)", EXE + ["image", log_dir, "/features", "-o", "json"]),
            ("image LOG -o json (whole image)", EXE + ["image", log_dir, "-o", "json"]),
            ("history LOG --topic demo", EXE + ["history", log_dir, "--topic", "demo", "-o", "json"]),
            ("dump-log --cluster-metadata-decoder -o json", EXE + ["dump-log", "--cluster-metadata-decoder",
                                                                   "-o", "json", path]),
        ]
        results = []
        for label, argv in rows:
            results.append((label, *measure(argv, args.repeat)))
        raw = results[0][1]
        print(f"\n{'command':46} {'wall s':>7} {'cpu s':>7} {'x raw':>7} {'records/s':>11} {'peak MiB':>9}")
        for label, wall, cpu, rss in results:
            print(f"{label:46} {wall:7.2f} {cpu:7.2f} {wall / raw:7.1f} {RECORDS / wall:11,.0f} {rss:9.0f}")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
