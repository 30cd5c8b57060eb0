"""`quorumctl truncate`: divergence scenarios written with the project's writer;
after --apply the follower holds exactly the common prefix, with a valid
index, epoch checkpoint and snapshots, and `verify` is clean."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quorumctl.logdir import statefiles as state_files
from quorumctl.logdir import indexes
from quorumctl.logdir import producer_state
from quorumctl.logdir import segments
from quorumctl.testing.synth import B, T0, Layout, write_replica
from logfiles import tree

FIG7_LEADER = [B(1), B(1), B(1), B(4), B(4), B(5), B(5), B(6), B(6), B(6)]


def log_bytes(pdir) -> bytes:
    pf = segments.scan_partition(str(pdir))
    return b"".join(open(s.log, "rb").read() for s in pf.segments if s.log)


def plan_json(cli, *args):
    code, out, err = cli("truncate", "-o", "json", *map(str, args))
    return code, (json.loads(out) if out.strip() else None), err


def apply_and_check(cli, verify_clean, tmp_path, follower, leader, expect_end, expect_epochs=None, extra=()):
    """truncate FOLLOWER --reference LEADER --apply, then: the follower's log is the
    leader's prefix up to expect_end, checkpoint and indexes consistent, verify clean,
    and a second state run finds nothing to truncate."""
    lp = tmp_path / leader / "__cluster_metadata-0"
    fp = tmp_path / follower / "__cluster_metadata-0"
    # state first: the winner by Raft's rule, and where the other one diverges
    code, out, _ = cli("state", "-o", "json", tmp_path / leader, tmp_path / follower)
    c = json.loads(out)["comparison"]
    f_label = json.loads(out)["replicas"][1]["replica"]
    # exit 1 exactly when the document shows a problem (a clash, a replica's own problems)
    problems = "log_matching" in c or any(r["problems"] for r in json.loads(out)["replicas"])
    assert code == (1 if problems else 0), out
    if extra:  # the follower holds more than the leader: it is the one Raft would elect
        assert c["winner"] == f_label and c["followers"][0]["kind"] == "none"
    else:
        assert c["winner"] != f_label and c["followers"][0]["kind"] == "diverging"
        assert c["followers"][0]["new_end_offset"] == expect_end
    code, doc, err = plan_json(cli, tmp_path / follower, "--reference", tmp_path / leader, "--apply", *extra)
    assert code == 0, err
    assert doc["applied"]["applied"] and doc["plan"]["log_end_offset_after"] == expect_end
    fb = log_bytes(fp)
    assert fb == log_bytes(lp)[: len(fb)]
    pf = segments.scan_partition(str(fp))
    assert segments.scan_log(pf).log_end == expect_end
    cp = state_files.read_epoch_checkpoint(str(fp / "leader-epoch-checkpoint"))
    if expect_epochs is not None:
        assert cp == expect_epochs
    for seg in pf.segments:
        idx = indexes.read_offset_index(seg.index, seg.base_offset)
        assert all(o < expect_end for o, _ in idx)
        assert all(o1 < o2 and p1 < p2 for (o1, p1), (o2, p2) in zip(idx, idx[1:]))
    verify_clean(tmp_path / follower)
    out = cli("state", "-o", "json", tmp_path / leader, tmp_path / follower, code=0).out
    assert json.loads(out)["comparison"]["followers"][0]["kind"] == "none"
    return doc


# -- the Raft paper's figure 7 ---------------------------------------------------------


@pytest.mark.parametrize(
    "name,follower,end,epochs",
    [
        ("c", FIG7_LEADER + [B(6, tag="c")], 10, [(1, 0), (4, 3), (5, 5), (6, 7)]),
        ("d", FIG7_LEADER + [B(7, tag="d"), B(7, tag="d")], 10, [(1, 0), (4, 3), (5, 5), (6, 7)]),
        ("e", FIG7_LEADER[:5] + [B(4, tag="e"), B(4, tag="e")], 5, [(1, 0), (4, 3)]),
        ("f", [B(1)] * 3 + [B(2, tag="f")] * 3 + [B(3, tag="f")] * 5, 3, [(1, 0)]),
    ],
)
def test_figure7_followers(cli, verify_clean, tmp_path, name, follower, end, epochs):
    write_replica(str(tmp_path / "leader"), FIG7_LEADER, node_id=1)
    write_replica(str(tmp_path / name), follower, node_id=2, layout=Layout(index_interval=60))
    extra = ()
    if name in ("c", "d"):
        # these hold more than the leader (by Raft's rule they are more up to date): --force
        code, doc, _ = plan_json(cli, tmp_path / name, "--reference", tmp_path / "leader", "--apply")
        assert code == 1 and "more up to date than node 1" in doc["plan"]["refused"]
        extra = ("--force",)
    apply_and_check(cli, verify_clean, tmp_path, name, "leader", end, epochs, extra)


@pytest.mark.parametrize("follower", [FIG7_LEADER[:9], FIG7_LEADER[:4]])
def test_figure7_prefix_followers_are_left_alone(cli, tmp_path, follower):
    write_replica(str(tmp_path / "leader"), FIG7_LEADER, node_id=1)
    write_replica(str(tmp_path / "f"), follower, node_id=2)
    before = tree(tmp_path / "f")
    code, doc, _ = plan_json(cli, tmp_path / "f", "--reference", tmp_path / "leader", "--apply")
    assert code == 0 and not doc["plan"]["changes"] and "already a prefix" in doc["plan"]["reason"]
    assert tree(tmp_path / "f") == before


def test_kip101_divergence(cli, verify_clean, tmp_path):
    # A kept m2 written in epoch 0; B, leader in epoch 1, wrote m3 at offset 1
    write_replica(str(tmp_path / "b"), [B(0), B(1, tag="m3")], node_id=2)
    write_replica(str(tmp_path / "a"), [B(0), B(0, tag="m2")], node_id=1)
    doc = apply_and_check(cli, verify_clean, tmp_path, "a", "b", 1, [(0, 0)])
    assert doc["plan"]["divergence"]["diverging_epoch"] == {"epoch": 0, "end_offset": 1}


def test_kip101_no_loss(cli, tmp_path):
    # the follower kept what the leader has: nothing is truncated (a high-watermark
    # truncation would have dropped m2)
    write_replica(str(tmp_path / "a"), [B(0), B(0)], node_id=1)
    write_replica(str(tmp_path / "b"), [B(0), B(0)], node_id=2)
    code, doc, _ = plan_json(cli, tmp_path / "b", "--reference", tmp_path / "a")
    assert code == 0 and not doc["plan"]["changes"]


def test_divergence_inside_a_batch(cli, verify_clean, tmp_path):
    write_replica(str(tmp_path / "l"), [B(1, 10), B(3, 3), B(5, 4)], node_id=1)
    write_replica(str(tmp_path / "f"), [B(1, 10), B(3, 5, tag="x")], node_id=2)
    code, doc, _ = plan_json(cli, tmp_path / "f", "--reference", tmp_path / "l")
    p = doc["plan"]
    assert p["divergence"]["truncate_to"] == 13 and p["target_offset"] == 10
    # the Fetch exchange already accounts for whole batches: the follower ends at 10
    assert p["cut_segment"]["offsets_dropped"] == [10, 14]
    apply_and_check(cli, verify_clean, tmp_path, "f", "l", 10, [(1, 0)])


def test_to_offset_inside_a_batch_cuts_the_whole_batch(cli, tmp_path):
    write_replica(str(tmp_path / "f"), [B(1, 10), B(3, 5)], node_id=2)
    code, doc, _ = plan_json(cli, tmp_path / "f", "--to-offset", 12)
    p = doc["plan"]
    assert code == 0 and p["log_end_offset_after"] == 10 and p["cut_segment"]["target_inside_batch"] == [10, 14]
    out = cli("truncate", "-o", "text", tmp_path / "f", "--to-offset", 12, code=0).out
    assert "  offset 12 is inside batch 10..14: Kafka truncates whole batches\n" in out
    assert "  log end offset: 15 -> 10\n" in out and out.endswith("Run again with --apply to do it.\n")


def test_divergence_spanning_segments(cli, verify_clean, tmp_path):
    common = [B(1, 3), B(1, 3), B(2, 3)]
    write_replica(str(tmp_path / "l"), common + [B(4, 3)] * 9, node_id=1, layout=Layout(segment_starts=(4, 8)))
    write_replica(
        str(tmp_path / "f"),
        common + [B(3, 3, tag="old")] * 9,
        node_id=2,
        layout=Layout(segment_starts=(4, 8), producer_snapshots=(6, 9, 21, 36), index_interval=100),
    )
    code, doc, _ = plan_json(cli, tmp_path / "f", "--reference", tmp_path / "l")
    p = doc["plan"]
    assert [s["base_offset"] for s in p["removed_segments"]] == [12, 24]
    assert p["cut_segment"]["base_offset"] == 0 and p["cut_segment"]["offsets_dropped"] == [9, 11]
    assert [s["offset"] for s in p["removed_producer_snapshots"]] == [21, 36]
    before = tree(tmp_path / "f" / "__cluster_metadata-0")
    doc = apply_and_check(cli, verify_clean, tmp_path, "f", "l", 9, [(1, 0), (2, 6)])
    pdir = tmp_path / "f" / "__cluster_metadata-0"
    assert sorted(os.listdir(pdir)) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
        "00000000000000000006.snapshot",
        "00000000000000000009.snapshot",
        "leader-epoch-checkpoint",
        "partition.metadata",
        "quorum-state",
    ]
    # the backup holds exactly what was removed or replaced, byte for byte
    backup = doc["applied"]["backup_dir"]
    saved = tree(os.path.join(backup, "__cluster_metadata-0"))
    assert sorted(saved) == sorted(doc["applied"]["backed_up"])
    assert set(saved) == {
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
        "00000000000000000012.index",
        "00000000000000000012.log",
        "00000000000000000012.timeindex",
        "00000000000000000024.index",
        "00000000000000000024.log",
        "00000000000000000024.timeindex",
        "00000000000000000021.snapshot",
        "00000000000000000036.snapshot",
        "leader-epoch-checkpoint",
    }
    assert all(saved[k] == before[k] for k in saved)
    assert json.load(open(os.path.join(backup, "plan.json")))["status"] == "done"


def test_divergence_below_a_snapshot_needs_force(cli, verify_clean, tmp_path):
    common = [B(1, 2), B(1, 2), B(2, 1)]
    write_replica(str(tmp_path / "l"), common + [B(4, 2)] * 3, node_id=1)
    write_replica(str(tmp_path / "f"), common + [B(3, 2, tag="x")] * 3, node_id=2, snapshots=[(3, 1), (9, 3)])
    before = tree(tmp_path / "f")
    code, doc, _ = plan_json(cli, tmp_path / "f", "--reference", tmp_path / "l", "--apply")
    assert code == 1 and "below the latest snapshot's end offset 9" in doc["plan"]["refused"]
    assert doc["applied"] is None and tree(tmp_path / "f") == before
    code, out, err = cli("truncate", tmp_path / "f", "--reference", tmp_path / "l", "--apply", "-o", "text")
    assert code == 1 and "refused: the new log end offset 5 is below" in out
    code, doc, err = plan_json(cli, tmp_path / "f", "--reference", tmp_path / "l", "--apply", "--force")
    assert code == 0, err
    assert [s["end_offset"] for s in doc["plan"]["removed_snapshots"]] == [9]
    pdir = tmp_path / "f" / "__cluster_metadata-0"
    assert segments.SNAPSHOT_RE.match("00000000000000000003-0000000001.checkpoint")
    assert "00000000000000000003-0000000001.checkpoint" in os.listdir(pdir)
    assert "00000000000000000009-0000000003.checkpoint" not in os.listdir(pdir)
    verify_clean(tmp_path / "f")


def test_diverging_epoch_and_end_offset(cli, tmp_path):
    write_replica(str(tmp_path / "f"), [B(1)] * 3 + [B(2)] * 3 + [B(3)] * 5, node_id=2)
    code, doc, _ = plan_json(cli, tmp_path / "f", "--diverging-epoch", 1, "--end-offset", 3)
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 3
    assert "the local end of epoch 1 is 3: min(3, 3) = 3" in doc["plan"]["reason"]
    # an epoch this replica never saw: it truncates to the end of the epoch below it
    code, doc, _ = plan_json(cli, tmp_path / "f", "--diverging-epoch", 4, "--end-offset", 20)
    assert doc["plan"]["log_end_offset_after"] == 11 and not doc["plan"]["changes"]
    code, doc, _ = plan_json(cli, tmp_path / "f", "--diverging-epoch", 2, "--end-offset", 5)
    assert doc["plan"]["log_end_offset_after"] == 5
    # epoch 0: min(end offset, log end)
    code, doc, _ = plan_json(cli, tmp_path / "f", "--diverging-epoch", 0, "--end-offset", 4)
    assert (
        doc["plan"]["log_end_offset_after"] == 4 and "epoch 0: min(end offset 4, log end 11)" in doc["plan"]["reason"]
    )


def test_option_errors(cli, tmp_path):
    write_replica(str(tmp_path / "f"), [B(1)] * 3, node_id=2)
    for args in (
        [],
        ["--to-offset", "1", "--diverging-epoch", "1", "--end-offset", "1"],
        ["--diverging-epoch", "1"],
        ["--to-offset", "-1"],
    ):
        code, out, err = cli("truncate", tmp_path / "f", *args)
        assert code == 2 and err.startswith("quorumctl: error: ") and err.count("\n") == 1, (args, err)
    write_replica(str(tmp_path / "other"), [B(1)] * 3, node_id=1, cluster_id="rTcAzcTXQpG_6c1zYns8Xw")
    code, out, err = cli("truncate", tmp_path / "f", "--reference", tmp_path / "other")
    assert code == 2 and "belongs to cluster rTcAzcTXQpG_6c1zYns8Xw" in err


def test_dry_run_changes_nothing(cli, tmp_path):
    write_replica(str(tmp_path / "f"), [B(1)] * 3 + [B(2)] * 3, node_id=2, snapshots=[(2, 1)])
    before = tree(tmp_path)
    code, out, _ = cli("truncate", "-o", "text", tmp_path / "f", "--to-offset", 4)
    assert code == 0 and "dry run" in out and "rewrite leader-epoch-checkpoint: 1@0, 2@3 -> 1@0, 2@3" not in out
    assert "  cut 00000000000000000000.log at byte" in out
    assert tree(tmp_path) == before


def test_snapshot_answer_is_refused(cli, tmp_path):
    # the reference's log starts at 30 (after its snapshot); this replica ends at 10
    write_replica(str(tmp_path / "l"), [B(1, 10)] * 5, node_id=1, layout=Layout(log_start=30), snapshots=[(30, 1)])
    write_replica(str(tmp_path / "f"), [B(1, 10)], node_id=2)
    code, doc, _ = plan_json(cli, tmp_path / "f", "--reference", tmp_path / "l", "--apply")
    assert code == 1 and "must fetch that snapshot" in doc["plan"]["refused"]


@pytest.mark.parametrize("how", ["the same path", "a symlink", "one of two references"])
def test_the_log_dir_itself_as_its_reference_is_refused(cli, tmp_path, how):
    """A mistyped --reference naming the replica being truncated: one line, exit 2, nothing written."""
    write_replica(str(tmp_path / "f"), [B(1)] * 3 + [B(2)] * 3, node_id=2)
    write_replica(str(tmp_path / "l"), [B(1)] * 3 + [B(3)] * 3, node_id=1)
    (tmp_path / "alias").symlink_to(tmp_path / "f")
    refs = {
        "the same path": [tmp_path / "f"],
        "a symlink": [tmp_path / "alias"],
        "one of two references": [tmp_path / "l", tmp_path / "f"],
    }[how]
    before = tree(tmp_path)
    code, out, err = cli("truncate", tmp_path / "f", *[x for r in refs for x in ("--reference", r)], "--apply")
    assert (code, out) == (2, "")
    assert err == (
        f"quorumctl: error: {refs[-1]} is the same log dir as {tmp_path / 'f'} "
        f"({tmp_path / 'f' / '__cluster_metadata-0'}): give another replica's dir\n"
    )
    assert tree(tmp_path) == before


def test_damaged_log_is_refused(cli, tmp_path):
    pdir = write_replica(str(tmp_path / "f"), [B(1)] * 5, node_id=2)
    with open(os.path.join(pdir, "00000000000000000000.log"), "ab") as fh:
        fh.write(b"\x01\x02\x03")
    code, doc, _ = plan_json(cli, tmp_path / "f", "--to-offset", 2, "--apply")
    assert code == 1 and "the log is damaged" in doc["plan"]["refused"]


def test_backup_dir_inside_the_log_dir_is_refused(cli, tmp_path):
    write_replica(str(tmp_path / "f"), [B(1)] * 5, node_id=2)
    before = tree(tmp_path / "f")
    code, out, err = cli("truncate", tmp_path / "f", "--to-offset", 2, "--apply", "--backup-dir", tmp_path / "f" / "bk")
    assert code == 1 and "inside the log dir" in err
    assert tree(tmp_path / "f") == before


# -- the lock ------------------------------------------------------------------------

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.lockf(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


def hold_lock(path):
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "locked"
    return p


def test_apply_refuses_while_kafka_holds_the_lock(cli, tmp_path):
    write_replica(str(tmp_path / "f"), [B(1)] * 3 + [B(2)] * 3, node_id=2)
    holder = hold_lock(tmp_path / "f" / ".lock")
    try:
        before = tree(tmp_path / "f")
        code, out, err = cli("truncate", tmp_path / "f", "--to-offset", 3, "--apply")
        assert code == 1
        assert err == (
            f"quorumctl: error: Failed to acquire lock on file .lock in {tmp_path / 'f'}. A Kafka instance "
            "in another process or thread is using this directory. Stop that Kafka process (broker or "
            "controller) before changing its files offline.\n"
        )
        assert tree(tmp_path / "f") == before
        code, out, err = cli("truncate", "-o", "text", tmp_path / "f", "--to-offset", 3)
        assert code == 0 and f"note: process {holder.pid} holds" in out
    finally:
        holder.kill()
        holder.wait()
    # a leftover .lock nobody holds does not block
    code, out, err = cli("truncate", tmp_path / "f", "--to-offset", 3, "--apply")
    assert code == 0, err
    assert segments.scan_log(segments.scan_partition(str(tmp_path / "f" / "__cluster_metadata-0"))).log_end == 3


def test_json_plan_shape(cli, tmp_path):
    write_replica(str(tmp_path / "f"), [B(1)] * 3 + [B(2)] * 3, node_id=2, layout=Layout(producer_snapshots=(6,)))
    code, doc, _ = plan_json(cli, tmp_path / "f", "--to-offset", 3)
    p = doc["plan"]
    assert doc["dry_run"] and doc["applied"] is None
    assert (
        p["mode"],
        p["log_end_offset_before"],
        p["log_end_offset_after"],
        p["last_epoch_before"],
        p["last_epoch_after"],
    ) == ("to-offset", 6, 3, 2, 1)
    assert p["epochs_before"] == [[1, 0], [2, 3]] and p["epochs_after"] == [[1, 0]]
    assert p["rewrite_leader_epoch_checkpoint"] and p["removed_producer_snapshots"][0]["offset"] == 6
    assert {c["kind"] for c in p["index_changes"]} == {"index", "timeindex"}


def test_truncating_the_more_up_to_date_replica_needs_force(cli, tmp_path):
    # figure 7 (d) holds epoch-7 entries: it would win an election against the epoch-6 log
    write_replica(str(tmp_path / "leader"), FIG7_LEADER, node_id=1)
    write_replica(str(tmp_path / "d"), FIG7_LEADER + [B(7, tag="d"), B(7, tag="d")], node_id=4)
    before = tree(tmp_path / "d")
    code, doc, _ = plan_json(cli, tmp_path / "d", "--reference", tmp_path / "leader", "--apply")
    assert (
        code == 1
        and "is more up to date than node 1 (last epoch 6, end offset 10) by Raft's rule" in doc["plan"]["refused"]
    )
    assert tree(tmp_path / "d") == before
    code, doc, err = plan_json(cli, tmp_path / "d", "--reference", tmp_path / "leader", "--apply", "--force")
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 10, err


@st.composite
def file_scenarios(draw):
    """A leader and a follower sharing a prefix of batches (several records each),
    then each with batches of its own epochs; segments rolled at random."""
    n_common = draw(st.integers(1, 5))
    common, epoch = [], 1
    for _ in range(n_common):
        epoch += draw(st.integers(0, 1))
        common.append(B(epoch, draw(st.integers(1, 4))))
    lead = [B(epoch + 2, draw(st.integers(1, 4))) for _ in range(draw(st.integers(0, 4)))]
    fol = [B(epoch + 1, draw(st.integers(1, 4)), tag="f") for _ in range(draw(st.integers(1, 4)))]
    n = n_common + len(fol)
    starts = tuple(sorted(draw(st.sets(st.integers(1, max(n - 1, 1)), max_size=2))))
    return common, lead, fol, starts


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(file_scenarios())
def test_truncate_leaves_the_common_prefix(cli, verify_clean, tmp_path, sc):
    import shutil

    common, lead, fol, starts = sc
    shutil.rmtree(tmp_path / "s", ignore_errors=True)
    root = tmp_path / "s"
    write_replica(str(root / "l"), common + lead, node_id=1)
    write_replica(str(root / "f"), common + fol, node_id=2, layout=Layout(segment_starts=starts, index_interval=90))
    end = sum(b.count for b in common)
    force = () if lead else ("--force",)  # without leader batches of its own, the follower is ahead
    apply_and_check(cli, verify_clean, root, "f", "l", end, extra=force)


# -- the cut segment's index files, byte for byte --------------------------------------


def _cut_files(pdir):
    return {
        s: (pdir / f"00000000000000000000.{s}").read_bytes()
        for s in ("index", "timeindex", "txnindex")
        if (pdir / f"00000000000000000000.{s}").exists()
    }


def test_cut_segment_indexes_keep_the_entries_below_the_new_end(cli, tmp_path):
    # batches of 2 records (127 bytes; the one at offset 10 is 129), then batches of 3 (163 bytes)
    pdir = write_replica(
        str(tmp_path / "f"), [B(1, 2)] * 6 + [B(2, 3)] * 4, node_id=2, layout=Layout(index_interval=100)
    )
    code, doc, err = plan_json(cli, tmp_path / "f", "--to-offset", 14, "--apply")
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 12, err
    assert [(c["kind"], c["entries_before"], c["entries_after"]) for c in doc["plan"]["index_changes"]] == [
        ("index", 9, 5),
        ("timeindex", 9, 5),
    ]
    got = _cut_files(tmp_path / "f" / "__cluster_metadata-0")
    offsets = [(3, 127), (5, 254), (7, 381), (9, 508), (11, 635)]
    times = [(T0 + o - 1, o) for o in (3, 5, 7, 9, 11)]
    assert got["index"] == b"".join(struct.pack(">ii", o, p) for o, p in offsets)
    assert got["timeindex"] == b"".join(struct.pack(">qi", t, o) for t, o in times)
    assert indexes.read_offset_index(os.path.join(pdir, "00000000000000000000.index")) == offsets
    assert indexes.read_time_index(os.path.join(pdir, "00000000000000000000.timeindex")) == times


def test_cut_segment_bad_index_is_rebuilt_and_txnindex_cut(cli, tmp_path):
    # 12 batches of 20 records: 731, 741 (x4), then 761 bytes each
    pdir = tmp_path / "f" / "__cluster_metadata-0"
    write_replica(str(tmp_path / "f"), [B(1, 20)] * 8 + [B(2, 20)] * 4, node_id=2, layout=Layout(index_interval=100))
    idx = pdir / "00000000000000000000.index"
    raw = idx.read_bytes()
    idx.write_bytes(raw[8:16] + raw[:8] + raw[16:])  # entries 0 and 1 swapped: not increasing
    txns = [(7, 3, 30, 3), (8, 31, 150, 31), (9, 151, 200, 151)]
    (pdir / "00000000000000000000.txnindex").write_bytes(producer_state.txn_index_bytes(txns) + b"\x00\x01")
    code, doc, err = plan_json(cli, tmp_path / "f", "--to-offset", 170, "--apply")
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 160, err
    assert [(c["kind"], c["entries_before"], c["entries_after"]) for c in doc["plan"]["index_changes"]] == [
        ("index", 1, 1),
        ("timeindex", 11, 7),
        ("txnindex", 3, 2),
    ]
    got = _cut_files(pdir)
    # rebuilt as LogSegment.recover does (index.interval.bytes 4096): one entry, the batch at byte 4456
    assert got["index"] == struct.pack(">ii", 139, 4456)
    assert indexes.read_offset_index(str(idx)) == [(139, 4456)]
    times = [(T0 + o - 19, o) for o in (39, 59, 79, 99, 119, 139, 159)]
    assert got["timeindex"] == b"".join(struct.pack(">qi", t, o) for t, o in times)
    assert indexes.read_time_index(str(pdir / "00000000000000000000.timeindex")) == times
    # whole entries whose last offset is below the new end; the partial tail is dropped
    assert got["txnindex"] == b"".join(struct.pack(">hqqqq", 0, *t) for t in txns[:2])
    assert [
        (t.producer_id, t.last_offset)
        for t in producer_state.read_txn_index(str(pdir / "00000000000000000000.txnindex"))
    ] == [(7, 30), (8, 150)]


def test_cut_segment_preallocated_indexes_are_trimmed(cli, verify_clean, tmp_path):
    # an active segment after a crash: indexes preallocated with zeros; the .index has
    # no entry yet (an all-zero first entry is the end, as kafka-dump-log reads it)
    pdir = tmp_path / "f" / "__cluster_metadata-0"
    write_replica(str(tmp_path / "f"), [B(1, 2)] * 6, node_id=2, layout=Layout(index_interval=100))
    (pdir / "00000000000000000000.index").write_bytes(bytes(8 * 512))
    tix = pdir / "00000000000000000000.timeindex"
    tix.write_bytes(tix.read_bytes() + bytes(12 * 512))
    code, doc, err = plan_json(cli, tmp_path / "f", "--to-offset", 6, "--apply")
    assert code == 0 and doc["plan"]["log_end_offset_after"] == 6, err
    assert [(c["kind"], c["entries_before"], c["entries_after"]) for c in doc["plan"]["index_changes"]] == [
        ("index", 0, 0),
        ("timeindex", 5, 2),
    ]
    got = _cut_files(pdir)
    assert got["index"] == b""
    assert got["timeindex"] == struct.pack(">qiqi", T0 + 2, 3, T0 + 4, 5)
    verify_clean(tmp_path / "f")


def test_cut_segment_txnindex_with_an_unknown_version_is_an_input_error(cli, tmp_path):
    pdir = write_replica(str(tmp_path / "f"), [B(1, 2)] * 5, node_id=2)
    txn = os.path.join(pdir, "00000000000000000000.txnindex")
    with open(txn, "wb") as fh:
        fh.write(producer_state.txn_index_bytes([(1, 0, 1, 0)]) + struct.pack(">hqqqq", 3, 2, 2, 3, 2))
    before = tree(tmp_path / "f")
    code, out, err = cli("truncate", tmp_path / "f", "--to-offset", 4, "--apply")
    assert (code, out) == (2, "")
    assert err == (f"quorumctl: error: {txn}: byte 34: unexpected aborted transaction version 3 (expected 0)\n")
    assert tree(tmp_path / "f") == before
