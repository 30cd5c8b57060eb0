"""`quorumctl state` on real replicas (corpus, Kafka fixtures) and on generated
divergence scenarios: values must match the files and Kafka's rules."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quorumctl.testing.synth import B, write_replica
from samples import CORPUS, FIXTURES, SHARED

needs_shared = pytest.mark.shared


def state_json(cli, *dirs):
    code, out, err = cli("state", "-o", "json", *map(str, dirs))
    assert err == "", err
    return code, json.loads(out)


# -- the corpus: the three voters of real clusters ------------------------------------

CLUSTERS = {
    # name: ([replica dirs], per replica (node, leader, leader epoch, log end, epochs, snapshots), winner, tied)
    "hiage__kafka-raft": (
        ["data/kafka1", "data/kafka2", "data/kafka3"],
        [(1, 1, 1, 2982, [[1, 0]], []), (2, 1, 1, 2986, [[1, 0]], []), (3, 1, 1, 2989, [[1, 0]], [])],
        "node 3",
        [],
    ),
    "Viso-Lake__kafka_service": (
        ["kafka1/data", "kafka2/data", "kafka3/data"],
        [(n, 1, 1, 1193, [[1, 0]], []) for n in (1, 2, 3)],
        "node 1",
        ["node 1", "node 2", "node 3"],
    ),
    "ftmhxp__real-time-data-streaming-pipeline": (
        ["kafka1/data", "kafka2/data", "kafka3/data"],
        [
            (1, 3, 5, 13057, [[1, 0], [2, 12143]], [[7268, 1]]),
            (2, 3, 5, 13057, [[1, 0], [2, 12143]], [[7269, 1]]),
            (3, 3, 5, 13057, [[1, 0], [2, 12143]], [[7268, 1]]),
        ],
        "node 1",
        ["node 1", "node 2", "node 3"],
    ),
    "nurlan-abdullazada__Docker-compose": (
        ["data/kafka1", "data/kafka2", "data/kafka3"],
        [(n, 1, 3, 188, [[1, 0], [2, 69], [3, 70]], []) for n in (1, 2, 3)],
        "node 1",
        ["node 1", "node 2", "node 3"],
    ),
    "mavila01-prog__kafka_tutorial": (
        ["kafka1/data", "kafka2/data", "kafka3/data"],
        [(n, 3, 9, 3088, [[2, 0], [9, 84]], []) for n in (1, 2, 3)],
        "node 1",
        ["node 1", "node 2", "node 3"],
    ),
}


def catalog():
    with open(CORPUS / "CATALOG.json") as f:
        return json.load(f)


@needs_shared
@pytest.mark.parametrize("name", sorted(CLUSTERS))
def test_corpus_clusters(cli, name):
    rels, expect, winner, tied = CLUSTERS[name]
    code, doc = state_json(cli, *(CORPUS / name / r for r in rels))
    assert code == 0
    for j, (node, leader, epoch, end, epochs, snaps) in zip(doc["replicas"], expect):
        assert (j["node_id"], j["leader_id"], j["leader_epoch"], j["log_end_offset"]) == (node, leader, epoch, end)
        assert j["log_start_offset"] == 0 and j["epochs"] == epochs
        assert j["last_epoch"] == epochs[-1][0]
        assert [[s["end_offset"], s["epoch"]] for s in j["snapshots"]] == snaps
        assert j["voters"]["ids"] == [1, 2, 3] and j["voters"]["source"] == "quorum-state"
        assert j["problems"] == []
    c = doc["comparison"]
    assert c["winner"] == winner and c["tied"] == tied
    assert all(f["kind"] == "none" for f in c["followers"])


@needs_shared
def test_corpus_agrees_with_the_catalog(cli):
    """Every multi-replica cluster: log end offsets, epochs and quorum-state as the
    independent catalogue computed them."""
    cat = catalog()
    checked = 0
    for repo, entry in cat.items():
        pdirs = {}
        for f in entry["files"]:
            parts = f["local"].split("/")
            if "_history" in parts or "__cluster_metadata-0" not in parts:
                continue
            pd = "/".join(parts[: parts.index("__cluster_metadata-0") + 1])
            pdirs.setdefault(pd, []).append(f)
        if len(pdirs) < 2:
            continue
        for pd, fs in pdirs.items():
            logs = [f for f in fs if f["kind"] == "metadata-log"]
            if not logs:
                continue
            code, doc = state_json(cli, SHARED / "corpus" / pd)
            j = doc["replicas"][0]
            assert j["log_end_offset"] == max(f["stats"]["last_offset"] for f in logs) + 1, pd
            assert {e for e, _ in j["epochs_in_log"]} == set().union(*(f["stats"]["epochs"] for f in logs)), pd
            qs = next(f["stats"] for f in fs if f["kind"] == "quorum-state")
            assert (j["leader_id"], j["leader_epoch"], j["voted_id"]) == (
                qs["leaderId"],
                qs["leaderEpoch"],
                qs["votedId"],
            ), pd
            lec = next(f["stats"]["lines"] for f in fs if f["kind"] == "leader-epoch-checkpoint")
            assert j["epoch_checkpoint"] == [[int(x) for x in ln.split()] for ln in lec[2:]], pd
            checked += 1
    assert checked >= 20


# -- Kafka's own fixtures -----------------------------------------------------------


@needs_shared
def test_fixture_37_static(cli):
    base = FIXTURES / "kafka-3.7.0-static" / "data"
    code, doc = state_json(cli, *(base / n for n in ("c1", "c2", "c3", "b4")))
    assert code == 0
    ends = [j["log_end_offset"] for j in doc["replicas"]]
    assert ends == [854, 854, 801, 801]
    latest = [(j["latest_snapshot"]["end_offset"], j["latest_snapshot"]["epoch"]) for j in doc["replicas"]]
    assert latest == [(850, 20), (851, 20), (770, 20), (769, 20)]
    for j in doc["replicas"]:
        assert (j["leader_id"], j["leader_epoch"], j["voted_id"]) == (1, 20, -1)
        assert j["epochs"] == [[2, 0], [7, 335], [20, 408]] == j["epoch_checkpoint"]
        assert j["voters"]["ids"] == [1, 2, 3]
        assert j["cluster_id"] == "XFBpci3ORzK2hz44Gtmrwg"
    assert [len(j["snapshots"]) for j in doc["replicas"]] == [21, 21, 19, 19]
    assert doc["replicas"][0]["producer_snapshots"] == [854]
    c = doc["comparison"]
    assert c["winner"] == "node 1" and c["tied"] == ["node 1", "node 2"]
    assert c["election_key"] == {"last_epoch": 20, "end_offset": 854}
    assert [f["kind"] for f in c["followers"]] == ["none", "none", "none"]


@needs_shared
def test_fixture_39_dynamic(cli):
    base = FIXTURES / "kafka-3.9.0-dynamic" / "data"
    code, doc = state_json(cli, *(base / n for n in ("c1", "c2", "c3", "b4")))
    assert code == 0
    c1, c2, c3, b4 = doc["replicas"]
    assert c1["quorum_state"]["data_version"] == 1 and c1["voted_directory_id"] == "AAAAAAAAAAAAAAAAAAAAAA"
    assert c2["quorum_state"]["data_version"] == 0 and c2["quorum_state"]["currentVoters"] == []
    for j in doc["replicas"]:
        assert (j["leader_id"], j["leader_epoch"], j["log_end_offset"], j["epochs"]) == (1, 1, 315, [[1, 0]])
        assert j["kraft_version"] == 1
        assert j["voters"]["ids"] == [1, 2, 3] and j["voters"]["dynamic"]
        dirs = {v["id"]: v["directory_id"] for v in j["voters"]["voters"]}
        assert dirs[1] == "DfqkWOlJTZ-abG8pUGocIA" and dirs[2] == "4BuDMaJKttH3vcqDCog2og"
        assert j["voters"]["voters"][0]["endpoints"] == ["CONTROLLER://localhost:19191"]
    # c1 was the --standalone voter: its bootstrap snapshot 0-0 is there; voters from the latest snapshot
    assert [s["end_offset"] for s in c1["snapshots"]][:1] == [0]
    assert c1["voters"]["source"] == "snapshot 00000000000000000296-0000000001.checkpoint"
    assert b4["voters"]["source"].startswith("log offset ")
    assert c1["directory_id"] == "DfqkWOlJTZ-abG8pUGocIA"
    assert doc["comparison"]["tied"] == ["node 1", "node 2", "node 3", "node 4"]


@needs_shared
def test_state_accepts_partition_dir_and_config(cli, tmp_path):
    pdir = FIXTURES / "kafka-3.7.0-static" / "data" / "c3" / "__cluster_metadata-0"
    code, doc = state_json(cli, pdir)
    assert doc["replicas"][0]["node_id"] == 3 and doc["replicas"][0]["log_end_offset"] == 801
    cfg = tmp_path / "s.properties"
    cfg.write_text(f"process.roles=controller\nnode.id=3\nlog.dirs={pdir.parent}\n")
    code, out, err = cli("state", "-o", "json", "-c", cfg)
    assert code == 0 and json.loads(out)["replicas"][0]["log_end_offset"] == 801


@needs_shared
def test_state_text_and_table(cli):
    base = FIXTURES / "kafka-3.7.0-static" / "data"
    code, out, _ = cli("state", "-o", "text", base / "c1", base / "c3")
    assert code == 0
    assert "  log end offset: 854\n" in out and "  log end offset: 801\n" in out
    assert "  epochs: 2@0, 7@335, 20@408\n" in out
    assert "  quorum-state: v0: leader 1, epoch 20, voted for -1, voters [1, 2, 3]\n" in out
    assert "Most up to date: node 1 (last epoch 20, log end offset 854)\n" in out
    assert "  node 3: its log is a prefix of node 1's; nothing to truncate\n" in out
    code, out, _ = cli("state", "-o", "table", base / "c1", base / "c3")
    assert code == 0 and "most up to date" in out and "854" in out


# -- generated divergence: state names the winner and the divergence point ---------


def test_state_divergence_scenarios(cli, tmp_path):
    leader = [B(1), B(1), B(1), B(4), B(4), B(5), B(5), B(6), B(6), B(6)]
    write_replica(str(tmp_path / "l"), leader, node_id=1)
    write_replica(str(tmp_path / "e"), [B(1), B(1), B(1), B(4), B(4), B(4, tag="x"), B(4, tag="x")], node_id=2)
    write_replica(str(tmp_path / "f"), [B(1)] * 3 + [B(2, tag="f")] * 3 + [B(3, tag="f")] * 5, node_id=3)
    code, doc = state_json(cli, tmp_path / "l", tmp_path / "e", tmp_path / "f")
    assert code == 0
    c = doc["comparison"]
    assert c["winner"] == "node 1" and c["election_key"] == {"last_epoch": 6, "end_offset": 10}
    e, f = c["followers"]
    assert (e["kind"], e["diverging_epoch"], e["truncate_to"], e["new_end_offset"]) == (
        "diverging",
        {"epoch": 4, "end_offset": 5},
        5,
        5,
    )
    assert (f["kind"], f["diverging_epoch"], f["truncate_to"]) == ("diverging", {"epoch": 1, "end_offset": 3}, 3)
    code, out, _ = cli("state", "-o", "text", tmp_path / "l", tmp_path / "f", code=0)
    assert "  node 3: diverges from node 1: DivergingEpoch(epoch=1, endOffset=3); truncates to 3\n" in out


def test_state_reports_problems(cli, tmp_path):
    pdir = write_replica(str(tmp_path / "r"), [B(1, 3), B(2, 2)], checkpoint=[(1, 0), (2, 4)])
    with open(os.path.join(pdir, "00000000000000000000.log"), "ab") as fh:
        fh.write(b"\x00" * 7)  # a torn tail
    code, doc = state_json(cli, tmp_path / "r")
    assert code == 1
    probs = doc["replicas"][0]["problems"]
    assert any("7 bytes too few for a batch header" in p for p in probs)
    assert any("epochs [1@0, 2@4] do not match the epochs in the log [1@0, 2@3]" in p for p in probs)
    # Kafka keeps the checkpoint's entry for an epoch it already knows
    assert doc["replicas"][0]["epochs"] == [[1, 0], [2, 4]]


def test_state_input_errors(cli, tmp_path):
    code, out, err = cli("state", tmp_path / "nope")
    assert code == 2 and err.startswith("quorumctl: error: ") and "no such directory" in err
    (tmp_path / "empty").mkdir()
    code, out, err = cli("state", tmp_path / "empty")
    assert code == 2 and "has no __cluster_metadata-0 directory" in err
    code, out, err = cli("state")
    assert code == 2 and "give at least one log dir" in err


def test_a_log_behind_its_latest_snapshot(cli, tmp_path):
    # Kafka drops such a log at start-up (truncateToLatestSnapshot): the Raft view is the snapshot
    write_replica(str(tmp_path / "l"), [B(2)] * 20, node_id=1)
    write_replica(str(tmp_path / "f"), [B(1)] * 5, node_id=2, snapshots=[(12, 2)])
    code, doc = state_json(cli, tmp_path / "l", tmp_path / "f")
    assert code == 1
    f = doc["replicas"][1]
    assert f["last_epoch"] == 2 and any("Kafka drops the log at start-up" in p for p in f["problems"])
    assert doc["comparison"]["followers"][0]["kind"] == "none"  # it fetches on from offset 12 in epoch 2
    code, out, err = cli("truncate", "-o", "json", tmp_path / "f", "--to-offset", "2")
    assert code == 1 and "nothing to truncate offline" in json.loads(out)["plan"]["refused"]


@needs_shared
@pytest.mark.parametrize(
    "name,problem",
    [
        ("a_flip", "CRC mismatch in the batch at offset"),
        ("b_trunc", "needs"),
        ("c_zeros", "smaller than the minimum record overhead"),
        ("d_gap", None),
        ("e_idx", None),
    ],
)
def test_kafka_corrupted_segments(cli, tmp_path, name, problem):
    pdir = tmp_path / "r" / "__cluster_metadata-0"
    pdir.mkdir(parents=True)
    for f in os.listdir(FIXTURES / "kafka-3.7.0-static" / "corrupt" / name):
        (pdir / f).write_bytes((FIXTURES / "kafka-3.7.0-static" / "corrupt" / name / f).read_bytes())
    code, out, err = cli("state", "-o", "json", tmp_path / "r")
    assert err == "" and code == 1  # missing meta.properties etc. are reported, never a traceback
    probs = json.loads(out)["replicas"][0]["problems"]
    if problem:
        assert any(problem in p and "Kafka truncates the log there at start-up" in p for p in probs), probs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(log=st.binary(max_size=400), qs=st.binary(max_size=60), cp=st.binary(max_size=40), meta=st.binary(max_size=80))
def test_hostile_files_never_crash(cli, tmp_path, log, qs, cp, meta):
    import shutil

    r = tmp_path / "h"
    shutil.rmtree(r, ignore_errors=True)
    pdir = write_replica(str(r), [B(1, 2), B(2, 1)])
    with open(os.path.join(pdir, "00000000000000000000.log"), "ab") as f:
        f.write(log)
    for name, data in (("quorum-state", qs), ("leader-epoch-checkpoint", cp)):
        with open(os.path.join(pdir, name), "wb") as f:
            f.write(data)
    (r / "meta.properties").write_bytes(meta)
    code, out, err = cli("state", "-o", "json", r)
    assert code in (0, 1) and err == "", err
    j = json.loads(out)["replicas"][0]
    assert j["log_end_offset"] >= 3
    # beside a sound replica: the comparison and the committed split never crash either
    g = tmp_path / "g"
    if not g.exists():
        write_replica(str(g), [B(1, 2), B(2, 3)], node_id=2)
    code, out, err = cli("state", "-o", "json", r, g)
    assert code in (0, 1) and err == "", err
    assert len(json.loads(out)["committed"]["replicas"]) == 2
    code, out, err = cli("truncate", "-o", "json", g, "--reference", r, "--reference", g)
    assert code in (0, 1, 2) and "Traceback" not in err and len(err.splitlines()) <= 1, err


def test_different_clusters_and_last_write(cli, tmp_path):
    write_replica(str(tmp_path / "a"), [B(1, 3)], node_id=1)
    write_replica(str(tmp_path / "b"), [B(1, 3)], node_id=2, cluster_id="rTcAzcTXQpG_6c1zYns8Xw")
    code, doc = state_json(cli, tmp_path / "a", tmp_path / "b")
    assert doc["comparison"]["cluster_ids"] == ["XFBpci3ORzK2hz44Gtmrwg", "rTcAzcTXQpG_6c1zYns8Xw"]
    t = doc["replicas"][0]["last_batch_time"]
    assert t["ms"] == 1_700_000_000_000 and t["iso"] == "2023-11-14T22:13:20.000Z" and t["age"].endswith("ago")
    code, out, _ = cli("state", "-o", "text", tmp_path / "a", tmp_path / "b", code=0)
    assert (
        "warning: these replicas belong to different clusters: XFBpci3ORzK2hz44Gtmrwg, rTcAzcTXQpG_6c1zYns8Xw\n" in out
    )
    assert "  last batch written: 2023-11-14T22:13:20.000Z (" in out


def test_freshly_formatted_node(cli, tmp_path):
    code, out, err = cli(
        "bootstrap",
        "format",
        "--node-id",
        "1",
        "--log-dir",
        tmp_path / "c1",
        "-t",
        "rTcAzcTXQpG_6c1zYns8Xw",
        "--initial-controllers",
        "1@localhost:9093:DfqkWOlJTZ-abG8pUGocIA",
        "--apply",
    )
    assert code == 0, err
    code, doc = state_json(cli, tmp_path / "c1")
    j = doc["replicas"][0]
    assert code == 0 and j["problems"] == [] and len(j["notes"]) == 2
    assert (j["log_end_offset"], j["last_epoch"], j["kraft_version"]) == (0, 0, 1)
    assert j["voters"]["voters"] == [
        {"id": 1, "directory_id": "DfqkWOlJTZ-abG8pUGocIA", "endpoints": ["CONTROLLER://localhost:9093"]}
    ]
