"""spark-export on a real local[2] Spark: the corpus against CATALOG.json and
quorumctl's own decoder, read back with Spark and with pyarrow; both writers;
corrupt input; and byte-range splitting of a generated 300 MB segment."""

from __future__ import annotations

import json
import os
import random
import struct
from collections import Counter, defaultdict
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from quorumctl.errors import InputError  # noqa: E402
from quorumctl.records import metadata as md  # noqa: E402
from quorumctl.records.batch import BatchReader, display_timestamp, encode_batch  # noqa: E402
from quorumctl.records.metadata_schemas import TYPE_NAMES  # noqa: E402
from quorumctl.render.output import json_bytes  # noqa: E402
from quorumctl.spark import job as ex  # noqa: E402
from quorumctl.spark import schema, synthetic  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
EXPORTED_KINDS = ("metadata-log", "snapshot", "bootstrap.checkpoint")


def read_table(out, columns=None):
    return pq.read_table(str(out), columns=columns)


def meta(name, version, data):
    return (None, md.encode_metadata(name, version, data))


# -- the corpus ----------------------------------------------------------------------


def catalog_files():
    cat = json.loads((CORPUS / "CATALOG.json").read_text())
    out = {}
    for repo in cat.values():
        for f in repo["files"]:
            if f["kind"] in EXPORTED_KINDS:
                out[str(CORPUS / f["local"])] = f["stats"]
    return out


@pytest.fixture(scope="module")
def corpus_export(spark, tmp_path_factory):
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    out = tmp_path_factory.mktemp("corpus") / "parquet"
    summary = ex.export(ex.ExportRequest(paths=[str(CORPUS)], out=str(out), progress=False), spark=spark)
    return summary, out


def expected_types(stats) -> Counter:
    c = Counter()
    for name, n in stats["metadata_types"].items():
        c[TYPE_NAMES[md.API_KEYS[name]]] += n
    for name, n in stats["control"].items():
        c[name] += n
    return c


@pytest.mark.shared("corpus")
def test_corpus_rows_and_type_tallies_match_the_catalog(corpus_export, spark):
    summary, out = corpus_export
    cat = catalog_files()
    assert summary.files == len(cat) == 161
    assert summary.records == summary.rows == sum(s["records"] for s in cat.values())
    assert summary.batches == sum(s["batches"] for s in cat.values())
    assert (summary.errors, summary.decode_errors, summary.corrupt_records) == (0, 0, 0)
    assert summary.bytes == sum(os.path.getsize(p) for p in cat)

    # pyarrow
    t = read_table(out, ["source_file", "record_type", "row_kind"])
    per_file: dict = defaultdict(Counter)
    for f, rt, kind in zip(*(t.column(c).to_pylist() for c in ("source_file", "record_type", "row_kind"))):
        assert kind == "record"
        per_file[f][rt] += 1
    assert set(per_file) == set(cat)
    for path, stats in cat.items():
        assert sum(per_file[path].values()) == stats["records"], path
        assert per_file[path] == expected_types(stats), path

    # Spark, reading the same Parquet
    df = spark.read.parquet(str(out))
    counts = {r["source_file"]: r["count"] for r in df.groupBy("source_file").count().collect()}
    assert counts == {p: s["records"] for p, s in cat.items()}
    tallies = Counter({r["record_type"]: r["count"] for r in df.groupBy("record_type").count().collect()})
    assert tallies == sum((expected_types(s) for s in cat.values()), Counter())


