"""`features upgrade|downgrade`: the change read as kafka-features reads it, the
registered nodes whose range excludes it, the controller's verdict in Kafka's
words (live: UpdateFeatures with validateOnly, here from the simulated quorum;
offline: replayed on a real 3.7 log dir's image), --apply, and the exit codes.
The same checks on real Kafka 4.1/4.3 are in test_kafka_rolling_upgrade.py."""

from __future__ import annotations

import json
import time

import pytest

from quorumctl.domain.features import (
    ALL_FAILED,
    SAFE_DOWNGRADE,
    UNSAFE_DOWNGRADE,
    UPGRADE,
    Change,
    Node,
    blockers,
    command_lines,
    controller_verdict,
    failure_line,
    java_hash_order,
    metadata_changed_between,
    parse_change,
    range_text,
    settle_advertised,
)
from quorumctl.testing.sim import SimulatedCluster, closed_port, replica
from samples import FIXTURES

STATIC_C1 = FIXTURES / "kafka-3.7.0-static" / "data" / "c1"


# -- reading the change (FeatureCommand's parsing and messages) ---------------------------


def test_change_is_read_as_kafka_features_reads_it():
    c = parse_change("upgrade", "4.3", [" transaction.version = 2 "])
    assert (c.updates, c.upgrade_type) == ({"metadata.version": 30, "transaction.version": 2}, UPGRADE)
    assert parse_change("downgrade", "4.1-IV1", None).upgrade_type == SAFE_DOWNGRADE
    assert parse_change("downgrade", None, ["group.version=0"], unsafe=True).upgrade_type == UNSAFE_DOWNGRADE
    assert parse_change("upgrade", "4.4-IV0", None).updates == {"metadata.version": 31}  # unstable: known


def test_kafka_version_44_reads_the_change_as_44s_kafka_features():
    """4.3's kafka-features knows metadata.version up to 4.4-IV0; the 4.4 branch's up to 4.4-IV2,
    and its --release-version defaults include share.version 2 (from 4.4-IV0)."""
    assert parse_change("upgrade", "4.4-IV2", None, kafka="4.4").updates == {"metadata.version": 33}
    c = parse_change("upgrade", None, None, release_version="4.4-IV0", kafka="4.4")
    assert (c.updates["metadata.version"], c.updates["share.version"]) == (31, 2)
    assert parse_change("upgrade", None, None, release_version="4.4-IV0").updates["share.version"] == 1


@pytest.mark.parametrize(
    "version, code, message",
    [
        ("4.3", 2, "quorumctl: error: Unknown metadata.version '4.4-IV2'. Supported metadata.version are: 3.3-IV3, "),
        ("4.4", 3, "quorumctl: error: cannot connect to 127.0.0.1:1"),  # read, then the cluster is asked
    ],
)
def test_kafka_version_decides_which_levels_are_known(cli, version, code, message):
    code_, out, err = cli(
        "features",
        "upgrade",
        "--metadata",
        "4.4-IV2",
        "--kafka-version",
        version,
        "--bootstrap-server",
        "127.0.0.1:1",
        "--timeout",
        "2",
    )
    assert (code_, out) == (code, "") and err.startswith(message), err
    if version == "4.3":
        assert err.rstrip("\n").endswith(", 4.3-IV0, 4.4-IV0"), err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--metadata", "4.9-IV9"], "Unknown metadata.version '4.9-IV9'. Supported metadata.version are: 3.3-IV3, "),
        (["--feature", "group.version"], "Can't parse feature=level string group.version: equals sign not found."),
        (
            ["--feature", "group.version=x"],
            "Can't parse feature=level string group.version=x: unable to parse x as a short.",
        ),
        (
            ["--feature", "group.version=1", "--feature", "group.version=0"],
            "Feature group.version was specified more than once.",
        ),
        ([], "You must specify at least one feature to upgrade"),
    ],
)
def test_a_bad_change_is_one_line_exit_2(cli, args, message):
    code, out, err = cli("features", "upgrade", *args, "--bootstrap-server", "127.0.0.1:1")
    assert (code, out) == (2, "") and err.startswith(f"quorumctl: error: {message}") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "args, message",
    [
        ([str(STATIC_C1), "--apply"], "--apply needs the cluster"),
        ([str(STATIC_C1), "--bootstrap-server", "127.0.0.1:1"], "give a LOG_DIR (offline) or --bootstrap-server"),
        ([], "give --bootstrap-server or --bootstrap-controller (live), or a LOG_DIR (offline)"),
    ],
)
def test_where_to_look_is_checked(cli, args, message):
    code, out, err = cli("features", "upgrade", "--metadata", "4.3-IV0", *args)
    assert (code, out) == (2, "") and err.startswith(f"quorumctl: error: {message}"), err


