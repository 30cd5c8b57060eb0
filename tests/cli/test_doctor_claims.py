"""doctor's findings of issue 27: two log dirs claiming one node id (static and
dynamic real dirs, same or different directory id, diverged histories), the
majority lost, the address a live check failed on, a missing dir counted as
missing. Each fails before the change that brought it."""

from __future__ import annotations

import json
import shlex
import re
import shutil

import pytest

from samples import FIXTURES

from quorumctl.testing import synth
from quorumctl.testing.synth import B

STATIC = FIXTURES / "kafka-3.7.0-static" / "data"
DYN = FIXTURES / "kafka-3.9.0-dynamic" / "data"
needs_fixtures = pytest.mark.shared("reference/fixtures/kafka-3.9.0-dynamic")


def _doctor(cli, *args) -> tuple[int, dict]:
    code, out, err = cli("doctor", *args, "-o", "json")
    assert err == "", err
    doc = json.loads(out)
    return code, {f["code"]: f for f in doc["findings"]}


def _claim(src, dst, node: int, directory_id: str | None = None) -> str:
    """A copy of a real log dir whose meta.properties claims `node` (and a directory id)."""
    shutil.copytree(src, dst)
    meta = dst / "meta.properties"
    text = re.sub(r"^node\.id=.*$", f"node.id={node}", meta.read_text(), flags=re.M)
    if directory_id:
        text = re.sub(r"^directory\.id=.*$", f"directory.id={directory_id}", text, flags=re.M)
    meta.write_text(text)
    return str(dst)


@needs_fixtures
@pytest.mark.parametrize("fixture", [STATIC, DYN], ids=["static", "dynamic"])
def test_two_dirs_claiming_one_node_on_real_dirs(cli, tmp_path, fixture):
    """Node 2's real dir relabelled as node 1 beside node 1's: a different directory id, and a
    history that is a prefix of node 1's or the same (they replicated one log)."""
    other = _claim(fixture / "c2", tmp_path / "c1-restored", 1)
    code, got = _doctor(cli, str(fixture / "c1"), other)
    f = got["node-claimed-twice"]
    assert code == 1 and f["severity"] == "error"
    assert f["message"].startswith(f"{fixture / 'c1'} and {other} both claim node 1 (directory.id ")
    assert re.search(r"(holds a prefix of|are the same)", f["message"]), f["message"]
    assert f["evidence"] == [
        f"{fixture / 'c1' / 'meta.properties'}:{_line(fixture / 'c1', 'node.id')}: node.id=1",
        f"{other}/meta.properties:{_line(tmp_path / 'c1-restored', 'node.id')}: node.id=1",
    ]
    assert "only one dir can be node 1" in f["remedy"]


def _line(d, key) -> int:
    return 1 + next(
        i for i, ln in enumerate((d / "meta.properties").read_text().splitlines()) if ln.startswith(key + "=")
    )


def test_two_dirs_claiming_one_node_with_diverged_histories(cli, tmp_path):
    """Controller 1's dir and a copy that went on as node 1 elsewhere: both start with epochs 1-2,
    then each wrote its own epoch 3 (a clash at offset 8) or only one went on to epoch 4."""
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    synth.write_replica(str(a), [B(1, 5), B(2, 3), B(3, 4, tag="a")], node_id=1, directory_id="AAAAAAAAAAAAAAAAAAAAAQ")
    synth.write_replica(str(b), [B(1, 5), B(2, 3), B(3, 2, tag="b")], node_id=1, directory_id="AAAAAAAAAAAAAAAAAAAAAQ")
    code, got = _doctor(cli, str(a), str(b))
    f = got["node-claimed-twice"]
    assert f["message"] == (
        f"{a} and {b} both claim node 1 (the same directory.id AAAAAAAAAAAAAAAAAAAAAQ): their "
        f"histories differ from offset 8: both hold a batch of epoch 3 there, different ones "
        f"({a} ends at offset 12 in epoch 3, {b} ends at offset 10 in epoch 3)"
    )
    synth.write_replica(
        str(c), [B(1, 5), B(2, 2, tag="c"), B(4, 2, tag="c")], node_id=1, directory_id="AAAAAAAAAAAAAAAAAAAAAg"
    )
    code, got = _doctor(cli, str(a), str(c))
    f = got["node-claimed-twice"]
    assert f["message"].startswith(
        f"{a} and {c} both claim node 1 (directory.id AAAAAAAAAAAAAAAAAAAAAQ and "
        f"AAAAAAAAAAAAAAAAAAAAAg): their histories differ from offset "
    )
    # one node id in one dir each is no finding
    code, got = _doctor(cli, str(a))
    assert "node-claimed-twice" not in got


