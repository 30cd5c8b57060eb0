"""`bootstrap format` writes what the real kafka-storage of Kafka 4.1 and 4.3
(../shared/kafka) writes, run at test time with the same config: static
defaults, --standalone, --initial-controllers, --no-initial-controllers,
--release-version 4.2-IV1 and --feature share.version=1. Compared by decoding
both (files, batches, records, meta.properties), timestamps, CRCs and random
directory ids aside; the printed lines are compared byte for byte. And
`bootstrap version-mapping` / `feature-dependencies` print what each Kafka's
`kafka-storage version-mapping` / `feature-dependencies` print, for every
metadata.version and feature level it knows, and refusals say Kafka's words.

quorumctl follows Kafka 4.3 (its defaults, texts and rules). Against 4.1 the
same files come from quorumctl with the 4.1 defaults made explicit
(`--release-version 4.1-IV1`): Kafka 4.1's default. Where 4.1 and 4.3 differ
(docs/storage.md, "Differences from Kafka 4.1"), test_kafka_41_differs_as_documented
holds 4.1 to what the docs say it does.

kafka-storage runs through its entry point (StorageTool.execute), every case of
a Kafka version in one JVM (kafka41.storage_runs).
"""

from __future__ import annotations

import pytest

from kafka41 import KAFKA43_HOME, KAFKA44_HOME, KAFKA_HOME, skip_reason, storage_runs
from logfiles import decode
from quorumctl import versions
from quorumctl.logdir import statefiles as state_files

HOMES = {"4.1": KAFKA_HOME, "4.3": KAFKA43_HOME, "4.4": KAFKA44_HOME}
KAFKAS = [pytest.param(v, id=f"kafka-{v}", marks=pytest.mark.kafka(v)) for v, h in HOMES.items()]

CID = "rTcAzcTXQpG_6c1zYns8Xw"
DID = "DfqkWOlJTZ-abG8pUGocIA"
SNAP = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
SCRAM = (
    'SCRAM-SHA-256=[name=alice,salt="MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=",'
    'saltedpassword="mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=",iterations=8192]'
)
# case -> (quorum of the config, arguments given to both tools)
CASES = {
    "static": ("static", []),
    "standalone": ("dynamic", ["--standalone"]),
    "initial-controllers": (
        "dynamic",
        ["--initial-controllers", f"1@127.0.0.1:29501:{DID},2@127.0.0.1:29502:4BuDMaJKttH3vcqDCog2og"],
    ),
    "no-initial-controllers": ("dynamic", ["--no-initial-controllers"]),
    "release-4.2-IV1": ("static", ["--release-version", "4.2-IV1"]),
    "release-4.1-share.version=1": ("static", ["--release-version", "4.1-IV1", "--feature", "share.version=1"]),
    "scram": ("static", ["--add-scram", SCRAM]),
    "broker": ("dynamic", ["--no-initial-controllers"]),  # process.roles=broker
}


def config(root, case: str, kafka: str | None = None):
    """The config of a case; `kafka`: the one Kafka 4.1 runs with (4.2-IV1 is unstable
    in 4.1: it formats it only with unstable.feature.versions.enable)."""
    d = root / case
    quorum = (
        "controller.quorum.voters=1@127.0.0.1:29501"
        if CASES[case][0] == "static"
        else "controller.quorum.bootstrap.servers=127.0.0.1:29501"
    )
    extra = "unstable.feature.versions.enable=true\n" if kafka == "4.1" and case == "release-4.2-IV1" else ""
    p = root / f"{case}.properties"
    role = (
        "process.roles=broker\nnode.id=4\nlisteners=PLAINTEXT://127.0.0.1:29504\n"
        if case == "broker"
        else "process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://127.0.0.1:29501\n"
    )
    p.write_text(f"{role}controller.listener.names=CONTROLLER\n{quorum}\nlog.dirs={d}\n{extra}")
    return p, d


def ours_args(kafka: str, case: str) -> list[str]:
    """quorumctl's arguments for a case: Kafka 4.1's defaults are explicit."""
    args = CASES[case][1]
    if kafka == "4.1" and "--release-version" not in args:
        args = [*args, "--release-version", "4.1-IV1"]
    if kafka == "4.4":
        args = [*args, "--kafka-version", "4.4"]
    return args


