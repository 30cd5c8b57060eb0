"""Several replicas decide what is committed (`state` with several log dirs,
`truncate --reference A --reference B`): real Kafka 3.9 (dynamic quorum,
VotersRecord) and 3.7 (static, quorum-state voters) log dirs cut back with
quorumctl's own truncate to make a minority tail, and divergence scenarios
written with the project's writer (testing/synth.py)."""

from __future__ import annotations

import json
import shutil

import pytest

from quorumctl.testing.synth import B, write_replica
from logfiles import tree
from samples import FIXTURES

needs_fixtures = pytest.mark.shared("reference/fixtures")


def state(cli, *dirs, extra=()):
    code, out, err = cli("state", "-o", "json", *extra, *map(str, dirs))
    assert err == "", err
    return code, json.loads(out)


def split(doc, label):
    x = next(x for x in doc["committed"]["replicas"] if x["replica"] == label)
    return x["committed_end_offset"], x["uncommitted_from_offset"], x["log_end_offset"]


def truncate(cli, *args):
    code, out, err = cli("truncate", "-o", "json", *map(str, args))
    return code, (json.loads(out) if out.strip() else None), err


def copy_fixture(tmp_path, name):
    for n in ("c1", "c2", "c3"):
        shutil.copytree(FIXTURES / name / "data" / n, tmp_path / n, symlinks=True)


@needs_fixtures
def test_real_dynamic_quorum_minority_tail(cli, verify_clean, tmp_path):
    """Kafka 3.9, kraft.version 1: c2 and c3 cut back to 300 (as if c1, the leader,
    had appended 300..314 and died before they fetched it)."""
    copy_fixture(tmp_path, "kafka-3.9.0-dynamic")
    for n in ("c2", "c3"):
        code, doc, err = truncate(cli, tmp_path / n, "--to-offset", 300, "--apply")
        assert code == 0 and doc["plan"]["log_end_offset_after"] == 300, err
    code, doc = state(cli, tmp_path / "c1", tmp_path / "c2", tmp_path / "c3")
    cm = doc["committed"]
    assert cm["voter_sets"] == [[1, 2, 3]] and cm["majority"] == [2]
    assert cm["voters_source"].startswith("VotersRecord: [1, 2, 3] (node 1's snapshot 00000000000000000296-")
    assert split(doc, "node 1") == (300, 300, 315)  # 300..314: only node 1 holds them
    assert split(doc, "node 2") == (300, 300, 300) and split(doc, "node 3") == (300, 300, 300)
    code, out, _ = cli("state", "-o", "text", tmp_path / "c1", tmp_path / "c2", tmp_path / "c3", code=0)
    assert "  node 1: committed below 300; provably uncommitted 300..314 (log end offset 315)\n" in out

    code, out, _ = cli("state", "-o", "table", tmp_path / "c1", tmp_path / "c2", code=0)  # two columns fit 80
    rows = [line for line in out.splitlines() if "committed <" in line or "unknown" in line]
    assert rows[0].count("committed < 300") == 2 and "unknown 300..314" in rows[1], out

    # two of three voters: node 3 might hold the tail, so it is unknown
    code, doc = state(cli, tmp_path / "c1", tmp_path / "c2")
    assert split(doc, "node 1") == (300, 315, 315)

    # one reference cannot prove the tail uncommitted: --force, as before
    before = tree(tmp_path / "c1")
    code, doc, _ = truncate(cli, tmp_path / "c1", "--reference", tmp_path / "c2", "--apply")
    assert code == 1 and "is more up to date than node 2 (last epoch 1, end offset 300)" in doc["plan"]["refused"]
    assert "committed" not in doc["plan"]
    assert tree(tmp_path / "c1") == before

    # two references with node 1 are all three voters: no --force
    code, doc, err = truncate(cli, tmp_path / "c1", "--reference", tmp_path / "c2", "--reference", tmp_path / "c3")
    p = doc["plan"]
    assert code == 0 and p["refused"] is None and p["needs_force"] is None, err
    assert (p["log_end_offset_before"], p["log_end_offset_after"]) == (315, 300)
    assert "offsets 300..314 are provably uncommitted" in p["reason"]
    assert tree(tmp_path / "c1") == before  # a dry run
    code, doc, err = truncate(
        cli, tmp_path / "c1", "--reference", tmp_path / "c2", "--reference", tmp_path / "c3", "--apply"
    )
    assert code == 0 and doc["applied"]["applied"] and doc["applied"]["verify"]["ok"], err
    verify_clean(tmp_path / "c1")
    code, doc = state(cli, tmp_path / "c1", tmp_path / "c2", tmp_path / "c3")
    assert code == 0 and [split(doc, f"node {i}") for i in (1, 2, 3)] == [(300, 300, 300)] * 3
    assert all(f["kind"] == "none" for f in doc["comparison"]["followers"])


