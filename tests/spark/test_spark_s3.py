"""spark-export against an S3 endpoint: moto's S3-compatible server on
127.0.0.1, started by the test. Input read from and Parquet written to `s3://`
(and `s3a://`) URIs through pyarrow's S3 client, the endpoint and credentials
from the standard AWS environment variables or from Spark's Hadoop S3A
settings; what Spark's own writer lacks for S3 said in one line; and a store
that goes away mid-job leaves nothing in OUT that looks complete.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

from spark_cluster import QUORUMCTL, SORT, daemon_env, free_port, needs_java

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pc = pytest.importorskip("pyarrow.compute")
pafs = pytest.importorskip("pyarrow.fs")
moto_server = pytest.importorskip("moto.server")

pytestmark = needs_java()
KEY, SECRET = "AKIAQUORUMCTLTEST", "quorumctl-test-secret"


class Moto:
    """moto's S3 server in this process: stopping it keeps the buckets (moto's
    state lives in this process), so a test can take the store away mid-job and
    then look at what was left."""

    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start()

    def start(self):
        self.server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()

    def stop(self):
        self.server.stop()

    def fs(self):
        return pafs.S3FileSystem(
            endpoint_override=f"127.0.0.1:{self.port}",
            scheme="http",
            access_key=KEY,
            secret_key=SECRET,
            region="us-east-1",
            allow_bucket_creation=True,
        )

    def env(self, base: dict) -> dict:
        return {
            **base,
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def keys(self, prefix: str) -> list[str]:
        infos = self.fs().get_file_info(pafs.FileSelector(prefix, recursive=True, allow_not_found=True))
        return sorted(i.path[len(prefix) + 1 :] for i in infos if i.type == pafs.FileType.File)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    m = Moto()
    fs = m.fs()
    for bucket in ("kraft-archive", "kraft-exports"):
        fs.create_dir(bucket)
    yield m
    m.stop()


def upload(s3, local: Path, prefix: str):
    fs = s3.fs()
    for p in sorted(local.rglob("*")):
        if p.is_file():
            with fs.open_output_stream(f"{prefix}/{p.relative_to(local).as_posix()}") as f:
                f.write(p.read_bytes())


@pytest.fixture(scope="module")
def log_dir(s3, tmp_path_factory):
    """A log dir (a clean segment; one with a CRC-failing batch and a torn tail),
    locally and in the bucket."""
    from quorumctl.records import metadata as md
    from quorumctl.records.batch import encode_batch
    from quorumctl.spark import synthetic

    root = tmp_path_factory.mktemp("s3in") / "node3"
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    (root / "meta.properties").write_text("node.id=3\nversion=1\ncluster.id=S3qL2mQxT0e3q7cT1vT5yA\n")
    good = synthetic.write_segment(str(part / f"{0:020d}.log"), 2 << 20, seed=21)
    nxt = good.last_offset + 1
    bad = bytearray(encode_batch([(None, md.encode_metadata("NoOpRecord", 0, {}))], base_offset=nxt))
    bad[40] ^= 0x10
    torn = encode_batch([(None, md.encode_metadata("NoOpRecord", 0, {}))], base_offset=nxt + 1)[:20]
    (part / f"{nxt:020d}.log").write_bytes(bytes(bad) + torn)
    upload(s3, root, "kraft-archive/prod/node3")
    return root, good


def reference_digest(root: Path, uri_prefix: str) -> str:
    """The rows the export must give, built in this process by the same row
    builder the tasks run, with the files named by their URIs."""
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
    for name in ("source_file", "error"):  # error texts name the file too
        i = t.schema.get_field_index(name)
        values = [None if v is None else v.replace(str(root), uri_prefix) for v in t.column(i).to_pylist()]
        t = t.set_column(i, name, pa.array(values, pa.string()))
    return digest_table(t)


def digest_table(t) -> str:
    t = t.take(pc.sort_indices(t, sort_keys=SORT))
    h = hashlib.sha256(",".join(t.column_names).encode())
    for batch in t.to_batches(4096):
        for row in batch.to_pylist():
            h.update(repr(tuple(row.values())).encode())
    return h.hexdigest()


def read_s3(s3, prefix: str):
    return pq.read_table(prefix, filesystem=s3.fs())


def run(args, env, timeout=600):
    return subprocess.run(
        ["nice", "-n", "10", QUORUMCTL, "spark-export", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_s3_in_and_out_with_aws_environment_and_with_spark_s3a_conf(s3, log_dir, tmp_path):
    root, good = log_dir
    base = daemon_env(tmp_path)
    common = [
        "--master",
        "local[2]",
        "--split-size",
        "512k",
        "--spark-conf",
        "spark.ui.enabled=false",
        "--no-progress",
        "-o",
        "json",
    ]
    # 1. endpoint and credentials from the standard AWS environment variables
    r = run(["s3://kraft-archive/prod/", "--out", "s3://kraft-exports/run1", *common], s3.env(base))
    assert r.returncode == 1, r.stderr[-3000:]  # the corrupt batch: exit 1, rows written
    s = json.loads(r.stdout)["summary"]
    assert (s["files"], s["records"], s["errors"], s["out"]) == (2, good.records + 1, 2, "s3://kraft-exports/run1")
    keys = s3.keys("kraft-exports/run1")
    assert "_SUCCESS" in keys and all(k == "_SUCCESS" or k.endswith(".parquet") for k in keys), keys
    expected = reference_digest(root, "s3://kraft-archive/prod/node3")
    t = read_s3(s3, "kraft-exports/run1")
    assert t.num_rows == good.records + 2
    assert set(t.column("node_id").to_pylist()) == {3}
    assert digest_table(t) == expected

    # 2. the same from Hadoop's S3A settings in Spark's conf, no AWS variables at all
    conf = {
        "spark.hadoop.fs.s3a.endpoint": s3.url,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.access.key": KEY,
        "spark.hadoop.fs.s3a.secret.key": SECRET,
    }
    env = {k: v for k, v in base.items() if not k.startswith("AWS_")}
    env["AWS_EC2_METADATA_DISABLED"] = "true"  # no instance-metadata probing on a laptop
    r = run(
        [
            "s3a://kraft-archive/prod/node3",
            "--out",
            "s3a://kraft-exports/run2",
            "--partition-by",
            "date",
            *common,
            *[x for k, v in conf.items() for x in ("--spark-conf", f"{k}={v}")],
        ],
        env,
    )
    assert r.returncode == 1, r.stderr[-3000:]
    keys = s3.keys("kraft-exports/run2")
    assert "_SUCCESS" in keys and all(k.startswith("date=") for k in keys if k != "_SUCCESS"), keys
    # the generated records' date, the CRC-failing batch's (written at time 0), and null (Hive's
    # default partition) for the torn tail's error row
    assert {k.split("/")[0] for k in keys if k != "_SUCCESS"} == {
        "date=2025-01-01",
        "date=1970-01-01",
        "date=__HIVE_DEFAULT_PARTITION__",
    }
    assert read_s3(s3, "kraft-exports/run2").num_rows == good.records + 2


def test_spark_writer_to_s3_says_what_is_missing(s3, log_dir, tmp_path):
    r = run(
        [
            "s3://kraft-archive/prod/",
            "--out",
            "s3a://kraft-exports/spark-writer",
            "--writer",
            "spark",
            "--master",
            "local[1]",
            "--spark-conf",
            "spark.ui.enabled=false",
            "--no-progress",
        ],
        s3.env(daemon_env(tmp_path)),
    )
    assert r.returncode == 2
    assert r.stderr == (
        "quorumctl: error: --writer spark cannot write s3a://kraft-exports/spark-writer: "
        "Hadoop's S3A file system is not on Spark's classpath: PySpark ships no hadoop-aws "
        "jar nor the AWS SDK bundle it needs; use the default --writer pyarrow (S3 through "
        "pyarrow), or add org.apache.hadoop:hadoop-aws (the version of Spark's Hadoop) with "
        "--spark-conf spark.jars.packages=... and write to s3a://\n"
    )
    assert s3.keys("kraft-exports/spark-writer") == []


def test_store_lost_mid_job_leaves_nothing_that_looks_complete(s3, tmp_path):
    from quorumctl.spark import synthetic

    src = tmp_path / "big"
    synthetic.write_log_dir(str(src), 8 << 20, segment_bytes=2 << 20, seed=9)  # 16 tasks of 512 KiB
    upload(s3, src, "kraft-archive/big")
    proc = subprocess.Popen(
        [
            "nice",
            "-n",
            "10",
            QUORUMCTL,
            "spark-export",
            "s3://kraft-archive/big",
            "--out",
            "s3://kraft-exports/lost",
            "--master",
            "local[2]",
            "--split-size",
            "512k",
            "--spark-conf",
            "spark.ui.enabled=false",
            "--no-progress",
            "-o",
            "json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=s3.env(daemon_env(tmp_path)),
    )
    state = {}

    def stop_when_writing():
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            written = [k for k in s3.keys("kraft-exports/lost") if k.endswith(".parquet")]
            if written:
                state["complete_before"] = "_SUCCESS" in s3.keys("kraft-exports/lost")
                s3.stop()
                state["stopped"] = True
                return
            time.sleep(0.05)

    t = threading.Thread(target=stop_when_writing)
    t.start()
    try:
        stdout, stderr = proc.communicate(timeout=480)
    finally:
        t.join(10)
        if state.get("stopped"):
            s3.start()
    assert state.get("stopped"), f"the job ended before it wrote anything: {stderr[-2000:]}"
    assert state["complete_before"] is False
    keys = s3.keys("kraft-exports/lost")
    if proc.returncode in (0, 1):
        # the SDK's retries rode it out: then the dataset must be whole
        assert "_SUCCESS" in keys
        assert read_s3(s3, "kraft-exports/lost").num_rows == json.loads(stdout)["summary"]["rows"]
    else:
        assert proc.returncode == 2, stderr[-3000:]
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("quorumctl: error: writing s3://kraft-exports/lost failed: "), (
            stderr
        )
        # nothing outside _temporary/ (which readers skip, and which the store's loss kept the
        # driver from removing), and no _SUCCESS
        assert "_SUCCESS" not in keys
        assert [k for k in keys if not k.startswith("_temporary/")] == [], keys
