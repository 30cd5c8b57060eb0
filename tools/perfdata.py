"""The perf logs of ../shared/perf/README.md, made once where a script asks for one:
the real churn controller log grown by make-perf-log. One maker for bench/ and
tools/ (each had its own copy of these steps).

    grown_log(DIR)        DIR/__cluster_metadata-0/00000000000000000000.log, the 140 MB
                          benchmark log (make-perf-log ... 128)
    grown_log(DIR, 1024)  the same log grown to about 1 GiB
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
PERF = SHARED / "perf"
BENCH_SIZE = 128  # make-perf-log's size argument of the 140 MB benchmark log
REAL_SIZE = 140_741_689  # its bytes: 2,277,297 records in 8,987 batches


def grown_log(out_dir: Path, size: int = BENCH_SIZE) -> Path:
    """The churn log grown by make-perf-log to `size` (its MiB argument) as the one segment
    of out_dir/__cluster_metadata-0, made unless there already. The segment appears by
    rename only when complete, so an interrupted run never leaves a short log to reuse."""
    out = Path(out_dir) / "__cluster_metadata-0" / "00000000000000000000.log"
    if out.exists() and (size != BENCH_SIZE or out.stat().st_size == REAL_SIZE):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    src, part = Path(out_dir) / "churn-controller-1.log", Path(out_dir) / "grown.log.part"
    with gzip.open(PERF / "churn-controller-1.log.gz") as gz, open(src, "wb") as f:
        shutil.copyfileobj(gz, f)
    subprocess.run(
        [sys.executable, str(PERF / "make-perf-log"), str(src), str(part), str(size)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    src.unlink()
    if size == BENCH_SIZE and part.stat().st_size != REAL_SIZE:
        raise SystemExit(f"{part}: {part.stat().st_size} bytes from make-perf-log, expected {REAL_SIZE}")
    os.replace(part, out)
    return out