# -- the checks, in Kafka's words -----------------------------------------------------------


def test_ranges_and_reasons_are_kafkas():
    assert (range_text(7, 27), range_text(1, 1), range_text(3, 32767)) == ("7-27", "1", "3+")
    nodes = [
        Node("controller", 1, {"metadata.version": (7, 30)}),
        Node("broker", 5, {"metadata.version": (7, 30)}),
        Node("broker", 4, {"metadata.version": (7, 27)}, fenced=True),
        Node("broker", 6, None, error="down"),
        Node("controller", 2, {"metadata.version": (7, 27)}),
    ]
    found = blockers(nodes, parse_change("upgrade", "4.3-IV0", ["share.version=1"]), 27)
    assert [(b["node"].kind, b["node"].id, b["reason"]) for b in found] == [
        ("broker", 4, "Broker 4 only supports versions 7-27"),
        ("broker", 4, "Broker 4 does not support this feature."),
        ("broker", 5, "Broker 5 does not support this feature."),
        ("controller", 1, "Controller 1 does not support this feature."),
        ("controller", 2, "Controller 2 only supports versions 7-27"),
        ("controller", 2, "Controller 2 does not support this feature."),
    ]
    # below 3.7-IV0 controllers do not register: only brokers are checked
    assert [b["node"].kind for b in blockers(nodes, parse_change("upgrade", "4.3-IV0", None), 14)] == ["broker"]


def test_the_controllers_other_checks():
    everyone = [
        Node(
            "broker",
            4,
            {"metadata.version": (7, 30), "eligible.leader.replicas.version": (0, 1), "group.version": (0, 1)},
        )
    ]
    at = {"metadata.version": 30, "transaction.version": 2}

    def verdict(op, metadata=None, features=None, finalized=at, unsafe=False):
        return controller_verdict(parse_change(op, metadata, features, unsafe), finalized, everyone)

    assert verdict("upgrade", "4.1-IV1") == {
        "metadata.version": ALL_FAILED
        + (
            "Invalid update version 27 for feature metadata.version. Can't downgrade the version of this feature "
            "without setting the upgrade type to either safe or unsafe downgrade."
        )
    }
    # 4.3-IV0 changed the metadata: going below it loses metadata, safe or not
    assert verdict("downgrade", "4.1-IV1") == {
        "metadata.version": ALL_FAILED
        + (
            "Unsupported metadata.version downgrade from 30 to 27. Refusing to perform the requested downgrade because "
            "it might delete metadata information."
        )
    }
    assert verdict("downgrade", "4.1-IV1", unsafe=True)["metadata.version"].endswith(
        "Unsafe metadata downgrade is not supported in this version."
    )
    assert verdict("downgrade", "4.1-IV1", finalized={"metadata.version": 29}) == {"metadata.version": None}
    assert verdict("downgrade", None, ["metadata.version=29"], finalized={"metadata.version": 27}) == {
        "metadata.version": ALL_FAILED + "Invalid update version 29 for feature metadata.version. Can't downgrade "
        "to a newer version."
    }
    assert verdict("upgrade", None, ["eligible.leader.replicas.version=1"], finalized={"metadata.version": 22}) == {
        "eligible.leader.replicas.version": ALL_FAILED + "Invalid update version 1 for feature "
        "eligible.leader.replicas.version. eligible.leader.replicas.version could not be set to 1 because it "
        "depends on metadata.version level 23"
    }
    assert (metadata_changed_between(29, 27), metadata_changed_between(30, 29), metadata_changed_between(24, 22)) == (
        False,
        True,
        True,
    )