def expected_files(kafka: str, case: str) -> list[str]:
    """4.1 and 4.3: meta.properties, bootstrap.checkpoint and, in a dynamic quorum with voters,
    the voters' snapshot; 4.4 (KAFKA-19648): a controller's zero snapshot holds the bootstrap
    records, a broker gets only meta.properties."""
    if kafka == "4.4":
        return sorted(["meta.properties"] + ([SNAP] if case != "broker" else []))
    return sorted(
        ["meta.properties", "bootstrap.checkpoint"] + ([SNAP] if case in ("standalone", "initial-controllers") else [])
    )


def files_of(d):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file() and p.name != ".lock")


@pytest.fixture(scope="module")
def kafka_formatted(tmp_path_factory):
    """kafka -> (root, {case: (exit code, stdout, error)}), one JVM per Kafka version."""
    done = {}
    for v, home in HOMES.items():
        if skip_reason(home) is not None:
            continue
        root = tmp_path_factory.mktemp(f"kafka{v}-format")
        runs = [["format", "-t", CID, "-c", str(config(root, c, v)[0]), *a] for c, (_, a) in CASES.items()]
        done[v] = root, dict(zip(CASES, storage_runs(runs, root, home=home)))
    return done


def masked(d, name: str, random_voter_id: bool):
    batches = decode(d / name)
    for _, recs in batches:
        for i, (t, data) in enumerate(recs):
            if t == "SNAPSHOT_HEADER" and name == SNAP:
                assert data["lastContainedLogTimestamp"] > 1_600_000_000_000  # the time of formatting
                recs[i] = (t, {**data, "lastContainedLogTimestamp": "now"})
            if t == "KRAFT_VOTERS" and random_voter_id:
                recs[i] = (t, {**data, "voters": [{**v, "voterDirectoryId": "random"} for v in data["voters"]]})
            if t == "USER_SCRAM_CREDENTIAL_RECORD":
                assert len(data["storedKey"]) == len(data["serverKey"]) == 32
    return batches


def redact_scram_keys(line: str) -> str:
    """Kafka prints the SCRAM storedKey and serverKey; quorumctl does not (docs/storage.md)."""
    import re

    return re.sub(r"(storedKey|serverKey)=\[[-0-9, ]*\]", r"\1=[redacted]", line)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("kafka", KAFKAS)
def test_format_equals_kafka_storage(cli, kafka_formatted, tmp_path, kafka, case):
    root, kafka_out = kafka_formatted[kafka]
    rc, printed, err = kafka_out[case]
    assert (rc, err) == (0, ""), (kafka, case, err)
    cfg, ours = config(tmp_path, case)
    code, out, err = cli("bootstrap", "format", "-t", CID, "-c", str(cfg), *ours_args(kafka, case), "--apply")
    theirs = root / case
    assert (code, err) == (0, "")
    lines = out.replace(str(ours), str(theirs)).splitlines(keepends=True)
    assert lines[0].startswith("Bootstrap metadata: BootstrapMetadata(records=[")
    if kafka == "4.1":  # 4.1 does not print the bootstrap metadata (4.3 does)
        lines = lines[1:]
    assert "".join(lines) == redact_scram_keys(printed)
    assert files_of(ours) == files_of(theirs) == expected_files(kafka, case)
    for name in files_of(theirs):  # the same sizes (the same encoding) and modes (the snapshot 0400)
        assert [(x / name).stat().st_size for x in (ours, theirs)][0] == (theirs / name).stat().st_size, name
        assert (ours / name).stat().st_mode & 0o777 == (theirs / name).stat().st_mode & 0o777, name
    for name in files_of(theirs):
        if name == "meta.properties":
            a, b = (state_files.read_meta_properties(str(x / name)) for x in (ours, theirs))
            if case == "initial-controllers":
                assert a["directory.id"] == b["directory.id"] == DID
            for m in (a, b):
                m["directory.id"] = m["properties"]["directory.id"] = "random"
            assert a == b
        else:
            assert masked(ours, name, case == "standalone") == masked(theirs, name, case == "standalone"), name
    if case == "standalone":  # the random voter id is the node's own directory id, on both sides
        for d in (ours, theirs):
            voters = decode(d / SNAP)[0][1][2][1]["voters"]
            assert (
                voters[0]["voterDirectoryId"]
                == state_files.read_meta_properties(str(d / "meta.properties"))["directory.id"]
            )