def test_a_missing_dir_is_not_counted_as_read(cli, tmp_path):
    conf = tmp_path / "c.properties"
    conf.write_text(
        "node.id=1\nprocess.roles=controller\ncontroller.quorum.voters=1@127.0.0.1:1\n"
        "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:1\n"
        f"log.dirs={tmp_path / 'gone'}\n"
    )
    code, out, err = cli("doctor", "-c", str(conf), "-o", "text")
    assert code == 1
    assert out.splitlines()[0] == "Read 1 config(s), 0 log dir(s) (1 missing); no dynamic voter set"
    assert out.splitlines()[1] == f"ERROR log-dir-missing: {tmp_path / 'gone'} does not exist"


def _sim(silent: tuple[int, ...]):
    from quorumctl.testing.sim import SimulatedCluster, replica

    voters = [replica(i, 500, 1_700_000_000_000, 1_700_000_000_000, None) for i in (1, 2, 3)]
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw", leader_id=1, leader_epoch=5, high_watermark=490, voters=voters, dynamic=False
    )
    c.add_nodes(brokers=())
    c.start()
    c.advertise_controllers()
    for i in silent:
        c.silence(i)
    return c


def _static_conf(tmp_path, c) -> str:
    voters = ",".join(f"{e.node_id}@{e.address}" for e in c.controllers())
    conf = tmp_path / "c3.properties"
    conf.write_text(
        f"node.id=3\nprocess.roles=controller\ncontroller.quorum.voters={voters}\n"
        "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:1\n"
        f"log.dirs={tmp_path / 'c3'}\n"
    )
    synth.write_replica(str(tmp_path / "c3"), [B(1, 5)], node_id=3)
    return str(conf)


def test_live_unreachable_names_the_address_that_failed_and_the_majority_lost(cli, tmp_path):
    c = _sim(silent=(1, 2))  # the leader (1) and 2 accept and never answer; 3 answers
    try:
        conf = _static_conf(tmp_path, c)
        boot, leader = c.node_by_id(3).address, c.node_by_id(1).address
        code, got = _doctor(cli, "-c", conf, "--bootstrap-controller", boot, "--timeout", "1.5")
    finally:
        c.stop()
    f = got["live-unreachable"]
    assert f["message"].startswith(f"{boot} answered, but the active controller it named, {leader}, did not: ")
    assert f["evidence"][0] == f"{boot}: answered (DescribeCluster named {leader})"
    assert f["evidence"][1].startswith(f"{leader}: ")
    m = got["majority-lost"]
    assert m["message"] == (
        "majority lost: 1 of 3 voters answer (3); the quorum needs 2 to elect a leader, so the metadata log cannot move"
    )
    assert [e.split(": ")[0] for e in m["evidence"]] == [
        f"controller 1 ({leader})",
        f"controller 2 ({c.node_by_id(2).address})",
        f"controller 3 ({boot})",
    ]
    # recover's command, with the surviving voter's config (a static quorum's voters are there)
    printed = f"quorumctl recover -c {conf} --lost-voters 1,2"
    assert m["remedy"].endswith(f"see `quorumctl recover` (docs/recovery.md): {printed}"), m["remedy"]
    # as printed: a dry run that plans the recovery (every voter stopped now: the lost ones are silent)
    code, out, err = cli(*shlex.split(printed)[1:])
    assert (code, err) == (0, "") and ", static quorum, dry run\n" in out, out + err
    assert "voters: [1, 2, 3] -> [3] (lost: [1, 2])" in out and "Run again with --apply" in out


def test_no_majority_lost_when_a_majority_answers(cli, tmp_path):
    c = _sim(silent=(1,))
    try:
        conf = _static_conf(tmp_path, c)
        code, got = _doctor(cli, "-c", conf, "--bootstrap-controller", c.node_by_id(2).address, "--timeout", "1.5")
    finally:
        c.stop()
    assert "live-unreachable" in got and "majority-lost" not in got
