"""Benchmark `image`, `history` and `diff` on the 140 MB real perf log (../shared/perf).

The log is the real churn segment of a Kafka 3.7 controller repeated to 128 MB
(2,277,297 records), built (or reused) where bench_vs_kafka.py keeps it
(--work, default /tmp/quorumctl-bench). Whole `quorumctl` processes, stdout to
/dev/null, best wall time of --repeat runs, measured as bench_vs_kafka.py
measures (its `best`): wall, CPU (user + system of the process tree), peak
memory as the sum of the resident sets of the whole process tree (replay's
frame-walking worker included), the load average when each run started.
Rows: `verify` (the batch-level pass) and `dump-log --cluster-metadata-decoder
-o json` (the same records decoded and printed) as baselines, `image LOG
/features` (the whole log replayed, a small subtree printed), `image LOG -o json`
(the whole image, 64,061 partitions, printed), `history LOG --topic demo` (one
topic over the whole log), `diff LOG --from 1000000 --to 2000000`.
Usage: python bench/bench_image.py [--repeat N] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench_vs_kafka import best, quorumctl, real_log

RECORDS = 2_277_297


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per command (best wall time is shown)")
    ap.add_argument(
        "--work",
        default=os.path.join(tempfile.gettempdir(), "quorumctl-bench"),
        help="where the log is built and kept between runs",
    )
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    path = real_log(work)
    log_dir = str(path.parent)
    qc = quorumctl()
    print(
        f"# image/history/diff ({time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, {os.cpu_count()} CPUs, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
    print(f"log: {path}, {path.stat().st_size / 1e6:.1f} MB, {RECORDS:,} records\n")
    rows = [
        ("verify (batch-level pass)", qc + ["verify", str(path)]),
        (
            "dump-log --cluster-metadata-decoder -o json",
            qc + ["dump-log", "--cluster-metadata-decoder", "-o", "json", str(path)],
        ),
        ("image LOG /features (replay all)", qc + ["image", log_dir, "/features", "-o", "json"]),
        ("image LOG -o json (whole image)", qc + ["image", log_dir, "-o", "json"]),
        ("history LOG --topic demo", qc + ["history", log_dir, "--topic", "demo", "-o", "json"]),
        (
            "diff LOG --from 1000000 --to 2000000",
            qc + ["diff", log_dir, "--from", "1000000", "--to", "2000000", "-o", "json"],
        ),
    ]
    print("| command | wall s (best) | CPU s | records/s (wall) | peak MB (all processes) | load | all walls |")
    print("|---|---|---|---|---|---|---|")
    for label, argv in rows:
        r = best(argv, args.repeat)
        note = "" if r["code"] == 0 else f" (exit {r['code']}: {r['stderr']})"
        print(
            f"| {label} | {r['wall']:.2f} | {r['cpu']:.2f} | {RECORDS / r['wall']:,.0f} | {r['peak_mb']:.0f} "
            f"| {r['load']:.1f} | {r['walls']}{note} |",
            flush=True,
        )
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
