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
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_vs_kafka import ENV, PERF, SHARED, best, quorumctl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from recover_chaos import free_base_port

K43 = SHARED / "kafka" / "kafka_2.13-4.3.0"
COPIES = 16
SNAP_256K = "00000000000000828212-0000000030.checkpoint"


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
        subprocess.run(
            [sys.executable, str(PERF / "make-scaled-log"), str(churn), str(scaled) + ".tmp", str(copies)], check=True
        )
        os.replace(str(scaled) + ".tmp", scaled)
    end = _log_end(scaled)
    print(f"scaled log {scaled}: {scaled.stat().st_size / 1e6:.1f} MB, log end offset {end:,}", flush=True)
    run = work / f"controllers-{copies}x"
    if run.exists():
        shutil.rmtree(run)
    run.mkdir()
    base = free_base_port(39500, 60000, span=3)  # the controllers listen on base+1..base+3
    voters = ",".join(f"{i}@127.0.0.1:{base + i}" for i in (1, 2, 3))
    cluster_id = subprocess.run(
        [str(K43 / "bin" / "kafka-storage.sh"), "random-uuid"],
        capture_output=True,
        text=True,
        check=True,
        env={**ENV, "KAFKA_HEAP_OPTS": "-Xmx128m"},
    ).stdout.strip()
    procs = []
    try:
        for i in (1, 2, 3):
            data = run / f"c{i}"
            conf = run / f"c{i}.properties"
            conf.write_text(
                "\n".join(
                    [
                        f"node.id={i}",
                        "process.roles=controller",
                        f"controller.quorum.voters={voters}",
                        "controller.listener.names=CONTROLLER",
                        "listener.security.protocol.map=CONTROLLER:PLAINTEXT",
                        f"listeners=CONTROLLER://127.0.0.1:{base + i}",
                        f"log.dirs={data}",
                        "metadata.log.max.snapshot.interval.ms=5000",
                        "num.network.threads=2",
                        "num.io.threads=2",
                        "background.threads=2",
                        "",
                    ]
                )
            )
            subprocess.run(
                [str(K43 / "bin" / "kafka-storage.sh"), "format", "-t", cluster_id, "-c", str(conf)],
                check=True,
                capture_output=True,
                env={**ENV, "KAFKA_HEAP_OPTS": "-Xmx128m"},
            )
            md = data / "__cluster_metadata-0"  # (format writes it only for a dynamic quorum)
            md.mkdir(exist_ok=True)
            for f in md.iterdir():
                if f.name != "partition.metadata":
                    f.unlink()
            shutil.copyfile(scaled, md / "00000000000000000000.log")
        for i in (1, 2, 3):
            env = {**ENV, "KAFKA_HEAP_OPTS": "-Xmx2g -Xms512m", "LOG_DIR": str(run / f"logs-c{i}")}
            with open(run / f"c{i}.out", "wb") as o:
                procs.append(
                    subprocess.Popen(
                        [str(K43 / "bin" / "kafka-server-start.sh"), str(run / f"c{i}.properties")],
                        stdout=o,
                        stderr=subprocess.STDOUT,
                        env=env,
                        start_new_session=True,
                    )
                )
            print(f"controller {i} pid {procs[-1].pid}", flush=True)
        t0 = time.time()
        best_cp = None
        while time.time() - t0 < 3600:
            time.sleep(10)
            for p in procs:
                if p.poll() is not None:
                    raise SystemExit(f"controller pid {p.pid} exited {p.returncode}; see {run}")
            cps = [
                c
                for i in (1, 2, 3)
                for c in _checkpoints(run / f"c{i}" / "__cluster_metadata-0")
                if int(c.name.split("-")[0]) >= end
            ]
            if cps:
                best_cp = max(cps, key=lambda c: int(c.name.split("-")[0]))
                time.sleep(2)  # let its writer rename and fsync it
                out.mkdir(exist_ok=True)
                tmp = out / (best_cp.name + ".tmp")
                shutil.copyfile(best_cp, tmp)
                os.replace(tmp, out / best_cp.name)
                print(
                    f"snapshot {best_cp.name} after {time.time() - t0:.0f} s, "
                    f"{(out / best_cp.name).stat().st_size / 1e6:.1f} MB",
                    flush=True,
                )
                break
            print(
                f"  {time.time() - t0:.0f} s: no checkpoint past {end:,} yet "
                f"({[c.name for i in (1, 2, 3) for c in _checkpoints(run / f'c{i}' / '__cluster_metadata-0')][-2:]})",
                flush=True,
            )
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


SHELL = K43 / "bin" / "kafka-metadata-shell.sh"
PROMPT = b"\x1b[?2004h"  # what the shell's line editor prints before its prompt on a terminal