def _decoder_samples(path: str, rnd: random.Random, k: int = 4):
    """(offset -> expected row values) for the first, last and k random records,
    straight from quorumctl's decoder."""
    entries = []
    for batch in BatchReader(path):
        for i, r in enumerate(batch.records()):
            entries.append((batch, i, r))
    picks = {0, len(entries) - 1} | {rnd.randrange(len(entries)) for _ in range(k)}
    out = {}
    for j in sorted(picks):
        batch, i, r = entries[j]
        d = md.decode_control(r.key, r.value) if batch.is_control else md.decode_metadata(r.value)
        out[r.offset] = {
            "offset": r.offset,
            "record_index": i,
            "timestamp_ms": display_timestamp(batch, r),
            "key": r.key,
            "value": r.value,
            "headers": [{"key": k_, "value": v} for k_, v in r.headers],
            "record_kind": d.kind,
            "record_type": d.type_name,
            "record_version": d.version,
            "payload_json": json_bytes(d.to_json()).decode(),
            "batch_position": batch.position,
            "batch_base_offset": batch.base_offset,
            "batch_leader_epoch": batch.leader_epoch,
            "batch_codec": batch.compression_name,
            "batch_is_control": batch.is_control,
            "batch_is_transactional": batch.is_transactional,
            "batch_timestamp_type": batch.timestamp_type,
            "batch_crc_valid": batch.crc_valid(),
            "batch_crc": batch.crc,
            "producer_id": batch.producer_id,
        }
    return out


@pytest.mark.shared("corpus")
def test_corpus_values_match_quorumctls_decoder_in_every_file(corpus_export, spark):
    summary, out = corpus_export
    rnd = random.Random(20240901)
    expected = {}
    for path in sorted(catalog_files()):
        for off, row in _decoder_samples(path, rnd).items():
            expected[(path, off)] = row
    cols = (
        ["source_file"]
        + list(next(iter(expected.values())).keys())
        + ["cluster_id", "node_id", "segment_base_offset", "snapshot_end_offset"]
    )
    # pyarrow
    t = read_table(out, cols)
    keys = list(zip(t.column("source_file").to_pylist(), t.column("offset").to_pylist()))
    index = {k: i for i, k in enumerate(keys) if k in expected}
    assert len(index) == len(expected) > 161 * 2
    got = t.take(pa.array([index[k] for k in expected])).to_pylist()
    for (path, off), row in zip(expected, got):
        assert {k: row[k] for k in expected[(path, off)]} == expected[(path, off)], (path, off)
        name = os.path.basename(path)
        if name.endswith(".log"):
            assert row["segment_base_offset"] == int(name.split(".")[0])
        elif name != "bootstrap.checkpoint":
            assert row["snapshot_end_offset"] == int(name.split("-")[0])

    # Spark: the same sample through a join on (source_file, offset)
    keys_df = spark.createDataFrame([(p, o) for p, o in expected], "source_file string, offset bigint")
    rows = spark.read.parquet(str(out)).join(keys_df, ["source_file", "offset"]).collect()
    assert len(rows) == len(expected)
    for r in rows:
        want = expected[(r["source_file"], r["offset"])]
        got_row = r.asDict(recursive=True)
        got_row["key"] = None if got_row["key"] is None else bytes(got_row["key"])
        got_row["value"] = bytes(got_row["value"])
        assert {k: got_row[k] for k in want} == want


@pytest.mark.shared("corpus")
def test_corpus_log_dir_identity_from_meta_properties(corpus_export):
    _, out = corpus_export
    t = read_table(out, ["source_file", "cluster_id", "node_id"])
    seen = {}
    for f, c, n in zip(*(t.column(x).to_pylist() for x in ("source_file", "cluster_id", "node_id"))):
        seen[f] = (c, n)
    for path, (cluster, node) in seen.items():
        d = os.path.dirname(path)
        if os.path.basename(d).startswith("__cluster_metadata-"):
            d = os.path.dirname(d)
        props = os.path.join(d, "meta.properties")
        if os.path.exists(props):
            text = dict(
                line.split("=", 1)
                for line in open(props).read().splitlines()
                if "=" in line and not line.startswith("#")
            )
            assert cluster == text.get("cluster.id") and node == int(text.get("node.id", text.get("broker.id")))
        else:
            assert (cluster, node) == (None, None)
    assert sum(1 for c, _ in seen.values() if c) > 100


# -- corrupt input, both writers ------------------------------------------------------


