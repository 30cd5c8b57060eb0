"""recover and truncate on a real Kafka 4.4 cluster (the 4.4 branch build, 87943b2f)
whose dirs 4.4's own kafka-storage formatted (the cluster script formats them: each
controller's bootstrap records in its zero snapshot,
`__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`, no
bootstrap.checkpoint anywhere, the broker only meta.properties). The core
safety scenarios of test_kafka_recover_safety.py and test_kafka41_recover.py
on one dynamic cluster (3 controllers + 1 broker):

1. controller 3 stopped while 1 and 2 go on (a topic created that only they and
   the broker hold): `recover c3 --lost-voters 1,2` refuses, dry run and
   --apply, naming a voter that answers; nothing written, no backup;
2. 1 and 2 really lost (killed, dirs deleted), the broker stopped: `truncate`
   refuses to cut the broker (more up to date than controller 3) without
   --force, and with it (on a copy) cuts it to controller 3's end; a
   controller's copy cut with --to-offset --force keeps its zero snapshot;
   both verify clean;
3. `recover c3 --replica b4 --apply`: controller 3 starts and leads alone, the
   broker starts on it and serves, the topic only the broker held is there and
   the finalized levels are those 4.4's kafka-storage formatted; verify clean
   and no log-matching clash between the two replicas' files.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import recover_chaos as rc  # tools/recover_chaos.py (on pytest's pythonpath)
from kafka41 import KAFKA44_HOME, free_base_port, skip_reason, until

REASON = skip_reason(KAFKA44_HOME)
pytestmark = [pytest.mark.kafka("4.4"), pytest.mark.skipif(REASON is not None, reason=REASON or "")]

SNAP = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"


def finalized(cli, k) -> dict:
    code, out, err = cli("features", "describe", "--bootstrap-server", k.bootstrap, "-o", "json")
    assert code == 0, err
    return {f["name"]: f.get("finalizedVersionLevel") for f in json.loads(out)["features"]}


def end_of(cli, d: Path) -> tuple[int, int]:
    code, out, err = cli("state", "-o", "json", str(d))
    assert code == 0, err
    r = json.loads(out)["replicas"][0]
    return r["last_epoch"], r["log_end_offset"]


@pytest.mark.timeout(1200)
def test_recover_and_truncate_on_a_44_formatted_cluster(cli, tmp_path):
    k = rc.Kafka(tmp_path / "kc", free_base_port(span=4), "4.4", brokers=1, start_timeout=300)
    try:
        k.start()
        # kafka-storage 4.4's layout
        assert [n for n in (1, 2, 3, 4) if k.data(n).joinpath("bootstrap.checkpoint").exists()] == []
        assert [n for n in (1, 2, 3, 4) if k.data(n).joinpath(SNAP).exists()] == [1, 2, 3]
        levels = finalized(cli, k)
        assert levels["metadata.version"] == 30, levels

        # 1. controller 3 stops; 1 and 2 go on without it
        k.kill(3)
        until("1 and 2 lead", lambda: (k.status(1) or {}).get("leaderId") in (1, 2), 90)
        p = k.tool(
            "kafka-topics",
            [
                "--bootstrap-server",
                k.bootstrap,
                "--command-config",
                k.admin_config(),
                "--create",
                "--topic",
                "kept-topic",
                "--partitions",
                "1",
                "--replication-factor",
                "1",
            ],
        )
        assert p.returncode == 0, p.stdout + p.stderr
        until("the broker holds the topic", lambda: "kept-topic" in rc.held_changes(k.data(4))["created"], 60)
        before = rc.tree_hash(k.data(3))
        backup = Path(str(k.data(3)) + ".quorumctl-backup")
        for apply in ([], ["--apply"]):
            code, out, err = cli("recover", str(k.data(3)), "--lost-voters", "1,2", *apply)
            assert code == 1, (code, out, err)
            m = re.search(
                r"^  refused: voter ([12]) at (127\.0\.0\.1:\d+): answers as (?:a controller|the leader)", out, re.M
            )
            assert m and m.group(2) == k.addr(int(m.group(1))), out
            assert rc.tree_hash(k.data(3)) == before and not backup.exists(), "recover wrote while refusing"

        # 2. 1 and 2 lost for good, the broker stopped: it is ahead of controller 3
        for n in (1, 2):
            k.kill(n)
            shutil.rmtree(k.data(n))
        k.kill(4)
        (e3, end3), (e4, end4) = end_of(cli, k.data(3)), end_of(cli, k.data(4))
        assert (e4, end4) > (e3, end3), "the broker must be ahead of controller 3 for this test"
        b4 = rc.tree_hash(k.data(4))
        code, out, err = cli("truncate", "-o", "json", str(k.data(4)), "--reference", str(k.data(3)), "--apply")
        assert code == 1 and "more up to date than node 3" in json.loads(out)["plan"]["refused"], out + err
        assert rc.tree_hash(k.data(4)) == b4
        copy = tmp_path / "b4-copy"
        shutil.copytree(k.data(4), copy, ignore=shutil.ignore_patterns(".lock"))
        code, out, err = cli(
            "truncate",
            "-o",
            "json",
            str(copy),
            "--reference",
            str(k.data(3)),
            "--force",
            "--apply",
            "--backup-dir",
            str(tmp_path / "bk"),
        )
        res = json.loads(out)
        assert code == 0 and res["applied"]["verify"]["ok"], out + err
        assert res["plan"]["log_end_offset_after"] == end3, res["plan"]
        assert end_of(cli, copy)[1] == end3
        c3 = tmp_path / "c3-copy"
        shutil.copytree(k.data(3), c3, ignore=shutil.ignore_patterns(".lock"))
        code, out, err = cli(
            "truncate",
            "-o",
            "json",
            str(c3),
            "--to-offset",
            str(end3 // 2),
            "--force",
            "--apply",
            "--backup-dir",
            str(tmp_path / "bk3"),
        )
        assert code == 0 and json.loads(out)["applied"]["verify"]["ok"], out + err
        assert c3.joinpath(SNAP).exists() and end_of(cli, c3)[1] <= end3 // 2
        for d in (copy, c3):
            code, out, err = cli("verify", str(d))
            assert (code, err) == (0, ""), out

        # 3. recovered from controller 3 and what the broker holds
        code, out, err = cli("recover", str(k.data(3)), "--lost-voters", "1,2", "--replica", str(k.data(4)), "--apply")
        assert (code, err) == (0, ""), out
        assert "voters: [1, 2, 3] -> [3] (lost: [1, 2])" in out, out
        code, out, err = cli("verify", str(k.data(3)))
        assert (code, err) == (0, ""), out
        p = k.start_node(3)
        assert p.returncode == 0, p.stderr[-2000:]
        until("3 leads alone", lambda: (k.status(3) or {}).get("leaderId") == 3, 120)
        p = k.start_node(4)
        assert p.returncode == 0, p.stderr[-2000:]
        until(
            "the topic the broker held, through the broker",
            lambda: (seen := rc.observed_state(k)) is not None and "kept-topic" in seen[0],
            120,
            every=2,
        )
        assert finalized(cli, k) == levels
        k.serves(120)
        k.stop()
        for n in (3, 4):
            code, out, err = cli("verify", str(k.data(n)))
            assert (code, err) == (0, ""), out
        assert rc.log_matching_clashes({"c3": k.data(3), "b4": k.data(4)}) == []
    finally:
        k.discard()
