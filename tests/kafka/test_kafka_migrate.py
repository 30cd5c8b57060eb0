"""`migrate-quorum` on real static quorums (issue 38 §3), then add-controller and
remove-controller on the result (issue 36):

- a static 4.1 quorum (3 controllers + 1 broker, formatted at 4.1-IV1) rolled to
  4.3 node by node; `features upgrade --release-version 4.3`'s dry run (it asks
  for kraft.version 1 too), then metadata.version alone upgraded to 4.3-IV0, as
  docs/migration.md says; then migrated: the preflight (live through a broker
  and a controller, and offline from copies of the controllers' log dirs and
  the configs), `configs` refused before the upgrade, the upgrade's dry run
  (Kafka's verdict, nothing changed) and --apply (kraft.version 1, every voter
  with the directory id of its meta.properties), the config plan, and a roll per
  node with `configs --verify` naming the next one; at the end the remaining
  features with `--release-version 4.3 --apply`;
- the same migration on a static 4.3 quorum of 1 controller + 1 broker.

On both, once migrated, a fifth node, a new controller, is added and removed
twice with docs/kafka-command-lines.md's `dynamic` rows (Kafka's lines, tool
name replaced), then with quorumctl's own add-controller and remove-controller
(their dry runs first); after each step quorumctl's `describe --status` is
Kafka 4.3's, and its voters are the quorum's controllers with their directory ids.

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
from kafka41 import (
    KAFKA43_HOME,
    home_of,
    kafka_quorum,
    mask_status,
    needs_kafka,
    ours,
    start_cluster,
    until,
    upgrade_check,
)

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


def status_voters(text: str) -> dict[int, str]:
    """describe --status's CurrentVoters: id -> directory id."""
    line = next(ln for ln in text.splitlines() if ln.startswith("CurrentVoters:"))
    return {v["id"]: v["directoryId"] for v in json.loads(line.split(":", 1)[1])}


def kafka_voters(tmp: Path, c) -> dict[int, str]:
    return status_voters(kafka_quorum(tmp, ["--bootstrap-controller", c.controllers[0]], "--status", home=KAFKA43_HOME))


def quorum_is(cli, c, tmp: Path, want: dict[int, str], what: str) -> None:
    """The voters are `want` (id -> directory id) in quorumctl's describe --status, whose
    text is kafka-metadata-quorum 4.3's (the numbers that move between two calls masked)."""
    via = ["--bootstrap-controller", c.controllers[0]]
    until(f"the voters after {what}", lambda: status_voters(ours(cli, via, "status")) == want, 120)
    for attempt in (1, 2, 3):  # a leader or observer change between the two calls: ask both again
        mine = ours(cli, via, "status")
        theirs = kafka_quorum(tmp, via, "--status", home=KAFKA43_HOME)
        if mask_status(mine) == mask_status(theirs):
            break
    assert mask_status(mine) == mask_status(theirs), (what, mine, theirs)
    assert status_voters(theirs) == want, (what, theirs)


def set_layout_mode(c, mode: str) -> None:
    env = c.d / "cluster.env"
    env.write_text(re.sub(r"^MODE=\w+$", f"MODE={mode}", env.read_text(), flags=re.M))


def roll(c, node: int, home: Path | None = None) -> None:
    """Stop a node and start it again (from `home`, a rolling upgrade). Once, on CI, the node's own
    port was still taken when it started again ("Address already in use": another test's cluster
    picks free ports from the same range): one more start, as an operator would."""
    c.run("kill-node", str(node))
    for attempt in (1, 2):
        r = c.start_node(node, 300, home=home, check=attempt == 2)
        if r.returncode == 0:
            return
        time.sleep(5)


