"""Ready-made simulated clusters: the demo quorum used by `quorumctl demo`,
the README quick start and the benchmark.

The demo is a Kafka 3.9-style dynamic quorum: controllers 1, 2, 3 (voters,
with directory ids and CONTROLLER endpoints) and broker 4 (an observer), in
live mode: the metadata log grows a little every second and the followers
fetch with a small, fixed delay, until a script silences one of them.
"""

from __future__ import annotations

import time

from .sim import LiveMode, SimulatedCluster, replica

DEMO_CLUSTER_ID = "xScPa4HuQdHtNJ_0TeOP8g"
DEMO_DIRECTORY_IDS = {
    1: "vM4r05tlq6jyNP9GGDz25Q",
    2: "YtKWUuh0Cg3on7MxBgUQWA",
    3: "lwoe0T371QW1ZZOn9NBD_A",
    4: "sIRvnFV7VlzY8nKm3iwhgQ",
}


def demo_cluster(start: bool = True, **node_kw) -> SimulatedCluster:
    """Controllers 1-3 and broker 4 on 127.0.0.1 (ephemeral ports), leader 1
    at epoch 3; started and advertising its real endpoints unless start=False."""
    now = int(time.time() * 1000)
    leo = 1207
    lag = {1: 0, 2: 143, 3: 171, 4: 208}
    voters = [replica(i, leo, now - lag[i], now - lag[i], DEMO_DIRECTORY_IDS[i]) for i in (1, 2, 3)]
    observers = [replica(4, leo, now - lag[4], now - lag[4], DEMO_DIRECTORY_IDS[4])]
    c = SimulatedCluster(
        DEMO_CLUSTER_ID,
        leader_id=1,
        leader_epoch=3,
        high_watermark=leo,
        voters=voters,
        observers=observers,
        live=LiveMode(growth_per_s=12, fetch_lag_ms=lag),
    )
    for i in (1, 2, 3):
        c.add_controller(i, **node_kw)
    c.add_broker(4, **node_kw)
    if start:
        c.start()
        c.advertise_controllers()
    return c
