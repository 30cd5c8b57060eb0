"""`describe health` on a real Kafka 4.1 dynamic quorum (3 controllers + 1
broker, started once for the module; every test leaves it healthy again) for
the on-call questions of issue 26: may I restart this node (one follower frozen
past the fetch timeout), is the quorum stalled (both followers frozen) or
flapping (the leader killed and restarted again and again), and a controller
removed with remove-controller and wiped, which stays registered: doctor names
it, health stays healthy with a note.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from kafka41 import cluster_fixture, needs_kafka, until

pytestmark = needs_kafka

cluster = cluster_fixture("kafka-health", dynamic=True)
ROOT = Path(__file__).resolve().parents[2]


def health(cli, cluster, *args, timeout="3") -> tuple[int, dict]:
    code, out, err = cli(
        "describe",
        "health",
        "--bootstrap-controller",
        ",".join(cluster.controllers),
        "-o",
        "json",
        "--timeout",
        timeout,
        *args,
    )
    assert err == "", err
    return code, json.loads(out)


def healthy(cli, cluster, limit_s: float = 120) -> dict:
    return until(
        "a healthy quorum",
        lambda: (lambda r: r[1] if r[1]["verdict"] == "healthy" else None)(health(cli, cluster)),
        limit_s,
    )


def node(cluster, action: str, i: int):
    cluster.run(action, str(i), timeout=240)


def test_can_restart_with_one_follower_frozen(cli, cluster):
    doc = healthy(cli, cluster)
    leader = doc["leaderId"]
    frozen, other = [i for i in (1, 2, 3) if i != leader]
    node(cluster, "stop-node", frozen)
    try:
        time.sleep(2.5)  # past controller.quorum.fetch.timeout.ms (2000): not caught up by the leader's clock too
        code, doc = health(cli, cluster, "--can-restart", str(other))
        assert code == 1, doc
        check = doc["canRestart"]["checks"][0]
        assert (check["id"], check["allowed"], check["caughtUp"]) == (other, False, True)
        assert check["reason"] == (
            f"caught up; without {other} the caught-up voters are {leader} (1 of 3), a majority needs 2"
        )
        code, doc = health(cli, cluster, "--can-restart", str(frozen))
        assert code == 0 and doc["canRestart"]["allowed"] is True
        assert doc["canRestart"]["checks"][0]["reason"].startswith("not caught up")
        assert {v["id"]: v["canRestart"] for v in doc["voters"]} == {leader: False, other: False, frozen: True}
        # text: one line per node saying why
        code, out, err = cli(
            "describe",
            "health",
            "--bootstrap-controller",
            cluster.controllers[leader - 1],
            "--timeout",
            "3",
            "--can-restart",
            f"{other},{frozen}",
        )
        lines = [ln for ln in out.splitlines() if ln.startswith("CanRestart:")]
        assert code == 1 and len(lines) == 2, out
        assert lines[0].startswith(
            f"CanRestart:             node {other}: refused: caught up; without {other}, "
            f"{frozen} the caught-up voters are {leader} (1 of 3)"
        )
    finally:
        node(cluster, "cont-node", frozen)
    healthy(cli, cluster)
    for i in (frozen, other):
        code, doc = health(cli, cluster, "--can-restart", str(i))
        assert (code, doc["canRestart"]["allowed"]) == (0, True), doc["canRestart"]


def test_watch_stalled_with_both_followers_frozen(cli, cluster):
    doc = healthy(cli, cluster)
    leader = doc["leaderId"]
    followers = [i for i in (1, 2, 3) if i != leader]
    for i in followers:
        node(cluster, "stop-node", i)
    try:
        t0 = time.monotonic()
        code, out, err = cli(
            "describe",
            "health",
            "--bootstrap-controller",
            ",".join(cluster.controllers),
            "-o",
            "json",
            "--watch",
            "1",
            "--samples",
            "3",
        )
        took = time.monotonic() - t0
    finally:
        for i in followers:
            node(cluster, "cont-node", i)
    docs = [json.loads(line) for line in out.splitlines()]
    assert (code, len(docs)) == (1, 3), err
    assert docs[-1]["verdict"] == "stalled", [(d["verdict"], d["reasons"][:1]) for d in docs]
    assert docs[-1]["reasons"][0].startswith("stalled: "), docs[-1]["reasons"]
    assert [d["timeoutSeconds"] for d in docs] == [1, 1, 1]
    assert took < 15, took  # no sample waits for the 5 s default timeout without a leader
    healthy(cli, cluster)


def test_watch_flapping_when_the_leader_is_killed_again_and_again(cli, cluster, tmp_path):
    doc = healthy(cli, cluster)
    first_epoch = doc["leaderEpoch"]
    out_path = tmp_path / "watch.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(out_path, "wb") as out, open(tmp_path / "watch.err", "wb") as err:
        watch = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "quorumctl",
                "describe",
                "health",
                "--bootstrap-controller",
                ",".join(cluster.controllers),
                "-o",
                "json",
                "--watch",
                "1",
                "--flapping-epochs",
                "2",
            ],
            stdout=out,
            stderr=err,
            env=env,
            # Ctrl-C as at a terminal: a runner started in the background (`cmd &`
            # without job control) passes SIGINT on ignored, and Python then
            # installs no KeyboardInterrupt handler, so the watch would never stop
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    try:
        for _ in range(3):
            leader = healthy(cli, cluster)["leaderId"]
            node(cluster, "kill-node", leader)
            until("a new leader", lambda: health(cli, cluster)[1]["leaderId"] not in (None, leader))
            cluster.start_node(leader, check=True)

        def flapping():
            docs = [json.loads(line) for line in out_path.read_text().splitlines() if line.strip()]
            return next((d for d in docs if d["verdict"] == "flapping"), None)

        doc = until("a flapping verdict", flapping, 30)
    finally:
        watch.send_signal(signal.SIGINT)
        try:
            watch.wait(timeout=60)
        except subprocess.TimeoutExpired:
            watch.kill()  # the test fails on the timeout; the watch must not outlive it
            watch.wait()
            raise
    reason = next(r for r in doc["reasons"] if r.startswith("flapping: "))
    assert reason.startswith("flapping: the leader epoch changed "), reason
    changes = int(reason.split("changed ")[1].split()[0])
    assert changes >= 2 and doc["leaderEpoch"] >= first_epoch + 2, (reason, doc["leaderEpoch"])
    assert doc["sampleVerdict"] in ("healthy", "degraded", "unhealthy")
    healthy(cli, cluster)


def test_removed_and_wiped_controller_is_a_stale_registration(cli, cluster):
    doc = healthy(cli, cluster)
    leader = doc["leaderId"]
    gone = max(i for i in (1, 2, 3) if i != leader)
    opt = ["--bootstrap-controller", cluster.controllers[leader - 1]]
    code, out, err = cli("remove-controller", *opt, "-i", str(gone), "-d", cluster.dir_ids[gone])
    assert code == 0, err
    until(
        "the voter set without it",
        lambda: sorted(v["id"] for v in health(cli, cluster)[1]["voters"]) == sorted({1, 2, 3} - {gone}),
    )
    node(cluster, "kill-node", gone)
    data = cluster.d / "data" / f"c{gone}"
    shutil.rmtree(data)
    try:
        code, doc = health(cli, cluster)
        assert (code, doc["verdict"], doc["reasons"]) == (0, "healthy", []), doc["reasons"]
        addr = cluster.controllers[gone - 1]
        assert len(doc["notes"]) == 1 and doc["notes"][0].startswith(
            f"controller {gone} ({addr}) is registered but not a voter, and does not answer: a stale registration?"
        )

        # doctor, live: DescribeCluster's controllers against DescribeQuorum's voters
        code, out, err = cli("doctor", str(cluster.d / "data" / f"c{leader}"), *opt, "-o", "json")
        found = [f for f in json.loads(out)["findings"] if f["code"] == "stale-controller-registration"]
        assert code == 1 and len(found) == 1, out
        # from the leader's files (the image holds the registration, with its supported range)
        assert found[0]["message"].startswith(
            f"controller {gone} is registered (listeners CONTROLLER://{addr}) but is not a voter"
        ), found[0]["message"]
        assert "metadata.version" in found[0]["message"] and "KAFKA-20395" in found[0]["remedy"]
        assert found[0]["evidence"][0].endswith(f"the metadata image: /controllers/{gone}")
        code, out, err = cli("doctor", str(cluster.d / "data" / f"c{leader}"), "-o", "json", code=1)
        assert [f["code"] for f in json.loads(out)["findings"]].count("stale-controller-registration") == 1
    finally:
        # back as it was: formatted to join, started, added as a voter again
        conf = cluster.d / "conf" / f"c{gone}.properties"
        if not data.exists():
            code, out, err = cli(
                "bootstrap", "format", "-c", str(conf), "-t", cluster.cluster_id, "--no-initial-controllers", "--apply"
            )
            assert code == 0, err
        cluster.start_node(gone, check=True)

        def add():
            code, out, err = cli("add-controller", *opt, "--command-config", str(conf))
            return code == 0 or "DUPLICATE_VOTER" in err or "already a voter" in err

        until("add-controller accepted", add, 120)
    doc = healthy(cli, cluster)
    assert sorted(v["id"] for v in doc["voters"]) == [1, 2, 3]
    # its new directory id: the cluster's record of it follows
    for line in (data / "meta.properties").read_text().splitlines():
        if line.startswith("directory.id="):
            cluster.dir_ids[gone] = line.split("=", 1)[1]