def preflight_ready(cli, c, tmp: Path, mv: str) -> None:
    """The preflight of a static quorum whose nodes all run Kafka 4.1+, at metadata.version
    `mv`: ready, live and offline."""
    ctl = ["--bootstrap-controller", ",".join(c.controllers)]
    for way in (["--bootstrap-server", c.broker], ctl):
        # ready once every voter is caught up (health's rule: a starved machine may lag a moment)
        # and the node asked has applied the last metadata.version
        d = until(
            "preflight ready",
            lambda: (
                (r := cli("migrate-quorum", "preflight", *way, "-o", "json")).code == 0
                and json.loads(r.out)["metadataVersionName"] == mv
                and json.loads(r.out)
            ),
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
    assert (d["mode"], d["verdict"], d["kraftVersion"], d["metadataVersionName"]) == ("offline", "ready", 0, mv), d
    dids = {n["id"]: n["metaDirectoryId"] for n in d["nodes"] if n["kind"] == "controller"}
    assert dids == {i: meta_dir_id(c, i) for i in range(1, c.n + 1)}, d["nodes"]
    assert ("software", "ok", 1) in statuses(d) and ("directory id", "ok", 1) in statuses(d), d["checks"]


def migrate(cli, c, tmp: Path) -> dict[int, str]:
    """upgrade (dry run, apply, verified), configs (refused before, planned after), a roll
    per node with --verify after each; ends with every node on bootstrap servers. Returns
    the voters (id -> directory id)."""
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
    pre = doc(cli, "migrate-quorum", "preflight", *ctl, code=0)
    assert pre["kraftVersion"] == 0  # nothing changed

    # the preflight's next step, run as printed: a whole command line, --apply included
    printed = shlex.split(pre["next"])
    assert printed[:3] == ["quorumctl", "migrate-quorum", "upgrade"] and printed[-1] == "--apply", pre["next"]
    d = doc(cli, *printed[1:], code=0)
    assert d["applied"] == {"ok": True, "line": "kraft.version was upgraded to 1."}, d
    after = d["after"]
    assert after["kraftVersion"] == 1 and all(ch["status"] == "ok" for ch in after["checks"]), after
    voters = {n["id"]: n["directoryId"] for n in after["nodes"] if n["voter"]}
    assert voters == {i: meta_dir_id(c, i) for i in range(1, c.n + 1)}, after["nodes"]
    assert kafka_voters(tmp, c) == voters
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
    return voters


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


def add_and_remove(cli, c, tmp: Path, voters: dict[int, str]) -> None:
    """A new controller added to the migrated quorum whose voters are `voters` (id ->
    directory id), and removed: with docs/kafka-command-lines.md's `dynamic` rows in
    order (Kafka's lines, tool name replaced: add through a broker, remove through a
    broker, add through a controller, remove through a controller), then with
    quorumctl's own add-controller and remove-controller (a dry run first). After each
    step, quorum_is: every controller in the quorum a voter with its directory id."""
    nid = 5
    assert nid not in voters and nid not in c.brokers
    conf, p = new_controller(cli, c, nid)
    try:
        did = (c.d / "data" / f"c{nid}" / "meta.properties").read_text()
        did = re.search(r"^directory\.id=(\S+)$", did, re.M).group(1)
        endpoint = re.search(r"^advertised\.listeners=(\S+)$", conf.read_text(), re.M).group(1)
        rows = doc_rows("dynamic")
        assert [("add-controller" in r["kafka"], "--bootstrap-server" in r["kafka"]) for r in rows] == [
            (True, True),
            (False, True),
            (True, False),
            (False, False),
        ], rows
        assert all(r["exit"] == 0 for r in rows), rows
        subst = {
            "localhost:9092": c.broker,
            "localhost:9093": c.controllers[0],
            "config/controller.properties": str(conf),
            "<id>": str(nid),
            "<directory-id>": did,
        }
        lines = []
        for r in rows:
            line = r["quorumctl"]
            for k, v in subst.items():
                line = line.replace(k, v)
            lines.append(shlex.split(line)[1:])
        ctl = ["--bootstrap-controller", c.controllers[0]]
        own = [
            ["add-controller", *ctl, "--command-config", str(conf)],
            ["remove-controller", "--bootstrap-server", c.broker, "-i", str(nid), "-d", did],
        ]
        added = f"controller {nid} with directory id {did}"
        for args in [*lines, *own]:
            adding = "add-controller" in args
            if args in own:  # quorumctl's own lines: their dry run first, which changes nothing
                dry = cli(*args, "--dry-run", code=0).out
                if adding:
                    assert dry.startswith(f"DRY RUN of adding {added} and endpoints: {endpoint}\n"), dry
                    listed = re.search(rf"^  checked: node id {nid} is not a voter \(voters ([\d, ]+)\)$", dry, re.M)
                    assert listed and sorted(map(int, listed[1].split(", "))) == sorted(voters), dry
                    ours_voters = status_voters(ours(cli, ctl, "status"))
                    assert ours_voters == voters, ("add-controller --dry-run changed nothing", ours_voters)
                else:
                    assert dry == f"DRY RUN of removing KRaft {added}\n", dry

            def ran():
                code, out, err = cli(*args)
                if code == 0:
                    return out
                # a new controller is refused until it has caught up as an observer
                assert adding and code == 1, (args, code, out, err)
                return None

            out = until(shlex.join(args), ran, 120)
            assert out.startswith(f"Added {added} and endpoints: {endpoint}" if adding else f"Removed KRaft {added}"), (
                out
            )
            quorum_is(cli, c, tmp, {**voters, nid: did} if adding else voters, shlex.join(args))
    finally:
        p.kill()
        p.wait(30)


# `features upgrade --release-version 4.3`'s verdict (Kafka's lines, in name order) on a cluster
# formatted at 4.1-IV1 and rolled to 4.3
RELEASE_43_LINES = (
    "eligible.leader.replicas.version can be upgraded to 1.",
    "group.version can be upgraded to 1.",
    "kraft.version can be upgraded to 1.",
    "metadata.version can be upgraded to 30.",
    "share.version can be upgraded to 1.",
    "streams.version can be upgraded to 1.",
    "transaction.version can be upgraded to 2.",
)


def test_static_41_rolled_to_43_then_migrated(cli, tmp_path_factory, tmp_path):
    home_of("4.3")
    c = start_cluster(cli, tmp_path_factory, "migrate-41", dynamic=False, version="4.1", start_timeout=300)
    try:
        for node in range(1, c.n + 2):  # controllers, then the broker
            roll(c, node, KAFKA43_HOME)
        c.home = KAFKA43_HOME
        finalize = ["--release-version", "4.3", "--bootstrap-server", c.broker]
        code, d = upgrade_check(cli, *finalize)
        # what an operator runs after a roll also asks for kraft.version 1 (its default from
        # 3.9-IV0 on): the migration's step 2, without its checks; docs/migration.md says so
        assert code == 0 and d["verdict"]["lines"] == [*RELEASE_43_LINES], d
        # so metadata.version alone first, as docs/migration.md says; the rest after the migration
        code, d = upgrade_check(cli, "--metadata", "4.3-IV0", "--bootstrap-server", c.broker, "--apply")
        assert code == 0 and d["applied"]["lines"] == ["metadata.version was upgraded to 30."], d
        preflight_ready(cli, c, tmp_path, "4.3-IV0")
        add_and_remove(cli, c, tmp_path, migrate(cli, c, tmp_path))
        code, d = upgrade_check(cli, *finalize, "--apply")
        assert code == 0 and d["applied"]["lines"] == [ln.replace("can be", "was") for ln in RELEASE_43_LINES], d
    finally:
        c.discard()


def test_static_43_migrated(cli, tmp_path_factory, tmp_path):
    home_of("4.3")
    c = start_cluster(
        cli, tmp_path_factory, "migrate-43", dynamic=False, version="4.3", controllers=1, start_timeout=300
    )
    try:
        preflight_ready(cli, c, tmp_path, "4.3-IV0")
        add_and_remove(cli, c, tmp_path, migrate(cli, c, tmp_path))
    finally:
        c.discard()