@pytest.fixture(scope="module")
def damaged_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("damaged") / "node1"
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    (root / "meta.properties").write_text("node.id=1\nversion=1\ncluster.id=c5M0_9gDSzSKNXLYtZaAnw\n")
    good = synthetic.write_segment(str(part / f"{0:020d}.log"), 2 << 20, seed=11)
    base = good.last_offset + 1
    ok = [encode_batch([meta("NoOpRecord", 0, {})], base_offset=base + i) for i in range(3)]
    crc_bad = bytearray(encode_batch([meta("NoOpRecord", 0, {})], base_offset=base + 3))
    crc_bad[30] ^= 0x01  # a baseTimestamp bit: CRC fails, records decode
    undecodable = bytearray(encode_batch([meta("NoOpRecord", 0, {})], base_offset=base + 4))
    struct.pack_into(">i", undecodable, 57, 5)
    torn = encode_batch([meta("NoOpRecord", 0, {})], base_offset=base + 5)[:30]
    (part / f"{base:020d}.log").write_bytes(b"".join(ok) + bytes(crc_bad) + bytes(undecodable) + torn)
    return root, good


@pytest.mark.parametrize("writer", ["pyarrow", "spark"])
def test_corrupt_file_gives_flagged_rows_and_the_rest_completes(spark, damaged_dir, tmp_path, writer):
    root, good = damaged_dir
    out = tmp_path / "out"
    s = ex.export(ex.ExportRequest(paths=[str(root)], out=str(out), writer=writer, progress=False), spark=spark)
    assert (s.files, s.errors, s.corrupt_records) == (2, 3, 1)
    assert s.records == good.records + 4
    assert s.rows == good.records + 4 + 2
    assert s.batches == good.batches + 5
    assert s.exit_code == 1
    t = read_table(out).sort_by([("source_file", "ascending"), ("batch_position", "ascending")])
    flagged = [r for r in t.to_pylist() if r["corrupt"]]
    assert [(r["row_kind"], r["offset"]) for r in flagged] == [
        ("record", good.last_offset + 4),
        ("batch_error", None),
        ("tail_error", None),
    ]
    assert "CRC-32C mismatch" in flagged[0]["error"] and "record data cut short" in flagged[1]["error"]
    assert flagged[2]["error"].startswith("torn tail")
    good_rows = [r for r in t.to_pylist() if r["source_file"].endswith(f"{0:020d}.log")]
    assert [r["offset"] for r in good_rows] == list(range(good.records))
    assert Counter(r["record_type"] for r in good_rows) == good.types
    assert {r["cluster_id"] for r in t.to_pylist()} == {"c5M0_9gDSzSKNXLYtZaAnw"}


def test_both_writers_and_the_data_source_give_the_same_rows(spark, damaged_dir, tmp_path):
    root, good = damaged_dir
    a, b = tmp_path / "a", tmp_path / "b"
    ex.export(ex.ExportRequest(paths=[str(root)], out=str(a), writer="pyarrow", progress=False), spark=spark)
    ex.export(ex.ExportRequest(paths=[str(root)], out=str(b), writer="spark", progress=False), spark=spark)
    order = [("source_file", "ascending"), ("batch_position", "ascending"), ("record_index", "ascending")]
    ta, tb = read_table(a).sort_by(order), read_table(b).sort_by(order)
    assert ta.num_rows == tb.num_rows == good.records + 6
    assert ta.to_pylist() == tb.to_pylist()
    # analysts' entry point: spark.read.format("kraft")
    from quorumctl.spark import read_kraft

    df = read_kraft(spark, str(root), splitSize="256k")
    assert df.count() == ta.num_rows
    segments = sorted(str(p) for p in (root / "__cluster_metadata-0").glob("*.log"))
    assert read_kraft(spark, segments).where("cluster_id IS NOT NULL").count() == ta.num_rows
    assert df.schema == schema.struct_type()
    assert df.where("row_kind = 'record'").selectExpr("max(offset)").first()[0] == good.last_offset + 4


