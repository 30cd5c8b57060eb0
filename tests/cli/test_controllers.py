"""add-controller / remove-controller (KIP-853) against the simulated quorum:
Kafka 3.9's outputs (minus the double space of remove-controller), --dry-run,
the controller's properties file, refusals and their exit codes; replaying
the add/remove history of ../shared's 3.9 samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quorumctl.wire import messages
from quorumctl.testing.sim import SimulatedCluster, closed_port, node, replica

from samples import SAMPLES, needs_shared, sample_blocks

CID = "rTcAzcTXQpG_6c1zYns8Xw"
D1, D2, D3, D4 = "DfqkWOlJTZ-abG8pUGocIA", "4BuDMaJKttH3vcqDCog2og", "eAmx4J3YZ63RPobrVgXBAw", "Ft5irZuen_hAwkaw5_cxsg"
FIXTURES = SAMPLES.parent / "fixtures" / "kafka-3.9.0-dynamic"


def bootstrapped(dynamic=True, profile="3.9") -> SimulatedCluster:
    """The 3.9 sample's starting point: controller 1 the only voter (a
    --standalone bootstrap), controllers 2 and 3 and broker 4 observing."""
    now = 1795305684314
    c = SimulatedCluster(
        CID,
        1,
        1,
        54,
        [replica(1, 56, now, now, D1)],
        [
            replica(4, 56, now - 317, now - 317, D4),
            replica(2, 56, now - 312, now - 312, D2),
            replica(3, 56, now - 315, now - 315, D3),
        ],
        [node(1, ("CONTROLLER", "localhost", 19191))],
        dynamic=dynamic,
    )
    c.add_nodes(profile=profile)
    return c


def controller_config(tmp_path: Path, node_id: int, dir_id: str | None, port: int, **extra) -> str:
    """A controller's server.properties (shaped like the 3.9 fixture's), its
    log dir formatted with a meta.properties."""
    d = tmp_path / f"c{node_id}"
    d.mkdir(exist_ok=True)
    if dir_id is not None:
        (d / "meta.properties").write_text(
            f"#\n#Sun Nov 22 00:00:45 UTC 2026\nnode.id={node_id}\ndirectory.id={dir_id}\nversion=1\ncluster.id={CID}\n"
        )
    lines = {
        "process.roles": "controller",
        "node.id": str(node_id),
        "controller.quorum.bootstrap.servers": "localhost:19191",
        "listeners": f"CONTROLLER://localhost:{port}",
        "advertised.listeners": f"CONTROLLER://localhost:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(d),
    }
    lines.update(extra)
    p = tmp_path / f"c{node_id}.properties"
    p.write_text("".join(f"{k}={v}\n" for k, v in lines.items() if v is not None))
    return str(p)


def status(cli, c) -> dict:
    code, out, err = cli("describe", "status", "--bootstrap-controller", c.node_by_id(1).address, "-o", "json")
    assert (code, err) == (0, "")
    return json.loads(out)


def test_add_and_remove_like_the_39_samples(cli, tmp_path):
    c2 = controller_config(tmp_path, 2, D2, 19192)
    c3 = controller_config(tmp_path, 3, D3, 19193)
    with bootstrapped() as c:
        ctl = c.node_by_id(1).address
        code, out, err = cli("add-controller", "--bootstrap-controller", ctl, "--command-config", c2, "--dry-run")
        assert (code, err) == (0, "")
        assert out.splitlines() == [
            "DRY RUN of adding controller 2 with directory id 4BuDMaJKttH3vcqDCog2og and "
            "endpoints: CONTROLLER://localhost:19192",
            f"  checked: {ctl} answered DescribeQuorum: leader 1, epoch 1, cluster {CID}",
            f"  checked: {tmp_path}/c2/meta.properties has the quorum's cluster id",
            "  checked: node id 2 is not a voter (voters 1)",
            f"  checked: endpoints of {c2}: CONTROLLER://localhost:19192",
            "  checked: controller 2 fetches as an observer, 0 offset(s) behind the leader",
        ]
        assert not [r for r in c.requests if r[1] == messages.ADD_RAFT_VOTER]  # a dry run sends nothing
        code, out, err = cli("add-controller", "--bootstrap-controller", ctl, "--command-config", c2)
        assert (code, out, err) == (
            0,
            "Added controller 2 with directory id 4BuDMaJKttH3vcqDCog2og and endpoints: CONTROLLER://localhost:19192\n",
            "",
        )
        code, out, err = cli("add-controller", "--bootstrap-controller", ctl, "--command-config", c3)
        assert (code, out) == (
            0,
            "Added controller 3 with directory id eAmx4J3YZ63RPobrVgXBAw and endpoints: CONTROLLER://localhost:19193\n",
        )
        doc = status(cli, c)
        assert [(v["id"], v["directoryId"], v["endpoints"]) for v in doc["currentVoters"]] == [
            (1, D1, ["CONTROLLER://localhost:19191"]),
            (2, D2, ["CONTROLLER://localhost:19192"]),
            (3, D3, ["CONTROLLER://localhost:19193"]),
        ]
        assert [(o["id"], o["directoryId"]) for o in doc["currentObservers"]] == [(4, D4)]

        rm = [
            "remove-controller",
            "--bootstrap-controller",
            ctl,
            "--controller-id",
            "3",
            "--controller-directory-id",
            D3,
        ]
        code, out, err = cli(*rm, "--dry-run")
        assert (code, out, err) == (
            0,
            "DRY RUN of removing KRaft controller 3 with directory id eAmx4J3YZ63RPobrVgXBAw\n",
            "",
        )
        code, out, err = cli(*rm)
        assert (code, out, err) == (0, "Removed KRaft controller 3 with directory id eAmx4J3YZ63RPobrVgXBAw\n", "")
        doc = status(cli, c)
        assert [v["id"] for v in doc["currentVoters"]] == [1, 2]
        assert [(o["id"], o["directoryId"], o["endpoints"]) for o in doc["currentObservers"]] == [
            (4, D4, []),
            (3, D3, []),
        ]

        # re-adding through the broker (which forwards), then once more: the voter is already there
        b = c.brokers()[0].address
        assert cli("add-controller", "--bootstrap-server", b, "--command-config", c3)[0] == 0
        code, out, err = cli("add-controller", "--bootstrap-server", b, "--command-config", c3)
    assert (code, out) == (1, "")
    assert err == (
        f"quorumctl: error: {b} answered AddRaftVoter with DUPLICATE_VOTER: The voter id for "
        "ReplicaKey(id=3, directoryId=Optional[eAmx4J3YZ63RPobrVgXBAw]) is already part of the set of "
        "voters [ReplicaKey(id=1, directoryId=Optional[DfqkWOlJTZ-abG8pUGocIA]), ReplicaKey(id=2, "
        "directoryId=Optional[4BuDMaJKttH3vcqDCog2og]), ReplicaKey(id=3, "
        "directoryId=Optional[eAmx4J3YZ63RPobrVgXBAw])].\n"
    )


@pytest.mark.parametrize("profile,version,body_extra", [("3.9", 0, {}), ("4.3", 1, {"ackWhenCommitted": True})])
def test_add_raft_voter_v1_of_kafka_43(cli, tmp_path, profile, version, body_extra):
    """Kafka 4.3 takes AddRaftVoter v1: quorumctl sends it with AckWhenCommitted true (answer
    once the new voter set is committed: v0's behaviour); 3.9 and 4.1 get v0."""
    c2 = controller_config(tmp_path, 2, D2, 19192)
    with bootstrapped(profile=profile) as c:
        code, out, err = cli(
            "add-controller", "--bootstrap-controller", c.node_by_id(1).address, "--command-config", c2
        )
        assert (code, out, err) == (
            0,
            "Added controller 2 with directory id 4BuDMaJKttH3vcqDCog2og and endpoints: CONTROLLER://localhost:19192\n",
            "",
        )
        ((v, body),) = c.add_voter_requests
    assert v == version
    assert {k: body[k] for k in body if k != "timeoutMs"} == {
        "clusterId": None,
        "voterId": 2,
        "voterDirectoryId": D2,
        "listeners": [{"name": "CONTROLLER", "host": "localhost", "port": 19192}],
        **body_extra,
    }


def test_voter_changes_go_to_the_leader(cli, tmp_path):
    c2 = controller_config(tmp_path, 2, D2, 19192)
    with bootstrapped() as c:
        code, out, err = cli(
            "add-controller", "--bootstrap-controller", c.node_by_id(3).address, "--command-config", c2, "-o", "json"
        )
    assert code == 0 and json.loads(out) == {
        "action": "add-controller",
        "dryRun": False,
        "controllerId": 2,
        "directoryId": D2,
        "endpoints": ["CONTROLLER://localhost:19192"],
    }
    assert [n for n, k, v in c.requests if k == messages.ADD_RAFT_VOTER] == [1]


@pytest.mark.parametrize(
    "dir_id,code,message",
    [
        (
            "AAAAAAAAAAAAAAAAAAAAAA",
            1,
            "answered RemoveRaftVoter with INVALID_REQUEST: Remove voter request didn't include a valid voter",
        ),
        (
            D4,
            1,
            "answered RemoveRaftVoter with VOTER_NOT_FOUND: Cannot remove voter ReplicaKey(id=3, "
            "directoryId=Optional[Ft5irZuen_hAwkaw5_cxsg]) from the set of voters [ReplicaKey(id=1, "
            "directoryId=Optional[DfqkWOlJTZ-abG8pUGocIA])]",
        ),
    ],
)
def test_remove_refused(cli, dir_id, code, message):
    with bootstrapped() as c:
        a = c.node_by_id(1).address
        got, out, err = cli("remove-controller", "--bootstrap-controller", a, "-i", "3", "-d", dir_id)
    assert (got, out) == (code, "")
    assert err == f"quorumctl: error: {a} {message}\n"


def test_static_quorum_refuses_changes(cli):
    with bootstrapped(dynamic=False) as c:
        a = c.node_by_id(1).address
        code, out, err = cli("remove-controller", "--bootstrap-controller", a, "-i", "1", "-d", D1)
    assert code == 1
    assert err == (
        f"quorumctl: error: {a} answered RemoveRaftVoter with UNSUPPORTED_VERSION: Cluster doesn't "
        "support removing voter because the kraft.version feature is 0\n"
    )


def test_old_cluster_without_the_api(cli, tmp_path):
    c2 = controller_config(tmp_path, 2, D2, 19192)
    with bootstrapped(profile="3.7") as c:
        a = c.node_by_id(1).address
        code, out, err = cli("add-controller", "--bootstrap-controller", a, "--command-config", c2)
    assert code == 3
    assert (
        err == f"quorumctl: error: {a} does not support AddRaftVoter (API 80): changing the voters needs Kafka 3.9+\n"
    )


@pytest.mark.parametrize(
    "args,message",
    [
        (["-i", "-1", "-d", D3], "invalid negative --controller-id: -1"),
        (
            ["-i", "3", "-d", "not-valid"],
            "invalid --controller-directory-id 'not-valid': expected a 22-character base64url directory id, "
            "as in meta.properties",
        ),
        (
            ["-i", "3", "-d", D3 + "A"],
            f"invalid --controller-directory-id '{D3}A': expected a 22-character base64url directory id, "
            "as in meta.properties",
        ),
    ],
)
def test_remove_usage_errors(cli, args, message):
    code, out, err = cli("remove-controller", "--bootstrap-controller", "127.0.0.1:1", *args)
    assert (code, out, err) == (2, "", f"quorumctl: error: {message}\n")


def test_add_controller_needs_its_config(cli):
    code, out, err = cli("add-controller", "--bootstrap-controller", "127.0.0.1:1")
    assert code == 2
    assert err == (
        "quorumctl: error: add-controller needs --command-config: the configuration file of the "
        "controller you are adding\n"
    )


@pytest.mark.parametrize(
    "change,message",
    [
        ({"node.id": None}, "{cfg}: node.id not found: is this a controller's configuration file?"),
        ({"node.id": "-2"}, "{cfg}: node.id is negative: is this a controller's configuration file?"),
        (
            {"process.roles": "broker"},
            "{cfg}: process.roles does not contain 'controller': is this a controller's configuration file?",
        ),
        (
            {"log.dirs": None},
            "{cfg}: neither metadata.log.dir nor log.dirs is set: is this a controller's configuration file?",
        ),
        (
            {"controller.listener.names": "CTRL"},
            "{cfg}: cannot find listener CTRL of controller.listener.names in listeners or advertised.listeners",
        ),
        (
            {"listeners": "CONTROLLER:/localhost:1", "advertised.listeners": None},
            "{cfg}: listeners: cannot parse 'CONTROLLER:/localhost:1' as NAME://host:port",
        ),
        (
            {"listeners": "CONTROLLER://localhost:70000", "advertised.listeners": None},
            "{cfg}: listeners: port 70000 of 'CONTROLLER://localhost:70000' is not a TCP port (0-65535)",
        ),
    ],
)
def test_add_controller_config_errors(cli, tmp_path, change, message):
    cfg = controller_config(tmp_path, 2, D2, 19192, **change)
    code, out, err = cli(
        "add-controller", "--bootstrap-controller", "127.0.0.1:1", "--command-config", cfg, "--dry-run"
    )
    assert (code, out) == (2, "")
    assert err == "quorumctl: error: " + message.format(cfg=cfg) + "\n"


def test_add_controller_unformatted_dir(cli, tmp_path):
    cfg = controller_config(tmp_path, 2, None, 19192)
    code, out, err = cli("add-controller", "--bootstrap-controller", "h:1", "--command-config", cfg, "--dry-run")
    assert code == 2
    assert (
        err
        == f"quorumctl: error: Unable to read meta.properties from {tmp_path / 'c2'} (is the controller formatted?)\n"
    )


def test_add_controller_endpoint_resolution(cli, tmp_path):
    # a wildcard host becomes localhost; advertised.listeners wins; IPv6 in brackets; names upper-cased
    cfg = controller_config(
        tmp_path,
        5,
        D2,
        9093,
        **{
            "listeners": "controller://:9093,REPL://0.0.0.0:9095",
            "advertised.listeners": "REPL://[2001:db8::5]:9095",
            "controller.listener.names": "controller,REPL",
            "metadata.log.dir": str(tmp_path / "c5"),
        },
    )
    with bootstrapped() as c:
        code, out, err = cli(
            "add-controller", "--bootstrap-controller", c.node_by_id(1).address, "--command-config", cfg, "--dry-run"
        )
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        "DRY RUN of adding controller 5 with directory id 4BuDMaJKttH3vcqDCog2og and "
        "endpoints: CONTROLLER://localhost:9093, REPL://[2001:db8::5]:9095"
    )
    assert out.splitlines()[-1] == (
        "  note: controller 5 is not fetching from the leader yet; start it and let it "
        "catch up first, or AddRaftVoter times out"
    )


