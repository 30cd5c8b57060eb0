"""Interop with a real Kafka static quorum, 4.1 and 4.3 (3 controllers + 1
broker, started once per release by ../shared/kafka/cluster from storage that
quorumctl formatted): `describe status/replication` print what that release's
kafka-metadata-quorum prints (volatile numbers masked), and `describe health`
tells the truth with one and two controllers frozen (SIGSTOP), the leader among
them and not (on 4.3 only: the verdict is quorumctl's arithmetic, and 4.1
answers DescribeQuorum the same way).
"""

from __future__ import annotations

import json
import re
import time

import pytest

from kafka41 import (
    FEATURE_LEVEL,
    RELEASE_VERSION,
    cluster_fixture,
    kafka_quorum,
    mask_replication,
    mask_status,
    needs_kafka,
    ours,
    table_rows,
)

pytestmark = needs_kafka


cluster = cluster_fixture("kafka-static", dynamic=False)


def test_storage_was_formatted_by_quorumctl(cli, cluster):
    for n in ("c1", "c2", "c3", "b4"):
        head, line = cluster.formatted[n].splitlines()
        assert head.startswith(
            "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord("
            f"name='metadata.version', featureLevel={FEATURE_LEVEL[cluster.version]}) at version 0), "
        )
        assert line == (
            f"Formatting metadata directory {cluster.d / 'data' / n} "
            f"with metadata.version {RELEASE_VERSION[cluster.version]}."
        )
    code, out, err = cli("bootstrap", "info", "--log-dir", str(cluster.d / "data" / "c1"))
    assert code == 0 and f"cluster.id={cluster.cluster_id}" in out


@pytest.mark.parametrize("via", ["controller", "broker"])
def test_status_equals_kafka(cli, cluster, tmp_path, via):
    opt = (
        ["--bootstrap-controller", cluster.controllers[1]]
        if via == "controller"
        else ["--bootstrap-server", cluster.broker]
    )
    theirs = kafka_quorum(tmp_path, opt, "--status", home=cluster.home)
    mine = ours(cli, opt, "status")
    assert mask_status(mine) == mask_status(theirs)
    # a static quorum: voters without a directory id print as {"id": N, "endpoints": [...]}
    assert re.search(
        r'^CurrentVoters: +\[\{"id": \d+, "endpoints": \["CONTROLLER://127\.0\.0\.1:\d+"\]\}', mine, re.M
    ), mine
    assert f"ClusterId:              {cluster.cluster_id}\n" in mine


@pytest.mark.parametrize("human", [False, True], ids=["plain", "human-readable"])
def test_replication_equals_kafka(cli, cluster, tmp_path, human):
    opt = ["--bootstrap-controller", ",".join(cluster.controllers)]
    extra = ["--human-readable"] if human else []
    theirs = kafka_quorum(tmp_path, opt, "--replication", *extra, home=cluster.home)
    mine = ours(cli, opt, "replication", *extra)
    assert mask_replication(mine) == mask_replication(theirs)
    rows = table_rows(mine)
    assert [r[6] for r in rows] == ["Status", "Leader", "Follower", "Follower", "Observer"]
    # static voters have no directory id; the broker (an observer) reports its own
    assert {r[1] for r in rows[1:4]} == {"AAAAAAAAAAAAAAAAAAAAAA"} and rows[4][1] != "AAAAAAAAAAAAAAAAAAAAAA"
    if human:
        assert all(re.fullmatch(r"\d+ ms ago", r[4]) for r in rows[1:]), rows


# -- describe health with controllers frozen -------------------------------------------------


def health(cli, cluster, timeout="3") -> tuple[int, dict]:
    code, out, err = cli(
        "describe",
        "health",
        "--bootstrap-controller",
        ",".join(cluster.controllers),
        "-o",
        "json",
        "--timeout",
        timeout,
    )
    assert err == "", err
    return code, json.loads(out)


def wait_for(cli, cluster, pred, what: str, limit_s: float = 90) -> tuple[int, dict]:
    """Poll describe health until pred(code, doc) (a condition, not a timing assertion)."""
    end = time.monotonic() + limit_s
    while True:
        code, doc = health(cli, cluster)
        if pred(code, doc):
            return code, doc
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not reached in {limit_s} s; last: {code} {doc['verdict']} {doc['reasons']}")
        time.sleep(1)


def healthy(cli, cluster) -> tuple[int, dict]:
    return wait_for(cli, cluster, lambda code, doc: doc["verdict"] == "healthy", "healthy quorum")


def freeze(cluster, *ids):
    for i in ids:
        cluster.run("stop-node", str(i))


def thaw(cluster, *ids):
    for i in ids:
        cluster.run("cont-node", str(i))


def voters(doc):
    return {v["id"]: v["caughtUp"] for v in doc["voters"]}


@pytest.mark.parametrize("cluster", ["4.3"], indirect=True)
@pytest.mark.parametrize("case", ["one-follower", "two-followers", "leader", "leader-and-follower"])
def test_health_with_controllers_frozen(cli, cluster, case):
    code, doc = healthy(cli, cluster)
    assert (code, doc["caughtUp"], doc["canLose"]) == (0, 3, 1)
    leader = doc["leaderId"]
    followers = [i for i in (1, 2, 3) if i != leader]
    frozen = {
        "one-follower": [followers[0]],
        "two-followers": followers,
        "leader": [leader],
        "leader-and-follower": [leader, followers[0]],
    }[case]
    freeze(cluster, *frozen)
    try:
        if case == "one-follower":
            code, doc = health(cli, cluster)
            assert (code, doc["verdict"], doc["leaderId"]) == (0, "degraded", leader)
            assert (doc["caughtUp"], doc["majority"], doc["canLose"]) == (2, 2, 0)
            assert voters(doc)[frozen[0]] is False
        elif case == "two-followers":
            # the leader still answers, with lastCaughtUp data from before they froze
            code, doc = health(cli, cluster)
            assert (code, doc["verdict"], doc["leaderId"]) == (1, "unhealthy", leader)
            assert (doc["caughtUp"], doc["majority"], doc["canLose"]) == (1, 2, 0)
            assert voters(doc) == {leader: True, followers[0]: False, followers[1]: False}
            assert doc["reasons"][0] == "only 1 of 3 voters are caught up; a majority needs 2"
        elif case == "leader":
            # the two others elect a new leader; until then there is none
            code, doc = wait_for(cli, cluster, lambda c, d: d["leaderId"] not in (None, leader), "a new leader")
            assert (code, doc["verdict"], doc["caughtUp"], doc["canLose"]) == (0, "degraded", 2, 0)
            assert voters(doc)[leader] is False and doc["leaderId"] in followers
        else:
            code, doc = health(cli, cluster)
            assert (code, doc["verdict"]) == (1, "unhealthy")
            assert doc["caughtUp"] in (None, 1) and doc["canLose"] in (None, 0)
    finally:
        thaw(cluster, *frozen)
    healthy(cli, cluster)
