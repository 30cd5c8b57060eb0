"""What history, diff, image and topics describe say when the question does not
fit the log (issue 27): an entity that never existed (exit 1, the closest
names), a point outside the log (one line: where the log starts and ends,
exit 2), and records from bootstrap labelled as such."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO.parent / "shared" / "reference" / "fixtures"
DYNAMIC = str(FIXTURES / "kafka-3.9.0-dynamic" / "data" / "c1")
STATIC = str(FIXTURES / "kafka-3.7.0-static" / "data" / "c1")
FLINK = str(REPO.parent / "shared" / "corpus" / "rjmfernandes__flink-on-prem" / "data")

needs_shared = pytest.mark.shared("reference/fixtures")

SPAN = "it starts at offset 0 (2026-11-22T00:01:01.721Z) and ends at offset 314 (2026-11-22T00:03:31.125Z)"


@needs_shared
@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--topic", "nosuch"],
            f"topic nosuch never existed in {DYNAMIC} (offsets 0 to 314); the log has no topic at all",
        ),
        (["--broker", "7"], f"broker 7 never existed in {DYNAMIC} (offsets 0 to 314); closest: 4"),
        (
            ["--feature", "metadata.versio"],
            f"feature metadata.versio never existed in {DYNAMIC} (offsets 0 to 314); closest: metadata.version",
        ),
        (
            ["--config-resource", "topic:x"],
            f"config topic:x never existed in {DYNAMIC} (offsets 0 to 314); the log has no config at all",
        ),
    ],
)
def test_history_of_what_never_existed_is_exit_1_with_the_closest_names(cli, args, message):
    code, out, err = cli("history", DYNAMIC, *args)
    assert (code, out, err) == (1, "", f"quorumctl: error: {message}\n")


@needs_shared
def test_history_typo_of_a_topic_names_the_real_one(cli):
    code, out, err = cli("history", FLINK, "--topic", "order")
    assert (code, out) == (1, "")
    assert err == f"quorumctl: error: topic order never existed in {FLINK} (offsets 0 to 17026); closest: orders\n"
    code, out, err = cli("history", FLINK, "--topic", "orders", "--partition", "3")
    assert (code, out) == (1, "")
    assert err.endswith("never existed in " + FLINK + " (offsets 0 to 17026); topic orders has partitions 0\n")
    # a topic that existed and was deleted is history, not an error
    code, out, err = cli("history", FLINK, "--topic", "orders")
    assert code == 0 and err == ""


@needs_shared
@pytest.mark.parametrize(
    "args",
    [
        ["diff", DYNAMIC, "--from", "2020-01-01T00:00:00Z"],
        ["diff", DYNAMIC, "--from", "5", "--to", "400"],
        ["history", DYNAMIC, "--feature", "metadata.version", "--until", "2020-01-01T00:00:00Z"],
        ["image", DYNAMIC, "/features", "--at-time", "2020-01-01T00:00:00Z"],
        ["image", DYNAMIC, "/features", "--at-offset", "99999"],
        ["topics", "describe", DYNAMIC, "--at-time", "1577836800000"],
    ],
)
def test_a_point_outside_the_log_says_where_the_log_starts_and_ends(cli, args):
    code, out, err = cli(*args)
    asked = {"400": "--to 400", "99999": "--at-offset 99999"}.get(args[-1], f"{args[-2]} 2020-01-01T00:00:00.000Z")
    assert (code, out) == (2, "")
    assert err == f"quorumctl: error: {asked} is outside the log of {DYNAMIC}: {SPAN}\n"


@needs_shared
def test_a_time_after_the_last_record_is_the_end(cli):
    code, out, err = cli("image", DYNAMIC, "/features", "--at-time", "2030-01-01T00:00:00Z", "-o", "text")
    assert code == 0 and "metadata.version: 21" in out


def test_bootstrap_records_are_labelled_bootstrap(cli, tmp_path):
    conf = tmp_path / "c.properties"
    conf.write_text(
        "node.id=1\nprocess.roles=controller\ncontroller.quorum.bootstrap.servers=127.0.0.1:1\n"
        "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:1\n"
        f"log.dirs={tmp_path / 'd'}\n"
    )
    code, out, err = cli(
        "bootstrap",
        "format",
        "-c",
        str(conf),
        "-t",
        "MkU3OEVBNTcwNTJENDM2Qg",
        "-r",
        "4.1",
        "--initial-controllers",
        "1@127.0.0.1:1:AAAAAAAAAAAAAAAAAAAAAQ",
        "--apply",
    )
    assert code == 0, err
    code, out, err = cli("history", str(tmp_path / "d"), "--feature", "metadata.version", "-o", "text")
    assert (code, err) == (0, "")
    assert out.splitlines()[1] == (
        "bootstrap (bootstrap.checkpoint) FEATURE_LEVEL_RECORD /features/metadata.version: created 27"
    )
    assert "snapshot" not in out.splitlines()[1] and "-1" not in out.splitlines()[1]


@pytest.mark.shared("corpus")
def test_never_existed_in_a_dir_holding_only_a_snapshot(cli, tmp_path):
    # a snapshot ending at 7295 covers offsets up to 7294, and no record follows:
    # not "offsets 7295 to 7294"
    import shutil
    from samples import CORPUS

    src = CORPUS / "2024dc04010__UrbanPulse_Stream_Processing_Assignment_Group25" / "kafka-data"
    if not (src / "__cluster_metadata-0").is_dir():
        pytest.skip("../shared/corpus is absent")
    d = tmp_path / "d"
    shutil.copytree(src / "__cluster_metadata-0", d / "__cluster_metadata-0")
    code, out, err = cli("history", str(d), "--topic", "nosuch")
    assert (code, out) == (1, "")
    assert err == (
        f"quorumctl: error: topic nosuch never existed in {d} (the snapshot at offset 7294, no records after it)\n"
    )