def test_add_controller_dry_run_validates(cli, tmp_path):
    """--dry-run sends no AddRaftVoter but asks the quorum what the leader would
    check: it must answer, the controller must belong to it, its id must be free."""
    gone = f"127.0.0.1:{closed_port()}"
    c1 = controller_config(tmp_path, 1, D1, 19191)
    c5 = controller_config(tmp_path, 5, D2, 19195)
    (tmp_path / "c5" / "meta.properties").write_text(
        (tmp_path / "c5" / "meta.properties").read_text().replace(CID, "MvDxzVmcRsaTz33bUuZ-CQ")
    )
    code, out, err = cli("add-controller", "--bootstrap-controller", gone, "--command-config", c1, "--dry-run")
    assert (code, out) == (3, "") and err == (
        f"quorumctl: error: cannot connect to {gone}: connection refused (nothing listens on that port)\n"
    )
    with bootstrapped() as c:
        ctl = c.node_by_id(1).address
        code, out, err = cli("add-controller", "--bootstrap-controller", ctl, "--command-config", c1, "--dry-run")
        assert (code, out, err) == (
            1,
            "",
            "quorumctl: error: controller 1 is already a voter (voters 1): the "
            "leader would refuse it with DUPLICATE_VOTER\n",
        )
        code, out, err = cli(
            "add-controller", "--bootstrap-controller", ctl, "--command-config", c5, "--dry-run", "-o", "json"
        )
        assert (code, out) == (1, "")
        assert err == (
            f"quorumctl: error: {tmp_path}/c5/meta.properties: cluster.id MvDxzVmcRsaTz33bUuZ-CQ is "
            f"not the quorum's ({CID}): this controller was formatted for another cluster\n"
        )
        assert not [r for r in c.requests if r[1] == messages.ADD_RAFT_VOTER]  # a dry run sends nothing


