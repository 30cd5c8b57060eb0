"""`quorumctl bootstrap random-uuid | format | info` against Kafka's own files
and transcripts (reference samples, fixtures, corpus bootstrap.checkpoint files)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from quorumctl import ids
from quorumctl.logdir import statefiles as state_files
from quorumctl import versions
from quorumctl.ops import formatter as storage_format
from quorumctl.ops import initial_voters
from logfiles import decode, tree
from samples import CORPUS, FIXTURES, SAMPLES, blocks

needs_shared = pytest.mark.shared
CID = "rTcAzcTXQpG_6c1zYns8Xw"
SNAP = os.path.join("__cluster_metadata-0", "00000000000000000000-0000000000.checkpoint")


def fmt(cli, *args):
    return cli("bootstrap", "format", *map(str, args))


def controller_cfg(tmp_path, name="c1", node=1, extra=""):
    p = tmp_path / f"{name}.properties"
    p.write_text(
        f"process.roles=controller\nnode.id={node}\ncontroller.quorum.bootstrap.servers=localhost:19191\n"
        f"listeners=CONTROLLER://localhost:19191\nadvertised.listeners=CONTROLLER://localhost:19191\n"
        f"controller.listener.names=CONTROLLER\nlog.dirs={tmp_path / name}\n{extra}"
    )
    return p


# -- random-uuid ------------------------------------------------------------------------


def test_random_uuid_cli(cli):
    code, out, err = cli("bootstrap", "random-uuid")
    assert code == 0 and err == ""
    u = out.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", u) and not u.startswith("-") and ids.check_cluster_id(u) is None


# -- format output against Kafka's ----------------------------------------------------


@needs_shared
@pytest.mark.parametrize(
    "release,kafka_file",
    [
        ("3.7-IV4", FIXTURES / "kafka-3.7.0-static" / "data" / "c1" / "bootstrap.checkpoint"),
        ("3.9-IV0", FIXTURES / "kafka-3.9.0-dynamic" / "data" / "c2" / "bootstrap.checkpoint"),
        ("3.3", CORPUS / "hiage__kafka-raft" / "data" / "kafka1" / "bootstrap.checkpoint"),
        ("3.5", CORPUS / "Viso-Lake__kafka_service" / "kafka1" / "data" / "bootstrap.checkpoint"),
        ("3.8", CORPUS / "LordRahl90__clinic-wise" / "kafka1" / "data" / "bootstrap.checkpoint"),
        ("4.0", CORPUS / "devandref__apache-kafka-eda-study" / "data" / "bootstrap.checkpoint"),
        ("4.1", CORPUS / "dkoh12__Systems" / "kafka" / "data" / "bootstrap.checkpoint"),
    ],
)
def test_bootstrap_checkpoint_matches_kafka(cli, verify_clean, tmp_path, release, kafka_file):
    d = tmp_path / "d"
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", d, "-t", CID, "--release-version", release, "--apply")
    assert code == 0, err
    ours = d / "bootstrap.checkpoint"
    assert decode(ours) == decode(kafka_file)
    assert os.path.getsize(ours) == os.path.getsize(kafka_file)
    verify_clean(d)


@needs_shared
def test_format_text_matches_kafka_39(cli, tmp_path):
    """kafka-storage 3.9: `format -t ... -c c1.properties --standalone` prints one line
    (3.9's default release is given: ours is 4.3's)."""
    cfg = controller_cfg(tmp_path)
    code, out, err = fmt(cli, "-c", cfg, "-t", CID, "--standalone", "-r", "3.9", "--apply")
    want = next(b for b in blocks("storage-3.9.0.txt") if b.command.endswith("-c c1.properties --standalone"))
    assert code == 0 and want.exit == 0
    # 3.9 did not print the bootstrap metadata (4.3 does)
    assert body(out).splitlines() == [ln.replace("/var/lib/kafka39/data/c1", str(tmp_path / "c1")) for ln in want.lines]


@needs_shared
def test_standalone_snapshot_matches_kafka(cli, verify_clean, tmp_path):
    cfg = controller_cfg(tmp_path)
    code, out, err = fmt(cli, "-c", cfg, "-t", CID, "--standalone", "-r", "3.9", "--apply")
    assert code == 0, err
    kafka = FIXTURES / "kafka-3.9.0-dynamic" / "scratch" / "c1"
    ours, theirs = decode(tmp_path / "c1" / SNAP), decode(kafka / SNAP)
    meta = state_files.read_meta_properties(str(tmp_path / "c1" / "meta.properties"))
    kmeta = state_files.read_meta_properties(str(kafka / "meta.properties"))
    # the same records; the voter's directory id is the new random one, equal to meta.properties'
    assert ours[0][1][2][1]["voters"][0]["voterDirectoryId"] == meta["directory.id"]
    assert theirs[0][1][2][1]["voters"][0]["voterDirectoryId"] == kmeta["directory.id"]
    for side, m in ((ours, meta), (theirs, kmeta)):
        side[0][1][2][1]["voters"][0]["voterDirectoryId"] = "X"
        assert side[0][1][0][1]["lastContainedLogTimestamp"] > 1_600_000_000_000
        side[0][1][0][1]["lastContainedLogTimestamp"] = 0
    assert ours == theirs
    assert os.path.getsize(tmp_path / "c1" / SNAP) == 241
    assert decode(tmp_path / "c1" / "bootstrap.checkpoint") == decode(kafka / "bootstrap.checkpoint")
    assert meta["node.id"] == 1 and meta["cluster.id"] == CID and meta["version"] == 1
    verify_clean(tmp_path / "c1")


@needs_shared
def test_scram_matches_kafka_37(cli, tmp_path):
    """storage-3.7.0: --release-version 3.5 --add-scram SCRAM-SHA-256=[name=alice,password=alice-secret];
    with Kafka's random salt given back, the credential is Kafka's exactly."""
    text = (SAMPLES / "storage-3.7.0.txt").read_text()
    payload = json.loads(re.search(r"payload: (\{\"type\":\"USER_SCRAM_CREDENTIAL_RECORD\".*\})", text).group(1))
    sizes = [
        int(s) for s in re.findall(r"size: (\d+) magic", text.split("Dumping scratch/x2a/bootstrap.checkpoint")[1])[:3]
    ]
    salt = payload["data"]["salt"]
    d = tmp_path / "x2a"
    code, out, err = fmt(
        cli,
        "--node-id",
        1,
        "--log-dir",
        d,
        "-t",
        "XFBpci3ORzK2hz44Gtmrwg",
        "--release-version",
        "3.5",
        "--add-scram",
        f'SCRAM-SHA-256=[name=alice,password=alice-secret,salt="{salt}"]',
        "--apply",
    )
    assert code == 0, err
    batches = decode(d / "bootstrap.checkpoint")
    assert [b[0][4] for b in batches] == sizes == [83, 208, 75]
    (_, recs) = batches[1]
    assert recs[0] == ("FEATURE_LEVEL_RECORD", {"name": "metadata.version", "featureLevel": 11})
    name, data = recs[1]
    got = {k: (md_b64(v) if isinstance(v, bytes) else v) for k, v in data.items()}
    assert name == payload["type"] and got == payload["data"]


def md_b64(b: bytes) -> str:
    import base64

    return base64.b64encode(b).decode()


def test_39_standalone_with_scram(cli, verify_clean, tmp_path):
    cfg = controller_cfg(tmp_path)
    code, out, err = fmt(
        cli, "-c", cfg, "-t", CID, "--standalone", "-r", "3.9", "-S", "SCRAM-SHA-512=[name=bob,password=pw]", "--apply"
    )
    assert code == 0, err
    batches = decode(tmp_path / "c1" / "bootstrap.checkpoint")
    assert [(b[0][3], [t for t, _ in b[1]]) for b in batches] == [
        (True, ["SNAPSHOT_HEADER"]),
        (False, ["FEATURE_LEVEL_RECORD", "USER_SCRAM_CREDENTIAL_RECORD"]),
        (True, ["SNAPSHOT_FOOTER"]),
    ]
    scram = batches[1][1][1][1]
    assert (scram["name"], scram["mechanism"], scram["iterations"], len(scram["storedKey"])) == ("bob", 2, 4096, 64)
    assert re.fullmatch(rb"[0-9a-z]{20,26}", scram["salt"])  # Kafka's base-36 random salt
    (_, recs), *_ = decode(tmp_path / "c1" / SNAP)
    assert [t for t, _ in recs] == ["SNAPSHOT_HEADER", "KRAFT_VERSION", "KRAFT_VOTERS"]
    verify_clean(tmp_path / "c1")


def test_initial_controllers(cli, tmp_path):
    voters = (
        "1@localhost:19191:DfqkWOlJTZ-abG8pUGocIA,2@localhost:19192:4BuDMaJKttH3vcqDCog2og,"
        "3@localhost:19193:eAmx4J3YZ63RPobrVgXBAw"
    )
    cfg = controller_cfg(tmp_path)
    code, out, err = fmt(cli, "-c", cfg, "-t", CID, "--initial-controllers", voters, "--apply")
    assert code == 0 and body(out) == (
        f"Formatting dynamic metadata voter directory {tmp_path / 'c1'} with metadata.version 4.3-IV0.\n"
    )
    assert (
        state_files.read_meta_properties(str(tmp_path / "c1" / "meta.properties"))["directory.id"]
        == "DfqkWOlJTZ-abG8pUGocIA"
    )
    (_, recs), *_ = decode(tmp_path / "c1" / SNAP)
    assert recs[1] == ("KRAFT_VERSION", {"version": 0, "kRaftVersion": 1})
    assert [(v["voterId"], v["voterDirectoryId"], v["endpoints"][0]["port"]) for v in recs[2][1]["voters"]] == [
        (1, "DfqkWOlJTZ-abG8pUGocIA", 19191),
        (2, "4BuDMaJKttH3vcqDCog2og", 19192),
        (3, "eAmx4J3YZ63RPobrVgXBAw", 19193),
    ]
    # a node that is not among the initial voters: a dynamic metadata directory, a random id
    cfg5 = controller_cfg(tmp_path, "c5", node=5)
    code, out, err = fmt(cli, "-c", cfg5, "-t", CID, "--initial-controllers", voters, "--apply")
    assert code == 0 and body(out).startswith("Formatting dynamic metadata directory ")
    assert state_files.read_meta_properties(str(tmp_path / "c5" / "meta.properties"))["directory.id"] not in voters
    assert os.path.exists(tmp_path / "c5" / SNAP)


def test_voter_order_is_javas_hashmap_order(cli, tmp_path):
    assert initial_voters.java_int_hashmap_order([1, 2, 3]) == [1, 2, 3]
    assert initial_voters.java_int_hashmap_order([100, 200, 300]) == [200, 100, 300]  # capacity 8: buckets 4, 0, 4
    v = "100@h:1:DfqkWOlJTZ-abG8pUGocIA,200@h:2:4BuDMaJKttH3vcqDCog2og,300@h:3:eAmx4J3YZ63RPobrVgXBAw"
    code, out, err = fmt(
        cli, "--node-id", 100, "--log-dir", tmp_path / "d", "-t", CID, "--initial-controllers", v, "--apply"
    )
    assert code == 0, err
    (_, recs), *_ = decode(tmp_path / "d" / SNAP)
    assert [x["voterId"] for x in recs[2][1]["voters"]] == [200, 100, 300]


@needs_shared
def test_directory_order_is_javas_hashmap_order():
    # storage-3.7.0.txt formats x2a and x2b; the copier's second pass prints them in
    # HashMap order: x2b, then x2a
    lines = next(b for b in blocks("storage-3.7.0.txt") if "x2.properties --release-version 3.5" in b.command).lines
    second_pass = [ln.split()[1] for ln in lines if ln.startswith("Formatting")][1:]
    assert second_pass == initial_voters.java_string_hashmap_order(
        ["/var/lib/kafka/scratch/x2a", "/var/lib/kafka/scratch/x2b"]
    )


def test_data_and_metadata_dirs(cli, tmp_path):
    d1, d2, meta = tmp_path / "a", tmp_path / "b", tmp_path / "meta"
    code, out, err = fmt(
        cli, "--node-id", 4, "--log-dir", d1, "--log-dir", d2, "--metadata-log-dir", meta, "-t", CID, "--apply"
    )
    assert code == 0, err
    lines = body(out).splitlines()
    assert sorted(lines) == sorted(
        [
            f"Formatting data directory {d1} with metadata.version 4.3-IV0.",
            f"Formatting data directory {d2} with metadata.version 4.3-IV0.",
            f"Formatting metadata directory {meta} with metadata.version 4.3-IV0.",
        ]
    )
    assert [ln.split()[-4] for ln in lines] == initial_voters.java_string_hashmap_order(
        sorted(map(str, (d1, d2, meta)))
    )
    dirids = {state_files.read_meta_properties(str(d / "meta.properties"))["directory.id"] for d in (d1, d2, meta)}
    assert len(dirids) == 3 and not any(ids.is_reserved_directory_id(x) for x in dirids)
    assert all(os.path.exists(d / "bootstrap.checkpoint") for d in (d1, d2, meta))
    code, out, err = cli("bootstrap", "info", "--log-dir", d1, "--log-dir", d2, "--log-dir", meta)
    assert code == 0 and out.startswith("Found log directories:\n")


# -- features, releases and the errors ------------------------------------------------


def body(out: str) -> str:
    """What format printed after the bootstrap metadata line (Kafka 4.3 prints it first)."""
    head, _, rest = out.partition("\n")
    assert head.startswith(
        "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord("
        "name='metadata.version', featureLevel="
    ), out
    return rest


def records_of(d):
    return [data for t, data in decode(d / "bootstrap.checkpoint")[1][1]]


def test_feature_is_honoured(cli, tmp_path):
    code, out, err = fmt(
        cli,
        "--node-id",
        1,
        "--log-dir",
        tmp_path / "d",
        "-t",
        CID,
        "-r",
        "3.9",
        "-f",
        "group.version=1",
        "-f",
        "transaction.version=1",
        "--apply",
    )
    assert code == 0, err
    assert records_of(tmp_path / "d") == [
        {"name": "metadata.version", "featureLevel": 21},
        {"name": "group.version", "featureLevel": 1},
        {"name": "transaction.version", "featureLevel": 1},
    ]
    code, out, err = fmt(
        cli, "--node-id", 1, "--log-dir", tmp_path / "e", "-t", CID, "-f", "metadata.version=25", "--apply"
    )
    assert code == 0 and "metadata.version 4.0-IV3" in out
    assert records_of(tmp_path / "e") == [
        {"name": "metadata.version", "featureLevel": 25},
        {"name": "group.version", "featureLevel": 1},
        {"name": "transaction.version", "featureLevel": 2},
    ]
    code, out, err = fmt(
        cli,
        "--node-id",
        1,
        "--log-dir",
        tmp_path / "g",
        "-t",
        CID,
        "-r",
        "4.1",
        "-f",
        "eligible.leader.replicas.version=0",
        "-f",
        "group.version=0",
        "--apply",
    )
    assert code == 0 and records_of(tmp_path / "g") == [
        {"name": "metadata.version", "featureLevel": 27},
        {"name": "transaction.version", "featureLevel": 2},
    ]


@pytest.mark.parametrize(
    "args,msg",
    [
        (
            ["-f", "foo.version=1"],
            "Unsupported feature: foo.version. Supported features are: "
            "eligible.leader.replicas.version, group.version, kraft.version, share.version, "
            "streams.version, transaction.version",
        ),
        (["-r", "3.8", "-f", "metadata.version=20"], "Use --release-version instead of --feature metadata.version=X"),
        (
            ["-r", "4.0-IV0", "-f", "eligible.leader.replicas.version=1"],
            "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23",
        ),
        (["-f", "group.version=2"], "No feature:group.version with feature level 2"),
        (
            ["-f", "kraft.version=1"],
            "Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of "
            "the flags --standalone, --initial-controllers, or --no-initial-controllers is used. "
            "For dynamic controllers support, try using one of --standalone, "
            "--initial-controllers, or --no-initial-controllers and removing "
            "controller.quorum.voters.",
        ),
        (
            ["-f", "kraft.version=0", "-I", "1@h:1:DfqkWOlJTZ-abG8pUGocIA"],
            "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, "
            "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try removing "
            "the --feature flag for kraft.version.",
        ),
        # without a config, the flags make the quorum dynamic (Kafka 4.3 reads the config's voters)
        (["-f", "kraft.version=0", "-N"], "Cannot set kraft.version to 0 if controller.quorum.voters is empty"),
        # 4.4-IV0 is Kafka 4.3's unstable version
        (["-r", "4.4-IV0"], "Unknown metadata.version '4.4-IV0'. Supported metadata.version are: 3.3-IV3, 3.4-IV0, "),
        (["-r", "4.4"], "Unknown metadata.version '4.4'. Supported metadata.version are: 3.3-IV3, "),
        (["-f", "metadata.version=31"], "metadata.version 4.4-IV0 is not yet stable."),
        (
            ["-f", "metadata.version=32"],
            "No MetadataVersion with feature level 32. Valid feature levels are from 7 to 31.",
        ),
        (
            ["-f", "metadata.version=6"],
            "No MetadataVersion with feature level 6. Valid feature levels are from 7 to 31.",
        ),
        (["-f", "streams.version=2"], "No feature:streams.version with feature level 2"),
        (["-r", "2.8"], "Unknown metadata.version '2.8'. Supported metadata.version are: 3.3-IV3, "),
        (["-r", "3.3-IV0"], "Unknown metadata.version '3.3-IV0'. Supported metadata.version are: 3.3-IV3, "),
        (
            ["-r", "4.5"],
            "Supported metadata.version are: 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, "
            "3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, "
            "4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0\n",
        ),
        (
            ["-r", "3.4", "-S", "SCRAM-SHA-256=[name=a,password=b]"],
            "SCRAM is only supported in metadata.version 3.5-IV2",
        ),
        (["-S", "SCRAM-SHA-1=[name=a,password=b]"], "The add-scram mechanism SCRAM-SHA-1 is not supported."),
        (["-S", "SCRAM-SHA-256=[name=a]"], "You must supply one of 'password' or 'saltedpassword' to add-scram"),
        (["-S", "SCRAM-SHA-256=[name=a,password=b,iterations=100]"], "The 'iterations' value must be >= 4096"),
        (["-I", "1@localhost:19191:bad"], "Failed to parse directory ID in dynamic voter string"),
        (
            ["-I", "1@localhost:19191:DfqkWOlJTZ-abG8pUGocIA,1@h:2:4BuDMaJKttH3vcqDCog2og"],
            "Node id 1 was specified more than once.",
        ),
        (["-s", "-N"], "mutually exclusive"),
    ],
)
def test_format_errors(cli, tmp_path, args, msg):
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", tmp_path / "d", "-t", CID, *args, "--apply")
    assert code == 2 and msg in err and err.count("\n") == 1, err
    assert not os.path.exists(tmp_path / "d")


def test_release_strings():
    assert versions.parse_release_version("3.7") == ("3.7-IV4", 19)
    assert versions.parse_release_version("3.7.1") == ("3.7-IV4", 19)
    assert versions.parse_release_version("3.8") == ("3.8-IV0", 20)
    assert versions.parse_release_version("4.0") == ("4.0-IV3", 25)
    assert versions.parse_release_version("4.1-IV0") == ("4.1-IV0", 26)
    assert versions.parse_release_version("4.2-IV1") == ("4.2-IV1", 29)
    assert versions.parse_release_version("4.2") == ("4.2-IV1", 29)  # production in 4.3
    assert versions.parse_release_version("4.3.0") == ("4.3-IV0", 30)
    assert versions.parse_release_version("4.4-IV0", unstable=True) == ("4.4-IV0", 31)
    with pytest.raises(versions.FormatError, match=r"^Unknown metadata\.version '4\.4'"):
        versions.parse_release_version("4.4", unstable=True)  # an unstable release is known by its full name only
    off = {"share.version": 0, "streams.version": 0}
    assert [storage_format.effective_features(r, {}, False)[2] for r in ("3.9", "4.0-IV1", "4.0-IV2", "4.1-IV0")] == [
        {
            "metadata.version": 21,
            "eligible.leader.replicas.version": 0,
            "group.version": 0,
            "kraft.version": 0,
            "transaction.version": 0,
            **off,
        },
        {
            "metadata.version": 23,
            "eligible.leader.replicas.version": 0,
            "group.version": 1,
            "kraft.version": 0,
            "transaction.version": 0,
            **off,
        },
        {
            "metadata.version": 24,
            "eligible.leader.replicas.version": 0,
            "group.version": 1,
            "kraft.version": 0,
            "transaction.version": 2,
            **off,
        },
        {
            "metadata.version": 26,
            "eligible.leader.replicas.version": 1,
            "group.version": 1,
            "kraft.version": 0,
            "transaction.version": 2,
            **off,
        },
    ]
    # the default is 4.3's LATEST_PRODUCTION (4.3-IV0); 4.4-IV0 only with unstable.feature.versions.enable
    assert storage_format.effective_features(None, {}, False)[:2] == ("4.3-IV0", 30)
    latest = {
        "eligible.leader.replicas.version": 1,
        "group.version": 1,
        "kraft.version": 1,
        "transaction.version": 2,
        "share.version": 1,
        "streams.version": 1,
    }
    assert storage_format.effective_features(None, {}, True)[2] == {"metadata.version": 30, **latest}
    assert storage_format.effective_features(None, {}, True, unstable=True)[2] == {"metadata.version": 31, **latest}
    assert storage_format.effective_features("4.2-IV0", {}, False)[2]["streams.version"] == 0
    # Kafka 4.3 dropped kraft.version 1's dependency on metadata.version 21
    assert storage_format.effective_features("3.8", {}, True)[2]["kraft.version"] == 1


def test_release_strings_of_the_44_branch():
    """The 4.4 branch's catalogue (MetadataVersion/ShareVersion at 87943b2f): 4.4-IV1 and
    4.4-IV2 unstable there, unknown to 4.3 even with unstable versions; share.version 2
    from 4.4-IV0 on in 4.4, absent from 4.3."""
    assert versions.parse_release_version("4.4-IV2", unstable=True, kafka="4.4") == ("4.4-IV2", 33)
    assert versions.parse_release_version("4.4-IV1", unstable=True, kafka="4.4") == ("4.4-IV1", 32)
    with pytest.raises(versions.FormatError, match=r"Supported metadata\.version are: .*4\.3-IV0, 4\.4-IV0$"):
        versions.parse_release_version("4.4-IV2", unstable=True)
    with pytest.raises(versions.FormatError, match=r"4\.3-IV0$"):
        versions.parse_release_version("4.4-IV2", kafka="4.4")  # unstable in 4.4 too
    assert versions.from_feature_level(33, "4.4") == "4.4-IV2"
    with pytest.raises(
        versions.FormatError,
        match=r"^No MetadataVersion with feature level 33\. Valid feature "
        r"levels are from 7 to 31\.$",
    ):
        versions.from_feature_level(33)
    assert versions.version_mapping("4.4-IV0", "4.4")["features"]["share.version"] == 2
    assert versions.version_mapping("4.4-IV0")["features"]["share.version"] == 1
    assert versions.version_mapping(None, "4.4")["features"]["share.version"] == 1  # default 4.3-IV0
    assert versions.feature_dependencies(["share.version=2"], "4.4") == [
        {"feature": "share.version", "level": 2, "requires": {}}
    ]
    with pytest.raises(versions.FormatError, match="^Feature level 2 is not supported for feature share.version$"):
        versions.feature_dependencies(["share.version=2"])
    assert versions.CONTROLLER_UNREGISTRATION_LEVEL == versions.LEVEL_OF["4.4-IV2"] == 33
    assert {32, 33} <= versions.METADATA_CHANGED and 31 not in versions.METADATA_CHANGED


def test_cluster_id_validation(cli, tmp_path):
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", tmp_path / "d", "-t", "not-a-uuid", "--apply")
    assert code == 2 and "invalid cluster id 'not-a-uuid'" in err and "--allow-non-uuid" in err
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", tmp_path / "d", "-t", ids.ZERO_UUID, "--apply")
    assert code == 2 and "reserved" in err
    code, out, err = fmt(
        cli, "--node-id", 1, "--log-dir", tmp_path / "d", "-t", "not-a-uuid", "--allow-non-uuid", "--apply"
    )
    assert code == 0
    assert state_files.read_meta_properties(str(tmp_path / "d" / "meta.properties"))["cluster.id"] == "not-a-uuid"
    code, out, err = cli("bootstrap", "info", "--log-dir", tmp_path / "d")
    assert code == 0 and "is not a valid Kafka Uuid" in err


def test_config_rules(cli, tmp_path):
    # a controller without controller.quorum.voters must choose (Kafka's message)
    cfg = controller_cfg(tmp_path)
    code, out, err = fmt(cli, "-c", cfg, "-t", CID, "--apply")
    assert (
        code == 2
        and "Because controller.quorum.voters is not set on this controller, you must specify one of "
        "the following: --standalone, --initial-controllers, or --no-initial-controllers."
        in err
    )
    code, out, err = fmt(cli, "-c", cfg, "-t", CID, "--no-initial-controllers", "--apply")
    assert (
        code == 0 and body(out) == f"Formatting metadata directory {tmp_path / 'c1'} with metadata.version 4.3-IV0.\n"
    )
    assert not os.path.exists(tmp_path / "c1" / SNAP)
    broker = tmp_path / "b4.properties"
    broker.write_text(
        f"process.roles=broker\nnode.id=4\nlog.dirs={tmp_path / 'b4'}\ncontroller.listener.names=CONTROLLER\n"
    )
    code, out, err = fmt(cli, "-c", broker, "-t", CID, "--standalone", "--apply")
    assert code == 2 and "You can only use --standalone on a controller." in err
    legacy = tmp_path / "zk.properties"
    legacy.write_text(f"broker.id=1\nlog.dirs={tmp_path / 'zk'}\n")
    code, out, err = fmt(cli, "-c", legacy, "-t", CID, "--apply")
    assert code == 2 and "appears to be for a legacy cluster" in err
    # Kafka 4 removed inter.broker.protocol.version: kafka-storage 4.3 ignores it
    ibp = controller_cfg(tmp_path, "c7", node=7, extra="inter.broker.protocol.version=3.6\n")
    code, out, err = fmt(cli, "-c", ibp, "-t", CID, "-N", "--apply")
    assert code == 0 and "with metadata.version 4.3-IV0." in out
    # unstable.feature.versions.enable opens 4.4-IV0 (and makes it the default), as in Kafka 4.3
    unstable = controller_cfg(tmp_path, "c8", node=8, extra="unstable.feature.versions.enable=true\n")
    code, out, err = fmt(cli, "-c", unstable, "-t", CID, "-N", "-r", "4.4-IV0", "--apply")
    assert code == 0 and "with metadata.version 4.4-IV0." in out
    unstable = controller_cfg(tmp_path, "c9", node=9, extra="unstable.feature.versions.enable=true\n")
    code, out, err = fmt(cli, "-c", unstable, "-t", CID, "-N", "--apply")
    assert (
        code == 0 and body(out) == f"Formatting metadata directory {tmp_path / 'c9'} with metadata.version 4.4-IV0.\n"
    )
    # a config with static voters: no dynamic quorum, whatever the flags (Kafka 4.3)
    static = controller_cfg(tmp_path, "c10", node=10, extra="controller.quorum.voters=10@localhost:19191\n")
    code, out, err = fmt(cli, "-c", static, "-t", CID, "-I", "10@localhost:19191:DfqkWOlJTZ-abG8pUGocIA", "--apply")
    assert code == 2 and err.startswith(
        "quorumctl: error: You cannot specify controller.quorum.voters and format the "
        "node with --initial-controllers or --standalone."
    )
    code, out, err = fmt(cli, "-c", static, "-t", CID, "-N", "-f", "kraft.version=1", "--apply")
    assert code == 2 and "Cannot set kraft.version to 1 unless controller.quorum.voters is empty" in err
    # a broker of a dynamic quorum: kraft.version 1 without a flag (no voter snapshot for it)
    broker = tmp_path / "b5.properties"
    broker.write_text(
        f"process.roles=broker\nnode.id=5\nlog.dirs={tmp_path / 'b5'}\ncontroller.listener.names=CONTROLLER\n"
        "controller.quorum.bootstrap.servers=localhost:19191\n"
    )
    code, out, err = fmt(cli, "-c", broker, "-t", CID, "-f", "kraft.version=1", "-o", "json")
    assert code == 0 and json.loads(out)["features"]["kraft.version"] == 1


def test_never_overwrites(cli, tmp_path):
    d = tmp_path / "d"
    assert fmt(cli, "--node-id", 1, "--log-dir", d, "-t", CID, "--apply")[0] == 0
    before = tree(d)
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", d, "-t", CID, "--apply")
    assert code == 1 and err == (
        f"quorumctl: error: Log directory {d} is already formatted. Use --ignore-formatted "
        "to ignore this directory and format the others.\n"
    )
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", d, "-t", CID, "-g", "--apply")
    assert code == 0 and out == "All of the log directories are already formatted.\n"  # no bootstrap metadata line
    code, out, err = fmt(
        cli, "--node-id", 1, "--log-dir", d, "--log-dir", tmp_path / "e", "-t", ids.random_uuid(), "-g", "--apply"
    )
    assert code == 1 and f"Invalid cluster.id in: {d}/meta.properties. Expected" in err
    code, out, err = fmt(cli, "--node-id", 2, "--log-dir", d, "-t", CID, "-g", "--apply")
    assert code == 1 and "Stored node id 1 doesn't match previous node id 2" in err
    assert tree(d) == before and not os.path.exists(tmp_path / "e")
    # -g formats the others
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", d, "--log-dir", tmp_path / "e", "-t", CID, "-g", "--apply")
    assert code == 0 and body(out) == f"Formatting data directory {tmp_path / 'e'} with metadata.version 4.3-IV0.\n"
    assert tree(d) == before


def test_dry_run_writes_nothing(cli, tmp_path):
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", tmp_path / "d", "-t", CID)
    assert code == 0 and out == (
        "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord(name='metadata.version', "
        "featureLevel=30) at version 0), ApiMessageAndVersion(FeatureLevelRecord(name='eligible.leader.replicas.version', "
        "featureLevel=1) at version 0), ApiMessageAndVersion(FeatureLevelRecord(name='group.version', featureLevel=1) at "
        "version 0), ApiMessageAndVersion(FeatureLevelRecord(name='share.version', featureLevel=1) at version 0), "
        "ApiMessageAndVersion(FeatureLevelRecord(name='streams.version', featureLevel=1) at version 0), "
        "ApiMessageAndVersion(FeatureLevelRecord(name='transaction.version', featureLevel=2) at version 0)], "
        "metadataVersionLevel=30, source=format command)\n"
        f"Would format metadata directory {tmp_path / 'd'} with metadata.version 4.3-IV0.\n"
        "Dry run: nothing was written. Run again with --apply to format.\n"
    )
    assert not os.path.exists(tmp_path / "d")
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", tmp_path / "d", "-t", CID, "-o", "json")
    doc = json.loads(out)
    assert doc["applied"] is False and doc["metadata_version"] == 30
    assert doc["bootstrap_records"] == [
        {"type": "FEATURE_LEVEL_RECORD", "version": 0, "data": d}
        for d in (
            {"name": "metadata.version", "featureLevel": 30},
            {"name": "eligible.leader.replicas.version", "featureLevel": 1},
            {"name": "group.version", "featureLevel": 1},
            {"name": "share.version", "featureLevel": 1},
            {"name": "streams.version", "featureLevel": 1},
            {"name": "transaction.version", "featureLevel": 2},
        )
    ]


def test_refuses_an_unformatted_dir_holding_a_log(cli, tmp_path):
    d = tmp_path / "d" / "__cluster_metadata-0"
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(b"")
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", tmp_path / "d", "-t", CID, "--apply")
    assert code == 1 and "has no meta.properties but holds a metadata log" in err
    assert not os.path.exists(tmp_path / "d" / "meta.properties")


HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.lockf(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


def test_format_refuses_while_locked(cli, tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(d / ".lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "locked"
        code, out, err = fmt(cli, "--node-id", 1, "--log-dir", d, "-t", CID, "--apply")
        assert code == 1 and f"Failed to acquire lock on file .lock in {d}" in err
        assert os.listdir(d) == [".lock"]
    finally:
        p.kill()
        p.wait()
    code, out, err = fmt(cli, "--node-id", 1, "--log-dir", d, "-t", CID, "--apply")
    assert code == 0 and sorted(os.listdir(d)) == [".lock", "bootstrap.checkpoint", "meta.properties"]


# -- info ----------------------------------------------------------------------------


@needs_shared
def test_info_matches_kafka(cli):
    want = next(b for b in blocks("storage-3.9.0.txt") if b.command.endswith("info -c c1.properties"))
    d = FIXTURES / "kafka-3.9.0-dynamic" / "data" / "c1"
    code, out, err = cli("bootstrap", "info", "--log-dir", d)
    assert code == want.exit == 0
    assert out.splitlines() == [ln.replace("/var/lib/kafka39/data/c1", str(d)) for ln in want.lines]
    want = next(b for b in blocks("storage-3.7.0.txt") if b.command.endswith("info -c scratch/x1.properties"))
    code, out, err = cli("bootstrap", "info", "--log-dir", "/var/lib/kafka/scratch/x1")
    assert code == want.exit == 1 and out.splitlines() == want.lines


def write_meta(d, body):
    d.mkdir(parents=True, exist_ok=True)
    (d / "meta.properties").write_text(body)


def test_info_problem_kinds(cli, tmp_path):
    ok = "version=1\ncluster.id={c}\nnode.id={n}\ndirectory.id={d}\n"
    a, b = ids.random_directory_id(), ids.random_directory_id()
    cases = {
        "missing": ([tmp_path / "nope"], [f"{tmp_path / 'nope'} does not exist"]),
        "file": ([tmp_path / "afile"], [f"{tmp_path / 'afile'} is not a directory"]),
        "unformatted": ([tmp_path / "empty"], [f"{tmp_path / 'empty'} is not formatted."]),
        "cluster": ([tmp_path / "c1", tmp_path / "c2"], ["Mismatched cluster IDs between storage directories."]),
        "node": ([tmp_path / "n1", tmp_path / "n2"], ["Mismatched node IDs between storage directories."]),
        "dup": (
            [tmp_path / "d1", tmp_path / "d2"],
            [f"Duplicate directory ID {a} found. It was the ID of {tmp_path / 'd1'}, but also of {tmp_path / 'd2'}"],
        ),
        "reserved": (
            [tmp_path / "r1"],
            [f"Invalid reserved directory ID AAAAAAAAAAAAAAAAAAAAAg found in {tmp_path / 'r1'}"],
        ),
        "versions": (
            [tmp_path / "v0", tmp_path / "v1"],
            [
                "The kafka configuration file appears to be for a cluster in KRaft mode, but the directories "
                "are formatted for legacy mode."
            ],
        ),
        "mixed": (
            [tmp_path / "w1", tmp_path / "w2"],
            ["Mismatched meta.properties versions between storage directories (version 0 and version 1)."],
        ),
        "broken": (
            [tmp_path / "bad"],
            [f"Error loading {tmp_path / 'bad' / 'meta.properties'}: Failed to find node.id"],
        ),
    }
    (tmp_path / "afile").write_text("x")
    (tmp_path / "empty").mkdir()
    write_meta(tmp_path / "c1", ok.format(c=CID, n=1, d=a))
    write_meta(tmp_path / "c2", ok.format(c=ids.random_uuid(), n=1, d=b))
    write_meta(tmp_path / "n1", ok.format(c=CID, n=1, d=a))
    write_meta(tmp_path / "n2", ok.format(c=CID, n=2, d=b))
    write_meta(tmp_path / "d1", ok.format(c=CID, n=1, d=a))
    write_meta(tmp_path / "d2", ok.format(c=CID, n=1, d=a))
    write_meta(tmp_path / "r1", ok.format(c=CID, n=1, d=ids.DIRECTORY_LOST))
    write_meta(tmp_path / "v0", f"broker.id=1\ncluster.id={CID}\n")
    write_meta(tmp_path / "v1", f"broker.id=1\ncluster.id={CID}\nversion=0\n")
    write_meta(tmp_path / "w1", ok.format(c=CID, n=1, d=a))
    write_meta(tmp_path / "w2", f"broker.id=1\ncluster.id={CID}\n")
    write_meta(tmp_path / "bad", f"version=1\ncluster.id={CID}\n")
    for name, (dirs, problems) in cases.items():
        args = [x for d in dirs for x in ("--log-dir", d)]
        code, out, err = cli("bootstrap", "info", *args)
        assert code == 1, name
        assert out.endswith(
            ("Found problem:\n" if len(problems) == 1 else "Found problems:\n")
            + "".join(f"  {p}\n" for p in problems)
            + "\n"
        ), (name, out)
        code, out, err = cli("bootstrap", "info", "-o", "json", *args)
        assert code == 1 and json.loads(out)["problems"] == problems, name


def test_info_config(cli, tmp_path):
    cfg = tmp_path / "s.properties"
    cfg.write_text(
        f"process.roles=broker,controller\nnode.id=1\nlog.dirs={tmp_path}/a,{tmp_path}/b\n"
        f"metadata.log.dir={tmp_path}/m\n"
    )
    code, out, err = cli("bootstrap", "info", "-c", cfg)
    assert code == 1 and out == (
        "Found problems:\n" + "".join(f"  {tmp_path}/{n} does not exist\n" for n in "abm") + "\n"
    )
    code, out, err = cli("bootstrap", "info")
    assert code == 2 and "give -c server.properties or --log-dir DIR" in err


def test_bootstrap_records_inside_the_zero_checkpoint_are_read(cli, verify_clean, tmp_path):
    """The newer layout (Kafka after 4.1, KAFKA-19648): no bootstrap.checkpoint; the
    bootstrap records follow KRaftVersion/Voters in 00000000000000000000-0000000000.checkpoint.
    dump-log and verify read it like any snapshot."""
    from quorumctl.logdir.snapshots import encode_snapshot

    name, mv, levels = storage_format.effective_features("4.1-IV1", {}, True)
    voters = initial_voters.voters_record(
        initial_voters.parse_dynamic_voters("1@localhost:19191:DfqkWOlJTZ-abG8pUGocIA"), "CONTROLLER"
    )
    d = tmp_path / "c1" / "__cluster_metadata-0"
    d.mkdir(parents=True)
    (d / "00000000000000000000-0000000000.checkpoint").write_bytes(
        encode_snapshot(
            storage_format.bootstrap_records(mv, levels, []),
            epoch=0,
            last_contained_log_timestamp=1795305661000,
            kraft_version=1,
            voters=voters,
            timestamp_ms=1795305661000,
        )
    )
    code, out, err = cli("dump-log", "-o", "text", "--cluster-metadata-decoder", str(d))
    assert (code, err) == (0, "")
    payloads = [line.split("payload: ", 1)[1] for line in out.splitlines() if "payload: " in line]
    assert payloads == [
        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":27}}',
        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"eligible.leader.replicas.version","featureLevel":1}}',
        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"group.version","featureLevel":1}}',
        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"transaction.version","featureLevel":2}}',
    ]
    assert ' KRaftVersion {"version":0,"kRaftVersion":1}' in out
    verify_clean(tmp_path / "c1")


def test_format_raises_its_own_error_reported_as_bad_input():
    """The library raises FormatError (Kafka's FormatterException), not the CLI's
    error; it subclasses InputError so the CLI prints one line and exits 2."""
    from quorumctl.errors import ExitStatus, InputError
    from quorumctl.ops.formatter import parse_feature_args
    from quorumctl.versions import FormatError, parse_release_version

    with pytest.raises(FormatError, match=r"^--feature x: expected name=level$") as e:
        parse_feature_args(["x"])
    assert isinstance(e.value, InputError) and e.value.exit_code == ExitStatus.USAGE
    with pytest.raises(
        FormatError, match=r"^Unknown metadata\.version '9\.9'\. Supported metadata\.version are: 3\.3-IV3, "
    ):
        parse_release_version("9.9")


def test_format_standalone_refuses_a_listener_port_beyond_65535(cli, tmp_path):
    """A port a VotersRecord cannot hold is bad input (one line, exit 2), found before anything is written."""
    cfg = tmp_path / "c.properties"
    cfg.write_text(
        "process.roles=controller\nnode.id=1\ncontroller.listener.names=CONTROLLER\n"
        "listeners=CONTROLLER://localhost:70000\ncontroller.quorum.bootstrap.servers=localhost:9093\n"
        f"log.dirs={tmp_path / 'd'}\n"
    )
    code, out, err = cli(
        "bootstrap", "format", "-c", str(cfg), "-t", "rTcAzcTXQpG_6c1zYns8Xw", "--standalone", "--apply", code=2
    )
    assert out == ""
    assert err == (
        f"quorumctl: error: {cfg}: listeners: port 70000 of 'CONTROLLER://localhost:70000' is not a TCP port (0-65535)\n"
    )
    assert not (tmp_path / "d").exists()
