"""Several replicas decide what is committed, on a real Kafka 4.1 dynamic quorum:
both followers are killed at once, the leader goes on appending (NoOpRecords)
that nobody fetches, then it is killed too. `state` on the three log dirs
proves the leader's tail uncommitted; `truncate` with one reference still asks
for --force, with both references it cuts the tail without it; real Kafka then
starts on the truncated logs and the three voters' end offsets meet.
"""

from __future__ import annotations

import json
import time

from kafka41 import needs_kafka, start_cluster, until

pytestmark = needs_kafka


def status(cli, addr: str) -> dict | None:
    code, out, err = cli("describe", "status", "--bootstrap-controller", addr, "-o", "json")
    return json.loads(out) if code == 0 else None


def test_leader_tail_that_no_follower_fetched(cli, tmp_path_factory):
    c = start_cluster(cli, tmp_path_factory, "kafka41-committed", dynamic=True)
    try:
        doc = until(
            "a leader",
            lambda: (
                status(cli, c.controllers[0])
                if (status(cli, c.controllers[0]) or {}).get("leaderId", -1) >= 0
                else None
            ),
        )
        leader = doc["leaderId"]
        followers = [i for i in (1, 2, 3) if i != leader]
        for f in followers:
            c.run("kill-node", str(f))
        time.sleep(3)  # the leader appends a NoOpRecord every 500 ms until it gives up leading
        c.stop()
        data = {i: c.d / "data" / f"c{i}" for i in (1, 2, 3)}

        code, out, err = cli("state", "-o", "json", *[str(data[i]) for i in (1, 2, 3)], code=0)
        assert err == "", err
        st = json.loads(out)
        reps = {r["node_id"]: r for r in st["replicas"]}
        cm = {r["node_id"]: r for r in st["committed"]["replicas"]}
        assert st["committed"]["voter_sets"] == [[1, 2, 3]]
        assert st["committed"]["voters_source"].startswith("VotersRecord: [1, 2, 3]")
        ends = sorted(reps[f]["log_end_offset"] for f in followers)
        lead_end = reps[leader]["log_end_offset"]
        assert lead_end > ends[1], (lead_end, ends)  # the tail nobody fetched
        # the followers never took part in a later epoch: what both hold is committed; what one
        # holds with the leader is too when the leader's quorum-state epoch is still its last
        # entry's (it only resigned, KIP-996 pre-vote did not bump the epoch)
        lq = reps[leader]["quorum_state"]["leaderEpoch"] == reps[leader]["last_epoch"]
        assert cm[leader]["committed_end_offset"] == (ends[1] if lq else ends[0])
        assert cm[leader]["uncommitted_from_offset"] == ends[1]
        for f in followers:
            assert cm[f]["uncommitted_from_offset"] == cm[f]["log_end_offset"] == reps[f]["log_end_offset"]

        # one reference cannot prove the tail uncommitted
        code, out, err = cli(
            "truncate", "-o", "json", str(data[leader]), "--reference", str(data[followers[0]]), "--apply"
        )
        assert code == 1 and "more up to date than node" in json.loads(out)["plan"]["refused"]
        # both can: no --force
        code, out, err = cli(
            "truncate",
            "-o",
            "json",
            str(data[leader]),
            "--reference",
            str(data[followers[0]]),
            "--reference",
            str(data[followers[1]]),
            "--apply",
        )
        res = json.loads(out)
        assert code == 0, out + err
        assert res["plan"]["log_end_offset_after"] == ends[1] and res["plan"]["needs_force"] is None
        assert res["applied"]["verify"]["ok"]
        code, out, err = cli("verify", str(data[leader]))
        assert code == 0, out

        # real Kafka starts on it, and the three voters meet
        c.run("start", "--timeout", "150", timeout=400)
        addr = c.controllers[0]

        def caught_up():
            d = status(cli, addr)
            if not d or d.get("leaderId", -1) < 0:
                return None
            code, out, err = cli("describe", "replication", "--bootstrap-controller", addr, "-o", "json")
            if code != 0:
                return None
            rows = [r for r in json.loads(out)["replicas"] if r["status"] in ("Leader", "Follower")]
            e = {r["nodeId"]: r["logEndOffset"] for r in rows}
            return e if sorted(e) == [1, 2, 3] and len(set(e.values())) == 1 and min(e.values()) > ends[1] else None

        until("three voters with equal end offsets past the cut", caught_up, 120)
    finally:
        c.stop()
