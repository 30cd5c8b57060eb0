"""Kafka 4.4 (the 4.4 branch build in ../shared/kafka, 87943b2f), for real.

Directories formatted by 4.4's own kafka-storage in the test (never committed):
a static controller, a --standalone controller at 4.4-IV2 (unstable levels on),
a controller of three --initial-controllers and a broker. quorumctl reads them as
4.4 does: dump-log equals 4.4's kafka-dump-log byte for byte, the image equals
4.4's metadata shell field by field, verify is clean, state finds the voters in
the zero snapshot, bootstrap info and doctor say only Kafka 4.4 or newer starts
them (and doctor finds nothing wrong).

4.4 starts on what `bootstrap format --kafka-version 4.4` writes: a single
controller, static and --standalone.

Then one real 4.4 cluster (3 controllers + 1 broker, a dynamic quorum quorumctl
formatted the 4.4 way at 4.4-IV1, unstable levels enabled), upgraded to 4.4-IV2,
where `cluster unregister-controller` refuses each unsafe case with exactly its
reason (below 4.4-IV2, also for `remove-controller --unregister`; a stopped
voter; a running and a frozen observer), doctor names the ghost registration of
a removed, stopped controller with the remedy the level allows, and
`cluster clear-registration --apply` removes it (the image and 4.4's
kafka-cluster.sh list-endpoints agree). Once stopped: dump-log of the
controller's log (UNREGISTER_CONTROLLER_RECORD in it) equals 4.4's
kafka-dump-log, verify is clean, the image equals 4.4's metadata shell field by
field (registrations, a topic and its config, features), history gives
metadata.version 32 from the zero snapshot and 33 at the upgrade's offset, and
truncate and recover read the cluster's 4.4-formatted dirs.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from quorumctl.diagnose.registrations import STALE_CONTROLLER_REMEDY, UNREGISTER_REMEDY
from quorumctl.logdir.statefiles import read_meta_properties

from kafka41 import KAFKA44_HOME, kafka_tool, skip_reason, start_cluster, storage_runs, until
from metadata_shell import assert_image_equals_shell, tree, value

REASON = skip_reason(KAFKA44_HOME)
pytestmark = [pytest.mark.kafka("4.4"), pytest.mark.skipif(REASON is not None, reason=REASON or "")]

SNAP = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
EXPECTED_MV = {"static": "4.3-IV0", "standalone": "4.4-IV2", "initial": "4.3-IV0"}  # 4.4's default, or asked
DID = ("DfqkWOlJTZ-abG8pUGocIA", "4BuDMaJKttH3vcqDCog2og", "hs4DEpIdQDSZsfcZz0cW3A")


def k44(tool: str, args: list, tmp: Path, ok: bool = True, timeout: float = 300):
    p = kafka_tool(tool, [str(a) for a in args], tmp, timeout=timeout, home=KAFKA44_HOME)
    if ok:
        assert p.returncode == 0, f"{tool} {args}: {p.stdout[-1000:]}{p.stderr[-2000:]}"
    return p


# -- directories 4.4's kafka-storage formatted ----------------------------------------------

CASES = {  # name -> (config lines, kafka-storage arguments)
    "static": (
        "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:29601\n"
        "listeners=CONTROLLER://127.0.0.1:29601\n",
        [],
    ),
    "standalone": (
        "process.roles=controller\nnode.id=1\ncontroller.quorum.bootstrap.servers=127.0.0.1:29601\n"
        "listeners=CONTROLLER://127.0.0.1:29601\nunstable.feature.versions.enable=true\n",
        ["--standalone", "--release-version", "4.4-IV2"],
    ),
    "initial": (
        "process.roles=controller\nnode.id=1\ncontroller.quorum.bootstrap.servers=127.0.0.1:29601\n"
        "listeners=CONTROLLER://127.0.0.1:29601\n",
        ["--initial-controllers", ",".join(f"{i}@127.0.0.1:{29600 + i}:{d}" for i, d in enumerate(DID, 1))],
    ),
    "broker": (
        "process.roles=broker\nnode.id=4\ncontroller.quorum.bootstrap.servers=127.0.0.1:29601\n"
        "listeners=PLAINTEXT://127.0.0.1:29604\n",
        ["--no-initial-controllers"],
    ),
}


@pytest.fixture(scope="module")
def fresh(cli, tmp_path_factory):
    root = tmp_path_factory.mktemp("kafka44-format")
    code, cid, _ = cli("bootstrap", "random-uuid")
    runs = []
    for name, (conf, args) in CASES.items():
        (root / f"{name}.properties").write_text(
            f"{conf}controller.listener.names=CONTROLLER\nlog.dirs={root / name}\n"
        )
        runs.append(["format", "-t", cid.strip(), "-c", str(root / f"{name}.properties"), *args])
    for rc, printed, err in storage_runs(runs, root, home=KAFKA44_HOME):
        assert (rc, err) == (0, ""), err
    return root


def test_the_fresh_dirs_are_44s_layout(fresh):
    files = {n: sorted(str(p.relative_to(fresh / n)) for p in (fresh / n).rglob("*") if p.is_file()) for n in CASES}
    assert files == {
        "static": sorted(["meta.properties", SNAP]),
        "standalone": sorted(["meta.properties", SNAP]),
        "initial": sorted(["meta.properties", SNAP]),
        "broker": ["meta.properties"],
    }


def test_dump_log_equals_kafka_44_on_fresh_dirs(cli, fresh, tmp_path):
    files = ",".join(str(fresh / n / SNAP) for n in ("static", "standalone", "initial"))
    k = k44("kafka-dump-log", ["--cluster-metadata-decoder", "--files", files], tmp_path)
    for extra in ([], ["--kafka-version", "4.4"]):
        code, out, err = cli("dump-log", "-o", "text", *extra, "--cluster-metadata-decoder", "--files", files)
        assert (code, out, err) == (0, k.stdout, k.stderr)
    assert '"name":"metadata.version","featureLevel":33}' in k.stdout
    assert '"name":"share.version","featureLevel":2}' in k.stdout


@pytest.mark.parametrize("name", list(CASES))
def test_verify_state_info_doctor_on_fresh_dirs(cli, fresh, name):
    d = fresh / name
    code, out, err = cli("verify", "-o", "json", str(d))
    assert (code, err) == (0, ""), out
    code, out, err = cli("bootstrap", "info", "-o", "json", "--log-dir", str(d))
    assert (code, err) == (0, "")
    starts = json.loads(out)["directories"][0]["starts_on"]
    assert (starts["min_release"], starts["layout"], starts["needs_unstable"]) == ("4.4", "4.4", name == "standalone")
    code, out, err = cli("bootstrap", "info", "--log-dir", str(d))
    assert code == 0 and f"quorumctl: note: {d} starts on Kafka 4.4 or newer" in err
    code, out, err = cli("doctor", "-c", str(fresh / f"{name}.properties"), "-o", "text")
    assert (code, err) == (0, ""), out
    assert out.splitlines()[1:] == [f"{d} starts on {starts['text']}", "No findings."]
    if name == "broker":
        return
    code, out, err = cli("state", "-o", "json", str(d))
    assert code == 0, err
    rep = json.loads(out)["replicas"][0]
    voters = {"static": None, "standalone": [1], "initial": [1, 2, 3]}[name]
    got = rep.get("voters")
    assert (sorted(v["id"] for v in got["voters"]) if got and got.get("voters") else None) == voters, got


def shell_image(path: Path, tmp: Path, timeout: float = 300) -> dict:
    return tree(k44("kafka-metadata-shell", ["--snapshot", path, "tree", "/image"], tmp, timeout=timeout).stdout)


def zero_snapshot_shell(path: Path, tmp: Path) -> dict:
    """The shell's image of a zero snapshot. It printed /image/features without a metadata.version
    once, at load 9 on 2 cores (as it once printed no controllers, below): asked again while it
    prints none, for up to 300 s; and it once never exited (a CI run at load 5: killed after 300 s;
    a run takes 5-10 s): a run past 90 s is killed and asked again."""

    def complete():
        try:
            t = shell_image(path, tmp, timeout=90)
        except subprocess.TimeoutExpired:
            return None
        f = t.get("features", {})
        return t if "metadataVersion" in f and value(f["metadataVersion"]) != "Optional.empty" else None

    return until("the metadata shell's features", complete, 300, every=0)


@pytest.mark.parametrize("name", ["static", "standalone", "initial"])
def test_image_equals_metadata_shell_44_on_fresh_dirs(cli, fresh, tmp_path, name):
    code, out, err = cli("image", "-o", "json", str(fresh / name))
    assert (code, err) == (0, "")
    img = json.loads(out)["image"]

    shell = zero_snapshot_shell(fresh / name / SNAP, tmp_path)
    assert_image_equals_shell(img, shell)
    assert value(shell["features"]["metadataVersion"]) == f"Optional[{EXPECTED_MV[name]}]"
    # a zero snapshot holds the bootstrap records only: no registration, topic or config
    assert (img["brokers"], img["controllers"], img["topics"], img["configs"]) == ({}, {}, {}, {})


# -- 4.4 starts on quorumctl's own format ------------------------------------------------------


@pytest.mark.parametrize("layout", ["static", "standalone"])
def test_44_starts_on_quorumctls_own_format(cli, tmp_path_factory, layout):
    """One controller (no broker) formatted by `bootstrap format --kafka-version 4.4` (static, or
    --standalone) at 4.4's default level: 4.4 starts on it, leads, and finalizes what was formatted
    (the --initial-controllers layout and a broker's are c44's, below)."""
    c = start_cluster(
        cli,
        tmp_path_factory,
        f"kafka44-{layout}",
        dynamic=layout == "standalone",
        standalone=layout == "standalone",
        controllers=1,
        brokers=0,
        version="4.4",
        format_args=("--kafka-version", "4.4"),
        start_timeout=300,
    )
    try:
        kind = "dynamic metadata voter" if layout == "standalone" else "metadata"
        assert [f for f in c.formatted["c1"].splitlines() if f.startswith("Formatting")] == [
            f"Formatting {kind} directory {c.data(1)} with metadata.version 4.3-IV0."
        ]
        assert c.data(1).joinpath(SNAP).exists() and not c.data(1).joinpath("bootstrap.checkpoint").exists()
        code, out, err = cli("describe", "status", "--bootstrap-controller", c.controllers[0], "-o", "json")
        assert (code, err) == (0, ""), err
        doc = json.loads(out)
        did = read_meta_properties(str(c.data(1) / "meta.properties")).get("directory.id")
        voters = [(v["id"], v["directoryId"]) for v in doc["currentVoters"]]
        assert (doc["clusterId"], doc["leaderId"], voters) == (
            c.cluster_id,
            1,
            [(1, did if layout == "standalone" else None)],
        )
        code, out, err = cli("features", "describe", "--bootstrap-controller", c.controllers[0], "-o", "json")
        assert (code, err) == (0, ""), err
        levels = {f["name"]: f.get("finalizedVersionLevel") for f in json.loads(out)["features"]}
        assert (levels["metadata.version"], levels["kraft.version"]) == (30, 1 if layout == "standalone" else 0)
    finally:
        c.discard()


# -- a real 4.4 cluster: controller unregistration -------------------------------------------


@pytest.fixture(scope="module")
def c44(cli, tmp_path_factory):
    """Formatted by `quorumctl bootstrap format --kafka-version 4.4` at 4.4-IV1 (unstable levels on):
    4.4 starts on what quorumctl writes for it."""
    c = start_cluster(
        cli,
        tmp_path_factory,
        "kafka44-cluster",
        dynamic=True,
        version="4.4",
        release_version="4.4-IV1",
        format_args=("--kafka-version", "4.4"),
        extra_conf="unstable.feature.versions.enable=true",
        start_timeout=400,
    )
    try:
        yield c
    finally:
        c.discard()


def _upgrade(c, tmp, level: str):
    """kafka-features 4.4's upgrade, as an operator runs it. On a loaded machine its request may
    time out (30 s): then the finalized level says whether it happened, else it is asked again."""
    want = 33 if level == "4.4-IV2" else 32
    for attempt in (1, 2, 3):
        p = k44("kafka-features", ["--bootstrap-server", c.broker, "upgrade", "--metadata", level], tmp, ok=False)
        if p.returncode == 0:
            assert p.stdout.endswith(f"metadata.version was upgraded to {want}.\n"), p.stdout
            return
        assert "timed out" in p.stdout + p.stderr and attempt < 3, p.stdout + p.stderr
        q = k44("kafka-features", ["--bootstrap-server", c.broker, "describe"], tmp).stdout
        if re.search(rf"Feature: metadata.version .*FinalizedVersionLevel: {level} ", q):
            return


def _unregister(cli, c, *args):
    return cli(
        "cluster",
        "unregister-controller",
        "--bootstrap-controller",
        ",".join(c.controllers[:2]),
        "--timeout",
        "30",
        *args,
    )


def _endpoints(c, tmp) -> list[int]:
    out = k44("kafka-cluster", ["list-endpoints", "--bootstrap-controller", c.controllers[0]], tmp).stdout
    return sorted(int(ln.split()[0]) for ln in out.splitlines()[1:] if ln.strip())


def _image_controllers(cli, c) -> list[int]:
    code, out, err = cli("image", "-o", "json", str(c.data(1)))
    assert code == 0, err
    return sorted(int(k) for k in json.loads(out)["image"]["controllers"])


# the refusals of unregistering controller 3, each reason in full (regexes: addresses, leader, seconds vary)
REFUSED = "quorumctl: error: refusing to unregister controller 3: "
LEVEL = (
    r"metadata\.version is 4\.4-IV1 \(32\) \(127\.0\.0\.1:\d+'s finalized level\): unregistering a controller "
    r"needs 4\.4-IV2 \(33\) \(KIP-1312\); the controller would refuse it with UNSUPPORTED_VERSION"
)
VOTER = (
    r"controller 3 is a voter \(voters 1, 2, 3, leader \d\): remove it from the voters first \(quorumctl "
    r"remove-controller -i 3 -d DIRECTORY_ID, then stop it\), or use remove-controller --unregister once it is stopped"
)
FETCHES = (
    r"controller 3 still runs: it fetched from the leader as an observer \d+\.\d s ago \(DescribeQuorum\); it would "
    r"register again: stop it first"
)
STOP = "; it would register again: stop it first"


def _refusal(cli, c, *reasons: str):
    """unregister-controller 3 --apply refused with exactly `reasons` (regexes), in order; or None."""
    code, out, err = _unregister(cli, c, "--id", "3", "--apply")
    assert code in (0, 1) and out == "", (code, out, err)
    return err if code == 1 and re.fullmatch(re.escape(REFUSED) + "; ".join(reasons) + "\n", err) else None


def _tails(c, node: int) -> str:
    """The ends of a node's logs, for a failure's message (the cluster's dir goes with the test)."""
    logs = [c.d / "logs" / f"{c.name(node)}.out", c.log(node)]
    return "".join(f"\n--- {p.name}\n" + p.read_text(errors="replace")[-3000:] for p in logs if p.exists())


def _stale(cli, c) -> list[tuple[str, str]]:
    """doctor's stale-controller-registration findings (message, remedy) on the running cluster."""
    code, out, err = cli(
        "doctor",
        "-c",
        str(c.conf(1)),
        "-c",
        str(c.conf(2)),
        "--bootstrap-controller",
        ",".join(c.controllers[:2]),
        "-o",
        "json",
    )
    assert code in (0, 1) and err == "", err
    return [
        (f["message"], f["remedy"]) for f in json.loads(out)["findings"] if f["code"] == "stale-controller-registration"
    ]


def test_unregister_controller_on_a_real_44_cluster(cli, c44, tmp_path):
    c = c44
    # quorumctl formatted it the 4.4 way: no bootstrap.checkpoint, the records in the zero snapshot
    assert [f for f in c.formatted["c1"].splitlines() if f.startswith("Formatting")] == [
        f"Formatting dynamic metadata voter directory {c.data(1)} with metadata.version 4.4-IV1."
    ]
    assert not c.data(1).joinpath("bootstrap.checkpoint").exists()
    # features describe is 4.4's kafka-features describe, 4.4-IV1 and 4.4-IV2 named as it names them
    k = k44("kafka-features", ["--bootstrap-server", c.broker, "describe"], tmp_path).stdout
    code, out, err = cli("features", "describe", "--bootstrap-server", c.broker, "--kafka-version", "4.4", "-o", "text")
    epochless = functools.partial(re.sub, r"Epoch: \d+$", "Epoch: N", flags=re.M)  # the epoch moves on
    assert (code, epochless(out), err) == (0, epochless(k), "")
    assert "SupportedMaxVersion: 4.4-IV2 " in out and "FinalizedVersionLevel: 4.4-IV1 " in out
    # a topic with a config override, for the image compared with the metadata shell below
    k44(
        "kafka-topics",
        ["--bootstrap-server", c.broker, "--create", "--topic", "t44", "--partitions", "2"]
        + ["--replication-factor", "1", "--config", "retention.ms=3600000"],
        tmp_path,
    )
    addr3 = re.escape(c.addr(3))
    # below 4.4-IV2, a voter, running: every reason, nothing sent
    code, out, err = _unregister(cli, c, "--id", "3", "--apply")
    assert code == 1 and out == "", err
    assert re.fullmatch(
        re.escape(REFUSED)
        + "; ".join([LEVEL, VOTER, rf"controller 3 still runs: {addr3} answers as [^;]+"])
        + re.escape(STOP)
        + "\n",
        err,
    ), err
    dir3 = read_meta_properties(str(c.data(3) / "meta.properties"))["directory.id"]
    remove3 = (
        "remove-controller",
        "--bootstrap-controller",
        c.controllers[0],
        "-i",
        "3",
        "-d",
        dir3,
        "--timeout",
        "30",
    )
    # removed from the voters and stopped, at 4.4-IV1: only the level stands in the way, for
    # unregister-controller and remove-controller --unregister alike (nothing sent)
    code, out, err = cli(*remove3)
    assert (code, out) == (0, f"Removed KRaft controller 3 with directory id {dir3}\n"), err
    c.kill(3)
    until("only the level refused (3's last fetch aged)", lambda: _refusal(cli, c, LEVEL), 90, every=2)
    code, out, err = cli(*remove3, "--unregister", "--apply")
    assert code == 1 and out == "" and re.fullmatch(re.escape(REFUSED) + LEVEL + "\n", err), err
    # doctor names the ghost; below 4.4-IV2 its remedy is the re-registration workaround
    ((msg, remedy),) = _stale(cli, c)
    assert msg.startswith(f"controller 3 is registered (listeners CONTROLLER://{c.addr(3)}) but is not a voter"), msg
    # the command names the voters' registered addresses and the highest level their release supports
    via = f"--bootstrap-controller {c.addr(1)},{c.addr(2)}"
    assert remedy == STALE_CONTROLLER_REMEDY.format(id=3, via=via, target="--metadata 4.4-IV2")
    # as printed: Kafka's verdict on 4.4-IV2 (which 3's 4.4 range covers) does not name it: nothing to do
    printed = re.search(r"quorumctl cluster clear-registration 3 \S+ \S+ --metadata \S+", remedy).group(0)
    code, out, err = cli(*shlex.split(printed)[1:], "-o", "json")
    assert (code, err) == (0, ""), out + err
    plan = json.loads(out)
    assert (plan["kind"], plan["method"], plan["target"], plan["cleared"]) == (
        "controller",
        "re-register",
        "4.4-IV2",
        True,
    )
    assert plan["steps"][3]["evidence"] == "Kafka's verdict on metadata.version 4.4-IV2 no longer names controller 3"
    _upgrade(c, tmp_path, "4.4-IV2")
    # a running observer: only that it runs (its fetches, its endpoint's answer)
    p = c.start_node(3)
    if p.returncode != 0 and "must be in the set of voters" in c.log_since_mark(3):
        # seen in 2 of 4 runs: 4.4 (87943b2f) dies restarting a removed controller whose quorum-state
        # says it was a candidate (CandidateState: "Local replica (3, ...) must be in the set of
        # voters"); a non-voter's election state holds no vote the quorum counts: started afresh
        (c.data(3) / "__cluster_metadata-0" / "quorum-state").unlink()
        p = c.start_node(3)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:] + _tails(c, 3)
    answers = rf"controller 3 still runs: {addr3} answers as [^;]+" + re.escape(STOP)
    until("3 refused as a running observer", lambda: _refusal(cli, c, FETCHES, answers), 90, every=2)
    # frozen (SIGSTOP): no fetch for 15 s, but its endpoint accepts and does not answer
    c.freeze(3)
    frozen = (
        rf"controller 3 still runs: {addr3} (a TCP connection is accepted, but no Kafka answer comes|"
        r"no answer within the 3 s timeout)[^;]*" + re.escape(STOP)
    )
    until("3 refused as a frozen observer", lambda: _refusal(cli, c, frozen), 90, every=2)
    # thawed, a voter again, then stopped: only that it is a voter
    c.run("cont-node", "3")
    add = lambda: cli("add-controller", "--bootstrap-controller", c.controllers[0], "--command-config", str(c.conf(3)))  # noqa: E731
    code, out, err = until("3 added back (caught up as an observer)", lambda: (r := add()).code == 0 and r, 90, every=3)
    assert out == f"Added controller 3 with directory id {dir3} and endpoints: CONTROLLER://{c.addr(3)}\n", out
    c.kill(3)
    until("3 refused as a stopped voter", lambda: _refusal(cli, c, VOTER), 60, every=2)
    # removed while stopped: the ghost registration; doctor's remedy is now unregister-controller
    code, out, err = cli(*remove3)
    assert (code, out) == (0, f"Removed KRaft controller 3 with directory id {dir3}\n"), err
    ((msg, remedy),) = _stale(cli, c)
    assert remedy == UNREGISTER_REMEDY.format(id=3, via=via), remedy
    printed = re.search(r"quorumctl cluster clear-registration 3 --bootstrap-controller \S+", remedy).group(0)
    # unregister-controller's dry run plans it (once the leader's last fetch of 3, which it keeps
    # as an observer's when removed, ages past the window); clear-registration --apply sends it
    code, out, err = until(
        "the dry run passing", lambda: (lambda r: r if r.code == 0 else None)(_unregister(cli, c, "--id", "3")), 60
    )
    assert err == "", err
    assert out.splitlines()[-1] == "DRY RUN of unregistering controller 3: run again with --apply to send it"
    assert "checked: controller 3 is registered at " + c.addr(3) in out
    assert _endpoints(c, tmp_path) == [1, 2, 3]
    # the remedy as printed (a dry run), then with --apply
    code, out, err = cli(*shlex.split(printed)[1:])
    assert (code, err) == (0, "") and out.splitlines()[-1] == (
        "DRY RUN of clearing node 3's registration: run again with --apply to send it"
    ), out + err
    assert _endpoints(c, tmp_path) == [1, 2, 3]
    code, out, err = cli(*shlex.split(printed)[1:], "-o", "json", "--apply")
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    assert (doc["kind"], doc["method"], doc["applied"], doc["cleared"]) == (
        "controller",
        "unregister-controller",
        True,
        True,
    )
    assert [(s["who"], s["state"]) for s in doc["steps"]] == [("quorumctl", "done")]
    until("the registration gone", lambda: _endpoints(c, tmp_path) == [1, 2], 60)
    until("the image without controller 3", lambda: _image_controllers(cli, c) == [1, 2], 60)
    assert _stale(cli, c) == []
    code, out, err = _unregister(cli, c, "--id", "3", "--apply")
    assert code == 1 and "controller 3 is not registered (registered controllers: 1, 2)" in err, err
    # Kafka's own tool agrees it is gone: CONTROLLER_ID_NOT_REGISTERED (136)
    p = k44(
        "kafka-cluster",
        ["unregister-controller", "--bootstrap-controller", c.controllers[0], "--id", "3"],
        tmp_path,
        ok=False,
    )
    assert p.returncode != 0 and "Controller ID 3 is not currently registered." in p.stderr + p.stdout
    c.stop()
    log = sorted(str(p) for p in (c.data(1) / "__cluster_metadata-0").glob("*.log"))
    assert len(log) == 1, log
    k = k44("kafka-dump-log", ["--cluster-metadata-decoder", "--files", ",".join(log)], tmp_path)
    code, out, err = cli(
        "dump-log", "-o", "text", "--kafka-version", "4.4", "--cluster-metadata-decoder", "--files", ",".join(log)
    )
    assert (code, out, err) == (0, k.stdout, k.stderr)
    assert '"type":"UNREGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3}}' in out
    for n in (1, 2, 4):
        code, out, err = cli("verify", "-o", "json", str(c.data(n)))
        assert (code, err) == (0, ""), out[-2000:]
    _image_equals_shell(cli, c, tmp_path, log[0])
    # history of metadata.version: 4.4-IV1 (32) from the zero snapshot; then the log's two records
    # of it, at the offsets Kafka's own dump-log shows: one at 32 that changes nothing, and 4.4-IV2
    # (33) at the upgrade's offset
    mv = re.findall(r"\| offset: (\d+) .*\"name\":\"metadata.version\",\"featureLevel\":(\d+)\}", k.stdout)
    assert [level for _, level in mv] == ["32", "33"], mv
    code, out, err = cli("history", str(c.data(1)), "--feature", "metadata.version", "-o", "json")
    assert (code, err) == (0, "")
    entries = [(e["source"], e["offset"], e["record"], e["changes"], e.get("file")) for e in json.loads(out)["entries"]]
    change = [{"path": "/features/metadata.version", "before": 32, "after": 33}]
    assert entries == [
        (
            "bootstrap",
            -1,
            "FEATURE_LEVEL_RECORD",
            [{"path": "/features/metadata.version", "before": None, "after": 32}],
            SNAP.split("/")[1],
        ),
        ("log", int(mv[0][0]), "FEATURE_LEVEL_RECORD", [], None),
        ("log", int(mv[1][0]), "FEATURE_LEVEL_RECORD", change, None),
    ], entries
    # the other readers on the cluster's 4.4-formatted dirs (no bootstrap.checkpoint anywhere)
    assert not any(c.data(n).joinpath("bootstrap.checkpoint").exists() for n in (1, 2, 3, 4))

    # truncate against the voter with the newer log (Raft's order: last epoch, then end offset):
    # the stop may leave either controller ahead (once, under load, 2 led on after 1 stopped)
    def end(n: int) -> tuple[int, int]:
        r = cli("state", str(c.data(n)), "-o", "json", code=0).json()["replicas"][0]
        return r["last_epoch"], r["log_end_offset"]

    behind, ahead = sorted((1, 2), key=end)
    code, out, err = cli("truncate", str(c.data(behind)), "--reference", str(c.data(ahead)))
    assert code == 0 and "is already a prefix of" in out, out + err
    code, out, err = cli("recover", str(c.data(1)), "--lost-voters", "2", "--replica", str(c.data(4)))
    assert code == 0, err
    code, out, err = cli("bootstrap", "info", "-o", "json", "--log-dir", str(c.data(1)))
    starts = json.loads(out)["directories"][0]["starts_on"]
    assert (starts["min_release"], starts["layout"], starts["needs_unstable"]) == ("4.4", "started", True)


