"""`migrate-quorum` on real static quorums (issue 38 §3), and Kafka 4.3's documented
add-controller / remove-controller command lines on the result (issue 36):

- a static 4.1 quorum (3 controllers + 1 broker, formatted at 4.1-IV1) rolled to
  4.3 node by node, then migrated: the preflight (live through a broker and a
  controller, and offline from copies of the controllers' log dirs and the
  configs), `configs` refused before the upgrade, the upgrade's dry run (Kafka's
  verdict, nothing changed) and --apply (kraft.version 1, every voter with the
  directory id of its meta.properties), the config plan, and a roll per node
  with `configs --verify` naming the next one; then a fifth node, a new
  controller, added and removed twice with docs/kafka-command-lines.md's
  `dynamic` rows (Kafka's lines, tool name replaced), Kafka 4.3's own
  `describe --status` showing each voter set;
- the same migration on a static 4.3 quorum of 1 controller + 1 broker.

A roll is what an operator does: the node's properties changed, the node
restarted. The cluster script writes each node's properties from its layout
at start-node, so the layout's quorum mode is switched to dynamic once (after
the upgrade), and each node picks the new setting up when it is rolled.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from command_lines import doc_rows
from kafka41 import KAFKA43_HOME, home_of, kafka_quorum, needs_kafka, start_cluster, until

pytestmark = [needs_kafka, pytest.mark.kafka("4.3")]


def doc(cli, *args: str, code: int) -> dict:
    r = cli(*args, "-o", "json")
    assert r.code == code and r.err == "", (args, r.code, r.out, r.err)
    return json.loads(r.out)


def statuses(d: dict) -> list[tuple[str, str, int | None]]:
    return [(c["check"], c["status"], c["node"]) for c in d["checks"]]


def meta_dir_id(c, node: int) -> str:
    text = (c.data(node) / "meta.properties").read_text()
    return re.search(r"^directory\.id=(\S+)$", text, re.M).group(1)


def kafka_voters(tmp: Path, c) -> list[dict]:
    out = kafka_quorum(tmp, ["--bootstrap-controller", c.controllers[0]], "--status", home=KAFKA43_HOME)
    line = next(ln for ln in out.splitlines() if ln.startswith("CurrentVoters:"))
    return json.loads(line.split(":", 1)[1])


def set_layout_mode(c, mode: str) -> None:
    env = c.d / "cluster.env"
    env.write_text(re.sub(r"^MODE=\w+$", f"MODE={mode}", env.read_text(), flags=re.M))


def roll(c, node: int, home: Path | None = None) -> None:
    """Stop a node and start it again (from `home`, a rolling upgrade). Once, on CI, the node's own
    port was still taken when it started again ("Address already in use": another test's cluster
    picks free ports from the same range): one more start, as an operator would."""
    c.run("kill-node", str(node))
    for attempt in (1, 2):
        r = c.run("start-node", str(node), "--timeout", "300", timeout=400, home=home, check=attempt == 2)
        if r.returncode == 0:
            return
        time.sleep(5)


def preflight_ready(cli, c, tmp: Path) -> None:
    """The preflight of a static quorum whose nodes all run Kafka 4.1+: ready, live and offline."""
    ctl = ["--bootstrap-controller", ",".join(c.controllers)]
    for way in (["--bootstrap-server", c.broker], ctl):
        # ready once every voter is caught up (health's rule: a starved machine may lag a moment)
        d = until(
            "preflight ready",
            lambda: (r := cli("migrate-quorum", "preflight", *way, "-o", "json")).code == 0 and json.loads(r.out),
            120,
        )
        assert (d["verdict"], d["kraftVersion"], d["ok"]) == ("ready", 0, True), d
        assert d["kafkaVerdict"] == "kraft.version can be upgraded to 1.", d
        assert sorted(d["voters"]) == [str(i) for i in range(1, c.n + 1)]
        assert all(s in ("ok", "unknown") for _, s, _ in statuses(d)), d["checks"]
        ctl_checks = [(n, s) for k, s, n in statuses(d) if k == "software" and n <= c.n]
        assert ctl_checks == [(i, "ok") for i in range(1, c.n + 1)], d["checks"]
        # every node runs controller.quorum.voters, read from the node itself (DescribeConfigs)
        running = {(n["kind"], n["id"]): n["config"]["state"] for n in d["nodes"] if n["config"]}
        assert running.get(("controller", 1)) == "static", d["nodes"]
        assert d["next"].startswith("quorumctl migrate-quorum upgrade"), d
    # offline: copies of the controllers' log dirs (a running node holds its lock) and the configs
    dirs = []
    for i in range(1, c.n + 1):
        dst = tmp / f"c{i}-copy"
        shutil.copytree(c.data(i), dst, ignore=shutil.ignore_patterns(".lock"))
        dirs.append(str(dst))
    confs = [x for i in [*range(1, c.n + 1), *c.brokers] for x in ("-c", str(c.conf(i)))]
    d = doc(cli, "migrate-quorum", "preflight", *dirs, *confs, code=0)
    assert (d["mode"], d["verdict"], d["kraftVersion"]) == ("offline", "ready", 0), d
    dids = {n["id"]: n["metaDirectoryId"] for n in d["nodes"] if n["kind"] == "controller"}
    assert dids == {i: meta_dir_id(c, i) for i in range(1, c.n + 1)}, d["nodes"]
    assert ("software", "ok", 1) in statuses(d) and ("directory id", "ok", 1) in statuses(d), d["checks"]


def migrate(cli, c, tmp: Path) -> None:
    """upgrade (dry run, apply, verified), configs (refused before, planned after), a roll
    per node with --verify after each; ends with every node on bootstrap servers."""
    bs = ["--bootstrap-server", c.broker]
    ctl = ["--bootstrap-controller", ",".join(c.controllers)]
    r = cli("migrate-quorum", "configs", *ctl)
    assert (r.code, r.out) == (1, "") and r.err.startswith(
        "quorumctl: error: kraft.version is 0: run `quorumctl migrate-quorum upgrade --apply` first."
    ), r.err

    d = doc(cli, "migrate-quorum", "upgrade", *bs, code=0)
    assert (d["dryRun"], d["applied"], d["kafkaVerdict"]) == (True, None, "kraft.version can be upgraded to 1."), d
    text = cli("migrate-quorum", "upgrade", *bs, "-o", "text", code=0).out
    assert text.endswith(
        "kraft.version can be upgraded to 1.\n"
        "Dry run: nothing was changed. Run again with --apply to upgrade kraft.version to 1.\n"
    ), text
    assert doc(cli, "migrate-quorum", "preflight", *ctl, code=0)["kraftVersion"] == 0  # nothing changed

    d = doc(cli, "migrate-quorum", "upgrade", *ctl, "--apply", code=0)
    assert d["applied"] == {"ok": True, "line": "kraft.version was upgraded to 1."}, d
    after = d["after"]
    assert after["kraftVersion"] == 1 and all(ch["status"] == "ok" for ch in after["checks"]), after
    voters = {n["id"]: n["directoryId"] for n in after["nodes"] if n["voter"]}
    assert voters == {i: meta_dir_id(c, i) for i in range(1, c.n + 1)}, after["nodes"]
    assert {v["id"]: v["directoryId"] for v in kafka_voters(tmp, c)} == voters
    assert doc(cli, "migrate-quorum", "upgrade", *ctl, code=0)["verdict"] == "dynamic"  # once only

    d = doc(cli, "migrate-quorum", "configs", *bs, code=0)
    value = ",".join(c.controllers)
    assert d["bootstrapServers"] == value
    leader = d["leader"]
    order = (
        [("controller", i) for i in range(1, c.n + 1) if i != leader]
        + [("controller", leader)]
        + [("broker", b) for b in c.brokers]
    )
    assert [(s["kind"], s["id"]) for s in d["plan"]] == order, d["plan"]
    voters_line = "controller.quorum.voters=" + ",".join(f"{i}@{a}" for i, a in enumerate(c.controllers, 1))
    for s in d["plan"]:
        assert (s["state"], s["done"], s["remove"], s["add"]) == (
            "static",
            False,
            voters_line,
            f"controller.quorum.bootstrap.servers={value}",
        ), s

    set_layout_mode(c, "dynamic")
    todo = set(order)

    def verified():
        r = cli("migrate-quorum", "configs", *bs, "--verify", "-o", "json")
        return json.loads(r.out) if r.code == 0 else None

    # follow --verify's word, as an operator does: it names the next node until none is left
    # (the leader may change under load: the order is the plan's, recomputed each time)
    while todo:
        v = until("configs --verify passes", verified, 120)["verify"]
        assert not v["done"] and v["next"] is not None, v
        nxt = (v["next"]["kind"], v["next"]["id"])
        assert nxt in todo and {(n["kind"], n["id"]) for n in v["pending"]} == todo, (v, todo)
        assert nxt[0] == "controller" or not any(k == "controller" for k, _ in todo), "controllers first"
        roll(c, nxt[1])
        todo.discard(nxt)
        rolled = {(n["kind"], n["id"]): n["config"] for n in until("back", verified, 120)["nodes"]}[nxt]
        assert rolled["state"] == "dynamic" and rolled["controller.quorum.bootstrap.servers"] == value, rolled
    v = until("configs --verify passes", verified, 120)["verify"]
    assert v["done"] and v["next"] is None and v["pending"] == [] and v["unknown"] == [], v
    text = cli("migrate-quorum", "configs", *bs, "--verify", "-o", "text", code=0).out
    assert text.endswith(
        "Verdict: the migration is complete: every node runs controller.quorum.bootstrap.servers.\n"
    ), text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_controller(cli, c, nid: int) -> tuple[Path, subprocess.Popen]:
    """A controller that is not in the quorum yet, formatted --no-initial-controllers, started."""
    port, name = free_port(), f"c{nid}"
    conf = c.d / "conf" / f"{name}.properties"
    conf.write_text(
        f"node.id={nid}\nprocess.roles=controller\n"
        f"controller.quorum.bootstrap.servers={','.join(c.controllers)}\n"
        "controller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
        f"listeners=CONTROLLER://127.0.0.1:{port}\nadvertised.listeners=CONTROLLER://127.0.0.1:{port}\n"
        f"log.dirs={c.d / 'data' / name}\nnum.network.threads=2\nnum.io.threads=2\n"
    )
    cli("bootstrap", "format", "-c", str(conf), "-t", c.cluster_id, "--no-initial-controllers", "--apply", code=0)
    log4j = c.d / "conf" / f"{name}.log4j2.yaml"
    log4j.write_text((c.d / "conf" / "c1.log4j2.yaml").read_text().replace("c1.log", f"{name}.log"))
    env = c.env(KAFKA43_HOME)
    env.update(
        LOG_DIR=str(c.d / "logs"),
        EXTRA_ARGS=f"-name {name} -loggc",
        KAFKA_LOG4J_OPTS=f"-Dlog4j2.configurationFile={log4j}",
    )
    with open(c.d / "logs" / f"{name}.out", "ab") as out:
        p = subprocess.Popen(
            [str(KAFKA43_HOME / "bin" / "kafka-server-start.sh"), str(conf)],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    log = c.d / "logs" / f"{name}.log"

    def started() -> bool:
        assert p.poll() is None, f"controller {nid} exited: {log.read_text()[-3000:] if log.exists() else ''}"
        return log.exists() and "Kafka Server started" in log.read_text()

    until(f"controller {nid} started", started, 300)
    return conf, p


def add_and_remove_with_kafkas_lines(cli, c, tmp: Path) -> None:
    """docs/kafka-command-lines.md's `dynamic` rows, in order: add through a broker, remove
    through a broker, add through a controller, remove through a controller."""
    nid = 5
    conf, p = new_controller(cli, c, nid)
    try:
        did = (c.d / "data" / f"c{nid}" / "meta.properties").read_text()
        did = re.search(r"^directory\.id=(\S+)$", did, re.M).group(1)
        rows = doc_rows("dynamic")
        assert [("add-controller" in r["kafka"], "--bootstrap-server" in r["kafka"]) for r in rows] == [
            (True, True),
            (False, True),
            (True, False),
            (False, False),
        ], rows
        subst = {
            "localhost:9092": c.broker,
            "localhost:9093": c.controllers[0],
            "config/controller.properties": str(conf),
            "<id>": str(nid),
            "<directory-id>": did,
        }
        for r in rows:
            line = r["quorumctl"]
            for k, v in subst.items():
                line = line.replace(k, v)
            args = shlex.split(line)[1:]
            adding = "add-controller" in args

            def ran():
                code, out, err = cli(*args)
                if code == 0:
                    return out
                # a new controller is refused until it has caught up as an observer
                assert adding and code == 1, (line, code, out, err)
                return None

            out = until(line, ran, 120)
            assert out.startswith(
                ("Added controller 5" if adding else "Removed KRaft controller 5") + f" with directory id {did}"
            ), out
            assert r["exit"] == 0
            want = {1, 2, 3, 5} if adding else {1, 2, 3}
            until(f"the voters after {line}", lambda: {v["id"] for v in kafka_voters(tmp, c)} == want, 60)
    finally:
        p.kill()
        p.wait(30)


def test_static_41_rolled_to_43_then_migrated(cli, tmp_path_factory, tmp_path):
    home_of("4.3")
    c = start_cluster(cli, tmp_path_factory, "migrate-41", dynamic=False, version="4.1", start_timeout=300)
    try:
        for node in range(1, c.n + 2):  # controllers, then the broker
            roll(c, node, KAFKA43_HOME)
        c.home = KAFKA43_HOME
        preflight_ready(cli, c, tmp_path)
        migrate(cli, c, tmp_path)
        add_and_remove_with_kafkas_lines(cli, c, tmp_path)
    finally:
        c.discard()


def test_static_43_migrated(cli, tmp_path_factory, tmp_path):
    home_of("4.3")
    c = start_cluster(
        cli, tmp_path_factory, "migrate-43", dynamic=False, version="4.3", controllers=1, start_timeout=300
    )
    try:
        preflight_ready(cli, c, tmp_path)
        migrate(cli, c, tmp_path)
    finally:
        c.discard()