def test_partitioned_output_reads_back_with_spark_and_pyarrow(spark, damaged_dir, tmp_path):
    root, good = damaged_dir
    for writer in ("pyarrow", "spark"):
        out = tmp_path / writer
        ex.export(
            ex.ExportRequest(
                paths=[str(root)], out=str(out), writer=writer, partition_by=["record_type", "date"], progress=False
            ),
            spark=spark,
        )
        dirs = sorted(p.name for p in out.iterdir() if p.is_dir())
        assert "record_type=NO_OP_RECORD" in dirs and "record_type=__HIVE_DEFAULT_PARTITION__" in dirs
        df = spark.read.parquet(str(out))
        tallies = {r["record_type"]: r["count"] for r in df.groupBy("record_type").count().collect()}
        assert tallies.pop(None) == 2  # the batch_error and tail_error rows
        assert tallies == {k: v + (4 if k == "NO_OP_RECORD" else 0) for k, v in good.types.items()}
        assert df.where("date = DATE'2025-01-01'").count() > 0
        t = pq.read_table(str(out), partitioning="hive")
        assert t.num_rows == good.records + 6


def test_modes(spark, damaged_dir, tmp_path):
    root, good = damaged_dir
    out = tmp_path / "o"
    ex.export(ex.ExportRequest(paths=[str(root)], out=str(out), progress=False), spark=spark)
    with pytest.raises(ex.InputError, match="already exists"):
        ex.export(ex.ExportRequest(paths=[str(root)], out=str(out), progress=False), spark=spark)
    ex.export(ex.ExportRequest(paths=[str(root)], out=str(out), mode="append", progress=False), spark=spark)
    assert read_table(out).num_rows == 2 * (good.records + 6)
    ex.export(ex.ExportRequest(paths=[str(root)], out=str(out), mode="overwrite", progress=False), spark=spark)
    assert read_table(out).num_rows == good.records + 6
    assert not (out / "_temporary").exists() and (out / "_SUCCESS").exists()


# -- splitting a large segment --------------------------------------------------------


def test_300mb_segment_split_by_byte_ranges_gives_exactly_the_single_task_rows(spark, tmp_path):
    from pyspark.sql import functions as F

    part = tmp_path / "big" / "__cluster_metadata-0"
    part.mkdir(parents=True)
    w = synthetic.write_segment(str(part / f"{0:020d}.log"), 300 << 20, seed=42, mix=synthetic.BULKY)
    assert w.bytes > 290 << 20 and w.records > 100_000

    one, many = tmp_path / "one", tmp_path / "many"
    s1 = ex.export(
        ex.ExportRequest(paths=[str(part)], out=str(one), split_size=1 << 40, min_partitions=1, progress=False),
        spark=spark,
    )
    s2 = ex.export(ex.ExportRequest(paths=[str(part)], out=str(many), split_size=8 << 20, progress=False), spark=spark)
    assert s1.tasks == 1 and s2.tasks >= 30
    for s in (s1, s2):
        assert (s.records, s.batches, s.errors) == (w.records, w.batches, 0)

    def fingerprint(out):
        df = spark.read.parquet(str(out))
        cols = [F.col(c) for c in schema.NAMES]
        return df.select("offset", "batch_position", F.xxhash64(*cols).alias("h")).orderBy("offset").collect()

    a, b = fingerprint(one), fingerprint(many)
    assert len(a) == len(b) == w.records
    assert [r["offset"] for r in a] == list(range(w.records))  # none lost, none twice
    assert a == b  # and every column equal
    tallies = Counter(
        {r["record_type"]: r["count"] for r in spark.read.parquet(str(many)).groupBy("record_type").count().collect()}
    )
    assert tallies == w.types


# -- Kafka 4.4's layout: the bootstrap records in each controller's zero snapshot ----------------


