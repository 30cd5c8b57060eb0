"""spark-export next to dump-log and the row builder alone, on the same files, in one run.

One command (from the repo root, with the project's venv):

    nice -n 10 .venv/bin/python bench/bench_spark.py [--sizes corpus,real,1gb] [--skip-1gb]
        [--masters local[1],local[2],standalone] [--repeat 1] [--profile] [--work DIR]

Data sets (--sizes):
  corpus  ../shared/corpus: real log dirs of 29 clusters (many small files).
  real    the 140 MB real controller log (../shared/perf/make-perf-log ... 128, the file
          bench_vs_kafka.py builds; reused from --work when present).
  1gb     the same real log grown to 1 GiB by make-perf-log (... 1024): one segment,
          as Kafka's default segment size makes them.

Per data set, each a whole process (stdout to /dev/null), best wall of --repeat:
  dump-log -o json            quorumctl as shipped (two processes on files over 16 MiB)
  dump-log -o json, 1 process the same forced to one process (the speed target's yardstick)
  row builder, 1 process      spark-export's rows as Arrow batches, no Spark, no Parquet
  row builder + Parquet       the same, written as Parquet (the whole export, no Spark)
  spark-export --master M     local[1], local[2], and `standalone`: a standalone cluster
                              of a Master and two one-core Workers on 127.0.0.1
                              (tests/support/spark_cluster.py starts it), JVM start included
  start-up                    spark-export of a 1 MiB log on each master: the fixed cost
                              (JVM, Python workers, job set-up) within every figure above;
                              with the JVM class archive a warm-up run makes (as a user's
                              second run has it), and without (QUORUMCTL_SPARK_CLASS_ARCHIVE=off)

CPU seconds are those of the whole process tree (and, for the standalone cluster, of
the Workers' executors and Python workers too); peak MB is the peak of the summed
resident sets of the same processes (for the cluster including its idle daemons).
The machine's load average is printed with every row: on a shared machine compare the
ratios of one run, and the CPU seconds, not absolute times across runs.
--profile adds cProfile's top entries of the row builder on the 12.8 MB real log.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from bench_vs_kafka import ENV, PERF, _rss_kb, _tree, grown_log, quorumctl, real_log  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
GB = 1 << 30


# -- measuring ---------------------------------------------------------------


def _cpu_s(pid: int) -> float:
    """utime + stime of one process so far, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def run_once(argv: list[str], also: list[int] = (), env: dict | None = None) -> dict:
    """Wall s, CPU s and peak summed RSS in MB of the command's process tree and of
    the trees of `also` (daemons doing part of its work: a cluster's Workers with
    their executors and Python workers). Both are sampled every 50 ms from /proc:
    CPU is the sum over every process seen of its last utime + stime (minus what
    the `also` processes had used before), since a JVM that PySpark started is
    never reaped into anyone's child times; a process living under 50 ms is missed."""
    import threading

    load = os.getloadavg()[0]
    before = {q: _cpu_s(q) for root in also for q in _tree(root)}
    cpu: dict[int, float] = {}
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env or ENV)
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    reader.start()
    peak = 0

    def sample():
        rss = 0
        for root in [p.pid, *also]:
            for q in _tree(root):
                rss += _rss_kb(q)
                c = _cpu_s(q)
                if c:
                    cpu[q] = max(cpu.get(q, 0.0), c)
        return rss

    while p.poll() is None:
        peak = max(peak, sample())
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    reader.join(10)
    time.sleep(0.3)
    sample()  # the daemons' share, after the job's last tasks
    used = sum(c - before.get(q, 0.0) for q, c in cpu.items())
    return {
        "wall": wall,
        "cpu": used,
        "peak_mb": peak / 1024,
        "code": p.returncode,
        "load": load,
        "stderr": (err[0] if err else b"").decode(errors="replace").strip()[-400:],
    }


def best(argv: list[str], repeat: int, also: list[int] = (), before=None) -> dict:
    runs = []
    for _ in range(repeat):
        if before:
            before()
        runs.append(run_once(argv, also))
    top = min(runs, key=lambda r: r["wall"])
    top["peak_mb"] = max(r["peak_mb"] for r in runs)
    top["walls"] = [round(r["wall"], 2) for r in runs]
    return top


# -- data sets ---------------------------------------------------------------


def grown_log_dir(work: Path, mb: int) -> Path:
    """The real controller log grown to `mb` MiB by make-perf-log: its metadata log dir."""
    return grown_log(work / f"perf-{mb}mb", mb).parent.parent


def tiny_log(work: Path) -> Path:
    root = work / "tiny-1mb"
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        from quorumctl.spark import synthetic

        synthetic.write_log_dir(str(root), 1 << 20, segment_bytes=1 << 20, seed=3)
        (root / ".complete").touch()
    return root


