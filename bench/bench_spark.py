"""Benchmark: spark-export throughput against single-process decoding.

For each data set (the shared corpus, and a generated ~1 GB metadata log dir)
it measures, in the same run:

- decoder: quorumctl's decoder in one process, as dump-log uses it: every
  batch read and CRC-checked, every record decoded, every metadata/control
  value decoded and rendered as its JSON payload (nothing else built);
- single process: the same decoding into the rows spark-export builds (all
  57 columns, as Arrow batches), in one process without Spark: the baseline
  the Spark runs are compared with (the same work, on one core);
- single process + Parquet: the same, also written as Parquet (the whole
  export, without Spark);
- spark-export on each master (local[1], local[2] by default), the job only
  (the JVM start is reported separately), best of --repeat runs, each into a
  fresh output directory.

Run:  .venv/bin/python bench/bench_spark.py [--gb 1] [--repeat 2] [--masters local[1],local[2]]
It prints a Markdown table (records/s and the ratio to the baseline) for
docs/benchmarks.md. The generated set is cached in --workdir between runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from quorumctl.records import metadata as md  # noqa: E402
from quorumctl.records.batch import BatchReader  # noqa: E402
from quorumctl.render.dumplog import metadata_payload  # noqa: E402
from quorumctl.render.output import json_bytes  # noqa: E402
from quorumctl.spark import plan, rows, schema, synthetic  # noqa: E402


def baseline(files) -> tuple[int, float]:
    t = time.perf_counter()
    n = 0
    for f in files:
        for batch in BatchReader(f.path):
            batch.crc_valid()
            control = batch.is_control
            for r in batch.records():
                if control:
                    json_bytes(md.decode_control(r.key, r.value).to_json())
                else:
                    metadata_payload(r.value)   # dump-log's hot path
                n += 1
    return n, time.perf_counter() - t


def single_process(files, workdir: str, parquet: bool) -> tuple[int, float]:
    from quorumctl.spark import writer as w
    out = os.path.join(workdir, "single-process-out")
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    p = plan.plan_files(files, split_size=1 << 40)
    pw = w.PartitionedWriter(w._FileSystem(out), "", schema.arrow_schema(), [], basename="part-0")
    stats = rows.Stats()
    for batch in rows.arrow_batches([x for part in p.partitions for x in part], schema.arrow_schema(),
                                    stats=stats):
        if parquet:
            pw.write(batch)
    pw.close()
    return stats.records, time.perf_counter() - t


def generated_set(workdir: str, gb: float) -> str:
    root = os.path.join(workdir, f"generated-{gb:g}gb")
    marker = os.path.join(root, ".complete")
    if not os.path.exists(marker):
        shutil.rmtree(root, ignore_errors=True)
        t = time.perf_counter()
        written = synthetic.write_log_dir(root, int(gb * (1 << 30)))
        print(f"# generated {sum(w.bytes for w in written) / 2**20:.0f} MiB in {len(written)} segments, "
              f"{sum(w.records for w in written):,} records, in {time.perf_counter() - t:.1f} s",
              file=sys.stderr)
        open(marker, "w").close()
    return root


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus"))
    ap.add_argument("--gb", type=float, default=1.0, help="size of the generated set (0 to skip)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "quorumctl-bench-spark"))
    ap.add_argument("--masters", default="local[1],local[2]")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--writer", default="pyarrow", help="pyarrow, spark, or both (comma-separated)")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)

    sets = []
    if os.path.isdir(args.corpus):
        sets.append(("corpus", args.corpus))
    if args.gb > 0:
        sets.append((f"generated {args.gb:g} GB", generated_set(args.workdir, args.gb)))
    from quorumctl.spark import job

    results = []   # (set, what, records, seconds)
    info = {}
    for name, path in sets:
        files = plan.source_files([path])
        size = sum(f.size for f in files)
        n, secs = baseline(files)
        info[name] = (len(files), size, n)
        results.append((name, "decoder only, 1 process", n, secs))
        n2, secs2 = single_process(files, args.workdir, parquet=False)
        assert n2 == n, (n2, n)
        results.append((name, "**single process**: export rows, no Spark", n2, secs2))
        n3, secs3 = single_process(files, args.workdir, parquet=True)
        results.append((name, "single process: export rows + Parquet, no Spark", n3, secs3))
        print(f"# {name}: decoder {n / secs:,.0f} rec/s, single process {n2 / secs2:,.0f} rec/s, "
              f"+ Parquet {n3 / secs3:,.0f} rec/s", file=sys.stderr)

    first = args.masters.split(",")[0]
    for master in args.masters.split(","):
        t = time.perf_counter()
        spark = job.start_session(master, {"spark.ui.enabled": "false"})
        start = time.perf_counter() - t
        print(f"# {master}: Spark started in {start:.1f} s", file=sys.stderr)
        for writer in args.writer.split(","):
            for name, path in sets:
                best = None
                for i in range(args.repeat):
                    out = os.path.join(args.workdir, "out")
                    shutil.rmtree(out, ignore_errors=True)
                    s = job.export([path], out, spark=spark, writer=writer, progress=False)
                    assert s.records == info[name][2] and s.errors == 0
                    print(f"#   {name} {writer} run {i + 1}: {s.seconds:.2f} s, {s.tasks} tasks, "
                          f"{s.records_per_second:,.0f} rec/s", file=sys.stderr)
                    best = s.seconds if best is None else min(best, s.seconds)
                results.append((name, f"spark-export {master}, writer {writer}", info[name][2], best))
        spark.stop()
        # (the first session starts the JVM; later ones reuse it)
        results.append(("", f"(Spark session start, {master}{'' if master == first else ', JVM running'})",
                        0, start))

    single = {name: n / secs for name, what, n, secs in results if what.startswith("**single")}
    decoder = {name: n / secs for name, what, n, secs in results if what.startswith("decoder")}
    print(f"\nMachine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; "
          f"repeat {args.repeat} (best run shown)\n")
    print("| data | what | seconds | records/s | × single process | × decoder only |")
    print("|---|---|---:|---:|---:|---:|")
    for name, what, n, secs in results:
        if not name:
            print(f"| | {what} | {secs:.1f} | | | |")
            continue
        rate = n / secs
        print(f"| {name} | {what} | {secs:.2f} | {rate:,.0f} | {rate / single[name]:.2f} | "
              f"{rate / decoder[name]:.2f} |")
    print()
    for name, (files, size, records) in info.items():
        print(f"- {name}: {files} files, {size / 2**20:.0f} MiB, {records:,} records")


if __name__ == "__main__":
    main()
