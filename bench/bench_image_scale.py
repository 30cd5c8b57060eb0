"""Benchmark the image of big real snapshots against Kafka 4.3's kafka-metadata-shell.

Two data sets, both metadata snapshots written by real Kafka controllers:
* `256k`: ../shared/perf/snapshot-256k-partitions.checkpoint.gz (Kafka 4.3.0,
  12,836 topics, 256,244 partitions), gunzipped once into --work.
* `1m`: built here, once, following ../shared/perf/README.md: the churn log
  scaled to 16 copies by `make-scaled-log` (each copy its own topics), three
  real Kafka 4.3.0 controllers (static voters) formatted with kafka-storage,
  their `__cluster_metadata-0` replaced by the scaled log, started with a 2 GB
  heap and `metadata.log.max.snapshot.interval.ms=5000`, stopped once the
  newest `.checkpoint` is past the log's end; that checkpoint is kept under
  --work (default /tmp/quorumctl-bench/scale, outside the repo; nothing here
  is committed). Building takes the controllers several minutes.

Each run is whole processes, measured as bench_vs_kafka.py measures (wall,
CPU of the process tree, peak of the summed resident sets), the shell and
quorumctl interleaved (shell, quorumctl, shell, quorumctl, ...) so that both
see the same machine. The shell's command is `ls /image/topics/byName` on the
whole image (it loads every record before answering; listing keeps its output
small, as the README's reference figure does); `/topics/NAME` is
`cat`-ed from the shell's tree for one topic.

After measuring, a sampled field-by-field comparison: for --sample topics
spread over the image, every partition's replicas, ISR, leader, epochs,
directories and ELR as the shell prints them (`tree /image/topics/byName/T`)
against `quorumctl image DIR -o json`'s.

Usage:
  python bench/bench_image_scale.py build                  # build (or reuse) the 1 M snapshot
  python bench/bench_image_scale.py run [--only 256k|1m] [--repeat N] [--sample N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vs_kafka import ENV, PERF, SHARED, best, quorumctl  # noqa: E402

K43 = SHARED / "kafka" / "kafka_2.13-4.3.0"
COPIES = 16
SNAP_256K = "00000000000000828212-0000000030.checkpoint"


def _free_base(n: int) -> int:
    for base in range(39500, 60000, 10):
        ok = True
        for p in range(base, base + n + 1):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise SystemExit("no free ports")


def _log_end(log: Path) -> int:
    """The offset after the last batch of a segment (its base offset + last offset delta + 1)."""
    import struct
    end = 0
    with open(log, "rb") as f:
        data = f.read()
    pos = 0
    while pos + 61 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        last = struct.unpack_from(">i", data, pos + 23)[0]
        end = base + last + 1
        pos += 12 + length
    return end


def _checkpoints(d: Path) -> list[Path]:
    return sorted(d.glob("*.checkpoint"))


def build_million(work: Path, copies: int = COPIES) -> Path:
    """The newest checkpoint written by three real 4.3 controllers over the scaled churn log (cached)."""
    out = work / f"snapshot-{copies}x"
    done = sorted(out.glob("*.checkpoint")) if out.exists() else []
    if done:
        return done[-1]
    work.mkdir(parents=True, exist_ok=True)
    churn = work / "churn.log"
    if not churn.exists():
        with gzip.open(PERF / "churn-controller-1.log.gz") as src, open(churn, "wb") as dst:
            shutil.copyfileobj(src, dst)
    scaled = work / f"scaled-{copies}x.log"
    if not scaled.exists():
        subprocess.run([sys.executable, str(PERF / "make-scaled-log"), str(churn), str(scaled) + ".tmp",
                        str(copies)], check=True)
        os.replace(str(scaled) + ".tmp", scaled)
    end = _log_end(scaled)
    print(f"scaled log {scaled}: {scaled.stat().st_size / 1e6:.1f} MB, log end offset {end:,}", flush=True)
    run = work / f"controllers-{copies}x"
    if run.exists():
        shutil.rmtree(run)
    run.mkdir()
    base = _free_base(3)
    voters = ",".join(f"{i}@127.0.0.1:{base + i}" for i in (1, 2, 3))
    cluster_id = subprocess.run([str(K43 / "bin" / "kafka-storage.sh"), "random-uuid"], capture_output=True,
                                text=True, check=True, env={**ENV, "KAFKA_HEAP_OPTS": "-Xmx128m"}).stdout.strip()
    procs = []
    try:
        for i in (1, 2, 3):
            data = run / f"c{i}"
            conf = run / f"c{i}.properties"
            conf.write_text("\n".join([
                f"node.id={i}", "process.roles=controller", f"controller.quorum.voters={voters}",
                "controller.listener.names=CONTROLLER", "listener.security.protocol.map=CONTROLLER:PLAINTEXT",
                f"listeners=CONTROLLER://127.0.0.1:{base + i}", f"log.dirs={data}",
                "metadata.log.max.snapshot.interval.ms=5000", "num.network.threads=2", "num.io.threads=2",
                "background.threads=2", ""]))
            subprocess.run([str(K43 / "bin" / "kafka-storage.sh"), "format", "-t", cluster_id, "-c", str(conf)],
                           check=True, capture_output=True, env={**ENV, "KAFKA_HEAP_OPTS": "-Xmx128m"})
            md = data / "__cluster_metadata-0"  # (format writes it only for a dynamic quorum)
            md.mkdir(exist_ok=True)
            for f in md.iterdir():
                if f.name != "partition.metadata":
                    f.unlink()
            shutil.copyfile(scaled, md / "00000000000000000000.log")
        for i in (1, 2, 3):
            env = {**ENV, "KAFKA_HEAP_OPTS": "-Xmx2g -Xms512m", "LOG_DIR": str(run / f"logs-c{i}")}
            with open(run / f"c{i}.out", "wb") as o:
                procs.append(subprocess.Popen([str(K43 / "bin" / "kafka-server-start.sh"), str(run / f"c{i}.properties")],
                                              stdout=o, stderr=subprocess.STDOUT, env=env, start_new_session=True))
            print(f"controller {i} pid {procs[-1].pid}", flush=True)
        t0 = time.time()
        best_cp = None
        while time.time() - t0 < 3600:
            time.sleep(10)
            for p in procs:
                if p.poll() is not None:
                    raise SystemExit(f"controller pid {p.pid} exited {p.returncode}; see {run}")
            cps = [c for i in (1, 2, 3) for c in _checkpoints(run / f"c{i}" / "__cluster_metadata-0")
                   if int(c.name.split("-")[0]) >= end]
            if cps:
                best_cp = max(cps, key=lambda c: int(c.name.split("-")[0]))
                time.sleep(2)  # let its writer rename and fsync it
                out.mkdir(exist_ok=True)
                tmp = out / (best_cp.name + ".tmp")
                shutil.copyfile(best_cp, tmp)
                os.replace(tmp, out / best_cp.name)
                print(f"snapshot {best_cp.name} after {time.time() - t0:.0f} s, "
                      f"{(out / best_cp.name).stat().st_size / 1e6:.1f} MB", flush=True)
                break
            print(f"  {time.time() - t0:.0f} s: no checkpoint past {end:,} yet "
                  f"({[c.name for i in (1, 2, 3) for c in _checkpoints(run / f'c{i}' / '__cluster_metadata-0')][-2:]})",
                  flush=True)
        if best_cp is None:
            raise SystemExit("no snapshot past the log's end within an hour")
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, 15)
        for p in procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
    shutil.rmtree(run, ignore_errors=True)
    return out / best_cp.name


def snapshot_256k(work: Path) -> Path:
    d = work / "snapshot-256k"
    f = d / SNAP_256K
    if not f.exists():
        d.mkdir(parents=True, exist_ok=True)
        with gzip.open(PERF / "snapshot-256k-partitions.checkpoint.gz") as src, open(str(f) + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(str(f) + ".tmp", f)
    return f


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["build", "run"])
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "quorumctl-bench", "scale"))
    ap.add_argument("--only", choices=["256k", "1m"], action="append")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--sample", type=int, default=40)
    args = ap.parse_args()
    work = Path(args.work)
    if args.what == "build":
        print(build_million(work))
        return
    run_bench(work, args)


if __name__ == "__main__":
    main()