@needs_fixtures
def test_real_static_quorum_voters_from_quorum_state(cli, tmp_path):
    """Kafka 3.7, controller.quorum.voters: c1 and c2 end at 854, c3 (stopped
    earlier) at 801. Cut c2 back to 852 (above its snapshot 851-20): 801..851 is held
    by c1 and c2 (a majority at epoch 20, neither in a later epoch), 852..853 by c1
    alone."""
    copy_fixture(tmp_path, "kafka-3.7.0-static")
    code, doc, err = truncate(cli, tmp_path / "c2", "--to-offset", 852, "--apply")
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 852, err
    code, doc = state(cli, tmp_path / "c1", tmp_path / "c2", tmp_path / "c3")
    assert doc["committed"]["voters_source"].startswith("static: [1, 2, 3] (node 1's quorum-state")
    assert split(doc, "node 1") == (852, 852, 854)
    assert split(doc, "node 2") == (852, 852, 852)
    assert split(doc, "node 3") == (801, 801, 801)
    code, doc, err = truncate(cli, tmp_path / "c1", "--reference", tmp_path / "c2", "--reference", tmp_path / "c3")
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 852 and doc["plan"]["refused"] is None, err
    # c3 alone (behind both): one reference proves nothing uncommitted
    code, doc, _ = truncate(cli, tmp_path / "c1", "--reference", tmp_path / "c3")
    assert code == 1 and "more up to date than node 3" in doc["plan"]["refused"]


def test_references_that_disagree(cli, verify_clean, tmp_path):
    """Node 1 led epoch 2 and appended 6..7 alone; node 3 then won epoch 3 and
    appended its own 6..7 before node 2 fetched them: neither tail is committed."""
    write_replica(str(tmp_path / "t"), [B(1)] * 3 + [B(2, tag="t")] * 5, node_id=1)
    write_replica(str(tmp_path / "a"), [B(1)] * 3 + [B(2, tag="t")] * 3, node_id=2)
    write_replica(str(tmp_path / "b"), [B(1)] * 3 + [B(2, tag="t")] * 3 + [B(3, tag="b")] * 2, node_id=3)
    code, doc = state(cli, tmp_path / "t", tmp_path / "a", tmp_path / "b")
    assert [split(doc, f"node {i}") for i in (1, 2, 3)] == [(6, 6, 8), (6, 6, 6), (6, 6, 8)]
    code, doc, err = truncate(
        cli, tmp_path / "t", "--reference", tmp_path / "a", "--reference", tmp_path / "b", "--apply"
    )
    p = doc["plan"]
    assert code == 0 and p["log_end_offset_after"] == 6, err
    assert p["reason"].startswith(
        "node 3 is the most up to date of the references; diverges from node 3: "
        "its Fetch answer is DivergingEpoch(epoch=2, endOffset=6)"
    )
    verify_clean(tmp_path / "t")


def test_dropping_committed_entries_needs_force(cli, tmp_path):
    """Files that contradict Raft (a disk restored from an old backup, say): three of
    five voters hold 3..7 in epoch 2 and never saw epoch 3, yet node 4 holds other
    entries there in epoch 3. Truncating node 1 to node 4 would cut committed entries."""
    voters = (1, 2, 3, 4, 5)
    for name, nid in (("t", 1), ("a", 2), ("b", 3)):
        write_replica(str(tmp_path / name), [B(1)] * 3 + [B(2)] * 5, node_id=nid, voters=voters)
    write_replica(str(tmp_path / "c"), [B(1)] * 3 + [B(3, tag="c")] * 2, node_id=4, voters=voters)
    code, doc = state(cli, tmp_path / "t", tmp_path / "a", tmp_path / "b", tmp_path / "c")
    assert doc["committed"]["majority"] == [3]
    assert split(doc, "node 1") == (8, 8, 8) and split(doc, "node 4") == (3, 3, 5)
    args = (tmp_path / "t", "--reference", tmp_path / "c", "--reference", tmp_path / "a", "--reference", tmp_path / "b")
    before = tree(tmp_path / "t")
    code, doc, _ = truncate(cli, *args, "--apply")
    assert code == 1 and doc["plan"]["refused"] == (
        "offsets 3..7 are committed (held by a majority of the voters): cutting committed entries needs --force"
    )
    assert tree(tmp_path / "t") == before
    code, doc, err = truncate(cli, *args, "--apply", "--force")
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 3, err


