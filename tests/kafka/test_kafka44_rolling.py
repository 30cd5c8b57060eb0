"""Rolling upgrades from Kafka 4.3.0 to the 4.4 branch build (87943b2f), a static
quorum (1 controller + 1 broker) and a dynamic one (3 controllers + 1 broker),
observed step by step as test_kafka_rolling_upgrade.py observes 4.1 -> 4.3.

Both start on directories quorumctl formatted in 4.3's layout at 4.3-IV0 (a dir
4.4's kafka-storage formats does not start on 4.3; 4.4 starts on a 4.3 one).
Each node in turn is killed and started again on 4.4, the controllers first.
At every step:

- `describe status` and `describe replication` print what kafka-metadata-quorum
  of the release just started prints (4.3's at the start, 4.4's after), volatile
  numbers masked, and `describe health` is healthy;
- `features describe` through the broker prints what kafka-features of the
  release the broker runs prints (`--kafka-version 4.4` once it runs 4.4), byte
  for byte but the epoch;
- `features upgrade --feature share.version=2` names exactly the nodes still on
  4.3 (they support 0-1) as blockers, exit 1, with Kafka's verdict (equal to
  4.4's kafka-features --dry-run while the broker is the last one).

4.4's newest stable levels are metadata.version 4.3-IV0 (4.4-IV0..IV2 are
unstable on the branch) and share.version 2: once every node runs 4.4 the
share.version upgrade passes (dry run, then --apply). The static cluster runs
without unstable levels: 4.4-IV0 stays out of reach, every node blocking it.
The dynamic one has unstable.feature.versions.enable=true on every node (the
script's CLUSTER_EXTRA_CONF): it goes on to 4.4-IV2, where `remove-controller
--unregister --apply` removes a stopped voter and its registration (the image
and 4.4's kafka-cluster list-endpoints agree).
"""

from __future__ import annotations

import json
import re

import pytest

from kafka41 import (
    HOMES,
    KAFKA44_HOME,
    feature_line,
    features_equal,
    healthy,
    kafka_quorum,
    kafka_tool,
    mask_replication,
    mask_status,
    ours,
    skip_reason,
    start_cluster,
    until,
    upgrade_check,
)

REASON = skip_reason(KAFKA44_HOME)
pytestmark = [
    pytest.mark.kafka("4.3"),
    pytest.mark.kafka("4.4"),
    pytest.mark.skipif(REASON is not None, reason=REASON or ""),
]

SHARE2 = ("--feature", "share.version=2")


def blocker(
    kind: str, node: int, feature: str = "share.version", level: int = 2, supported: tuple[int, int] = (0, 1)
) -> dict:
    return {
        "kind": kind,
        "id": node,
        "feature": feature,
        "level": level,
        "supported": list(supported),
        "reason": f"{kind.capitalize()} {node} only supports versions {supported[0]}-{supported[1]}",
    }


def observe(cli, c, tmp, release: str, broker_release: str, what: str, controllers=None) -> str:
    """One step's checks (module docstring); returns features describe through the broker."""
    ctl = ["--bootstrap-controller", ",".join(controllers or c.controllers)]
    until(f"healthy after {what}", lambda: healthy(cli, ctl), 180)
    for attempt in (1, 2, 3):  # a node that just started may still move between the two calls
        theirs = kafka_quorum(tmp, ctl, "--status", home=HOMES[release])
        status = mask_status(ours(cli, ctl, "status")), mask_status(theirs)
        theirs = kafka_quorum(tmp, ctl, "--replication", home=HOMES[release])
        repl = mask_replication(ours(cli, ctl, "replication")), mask_replication(theirs)
        if status[0] == status[1] and repl[0] == repl[1]:
            break
    assert status[0] == status[1], what
    assert repl[0] == repl[1], what
    return features_equal(cli, tmp, ["--bootstrap-server", c.broker], broker_release)


def share_blocked(cli, c, on43: list[tuple[str, int]]) -> str:
    """features upgrade share.version=2 while `on43` run 4.3: exactly they block it, and
    Kafka refuses it naming one of them; returns Kafka's line."""
    code, doc = upgrade_check(cli, *SHARE2, "--bootstrap-server", c.broker)
    assert code == 1 and doc["blockers"] == [blocker(k, n) for k, n in on43], doc
    assert doc["verdict"]["by"] == "kafka", doc
    (line,) = doc["verdict"]["lines"]
    m = re.fullmatch(
        r"Can not upgrade share.version to 2\. The update failed for all features since the following "
        r"feature had an error: Invalid update version 2 for feature share\.version\. "
        r"(Local controller|Controller|Broker) (\d+) only supports versions 0-1",
        line,
    )
    assert m and (m.group(1).split()[-1].lower(), int(m.group(2))) in on43, line
    return line


