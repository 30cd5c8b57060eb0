"""The metadata image (quorumctl.image) held to real data:

- every snapshot in ../shared/corpus and the reference fixtures whose log dir
  also holds the log up to it equals the log replayed to that offset, field by
  field;
- the image of the 3.7 and 3.9 fixtures shows what Kafka's own tools showed
  for them (reference/samples transcripts);
- the history of one partition of the churn perf log lists every leader
  election, checked against a count made from dump-log's JSON;
- diff(from, to) equals image(to) minus image(from) at random offsets of real
  logs (hypothesis).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from quorumctl.image.diff import changes, diff
from quorumctl.image.history import Entity, history, is_election
from quorumctl.image.model import Image
from quorumctl.image.replay import Point, Replay, open_source, plan, replay, replay_snapshot
from quorumctl.image.view import flatten, image_document, metadata_version_name

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
FIXTURES = SHARED / "reference" / "fixtures"
SAMPLES = SHARED / "reference" / "samples"
STATIC = FIXTURES / "kafka-3.7.0-static"
DYNAMIC = FIXTURES / "kafka-3.9.0-dynamic"
CHURN = SHARED / "perf" / "churn-controller-1.log.gz"
MAKE_PERF_LOG = SHARED / "perf" / "make-perf-log"

needs_shared = pytest.mark.shared
needs_perf = pytest.mark.shared("perf/churn-controller-1.log.gz")


def metadata_dirs() -> list[Path]:
    return sorted(p for root in (CORPUS, FIXTURES) for p in root.rglob("__cluster_metadata-0") if p.is_dir())


def snapshot_checks():
    """(snapshot, steps) for each snapshot the log dir's other files can reach: the
    log from offset 0 (plus bootstrap) or from an earlier snapshot, up to it."""
    for d in metadata_dirs():
        if not any(p.suffix in (".log", ".checkpoint") for p in d.iterdir()):
            continue
        src = open_source([str(d)])
        for snap in src.snapshots:
            if snap.end_offset == 0:
                continue  # KIP-853's bootstrap snapshot: no log before it
            try:
                steps = plan(src, Point(offset=snap.end_offset - 1), earliest=True)
            except Exception:
                continue  # the log starts after it and no earlier snapshot reaches it
            if steps[0].kind == "snapshot" and steps[0].base_offset >= snap.end_offset:
                continue
            yield snap, steps


@needs_shared
def test_every_reachable_snapshot_equals_the_replayed_log():
    checked, from_log, mismatches = 0, 0, []
    for snap, steps in snapshot_checks():
        rp = Replay(steps)
        img = rp.run(Point(offset=snap.end_offset - 1))
        if img.offset != snap.end_offset - 1:
            continue  # the log ends before the snapshot (a torn tail): nothing to compare
        checked += 1
        from_log += steps[0].kind != "snapshot"
        got = flatten(img)
        want = flatten(replay_snapshot(snap.path))
        diff_ = changes(want, got)
        if diff_ or img.epoch != snap.epoch or img.unknown or img.problem_count:
            mismatches.append((snap.path, img.epoch, snap.epoch, dict(list(diff_.items())[:3]), img.problems[:3]))
    print(f"snapshots checked: {checked} ({from_log} from bootstrap + log, the rest from an earlier snapshot + log)")
    assert mismatches == []
    # the corpus and fixtures as of this writing: 129 reachable snapshots, 119 of them from offset 0
    assert checked >= 129 and from_log >= 119


def _shell_tree(sample: str) -> dict:
    """The registrations and features printed by a kafka-metadata-shell `tree` in a transcript."""
    text = (SAMPLES / sample).read_text()
    out = {"brokers": {}, "controllers": {}}
    for m in re.finditer(
        r"BrokerRegistration\(id=(\d+), epoch=(\d+), incarnationId=([\w-]+), listeners=\[(.*?)\], "
        r"supportedFeatures=\{(.*?)\}, rack=Optional.empty, fenced=(\w+), "
        r"inControlledShutdown=(\w+), isMigratingZkBroker=(\w+), directories=\[(.*?)\]\)",
        text,
    ):
        out["brokers"][int(m[1])] = {
            "epoch": int(m[2]),
            "incarnationId": m[3],
            "listeners": _listeners(m[4]),
            "supportedFeatures": _features(m[5]),
            "fenced": m[6] == "true",
            "inControlledShutdown": m[7] == "true",
            "isMigratingZkBroker": m[8] == "true",
            "directories": m[9].split(", ") if m[9] else [],
        }
    for m in re.finditer(
        r"ControllerRegistration\(id=(\d+), incarnationId=([\w-]+), zkMigrationReady=(\w+), "
        r"listeners=\[(.*?)\], supportedFeatures=\{(.*?)\}\)",
        text,
    ):
        out["controllers"][int(m[1])] = {
            "incarnationId": m[2],
            "zkMigrationReady": m[3] == "true",
            "listeners": _listeners(m[4]),
            "supportedFeatures": _features(m[5]),
        }
    out["metadataVersion"] = re.search(r"metadataVersion:\n\s+(\S+)", text)[1]
    out["zkMigrationState"] = re.search(r"zkMigrationState:\n\s+(\S+)", text)[1]
    return out


def _listeners(s: str) -> list[str]:
    return sorted(
        f"{m[1]}://{m[3]}:{m[4]}"
        for m in re.finditer(r"Endpoint\(listenerName='(\w+)', securityProtocol=(\w+), host='([^']*)', port=(\d+)\)", s)
    )


def _features(s: str) -> dict:
    return {m[1]: [int(m[2]), int(m[3])] for m in re.finditer(r"([\w.]+): (\d+)-(\d+)", s)}


def _status(sample: str) -> list[dict]:
    """CurrentVoters / CurrentObservers of each `describe --status` in a transcript."""
    text = (SAMPLES / sample).read_text()
    return [
        {"voters": m[1], "observers": m[2]}
        for m in re.finditer(r"CurrentVoters:\s+(.*)\nCurrentObservers:\s+(.*)", text)
    ]


@needs_shared
def test_37_fixture_image_matches_kafka_metadata_shell_and_quorum_tool():
    shell = _shell_tree("shell-3.7.0.txt")
    # the shell read snap1's snapshot 92: the same point replayed from the log (which holds the
    # bootstrap records the first leader wrote; bootstrap.checkpoint is not applied again)
    doc = image_document([str(STATIC / "snap1")], Point(offset=91), use_snapshots=False)
    img = doc["image"]
    assert doc["start"]["from"] == "log" and doc["at"]["offset"] == 91
    assert {int(k): {f: v[f] for f in shell["brokers"][4]} for k, v in img["brokers"].items()} == shell["brokers"]
    assert {int(k): v for k, v in img["controllers"].items()} == shell["controllers"]
    assert img["metadataVersion"] == shell["metadataVersion"] == "3.7-IV4"
    assert img["zkMigrationState"] == shell["zkMigrationState"] == "NONE"
    assert img["topics"] == {} and img["producerIds"] is None  # shell: topics empty, nextProducerId -1
    # the end of the data dir: voters 1-3 (controllers), observer 4 (the broker), as describe --status
    status = _status("quorum-3.7.0.txt")[0]
    end = image_document([str(STATIC / "data" / "c1")])["image"]
    assert sorted(int(k) for k in end["controllers"]) == json.loads(status["voters"]) == [1, 2, 3]
    assert sorted(int(k) for k in end["brokers"]) == json.loads(status["observers"]) == [4]
    assert end["topics"] == {} and end["metadataVersion"] == "3.7-IV4"
    # broker 4 shut down cleanly at the end: fenced again (record 800, epoch 20)
    assert end["brokers"]["4"]["fenced"] is True


@needs_shared
def test_39_fixture_image_matches_kafka_tools():
    shell = _shell_tree("shell-3.9.0.txt")
    c1 = str(DYNAMIC / "data" / "c1")
    at176 = image_document([c1], Point(offset=175), use_snapshots=False)["image"]
    assert at176["metadataVersion"] == shell["metadataVersion"] == "3.9-IV0"
    assert at176["zkMigrationState"] == shell["zkMigrationState"]
    assert at176["controllers"]["1"] == shell["controllers"][1]
    end = image_document([c1])
    img = end["image"]
    last = _status("quorum-3.9.0.txt")[-1]  # after controller 3 was added back
    voters = json.loads(last["voters"])
    assert {
        int(k): {"directoryId": v["directoryId"], "endpoints": v["endpoints"]} for k, v in img["voters"].items()
    } == {v["id"]: {"directoryId": v["directoryId"], "endpoints": v["endpoints"]} for v in voters}
    observers = json.loads(last["observers"])
    assert [o["id"] for o in observers] == [int(k) for k in img["brokers"]] == [4]
    assert img["brokers"]["4"]["directories"] == [observers[0]["directoryId"]]
    assert img["kraftVersion"] == 1 and img["topics"] == {} and img["metadataVersion"] == "3.9-IV0"


@pytest.fixture(scope="module")
def churn_log(tmp_path_factory) -> Path:
    """Two copies of the real churn segment, as make-perf-log repeats it for the benchmark log."""
    d = tmp_path_factory.mktemp("perf")
    src = d / "churn.log"
    src.write_bytes(gzip.decompress(CHURN.read_bytes()))
    dst = d / "log" / "00000000000000000000.log"
    subprocess.run([sys.executable, str(MAKE_PERF_LOG), str(src), str(dst), "13"], check=True, capture_output=True)
    return dst


@needs_perf
def test_history_of_a_partition_lists_every_leader_election_of_dump_log(churn_log):
    quorumctl = Path(sys.executable).parent / "quorumctl"
    names, elections = {}, []
    with subprocess.Popen(
        [str(quorumctl), "dump-log", "--cluster-metadata-decoder", "-o", "json", str(churn_log)],
        stdout=subprocess.PIPE,
        text=True,
    ) as p:
        for line in p.stdout:
            j = json.loads(line)
            for r in j.get("records", ()):
                pl = r.get("payload") or {}
                d = pl.get("data") or {}
                if pl.get("type") == "TOPIC_RECORD":
                    names.setdefault(d["name"], set()).add(d["topicId"])
                elif (
                    d.get("partitionId") == 0
                    and d.get("topicId") in names.get("demo", ())
                    and (
                        pl["type"] == "PARTITION_RECORD" or (pl["type"] == "PARTITION_CHANGE_RECORD" and "leader" in d)
                    )
                ):
                    elections.append((r["offset"], j["partitionLeaderEpoch"], d.get("leader")))
    assert p.returncode == 0
    assert len(elections) == 8  # 4 per copy of the real log
    doc = history([str(churn_log.parent)], Entity("topic", "demo", 0))
    got = [
        (e["offset"], e["epoch"], c["after"]["leader"]) for e in doc["entries"] for c in e["changes"] if is_election(c)
    ]
    assert got == elections
    assert doc["leaderChanges"] == 8
    # the leader epoch goes up by one at each election within one life of the topic
    epochs = [c["after"]["leaderEpoch"] for e in doc["entries"] for c in e["changes"] if is_election(c)]
    assert epochs == [0, 1, 2, 3, 0, 1, 2, 3]


# -- diff == image(to) - image(from) -------------------------------------------------------


def _logs():
    # logs from offset 0 with snapshots along them, brokers fenced and unfenced, topics
    # created (63 in flink-on-prem, 16 in BigDataTechnologies), a dynamic quorum's voters
    return [
        STATIC / "data" / "c1",
        DYNAMIC / "data" / "c1",
        CORPUS / "rjmfernandes__flink-on-prem" / "data",
        CORPUS / "Danielowo2000__BigDataTechnologies-Version-2" / "kafka_data",
        CORPUS / "hiage__kafka-raft" / "data" / "kafka1",
    ]


def _end(d: Path) -> int:
    return replay([str(d)]).image.offset


@needs_shared
def test_diff_equals_image_subtraction_at_random_offsets():
    from hypothesis import HealthCheck, given, settings, strategies as st

    logs = [(d, _end(d)) for d in _logs()]

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(logs), st.floats(0, 1), st.floats(0, 1))
    def check(log, x, y):
        d, end = log
        a, b = sorted((int(x * end), int(y * end)))
        doc = diff([str(d)], Point(offset=a), Point(offset=b))
        # image(from) and image(to), each replayed on its own (from its own snapshot, if any)
        fa = flatten(replay([str(d)], Point(offset=a)).image)
        fb = flatten(replay([str(d)], Point(offset=b)).image)
        want = {p: (fa.get(p), fb.get(p)) for p in set(fa) | set(fb) if fa.get(p) != fb.get(p)}
        got = {c["path"]: c["change"] for c in doc["changes"]}
        assert got == {p: "added" if x is None else "removed" if y is None else "changed" for p, (x, y) in want.items()}
        assert doc["from"]["offset"] == a and doc["to"]["offset"] == b
        # applying the changes to image(from) gives image(to)
        applied = dict(fa)
        for p in want:
            if fb.get(p) is None:
                del applied[p]
            else:
                applied[p] = fb[p]
        assert applied == fb

    check()


@needs_shared
def test_diff_summary_counts_on_real_log():
    d = str(CORPUS / "rjmfernandes__flink-on-prem" / "data")
    doc = diff([d], Point(offset=7751), Point())
    want_topics = set(replay([d]).image.topic_ids) - set(replay([d], Point(offset=7751)).image.topic_ids)
    created = sorted(
        c["path"].split("/")[2] for c in doc["changes"] if c["change"] == "added" and c["path"].count("/") == 2
    )
    assert set(created) == want_topics
    assert doc["summary"].get("topicsCreated", 0) == len(want_topics)


# -- semantics on records written with the project's writer --------------------------------


def _log(tmp_path: Path, records: list, name="00000000000000000000.log") -> str:
    from quorumctl.records import metadata as md
    from quorumctl.records.batch import encode_batch

    d = tmp_path / "__cluster_metadata-0"
    d.mkdir(exist_ok=True)
    values = [(None, md.encode_metadata(k, v, data)) for k, v, data in records]
    (d / name).write_bytes(encode_batch(values, base_offset=0, leader_epoch=3, base_timestamp=1000))
    return str(tmp_path)


def test_semantics_secrets_configs_transactions(tmp_path):
    tid = "AAAAAAAAAAAAAAAAAAAAAQ"
    recs = [
        ("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 21}),
        (
            "UserScramCredentialRecord",
            0,
            {
                "name": "alice",
                "mechanism": 1,
                "salt": b"SALTSALT",
                "storedKey": b"STORED",
                "serverKey": b"SERVER",
                "iterations": 8192,
            },
        ),
        ("TopicRecord", 0, {"name": "orders", "topicId": tid}),
        (
            "PartitionRecord",
            0,
            {
                "partitionId": 0,
                "topicId": tid,
                "replicas": [1, 2, 3],
                "isr": [1, 2, 3],
                "removingReplicas": [],
                "addingReplicas": [],
                "leader": 1,
                "leaderEpoch": 0,
                "partitionEpoch": 0,
            },
        ),
        ("ConfigRecord", 0, {"resourceType": 2, "resourceName": "orders", "name": "retention.ms", "value": "1"}),
        ("PartitionChangeRecord", 0, {"partitionId": 0, "topicId": tid, "isr": [1, 2]}),
        ("PartitionChangeRecord", 0, {"partitionId": 0, "topicId": tid, "leader": 2}),
        ("BeginTransactionRecord", 0, {"name": "t"}),
        ("ConfigRecord", 0, {"resourceType": 2, "resourceName": "orders", "name": "x", "value": "y"}),
        ("AbortTransactionRecord", 0, {}),
        ("FeatureLevelRecord", 0, {"name": "group.version", "featureLevel": 1}),
        ("FeatureLevelRecord", 0, {"name": "group.version", "featureLevel": 0}),
        (
            "ClientQuotaRecord",
            0,
            {
                "entity": [{"entityType": "user", "entityName": None}],
                "key": "producer_byte_rate",
                "value": 1024.0,
                "remove": False,
            },
        ),
    ]
    d = _log(tmp_path, recs)
    img = replay([d]).image
    p = img.topic("orders").partitions[0]
    assert p[:8] == ((1, 2, 3), (1, 2), (), (), 2, 0, 1, 2)
    assert img.configs == {(2, "orders"): {"retention.ms": "1"}}  # the aborted transaction left nothing
    assert img.features == {"metadata.version": 21}  # level 0 removed group.version
    assert img.quotas == {"user=<default>": {"producer_byte_rate": 1024.0}}
    assert img.scram == {("SCRAM-SHA-256", "alice"): {"iterations": 8192}}
    out = json.dumps(image_document([d]))
    assert "SALT" not in out and "STORED" not in out and "SERVER" not in out
    assert metadata_version_name(21) == "3.9-IV0"
    # history of the partition: creation, ISR shrink (no new leader epoch), election
    h = history([d], Entity("topic", "orders", 0))
    got = [(e["offset"], e["record"], c["path"], c.get("fields")) for e in h["entries"] for c in e["changes"]]
    assert got == [
        (2, "TOPIC_RECORD", "/topics/orders", None),
        (3, "PARTITION_RECORD", "/topics/orders/0", None),
        (5, "PARTITION_CHANGE_RECORD", "/topics/orders/0", {"isr": [[1, 2, 3], [1, 2]], "partitionEpoch": [0, 1]}),
        (
            6,
            "PARTITION_CHANGE_RECORD",
            "/topics/orders/0",
            {"leader": [1, 2], "leaderEpoch": [0, 1], "partitionEpoch": [1, 2]},
        ),
    ]
    assert h["leaderChanges"] == 2


def test_unknown_record_types_are_counted_not_fatal(tmp_path):
    from quorumctl.records.batch import encode_batch

    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    from quorumctl.records import metadata as md

    good = md.encode_metadata("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 19})
    unknown = bytes([1, 99, 0, 0])  # frame 1, api key 99, version 0
    newer = bytes([1, 2, 7, 0])  # TopicRecord v7: not a version Kafka has written
    (d / "00000000000000000000.log").write_bytes(
        encode_batch(
            [(None, good), (None, unknown), (None, newer), (None, unknown)],
            base_offset=0,
            leader_epoch=1,
            base_timestamp=5,
        )
    )
    img = replay([str(tmp_path)]).image
    assert img.offset == 3 and img.features == {"metadata.version": 19}
    assert dict(img.unknown) == {"UNKNOWN_RECORD_99 v0": 2, "TOPIC_RECORD v7": 1}


def test_refused_records_are_problems_not_crashes(tmp_path):
    recs = [
        ("PartitionChangeRecord", 0, {"partitionId": 0, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "leader": 1}),
        ("FenceBrokerRecord", 0, {"id": 7, "epoch": 1}),
    ]
    img = replay([_log(tmp_path, recs)]).image
    assert img.problem_count == 2
    assert img.problems[1] == "offset 1: fence of broker 7, which is not registered (Kafka refuses this record)"


@pytest.mark.shared("reference/fixtures/kafka-3.7.0-static")
def test_replay_plan_picks_snapshots(tmp_path):
    """To offset N: the newest snapshot ending at or before N+1, else the log from 0 (with
    bootstrap.checkpoint only when the log holds no metadata record yet, as Kafka); an offset
    before the log start with no snapshot is an input error."""
    from quorumctl.errors import InputError

    if not STATIC.is_dir():
        pytest.skip("reference fixtures absent")
    src = open_source([str(STATIC / "data" / "c1")])
    assert [(s.kind, s.base_offset) for s in plan(src, Point(offset=50))] == [("log", 0)]
    assert plan(src, Point(offset=51))[0].base_offset == 52
    assert plan(src, Point(offset=451))[0].base_offset == 449
    assert plan(src)[0].base_offset == 850
    assert [s.kind for s in plan(src, use_snapshots=False)] == ["log"]
    only_snap = open_source(
        [str(STATIC / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000092-0000000002.checkpoint")]
    )
    with pytest.raises(InputError, match="no snapshot ends at or before it"):
        plan(only_snap, Point(offset=10))
    assert isinstance(replay_snapshot(only_snap.snapshots[0].path), Image)


@needs_shared
def test_bootstrap_checkpoint_applies_only_to_an_empty_log(cli, tmp_path):
    """A node formatted with another release than the one whose bootstrap records the
    first leader wrote: its bootstrap.checkpoint (4.1-IV1: transaction, group, ELR
    versions) never reached the cluster, whose real 3.7 log holds metadata.version 19
    alone; Kafka ignores the file once the log has records, and so does replay. On a
    log with no metadata record yet, the file is what Kafka would bootstrap."""
    shutil.copytree(STATIC / "data" / "c1", tmp_path / "c1")
    code, out, err = cli(
        "bootstrap",
        "format",
        "--log-dir",
        tmp_path / "f41",
        "-t",
        "XFBpci3ORzK2hz44Gtmrwg",
        "-r",
        "4.1-IV1",
        "--node-id",
        "1",
        "--apply",
    )
    assert code == 0, err
    shutil.copy(tmp_path / "f41" / "bootstrap.checkpoint", tmp_path / "c1" / "bootstrap.checkpoint")
    for args in (["--no-snapshot"], ["--at-offset", "5"], []):
        code, out, err = cli("image", tmp_path / "c1", "/features", *args, "-o", "json")
        assert (code, err) == (0, "")
        assert json.loads(out)["image"] == {"metadata.version": 19}, args
    code, out, err = cli("history", tmp_path / "c1", "--feature", "transaction.version")
    assert (code, out) == (1, "")
    assert err.startswith(
        f"quorumctl: error: feature transaction.version never existed in {tmp_path / 'c1'} (offsets 0 to 853)"
    ), err
    code, out, err = cli("history", tmp_path / "c1", "--feature", "metadata.version", code=0)
    assert out.splitlines()[1:] == [
        "offset 2 epoch 2 2026-11-21T23:52:56.195Z FEATURE_LEVEL_RECORD /features/metadata.version: created 19"
    ], out
    # a log holding only a LeaderChange (control) batch: nothing bootstrapped yet
    pdir = tmp_path / "f41" / "__cluster_metadata-0"
    pdir.mkdir()
    first = STATIC / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"
    (pdir / "00000000000000000000.log").write_bytes(first.read_bytes()[:106])  # offset 0: LeaderChange
    code, out, err = cli("image", tmp_path / "f41", "/features", "-o", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)["image"] == {
        "eligible.leader.replicas.version": 1,
        "group.version": 1,
        "metadata.version": 27,
        "transaction.version": 2,
    }


@pytest.mark.shared("reference/fixtures/kafka-3.7.0-static")
def test_garbage_inside_valid_batches_never_crashes_replay(tmp_path):
    """Bytes flipped inside records, with each batch's CRC recomputed so the decoders
    see them: replay reports (unknown records, problems, an early log end), never raises."""
    from hypothesis import HealthCheck, given, settings

    from hostile import garbage_in_batches

    if not STATIC.is_dir():
        pytest.skip("reference fixtures absent")
    write, flips = garbage_in_batches(STATIC / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log")

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(flips)
    def check(flips):
        d = write(tmp_path / "fuzz", flips)
        rp = replay([str(d)])
        flatten(rp.image)
        image_document([str(d)])

    check()


@needs_perf
@pytest.mark.parametrize("offset", [None, 123456, 5])
def test_parallel_replay_equals_serial(churn_log, monkeypatch, offset):
    """Workers decoding 1 MiB ranges while this process applies give the very image
    (and provenance) of the serial replay, at the end and stopped mid-log."""
    from quorumctl.image import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 << 20)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 1 << 20)
    d = [str(churn_log.parent)]
    a = replay(d, Point(offset=offset), workers=1).image
    b = replay(d, Point(offset=offset), workers=2).image
    assert flatten(a) == flatten(b)
    assert (a.offset, a.epoch, a.timestamp, a.records, a.leader) == (
        b.offset,
        b.epoch,
        b.timestamp,
        b.records,
        b.leader,
    )
    assert a.offset == (414053 if offset is None else offset)


def test_cli_input_errors_are_one_line(cli, tmp_path):
    d = _log(tmp_path, [("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 19})])
    cases = [
        (["image", d, "--at-offset", "1", "--at-time", "0"], "give --at-offset or --at-time, not both"),
        (["image", d, "--at-time", "yesterday"], "'yesterday': expected a time as ISO-8601"),
        (["history", d], "give exactly one of --topic, --broker, --config-resource, --feature, --voter"),
        (["history", d, "--partition", "1", "--broker", "1"], "--partition needs --topic"),
        (["history", d, "--config-resource", "bogus:x"], "--config-resource bogus:x: expected TYPE:NAME"),
        (["diff", d, "--from", "5", "--to", "2"], "--to 2 is before --from 5"),
        (["image", d, "/brokers/9"], "/brokers/9: no such path in the image"),
    ]
    for args, message in cases:
        code, out, err = cli(*args)
        assert code == 2 and out == "", args
        assert err.startswith("quorumctl: error: ") and message in err and err.count("\n") == 1, (args, err)
    code, out, err = cli("image", d, "/features", "-o", "text")
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == ["/features:", "  metadata.version: 19"]


def test_clear_elr_is_a_merge(tmp_path):
    """TopicDelta.maybeClearElr (4.1): partitions with an ELR are merged with empty ones."""
    tid = "AAAAAAAAAAAAAAAAAAAAAg"
    part = {
        "topicId": tid,
        "replicas": [1, 2],
        "isr": [1],
        "removingReplicas": [],
        "addingReplicas": [],
        "leader": 1,
        "leaderEpoch": 4,
        "partitionEpoch": 7,
        "directories": [],
    }
    recs = [
        ("TopicRecord", 0, {"name": "t", "topicId": tid}),
        ("PartitionRecord", 2, {**part, "partitionId": 0, "eligibleLeaderReplicas": [2], "lastKnownElr": []}),
        ("PartitionRecord", 2, {**part, "partitionId": 1, "eligibleLeaderReplicas": [], "lastKnownElr": []}),
        ("ClearElrRecord", 0, {"topicName": ""}),
        ("ClearElrRecord", 0, {"topicName": "gone"}),
    ]
    img = replay([_log(tmp_path, recs)]).image
    p0, p1 = img.topic("t").partitions[0], img.topic("t").partitions[1]
    assert (p0[6], p0[7], p0[9], p0[10]) == (4, 8, (), ())  # leader epoch kept, partition epoch + 1
    assert (p1[6], p1[7]) == (4, 7)  # nothing to clear: untouched
    assert img.problems == ["offset 4: ClearElr of unknown topic gone (Kafka refuses this record)"]


def test_diff_changes_in_the_order_of_the_sorted_flat_image_names_that_tie_included():
    """image.diff.Changes compares topic by topic; its changes are those of the whole flat
    images sorted by path, in that order, also for names one sort key ties ("7", "07",
    "007") and a negative-looking name."""
    from quorumctl.image.diff import Changes, _sort_key, change_json, changes
    from quorumctl.image.model import Image, add_topic, partition_from_record
    from quorumctl.image.view import flatten

    def image(spec):
        img = Image()
        for tid, name, leaders in spec:
            add_topic(img, tid, name)
            for p, leader in leaders.items():
                img.topics[tid].partitions[p] = partition_from_record(
                    {"replicas": [1, 2], "isr": [1, 2], "leader": leader}
                )
        return img

    a = image(
        [
            ("AAAAAAAAAAAAAAAAAAAAAQ", "7", {0: 1, 1: 1}),
            ("AAAAAAAAAAAAAAAAAAAAAg", "007", {0: 1}),
            ("AAAAAAAAAAAAAAAAAAAAAw", "x", {0: 1, 10: 2, 2: 1}),
        ]
    )
    b = image(
        [
            ("AAAAAAAAAAAAAAAAAAAAAQ", "7", {0: 2}),
            ("AAAAAAAAAAAAAAAAAAAABA", "07", {0: 1, 3: 2}),
            ("AAAAAAAAAAAAAAAAAAAAAw", "x", {0: 1, 10: 1, 2: 2}),
            ("AAAAAAAAAAAAAAAAAAAABQ", "-1", {0: 1}),
        ]
    )
    whole = [
        change_json(p, x, y)
        for p, (x, y) in sorted(changes(flatten(a), flatten(b)).items(), key=lambda kv: _sort_key(kv[0]))
    ]
    ch = Changes(a, b)
    assert list(ch) == whole and len(ch) == 11
    assert [c["path"] for c in ch] == [
        "/topics/-1",
        "/topics/-1/0",
        "/topics/007",
        "/topics/07",
        "/topics/7/0",
        "/topics/007/0",
        "/topics/07/0",
        "/topics/7/1",
        "/topics/07/3",
        "/topics/x/2",
        "/topics/x/10",
    ]
    assert ch.summary == {
        "leaderChanged": 3,
        "partitionsChanged": 3,
        "partitionsCreated": 3,
        "partitionsDeleted": 2,
        "topicsCreated": 2,
        "topicsDeleted": 1,
    }


def test_image_names_and_find(cli, tmp_path):
    """--names lists a node's children (the metadata shell's ls); --find every path whose
    name (or, with a /, whole path) matches a glob (its find)."""
    tid = "AAAAAAAAAAAAAAAAAAAAAQ"
    recs = [
        ("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 21}),
        ("TopicRecord", 0, {"name": "orders", "topicId": tid}),
    ]
    recs += [
        (
            "PartitionRecord",
            0,
            {
                "partitionId": i,
                "topicId": tid,
                "replicas": [1],
                "isr": [1],
                "removingReplicas": [],
                "addingReplicas": [],
                "leader": 1,
                "leaderEpoch": 0,
                "partitionEpoch": 0,
            },
        )
        for i in range(2)
    ]
    d = str(_log(tmp_path, recs))
    code, out, err = cli("image", d, "/topics/orders", "--names")
    assert (code, out, err) == (0, "id\n0\n1\n", "")
    code, out, _ = cli("image", d, "/topics", "--names")
    assert out == "orders\n"
    code, out, _ = cli("image", d, "/topics/orders/0/leader", "--names")
    assert out == "leader\n"  # a leaf names itself, as ls on a file
    code, out, _ = cli("image", d, "--find", "isr")
    assert (code, out) == (0, "/topics/orders/0/isr\n/topics/orders/1/isr\n")
    code, out, _ = cli("image", d, "/topics", "--find", "/topics/*/1")
    assert out == "/topics/orders/1\n"
    code, out, _ = cli("image", d, "--find", "isr", "-o", "json")
    assert json.loads(out)["paths"] == ["/topics/orders/0/isr", "/topics/orders/1/isr"]
    code, _, err = cli("image", d, "--find", "x", "--names")
    assert code == 2 and err == "quorumctl: error: give --names or --find, not both\n"
