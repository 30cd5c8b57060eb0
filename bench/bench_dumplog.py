"""Benchmark dump-log and verify on a large, realistic metadata log.

Writes a metadata log with quorumctl's own writer (bench/metadata_log.py,
default 2,300,000 records), then times, as whole `quorumctl` processes:
reading the file raw (the baseline), `dump-log --cluster-metadata-decoder`
(text), `dump-log --output json`, `verify`, and `dump-log --print-data-log`
(raw payloads as text, Java's UTF-8 replacement) on that log (binary values,
mostly not UTF-8) and on a topic segment of UTF-8 text records; each is
reported as a ratio to the raw read in the same run, with records/s and peak
memory (max RSS).
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

import metadata_log

from quorumctl.records.batch import encode_batch

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
        text_n = n // 4
        text_path = write_text_segment(os.path.join(tmp, "orders-0"), text_n)
        rows = [("raw read (baseline)", raw, None, n)]
        # each measured in a fresh process group so max RSS is per command
        for label, argv, count in [
            ("verify", EXE + ["verify", "-o", "text", path], n),
            (
                "dump-log text --cluster-metadata-decoder",
                EXE + ["dump-log", "-o", "text", "--cluster-metadata-decoder", path],
                n,
            ),
            ("dump-log --output json", EXE + ["dump-log", "-o", "json", path], n),
            (
                "dump-log text --print-data-log (metadata)",
                EXE + ["dump-log", "-o", "text", "--print-data-log", path],
                n,
            ),
            (
                "dump-log text --print-data-log (UTF-8 text)",
                EXE + ["dump-log", "-o", "text", "--print-data-log", text_path],
                text_n,
            ),
        ]:
            wall, _ = run(argv)
            peak = peak_rss(argv)
            rows.append((label, wall, peak, count))
        print(f"\n{'command':44} {'wall s':>8} {'x raw':>8} {'records/s':>12} {'peak MiB':>9}")
        for label, wall, peak, count in rows:
            print(
                f"{label:44} {wall:8.2f} {wall / raw:8.1f} {count / wall:12,.0f} "
                f"{'' if peak is None else f'{peak:9.0f}'}"
            )
    finally:
        if "--keep" not in sys.argv:
            shutil.rmtree(tmp, ignore_errors=True)


def write_text_segment(out_dir: str, n: int) -> str:
    """A topic segment of n records with UTF-8 text keys and JSON values (some
    not ASCII) and a header, 500 to a batch: dump-log --print-data-log on valid
    text, the common case of the UTF-8 decoding."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "00000000000000000000.log")
    with open(path, "wb") as f:
        for base in range(0, n, 500):
            recs = [
                (
                    f"order-{i}".encode(),
                    f'{{"id":{i},"customer":"Zoë Ångström {i % 97}","total":{i % 1000}.{i % 100:02d},'
                    f'"note":"deliver before 10:00, gate {i % 7}"}}'.encode(),
                    [("trace-id", f"{i:016x}".encode())],
                )
                for i in range(base, min(base + 500, n))
            ]
            f.write(encode_batch(recs, base_offset=base, base_timestamp=1_700_000_000_000 + base))
    return path


def peak_rss(argv) -> float:
    """Max RSS of one run, measured with a wrapper process so runs do not mix."""
    code = (
        "import resource,subprocess,sys;subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code] + argv, capture_output=True, text=True).stdout
    return int(out.strip() or 0) / 1024


if __name__ == "__main__":
    main()
