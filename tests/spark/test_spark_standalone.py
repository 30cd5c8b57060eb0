"""spark-export on a real standalone Spark cluster: a Master and two Workers, each
its own JVM started with `spark-class` on 127.0.0.1, each Worker with its own
executor JVM and Python workers (tests/support/spark_cluster.py). The export goes
through `quorumctl spark-export --master spark://...` and through
`spark-submit --master spark://...`, and must equal the local export row for
row (a digest over every column). Losing a Worker mid-job (its whole process
group killed, as a lost machine) must still give the complete export, or one
clear line and no output that looks complete.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from spark_cluster import QUORUMCTL, SORT, Standalone, daemon_env, needs_java, which_submit

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pc = pytest.importorskip("pyarrow.compute")

pytestmark = needs_java()


def nice_run(args, env, timeout=600):
    return subprocess.run(["nice", "-n", "10", *args], capture_output=True, text=True, timeout=timeout, env=env)


def sorted_table(out: Path):
    t = pq.read_table(str(out))
    return t.take(pc.sort_indices(t, sort_keys=SORT))  # nulls last (the default)


def digest(out: Path) -> str:
    """sha256 over every column of every row, rows in file/position order."""
    t = sorted_table(out)
    h = hashlib.sha256(",".join(t.column_names).encode())
    for batch in t.to_batches(4096):
        for row in batch.to_pylist():
            h.update(repr(tuple(row.values())).encode())
    return h.hexdigest()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Standalone(tmp_path_factory.mktemp("standalone"), workers=2)
    yield c
    c.stop()


@pytest.fixture
def two_workers(cluster):
    """The cluster with both Workers registered: the Worker-loss test kills one
    and does not start it again (a JVM and its registration for nothing when it
    runs last, as it does in file order); a test after it gets it back here."""
    if "worker1" not in cluster.procs:
        cluster.start_worker(1, "1g")
        cluster.wait_registered(1)
    return cluster


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A log dir of two segments (4 MiB clean; one CRC-failing batch and a torn
    tail) and a bigger one (8 MiB in 2 MiB segments, 8 tasks of 1 MiB: the job
    still runs when its first task starts) for the Worker-loss test."""
    from quorumctl.records import metadata as md
    from quorumctl.records.batch import encode_batch
    from quorumctl.spark import synthetic

    base = tmp_path_factory.mktemp("inputs")
    small = base / "node1"
    part = small / "__cluster_metadata-0"
    part.mkdir(parents=True)
    (small / "meta.properties").write_text("node.id=1\nversion=1\ncluster.id=Ztbe0ClwQm-5k0GWo0mXJw\n")
    good = synthetic.write_segment(str(part / f"{0:020d}.log"), 4 << 20, seed=11)
    nxt = good.last_offset + 1
    bad = bytearray(encode_batch([(None, md.encode_metadata("NoOpRecord", 0, {}))], base_offset=nxt))
    bad[40] ^= 0x10
    torn = encode_batch([(None, md.encode_metadata("NoOpRecord", 0, {}))], base_offset=nxt + 1)[:20]
    (part / f"{nxt:020d}.log").write_bytes(bytes(bad) + torn)
    big = base / "big"
    synthetic.write_log_dir(str(big), 8 << 20, segment_bytes=2 << 20, seed=3)
    return small, good, big


@pytest.fixture(scope="module")
def local_export(spark, inputs, tmp_path_factory):
    """The reference for the small input: the same export on local[2], in this
    process's Spark session (conftest's `spark`: its JVM is often up already
    from an earlier module on this worker, where a spark-export child would
    start one more)."""
    from quorumctl.spark import job

    small, good, _ = inputs
    out = tmp_path_factory.mktemp("local") / "small"
    s = job.export(
        job.ExportRequest(paths=[str(small)], out=str(out), split_size=512 << 10, progress=False), spark=spark
    )
    assert (s.records, s.errors, s.exit_code) == (good.records + 1, 2, 1)
    return out


def built_in_process(root: Path):
    """The rows of every file under `root`, built in this process by the row
    builder the tasks run (a second local Spark export of the big input would
    cost a JVM start and as much CPU as the job itself)."""
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


