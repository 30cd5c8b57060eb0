"""Kafka 4.4 (the 4.4 branch build in ../shared/kafka, 87943b2f), for real.

Directories formatted by 4.4's own kafka-storage in the test (never committed):
a static controller, a --standalone controller at 4.4-IV2 (unstable levels on),
a controller of three --initial-controllers and a broker. quorumctl reads them as
4.4 does: dump-log equals 4.4's kafka-dump-log byte for byte, the image equals
4.4's metadata shell, verify is clean, state finds the voters in the zero
snapshot, bootstrap info and doctor say only Kafka 4.4 or newer starts them
(and doctor finds nothing wrong).

Then one real 4.4 cluster (3 controllers + 1 broker, a dynamic quorum the
cluster script formats with 4.4's kafka-storage, unstable levels enabled),
upgraded to 4.4-IV1 and 4.4-IV2, where `cluster unregister-controller` and
`remove-controller --unregister` refuse each unsafe case (below 4.4-IV2, a voter,
a controller that still runs, one not registered) and remove a stopped
non-voter's registration (the image and 4.4's kafka-cluster.sh list-endpoints
agree); once stopped, dump-log of the controller's log (UNREGISTER_CONTROLLER_RECORD
in it) equals 4.4's kafka-dump-log, verify is clean, and history, truncate and
recover read the cluster's 4.4-formatted dirs.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from quorumctl.logdir.statefiles import read_meta_properties

from kafka41 import KAFKA44_HOME, kafka_tool, skip_reason, start_cluster, storage_runs, until

REASON = skip_reason(KAFKA44_HOME)
pytestmark = [pytest.mark.kafka("4.4"), pytest.mark.skipif(REASON is not None, reason=REASON or "")]

SNAP = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
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


def _tree(text: str) -> dict:
    root: dict = {}
    stack = [(-1, root)]
    for line in text.splitlines():
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip(" "))
        while stack[-1][0] >= depth:
            stack.pop()
        if line.endswith(":"):
            node: dict = {}
            stack[-1][1][line.strip()[:-1]] = node
            stack.append((depth, node))
        else:
            stack[-1][1][line.strip()] = None
    return root


def _value(node: dict) -> str:
    (v,) = node
    return v


def shell_image(path: Path, tmp: Path, timeout: float = 300) -> dict:
    return _tree(k44("kafka-metadata-shell", ["--snapshot", path, "tree", "/image"], tmp, timeout=timeout).stdout)


@pytest.mark.parametrize("name", ["static", "standalone"])
def test_image_equals_metadata_shell_44_on_fresh_dirs(cli, fresh, tmp_path, name):
    code, out, err = cli("image", "-o", "json", str(fresh / name))
    assert (code, err) == (0, "")
    img = json.loads(out)["image"]

    # the shell printed /image/features without a metadata.version once, at load 9 on 2 cores
    # (as it once printed no controllers, below): asked again while it prints none, for up to 90 s
    # and it once never exited (a CI run at load 5: killed after 300 s; a run takes 5-10 s):
    # a run past 90 s is killed and asked again
    def features():
        try:
            f = shell_image(fresh / name / SNAP, tmp_path, timeout=90).get("features", {})
        except subprocess.TimeoutExpired:
            return None
        return f if "metadataVersion" in f and _value(f["metadataVersion"]) != "Optional.empty" else None

    feats = until("the metadata shell's features", features, 300, every=0)
    assert (
        _value(feats["metadataVersion"])
        == f"Optional[{img['metadataVersion']}]"
        == {"static": "Optional[4.3-IV0]", "standalone": "Optional[4.4-IV2]"}[name]
    )
    assert {k.removeprefix("finalized_"): int(_value(v)) for k, v in feats.items() if k.startswith("finalized_")} == {
        k: v for k, v in img["features"].items() if k != "metadata.version"
    }


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
    # below 4.4-IV2, a voter, running: every reason, nothing sent
    code, out, err = _unregister(cli, c, "--id", "3", "--apply")
    assert code == 1 and out == "", err
    assert "metadata.version is 4.4-IV1 (32)" in err and "needs 4.4-IV2 (33)" in err
    assert "controller 3 is a voter (voters 1, 2, 3" in err and "controller 3 still runs" in err
    assert err.count("\n") == 1
    _upgrade(c, tmp_path, "4.4-IV2")
    dir3 = read_meta_properties(str(c.data(3) / "meta.properties"))["directory.id"]
    # remove-controller --unregister while 3 runs: refused before anything is sent
    code, out, err = cli(
        "remove-controller",
        "--bootstrap-controller",
        c.controllers[0],
        "-i",
        "3",
        "-d",
        dir3,
        "--unregister",
        "--apply",
        "--timeout",
        "30",
    )
    assert code == 1 and "controller 3 still runs" in err and "is a voter" not in err, err
    # removed from the voters, still running: refused (it fetches as an observer, answers on its endpoint)
    code, out, err = cli(
        "remove-controller", "--bootstrap-controller", c.controllers[0], "-i", "3", "-d", dir3, "--timeout", "30"
    )
    assert (code, out) == (0, f"Removed KRaft controller 3 with directory id {dir3}\n"), err
    # a removed leader first resigns, then fetches from the new leader as an observer
    code, err = until(
        "3 fetching as an observer",
        lambda: (lambda r: (r.code, r.err) if "as an observer" in r.err else None)(_unregister(cli, c, "--id", "3")),
        60,
    )
    assert code == 1 and "is a voter" not in err and "metadata.version" not in err, err
    assert "still runs: it fetched from the leader as an observer" in err
    assert f"still runs: {c.addr(3)} answers as a controller" in err
    assert _endpoints(c, tmp_path) == [1, 2, 3]
    # stopped: the dry run plans it, --apply sends it; Kafka's list-endpoints and the image agree
    c.kill(3)
    time.sleep(16)  # the leader's last fetch of 3 ages past the observer window
    code, out, err = _unregister(cli, c, "--id", "3")
    assert (code, err) == (0, ""), err
    assert out.splitlines()[-1] == "DRY RUN of unregistering controller 3: run again with --apply to send it"
    assert "checked: controller 3 is registered at " + c.addr(3) in out
    assert _endpoints(c, tmp_path) == [1, 2, 3]
    code, out, err = _unregister(cli, c, "--id", "3", "--apply")
    assert (code, out, err) == (0, "Controller 3 is no longer registered.\n", ""), err
    until("the registration gone", lambda: _endpoints(c, tmp_path) == [1, 2], 60)
    until("the image without controller 3", lambda: _image_controllers(cli, c) == [1, 2], 60)
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
    k = k44("kafka-dump-log", ["--cluster-metadata-decoder", "--files", ",".join(log)], tmp_path)
    code, out, err = cli(
        "dump-log", "-o", "text", "--kafka-version", "4.4", "--cluster-metadata-decoder", "--files", ",".join(log)
    )
    assert (code, out, err) == (0, k.stdout, k.stderr)
    assert '"type":"UNREGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3}}' in out
    for n in (1, 2, 4):
        code, out, err = cli("verify", "-o", "json", str(c.data(n)))
        assert (code, err) == (0, ""), out[-2000:]
    # the shell once printed an empty /image/cluster/controllers for this very file, which a second
    # run printed in full (a load of ~30 on 2 cores): asked again while it prints none, for up to 90 s
    shell = until(
        "the metadata shell's controllers",
        lambda: sorted(int(x) for x in shell_image(Path(log[-1]), tmp_path)["cluster"]["controllers"]),
        90,
        every=0,
    )
    assert shell == _image_controllers(cli, c) == [1, 2]
    # the other readers on the cluster's 4.4-formatted dirs (no bootstrap.checkpoint anywhere)
    assert not any(c.data(n).joinpath("bootstrap.checkpoint").exists() for n in (1, 2, 3, 4))
    code, out, err = cli("history", str(c.data(1)), "--feature", "metadata.version", "-o", "json")
    assert code == 0, err
    assert "33" in out and "32" in out
    code, out, err = cli("truncate", str(c.data(2)), "--reference", str(c.data(1)))
    assert code == 0, err
    code, out, err = cli("recover", str(c.data(1)), "--lost-voters", "2", "--replica", str(c.data(4)))
    assert code == 0, err
    code, out, err = cli("bootstrap", "info", "-o", "json", "--log-dir", str(c.data(1)))
    starts = json.loads(out)["directories"][0]["starts_on"]
    assert (starts["min_release"], starts["layout"], starts["needs_unstable"]) == ("4.4", "started", True)
