"""`quorumctl recover` on real files (the Kafka 3.9 dynamic and 3.7 static
fixtures, copied) and on the example replicas: the exact bytes written, the
refusals, the lock, the backup, and a run interrupted at every step leaving
the partition directory wholly old or wholly new. Real Kafka starting from
what recover wrote: tests/test_kafka41_recover.py."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from quorumctl.records.batch import BatchReader
from quorumctl.records import metadata as md
from quorumctl.storage import fsutil
from samples import FIXTURES
from logfiles import tree

DYN = FIXTURES / "kafka-3.9.0-dynamic" / "data"
STATIC = FIXTURES / "kafka-3.7.0-static" / "data"
pytestmark = pytest.mark.skipif(not DYN.exists() or not STATIC.exists(),
                                reason=f"the real fixtures are absent ({FIXTURES})")
C1_DIR = "DfqkWOlJTZ-abG8pUGocIA"


@pytest.fixture
def dyn(tmp_path):
    for n in ("c1", "c2", "c3"):
        shutil.copytree(DYN / n, tmp_path / n)
    return tmp_path


def test_dry_run_changes_nothing_and_explains(cli, verify_clean, dyn):
    before = tree(dyn)
    code, out, err = cli("recover", dyn / "c1", "--lost-voters", "2,3")
    assert (code, err) == (0, "")
    assert tree(dyn) == before
    lines = out.splitlines()
    assert lines[0] == f"Recovery plan for node 1 ({dyn}/c1/__cluster_metadata-0), dynamic quorum, dry run"
    assert "  survivor: node 1, last epoch 1, log end offset 315" in lines
    assert "  voters: [1, 2, 3] -> [1] (lost: [2, 3])" in lines
    assert (f"    - {dyn}/c1/__cluster_metadata-0/00000000000000000000.log: append a control batch at offset 315 "
            f"(epoch 1, 128 bytes at byte 23456): VotersRecord with only node 1 ({C1_DIR}, "
            "CONTROLLER://localhost:19191)") in lines
    assert lines[-1] == "Run again with --apply to do it (the node must be stopped)."


def test_apply_writes_one_voters_record_and_resets_quorum_state(cli, verify_clean, dyn):
    seg = dyn / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"
    old = seg.read_bytes()
    code, out, err = cli("recover", dyn / "c1", "--lost-voters", "2,3", "--apply", "-o", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["plan"]["voters_after"] == [1] and doc["applied"]["backed_up"] == [
        "00000000000000000000.log", "quorum-state"]
    new = seg.read_bytes()
    assert new[:len(old)] == old and len(new) == len(old) + 128
    with BatchReader(str(seg), start=len(old)) as r:
        batches = list(r)
    assert len(batches) == 1
    b = batches[0]
    assert (b.base_offset, b.last_offset, b.leader_epoch, b.is_control, b.crc_valid()) == (315, 315, 1,
                                                                                                    True, True)
    (rec,) = b.records()
    assert md.control_type(rec.key) == md.KRAFT_VOTERS
    assert md.decode_control(rec.key, rec.value).data == {
        "version": 0, "voters": [{"voterId": 1, "voterDirectoryId": C1_DIR,
                                  "endpoints": [{"name": "CONTROLLER", "host": "localhost", "port": 19191}],
                                  "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}]}
    qs = (dyn / "c1" / "__cluster_metadata-0" / "quorum-state").read_text()
    assert qs == ('{"leaderId":-1,"leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA",'
                  '"data_version":1}')
    backup = doc["applied"]["backup_dir"]
    assert (open(f"{backup}/__cluster_metadata-0/00000000000000000000.log", "rb").read() == old)
    st = json.loads(cli("state", dyn / "c1", "-o", "json")[1])["replicas"][0]
    assert (st["voters"]["ids"], st["voters"]["source"], st["log_end_offset"]) == ([1], "log offset 315", 316)
    verify_clean(dyn / "c1")
    # a second run: the voter set is {1} now, nothing is lost any more
    code, out, err = cli("recover", dyn / "c1", "--lost-voters", "2,3")
    assert code == 1 and "refused: --lost-voters names [2, 3], which are not voters (voters [1])" in out


@pytest.mark.parametrize("args, refusal", [
    (["c1", "--lost-voters", "2"], "refused: voter(s) [3] are neither given (log dir) nor declared lost"),
    (["c1", "--lost-voters", "2,3,7"], "refused: --lost-voters names [7], which are not voters (voters [1, 2, 3])"),
    (["c1", "c2", "--lost-voters", "2,3"], "refused: --lost-voters names [2], whose log dirs were given"),
    (["c1", "c2", "--lost-voters", "3"], "refused: the quorum still has a majority: 2 of 3 voters ([1, 2]) survive"),
])
def test_refusals_change_nothing(cli, verify_clean, dyn, args, refusal):
    before = tree(dyn)
    code, out, err = cli("recover", *[str(dyn / a) if a.startswith("c") else a for a in args], "--apply")
    assert (code, err) == (1, "") and refusal in out, out
    assert tree(dyn) == before


def test_refused_unless_the_survivor_is_the_most_up_to_date(cli, verify_clean, tmp_path):
    from quorumctl.testing.examples import write_examples
    write_examples(str(tmp_path))
    d = tmp_path / "diverged"
    code, out, err = cli("recover", d / "c1", d / "c3", "--survivor", "3", "--lost-voters", "2")
    assert code == 1 and ("refused: node 3 (last epoch 3, log end offset 40) is not the most up-to-date replica "
                          "given: node 1 (last epoch 4, log end offset 50) wins an election against it") in out


def test_refused_while_kafka_holds_the_lock(cli, verify_clean, dyn):
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl,os,sys,time; fd=os.open(sys.argv[1], "
                               "os.O_RDWR|os.O_CREAT); fcntl.lockf(fd, fcntl.LOCK_EX); print('locked', flush=True);"
                               " time.sleep(60)", str(dyn / "c1" / ".lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        before = tree(dyn)
        code, out, err = cli("recover", dyn / "c1", "--lost-voters", "2,3", "--apply")
        assert code == 1 and err.startswith(f"quorumctl: error: Failed to acquire lock on file .lock in {dyn}/c1.")
        assert tree(dyn) == before
        code, out, err = cli("recover", dyn / "c1", "--lost-voters", "2,3")
        assert code == 0 and f"note: process {holder.pid} holds {dyn}/c1/.lock (a running Kafka); --apply will " \
                             "refuse" in out
    finally:
        holder.kill()
        holder.wait()


def test_static_quorum_keeps_quorum_state_version_0(cli, verify_clean, tmp_path):
    shutil.copytree(STATIC / "c1", tmp_path / "c1")
    conf = tmp_path / "c1.properties"
    conf.write_text(f"node.id=1\nprocess.roles=controller\nlog.dirs={tmp_path / 'c1'}\n"
                    "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://10.0.0.1:9093\n"
                    "controller.quorum.voters=1@10.0.0.1:9093,2@10.0.0.2:9093,3@10.0.0.3:9093\n")
    code, out, err = cli("recover", "-c", conf, "--lost-voters", "2,3", "--apply")
    assert (code, err) == (0, "")
    assert "    1. edit node 1's server.properties: controller.quorum.voters=1@10.0.0.1:9093" in out
    # Kafka 3.7 refuses a v0 quorum-state whose voters differ from controller.quorum.voters
    assert (tmp_path / "c1" / "__cluster_metadata-0" / "quorum-state").read_text() == (
        '{"clusterId":"","leaderId":-1,"leaderEpoch":20,"votedId":-1,"appliedOffset":0,'
        '"currentVoters":[{"voterId":1}],"data_version":0}')
    verify_clean(tmp_path / "c1")


def test_static_quorum_without_config_or_voters_is_an_input_error(cli, verify_clean, tmp_path):
    shutil.copytree(STATIC / "c1", tmp_path / "c1")
    qs = tmp_path / "c1" / "__cluster_metadata-0" / "quorum-state"
    qs.write_text('{"leaderId":1,"leaderEpoch":20,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA",'
                  '"data_version":1}')
    code, out, err = cli("recover", tmp_path / "c1", "--lost-voters", "2,3")
    assert code == 2 and "holds no VotersRecord (a static quorum, kraft.version 0): give the survivor's " \
                         "server.properties with --config" in err


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
        assert cli("recover", dyn / "c1", "--lost-voters", "2,3", "--apply")[0] == 0
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
        p = subprocess.run([sys.executable, "-m", "quorumctl", "recover", str(dyn / "c1"), "--lost-voters", "2,3",
                            "--apply"], capture_output=True, text=True, env={**os.environ, **env})
        assert p.returncode == fsutil.CRASH_EXIT, (n, steps[n - 1], p.stderr)
        now = state(pdir)
        assert now in (old, new), (n, steps[n - 1])
        seen.add("old" if now == old else "new")
        verify_clean(dyn / "c1")
    assert seen == {"old", "new"}