def test_five_voters(cli, tmp_path):
    """Five voters, majority 3: two references besides node 1 leave two voters that
    may hold its tail; a third proves it uncommitted."""
    voters = (1, 2, 3, 4, 5)
    write_replica(str(tmp_path / "t"), [B(1)] * 3 + [B(2)] * 5, node_id=1, voters=voters)
    for name, nid in (("a", 2), ("b", 3), ("c", 4)):
        write_replica(str(tmp_path / name), [B(1)] * 3 + [B(2)] * 3, node_id=nid, voters=voters)
    code, doc = state(cli, tmp_path / "t", tmp_path / "a", tmp_path / "b")
    assert split(doc, "node 1") == (6, 8, 8)
    code, doc, _ = truncate(cli, tmp_path / "t", "--reference", tmp_path / "a", "--reference", tmp_path / "b")
    assert code == 1 and doc["plan"]["refused"].endswith(
        "that needs --force (the references do not prove the entries it drops uncommitted)"
    )
    code, doc = state(cli, tmp_path / "t", tmp_path / "a", tmp_path / "b", tmp_path / "c")
    assert split(doc, "node 1") == (6, 6, 8)
    code, doc, err = truncate(
        cli, tmp_path / "t", "--reference", tmp_path / "a", "--reference", tmp_path / "b", "--reference", tmp_path / "c"
    )
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 6 and doc["plan"]["refused"] is None, err


def test_voters_unknown_then_from_config(cli, tmp_path):
    """A static quorum whose quorum-state is data_version 1 (Kafka 3.9+) names no
    voters: nothing is claimed until -c gives controller.quorum.voters."""
    cfgs = []
    for name, nid, batches in (
        ("t", 1, [B(1)] * 3 + [B(2)] * 5),
        ("a", 2, [B(1)] * 3 + [B(2)] * 3),
        ("b", 3, [B(1)] * 3 + [B(2)] * 3),
    ):
        qs = {
            "clusterId": "",
            "leaderId": -1,
            "leaderEpoch": 2,
            "votedId": -1,
            "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA",
            "data_version": 1,
        }
        write_replica(str(tmp_path / name), batches, node_id=nid, quorum_state=qs)
        cfg = tmp_path / f"{name}.properties"
        cfg.write_text(
            f"process.roles=controller\nnode.id={nid}\nlog.dirs={tmp_path / name}\n"
            "controller.listener.names=CONTROLLER\n"
            "controller.quorum.voters=1@localhost:9093,2@localhost:9094,3@localhost:9095\n"
        )
        cfgs.append(cfg)
    code, doc = state(cli, tmp_path / "t", tmp_path / "a", tmp_path / "b")
    assert doc["committed"]["voter_sets"] == [] and doc["committed"]["voters_source"].startswith("unknown")
    assert split(doc, "node 1") == (0, 8, 8)
    code, out, _ = cli("state", "-o", "text", tmp_path / "t", tmp_path / "a", tmp_path / "b", code=0)
    assert "Committed entries (voters unknown):\n" in out
    assert "  node 1: nothing provably committed; unknown 0..7 (log end offset 8)\n" in out
    code, doc, _ = truncate(cli, tmp_path / "t", "--reference", tmp_path / "a", "--reference", tmp_path / "b")
    assert code == 1 and "needs --force" in doc["plan"]["refused"]

    code, doc = state(cli, extra=[x for c in cfgs for x in ("-c", str(c))])
    assert doc["committed"]["voters_source"] == (
        f"static: [1, 2, 3] (controller.quorum.voters in {cfgs[0]}, {cfgs[1]}, {cfgs[2]})"
    )
    assert split(doc, "node 1") == (6, 6, 8)
    code, doc, err = truncate(
        cli, tmp_path / "t", "--reference", tmp_path / "a", "--reference", tmp_path / "b", "-c", cfgs[0]
    )
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 6, err


def test_one_reference_output_is_unchanged(cli, tmp_path):
    write_replica(str(tmp_path / "t"), [B(1)] * 3 + [B(2)] * 5, node_id=1)
    write_replica(str(tmp_path / "a"), [B(1)] * 3 + [B(2)] * 3, node_id=2)
    code, out, _ = cli("truncate", tmp_path / "t", "--reference", tmp_path / "a", "--force")
    assert code == 0 and out.splitlines()[1] == (
        "  reason: diverges from node 2: its Fetch answer is DivergingEpoch(epoch=2, endOffset=6); "
        "truncateToEndOffset gives 6"
    )
    assert "voters:" not in out
    code, out, _ = cli("state", "-o", "json", tmp_path / "t", code=0)
    assert "committed" not in json.loads(out)
