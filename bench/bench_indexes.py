"""Benchmark the index readers, dump-log text and checks on a large segment.

Writes one log segment of N single-record batches (default 300,000, ~30 MB)
with the indexes Kafka writes for it (an entry every 4096 bytes), once trimmed
(a closed segment) and once preallocated to 10 MB (the active segment, where
every Kafka lookup for the time index dump lands on position 0). Times, in
this process: reading the log raw (the baseline), the dumps and the checks;
each as a ratio to the raw read, with the peak Python allocation
(tracemalloc, measured in a separate run). Usage: python bench/bench_indexes.py [BATCHES]
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
import tempfile
import time
import tracemalloc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from quorumctl.records.batch import encode_batch
from quorumctl.logdir import index_dump
from quorumctl.logdir import index_checks


def write_segment(d: str, n: int, preallocate: bool) -> tuple[str, str, str]:
    os.makedirs(d, exist_ok=True)
    log = os.path.join(d, "00000000000000000000.log")
    oidx, tidx = bytearray(), bytearray()
    pos = since = 0
    with open(log, "wb") as f:
        for i in range(n):
            b = encode_batch([(None, b"x" * 30)], base_offset=i, base_timestamp=1_700_000_000_000 + i)
            if since > 4096:  # LogSegment.append: entry once past index.interval.bytes
                oidx += struct.pack(">ii", i, pos)
                tidx += struct.pack(">qi", 1_700_000_000_000 + i, i)
                since = 0
            f.write(b)
            pos += len(b)
            since += len(b)
    if preallocate:
        oidx += bytes(10 * 1024 * 1024 - len(oidx))
        tidx += bytes(10485756 - len(tidx))
    idx, tix = log[:-4] + ".index", log[:-4] + ".timeindex"
    with open(idx, "wb") as f:
        f.write(oidx)
    with open(tix, "wb") as f:
        f.write(tidx)
    return log, idx, tix


def measure(fn, repeat=3):
    """Best wall time of `repeat` runs, then the peak allocation of one more run
    under tracemalloc (which slows allocation, so it is not timed)."""
    wall = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        wall = min(wall, time.perf_counter() - t)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return wall, peak


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    tmp = tempfile.mkdtemp(prefix="quorumctl-bench-idx-")
    try:
        t = time.perf_counter()
        closed = write_segment(os.path.join(tmp, "closed"), n, False)
        active = write_segment(os.path.join(tmp, "active"), n, True)
        size = os.path.getsize(closed[0])
        print(
            f"wrote {n} batches, {size / 1e6:.1f} MB, {os.path.getsize(closed[1]) // 8} index entries "
            f"in {time.perf_counter() - t:.1f} s"
        )

        def raw():
            with open(closed[0], "rb") as f:
                while f.read(1 << 20):
                    pass

        rows = [("raw read of the log (baseline)", *measure(raw))]
        for label, (log, idx, tix) in (("closed", closed), ("active", active)):
            rows += [
                (f"{label}: dump .index", *measure(lambda: index_dump.dump_index_lines(idx))),
                (f"{label}: dump .timeindex", *measure(lambda: index_dump.dump_timeindex_lines(tix))),
                (f"{label}: check .index", *measure(lambda: index_checks.check_offset_index(idx))),
                (f"{label}: check .timeindex", *measure(lambda: index_checks.check_time_index(tix))),
            ]
        base = rows[0][1]
        print(f"\n{'what':34} {'wall s':>8} {'x raw':>8} {'peak MiB':>9}")
        for label, wall, peak in rows:
            print(f"{label:34} {wall:8.3f} {wall / base:8.1f} {peak:9.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
