"""docs/analysis.md's Spark SQL run on the export of the shared corpus (written
zstd-compressed and partitioned by date, as an analyst would), each answer
checked against the same question answered in plain Python from the same
Parquet files; the codecs of --compression; and schema evolution: an export
appended to a dataset written with an older column set, read with mergeSchema.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pc = pytest.importorskip("pyarrow.compute")

from quorumctl.spark import job as ex  # noqa: E402
from quorumctl.spark import schema, synthetic  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"
DOC = REPO / "docs" / "analysis.md"


def doc_queries() -> dict[str, str]:
    """The ```sql blocks of docs/analysis.md by their `-- name:` line."""
    out = {}
    for block in re.findall(r"```sql\n(.*?)```", DOC.read_text(), re.S):
        m = re.match(r"-- name: (\w+)\n", block)
        if m:
            out[m.group(1)] = block[m.end() :].strip()
    return out


@pytest.fixture(scope="module")
def corpus(spark, tmp_path_factory):
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    out = tmp_path_factory.mktemp("analysis") / "kraft"
    summary = ex.export(
        ex.ExportRequest(paths=[str(CORPUS)], out=str(out), partition_by=["date"], progress=False), spark=spark
    )
    spark.read.parquet(str(out)).createOrReplaceTempView("kraft")
    cols = [
        "cluster_id",
        "offset",
        "timestamp",
        "file_kind",
        "record_type",
        "topic_id",
        "partition_id",
        "leader",
        "broker_id",
        "broker_epoch",
        "fenced",
        "config_resource_type",
        "config_resource_name",
        "config_key",
        "config_value",
    ]
    t = pq.read_table(str(out), columns=cols)
    t = t.filter(pc.equal(t.column("file_kind"), "segment"))
    return summary, out, t


def nulls_first(row) -> tuple:
    """A sort key ordering None first, as Spark's ascending ORDER BY does."""
    return tuple((v is not None, v) for v in row)


def hour(ts) -> str:
    return ts.strftime("%Y-%m-%dT%H:00")


def spark_rows(spark, query: str) -> list[dict]:
    """The query's rows, timestamps as UTC ISO minutes (through Arrow: no local-time conversion)."""
    rows = spark.sql(query).toArrow().to_pylist()
    for r in rows:
        for k, v in r.items():
            if hasattr(v, "strftime"):
                r[k] = v.strftime("%Y-%m-%dT%H:%M")
    return rows


def distinct(t, record_types, columns):
    t = t.filter(pc.is_in(t.column("record_type"), pa.array(record_types)))
    return set(zip(*(t.column(c).to_pylist() for c in columns)))


@pytest.mark.shared("corpus")
def test_export_is_zstd_and_partitioned_by_date(corpus):
    summary, out, _ = corpus
    assert summary.records == 709_315 and summary.errors == 0
    dirs = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert dirs and all(re.fullmatch(r"date=(\d{4}-\d{2}-\d{2}|__HIVE_DEFAULT_PARTITION__)", d) for d in dirs)
    files = list(out.rglob("*.parquet"))
    assert files and all(f.name.endswith(".zstd.parquet") for f in files)
    md = pq.ParquetFile(files[0]).metadata
    assert {md.row_group(0).column(i).compression for i in range(md.num_columns)} == {"ZSTD"}


@pytest.mark.shared("corpus")
def test_elections_per_partition_per_hour(spark, corpus):
    _, _, t = corpus
    got = spark_rows(spark, doc_queries()["elections_per_partition_per_hour"])
    t = t.filter(pc.is_valid(t.column("leader")))
    events = distinct(
        t, ["PARTITION_CHANGE_RECORD"], ["cluster_id", "offset", "timestamp", "topic_id", "partition_id", "leader"]
    )
    want = defaultdict(lambda: [0, 0])
    for cluster, _, ts, topic, part, leader in events:
        w = want[(cluster, topic, part, hour(ts))]
        w[0] += 1
        w[1] += leader == -1
    assert sorted(
        ((r["cluster_id"], r["topic_id"], r["partition_id"], r["hour"], r["elections"], r["leaderless"]) for r in got),
        key=nulls_first,
    ) == sorted(((*k, *v) for k, v in want.items()), key=nulls_first)
    assert sum(r["elections"] for r in got) == len(events) > 0
    assert [r["hour"] for r in got] == sorted(r["hour"] for r in got)


@pytest.mark.shared("corpus")
def test_fencing_timeline(spark, corpus):
    _, _, t = corpus
    got = spark_rows(spark, doc_queries()["fencing_timeline"])
    t = t.filter(pc.is_valid(t.column("fenced")))
    kinds = [
        "REGISTER_BROKER_RECORD",
        "FENCE_BROKER_RECORD",
        "UNFENCE_BROKER_RECORD",
        "BROKER_REGISTRATION_CHANGE_RECORD",
    ]
    events = distinct(
        t, kinds, ["cluster_id", "offset", "timestamp", "broker_id", "broker_epoch", "record_type", "fenced"]
    )
    want = sorted(
        (
            (c, o, ts.strftime("%Y-%m-%dT%H:%M"), b, e, k, "fenced" if f else "unfenced")
            for c, o, ts, b, e, k, f in events
        ),
        key=nulls_first,
    )
    assert sorted((tuple(r.values()) for r in got), key=nulls_first) == want
    keys = [nulls_first((r["cluster_id"], r["offset"])) for r in got]
    assert keys == sorted(keys)  # ORDER BY cluster_id, offset
    assert {r["state"] for r in got} == {"fenced", "unfenced"}
    assert Counter(r["record_type"] for r in got)["REGISTER_BROKER_RECORD"] > 0


@pytest.mark.shared("corpus")
def test_topic_count_over_time(spark, corpus):
    _, _, t = corpus
    got = spark_rows(spark, doc_queries()["topic_count_over_time"])
    events = distinct(t, ["TOPIC_RECORD", "REMOVE_TOPIC_RECORD"], ["cluster_id", "offset", "timestamp", "record_type"])
    per = defaultdict(lambda: [0, 0])
    for cluster, _, ts, kind in events:
        per[(cluster, hour(ts))][kind == "REMOVE_TOPIC_RECORD"] += 1
    want, running = [], defaultdict(int)
    for (cluster, h), (created, deleted) in sorted(per.items(), key=lambda kv: nulls_first(kv[0])):
        running[cluster] += created - deleted
        want.append((cluster, h, created, deleted, running[cluster]))
    assert [tuple(r.values()) for r in got] == want
    assert sum(r["created"] for r in got) > 0 and sum(r["deleted"] for r in got) > 0


@pytest.mark.shared("corpus")
def test_config_changes_by_resource(spark, corpus):
    _, _, t = corpus
    got = spark_rows(spark, doc_queries()["config_changes_by_resource"])
    events = distinct(
        t,
        ["CONFIG_RECORD"],
        [
            "cluster_id",
            "offset",
            "timestamp",
            "config_resource_type",
            "config_resource_name",
            "config_key",
            "config_value",
        ],
    )
    groups = defaultdict(list)
    for c, _, ts, rtype, rname, key, value in events:
        groups[(c, rtype, rname)].append((ts, key, value))
    want = sorted(
        (
            (
                *k,
                len(v),
                sum(x[2] is None for x in v),
                len({x[1] for x in v}),
                min(x[0] for x in v).strftime("%Y-%m-%dT%H:%M"),
                max(x[0] for x in v).strftime("%Y-%m-%dT%H:%M"),
            )
            for k, v in groups.items()
        ),
        key=lambda r: ((-r[3],), *nulls_first(r[:3])),
    )
    assert [tuple(r.values()) for r in got] == want
    assert {r["config_resource_type"] for r in got} >= {"BROKER", "TOPIC"}


@pytest.fixture(scope="module")
def small_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("evolve") / "node"
    synthetic.write_log_dir(str(root), 1 << 20, seed=4)
    return root


@pytest.mark.parametrize(
    "codec,suffix,parquet_name",
    [("snappy", ".snappy.parquet", "SNAPPY"), ("gzip", ".gzip.parquet", "GZIP"), ("none", ".parquet", "UNCOMPRESSED")],
)
def test_compression_choices(spark, small_dir, tmp_path, codec, suffix, parquet_name):
    out = tmp_path / codec
    s = ex.export(
        ex.ExportRequest(paths=[str(small_dir)], out=str(out), progress=False, compression=codec), spark=spark
    )
    files = list(out.glob("*.parquet"))
    assert files and all(f.name.endswith(suffix) and f.name.count(".") == (1 if codec == "none" else 2) for f in files)
    md = pq.ParquetFile(files[0]).metadata
    assert md.row_group(0).column(0).compression == parquet_name
    assert pq.read_table(str(out)).num_rows == s.rows


def test_bad_compression_is_an_input_error(spark, small_dir, tmp_path):
    from quorumctl.errors import InputError

    with pytest.raises(InputError, match="--compression must be one of zstd, snappy, gzip, none, not 'lz7'"):
        ex.export(
            ex.ExportRequest(paths=[str(small_dir)], out=str(tmp_path / "x"), progress=False, compression="lz7"),
            spark=spark,
        )


def test_schema_evolution_old_and_new_exports_read_with_merge_schema(spark, small_dir, tmp_path):
    """A dataset holding files of an older export (without the last columns, as
    a release before they were added wrote it) and an export appended by this
    version: mergeSchema gives every column, null in the older rows."""
    out = tmp_path / "evolving"
    first = ex.export(ex.ExportRequest(paths=[str(small_dir)], out=str(out), progress=False), spark=spark)
    full = schema.arrow_schema()
    newer = [f.name for f in full][-4:]  # the config_* columns stand in for "added later"
    for f in out.glob("*.parquet"):  # rewrite the first export as the older release wrote it
        old = pq.read_table(f).drop_columns(newer)
        pq.write_table(old, f, compression="zstd")
    assert pq.read_schema(next(out.glob("*.parquet"))).names == [n for n in full.names if n not in newer]
    second = ex.export(
        ex.ExportRequest(paths=[str(small_dir)], out=str(out), progress=False, mode="append"), spark=spark
    )
    df = spark.read.option("mergeSchema", "true").parquet(str(out))
    assert df.columns == full.names
    assert df.count() == first.rows + second.rows
    with_config = df.where("record_type = 'CONFIG_RECORD'")
    n_config = with_config.count()
    assert n_config > 0 and n_config % 2 == 0
    # the appended half has the config columns, the older half null there
    assert with_config.where("config_key IS NOT NULL").count() == n_config // 2
    assert with_config.where("config_key IS NULL").count() == n_config // 2
