"""quorumctl next to Kafka 4.1's own tools, in one run, on the same files.

One command (from the repo root, with the project's venv):

    python bench/bench_vs_kafka.py [--repeat N] [--no-cluster] [--only real|generated] [--work DIR]

Data sets:
  real       the 140 MB segment built from ../shared/perf (a real Kafka 3.7 controller
             log repeated by make-perf-log: 140,741,689 bytes, 2,277,297 records,
             8,987 batches), placed in a `__cluster_metadata-0` dir so that -o json
             decodes the metadata records as dump-log does on a real log dir.
  generated  bench/metadata_log.py's log written by quorumctl's own writer
             (2,300,000 records in small event-sized batches).

Per data set, whole processes with stdout to /dev/null, best of --repeat (default 2):
  kafka-dump-log.sh --cluster-metadata-decoder --files F   vs  quorumctl dump-log --cluster-metadata-decoder F
                                                           and quorumctl dump-log -o json F
  kafka-dump-log.sh --files F (the batch-level pass)       vs  quorumctl verify F
  and, as the floor, reading the file raw and its CRC-32C in this process.
describe: a real Kafka 4.1 cluster (../shared/kafka/cluster, 3 controllers + 1
broker, ports 29490-29494) and kafka-metadata-quorum.sh describe --status vs
quorumctl describe status, against the same controller (skipped with --no-cluster).

Memory is the peak of the sum of the resident sets of a command's whole process
tree (quorumctl's dump-log runs two processes on big files), sampled every 20 ms.
The machine's load average is printed with every figure: these machines are
shared, so compare the ratios of one run, not absolute times across runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from perfdata import grown_log

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
KAFKA_VERSION = "4.1"  # --kafka 4.3: kafka-dump-log and kafka-metadata-quorum of 4.3 (and a 4.3 cluster)
KAFKA_BIN = SHARED / "kafka" / "kafka_2.13-4.1.0" / "bin"
CLUSTER = SHARED / "kafka" / "cluster"
PERF = SHARED / "perf"
BASE_PORT = 29490
# as installed: Python may cache bytecode (PYTHONDONTWRITEBYTECODE=1 recompiles every module on every run)
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "QUORUMCTL_PURE")}
PURE = {**ENV, "QUORUMCTL_PURE": "1"}  # the pure-Python path, next to the compiled core in the same run


def core_name(env: dict) -> str:
    """Which core `quorumctl --version` says it runs on under env (rust or python)."""
    out = subprocess.run(quorumctl() + ["--version"], capture_output=True, text=True, env=env).stdout
    return "core: " + (out.rsplit("core: ", 1)[-1].rstrip(")\n") if "core: " in out else "unknown")


def quorumctl() -> list[str]:
    exe = Path(sys.executable).parent / "quorumctl"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "quorumctl"]


# -- measuring ---------------------------------------------------------------


def _tree(pid: int) -> list[int]:
    """pid and all its descendants (via /proc/PID/task/TID/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_once(argv: list[str], env: dict | None = None) -> dict:
    """Wall seconds, CPU seconds (user + sys of the tree) and peak summed RSS (MB)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env or ENV)
    peak = 0
    while p.poll() is None:
        peak = max(peak, sum(_rss_kb(q) for q in _tree(p.pid)))
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    return {"wall": wall, "peak_mb": peak / 1024, "code": p.returncode, "stderr": err.strip()[-300:]}


def best(argv: list[str], repeat: int, env: dict | None = None) -> dict:
    import resource

    runs = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load = os.getloadavg()[0]
        r = run_once(argv, env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        r["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        r["load"] = load
        runs.append(r)
    top = min(runs, key=lambda r: r["wall"])
    top["peak_mb"] = max(r["peak_mb"] for r in runs)
    top["walls"] = [round(r["wall"], 2) for r in runs]
    return top


def raw_read(path: Path, crc: bool) -> float:
    import crc32c

    t0 = time.perf_counter()
    c = 0
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(1 << 22):
            if crc:
                c = crc32c.crc32c(chunk, c)
    return time.perf_counter() - t0


# -- data sets ---------------------------------------------------------------


def real_log(work: Path) -> Path:
    return grown_log(work / "real")


def generated_log(work: Path) -> Path:
    d = work / "generated" / "__cluster_metadata-0"
    logs = sorted(d.glob("*.log")) if d.exists() else []
    if logs:
        return logs[0]
    d.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "metadata_log.py"), str(d), "2300000"],
        check=True,
        stdout=subprocess.DEVNULL,
        env=ENV,
    )
    return sorted(d.glob("*.log"))[0]


# -- the run -----------------------------------------------------------------


def row(label: str, r: dict, base: dict | None = None, records: int | None = None) -> str:
    ratio = f"{base['wall'] / r['wall']:.1f}x" if base else ""
    rate = f"{records / r['wall']:,.0f}" if records else ""
    return (
        f"| {label} | {r['wall']:.2f} | {r.get('cpu', 0):.2f} | {r['peak_mb']:.0f} | {ratio} | {rate} "
        f"| {r.get('load', 0):.1f} |"
    )


HEAD = (
    "| command | wall s (best) | CPU s | peak MB (all processes) | x Kafka | records/s | load |\n"
    "|---|---|---|---|---|---|---|"
)


def bench_verify(qc: list[str], path: Path, repeat: int) -> None:
    """verify (the compiled core and the pure path) next to Kafka's batch-level pass."""
    kafka_batch = best([str(KAFKA_BIN / "kafka-dump-log.sh"), "--files", str(path)], repeat)
    ours = best(qc + ["verify", str(path)], repeat)
    pure = best(qc + ["verify", str(path)], repeat, PURE)
    print(row("kafka-dump-log (batch-level pass)", kafka_batch, None))
    print(row(f"quorumctl verify ({core_name(ENV)})", ours, kafka_batch))
    print(row(f"quorumctl verify ({core_name(PURE)})", pure, kafka_batch))
    print(cpu_ratio("quorumctl verify", ours, kafka_batch))
    print(cpu_ratio("quorumctl verify, pure path", pure, kafka_batch))
    print(f"\nall runs (wall s): kafka batch {kafka_batch['walls']}, verify {ours['walls']}, pure {pure['walls']}")


def cpu_ratio(label: str, r: dict, base: dict) -> str:
    return f"{label}: {base['cpu'] / r['cpu']:.1f}x Kafka's CPU ({r['cpu']:.2f} s vs {base['cpu']:.2f} s)"


def bench_logs(which: list[str], work: Path, repeat: int, verify_only: bool = False) -> None:
    qc = quorumctl()
    for name in which:
        path = real_log(work) if name == "real" else generated_log(work)
        from quorumctl.records.batch import BatchReader

        records = batches = 0
        for b in BatchReader(str(path)):
            batches += 1
            records += getattr(b, "record_count", 1)
        size = path.stat().st_size
        print(f"\n## {name}: {path} ({size:,} bytes, {records:,} records, {batches:,} batches)\n")
        print(
            f"raw read {raw_read(path, False):.3f} s, read + CRC-32C {raw_read(path, True):.3f} s "
            f"(in this process, page cache warm)\n"
        )
        print(HEAD)
        if verify_only:
            bench_verify(qc, path, repeat)
            continue
        kafka_text = best(
            [str(KAFKA_BIN / "kafka-dump-log.sh"), "--cluster-metadata-decoder", "--files", str(path)], repeat
        )
        ours_text = best(qc + ["dump-log", "--cluster-metadata-decoder", str(path)], repeat)
        ours_json = best(qc + ["dump-log", "-o", "json", str(path)], repeat)
        pure_text = best(qc + ["dump-log", "--cluster-metadata-decoder", str(path)], repeat, PURE)
        pure_json = best(qc + ["dump-log", "-o", "json", str(path)], repeat, PURE)
        kafka_batch = best([str(KAFKA_BIN / "kafka-dump-log.sh"), "--files", str(path)], repeat)
        ours_verify = best(qc + ["verify", str(path)], repeat)
        print(row("kafka-dump-log --cluster-metadata-decoder (text)", kafka_text, None, records))
        print(
            row(
                f"quorumctl dump-log --cluster-metadata-decoder (text, {core_name(ENV)})",
                ours_text,
                kafka_text,
                records,
            )
        )
        print(row("quorumctl dump-log -o json (vs Kafka's text)", ours_json, kafka_text, records))
        print(row(f"same, pure-Python path ({core_name(PURE)})", pure_text, kafka_text, records))
        print(row("same -o json, pure-Python path", pure_json, kafka_text, records))
        print(row("kafka-dump-log (batch-level pass)", kafka_batch, None))
        print(row("quorumctl verify", ours_verify, kafka_batch))
        for label, r in [
            ("kafka text", kafka_text),
            ("quorumctl text", ours_text),
            ("quorumctl json", ours_json),
            ("pure text", pure_text),
            ("pure json", pure_json),
            ("kafka batch", kafka_batch),
            ("quorumctl verify", ours_verify),
        ]:
            if r["code"] not in (0,):
                print(f"  note: {label} exited {r['code']}: {r['stderr']}")
        print(
            f"\nall runs (wall s): kafka text {kafka_text['walls']}, text {ours_text['walls']}, "
            f"json {ours_json['walls']}, pure text {pure_text['walls']}, pure json {pure_json['walls']}, kafka batch {kafka_batch['walls']}, verify {ours_verify['walls']}"
        )


def bench_describe(work: Path, repeat: int) -> None:
    cdir = Path(tempfile.mkdtemp(prefix="qc-bench-cluster-", dir=work))
    env = dict(ENV, KAFKA_HOME=str(KAFKA_BIN.parent))
    print(f"\n## describe status against a real Kafka {KAFKA_VERSION} cluster ({cdir})\n")
    start = subprocess.run(
        [str(CLUSTER), str(cdir), "start", "--base-port", str(BASE_PORT), "--timeout", "300"],
        capture_output=True,
        text=True,
        env=env,
    )
    if start.returncode != 0:
        print(f"cluster did not start: {start.stdout[-500:]} {start.stderr[-500:]}")
        shutil.rmtree(cdir, ignore_errors=True)
        return
    try:
        ctl = f"127.0.0.1:{BASE_PORT + 1}"
        kafka = [str(KAFKA_BIN / "kafka-metadata-quorum.sh"), "--bootstrap-controller", ctl, "describe", "--status"]
        ours = quorumctl() + ["describe", "status", "--bootstrap-controller", ctl, "-o", "text"]
        run_once(ours)  # writes the bytecode caches
        n = max(repeat, 5)
        k = best(kafka, n)
        q = best(ours, n)
        print(HEAD)
        print(row("kafka-metadata-quorum describe --status", k))
        print(row("quorumctl describe status", q, k))
        print(f"\nall runs (wall s): kafka {k['walls']}, quorumctl {q['walls']}")
        for label, r in [("kafka", k), ("quorumctl", q)]:
            if r["code"] != 0:
                print(f"  note: {label} exited {r['code']}: {r['stderr']}")
    finally:
        subprocess.run([str(CLUSTER), str(cdir), "stop"], capture_output=True, env=env)
        subprocess.run([str(CLUSTER), str(cdir), "wipe"], capture_output=True, env=env)
        shutil.rmtree(cdir, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=2, help="runs per command (best wall time is shown)")
    ap.add_argument("--no-cluster", action="store_true", help="skip the describe benchmark (no Kafka cluster)")
    ap.add_argument("--verify-only", action="store_true", help="only verify next to Kafka's batch-level pass")
    ap.add_argument("--only", choices=["real", "generated"], help="one data set only")
    ap.add_argument("--kafka", choices=["4.1", "4.3"], default="4.1", help="the Kafka release whose tools are measured")
    ap.add_argument(
        "--work",
        default=os.path.join(tempfile.gettempdir(), "quorumctl-bench"),
        help="where the logs are built and kept between runs",
    )
    a = ap.parse_args()
    global KAFKA_VERSION, KAFKA_BIN
    KAFKA_VERSION, KAFKA_BIN = a.kafka, SHARED / "kafka" / f"kafka_2.13-{a.kafka}.0" / "bin"
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"# quorumctl vs Kafka {KAFKA_VERSION} ({time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, "
        f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
    bench_logs([a.only] if a.only else ["real", "generated"], work, a.repeat, a.verify_only)
    if not a.no_cluster:
        bench_describe(work, a.repeat)
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