DEFAULTS = {  # 4.4: 4.3's (the same LATEST_PRODUCTION); set below
    "4.1": (
        "4.1-IV1",
        [
            {"name": "metadata.version", "featureLevel": 27},
            {"name": "eligible.leader.replicas.version", "featureLevel": 1},
            {"name": "group.version", "featureLevel": 1},
            {"name": "transaction.version", "featureLevel": 2},
        ],
    ),
    "4.3": (
        "4.3-IV0",
        [
            {"name": "metadata.version", "featureLevel": 30},
            {"name": "eligible.leader.replicas.version", "featureLevel": 1},
            {"name": "group.version", "featureLevel": 1},
            {"name": "share.version", "featureLevel": 1},
            {"name": "streams.version", "featureLevel": 1},
            {"name": "transaction.version", "featureLevel": 2},
        ],
    ),
}
DEFAULTS["4.4"] = DEFAULTS["4.3"]


@pytest.mark.parametrize("kafka", KAFKAS)
def test_the_defaults_of_each_kafka(kafka_formatted, kafka):
    root, kafka_out = kafka_formatted[kafka]
    release, records = DEFAULTS[kafka]
    assert kafka_out["static"][1].endswith(
        f"Formatting metadata directory {root / 'static'} with metadata.version {release}.\n"
    )
    name = SNAP if kafka == "4.4" else "bootstrap.checkpoint"
    assert [data for t, data in decode(root / "static" / name)[1][1]] == records


def version_mapping_runs(kafka: str) -> dict:
    """Every metadata.version and release name the Kafka knows (4.1: up to 4.2-IV1, its
    releases up to 4.1), the default and a three-part release: run id -> (Kafka's args, ours)."""
    top = versions.MAX_LEVEL_OF[kafka]
    prod = versions.KAFKA41_LATEST_PRODUCTION if kafka == "4.1" else versions.LATEST_PRODUCTION
    names = [n for n, lvl in versions.METADATA_VERSIONS if lvl <= top]
    releases = sorted({n.split("-")[0] for n, lvl in versions.METADATA_VERSIONS if lvl <= prod})
    ours = ["--kafka-version", "4.4"] if kafka == "4.4" else []
    runs = {
        "default": (["version-mapping"], ["version-mapping", *ours] + (["-r", "4.1-IV1"] if kafka == "4.1" else []))
    }
    for r in names + releases + ["3.9.1"]:
        runs[r] = (["version-mapping", "-r", r], ["version-mapping", "-r", r, *ours])
    return runs


def all_levels(kafka: str) -> list[str]:
    """Every level of every feature (and one past the last), every metadata.version."""
    top = versions.MAX_LEVEL_OF[kafka]
    out = [f"metadata.version={lvl}" for lvl in range(versions.MIN_LEVEL, top + 1)]
    for name, feat in versions.catalogue("4.4" if kafka == "4.4" else "4.3").features.items():
        if kafka == "4.1" and name == "kraft.version":
            continue  # 4.1: kraft.version=1 requires metadata.version 21 (the differences test)
        out += [f"{name}={lvl}" for lvl in sorted(feat.levels)]
    return out


@pytest.mark.parametrize("kafka", KAFKAS)
def test_version_mapping_and_feature_dependencies_equal_kafkas(cli, tmp_path, kafka):
    runs = version_mapping_runs(kafka)
    deps = ["feature-dependencies"] + [x for f in all_levels(kafka) for x in ("-f", f)]
    runs["deps"] = (deps, deps + (["--kafka-version", "4.4"] if kafka == "4.4" else []))
    runs["catalogue"] = (["version-mapping", "-r", "9.9"], None)  # Kafka 4.3's refusal lists every version
    results = dict(zip(runs, storage_runs([k for k, _ in runs.values()], tmp_path, home=HOMES[kafka])))
    for key, (_, args) in runs.items():
        if args is None:
            continue
        rc, printed, err = results[key]
        assert (rc, err) == (0, ""), (key, err)
        code, out, err = cli("bootstrap", *args, "-o", "text")
        assert (code, err) == (0, ""), (key, err)
        assert out == printed, key
    rc, printed, err = results["default"]
    assert printed.startswith(
        {
            "4.1": "metadata.version=27 (4.1-IV1)\n",
            "4.3": "metadata.version=30 (4.3-IV0)\n",
            "4.4": "metadata.version=30 (4.3-IV0)\n",
        }[kafka]
    )
    assert len(runs) == {"4.1": 23 + 9 + 4, "4.3": 25 + 11 + 4, "4.4": 27 + 11 + 4}[kafka]
    if kafka != "4.1":  # the catalogue is Kafka's: every version, in order, 3.3-IV3 to 4.4-IV0 (4.4: 4.4-IV2)
        rc, printed, err = results["catalogue"]
        assert rc == 1
        known = err.split("Supported metadata.version are: ", 1)[1].split(", ")
        assert known == [n for n, lvl in versions.METADATA_VERSIONS if lvl <= versions.MAX_LEVEL_OF[kafka]]
        assert results["deps"][1].count("\n") == len(all_levels(kafka)) + 1  # one 'requires' (ELR=1): 2 lines


