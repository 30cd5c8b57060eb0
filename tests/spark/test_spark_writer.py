"""The pyarrow task writer and its commit protocol, without Spark."""

from __future__ import annotations

import os
from collections import Counter

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("numpy")

from quorumctl.spark import arrow, plan, schema, synthetic  # noqa: E402
from quorumctl.spark import writer as w  # noqa: E402


def test_partition_values_are_escaped_as_spark_does():
    assert w.escape_partition_value(None) == "__HIVE_DEFAULT_PARTITION__"
    assert w.escape_partition_value("") == "__HIVE_DEFAULT_PARTITION__"
    assert w.escape_partition_value("a/b=c:d%e") == "a%2Fb%3Dc%3Ad%25e"
    assert w.escape_partition_value("PARTITION_RECORD") == "PARTITION_RECORD"
    assert w.escape_partition_value(True) == "true" and w.escape_partition_value(7) == "7"
    import datetime

    assert w.escape_partition_value(datetime.date(2025, 1, 2)) == "2025-01-02"


@pytest.fixture(scope="module")
def segment(tmp_path_factory):
    part = tmp_path_factory.mktemp("w") / "__cluster_metadata-0"
    part.mkdir()
    written = synthetic.write_segment(str(part / f"{0:020d}.log"), 600_000, seed=9)
    (sf,) = plan.source_files([str(part)])
    return sf, written


def run_task(index, sf, out, job, partition_by):
    return w.run_task(index, [plan.Piece(sf, 0, sf.size)], str(out), job, partition_by, None)


def test_task_writes_under_its_attempt_dir_and_commit_moves_exactly_its_files(tmp_path, segment):
    sf, written = segment
    out = tmp_path / "out"
    r = run_task(3, sf, out, "job1", ["record_type"])
    assert r["dir"] == "_temporary/job1/task-00003-attempt-0"
    assert r["rows"] == r["stats"]["records"] == written.records
    assert sorted(f.split("/")[0] for f in r["files"]) == sorted(f"record_type={t}" for t in written.types)
    assert all(f.split("/")[1].startswith("part-00003-job1-") for f in r["files"])
    # a leftover of a failed attempt is never committed
    stray = out / "_temporary" / "job1" / "task-00003-attempt-1" / "junk.parquet"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"x")
    assert w.commit(str(out), "job1", [r], "error") == len(r["files"])
    assert sorted(os.listdir(out)) == sorted(["_SUCCESS"] + [f"record_type={t}" for t in written.types])
    t = pq.read_table(str(out), partitioning="hive")
    assert t.num_rows == written.records
    assert Counter(t.column("record_type").to_pylist()) == written.types


def test_abort_leaves_out_as_it_was_and_overwrite_replaces(tmp_path, segment):
    sf, written = segment
    out = tmp_path / "out"
    first = run_task(0, sf, out, "a", [])
    w.commit(str(out), "a", [first], "error")
    before = sorted(os.listdir(out))
    run_task(0, sf, out, "b", [])
    w.abort(str(out), "b")
    assert sorted(os.listdir(out)) == before
    again = run_task(0, sf, out, "c", [])
    w.commit(str(out), "c", [again], "overwrite")
    assert pq.read_table(str(out)).num_rows == written.records
    assert [f for f in os.listdir(out) if f.endswith(".parquet")] == [again["files"][0]]


def test_many_partitions_keep_memory_bounded(tmp_path, segment, monkeypatch):
    sf, written = segment
    monkeypatch.setattr(w, "ROW_GROUP_ROWS", 500)
    monkeypatch.setattr(w, "MAX_OPEN_WRITERS", 3)
    target = w._FileSystem(str(tmp_path / "o"))
    pw = w.PartitionedWriter(target, "", schema.arrow_schema(), ["record_type"], basename="p")
    most = 0
    for batch in arrow.arrow_batches([plan.Piece(sf, 0, sf.size)], schema.arrow_schema(), batch_rows=300):
        pw.write(batch)
        most = max(most, pw._pending)
        assert len(pw.open) <= 3
    files = pw.close()
    assert most < 2 * 500 + 300 and pw._pending == 0
    t = pq.read_table(str(tmp_path / "o"), partitioning="hive")
    assert t.num_rows == written.records and len(files) > len(written.types)
    assert all(
        md.num_row_groups >= 1 for md in (pq.ParquetFile(os.path.join(tmp_path, "o", f)).metadata for f in files)
    )


def test_uri_output_goes_through_pyarrow_fs(tmp_path, segment):
    sf, written = segment
    uri = "file://" + str(tmp_path / "remote")
    r = w.run_task(0, [plan.Piece(sf, 0, sf.size)], uri, "j", ["file_kind"], None)
    w.commit(uri, "j", [r], "error")
    assert sorted(os.listdir(tmp_path / "remote")) == ["_SUCCESS", "file_kind=segment"]
    assert pq.read_table(str(tmp_path / "remote"), partitioning="hive").num_rows == written.records
    r2 = w.run_task(0, [plan.Piece(sf, 0, sf.size)], uri, "k", [], None)
    w.commit(uri, "k", [r2], "overwrite")
    assert sorted(os.listdir(tmp_path / "remote")) == ["_SUCCESS", r2["files"][0]]


def test_failed_jobs_are_reported_by_their_python_cause():
    from quorumctl.spark.job import _one_line

    text = (
        "An error occurred while calling o51.collectToPython.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 failed\n"
        "org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] An exception was thrown "
        "from the Python worker: Traceback (most recent call last):\n"
        '  File "/x/writer.py", line 76, in makedirs\n'
        "    os.makedirs(path, exist_ok=True)\n"
        "PermissionError: [Errno 13] Permission denied: '/data/out' SQLSTATE: 38000\n"
        "\tat org.apache.spark.api.python.BasePythonRunner.handlePythonException(PythonRunner.scala:1097)\n"
    )
    assert _one_line(RuntimeError(text)) == "PermissionError: [Errno 13] Permission denied: '/data/out'"
    assert _one_line(RuntimeError("\n  plain trouble\nmore")) == "plain trouble"