def roll(cli, c, tmp, node: int) -> None:
    c.run("kill-node", str(node))
    c.start_node(node, 340, home=KAFKA44_HOME, check=True)


def upgraded(cli, c, tmp, how: list[str], feature: str, level: int, name: str) -> None:
    """Once every node runs 4.4: `feature` to `level` passes (Kafka's dry run, ours both
    ways in, `--kafka-version 4.4` naming 4.4's levels), --apply upgrades, and the broker's
    features describe shows it finalized."""
    k = kafka_tool(
        "kafka-features", ["--bootstrap-server", c.broker, "upgrade", *how, "--dry-run"], tmp, home=KAFKA44_HOME
    )
    # (after a line saying the `metadata` flag is deprecated, for --metadata)
    assert k.returncode == 0 and k.stdout.splitlines()[-1] == f"{feature} can be upgraded to {level}.", (
        k.stdout + k.stderr
    )
    for way in (["--bootstrap-server", c.broker], ["--bootstrap-controller", c.controllers[0]]):
        code, doc = upgrade_check(cli, *how, *way, "--kafka-version", "4.4")
        assert code == 0 and doc["blockers"] == [] and doc["dryRun"], doc
        assert doc["verdict"]["lines"] == [f"{feature} can be upgraded to {level}."], doc
    code, doc = upgrade_check(cli, *how, "--bootstrap-server", c.broker, "--apply", "--kafka-version", "4.4")
    assert code == 0 and doc["applied"]["lines"] == [f"{feature} was upgraded to {level}."], doc
    until(
        f"the broker sees {feature} {name} finalized",
        lambda: (
            f" FinalizedVersionLevel: {name} "
            in feature_line(features_equal(cli, tmp, ["--bootstrap-server", c.broker], "4.4"), feature)
        ),
        60,
    )


def test_rolling_upgrade_43_to_44_static(cli, tmp_path_factory, tmp_path):
    c = start_cluster(
        cli, tmp_path_factory, "rolling44-static", dynamic=False, controllers=1, version="4.3", start_timeout=300
    )
    try:
        assert c.data(1).joinpath("bootstrap.checkpoint").exists()  # 4.3's layout: 4.3 starts on it
        out = observe(cli, c, tmp_path, "4.3", "4.3", "the start on 4.3")
        assert "SupportedMaxVersion: 4.3-IV0 FinalizedVersionLevel: 4.3-IV0 " in feature_line(out)
        assert "SupportedMaxVersion: 1 FinalizedVersionLevel: 1 " in feature_line(out, "share.version")
        share_blocked(cli, c, [("broker", 2), ("controller", 1)])
        roll(cli, c, tmp_path, 1)
        observe(cli, c, tmp_path, "4.4", "4.3", "controller 1 on 4.4")
        kafka_line = share_blocked(cli, c, [("broker", 2)])
        k = kafka_tool(
            "kafka-features",
            ["--bootstrap-server", c.broker, "upgrade", *SHARE2, "--dry-run"],
            tmp_path,
            home=KAFKA44_HOME,
        )
        assert k.returncode != 0 and k.stdout.splitlines() == [kafka_line], k.stdout + k.stderr
        roll(cli, c, tmp_path, 2)
        out = observe(cli, c, tmp_path, "4.4", "4.4", "broker 2 on 4.4")
        # without unstable levels a 4.4 node's newest metadata.version is 4.3-IV0, as 4.3's
        assert "SupportedMaxVersion: 4.3-IV0 FinalizedVersionLevel: 4.3-IV0 " in feature_line(out)
        assert "SupportedMaxVersion: 2 FinalizedVersionLevel: 1 " in feature_line(out, "share.version")
        code, doc = upgrade_check(cli, "--metadata", "4.4-IV0", "--bootstrap-server", c.broker)
        assert code == 1 and doc["blockers"] == [
            blocker("broker", 2, "metadata.version", 31, (7, 30)),
            blocker("controller", 1, "metadata.version", 31, (7, 30)),
        ], doc
        upgraded(cli, c, tmp_path, list(SHARE2), "share.version", 2, "2")
    finally:
        c.discard()


