"""`quorumctl serve` over a simulated day: memory stays flat.

Runs the exporter's sampler (`protocol.exporter.Sampler`, the real sampling
path: `describe health`'s parallel probes over TCP) against the simulated
quorum (`testing/sim.py`) for a day of samples at a 5 s interval (17,280
samples, one scrape of /metrics, the real `prometheus_client` exposition,
every 3 samples), with the clock the sampler and its history read moving 5 s a
sample, and churn a day brings: a new leader every simulated 2 hours, a voter
frozen for 5 minutes every hour, the whole quorum unreachable for a minute
every 6 hours (the samples fail and are counted), a broker appearing and
leaving every 3 hours (observer label churn). Prints the process's RSS and the
Python heap (tracemalloc) every simulated 2 hours, as ratios to the first hour
(the baseline of the same run).

    python bench/bench_serve_memory.py [--hours 24] [--interval 5]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quorumctl.live.automation.exporter import Sampler
from quorumctl.live.health.probe import check_health
from quorumctl.config.client import ClientConfig
from quorumctl.config.addresses import parse_address_list
from quorumctl.render.metrics import exposition, registry_for
from quorumctl.testing.sim import LiveMode, SimulatedCluster, replica


def rss_kib() -> int:
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--interval", type=float, default=5)
    ap.add_argument("--budget", type=float, default=0.2, help="a sample's deadline (a frozen node costs it)")
    a = ap.parse_args()
    now = int(time.time() * 1000)
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw",
        1,
        5,
        500,
        [replica(i, 500, now, now) for i in (1, 2, 3)],
        [replica(4, 500, now, now)],
        live=LiveMode(growth_per_s=2.0),
    )
    c.add_nodes(profile="4.3")
    c.start()
    c.advertise_controllers()
    cfg = ClientConfig()
    boot = parse_address_list(",".join(e.address for e in c.controllers()), "bench")
    sim_t = [time.time()]
    sampler = Sampler(
        lambda budget: check_health(cfg, controllers=boot, timeout_s=budget),
        a.interval,
        a.budget,
        clock=lambda: sim_t[0],
    )
    registry = registry_for(sampler.snapshot)
    per_hour = int(3600 / a.interval)
    total = int(a.hours * per_hour)
    tracemalloc.start()
    rows = []
    base = None
    first = None
    wall0 = time.monotonic()
    scraped = 0
    try:
        for i in range(total):
            hour, within = divmod(i, per_hour)
            if within == 0 and hour and hour % 2 == 0:
                c.set_leader(1 + hour // 2 % 3)
            frozen = 1 + (hour + 1) % 3
            if within == 0 and frozen != c.leader_id:
                c.silence(frozen)
            if within == int(300 / a.interval):
                c.silence(frozen, False)
            down = hour % 6 == 5 and within < int(60 / a.interval)
            for e in c.controllers():
                if down:
                    c.silence(e.node_id)
                elif within == int(60 / a.interval) and hour % 6 == 5:
                    c.silence(e.node_id, False)
            if within == 0:
                with c.lock:  # a broker joins for the odd 3-hour blocks: a new observer label, then gone
                    if hour // 3 % 2:
                        c.observers = [replica(4, 500, now, now), replica(100 + hour, 400, now, now)]
                    else:
                        c.observers = [replica(4, 500, now, now)]
            sampler.step()
            c.requests.clear()  # the simulator's own request log (for tests), not the exporter's memory
            sim_t[0] += a.interval
            c.advance(int(a.interval * 1000))
            if i % 3 == 0:
                body, _ = exposition(registry, "application/openmetrics-text; version=1.0.0")
                scraped += 1
            if within == per_hour - 1 and (hour == 0 or (hour + 1) % 2 == 0):
                gc.collect()
                cur, peak = tracemalloc.get_traced_memory()
                row = (hour + 1, rss_kib(), cur, len(sampler.history.samples), len(body))
                if base is None:
                    base = row
                    first = tracemalloc.take_snapshot()
                rows.append(row)
                print(
                    f"hour {hour + 1:>3}: RSS {row[1] / 1024:6.1f} MiB ({row[1] / base[1]:.2f}x hour 1), "
                    f"python heap {cur / 1024:7.0f} KiB ({cur / base[2]:.2f}x), history {row[3]} samples, "
                    f"/metrics {row[4]} bytes; {time.monotonic() - wall0:.0f} s wall",
                    flush=True,
                )
    finally:
        c.stop()
    grown = tracemalloc.take_snapshot().compare_to(first, "lineno")[:3]
    print(
        "largest heap growth since hour 1:",
        "; ".join(
            f"{st.traceback[0].filename.rsplit('/', 2)[-1]}:{st.traceback[0].lineno} {st.size_diff:+d} B"
            for st in grown
        ),
    )
    s = sampler.snapshot()
    print(
        f"{total} samples ({s.samples} counted, errors {s.sample_errors}), {scraped} scrapes, "
        f"{s.epoch_changes} epoch changes, in {time.monotonic() - wall0:.0f} s wall"
    )


if __name__ == "__main__":
    main()
