"""The kraft data source from a Spark Connect session: a Connect server started
with PySpark's own `sbin/start-connect-server.sh` (its Python workers this
venv's Python), a client session in this process through `sc://`, and
`quorumctl spark-export --remote sc://...`; the rows equal those the row
builder gives in one process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from spark_cluster import QUORUMCTL, SORT, ConnectServer, daemon_env, needs_java

pytest.importorskip("pyspark")
pytest.importorskip("grpc", reason="the Spark Connect client needs pyspark[connect] (grpcio ...)")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pc = pytest.importorskip("pyarrow.compute")

pytestmark = needs_java()


@pytest.fixture(autouse=True)
def classic_spark_after():
    """PySpark marks the whole process as Spark Connect (SPARK_CONNECT_MODE_ENABLED)
    once a Connect session is made in it, and later local sessions then fail with
    CONNECT_URL_NOT_SET: undo that, for the tests that share this process."""
    import os

    yield
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ConnectServer(tmp_path_factory.mktemp("connect"))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    from quorumctl.spark import synthetic

    root = tmp_path_factory.mktemp("connect-in") / "node7"
    synthetic.write_log_dir(str(root), 3 << 19, segment_bytes=1 << 19, seed=17, node_id=7)  # 3 segments
    return root


@pytest.fixture(scope="module")
def reference(log_dir):
    """The rows the row builder gives in this process, sorted (both tests compare with them)."""
    return built_in_process(log_dir)


def built_in_process(root: Path):
    from quorumctl.spark import arrow, plan, rows, schema

    p = plan.make_plan([str(root)])
    t = pa.Table.from_batches(
        list(
            arrow.arrow_batches(
                [x for part in p.partitions for x in part], schema.arrow_schema(), 8192, None, rows.Stats()
            )
        ),
        schema=schema.arrow_schema(),
    )
    return t.take(pc.sort_indices(t, sort_keys=SORT))


def test_kraft_source_from_a_connect_session(server, log_dir, reference):
    from pyspark.sql import SparkSession

    from quorumctl.spark import read_kraft, register

    spark = SparkSession.builder.remote(server.url).getOrCreate()
    try:
        assert type(spark).__module__.startswith("pyspark.sql.connect")
        register(spark)
        df = spark.read.format("kraft").option("minPartitions", "3").load(str(log_dir))
        ref = reference
        got = df.toArrow()  # one job for the rows, their count and node ids
        assert got.num_rows == ref.num_rows
        got = got.take(pc.sort_indices(got, sort_keys=SORT))
        assert got.column_names == ref.column_names
        for name in ref.column_names:  # Arrow through Connect: same values, column by column
            assert got.column(name).to_pylist() == ref.column(name).to_pylist(), name
        types = {
            r["record_type"]: r["n"]
            for r in read_kraft(spark, str(log_dir))
            .groupBy("record_type")
            .count()
            .withColumnRenamed("count", "n")
            .collect()
        }
        want = pc.value_counts(ref.column("record_type")).to_pylist()
        assert types == {x["values"]: x["counts"] for x in want}
        assert set(got.column("node_id").to_pylist()) == {7}
    finally:
        spark.stop()


def test_spark_export_remote(server, log_dir, reference, tmp_path):
    out = tmp_path / "remote"
    r = subprocess.run(
        [
            "nice",
            "-n",
            "10",
            QUORUMCTL,
            "spark-export",
            str(log_dir),
            "--out",
            str(out),
            "--remote",
            server.url,
            "--no-progress",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=daemon_env(tmp_path),
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stderr == ""
    ref = reference
    s = json.loads(r.stdout)["summary"]
    assert (s["files"], s["records"], s["rows"], s["errors"]) == (3, ref.num_rows, ref.num_rows, 0)
    got = pq.read_table(str(out))
    got = got.take(pc.sort_indices(got, sort_keys=SORT))
    assert got.num_rows == ref.num_rows
    assert got.select(["offset", "record_type", "payload_json", "timestamp"]).equals(
        ref.select(["offset", "record_type", "payload_json", "timestamp"])
    )
    assert all(f.name.endswith(".zstd.parquet") for f in out.glob("*.parquet"))