def test_44_layout_zero_snapshots_give_the_feature_level_rows(spark, cli, tmp_path):
    """Directories in Kafka 4.4's layout (KAFKA-19648), as `bootstrap format --kafka-version 4.4`
    writes them (byte for byte 4.4's kafka-storage: tests/kafka/test_kafka_storage.py): a static
    controller at 4.4's default level, a --standalone one at 4.4-IV2 and a broker. Each controller's
    `00000000000000000000-0000000000.checkpoint` is exported as a snapshot (end offset 0, epoch 0)
    whose rows are its bootstrap records; the broker's (meta.properties only) is nothing to read."""
    code, cid, _ = cli("bootstrap", "random-uuid")
    cid = cid.strip()
    layouts = {  # name -> (config lines, format options)
        "static": ("process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:29601\n", []),
        "standalone": (
            "process.roles=controller\nnode.id=2\ncontroller.quorum.bootstrap.servers=127.0.0.1:29601\n"
            "unstable.feature.versions.enable=true\n",
            ["--standalone", "--release-version", "4.4-IV2"],
        ),
        "broker": (
            "process.roles=broker\nnode.id=3\ncontroller.quorum.bootstrap.servers=127.0.0.1:29601\n",
            ["--no-initial-controllers"],
        ),
    }
    for port, (name, (conf, opts)) in enumerate(layouts.items(), 29601):
        listener = "CONTROLLER" if name != "broker" else "PLAINTEXT"
        path = tmp_path / f"{name}.properties"
        path.write_text(
            f"{conf}listeners={listener}://127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\n"
            f"log.dirs={tmp_path / name}\n"
        )
        cli("bootstrap", "format", "-c", str(path), "-t", cid, "--kafka-version", "4.4", *opts, "--apply", code=0)
    out = tmp_path / "parquet"
    with pytest.raises(InputError, match=r"/broker: nothing to read in it \(expected a metadata log segment"):
        ex.export(ex.ExportRequest(paths=[str(tmp_path / "broker")], out=str(out), progress=False), spark=spark)
    summary = ex.export(
        ex.ExportRequest(paths=[str(tmp_path / n) for n in ("static", "standalone")], out=str(out), progress=False),
        spark=spark,
    )
    assert (summary.files, summary.errors, summary.decode_errors, summary.corrupt_records) == (2, 0, 0, 0)
    cols = ["source_file", "file_kind", "node_id", "snapshot_end_offset", "snapshot_epoch", "row_kind"]
    cols += ["record_kind", "record_type", "payload_json", "offset"]
    rows = read_table(out, cols).to_pylist()
    assert {r["source_file"] for r in rows} == {
        str(tmp_path / n / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint")
        for n in ("static", "standalone")
    }
    assert {(r["file_kind"], r["snapshot_end_offset"], r["snapshot_epoch"], r["row_kind"]) for r in rows} == {
        ("snapshot", 0, 0, "record")
    }
    levels: dict = {}
    kinds: dict = {}
    for r in sorted(rows, key=lambda r: (r["node_id"], r["offset"])):
        kinds.setdefault(r["node_id"], []).append((r["record_kind"], r["record_type"]))
        if r["record_type"] == "FEATURE_LEVEL_RECORD":
            data = json.loads(r["payload_json"])["data"]
            levels.setdefault(r["node_id"], {})[data["name"]] = data["featureLevel"]
    common = {"eligible.leader.replicas.version": 1, "group.version": 1, "streams.version": 1, "transaction.version": 2}
    assert levels == {
        1: {"metadata.version": 30, "share.version": 1, **common},  # 4.3-IV0, 4.4's default
        2: {"metadata.version": 33, "share.version": 2, **common},  # 4.4-IV2
    }
    features = [("metadata", "FEATURE_LEVEL_RECORD")] * 6
    header, footer = ("control", "SNAPSHOT_HEADER"), ("control", "SNAPSHOT_FOOTER")
    assert kinds == {
        1: [header, *features, footer],
        2: [header, ("control", "KRAFT_VERSION"), ("control", "KRAFT_VOTERS"), *features, footer],
    }, kinds
    (voters,) = [json.loads(r["payload_json"]) for r in rows if r["record_type"] == "KRAFT_VOTERS"]
    did = (tmp_path / "standalone" / "meta.properties").read_text().split("directory.id=")[1].split()[0]
    assert [(v["voterId"], v["voterDirectoryId"]) for v in voters["data"]["voters"]] == [(2, did)], voters