SUPPORTED_43 = ", ".join(n for n, lvl in versions.METADATA_VERSIONS if lvl <= versions.MAX_LEVEL_OF["4.3"])
REFUSALS = {  # id -> (config case or None, arguments, Kafka 4.3's message); 4.1 says the same where marked
    "version-mapping -r 4.4": (
        None,
        ["version-mapping", "-r", "4.4"],
        f"Unknown metadata.version '4.4'. Supported metadata.version are: {SUPPORTED_43}",
    ),
    "deps group.version=5": (
        None,
        ["feature-dependencies", "-f", "group.version=5"],
        "Feature level 5 is not supported for feature group.version",
    ),
    "deps foo=1": (None, ["feature-dependencies", "-f", "foo=1"], "Unknown feature: foo"),
    "deps group.version=x": (
        None,
        ["feature-dependencies", "-f", "group.version=x"],
        "Invalid version format: x for feature group.version",
    ),
    "deps group.version": (
        None,
        ["feature-dependencies", "-f", "group.version"],
        "Invalid feature format: group.version. Expected format: 'feature=version' (e.g. 'group.version=1')",
    ),
    "format -r 4.4-IV0": (
        "static",
        ["--release-version", "4.4-IV0"],
        "Unknown metadata.version '4.4-IV0'. Supported metadata.version are: " + SUPPORTED_43.rsplit(", ", 1)[0],
    ),
    "format metadata.version=31": (
        "static",
        ["--feature", "metadata.version=31"],
        "metadata.version 4.4-IV0 is not yet stable.",
    ),
    # Kafka throws these uncaught (a stack trace from kafka-storage.sh): the exception's message is ours
    "format ELR=1 at 4.0-IV0": (
        "static",
        ["--release-version", "4.0-IV0", "--feature", "eligible.leader.replicas.version=1"],
        "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23",
    ),
    "format metadata.version=40": (
        "static",
        ["--feature", "metadata.version=40"],
        "No MetadataVersion with feature level 40. Valid feature levels are from 7 to 31.",
    ),
    "format static --standalone": (
        "static",
        ["--standalone"],
        "You cannot specify controller.quorum.voters and format the node with "
        "--initial-controllers or --standalone. If you want to use dynamic quorum, please "
        "remove controller.quorum.voters and specify controller.quorum.bootstrap.servers "
        "instead.",
    ),
    "format static kraft.version=1": (
        "static",
        ["--feature", "kraft.version=1"],
        "Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one "
        "of the flags --standalone, --initial-controllers, or --no-initial-controllers "
        "is used. For dynamic controllers support, try using one of --standalone, "
        "--initial-controllers, or --no-initial-controllers and removing "
        "controller.quorum.voters.",
    ),
    "format dynamic kraft.version=0": (
        "standalone",
        ["--no-initial-controllers", "--feature", "kraft.version=0"],
        "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of "
        "the flags --standalone, --initial-controllers, or --no-initial-controllers is "
        "used. For dynamic controllers support, try removing the --feature flag for "
        "kraft.version.",
    ),
    "format dynamic controller, no flag": (
        "standalone",
        [],
        "Because controller.quorum.voters is not set on this controller, you must "
        "specify one of the following: --standalone, --initial-controllers, or "
        "--no-initial-controllers.",
    ),
}
SAME_IN_41 = {"deps group.version=5", "deps foo=1", "deps group.version=x", "format dynamic controller, no flag"}