def test_one_refused_feature_fails_them_all_in_the_controllers_order():
    # java.util.HashMap's order (checked with jshell on Java 17): the controller stops at the first error
    assert java_hash_order(
        [
            "metadata.version",
            "transaction.version",
            "group.version",
            "kraft.version",
            "eligible.leader.replicas.version",
            "share.version",
            "streams.version",
        ]
    ) == [
        "group.version",
        "kraft.version",
        "metadata.version",
        "share.version",
        "streams.version",
        "transaction.version",
        "eligible.leader.replicas.version",
    ]
    nodes = [Node("broker", 4, {"metadata.version": (7, 27), "share.version": (0, 0)})]
    got = controller_verdict(parse_change("upgrade", "4.3-IV0", ["share.version=1"]), {"metadata.version": 27}, nodes)
    # metadata.version comes first in the controller's map: its refusal is the one named, for both
    why = ALL_FAILED + "Invalid update version 30 for feature metadata.version. Broker 4 only supports versions 7-27"
    assert got == {"metadata.version": why, "share.version": why}
    assert failure_line(got) == "2 out of 2 operation(s) failed."
    # the active controller, when known, checks its own range first, as "Local controller N"
    nodes.append(Node("controller", 1, {"metadata.version": (7, 27)}))
    got = controller_verdict(parse_change("upgrade", "4.3-IV0", None), {"metadata.version": 27}, nodes, local=1)
    assert got == {
        "metadata.version": ALL_FAILED + "Invalid update version 30 for feature metadata.version. "
        "Local controller 1 only supports versions 7-27"
    }


def test_kafka_features_lines():
    c = Change("upgrade", {"metadata.version": 30, "group.version": 1}, UPGRADE)
    errors = {
        "metadata.version": "Invalid update version 30 for feature metadata.version. Broker 4 only supports "
        "versions 7-27",
        "group.version": None,
    }
    assert command_lines(c, errors, dry_run=True) == [
        "group.version can be upgraded to 1.",
        "Can not upgrade metadata.version to 30. Invalid update version 30 for feature metadata.version. "
        "Broker 4 only supports versions 7-27",
    ]
    assert (
        command_lines(c, {"metadata.version": None, "group.version": None}, dry_run=False)[1]
        == "metadata.version was upgraded to 30."
    )
    assert failure_line(errors) == "1 out of 2 operation(s) failed."


# -- live, against the simulated quorum --------------------------------------------------------


@pytest.fixture
def sim():
    now = int(time.time() * 1000)
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw",
        leader_id=1,
        leader_epoch=5,
        high_watermark=490,
        voters=[replica(i, 500, now, now) for i in (1, 2, 3)],
        observers=[replica(4, 500, now - 1500, now), replica(5, 400, now - 90_000, now - 90_000)],
    )
    c.add_nodes(brokers=(4, 5), profile="4.3")
    for i in (1, 2, 3, 5):  # rolled to 4.3: broker 4 still runs 4.1
        c.node_by_id(i).features["metadata.version"] = (7, 30)
    c.node_by_id(5).fenced = True
    with c:
        c.advertise_controllers()
        yield c


def test_live_names_the_blocking_broker_and_kafkas_verdict(cli, sim):
    b4 = sim.node_by_id(4).address
    code, out, err = cli("features", "upgrade", "--metadata", "4.3-IV0", "--bootstrap-server", b4)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[1].startswith(f"Blocker: broker 4 (unfenced, {b4}, last fetch ") and lines[1].endswith(
        "): Broker 4 only supports versions 7-27"
    ), lines[1]
    assert lines[-4:] == [
        "Kafka's verdict (UpdateFeatures with validateOnly):",
        "Can not upgrade metadata.version to 30. The update failed for all features since the following feature "
        "had an error: Invalid update version 30 for feature metadata.version. Broker 4 only supports versions 7-27",
        "1 out of 1 operation(s) failed.",
        "Dry run: nothing was changed. Run again with --apply to upgrade.",
    ]
    assert [(v, b["validateOnly"]) for v, b in sim.update_features_requests] == [(2, True)]

    code, out, _ = cli("features", "upgrade", "--metadata", "4.3-IV0", "--bootstrap-server", b4, "-o", "json")
    doc = json.loads(out)
    assert code == 1 and [(n["kind"], n["id"], n["fenced"], n["supported"]) for n in doc["nodes"]] == [
        ("broker", 4, False, {"metadata.version": [7, 27]}),
        ("broker", 5, True, {"metadata.version": [7, 30]}),
        ("controller", 1, None, {"metadata.version": [7, 30]}),
        ("controller", 2, None, {"metadata.version": [7, 30]}),
        ("controller", 3, None, {"metadata.version": [7, 30]}),
    ]
    assert doc["nodes"][1]["lastSeen"]["age"].endswith(" s ago") or doc["nodes"][1]["lastSeen"]["age"].endswith(
        " min ago"
    )

    # blocked: --apply sends nothing but the validation
    code, out, _ = cli("features", "upgrade", "--metadata", "4.3-IV0", "--bootstrap-server", b4, "--apply")
    assert code == 1 and out.endswith("Not sent: the upgrade is blocked.\n")
    assert all(b["validateOnly"] for _, b in sim.update_features_requests)
    assert sim.finalized["metadata.version"] == 27