class Prompted:
    """Kafka's metadata shell on a pseudo-terminal (`fd`): a command sent, its output read
    up to the next prompt."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""

    def until_prompt(self, timeout: float = 600) -> str:
        end = time.time() + timeout
        while True:
            i = self.buf.find(PROMPT)
            if i >= 0:
                out, self.buf = self.buf[:i], self.buf[i + len(PROMPT) :]
                return out.decode("utf-8", "replace")
            r, _, _ = select.select([self.fd], [], [], max(0.0, end - time.time()))
            if not r:
                raise TimeoutError(self.buf[-300:])
            self.buf += os.read(self.fd, 1 << 16)

    def run(self, cmd: str) -> str:
        os.write(self.fd, cmd.encode() + b"\r")
        return self.until_prompt()


_REG = re.compile(
    r"PartitionRegistration\(replicas=\[(.*?)\], directories=\[(.*?)\], isr=\[(.*?)\], "
    r"removingReplicas=\[(.*?)\], addingReplicas=\[(.*?)\], elr=\[(.*?)\], lastKnownElr=\[(.*?)\], "
    r"leader=(-?\d+), leaderRecoveryState=(\w+), leaderEpoch=(-?\d+), partitionEpoch=(-?\d+)\)"
)


def shell_session(snapshot: Path, commands, last: int, heap: str) -> list[str]:
    """Run commands in one interactive metadata shell (on a pseudo-terminal: given a
    command line, the shell runs it before its loader has published a big snapshot, and
    prints an empty image) once `cat /image/provenance` says the image is at offset
    `last` - 1 (the shell counts a snapshot's records from 0)."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:
        os.environ["KAFKA_HEAP_OPTS"] = heap
        os.execv(str(SHELL), [str(SHELL), "--snapshot", str(snapshot)])
    shell = Prompted(fd)
    until_prompt, run = shell.until_prompt, shell.run

    try:
        until_prompt()
        while f"offset {last - 1}," not in (prov := run("cat /image/provenance")):
            if os.environ.get("BENCH_DEBUG"):
                print(repr(prov[-200:]), file=sys.stderr)
            time.sleep(1)
        return [run(c) for c in commands]
    finally:
        try:
            os.write(fd, b"exit\r")
            time.sleep(1)
            os.kill(pid, 9)
        except OSError:
            pass
        os.waitpid(pid, 0)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(", ")] if text else []


