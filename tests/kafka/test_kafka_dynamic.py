"""Interop with a real Kafka dynamic (KIP-853) quorum, 4.1 and 4.3 (3
controllers + 1 broker, started once per release by ../shared/kafka/cluster
from storage that quorumctl formatted with --initial-controllers /
--no-initial-controllers): `describe status/replication` print what that
release's kafka-metadata-quorum prints (volatile numbers masked),
add/remove-controller print its messages (AddRaftVoter/RemoveRaftVoter v0 on
4.1, v1 on 4.3), and
quorumctl's remove-controller and add-controller change the real voter set,
as Kafka's own tool then shows.
"""

from __future__ import annotations

import re

from kafka41 import (
    FEATURE_LEVEL,
    RELEASE_VERSION,
    cluster_fixture,
    kafka_quorum,
    kafka_tool,
    mask_replication,
    mask_status,
    needs_kafka,
    ours,
    until,
)

pytestmark = needs_kafka


cluster = cluster_fixture("kafka-dynamic", dynamic=True)


def voters_line(status: str) -> str:
    return next(line for line in status.split("\n") if line.startswith("CurrentVoters:"))


def voter_ids(status: str) -> list[int]:
    return [int(x) for x in re.findall(r'\{"id": (\d+)', voters_line(status))]


def test_storage_was_formatted_by_quorumctl(cluster):
    for n, kind in (
        ("c1", "dynamic metadata voter"),
        ("c2", "dynamic metadata voter"),
        ("c3", "dynamic metadata voter"),
        ("b4", "metadata"),
    ):
        head, line = cluster.formatted[n].splitlines()
        assert head.startswith(
            "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord("
            f"name='metadata.version', featureLevel={FEATURE_LEVEL[cluster.version]}) at version 0), "
        )
        assert line == (
            f"Formatting {kind} directory {cluster.d / 'data' / n} "
            f"with metadata.version {RELEASE_VERSION[cluster.version]}."
        )


def test_status_and_replication_equal_kafka(cli, cluster, tmp_path):
    opt = ["--bootstrap-controller", cluster.controllers[0]]
    mine = ours(cli, opt, "status")
    assert mask_status(mine) == mask_status(kafka_quorum(tmp_path, opt, "--status", home=cluster.home))
    for i, did in cluster.dir_ids.items():
        assert (
            f'{{"id": {i}, "directoryId": "{did}", "endpoints": ["CONTROLLER://127.0.0.1:{cluster.base + i}"]}}' in mine
        )
    mine = ours(cli, opt, "replication")
    assert mask_replication(mine) == mask_replication(kafka_quorum(tmp_path, opt, "--replication", home=cluster.home))


def test_dry_run_messages_equal_kafka(cli, cluster, tmp_path):
    conf = str(cluster.d / "conf" / "c3.properties")
    opt = ["--bootstrap-controller", cluster.controllers[0]]
    # controller 3 is a voter already: Kafka's dry run prints its line and exits 0;
    # ours checks what the leader would, and says it would refuse (docs/describe.md)
    k = kafka_tool(
        "kafka-metadata-quorum",
        [*opt, "--command-config", conf, "add-controller", "--dry-run"],
        tmp_path,
        home=cluster.home,
    )
    assert (k.returncode, k.stdout) == (
        0,
        f"DRY RUN of adding controller 3 with directory id {cluster.dir_ids[3]} "
        f"and endpoints: CONTROLLER://127.0.0.1:{cluster.base + 3}\n",
    )
    code, out, err = cli("add-controller", *opt, "--command-config", conf, "--dry-run")
    assert (code, out) == (1, "")
    assert err == (
        "quorumctl: error: controller 3 is already a voter (voters 1, 2, 3): the leader would refuse "
        "it with DUPLICATE_VOTER\n"
    )
    k = kafka_tool(
        "kafka-metadata-quorum",
        [*opt, "remove-controller", "-i", "3", "-d", cluster.dir_ids[3], "--dry-run"],
        tmp_path,
        home=cluster.home,
    )
    code, out, err = cli("remove-controller", *opt, "-i", "3", "-d", cluster.dir_ids[3], "--dry-run")
    assert (code, err, k.returncode) == (0, "", 0)
    # the one deliberate difference (docs/describe.md): Kafka 4.1 prints two spaces
    assert k.stdout == f"DRY RUN of removing  KRaft controller 3 with directory id {cluster.dir_ids[3]}\n"
    assert out == k.stdout.replace("removing  KRaft", "removing KRaft")


def test_remove_and_add_controller_change_the_real_voter_set(cli, cluster, tmp_path):
    opt = ["--bootstrap-controller", ",".join(cluster.controllers)]
    status = ours(cli, opt, "status")
    leader = int(re.search(r"^LeaderId: +(\d+)", status, re.M).group(1))
    node = max(i for i in (1, 2, 3) if i != leader)
    did = cluster.dir_ids[node]

    code, out, err = cli("remove-controller", *opt, "-i", str(node), "-d", did)
    assert (code, out, err) == (0, f"Removed KRaft controller {node} with directory id {did}\n", "")
    until("the voter set without the removed controller", lambda: node not in voter_ids(ours(cli, opt, "status")))
    theirs = kafka_quorum(tmp_path, opt, "--status", home=cluster.home)
    assert sorted(voter_ids(theirs)) == sorted({1, 2, 3} - {node})

    # the removed controller keeps running as an observer; add it back from its own config
    conf = str(cluster.d / "conf" / f"c{node}.properties")
    # the dry run first: Kafka's line, then what was checked
    k = kafka_tool(
        "kafka-metadata-quorum",
        [*opt, "--command-config", conf, "add-controller", "--dry-run"],
        tmp_path,
        home=cluster.home,
    )
    code, out, err = cli("add-controller", *opt, "--command-config", conf, "--dry-run")
    assert (code, err, k.returncode) == (0, "", 0)
    first, *checked = out.splitlines()
    assert (
        first + "\n"
        == k.stdout
        == (
            f"DRY RUN of adding controller {node} with directory id {did} and "
            f"endpoints: CONTROLLER://127.0.0.1:{cluster.base + node}\n"
        )
    )
    assert f"  checked: node id {node} is not a voter" in "\n".join(checked)

    def add():
        code, out, err = cli("add-controller", *opt, "--command-config", conf)
        if code == 0:
            return out
        # while it is not yet a caught-up observer the leader refuses; anything else is a failure
        assert code == 1 and (
            "REQUEST_TIMED_OUT" in err or "caught up" in err or "VOTER" in err or "observer" in err.lower()
        ), err
        return None

    out = until("add-controller accepted", add)
    assert out == (
        f"Added controller {node} with directory id {did} and endpoints: CONTROLLER://127.0.0.1:{cluster.base + node}\n"
    )
    until("the voter set with the controller back", lambda: node in voter_ids(ours(cli, opt, "status")))
    theirs = kafka_quorum(tmp_path, opt, "--status", home=cluster.home)
    assert sorted(voter_ids(theirs)) == [1, 2, 3]
    assert (
        f'{{"id": {node}, "directoryId": "{did}", "endpoints": ["CONTROLLER://127.0.0.1:{cluster.base + node}"]}}'
        in voters_line(theirs)
    )