def test_live_apply_once_nothing_blocks(cli, sim):
    sim.node_by_id(4).features["metadata.version"] = (7, 30)
    c2 = sim.node_by_id(2).address
    code, out, err = cli("features", "upgrade", "--metadata", "4.3-IV0", "--bootstrap-controller", c2)
    assert (code, err) == (0, "") and out.endswith(
        "metadata.version can be upgraded to 30.\nDry run: nothing was changed. Run again with --apply to upgrade.\n"
    )
    # through a controller, brokers are DescribeQuorum's observers, their ranges unknown
    assert "Unknown: broker 4 (last fetch " in out and "Unknown: broker 5 (last fetch " in out
    code, out, err = cli("features", "upgrade", "--metadata", "4.3-IV0", "--bootstrap-controller", c2, "--apply")
    assert (code, err) == (0, "") and out.endswith(
        "Applied (UpdateFeatures):\nmetadata.version was upgraded to 30.\n"
    ), out
    assert [b["validateOnly"] for _, b in sim.update_features_requests] == [True, True, False]
    assert sim.update_features_requests[-1][1]["featureUpdates"] == [
        {"feature": "metadata.version", "maxVersionLevel": 30, "upgradeType": 1}
    ]
    code, out, _ = cli("features", "describe", "--bootstrap-server", sim.node_by_id(4).address, code=0)
    assert "FinalizedVersionLevel: 4.3-IV0" in out


def test_unreachable_is_exit_3(cli):
    code, out, err = cli(
        "features",
        "upgrade",
        "--metadata",
        "4.3-IV0",
        "--bootstrap-server",
        f"127.0.0.1:{closed_port()}",
        "--timeout",
        "2",
    )
    assert (code, out) == (3, "") and "connection refused" in err and err.count("\n") == 1, err


# -- offline, on a real Kafka 3.7.0 controller's log dir -------------------------------------

needs_fixtures = pytest.mark.shared("reference/fixtures/kafka-3.7.0-static/data/c1")


@needs_fixtures
def test_offline_names_every_registration_that_blocks(cli):
    code, out, err = cli("features", "upgrade", str(STATIC_C1), "--metadata", "4.3-IV0")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "Upgrade to metadata.version=30 (4.3-IV0) (finalized now: metadata.version=19); 3 controller(s) and "
        "1 broker(s) checked (image at offset 853, 2026-11-22T00:00:27.089Z)",
        "Blocker: broker 4 (fenced, PLAINTEXT://localhost:19094): Broker 4 only supports versions 1-19",
        "Blocker: controller 1 (CONTROLLER://localhost:19091): Controller 1 only supports versions 1-19",
        "Blocker: controller 2 (CONTROLLER://localhost:19092): Controller 2 only supports versions 1-19",
        "Blocker: controller 3 (CONTROLLER://localhost:19093): Controller 3 only supports versions 1-19",
        "Note: the verdict is controller 1's, the leader this log dir last knew",
        "Verdict (the active controller's checks, replayed on the image; Kafka's words):",
        # the active controller checks its own range first
        "Can not upgrade metadata.version to 30. The update failed for all features since the following feature "
        "had an error: Invalid update version 30 for feature metadata.version. Local controller 1 only supports "
        "versions 1-19",
        "1 out of 1 operation(s) failed.",
        "Offline: nothing can be changed from a log dir; run against the cluster with --apply.",
    ]
    code, out, _ = cli("features", "upgrade", str(STATIC_C1), "--metadata", "3.7-IV4", "-o", "json")
    doc = json.loads(out)
    assert (
        code == 0 and doc["blockers"] == [] and doc["verdict"]["lines"] == ["metadata.version can be upgraded to 19."]
    )
    assert doc["at"]["offset"] == 853 and doc["mode"] == "offline"
    # 3.7-IV0 (15) changed the metadata: a downgrade below it is refused
    code, out, _ = cli("features", "downgrade", str(STATIC_C1), "--metadata", "3.6-IV2", "-o", "json")
    assert code == 1 and json.loads(out)["verdict"]["results"] == {
        "metadata.version": ALL_FAILED
        + (
            "Unsupported metadata.version downgrade from 19 to 14. Refusing to perform the requested downgrade because "
            "it might delete metadata information."
        )
    }