def compare_sample(snapshot: Path, log_dir: Path, sample: int, heap: str) -> str:
    """Field-by-field: `sample` topics spread over the image, every partition, as the
    shell's `tree` prints them and as quorumctl's image (the /topics/NAME subtree) holds them."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from quorumctl.image.replay import replay
    from quorumctl.image.view import topic_json

    img = replay([str(log_dir)]).image
    names = sorted(img.topic_ids)
    step = max(1, len(names) // sample)
    picked = names[::step][:sample]
    # the shell's provenance counts the snapshot's own records: the last metadata record
    # is the one before the footer
    import struct

    data = snapshot.read_bytes()
    records, pos = 0, 0
    while pos + 61 <= len(data):
        records += struct.unpack_from(">i", data, pos + 57)[0]
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    del data
    outs = shell_session(snapshot, [f"tree /image/topics/byName/{n}" for n in picked], records - 1, heap)
    checked = 0
    for name, out in zip(picked, outs):
        ours = topic_json(img.topics[img.topic_ids[name]])
        lines = [re.sub(r"^>\.*", "", ln.strip()) for ln in out.replace("\r", "").split("\n")]  # (the prompt's echo)
        theirs, pid = {}, None
        for ln in lines:
            if re.fullmatch(r"\d+:", ln):
                pid = ln[:-1]
            elif (m := _REG.fullmatch(ln)) and pid is not None:
                theirs[pid] = m.groups()
                pid = None
        assert ln_id(lines) == ours["id"], (name, ln_id(lines), ours["id"])
        assert sorted(theirs) == sorted(ours["partitions"]), (name, len(theirs), len(ours["partitions"]))
        for p, g in theirs.items():
            o = ours["partitions"][p]
            want = (
                o["replicas"],
                o["directories"],
                o["isr"],
                o["removingReplicas"],
                o["addingReplicas"],
                o["eligibleLeaderReplicas"],
                o["lastKnownElr"],
                o["leader"],
                o["leaderRecoveryState"],
                o["leaderEpoch"],
                o["partitionEpoch"],
            )
            got = (
                _ints(g[0]),
                g[1].split(", ") if g[1] else [],
                _ints(g[2]),
                _ints(g[3]),
                _ints(g[4]),
                _ints(g[5]),
                _ints(g[6]),
                int(g[7]),
                g[8],
                int(g[9]),
                int(g[10]),
            )
            assert got == want, (name, p, got, want)
            checked += 1
    return f"{len(picked)} topics, {checked:,} partitions: every field equal"


def ln_id(lines: list[str]) -> str | None:
    for a, b in zip(lines, lines[1:]):
        if a == "id:":
            return b
    return None


def dataset(work: Path, which: str) -> tuple[Path, Path, str]:
    """(snapshot file, log dir for quorumctl, the shell's heap). The 1 M dir also holds
    the scaled log the controllers replayed (hard links), for history and diff."""
    if which == "256k":
        snap = snapshot_256k(work)
        return snap, snap.parent, "-Xmx256M"
    snap = build_million(work)
    d = work / "m1" / "__cluster_metadata-0"
    d.mkdir(parents=True, exist_ok=True)
    for src, name in ((snap, snap.name), (work / f"scaled-{COPIES}x.log", "00000000000000000000.log")):
        if not (d / name).exists() and src.exists():
            os.link(src, d / name)
    return snap, d.parent, "-Xmx2g"  # the shell's default heap (256 MB) runs out at 1 M partitions


def run_bench(work: Path, args) -> None:
    qc = quorumctl()
    for which in args.only or ["256k", "1m"]:
        snap, log_dir, heap = dataset(work, which)
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from quorumctl.image.replay import replay

        img = replay([str(log_dir)]).image
        names = sorted(img.topic_ids)
        topic = names[len(names) // 2]
        parts = img.partition_count()
        del img
        print(
            f"# {which}: {snap.name} ({snap.stat().st_size / 1e6:.1f} MB), {len(names):,} topics, {parts:,} "
            f"partitions ({time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}); the shell with KAFKA_HEAP_OPTS={heap}\n"
        )
        shell_env = {"KAFKA_HEAP_OPTS": heap}
        rows = [
            (
                "kafka-metadata-shell: load, ls /image/topics/byName",
                [str(SHELL), "--snapshot", str(snap), "ls", "/image/topics/byName"],
                shell_env,
                "shell",
            ),
            ("quorumctl image DIR -o json (whole image)", qc + ["image", str(log_dir), "-o", "json"], {}, "shell"),
            ("quorumctl image DIR -o text (whole image)", qc + ["image", str(log_dir), "-o", "text"], {}, "shell"),
            (
                "quorumctl image DIR -o json, pure-Python path",
                qc + ["image", str(log_dir), "-o", "json"],
                {"QUORUMCTL_PURE": "1"},
                "shell",
            ),
            (
                f"kafka-metadata-shell: load, tree /image/topics/byName/{topic}",
                [str(SHELL), "--snapshot", str(snap), "tree", f"/image/topics/byName/{topic}"],
                shell_env,
                "shell1",
            ),
            (
                f"quorumctl image DIR /topics/{topic} -o json",
                qc + ["image", str(log_dir), f"/topics/{topic}", "-o", "json"],
                {},
                "shell1",
            ),
            (
                "quorumctl topics describe DIR --unavailable-partitions",
                qc + ["topics", "describe", str(log_dir), "--unavailable-partitions"],
                {},
                "shell",
            ),
        ]
        if which == "1m":
            rows += [
                (
                    f"quorumctl history DIR --topic {topic} (the 3.3 M-record log)",
                    qc + ["history", str(log_dir), "--topic", topic, "-o", "json"],
                    {},
                    "shell",
                ),
                (
                    "quorumctl diff DIR --from 1000000 --to 3000000 (log)",
                    qc + ["diff", str(log_dir), "--from", "1000000", "--to", "3000000", "-o", "json"],
                    {},
                    "shell",
                ),
            ]
        results: dict = {}
        for _ in range(args.repeat):  # interleaved: every row once, then again
            for label, argv, env, _base in rows:
                import bench_vs_kafka

                saved = dict(bench_vs_kafka.ENV)
                bench_vs_kafka.ENV.update(env)
                try:
                    r = best(argv, 1)
                finally:
                    bench_vs_kafka.ENV.clear()
                    bench_vs_kafka.ENV.update(saved)
                results.setdefault(label, []).append(r)
        base = {"shell": rows[0][0], "shell1": rows[4][0]}
        print("| command | wall s (best) | CPU s | peak MB (all processes) | x the shell | all walls | loads |")
        print("|---|---|---|---|---|---|---|")
        for label, argv, env, b in rows:
            runs = results[label]
            top = min(runs, key=lambda r: r["wall"])
            peak = max(r["peak_mb"] for r in runs)
            ref = min(results[base[b]], key=lambda r: r["wall"])["wall"]
            ratio = "" if label == base[b] else f"{ref / top['wall']:.1f}x"
            note = "" if top["code"] == 0 else f" (exit {top['code']}: {top['stderr'][-120:]})"
            print(
                f"| {label} | {top['wall']:.2f} | {top['cpu']:.2f} | {peak:.0f} | {ratio} | "
                f"{[round(r['wall'], 2) for r in runs]} | {[round(r['load'], 1) for r in runs]}{note} |",
                flush=True,
            )
        if args.sample:
            print(
                f"\nsampled agreement with the shell: {compare_sample(snap, log_dir, args.sample, heap)}\n", flush=True
            )


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