def test_quorumctl_and_spark_submit_on_standalone_equal_the_local_export(two_workers, inputs, local_export, tmp_path):
    cluster = two_workers
    small, good, _ = inputs
    env = daemon_env(tmp_path)
    conf = [x for c in cluster.driver_conf() for x in ("--spark-conf", c)]
    out = tmp_path / "cli"
    r = nice_run(
        [
            QUORUMCTL,
            "spark-export",
            str(small),
            "--out",
            str(out),
            "--master",
            cluster.url,
            "--split-size",
            "512k",
            *conf,
            "-o",
            "json",
        ],
        env,
    )
    assert r.returncode == 1, r.stderr[-3000:]  # the corrupt batch: exit 1, rows written
    s = json.loads(r.stdout)["summary"]
    assert (s["files"], s["records"], s["errors"], s["corrupt_records"]) == (2, good.records + 1, 2, 1)
    assert s["tasks"] >= 4  # spread over both Workers
    assert r.stderr == f"quorumctl: starting Spark (master {cluster.url}); the JVM takes a few seconds\n"
    assert (out / "_SUCCESS").exists() and not (out / "_temporary").exists()

    # both executors ran tasks: each Worker's work dir holds its executor's logs for this app
    apps = {w: sorted(p.name for p in (cluster.work / w).glob("app-*")) for w in ("worker0", "worker1")}
    assert all(apps.values()), apps

    submit = which_submit()
    if submit is None:
        pytest.skip("spark-submit not installed next to this Python")
    app = subprocess.run(
        [sys.executable, "-m", "quorumctl.spark.submit", "--path"], capture_output=True, text=True
    ).stdout.strip()
    out2 = tmp_path / "submitted"
    r2 = nice_run(
        [
            submit,
            "--master",
            cluster.url,
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.executor.memory=512m",
            app,
            str(small),
            "--out",
            str(out2),
            "--split-size",
            "512k",
            "-o",
            "json",
        ],
        env,
    )
    assert r2.returncode == 1, r2.stderr[-3000:]
    assert json.loads(r2.stdout.strip().splitlines()[-1])["summary"]["records"] == good.records + 1

    expected = digest(local_export)
    assert pq.read_table(str(out)).num_rows == good.records + 2
    assert digest(out) == expected
    assert digest(out2) == expected


def test_losing_a_worker_mid_job_completes_or_fails_cleanly(cluster, inputs, tmp_path):
    _, _, big = inputs
    env = daemon_env(tmp_path)
    out = tmp_path / "lost"
    conf = [x for c in cluster.driver_conf() for x in ("--spark-conf", c)]
    proc = subprocess.Popen(
        [
            "nice",
            "-n",
            "10",
            QUORUMCTL,
            "spark-export",
            str(big),
            "--out",
            str(out),
            "--master",
            cluster.url,
            "--split-size",
            "1m",
            *conf,
            "-o",
            "json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    killed = threading.Event()
    state = {}

    def kill_when_running():
        # the first task attempt directory: tasks are running on the executors
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            tmp = out / "_temporary"
            if tmp.is_dir() and any(p.is_dir() for job in tmp.iterdir() for p in job.iterdir()):
                state["complete_before_kill"] = (out / "_SUCCESS").exists()
                cluster.kill("worker1")
                killed.set()
                return
            time.sleep(0.05)

    t = threading.Thread(target=kill_when_running)
    t.start()
    try:
        stdout, stderr = proc.communicate(timeout=480)
    finally:
        t.join(10)
    assert killed.is_set(), f"the job ended before any task ran: {stderr[-2000:]}"
    assert state["complete_before_kill"] is False
    if proc.returncode in (0, 1):
        # Spark re-ran the lost executor's tasks on the other Worker: the whole export, once
        assert json.loads(stdout)["summary"]["errors"] == 0
        assert (out / "_SUCCESS").exists() and not (out / "_temporary").exists()
        ref = built_in_process(big)
        got = sorted_table(out)
        assert got.num_rows == ref.num_rows
        assert got.equals(ref)
    else:
        # failed: one line, and nothing in OUT a reader would take as a dataset
        assert proc.returncode == 2, stderr[-3000:]
        lines = stderr.strip().splitlines()
        assert len(lines) == 2 and lines[1].startswith(f"quorumctl: error: writing {out} failed: "), stderr
        assert not (out / "_SUCCESS").exists()
        assert not [p for p in out.rglob("*.parquet")]