def test_a_fenced_broker_that_is_gone_still_blocks(cli, sim):
    """Issue 26's stale registration: broker 5 is fenced and down, but its registration (4.1's
    range) still counts for the controller. Its range cannot be asked: it is listed as unknown,
    fenced, with its last fetch, and Kafka's verdict names it."""
    b5 = sim.node_by_id(5)
    b5.features["metadata.version"] = (7, 27)
    b5.stop()
    sim.node_by_id(4).features["metadata.version"] = (7, 30)
    code, out, err = cli(
        "features", "upgrade", "--metadata", "4.3-IV0", "--bootstrap-server", sim.node_by_id(4).address, "-o", "json"
    )
    doc = json.loads(out)
    assert (code, err, doc["blockers"]) == (1, "", [])
    five = next(n for n in doc["nodes"] if n["id"] == 5)
    assert (five["kind"], five["fenced"], five["supported"], five["lastSeen"]["what"]) == (
        "broker",
        True,
        None,
        "last fetch",
    )
    assert five["error"] == f"cannot connect to {b5.address}: connection refused (nothing listens on that port)"
    assert doc["verdict"]["lines"] == [
        "Can not upgrade metadata.version to 30. The update failed for all features since the following feature "
        "had an error: Invalid update version 30 for feature metadata.version. Broker 5 only supports versions 7-27"
    ]


def test_a_controller_advertising_the_production_range_blocks_an_unstable_level_only_when_kafka_says_so():
    """A controller's ApiVersions range follows unstable.api.versions.enable, its registration (what
    the active controller checks) unstable.feature.versions.enable: seen on a real 4.4 cluster with
    the latter only, every controller advertising 7-30 and Kafka accepting 4.4-IV2 (tests/kafka/test_kafka44_rolling.py)."""
    nodes = [
        Node("broker", 4, {"metadata.version": (7, 31)}),
        Node("controller", 1, {"metadata.version": (7, 30)}),
        Node("controller", 2, {"metadata.version": (7, 30)}),
        Node("controller", 3, {"metadata.version": (7, 27)}),
    ]
    found = blockers(nodes, parse_change("upgrade", "4.4-IV2", None, kafka="4.4"), 30)
    assert [(b["node"].kind, b["node"].id) for b in found] == [
        ("broker", 4),
        ("controller", 1),
        ("controller", 2),
        ("controller", 3),
    ]
    kafka = {
        "metadata.version": "The update failed for all features since the following feature had an error: "
        "Invalid update version 33 for feature metadata.version. Local controller 2 only "
        "supports versions 7-31"
    }
    keep, notes = settle_advertised(found, kafka)
    # 4 (a broker) and 3 (below the production range) stay; 2 named by Kafka, with Kafka's range; 1 a note
    assert [(b["node"].id, list(b["supported"]), b["reason"]) for b in keep] == [
        (4, [7, 31], "Broker 4 only supports versions 7-31"),
        (2, [7, 31], "Controller 2 only supports versions 7-31"),
        (3, [7, 27], "Controller 3 only supports versions 7-27"),
    ]
    assert len(notes) == 1 and notes[0].startswith("controller 1 advertises metadata.version 7-30 (ApiVersions")
    keep, notes = settle_advertised(found, {"metadata.version": None})
    assert [b["node"].id for b in keep] == [4, 3] and len(notes) == 2
    # a production level, or one no release defines: the advertised range is the registered one
    found = blockers(nodes, parse_change("upgrade", "4.3-IV0", None), 27)
    assert settle_advertised(found, {"metadata.version": None}) == (found, [])
    nodes = [Node("controller", 1, {"group.version": (0, 1)}), Node("controller", 2, {"share.version": (0, 1)})]
    found = blockers(nodes, parse_change("upgrade", None, ["group.version=2", "share.version=2"]), 30)
    assert len(found) == 4 and settle_advertised(found, {"group.version": None, "share.version": None}) == (found, [])
