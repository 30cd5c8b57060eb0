"""`quorumctl recover` on real files (the Kafka 3.9 dynamic and 3.7 static
fixtures, copied) and on the example replicas: the exact bytes written, the
refusals, the lock, the backup, and a run interrupted at every step leaving
the partition directory wholly old or wholly new. Real Kafka starting from
what recover wrote: tests/kafka/test_kafka41_recover.py."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

from quorumctl.records.batch import BatchReader
from quorumctl.records import metadata as md
from quorumctl.ops import fsutil
from samples import FIXTURES
from logfiles import tree

DYN = FIXTURES / "kafka-3.9.0-dynamic" / "data"
STATIC = FIXTURES / "kafka-3.7.0-static" / "data"
pytestmark = pytest.mark.shared("reference/fixtures")
C1_DIR = "DfqkWOlJTZ-abG8pUGocIA"


@pytest.fixture
def dyn(tmp_path):
    for n in ("c1", "c2", "c3", "b4"):  # b4: the broker, registered in the log (recover needs it read)
        shutil.copytree(DYN / n, tmp_path / n)
    return tmp_path


def test_dry_run_changes_nothing_and_explains(cli, verify_clean, dyn):
    before = tree(dyn)
    code, out, err = cli("recover", dyn / "c1", "--replica", dyn / "b4", "--lost-voters", "2,3")
    assert (code, err) == (0, "")
    assert tree(dyn) == before
    lines = out.splitlines()
    assert lines[0] == f"Recovery plan for node 1 ({dyn}/c1/__cluster_metadata-0), dynamic quorum, dry run"
    # nothing listens on the fixture's voter endpoints here
    assert lines[1:5] == [
        "  probe: voter 2 at localhost:19192: silent (connection refused)",
        "  probe: voter 3 at localhost:19193: silent (connection refused)",
        # every other registered node is asked too (the survivor included); their log dirs
        # were read, so a stopped one is no risk
        "  asked: broker 4 at localhost:19194: nothing listens (connection refused)",
        "  asked: controller 1 at localhost:19191: nothing listens (connection refused)",
    ]
    assert lines[5].startswith(
        "  node 1 (survivor, base): last epoch 1, log end offset 315: kept; the recovery "
        "appends to it; the most up-to-date replica given"
    )
    assert "  voters: [1, 2, 3] -> [1] (lost: [2, 3])" in lines
    assert (
        "  new epoch: 2 (the highest epoch any given replica has seen is 1); the survivor then leads in epoch 3"
    ) in lines
    assert (
        f"    - {dyn}/c1/__cluster_metadata-0/00000000000000000000.log: append a control batch at offset 315 "
        f"in the new epoch 2 (128 bytes at byte 23456): VotersRecord with only node 1 ({C1_DIR}, "
        "CONTROLLER://localhost:19191)"
    ) in lines
    assert f"    - {dyn}/c1/__cluster_metadata-0/leader-epoch-checkpoint: epochs 1@0, 2@315" in lines
    # the newest snapshot is 296-1: what follows it is not provably committed
    assert (
        "  not provably committed, committed from now on: offsets 296..314: 19 record(s) (18 NO_OP_RECORD, "
        "1 BROKER_REGISTRATION_CHANGE_RECORD)"
    ) in lines
    assert lines[-1] == "Run again with --apply to do it (every node given must be stopped)."


def test_apply_writes_one_voters_record_and_resets_quorum_state(cli, verify_clean, dyn):
    seg = dyn / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"
    old = seg.read_bytes()
    code, out, err = cli(
        "recover", dyn / "c1", "--replica", dyn / "b4", "--lost-voters", "2,3", "--apply", "-o", "json"
    )
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["plan"]["voters_after"] == [1] and doc["applied"]["backed_up"] == [
        "00000000000000000000.log",
        "leader-epoch-checkpoint",
        "quorum-state",
    ]
    assert (doc["plan"]["max_epoch_seen"], doc["plan"]["new_epoch"]) == (1, 2)
    assert [p["state"] for p in doc["plan"]["probes"]] == ["silent", "silent"]
    new = seg.read_bytes()
    assert new[: len(old)] == old and len(new) == len(old) + 128
    with BatchReader(str(seg), start=len(old)) as r:
        batches = list(r)
    assert len(batches) == 1
    b = batches[0]
    # in a new epoch: no replica can hold another batch at (315, 2)
    assert (b.base_offset, b.last_offset, b.leader_epoch, b.is_control, b.crc_valid()) == (315, 315, 2, True, True)
    (rec,) = b.records()
    assert md.control_type(rec.key) == md.KRAFT_VOTERS
    assert md.decode_control(rec.key, rec.value).data == {
        "version": 0,
        "voters": [
            {
                "voterId": 1,
                "voterDirectoryId": C1_DIR,
                "endpoints": [{"name": "CONTROLLER", "host": "localhost", "port": 19191}],
                "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1},
            }
        ],
    }
    qs = (dyn / "c1" / "__cluster_metadata-0" / "quorum-state").read_text()
    assert qs == (
        '{"leaderId":-1,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}'
    )
    assert (dyn / "c1" / "__cluster_metadata-0" / "leader-epoch-checkpoint").read_text() == "0\n2\n1 0\n2 315\n"
    backup = doc["applied"]["backup_dir"]
    assert open(f"{backup}/__cluster_metadata-0/00000000000000000000.log", "rb").read() == old
    st = json.loads(cli("state", dyn / "c1", "-o", "json")[1])["replicas"][0]
    assert (st["voters"]["ids"], st["voters"]["source"], st["log_end_offset"]) == ([1], "log offset 315", 316)
    verify_clean(dyn / "c1")
    # a second run: the voter set is {1} now, nothing is lost any more
    code, out, err = cli("recover", dyn / "c1", "--replica", dyn / "b4", "--lost-voters", "2,3")
    assert code == 1 and "refused: --lost-voters names [2, 3], which are not voters (voters [1])" in out


@pytest.mark.parametrize(
    "args, refusal",
    [
        (["c1", "--lost-voters", "2"], "refused: voter(s) [3] are neither given (log dir) nor declared lost"),
        (["c1", "--lost-voters", "2,3,7"], "refused: --lost-voters names [7], which are not voters (voters [1, 2, 3])"),
        (["c1", "c2", "--lost-voters", "2,3"], "refused: --lost-voters names [2], whose log dirs were given"),
        (
            ["c1", "c2", "--lost-voters", "3"],
            "refused: the quorum still has a majority: 2 of 3 voters ([1, 2]) survive",
        ),
    ],
)
def test_refusals_change_nothing(cli, verify_clean, dyn, args, refusal):
    before = tree(dyn)
    code, out, err = cli(
        "recover", *[str(dyn / a) if a.startswith("c") else a for a in args], "--replica", dyn / "b4", "--apply"
    )
    assert (code, err) == (1, "") and refusal in out, out
    assert tree(dyn) == before


def free_port() -> int:
    """A port nothing listens on (bound once by the kernel's choice, then closed)."""
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


def static_config(path, node_id: int, log_dir, voters: dict[int, str]):
    path.write_text(
        f"node.id={node_id}\nprocess.roles=controller\nlog.dirs={log_dir}\n"
        "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:9093\n"
        "controller.quorum.voters=" + ",".join(f"{i}@{a}" for i, a in sorted(voters.items())) + "\n"
    )
    return path


def as_broker(src, dst, node_id: int):
    """A copy of a replica's log dir as another node's (a broker that fetched the same log)."""
    shutil.copytree(src, dst)
    meta = dst / "meta.properties"
    meta.write_text(re.sub(r"node.id=\d+", f"node.id={node_id}", meta.read_text()))
    return dst


@pytest.fixture
def diverged(tmp_path):
    """The example quorum: node 1 (epochs 1@0 2@10 4@40, end 50), node 2 (a prefix, end 46),
    node 3 (1@0 2@10 3@30, end 40: diverges at 30). Static, cluster XFBpci3ORzK2hz44Gtmrwg."""
    from quorumctl.testing.examples import write_examples

    write_examples(str(tmp_path))
    return tmp_path / "diverged"


def test_the_most_up_to_date_replica_is_the_base_even_a_broker(cli, verify_clean, diverged, tmp_path):
    """Node 3 survives, behind and diverged; a broker holds node 1's log: the recovered
    log is the broker's, node 3's entries 30..39 (which no chosen replica keeps) are listed."""
    b4 = as_broker(diverged / "c1", tmp_path / "b4", 4)
    conf = static_config(
        tmp_path / "c3.properties",
        3,
        diverged / "c3",
        {1: f"127.0.0.1:{free_port()}", 2: f"127.0.0.1:{free_port()}", 3: "127.0.0.1:9093"},
    )
    code, out, err = cli("recover", "-c", conf, "--replica", b4, "--lost-voters", "1,2", "-o", "json")
    assert (code, err) == (0, ""), out
    plan = json.loads(out)["plan"]
    assert (plan["base"]["node_id"], plan["base"]["last_epoch"], plan["base"]["log_end_offset"]) == (4, 4, 50)
    rows = {r["node_id"]: r for r in plan["replicas"]}
    assert (rows[3]["role"], rows[3]["action"], rows[3]["keeps_to"]) == ("survivor", "replace", 30)
    assert rows[3]["loses"]["from"] == 30 and rows[3]["loses"]["to"] == 39 and rows[3]["loses"]["records"] == 10
    assert (rows[4]["role"], rows[4]["action"]) == ("replica", "base")
    # static quorum: no batch; quorum-state goes to the highest epoch seen (4), the survivor leads in 5
    assert (plan["max_epoch_seen"], plan["new_epoch"], plan["log_end_offset_after"]) == (4, 4, 50)
    code, out, err = cli("recover", "-c", conf, "--replica", b4, "--lost-voters", "1,2", code=0)
    assert "    loses offsets 30..39: 10 record(s)" in out
    before_b4 = tree(b4)
    code, out, err = cli("recover", "-c", conf, "--replica", b4, "--lost-voters", "1,2", "--apply")
    assert (code, err) == (0, ""), out
    assert tree(b4) == before_b4  # the base is read, never written
    c3 = diverged / "c3" / "__cluster_metadata-0"
    for name in ("00000000000000000000.log", "00000000000000000030.log", "leader-epoch-checkpoint"):
        assert (c3 / name).read_bytes() == (b4 / "__cluster_metadata-0" / name).read_bytes(), name
    qs = json.loads((c3 / "quorum-state").read_text())
    assert (qs["leaderId"], qs["leaderEpoch"], qs["currentVoters"], qs["data_version"]) == (-1, 4, [{"voterId": 3}], 0)
    st = json.loads(cli("state", diverged / "c3", b4, "-o", "json")[1])
    assert [(r["log_end_offset"], r["last_epoch"]) for r in st["replicas"]] == [(50, 4), (50, 4)]
    verify_clean(diverged / "c3")


def test_a_replica_that_diverges_from_the_result_is_truncated(cli, verify_clean, diverged, tmp_path):
    """Node 1 survives (the base); a broker holds node 3's diverged log: it is cut back
    to 30 in the same run, under its own lock, with a backup."""
    b4 = as_broker(diverged / "c3", tmp_path / "b4", 4)
    conf = static_config(
        tmp_path / "c1.properties",
        1,
        diverged / "c1",
        {1: "127.0.0.1:9093", 2: f"127.0.0.1:{free_port()}", 3: f"127.0.0.1:{free_port()}"},
    )
    code, out, err = cli("recover", "-c", conf, "--replica", b4, "--lost-voters", "2,3", "--apply", "-o", "json")
    assert (code, err) == (0, ""), out
    doc = json.loads(out)
    rows = {r["node_id"]: r for r in doc["plan"]["replicas"]}
    assert (rows[1]["action"], rows[4]["action"], rows[4]["keeps_to"]) == ("keep", "truncate", 30)  # static: no batch
    assert rows[4]["reason"].startswith("diverges from node 1: DivergingEpoch(epoch=2, endOffset=30)")
    assert [t["node_id"] for t in doc["applied"]["truncated"]] == [4]
    st = json.loads(cli("state", b4, "-o", "json")[1])["replicas"][0]
    assert (st["log_end_offset"], st["last_epoch"]) == (30, 2)
    verify_clean(b4)
    verify_clean(diverged / "c1")


def test_replicas_that_already_break_log_matching_are_refused(cli, dyn, tmp_path):
    """Two replicas holding different batches at one (offset, epoch), as the old recover left
    them: no base can be trusted, nothing is written."""
    from quorumctl.records.batch import encode_batch

    for node, ts in (("c1", 1), ("b4", 2)):  # two NoOpRecords at (315, 1): other timestamps, other CRCs
        rec = (None, md.encode_metadata(20, 0, {}))
        with open(dyn / node / "__cluster_metadata-0" / "00000000000000000000.log", "ab") as f:
            f.write(encode_batch([rec], base_offset=315, leader_epoch=1, base_timestamp=ts))
    before = tree(dyn)
    code, out, err = cli("recover", dyn / "c1", "--replica", dyn / "b4", "--lost-voters", "2,3", "--apply")
    assert code == 1, out
    assert "  refused: log-matching: offset 315, epoch 1: node 1 " in out and "position 23456" in out
    assert tree(dyn) == before


@pytest.fixture
def sim_static():
    """The simulated quorum answering as the 3.7 static cluster (same cluster id)."""
    from quorumctl.testing.scenarios import demo_cluster

    c = demo_cluster(start=False)
    c.cluster_id = "XFBpci3ORzK2hz44Gtmrwg"
    c.start()
    c.advertise_controllers()
    try:
        yield c
    finally:
        c.stop()


def test_probe_states_on_real_sockets(sim_static):
    from quorumctl.config.client import ClientConfig
    from quorumctl.config.addresses import Address
    from quorumctl.live.liveness import probe_voters

    def addr(a: str) -> Address:
        h, p = a.rsplit(":", 1)
        return Address(h, int(p))

    sim_static.silence(3)
    closed = free_port()
    got, _ = probe_voters(
        {
            1: [addr(sim_static.node_by_id(1).address)],
            2: [addr(sim_static.node_by_id(2).address)],
            3: [addr(sim_static.node_by_id(3).address)],
            5: [Address("127.0.0.1", closed)],
        },
        ClientConfig(),
        1.0,
    )
    by = {p.voter_id: p for p in got}
    assert (by[1].state, by[1].kind, by[1].cluster_id) == ("answers", "controller", "XFBpci3ORzK2hz44Gtmrwg")
    assert by[1].detail == "answers as the leader of epoch 3 of cluster XFBpci3ORzK2hz44Gtmrwg"
    assert by[2].detail == "answers as a controller following leader 1 of cluster XFBpci3ORzK2hz44Gtmrwg"
    assert by[3].state == "accepts"  # a frozen process: the kernel accepts, nobody answers
    assert (by[5].state, by[5].detail) == ("silent", "connection refused")


def test_a_live_lost_voter_is_refused_even_with_force(cli, sim_static, tmp_path):
    shutil.copytree(STATIC / "c1", tmp_path / "c1")
    shutil.copytree(STATIC / "b4", tmp_path / "b4")
    conf = static_config(
        tmp_path / "c1.properties",
        1,
        tmp_path / "c1",
        {1: "127.0.0.1:9093", 2: sim_static.node_by_id(2).address, 3: f"127.0.0.1:{free_port()}"},
    )
    before = tree(tmp_path / "c1")
    for extra in ([], ["--force-lost", "2"], ["--apply"], ["--apply", "--force-lost", "2"]):
        code, out, err = cli(
            "recover", "-c", conf, "--replica", tmp_path / "b4", "--lost-voters", "2,3", "--timeout", "2", *extra
        )
        assert code == 1, (extra, out, err)
        assert (
            f"  refused: voter 2 at {sim_static.node_by_id(2).address}: answers as a controller following "
            "leader 1 of cluster XFBpci3ORzK2hz44Gtmrwg: it is alive; a recovery now would split the "
            "quorum in two"
        ) in out, out
    assert tree(tmp_path / "c1") == before


def test_a_broker_that_sees_a_leader_refuses_though_the_voters_look_gone(cli, sim_static, tmp_path):
    """From here nothing listens on the lost voters' addresses (as behind a firewall that
    resets the operator's connections), but a broker forwards DescribeQuorum to their
    leader: the quorum is alive elsewhere, whatever --force-lost says (issue 32)."""
    shutil.copytree(STATIC / "c1", tmp_path / "c1")
    shutil.copytree(STATIC / "b4", tmp_path / "b4")
    conf = static_config(
        tmp_path / "c1.properties",
        1,
        tmp_path / "c1",
        {1: "127.0.0.1:9093", 2: f"127.0.0.1:{free_port()}", 3: f"127.0.0.1:{free_port()}"},
    )
    sim_static.set_leader(2, 5)  # the lost voters elected one of their own
    broker = sim_static.node_by_id(4).address
    args = [
        "recover",
        "-c",
        conf,
        "--replica",
        tmp_path / "b4",
        "--lost-voters",
        "2,3",
        "--timeout",
        "2",
        "--bootstrap-server",
        broker,
    ]
    before = tree(tmp_path / "c1")
    seen = f"bootstrap server at {broker} sees leader 2 in epoch 5 (DescribeQuorum, forwarded to the active controller)"
    for extra in ([], ["--apply"], ["--apply", "--force-lost", "2,3"]):
        code, out, err = cli(*args, *extra)
        assert code == 1, (extra, out, err)
        assert "  probe: voter 2 at 127.0.0.1:" in out and ": silent (connection refused)" in out
        assert f"  asked: {seen.replace(' sees', ': sees', 1)}" in out, out
        assert (
            f"  refused: {seen}: the quorum is alive, voter(s) [2, 3] with it; the voters declared lost ([2, 3]) "
            "only look gone from here" in out
        ), out
    assert tree(tmp_path / "c1") == before
    code, out, err = cli(*args, "-o", "json")
    (w,) = [w for w in json.loads(out)["plan"]["witnesses"] if w["who"] == "bootstrap server"]
    assert (w["state"], w["leader_id"], w["leader_epoch"], w["cluster_id"]) == (
        "leader",
        2,
        5,
        "XFBpci3ORzK2hz44Gtmrwg",
    ), w
    # the leader silent too: the broker has no one to forward to, and nobody sees a leader
    sim_static.silence(2)
    code, out, err = cli(*args)
    assert (
        code == 0
        and f"  asked: bootstrap server at {broker}: answers, knows no leader: asked, no answer in "
        "time (a broker waits for an active controller to forward DescribeQuorum to)"
        in out
    ), out


def test_a_frozen_lost_voter_is_refused_even_with_force(cli, sim_static, tmp_path):
    """Accepting connections and saying nothing is what a stopped controller does: it may
    wake up and lead the others, so --force-lost does not waive it."""
    shutil.copytree(STATIC / "c1", tmp_path / "c1")
    shutil.copytree(STATIC / "b4", tmp_path / "b4")
    sim_static.silence(2)
    a2 = sim_static.node_by_id(2).address
    conf = static_config(
        tmp_path / "c1.properties", 1, tmp_path / "c1", {1: "127.0.0.1:9093", 2: a2, 3: f"127.0.0.1:{free_port()}"}
    )
    before = tree(tmp_path / "c1")
    for extra in ([], ["--force-lost", "2"]):
        code, out, err = cli(
            "recover",
            "-c",
            conf,
            "--replica",
            tmp_path / "b4",
            "--lost-voters",
            "2,3",
            "--timeout",
            "1",
            "--apply",
            *extra,
        )
        assert code == 1 and f"  refused: voter 2 at {a2}: a TCP connection is accepted, but no Kafka answer" in out
        assert "as a frozen (stopped, swapping) controller does" in out and "--force-lost does not waive" in out
    assert tree(tmp_path / "c1") == before


def test_an_address_now_answering_another_protocol_is_waived_only_with_force(cli, tmp_path):
    """Voter 2's address now belongs to an HTTP server: refused, unless --force-lost says so."""
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        shutil.copytree(STATIC / "c1", tmp_path / "c1")
        shutil.copytree(STATIC / "b4", tmp_path / "b4")
        conf = static_config(
            tmp_path / "c1.properties",
            1,
            tmp_path / "c1",
            {1: "127.0.0.1:9093", 2: f"127.0.0.1:{port}", 3: f"127.0.0.1:{free_port()}"},
        )
        code, out, err = cli(
            "recover", "-c", conf, "--replica", tmp_path / "b4", "--lost-voters", "2,3", "--timeout", "2"
        )
        assert code == 1 and f"  refused: voter 2 at 127.0.0.1:{port}: a TCP connection is accepted" in out, out
        assert "say so with --force-lost 2" in out
        code, out, err = cli(
            "recover",
            "-c",
            conf,
            "--replica",
            tmp_path / "b4",
            "--lost-voters",
            "2,3",
            "--timeout",
            "2",
            "--force-lost",
            "2",
        )
        assert code == 0 and f"    - --force-lost 2: voter 2 at 127.0.0.1:{port}: a TCP connection is accepted" in out
    finally:
        srv.close()


def test_lost_voters_under_names_that_do_not_resolve_point_at_set_endpoints(cli, tmp_path):
    """Voters 2 and 3 stored under names that no longer resolve: refused as before (nothing shows
    they are gone), and the plan says that a moved controller looks the same, naming voters check
    and set-endpoints; with --force-lost the same risk stays in the plan."""
    shutil.copytree(STATIC / "c1", tmp_path / "c1")
    shutil.copytree(STATIC / "b4", tmp_path / "b4")
    conf = static_config(
        tmp_path / "c1.properties",
        1,
        tmp_path / "c1",
        {1: "127.0.0.1:9093", 2: "k2.invalid:9093", 3: "k3.invalid:9093"},
    )
    risk = (
        "    - stored endpoint(s) that do not resolve: voter 2 at k2.invalid:9093, voter 3 at k3.invalid:9093: if "
        "those controllers still run under new names or addresses, they are not lost and the fix is not recover: "
        "`quorumctl voters check` given every voter's log dir (and -c each one's server.properties) names stale "
        "endpoints, `quorumctl voters set-endpoints` repairs them (docs/membership.md)"
    )
    before = tree(tmp_path)
    args = ["recover", "-c", conf, "--replica", tmp_path / "b4", "--lost-voters", "2,3", "--timeout", "2"]
    code, out, err = cli(*args)
    assert (code, err) == (1, "")
    assert "  refused: voter 2 at k2.invalid:9093: cannot resolve host 'k2.invalid'" in out, out
    assert (
        "nothing shows voter 2 is gone; if it certainly is (the host is off for good), say so with --force-lost 2"
        in out
    )
    assert out.splitlines()[-1].endswith(
        "say so with --force-lost 2; if it runs under a new name (stale endpoints), `quorumctl voters check` and "
        "`quorumctl voters set-endpoints` are the way, not recover"
    ), out
    code, out, err = cli(*args, "-o", "json")
    assert risk[6:] in json.loads(out)["plan"]["risks"], out
    code, out, err = cli(*args, "--force-lost", "2,3")
    assert (code, err) == (0, ""), out
    assert risk in out.splitlines(), out
    assert tree(tmp_path) == before


def test_every_registered_broker_is_read_or_named(cli, dyn):
    """Broker 4 is registered in the log: recover without its log dir is refused; with
    --no-replica 4 the new epoch jumps past any its unread log can hold."""
    code, out, err = cli("recover", dyn / "c1", "--lost-voters", "2,3")
    assert (
        code == 1
        and ("refused: registered broker(s) [4] not given with --replica: a broker fetches the metadata log too") in out
        and "--no-replica 4" in out
    )
    code, out, err = cli("recover", dyn / "c1", "--lost-voters", "2,3", "--no-replica", "4", "-o", "json")
    plan = json.loads(out)["plan"]
    assert (code, plan["max_epoch_seen"], plan["new_epoch"]) == (0, 1, 1002)
    assert any(r.startswith("node(s) [4] not read (--no-replica)") for r in plan["risks"])
    # the plan's first step: the wipe Kafka needs (it never truncates below the high watermark)
    assert plan["next_steps"][0].startswith("node 4 (not read, --no-replica): before node 1 starts, stop node 4")
    code, out, err = cli("recover", dyn / "c1", "--lost-voters", "2,3", "--no-replica", "7")
    assert code == 1 and "refused: --no-replica names [7], which are not registered brokers (registered: [4])" in out


@pytest.mark.parametrize("how", ["two arguments", "argument and --replica", "a symlink"])
@pytest.mark.parametrize("apply", [[], ["--apply"]])
def test_the_same_dir_given_twice_is_refused(cli, dyn, how, apply):
    """One rule for a destructive command: a dir named twice, however, is bad input (exit 2,
    one line, nothing written), never merged into one."""
    c1 = dyn / "c1"
    if how == "two arguments":
        args, second = [c1, c1], c1
    elif how == "argument and --replica":
        args, second = [c1, "--replica", c1], c1
    else:
        (dyn / "alias").symlink_to(c1)
        args, second = [c1, dyn / "alias"], dyn / "alias"
    before = tree(dyn)
    code, out, err = cli("recover", *args, "--replica", dyn / "b4", "--lost-voters", "2,3", *apply, code=2)
    same = f"{c1} twice" if second == c1 else f"{c1} and {second}"
    assert (out, err) == (
        "",
        f"quorumctl: error: the same log dir was given twice ({same}, both {c1 / '__cluster_metadata-0'}): "
        "give each replica's dir once\n",
    )
    assert tree(dyn) == before


def test_a_dir_named_by_its_config_too_is_one_dir(cli, dyn):
    """`LOG_DIR -c its server.properties` (the static quorum's advice) names one dir, not two."""
    conf = dyn / "c1.properties"
    conf.write_text(f"node.id=1\nprocess.roles=controller\nlog.dirs={dyn / 'c1'}\n")
    code, out, err = cli("recover", dyn / "c1", "-c", conf, "--replica", dyn / "b4", "--lost-voters", "2,3")
    assert (code, err) == (0, ""), out + err


def test_a_log_dir_without_cluster_id_is_of_another_cluster(cli, dyn):
    """A v0 meta.properties (broker.id, no cluster.id) beside v1 ones: one line, exit 2, as
    any two clusters, nothing written (sorting its None with a cluster id once crashed)."""
    (dyn / "b4" / "meta.properties").write_text("version=0\nbroker.id=4\n")
    before = tree(dyn)
    code, out, err = cli("recover", dyn / "c1", "--replica", dyn / "b4", "--lost-voters", "2,3", "--apply", code=2)
    assert err == "quorumctl: error: the log dirs belong to different clusters: None, rTcAzcTXQpG_6c1zYns8Xw\n"
    assert tree(dyn) == before


def test_a_static_voter_with_no_address_is_refused_unless_forced(cli, diverged):
    code, out, err = cli("recover", diverged / "c1", "--lost-voters", "2,3")
    assert (
        code == 1
        and (
            "refused: voter 2 has no known address, so nothing shows it is gone: give the survivor's "
            "server.properties with -c (controller.quorum.voters), or --force-lost 2"
        )
        in out
    )
    code, out, err = cli("recover", diverged / "c1", "--lost-voters", "2,3", "--force-lost", "2,3")
    assert code == 0 and "    - --force-lost 3: voter 3 has no known address; it was not probed" in out


def test_refused_while_kafka_holds_the_lock(cli, verify_clean, dyn):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time; fd=os.open(sys.argv[1], "
            "os.O_RDWR|os.O_CREAT); fcntl.lockf(fd, fcntl.LOCK_EX); print('locked', flush=True);"
            " time.sleep(60)",
            str(dyn / "c1" / ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        before = tree(dyn)
        code, out, err = cli("recover", dyn / "c1", "--replica", dyn / "b4", "--lost-voters", "2,3", "--apply")
        assert code == 1 and err.startswith(f"quorumctl: error: Failed to acquire lock on file .lock in {dyn}/c1.")
        assert tree(dyn) == before
        code, out, err = cli("recover", dyn / "c1", "--replica", dyn / "b4", "--lost-voters", "2,3")
        assert (
            code == 0
            and f"note: process {holder.pid} holds {dyn}/c1/.lock (a running Kafka); --apply will refuse" in out
        )
    finally:
        holder.kill()
        holder.wait()


def test_static_quorum_keeps_quorum_state_version_0(cli, verify_clean, tmp_path):
    shutil.copytree(STATIC / "c1", tmp_path / "c1")
    shutil.copytree(STATIC / "b4", tmp_path / "b4")
    conf = tmp_path / "c1.properties"
    conf.write_text(
        f"node.id=1\nprocess.roles=controller\nlog.dirs={tmp_path / 'c1'}\n"
        "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://10.0.0.1:9093\n"
        f"controller.quorum.voters=1@10.0.0.1:9093,2@127.0.0.1:{free_port()},3@127.0.0.1:{free_port()}\n"
    )
    code, out, err = cli("recover", "-c", conf, "--replica", tmp_path / "b4", "--lost-voters", "2,3", "--apply")
    assert (code, err) == (0, "")
    assert "    1. edit node 1's server.properties: controller.quorum.voters=1@10.0.0.1:9093" in out
    # Kafka 3.7 refuses a v0 quorum-state whose voters differ from controller.quorum.voters
    assert (tmp_path / "c1" / "__cluster_metadata-0" / "quorum-state").read_text() == (
        '{"clusterId":"","leaderId":-1,"leaderEpoch":20,"votedId":-1,"appliedOffset":0,'
        '"currentVoters":[{"voterId":1}],"data_version":0}'
    )
    verify_clean(tmp_path / "c1")


def test_static_quorum_without_config_or_voters_is_an_input_error(cli, verify_clean, tmp_path):
    shutil.copytree(STATIC / "c1", tmp_path / "c1")
    shutil.copytree(STATIC / "b4", tmp_path / "b4")
    qs = tmp_path / "c1" / "__cluster_metadata-0" / "quorum-state"
    qs.write_text(
        '{"leaderId":1,"leaderEpoch":20,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}'
    )
    code, out, err = cli("recover", tmp_path / "c1", "--lost-voters", "2,3")
    assert (
        code == 2
        and "holds no VotersRecord (a static quorum, kraft.version 0): give the survivor's "
        "server.properties with --config"
        in err
    )


def state(pdir):
    """tree(), except that the appended batch's bytes (its timestamp is the clock's)
    count by size only."""
    t = tree(pdir)
    seg = pdir / "00000000000000000000.log"
    t[seg.name] = (hashlib.sha256(seg.read_bytes()[:23456]).hexdigest(), seg.stat().st_size)
    return t


def test_interrupted_at_every_step_is_wholly_old_or_new(cli, verify_clean, dyn, tmp_path):
    pdir = dyn / "c1" / "__cluster_metadata-0"
    pristine = tmp_path / "pristine"
    shutil.copytree(dyn / "c1", pristine)
    fsutil.set_fault_hook(lambda n, name: None)
    try:
        assert cli("recover", dyn / "c1", "--replica", dyn / "b4", "--lost-voters", "2,3", "--apply")[0] == 0
        steps = fsutil.steps_taken()
    finally:
        fsutil.set_fault_hook(None)
    new = state(pdir)
    old = state(pristine / "__cluster_metadata-0")
    assert old != new and len(steps) >= 5
    seen = set()
    for n in range(1, len(steps) + 1):
        shutil.rmtree(dyn / "c1")
        shutil.rmtree(dyn / "c1.quorumctl-backup", ignore_errors=True)
        shutil.copytree(pristine, dyn / "c1")
        env = {"QUORUMCTL_TEST_CRASH_AT_STEP": str(n)}
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "quorumctl",
                "recover",
                str(dyn / "c1"),
                "--replica",
                str(dyn / "b4"),
                "--lost-voters",
                "2,3",
                "--apply",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
        )
        assert p.returncode == fsutil.CRASH_EXIT, (n, steps[n - 1], p.stderr)
        now = state(pdir)
        assert now in (old, new), (n, steps[n - 1])
        seen.add("old" if now == old else "new")
        verify_clean(dyn / "c1")
    assert seen == {"old", "new"}


def test_interrupted_with_a_copy_and_a_truncation_every_dir_is_wholly_old_or_new(cli, diverged, tmp_path):
    """Survivor node 3 (diverged) takes the log of broker 4 (node 1's); broker 5 (node 3's
    diverged log) is truncated. Crashed at every step, each directory is old or new, and a
    second run finishes the job: the same result as one uninterrupted run."""
    b4 = as_broker(diverged / "c1", tmp_path / "b4", 4)
    b5 = as_broker(diverged / "c3", tmp_path / "b5", 5)
    conf = static_config(
        tmp_path / "c3.properties",
        3,
        diverged / "c3",
        {1: f"127.0.0.1:{free_port()}", 2: f"127.0.0.1:{free_port()}", 3: "127.0.0.1:9093"},
    )
    dirs = {"c3": diverged / "c3", "b4": b4, "b5": b5}
    pristine = tmp_path / "pristine"
    for n, d in dirs.items():
        shutil.copytree(d, pristine / n)
    argv = ["recover", "-c", str(conf), "--replica", str(b4), "--replica", str(b5), "--lost-voters", "1,2", "--apply"]

    def snapshot():
        return {n: tree(d / "__cluster_metadata-0") for n, d in dirs.items()}

    def reset():
        for n, d in dirs.items():
            shutil.rmtree(d)
            shutil.rmtree(str(d) + ".quorumctl-backup", ignore_errors=True)
            shutil.copytree(pristine / n, d)

    old = snapshot()
    fsutil.set_fault_hook(lambda n, name: None)
    try:
        code, out, err = cli(*argv)
        steps = fsutil.steps_taken()
    finally:
        fsutil.set_fault_hook(None)
    assert code == 0, out + err
    new = snapshot()
    assert new["b4"] == old["b4"] and new["c3"] != old["c3"] and new["b5"] != old["b5"]
    assert any(s.startswith("copy ") for s in steps) and len(steps) >= 10
    for n in range(1, len(steps) + 1):
        reset()
        p = subprocess.run(
            [sys.executable, "-m", "quorumctl", *argv],
            capture_output=True,
            text=True,
            env={**os.environ, "QUORUMCTL_TEST_CRASH_AT_STEP": str(n)},
        )
        assert p.returncode == fsutil.CRASH_EXIT, (n, steps[n - 1], p.stdout, p.stderr)
        now = snapshot()
        for name in dirs:
            assert now[name] in (old[name], new[name]), (n, steps[n - 1], name)
        code, out, err = cli(*argv)
        assert code == 0, (n, steps[n - 1], out, err)
        assert snapshot() == new, (n, steps[n - 1])


def test_a_frozen_voter_whose_accept_queue_is_full_is_not_taken_as_gone(cli, tmp_path):
    """A SIGSTOPped JVM that other nodes kept connecting to: its accept queue fills up, the
    kernel drops further SYNs, and a connect times out exactly as to a host that is off.
    The chaos runs on real Kafka met this; no answer is 'unknown', never 'silent'."""
    from quorumctl.config.addresses import Address
    from quorumctl.config.client import ClientConfig
    from quorumctl.live.liveness import probe_voters

    frozen = socket.socket()
    frozen.bind(("127.0.0.1", 0))
    frozen.listen(0)  # never accepts: the queue holds what the kernel allows
    port = frozen.getsockname()[1]
    fillers = []
    try:
        for _ in range(8):  # fill the accept queue (and the SYN backlog behind it)
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", port))
            fillers.append(c)
        (p,), _ = probe_voters({2: [Address("127.0.0.1", port)]}, ClientConfig(), 1.0)
        assert p.state in ("unknown", "accepts"), p
        shutil.copytree(STATIC / "c1", tmp_path / "c1")
        shutil.copytree(STATIC / "b4", tmp_path / "b4")
        conf = static_config(
            tmp_path / "c1.properties",
            1,
            tmp_path / "c1",
            {1: "127.0.0.1:9093", 2: f"127.0.0.1:{port}", 3: f"127.0.0.1:{free_port()}"},
        )
        before = tree(tmp_path / "c1")
        code, out, err = cli(
            "recover", "-c", conf, "--replica", tmp_path / "b4", "--lost-voters", "2,3", "--timeout", "1", "--apply"
        )
        assert code == 1 and f"  refused: voter 2 at 127.0.0.1:{port}: " in out, out
        assert "--force-lost 2" in out and tree(tmp_path / "c1") == before
    finally:
        for c in fillers:
            c.close()
        frozen.close()
