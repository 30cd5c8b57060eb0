"""Live partitions at scale: quorumctl next to Kafka 4.3's kafka-topics, in one run,
on one real cluster.

    python bench/bench_live_partitions.py [--topics 50] [--partitions 1000] [--repeat 2] [--work DIR]

A real Kafka 4.3 cluster (../shared/kafka/cluster: 1 controller, 3 brokers with a
1 GiB heap each) gets TOPICS topics of PARTITIONS partitions, replication factor 1
(50,000 partitions by default), spread over the brokers; then the last broker
is killed, so about a third of them have no leader. Per command, whole processes with
stdout to a file, best of --repeat:

  kafka-topics.sh --describe --unavailable-partitions   vs  quorumctl topics describe
                                                            --bootstrap-server B --unavailable-partitions
  quorumctl describe health --bootstrap-server B (controllers and every partition)

The two describe outputs must be byte-identical (the run stops otherwise). Memory is
the peak resident set of the command's process (GNU time's %M). The load average is
printed beside each figure: the machine is shared; compare the ratios of one run.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import recover_chaos  # noqa: E402

QUORUMCTL = [sys.executable, "-m", "quorumctl"]


def timed(cmd: list[str], out: Path, env=None) -> tuple[float, int, int]:
    """(wall seconds, peak RSS KiB, exit code) of one run, stdout to `out`."""
    t0 = time.monotonic()
    with open(out, "wb") as f, tempfile.NamedTemporaryFile("r") as tf:
        p = subprocess.run(
            ["/usr/bin/time", "-o", tf.name, "-f", "%M", *cmd], stdout=f, stderr=subprocess.PIPE, env=env
        )
        wall = time.monotonic() - t0
        rss = int((tf.read().strip().splitlines() or ["0"])[-1] or 0)
    return wall, rss, p.returncode


def load() -> str:
    return "%.1f" % os.getloadavg()[0]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    if (why := recover_chaos.skip_reason("4.3")) is not None:
        print(f"skipped: {why}")
        return 0
    import resource

    # a broker holds ~1 file per partition open: past ~19.8 k partitions a broker hit this machine's
    # 20 k limit ("Too many open files"), hence 3 brokers; the brokers inherit our (raised) soft limit
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    work = Path(a.work or tempfile.mkdtemp(prefix="bench-live-"))
    base = recover_chaos.free_base_port(31000, 31990, 3)
    k = recover_chaos.Kafka(work / "kc", base, version="4.3", brokers=3, controllers=1, dynamic=False)
    os.environ["KAFKA_HEAP_OPTS"] = "-Xmx1g -Xms256m"
    tools = recover_chaos.kafka_home("4.3") / "bin"
    env = dict(os.environ, KAFKA_HEAP_OPTS="-Xmx1g", LOG_DIR=str(work))
    try:
        t0 = time.monotonic()
        # a loaded shared machine starts JVMs slowly: more than start()'s 150 s
        k.launch("--controllers", "1", "--brokers", "3", "--base-port", str(base), start_timeout=400)
        k.serves()
        for i in range(a.topics):
            subprocess.run(
                [
                    str(tools / "kafka-topics.sh"),
                    "--bootstrap-server",
                    k.bootstrap,
                    "--create",
                    "--topic",
                    f"bench-{i:03d}",
                    "--partitions",
                    str(a.partitions),
                    "--replication-factor",
                    "1",
                ],
                check=True,
                capture_output=True,
                env=env,
                timeout=600,
            )
        total = a.topics * a.partitions
        print(f"cluster with {total:,} partitions ready in {time.monotonic() - t0:.0f} s (load {load()})")
        k.kill(k.brokers[-1])
        broker = k.broker
        # wait until the controller has fenced the dead broker (its partitions lose their leader)
        until = time.monotonic() + 120
        while time.monotonic() < until:
            r = subprocess.run(
                [*QUORUMCTL, "cluster", "list-endpoints", "-b", broker, "--include-fenced-brokers"],
                capture_output=True,
                text=True,
            )
            if " fenced " in r.stdout:
                break
            time.sleep(2)
        time.sleep(5)
        runs = {
            "kafka-topics.sh --describe --unavailable-partitions": [
                str(tools / "kafka-topics.sh"),
                "--bootstrap-server",
                broker,
                "--describe",
                "--unavailable-partitions",
            ],
            "quorumctl topics describe --bootstrap-server --unavailable-partitions": [
                *QUORUMCTL,
                "topics",
                "describe",
                "--bootstrap-server",
                broker,
                "--unavailable-partitions",
            ],
            "quorumctl describe health --bootstrap-server (quorum + every partition)": [
                *QUORUMCTL,
                "describe",
                "health",
                "--bootstrap-server",
                broker,
                "--timeout",
                "120",
            ],
        }
        outs = {}
        rows = []
        for name, cmd in runs.items():
            best = None
            for n in range(a.repeat):
                out = work / f"out-{len(outs)}-{n}.txt"
                wall, rss, code = timed(cmd, out, env)
                if best is None or wall < best[0]:
                    best = (wall, rss, code, load())
                outs[name] = out
            rows.append((name, *best))
        kafka_out, ours_out = outs[list(runs)[0]].read_bytes(), outs[list(runs)[1]].read_bytes()
        lines = kafka_out.count(b"\n")
        assert kafka_out == ours_out, "the describe outputs differ"
        print(f"\n{total:,} partitions, {lines:,} unavailable: the two describe outputs are byte-identical\n")
        print("| command | wall s | peak MiB | exit | load |\n|---|---|---|---|---|")
        for name, wall, rss, code, ld in rows:
            print(f"| `{name}` | {wall:.2f} | {rss / 1024:.0f} | {code} | {ld} |")
        health = outs[list(runs)[2]].read_text()
        print("\n" + "\n".join(health.splitlines()[:8]))
        return 0
    finally:
        k.discard()
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