def _image_equals_shell(cli, c, tmp: Path, log: str):
    """4.4's metadata shell reads one file: the controller's log (registrations, the topic and its
    config, the unregistration, the upgrade) equals `image` of that file field by field; the
    dir's image (zero snapshot, then the log) equals it with the zero snapshot's features under
    the log's, as the controller loads them."""
    code, out, err = cli("image", "-o", "json", log)
    assert (code, err) == (0, ""), err
    doc = json.loads(out)

    # the shell may run its command before its loader published the last batch (and once printed
    # no controllers at a load of ~30): asked again until its provenance is the log's end
    def at_end():
        try:
            t = shell_image(Path(log), tmp, timeout=120)
        except subprocess.TimeoutExpired:  # CI saw one hang on the live log: asked again
            return None
        return t if next(iter(t["provenance"])).startswith(f"offset {doc['at']['offset']},") else None

    shell = until("the metadata shell's image at the log's end", at_end, 300, every=0)
    assert_image_equals_shell(doc["image"], shell)
    img = doc["image"]
    assert sorted(img["controllers"]) == ["1", "2"] and sorted(img["brokers"]) == ["4"]
    assert {p: len(t["partitions"]) for p, t in img["topics"].items()} == {"t44": 2}
    assert img["configs"]["topic"] == {"t44": {"retention.ms": "3600000"}}
    zero = zero_snapshot_shell(c.data(1) / SNAP, tmp)
    code, out, err = cli("image", "-o", "json", str(c.data(1)))
    assert (code, err) == (0, ""), err
    assert_image_equals_shell(
        json.loads(out)["image"], {**shell, "features": {**zero["features"], **shell["features"]}}
    )
