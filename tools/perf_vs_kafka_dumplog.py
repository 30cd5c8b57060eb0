"""dump-log against the real Kafka 4.3 kafka-dump-log on the 140 MB perf log, byte for byte.

    python tools/perf_vs_kafka_dumplog.py [--work DIR] [--keep] [--mode NAME ...]

Builds the perf log as ../shared/perf/README describes (the real churn controller
log repeated 128 times by make-perf-log: 140,741,689 bytes, 2,277,297 records,
8,987 batches) in a `__cluster_metadata-0` dir, then for each mode runs Kafka
4.3's kafka-dump-log.sh and `quorumctl dump-log` with the same options on the
same file, each to a file, and compares the two outputs byte for byte:

  batch     --files F                                  (the batch-level pass)
  deep      --deep-iteration --files F                 (one line per record)
  data      --deep-iteration --print-data-log --files F
  decoder   --cluster-metadata-decoder --files F       (metadata records as JSON)

Prints per mode the sizes, SHA-256 of both outputs and the verdict; on a
difference, the first differing line of each. Exit 0 when every mode is
identical, 1 otherwise. It is a tool and not a CI test: Kafka's decoder pass
alone costs about a CPU minute on a 2-core machine, and the four modes
together write a few GB.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perfdata import grown_log  # tools/ is on the path of a script run from it

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
KAFKA43 = SHARED / "kafka" / "kafka_2.13-4.3.0"

MODES = {
    "batch": [],
    "deep": ["--deep-iteration"],
    "data": ["--deep-iteration", "--print-data-log"],
    "decoder": ["--cluster-metadata-decoder"],
}


def kafka_env(work: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("JMX_PORT", "KAFKA_DEBUG", "KAFKA_OPTS")}
    env["LOG_DIR"] = str(work)
    return env


def run_to(argv: list[str], out: Path, env: dict) -> tuple[float, float]:
    """Run argv with stdout to `out`; (wall seconds, CPU seconds of the children)."""
    before = os.times()
    t0 = time.perf_counter()
    with open(out, "wb") as f:
        p = subprocess.run(argv, stdout=f, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - t0
    after = os.times()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.decode(errors='replace')[-2000:]}")
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def first_difference(a: Path, b: Path) -> str:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        n = 0
        while True:
            la, lb = fa.readline(), fb.readline()
            n += 1
            if la != lb:
                return f"line {n}:\n  kafka:     {la[:400]!r}\n  quorumctl: {lb[:400]!r}"
            if not la:
                return "identical"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, help="working dir (default: a temporary one, removed after)")
    ap.add_argument("--keep", action="store_true", help="keep the outputs")
    ap.add_argument("--mode", action="append", choices=list(MODES), help="only these modes (repeatable)")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="perf-vs-kafka-"))
    work.mkdir(parents=True, exist_ok=True)
    exe = Path(sys.executable).parent / "quorumctl"
    ours = [str(exe)] if exe.exists() else [sys.executable, "-m", "quorumctl"]
    env = kafka_env(work)
    failed = 0
    try:
        log = grown_log(work)
        print(f"perf log: {log} ({log.stat().st_size:,} bytes)")
        for mode in args.mode or list(MODES):
            opts = MODES[mode]
            k_out, q_out = work / f"{mode}.kafka.txt", work / f"{mode}.quorumctl.txt"
            kw, kc = run_to([str(KAFKA43 / "bin" / "kafka-dump-log.sh"), *opts, "--files", str(log)], k_out, env)
            qw, qc = run_to([*ours, "dump-log", *opts, "--files", str(log)], q_out, env)
            same = k_out.stat().st_size == q_out.stat().st_size and digest(k_out) == digest(q_out)
            print(f"{mode:8} {' '.join(opts) or '(no options)'}")
            print(
                f"  kafka 4.3: {k_out.stat().st_size:>14,} bytes sha256 {digest(k_out)[:16]}  {kw:6.1f} s wall {kc:6.1f} s CPU"
            )
            print(
                f"  quorumctl: {q_out.stat().st_size:>14,} bytes sha256 {digest(q_out)[:16]}  {qw:6.1f} s wall {qc:6.1f} s CPU"
            )
            print("  identical" if same else "  DIFFERENT: " + first_difference(k_out, q_out))
            failed += not same
            if not args.keep:
                k_out.unlink()
                q_out.unlink()
    finally:
        if args.work is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