def data_sets(names: list[str], work: Path) -> list[tuple[str, Path]]:
    out = []
    for name in names:
        if name == "corpus":
            if CORPUS.is_dir():
                out.append(("corpus", CORPUS))
            else:
                print(f"# skipping corpus: {CORPUS} is absent", file=sys.stderr)
        elif name == "real":
            out.append(("real 140 MB", real_log(work).parent.parent))
        elif name == "1gb":
            out.append(("grown 1 GiB", grown_log_dir(work, 1024)))
        else:
            raise SystemExit(f"unknown data set {name!r} (corpus, real, 1gb)")
    return out


# -- the single-process pieces (this script runs itself for them) --------------


def rows_only(paths: list[str], parquet_dir: str | None) -> None:
    """spark-export's row builder in this one process (the --_rows mode)."""
    from quorumctl.spark import arrow, plan, rows, schema
    from quorumctl.spark import writer as w

    p = plan.make_plan(paths, split_size=1 << 50)
    sch = schema.arrow_schema()
    stats = rows.Stats()
    pw = None
    if parquet_dir:
        shutil.rmtree(parquet_dir, ignore_errors=True)
        pw = w.PartitionedWriter(w._FileSystem(parquet_dir), "", sch, [], basename="part-0")
    for batch in arrow.arrow_batches([x for part in p.partitions for x in part], sch, stats=stats):
        if pw is not None:
            pw.write(batch)
    if pw is not None:
        pw.close()
    print(stats.records)


def dumplog_one_process(argv: list[str]) -> None:
    """dump-log with its two-process split switched off (the --_dumplog1 mode)."""
    from quorumctl.dump import log as dumplog
    from quorumctl.cli.main import main as cli

    dumplog.PARALLEL_MIN_BYTES = 1 << 62
    sys.argv = ["quorumctl", *argv]
    cli()


def profile_rows(work: Path, top: int = 14) -> None:
    import cProfile
    import pstats

    d = work / "churn-12mb" / "__cluster_metadata-0"
    d.mkdir(parents=True, exist_ok=True)
    f = d / "00000000000000000000.log"
    if not f.exists():
        f.write_bytes(gzip.decompress((PERF / "churn-controller-1.log.gz").read_bytes()))
    from quorumctl.spark import arrow, plan, schema

    p = plan.make_plan([str(d)], split_size=1 << 50)
    pieces = [x for part in p.partitions for x in part]
    sch = schema.arrow_schema()

    def run():
        for _ in arrow.arrow_batches(pieces, sch):
            pass

    run()  # warm: decoders generated, memos filled as in a long task
    prof = cProfile.Profile()
    prof.enable()
    run()
    prof.disable()
    print("\n### Row builder profile (cProfile, 12.8 MB real log, 207,027 records, second pass)\n")
    print("```")
    st = pstats.Stats(prof, stream=sys.stdout)
    st.sort_stats("tottime").print_stats(top)
    print("```")


# -- the run -----------------------------------------------------------------

HEAD = (
    "| data | command | wall s | CPU s | peak MB | records/s (wall) | × dump-log json 1 proc (wall) | load |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|"
)


def line(data: str, label: str, r: dict, records: int | None, base: dict | None) -> str:
    rate = f"{records / r['wall']:,.0f}" if records else ""
    ratio = f"{base['wall'] / r['wall']:.2f}" if base else ""
    note = "" if r["code"] in (0, 1) else f" (exit {r['code']}: {r['stderr'][-160:]})"
    return (
        f"| {data} | {label}{note} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['peak_mb']:.0f} | {rate} | "
        f"{ratio} | {r['load']:.1f} |"
    )


class Shown(list):
    """The results of one data set, each printed (to stderr) as it is measured."""

    def __init__(self, name, records, base, out: list):
        super().__init__()
        self.name, self.records, self.base, self.out = name, records, base, out

    def append(self, item):
        super().append(item)
        self.out.append(line(self.name, item[0], item[1], self.records, self.base))
        print(self.out[-1], file=sys.stderr, flush=True)