@needs_shared
def test_dry_run_on_the_real_39_fixture(cli, tmp_path):
    """c2.properties of the 3.9 sample, pointed at the real formatted dir of controller 2."""
    data = FIXTURES / "data" / "c2"
    if not (data / "meta.properties").is_file():
        pytest.skip("fixture c2 is absent")
    cfg = tmp_path / "c2.properties"
    cfg.write_text(
        (FIXTURES / "scratch" / "c1.properties")
        .read_text()
        .replace("node.id=1", "node.id=2")
        .replace("19191", "19192")
        .replace("log.dirs=/var/lib/kafka39/scratch/c1", f"log.dirs={data}")
    )
    with bootstrapped() as c:  # the sample's quorum: 2 observes, 1 is the only voter
        code, out, err = cli(
            "add-controller",
            "--bootstrap-controller",
            c.node_by_id(1).address,
            "--command-config",
            str(cfg),
            "--dry-run",
        )
    expected = next(
        o for cmd, o in sample_blocks(SAMPLES / "quorum-3.9.0.txt") if "c2.properties add-controller --dry-run" in cmd
    )
    # Kafka's line first, then what quorumctl checked
    assert (code, err) == (0, "") and out.splitlines()[0] + "\n" == expected
    assert out.splitlines()[-1] == "  checked: controller 2 fetches as an observer, 0 offset(s) behind the leader"


def test_remove_dry_run_refuses_what_the_leader_would_not_find(cli):
    """A mistyped id or directory id: the dry run asks DescribeQuorum and refuses (exit 1, one
    line) what the leader would answer VOTER_NOT_FOUND, instead of "DRY RUN of removing"."""
    with bootstrapped() as c:
        ctl = c.node_by_id(1).address
        for cid, did in ((7, D1), (1, D2)):
            code, out, err = cli(
                "remove-controller", "--bootstrap-controller", ctl, "-i", str(cid), "-d", did, "--dry-run"
            )
            assert (code, out) == (1, "")
            assert err == (
                f"quorumctl: error: controller {cid} with directory id {did} is not a voter (voters 1 (directory "
                f"id {D1})): the leader would refuse it with VOTER_NOT_FOUND\n"
            )
        code, out, err = cli("remove-controller", "--bootstrap-controller", ctl, "-i", "1", "-d", D1, "--dry-run")
        assert (code, out, err) == (0, f"DRY RUN of removing KRaft controller 1 with directory id {D1}\n", "")
        assert not [r for r in c.requests if r[1] == messages.REMOVE_RAFT_VOTER]  # a dry run sends nothing
