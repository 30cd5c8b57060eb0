"""spark-export without Spark: file discovery, batch-boundary splits, and the
row builder (typed columns, corruption rows), checked against quorumctl's own
decoder and hand-made fixtures. Needs pyarrow and numpy (the `spark` extra)."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import crc32c
import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numpy")

from quorumctl.errors import InputError  # noqa: E402
from quorumctl.records import compression  # noqa: E402
from quorumctl.records import metadata as md  # noqa: E402
from quorumctl.records.batch import BatchReader, encode_batch  # noqa: E402
from quorumctl.render.output import json_bytes  # noqa: E402
from quorumctl.spark import arrow, plan, rows, schema, synthetic  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CLUSTER = "c5M0_9gDSzSKNXLYtZaAnw"
TOPIC_ID = "Xu1e7V7tXu1e7V7tXu1e7Q"


def meta(name, version, data):
    return (None, md.encode_metadata(name, version, data))


def arrow_schema():
    return schema.arrow_schema()


def table_of(pieces, **kw):
    batches = list(arrow.arrow_batches(pieces, arrow_schema(), **kw))
    return pa.Table.from_batches(batches, schema=arrow_schema())


def rows_of(path, **kw):
    sf = plan.SourceFile(path=str(path), kind="segment", size=os.path.getsize(path))
    return table_of([plan.Piece(sf, 0, sf.size)], **kw).to_pylist()


def write(path, *batches):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(batches))
    return path


def log_dir(tmp_path, node_id=3, directory_id=None):
    """tmp/logdir/{meta.properties, bootstrap.checkpoint, __cluster_metadata-0/...}"""
    root = tmp_path / "logdir"
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    lines = [f"node.id={node_id}", "version=1", f"cluster.id={CLUSTER}"]
    if directory_id:
        lines.append(f"directory.id={directory_id}")
    (root / "meta.properties").write_text("#\n" + "\n".join(lines) + "\n")
    return root, part


# -- discovery ---------------------------------------------------------------------


def test_discovery_picks_metadata_files_and_log_dir_identity(tmp_path):
    root, part = log_dir(tmp_path, node_id=7, directory_id="OY1jR23lhEln5djMDNyeIQ")
    batch = encode_batch([meta("NoOpRecord", 0, {})], base_offset=0)
    write(part / "00000000000000000000.log", batch)
    write(part / "00000000000000000042-0000000003.checkpoint", batch)
    write(part / "00000000000000000000.index", b"\0" * 8)
    write(part / "quorum-state", b"{}")
    write(root / "bootstrap.checkpoint", batch)
    write(root / "topic-0" / "00000000000000000000.log", batch)  # a topic partition: skipped
    write(root / "cleaner-offset-checkpoint", b"0\n0\n")

    files = {os.path.basename(f.path): f for f in plan.source_files([str(tmp_path)])}
    assert sorted(files) == [
        "00000000000000000000.log",
        "00000000000000000042-0000000003.checkpoint",
        "bootstrap.checkpoint",
    ]
    seg = files["00000000000000000000.log"]
    assert (seg.kind, seg.segment_base_offset, seg.snapshot_end_offset) == ("segment", 0, None)
    snap = files["00000000000000000042-0000000003.checkpoint"]
    assert (snap.kind, snap.snapshot_end_offset, snap.snapshot_epoch, snap.segment_base_offset) == (
        "snapshot",
        42,
        3,
        None,
    )
    boot = files["bootstrap.checkpoint"]
    assert boot.kind == "bootstrap"
    for f in files.values():
        assert (f.cluster_id, f.node_id, f.directory_id) == (CLUSTER, 7, "OY1jR23lhEln5djMDNyeIQ")
        assert f.size == len(batch)


def test_discovery_errors_and_explicit_files(tmp_path):
    with pytest.raises(InputError, match="no such file or directory"):
        plan.source_files([str(tmp_path / "missing")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="nothing to read in it .expected a metadata log segment"):
        plan.source_files([str(tmp_path / "empty")])
    idx = write(tmp_path / "00000000000000000000.index", b"\0" * 8)
    with pytest.raises(InputError, match="not a file this command reads .expected a metadata log segment"):
        plan.source_files([str(idx)])
    # a .log named directly is read even outside a metadata log dir; no meta.properties: no identity
    seg = write(
        tmp_path / "copy" / "00000000000000000100.log", encode_batch([meta("NoOpRecord", 0, {})], base_offset=100)
    )
    (f,) = plan.source_files([str(seg)])
    assert (f.kind, f.segment_base_offset, f.cluster_id, f.node_id) == ("segment", 100, None, None)
    # globs
    root, part = log_dir(tmp_path)
    for base in (0, 5):
        write(part / f"{base:020d}.log", encode_batch([meta("NoOpRecord", 0, {})], base_offset=base))
    found = plan.source_files([str(tmp_path / "logdir" / "*" / "*.log")])
    assert [os.path.basename(f.path) for f in found] == [f"{0:020d}.log", f"{5:020d}.log"]


def test_file_uris_go_through_pyarrow_fs(tmp_path):
    root, part = log_dir(tmp_path, node_id=11)
    write(
        part / "00000000000000000000.log",
        encode_batch([meta("NoOpRecord", 0, {})], base_offset=0),
        encode_batch([meta("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 21})], base_offset=1),
    )
    uri = "file://" + str(root)
    (f,) = plan.source_files([uri])
    assert f.path == "file://" + str(part / "00000000000000000000.log")
    assert (f.cluster_id, f.node_id) == (CLUSTER, 11)
    t = table_of([plan.Piece(f, 0, f.size)]).to_pylist()
    assert [(r["offset"], r["record_type"], r["feature_level"]) for r in t] == [
        (0, "NO_OP_RECORD", None),
        (1, "FEATURE_LEVEL_RECORD", 21),
    ]
    assert t[0]["source_file"] == f.path


# -- splitting ------------------------------------------------------------------------


def test_cuts_are_batch_starts_and_pieces_tile_the_file(tmp_path):
    path = tmp_path / "__cluster_metadata-0" / "00000000000000000000.log"
    path.parent.mkdir()
    written = synthetic.write_segment(str(path), 3 << 20, seed=3, mix=synthetic.BULKY)
    starts = [b.position for b in BatchReader(str(path))]
    size = path.stat().st_size
    with open(path, "rb") as f:
        cuts = plan.batch_cuts(f, size, 100_000)
    assert len(cuts) > 20
    assert set(cuts) <= set(starts)
    assert all(b - a >= 100_000 for a, b in zip([0] + cuts, cuts))
    # each cut is the first batch start at or after the previous cut + every
    prev = 0
    for c in cuts:
        assert c == min(s for s in starts if s >= prev + 100_000)
        prev = c

    sf = plan.source_files([str(path)])[0]
    pieces = plan.split_file(sf, 100_000)
    assert pieces[0].start == 0 and pieces[-1].end == size and pieces[-1].last
    assert all(a.end == b.start for a, b in zip(pieces, pieces[1:]))
    # decoding piece by piece gives exactly the rows of the whole file
    whole = table_of([plan.Piece(sf, 0, size)])
    parts = table_of(pieces)
    assert parts.num_rows == whole.num_rows == written.records
    assert parts.equals(whole)
    assert parts.column("offset").to_pylist() == list(range(written.first_offset, written.last_offset + 1))


def test_cut_walk_stops_at_a_bad_length(tmp_path):
    good = b"".join(encode_batch([meta("NoOpRecord", 0, {})], base_offset=i) for i in range(50))
    bad = struct.pack(">qi", 50, 3) + b"\x01" * 200  # length 3 < 14: nothing after it can be trusted
    path = write(tmp_path / "x.log", good, bad)
    with open(path, "rb") as f:
        cuts = plan.batch_cuts(f, path.stat().st_size, 100)
    assert cuts and max(cuts) < len(good)


def test_packing_balances_tasks():
    files = [
        plan.SourceFile(f"/f{i}", "segment", size)
        for i, size in enumerate([40 << 20, 10 << 20, 10 << 20] + [1 << 10] * 100)
    ]
    cost = plan.DEFAULT_OPEN_COST
    total = sum(f.size + cost for f in files)
    split = plan.choose_split_bytes(files, plan.DEFAULT_SPLIT_SIZE, 6, cost)
    assert split == -(-total // 6)
    parts = plan.pack([plan.Piece(f, 0, f.size) for f in files], split, cost)
    assert len(parts) == 6 and sum(len(p) for p in parts) == 103
    loads = sorted(sum(x.size + cost for x in p) for p in parts)
    # the big files alone, the 100 small ones spread evenly over the other three tasks
    assert loads[3:] == [(10 << 20) + cost, (10 << 20) + cost, (40 << 20) + cost]
    assert loads[2] - loads[0] <= (1 << 10) + cost and sum(loads[:3]) == 100 * ((1 << 10) + cost)
    # within a task, pieces are in file order
    assert all([x.file.path for x in p] == sorted(x.file.path for x in p) for p in parts)
    assert plan.choose_split_bytes(files, 1 << 20, 2, cost) == 1 << 20
    assert plan.choose_split_bytes(files, plan.DEFAULT_SPLIT_SIZE, 10_000, cost) == cost
    assert plan.parse_size("128m") == 128 << 20 and plan.parse_size("4096") == 4096
    with pytest.raises(ValueError):
        plan.parse_size("lots")


# -- rows -------------------------------------------------------------------------------


def test_typed_columns_and_payload_of_every_kind(tmp_path):
    lc_key, lc_value = md.encode_control(
        md.LEADER_CHANGE,
        {"version": 0, "leaderId": 2, "voters": [{"voterId": 1}, {"voterId": 2}], "grantingVoters": [{"voterId": 2}]},
    )
    recs = [
        meta("TopicRecord", 0, {"name": "orders", "topicId": TOPIC_ID}),
        meta(
            "PartitionRecord",
            1,
            {
                "partitionId": 4,
                "topicId": TOPIC_ID,
                "replicas": [1, 2, 3],
                "isr": [1, 2],
                "removingReplicas": [],
                "addingReplicas": [],
                "leader": 2,
                "leaderEpoch": 9,
                "partitionEpoch": 3,
                "directories": [],
            },
        ),
        meta("PartitionChangeRecord", 0, {"partitionId": 4, "topicId": TOPIC_ID, "isr": [2], "leader": 2}),
        meta("PartitionChangeRecord", 0, {"partitionId": 5, "topicId": TOPIC_ID, "isr": [1, 3]}),
        meta("RemoveTopicRecord", 0, {"topicId": TOPIC_ID}),
        meta(
            "RegisterBrokerRecord",
            2,
            {
                "brokerId": 3,
                "incarnationId": TOPIC_ID,
                "brokerEpoch": 77,
                "endPoints": [],
                "features": [],
                "rack": None,
                "fenced": True,
            },
        ),
        meta("FenceBrokerRecord", 0, {"id": 3, "epoch": 77}),
        meta("UnfenceBrokerRecord", 0, {"id": 3, "epoch": 77}),
        meta("BrokerRegistrationChangeRecord", 0, {"brokerId": 3, "brokerEpoch": 78, "fenced": 1}),
        meta("BrokerRegistrationChangeRecord", 0, {"brokerId": 3, "brokerEpoch": 79, "fenced": -1}),
        meta("BrokerRegistrationChangeRecord", 1, {"brokerId": 3, "brokerEpoch": 80, "inControlledShutdown": 1}),
        meta("UnregisterBrokerRecord", 0, {"brokerId": 3, "brokerEpoch": 80}),
        meta("ProducerIdsRecord", 0, {"brokerId": 1, "brokerEpoch": 5, "nextProducerId": 1000}),
        meta("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 21}),
        meta("ConfigRecord", 0, {"resourceType": 2, "resourceName": "orders", "name": "retention.ms", "value": "1000"}),
        meta("ConfigRecord", 0, {"resourceType": 4, "resourceName": "", "name": "x", "value": None}),
        meta("ConfigRecord", 0, {"resourceType": 99, "resourceName": "?", "name": "y", "value": "z"}),
    ]
    path = write(
        tmp_path / "t.log",
        encode_batch(recs, base_offset=100, leader_epoch=6, base_timestamp=1_700_000_000_000),
        encode_batch(
            [(lc_key, lc_value)],
            base_offset=100 + len(recs),
            leader_epoch=7,
            control=True,
            base_timestamp=1_700_000_000_500,
        ),
    )
    got = rows_of(path)
    assert len(got) == len(recs) + 1
    typed = [
        "topic_name",
        "topic_id",
        "partition_id",
        "leader",
        "leader_epoch",
        "replicas",
        "isr",
        "broker_id",
        "broker_epoch",
        "fenced",
        "feature_name",
        "feature_level",
        "config_resource_type",
        "config_resource_name",
        "config_key",
        "config_value",
    ]

    def t(row):
        return {k: row[k] for k in typed if row[k] is not None}

    assert t(got[0]) == {"topic_name": "orders", "topic_id": TOPIC_ID}
    assert t(got[1]) == {
        "topic_id": TOPIC_ID,
        "partition_id": 4,
        "leader": 2,
        "leader_epoch": 9,
        "replicas": [1, 2, 3],
        "isr": [1, 2],
    }
    assert t(got[2]) == {"topic_id": TOPIC_ID, "partition_id": 4, "leader": 2, "isr": [2]}
    assert t(got[3]) == {"topic_id": TOPIC_ID, "partition_id": 5, "isr": [1, 3]}  # leader unchanged
    assert t(got[4]) == {"topic_id": TOPIC_ID}
    assert t(got[5]) == {"broker_id": 3, "broker_epoch": 77, "fenced": True}
    assert t(got[6]) == {"broker_id": 3, "broker_epoch": 77, "fenced": True}
    assert t(got[7]) == {"broker_id": 3, "broker_epoch": 77, "fenced": False}
    assert t(got[8]) == {"broker_id": 3, "broker_epoch": 78, "fenced": True}
    assert t(got[9]) == {"broker_id": 3, "broker_epoch": 79, "fenced": False}
    assert t(got[10]) == {"broker_id": 3, "broker_epoch": 80}
    assert t(got[11]) == {"broker_id": 3, "broker_epoch": 80}
    assert t(got[12]) == {"broker_id": 1, "broker_epoch": 5}
    assert t(got[13]) == {"feature_name": "metadata.version", "feature_level": 21}
    assert t(got[14]) == {
        "config_resource_type": "TOPIC",
        "config_resource_name": "orders",
        "config_key": "retention.ms",
        "config_value": "1000",
    }
    assert t(got[15]) == {"config_resource_type": "BROKER", "config_resource_name": "", "config_key": "x"}
    assert t(got[16])["config_resource_type"] == "99"
    assert t(got[-1]) == {"leader": 2, "leader_epoch": 7}
    assert got[-1]["record_type"] == "LEADER_CHANGE" and got[-1]["record_kind"] == "control"
    assert got[-1]["batch_is_control"] is True and got[-1]["batch_leader_epoch"] == 7

    # the decoded payload is exactly quorumctl's decoder output, per record
    for (key, value), row in zip(recs, got):
        d = md.decode_metadata(value)
        assert row["payload_json"] == json_bytes(d.to_json()).decode()
        assert (row["record_kind"], row["record_type"], row["record_api_key"], row["record_version"]) == (
            "metadata",
            d.type_name,
            d.api_key,
            d.version,
        )
        assert row["value"] == value and row["key"] is None and row["headers"] == []
        assert row["decode_error"] is None
    assert json.loads(got[-1]["payload_json"]) == {
        "type": "LEADER_CHANGE",
        "version": 0,
        "data": {
            "version": 0,
            "leaderId": 2,
            "voters": [{"voterId": 1}, {"voterId": 2}],
            "grantingVoters": [{"voterId": 2}],
        },
    }
    first = got[0]
    assert (
        first["offset"],
        first["record_index"],
        first["batch_base_offset"],
        first["batch_last_offset"],
        first["batch_record_count"],
        first["batch_leader_epoch"],
        first["batch_codec"],
        first["batch_crc_valid"],
        first["batch_position"],
        first["row_kind"],
        first["corrupt"],
    ) == (100, 0, 100, 100 + len(recs) - 1, len(recs), 6, "none", True, 0, "record", False)
    assert [r["record_index"] for r in got[: len(recs)]] == list(range(len(recs)))
    assert first["timestamp_ms"] == 1_700_000_000_000
    assert first["timestamp"].isoformat() == "2023-11-14T22:13:20+00:00"
    assert first["date"].isoformat() == "2023-11-14"


def test_codecs_headers_log_append_time_and_odd_timestamps(tmp_path):
    recs = [meta("NoOpRecord", 0, {}), meta("FeatureLevelRecord", 0, {"name": "kraft.version", "featureLevel": 1})]
    batches = [
        encode_batch(recs, base_offset=i * 2, compression_codec=codec, base_timestamp=1000)
        for i, codec in enumerate([compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD])
    ]
    hdr = [(b"k", md.encode_metadata("NoOpRecord", 0, {}), [("h1", b"v1"), ("h2", None)], 5000)]
    batches.append(encode_batch(hdr, base_offset=8, base_timestamp=4000, max_timestamp=9000, log_append_time=True))
    batches.append(encode_batch([meta("NoOpRecord", 0, {})], base_offset=9, base_timestamp=-1))
    got = rows_of(write(tmp_path / "c.log", *batches))
    assert [r["batch_codec"] for r in got[:8:2]] == ["gzip", "snappy", "lz4", "zstd"]
    assert [r["feature_name"] for r in got[1:8:2]] == ["kraft.version"] * 4
    h = got[8]
    assert h["key"] == b"k" and h["headers"] == [{"key": "h1", "value": b"v1"}, {"key": "h2", "value": None}]
    assert (h["batch_timestamp_type"], h["timestamp_ms"], h["batch_max_timestamp"]) == (
        "LogAppendTime",
        9000,
        9000,
    )  # Kafka reports maxTimestamp under LogAppendTime
    neg = got[9]
    assert neg["timestamp_ms"] == -1 and neg["timestamp"] is None and neg["date"] is None


def test_corruption_becomes_flagged_rows(tmp_path):
    good = [encode_batch([meta("NoOpRecord", 0, {})], base_offset=i) for i in range(3)]
    crc_bad = bytearray(encode_batch([meta("FeatureLevelRecord", 0, {"name": "a", "featureLevel": 1})], base_offset=3))
    crc_bad[-3] ^= 0x02  # featureLevel 1 -> 3: the CRC fails, the record decodes
    undecodable = bytearray(encode_batch([meta("NoOpRecord", 0, {})], base_offset=4))
    struct.pack_into(">i", undecodable, 57, 5)  # claims 5 records, holds 1
    torn = encode_batch([meta("NoOpRecord", 0, {})], base_offset=5)[:40]
    path = write(tmp_path / "bad.log", *good, bytes(crc_bad), bytes(undecodable), torn)
    stats = rows.Stats()
    got = rows_of(path, stats=stats)
    kinds = [(r["row_kind"], r["corrupt"], r["offset"]) for r in got]
    assert kinds == [
        ("record", False, 0),
        ("record", False, 1),
        ("record", False, 2),
        ("record", True, 3),
        ("batch_error", True, None),
        ("tail_error", True, None),
    ]
    crc_row, batch_row, tail_row = got[3], got[4], got[5]
    assert crc_row["batch_crc_valid"] is False and "CRC-32C mismatch" in crc_row["error"]
    assert crc_row["decode_error"] is None and crc_row["feature_level"] == 3
    assert batch_row["batch_base_offset"] == 4 and batch_row["batch_position"] == sum(map(len, good)) + len(crc_bad)
    assert batch_row["batch_crc_valid"] is False  # the record count is CRC-covered too
    pos = sum(map(len, good)) + len(crc_bad)
    (stored,) = struct.unpack_from(">I", undecodable, 17)
    assert batch_row["error"] == (
        f"CRC-32C mismatch in batch at byte {pos} (offset 4): stored {stored:#010x}, computed "
        f"{crc32c.crc32c(bytes(undecodable[21:])):#010x}; batch at offset 4: record data cut short "
        f"(at byte {pos + 61})"
    )
    assert tail_row["batch_position"] == path.stat().st_size - 40
    assert tail_row["error"].startswith(f"torn tail at byte {path.stat().st_size - 40}")
    assert stats.as_dict() == {"batches": 5, "records": 4, "errors": 3, "decode_errors": 0, "corrupt_records": 1}


def test_zero_tail_is_the_end_and_unreadable_file_is_a_row(tmp_path):
    path = write(tmp_path / "z.log", encode_batch([meta("NoOpRecord", 0, {})], base_offset=0), bytes(4096))
    stats = rows.Stats()
    got = rows_of(path, stats=stats)
    assert [r["row_kind"] for r in got] == ["record"] and stats.errors == 0
    gone = plan.SourceFile(path=str(tmp_path / "vanished.log"), kind="segment", size=100)
    (row,) = table_of([plan.Piece(gone, 0, 100)]).to_pylist()
    assert row["row_kind"] == "file_error" and row["corrupt"] is True
    assert row["error"].startswith(f"cannot read {tmp_path / 'vanished.log'}")
    assert row["source_file"] == str(tmp_path / "vanished.log") and row["offset"] is None


def test_small_arrow_batches_and_repeated_values_match_one_big_batch(tmp_path):
    path = tmp_path / "s.log"
    synthetic.write_segment(str(path), 400_000, seed=5)
    one = rows_of(path, batch_rows=1 << 30)
    small = rows_of(path, batch_rows=7)
    assert one == small and len(one) > 1000


def test_body_memo_keeps_a_body_from_its_second_sighting():
    cache = rows.BodyCache(limit=2)
    cache.remember(b"a", "rel-a")
    assert cache.get(b"a") is None  # seen once: a body that never repeats costs no memo
    cache.remember(b"a", "rel-a")
    assert cache.get(b"a") == "rel-a"
    cache.remember(b"b", "rel-b"), cache.remember(b"b", "rel-b")
    cache.remember(b"c", "rel-c"), cache.remember(b"c", "rel-c")  # full: starts over
    assert (cache.get(b"a"), cache.get(b"b"), cache.get(b"c")) == (None, None, "rel-c")


def test_memoised_bodies_give_the_rows_a_fresh_decode_gives(tmp_path, monkeypatch):
    # generated logs repeat NoOp heartbeat bodies as real ones do; every memo
    # hit must still carry its own batch's offsets and timestamps
    path = tmp_path / "s.log"
    synthetic.write_segment(str(path), 400_000, seed=5)
    hits = []
    get = rows.BodyCache.get
    monkeypatch.setattr(rows.BodyCache, "get", lambda self, key: hits.append(get(self, key)) or hits[-1])
    memo = rows_of(path)
    assert sum(h is not None for h in hits) > 100
    monkeypatch.setattr(rows, "SMALL_BATCH", 0)  # no body is small: nothing memoised
    fresh = rows_of(path)
    assert memo == fresh and len(memo) > 1000


def test_docs_schema_table_matches_the_code():
    doc = (REPO / "docs" / "parquet.md").read_text()
    documented = []
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`") and cells[0].endswith("`") and cells[1].startswith("`"):
            documented.append((cells[0].strip("`"), cells[1].strip("`")))
    assert documented == [(n, t) for n, t, _, _ in schema.COLUMNS]