def refusal_args(root, rid: str) -> list[str]:
    case, args, _ = REFUSALS[rid]
    if case is None:
        return args
    return ["format", "-t", CID, "-c", str(config(root / rid.replace(" ", "_").replace(",", ""), case)[0]), *args]


@pytest.fixture(scope="module")
def kafka_refusals(tmp_path_factory):
    out = {}
    for v, home in HOMES.items():
        if skip_reason(home) is not None or v == "4.4":  # 4.4 refuses in 4.3's words (not rerun)
            continue
        root = tmp_path_factory.mktemp(f"kafka{v}-refusals")
        rids = [r for r in REFUSALS if v == "4.3" or r in SAME_IN_41]
        for r in rids:
            (root / r.replace(" ", "_").replace(",", "")).mkdir()
        out[v] = root, dict(zip(rids, storage_runs([refusal_args(root, r) for r in rids], root, home=home)))
    return out


# Kafka 4.1 words the others otherwise (test_kafka_41_differs_as_documented)
REFUSAL_CASES = [
    pytest.param(k.values[0], rid, id=f"{k.id}-{rid}", marks=k.marks)
    for k in KAFKAS
    if k.values[0] != "4.4"
    for rid in REFUSALS
    if k.values[0] == "4.3" or rid in SAME_IN_41
]


@pytest.mark.parametrize("kafka,rid", REFUSAL_CASES)
def test_refusals_say_what_kafka_says(cli, kafka_refusals, tmp_path, kafka, rid):
    message = REFUSALS[rid][2]
    root, results = kafka_refusals[kafka]
    rc, printed, err = results[rid]
    assert (rc, printed, err.split(": ", 1)[1]) == (1, "", message)  # Kafka: exit 1 and the message
    (tmp_path / rid.replace(" ", "_").replace(",", "")).mkdir()
    code, out, err = cli("bootstrap", *refusal_args(tmp_path, rid))
    assert (code, out, err) == (2, "", f"quorumctl: error: {message}\n")  # ours: a usage error, exit 2


DIFFERENCES_41 = {  # what Kafka 4.1 does where quorumctl follows 4.3 (docs/storage.md)
    "format default": ("static", [], 0, "Formatting metadata directory {d} with metadata.version 4.1-IV1.\n", ""),
    "format -r 4.2-IV1": (
        "static",
        ["--release-version", "4.2-IV1"],
        1,
        "",
        "FormatterException: metadata.version 4.2-IV1 is not yet stable.",
    ),
    "format -r 3.8 --standalone": (
        "standalone",
        ["--release-version", "3.8", "--standalone"],
        1,
        "",
        "IllegalArgumentException: kraft.version could not be set to 1 because it depends on metadata.version level 21",
    ),
    "deps kraft.version=1": (
        None,
        ["feature-dependencies", "-f", "kraft.version=1"],
        0,
        "kraft.version=1 requires:\n    metadata.version=21 (3.9-IV0)\n",
        "",
    ),
    "version-mapping -r 4.2": (
        None,
        ["version-mapping", "-r", "4.2"],
        1,
        "",
        "TerseFailure: Unknown release version '4.2'. Supported versions are: 3.3-IV3 to 4.1-IV1",
    ),
}


@pytest.mark.kafka("4.1")
def test_kafka_41_differs_as_documented(cli, tmp_path):
    runs = []
    for rid, (case, args, *_) in DIFFERENCES_41.items():
        (tmp_path / rid.replace(" ", "_")).mkdir()
        runs.append(
            args
            if case is None
            else ["format", "-t", CID, "-c", str(config(tmp_path / rid.replace(" ", "_"), case)[0]), *args]
        )
    results = dict(zip(DIFFERENCES_41, storage_runs(runs, tmp_path, home=KAFKA_HOME)))
    for rid, (case, args, rc, printed, err) in DIFFERENCES_41.items():
        d = tmp_path / rid.replace(" ", "_") / (case or "")
        assert results[rid] == (rc, printed.format(d=d), err), rid
    # quorumctl: 4.3's answers
    code, out, _ = cli("bootstrap", "feature-dependencies", "-o", "text", "-f", "kraft.version=1")
    assert (code, out) == (0, "kraft.version=1 has no dependencies.\n")
    code, out, _ = cli("bootstrap", "version-mapping", "-o", "text", "-r", "4.2")
    assert (code, out.splitlines()[0]) == (0, "metadata.version=29 (4.2)")
