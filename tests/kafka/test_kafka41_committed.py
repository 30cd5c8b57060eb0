"""Several replicas decide what is committed, on a real dynamic quorum (3 controllers, no
broker: none is needed) of Kafka 4.1.0 and of the 4.4 branch (its dirs in 4.4's layout:
`bootstrap format --kafka-version 4.4`, a controller's bootstrap records in its zero
snapshot): both followers are killed at once, the leader goes on appending (NoOpRecords)
that nobody fetches, then it is killed too. `state` on the three log dirs
proves the leader's tail uncommitted; `truncate` with one reference still asks
for --force, with both references it cuts the tail without it; real Kafka then
starts on the truncated logs and the three voters' end offsets meet.
"""

from __future__ import annotations

import json

import pytest

from kafka41 import start_cluster, until

VERSIONS = [pytest.param(v, marks=pytest.mark.kafka(v), id=f"kafka{v}") for v in ("4.1", "4.4")]
KAFKA_VERSION = {"4.4": ("--kafka-version", "4.4")}
SNAP = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"


def status(cli, addr: str) -> dict | None:
    code, out, err = cli("describe", "status", "--bootstrap-controller", addr, "-o", "json")
    return json.loads(out) if code == 0 else None


def replication_ends(cli, addr: str) -> dict[int, int] | None:
    """The voters' end offsets as `addr` (the leader) reports them, or None."""
    code, out, err = cli("describe", "replication", "--bootstrap-controller", addr, "-o", "json", "--timeout", "5")
    if code != 0:
        return None
    return {
        r["nodeId"]: r["logEndOffset"] for r in json.loads(out)["replicas"] if r["status"] in ("Leader", "Follower")
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_leader_tail_that_no_follower_fetched(cli, tmp_path_factory, version):
    c = start_cluster(
        cli,
        tmp_path_factory,
        f"kafka-committed-{version}",
        dynamic=True,
        version=version,
        brokers=0,
        start_timeout=300,
        format_args=KAFKA_VERSION.get(version, ()),
    )
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

        # the leader appends a NoOpRecord every 500 ms until it gives up leading (check-quorum,
        # 3 s). A follower may hold one batch more than the leader last heard: three past that
        # are a tail neither holds. No answer as leader: it resigned, after 3 s of appending
        def tail_appended():
            e = replication_ends(cli, c.addr(leader))
            if not e or leader not in e:
                return True
            return e[leader] >= max(e.get(f, 0) for f in followers) + 3

        until("the leader appends past what the followers fetched", tail_appended, 30, every=0.5)
        c.stop()
        if version == "4.4":
            assert [i for i in (1, 2, 3) if (c.d / "data" / f"c{i}" / "bootstrap.checkpoint").exists()] == []
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
        assert (data[leader] / SNAP).exists()  # the bootstrap records (4.4), the initial voters (4.1)

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