def test_rolling_upgrade_43_to_44_dynamic(cli, tmp_path_factory, tmp_path):
    c = start_cluster(
        cli,
        tmp_path_factory,
        "rolling44-dynamic",
        dynamic=True,
        version="4.3",
        extra_conf="unstable.feature.versions.enable=true",
        start_timeout=300,
    )
    try:
        assert all(c.data(n).joinpath("bootstrap.checkpoint").exists() for n in (1, 2, 3))
        out = observe(cli, c, tmp_path, "4.3", "4.3", "the start on 4.3")
        # 4.3 with unstable levels on supports 4.4-IV0 (31), which 4.3.0 already defines
        assert "SupportedMaxVersion: 4.4-IV0 FinalizedVersionLevel: 4.3-IV0 " in feature_line(out)
        nodes = [*range(1, c.n + 1), *c.brokers]
        for i, node in enumerate(nodes):
            left = nodes[i:]
            on43 = [("broker", n) for n in left if n in c.brokers] + [("controller", n) for n in left if n <= c.n]
            kafka_line = share_blocked(cli, c, on43)
            if node in c.brokers:
                k = kafka_tool(
                    "kafka-features",
                    ["--bootstrap-server", c.broker, "upgrade", *SHARE2, "--dry-run"],
                    tmp_path,
                    home=KAFKA44_HOME,
                )
                assert k.returncode != 0 and k.stdout.splitlines() == [kafka_line], k.stdout + k.stderr
                code, doc = upgrade_check(
                    cli, "--metadata", "4.4-IV2", "--bootstrap-server", c.broker, "--kafka-version", "4.4"
                )
                assert code == 1 and doc["blockers"] == [blocker("broker", 4, "metadata.version", 33, (7, 31))], doc
                # the controllers run 4.4 with unstable levels registered, but advertise 7-30 in ApiVersions
                # (that follows unstable.api.versions.enable): not blockers, Kafka's verdict names the broker
                assert [n[:32] for n in doc["notes"] if n.startswith("controller ")] == [
                    f"controller {i} advertises metadata" for i in (1, 2, 3)
                ], doc["notes"]
                assert doc["verdict"]["lines"][0].endswith("Broker 4 only supports versions 7-31"), doc["verdict"]
            roll(cli, c, tmp_path, node)
            out = observe(cli, c, tmp_path, "4.4", "4.4" if node in c.brokers else "4.3", f"node {node} on 4.4")
            assert "FinalizedVersionLevel: 4.3-IV0 " in feature_line(out), out
        assert "SupportedMaxVersion: 4.4-IV2 " in feature_line(out)
        upgraded(cli, c, tmp_path, list(SHARE2), "share.version", 2, "2")
        upgraded(cli, c, tmp_path, ["--metadata", "4.4-IV2"], "metadata.version", 33, "4.4-IV2")

        # remove-controller --unregister: a stopped voter removed, and its registration with it
        def endpoints() -> list[int]:
            out = kafka_tool(
                "kafka-cluster",
                ["list-endpoints", "--bootstrap-controller", c.controllers[0]],
                tmp_path,
                home=KAFKA44_HOME,
            ).stdout
            return sorted(int(ln.split()[0]) for ln in out.splitlines()[1:] if ln.strip())

        def image_controllers() -> list[int]:
            code, out, err = cli("image", "-o", "json", str(c.data(1)))
            assert code == 0, err
            return sorted(int(k) for k in json.loads(out)["image"]["controllers"])

        c.kill(3)
        remove = [
            "remove-controller",
            "--bootstrap-controller",
            ",".join(c.controllers[:2]),
            "-i",
            "3",
            "-d",
            c.dir_ids[3],
            "--unregister",
            "--timeout",
            "30",
        ]
        code, out, err = cli(*remove)
        assert (code, err) == (0, ""), out
        assert out.splitlines()[-2:] == [
            f"DRY RUN of removing KRaft controller 3 with directory id {c.dir_ids[3]}",
            "DRY RUN of unregistering KRaft controller 3",
        ], out
        assert endpoints() == [1, 2, 3]
        code, out, err = cli(*remove, "--apply")
        assert (code, out, err) == (
            0,
            f"Removed KRaft controller 3 with directory id {c.dir_ids[3]}\nUnregistered KRaft controller 3\n",
            "",
        )
        until("the registration gone", lambda: endpoints() == [1, 2], 60)
        until("the image without controller 3", lambda: image_controllers() == [1, 2], 60)
        code, out, err = cli("describe", "status", "--bootstrap-controller", c.controllers[0], "-o", "json")
        assert code == 0 and sorted(v["id"] for v in json.loads(out)["currentVoters"]) == [1, 2], out
        observe(cli, c, tmp_path, "4.4", "4.4", "controller 3 removed", controllers=c.controllers[:2])
    finally:
        c.discard()