def count_records(path: Path) -> int:
    """Records of every file the export reads, from the batch headers (no decoding)."""
    from quorumctl.records.batch import Batch, BatchReader
    from quorumctl.spark import plan

    n = 0
    for f in plan.source_files([str(path)]):
        with BatchReader(f.path) as reader:
            n += sum(b.record_count for b in reader if isinstance(b, Batch))
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="corpus,real,1gb", help="data sets: corpus, real, 1gb (comma-separated)")
    ap.add_argument("--skip-1gb", action="store_true", help="leave out the 1 GiB set")
    ap.add_argument(
        "--masters",
        default="local[1],local[2],standalone",
        help="Spark masters (comma-separated; `standalone`: a 2-worker cluster started here)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per command (best wall is shown)")
    ap.add_argument(
        "--skip",
        default="",
        help="leave out some of: dumplog1 (then no ratios), dumplog2 "
        "(dump-log as shipped), rows, "
        "parquet (row builder + Parquet), startup (comma-separated)",
    )
    ap.add_argument("--profile", action="store_true", help="also profile the row builder")
    ap.add_argument(
        "--work",
        default=os.path.join(tempfile.gettempdir(), "quorumctl-bench"),
        help="where the data sets are built and kept between runs",
    )
    ap.add_argument("--_rows", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--_parquet", help=argparse.SUPPRESS)
    ap.add_argument("--_dumplog1", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._rows:
        return rows_only(a._rows, a._parquet)
    if a._dumplog1 is not None:
        return dumplog_one_process(a._dumplog1)

    # the executors' Python is the driver's PYSPARK_PYTHON (spark.pyspark.python is read by
    # spark-submit only): this one, with quorumctl and pyarrow, as the tests' daemon_env
    ENV["PYSPARK_PYTHON"] = sys.executable
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    # spark-export's JVM class archive (quorumctl/spark/classarchive.py) lives here: made by
    # a warm-up run per master, so every timed run starts as a user's second run does
    ENV["QUORUMCTL_CACHE_DIR"] = str(work / "cache")
    names = [s for s in a.sizes.split(",") if s and not (a.skip_1gb and s == "1gb")]
    sets = data_sets(names, work)
    masters = [m for m in a.masters.split(",") if m]
    qc = quorumctl()
    out = work / "spark-out"
    print(
        f"# spark-export benchmark ({time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, "
        f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
        f"repeat {a.repeat}, best wall shown)"
    )

    cluster = None
    rows_out: list[str] = []
    try:
        if "standalone" in masters:
            from spark_cluster import Standalone

            cdir = Path(tempfile.mkdtemp(prefix="qc-bench-spark-", dir=work))
            t = time.perf_counter()
            cluster = Standalone(cdir, workers=2, worker_memory="2g")
            print(
                f"# standalone cluster (Master + 2 one-core Workers) up in {time.perf_counter() - t:.1f} s",
                file=sys.stderr,
            )

        def spark_argv(master: str, path: Path) -> tuple[list[str], list[int]]:
            argv = qc + [
                "spark-export",
                str(path),
                "--out",
                str(out),
                "--mode",
                "overwrite",
                "--no-progress",
                "--spark-conf",
                "spark.ui.enabled=false",
            ]
            if master == "standalone":
                argv += ["--master", cluster.url]
                for c in cluster.driver_conf() + ["spark.executor.memory=1g"]:
                    argv += ["--spark-conf", c]
                return argv, [p.pid for p in cluster.procs.values()]
            return argv + ["--master", master], []

        def clean():
            shutil.rmtree(out, ignore_errors=True)

        skip = set(a.skip.split(","))
        tiny = tiny_log(work)
        for master in masters:
            argv, also = spark_argv(master, tiny)
            clean()
            warm = run_once(argv, also)  # makes the class archive if there is none
            print(f"# warm-up on {master} (makes the JVM class archive once): {warm['wall']:.1f} s", file=sys.stderr)
        for master in [] if "startup" in skip else masters:
            argv, also = spark_argv(master, tiny)
            r = best(argv, a.repeat, also, clean)
            rows_out.append(line("1 MiB", f"start-up: spark-export --master {master}", r, None, None))
            print(rows_out[-1], file=sys.stderr)
            ENV["QUORUMCTL_SPARK_CLASS_ARCHIVE"] = "off"
            r = best(argv, a.repeat, also, clean)
            del ENV["QUORUMCTL_SPARK_CLASS_ARCHIVE"]
            rows_out.append(line("1 MiB", f"start-up without the class archive, --master {master}", r, None, None))
            print(rows_out[-1], file=sys.stderr)

        for name, path in sets:
            records = count_records(path)
            size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            print(f"# {name}: {path}, {size / 2**20:,.0f} MiB, {records:,} records", file=sys.stderr)
            base = None
            if "dumplog1" not in skip:
                base = best([sys.executable, __file__, "--_dumplog1", "dump-log", "-o", "json", str(path)], a.repeat)
            results = Shown(name, records, base, rows_out)
            if base is not None:
                results.append(("dump-log -o json, 1 process", base))
            if "dumplog2" not in skip:
                results.append(
                    (
                        "dump-log -o json (as shipped: 2 processes on big files)",
                        best(qc + ["dump-log", "-o", "json", str(path)], a.repeat),
                    )
                )
            if "rows" not in skip:
                results.append(
                    (
                        "row builder, 1 process (no Spark, no Parquet)",
                        best([sys.executable, __file__, "--_rows", str(path)], a.repeat),
                    )
                )
            if "parquet" not in skip:
                results.append(
                    (
                        "row builder + Parquet, 1 process (no Spark)",
                        best(
                            [sys.executable, __file__, "--_rows", str(path), "--_parquet", str(out)],
                            a.repeat,
                            before=clean,
                        ),
                    )
                )
            for master in masters:
                argv, also = spark_argv(master, path)
                results.append((f"spark-export --master {master}", best(argv, a.repeat, also, clean)))
    finally:
        if cluster is not None:
            cluster.stop()
            shutil.rmtree(cluster.work, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)

    print()
    print(HEAD)
    for r in rows_out:
        print(r)
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.profile:
        profile_rows(work)


if __name__ == "__main__":
    main()
