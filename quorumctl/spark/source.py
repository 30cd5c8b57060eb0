"""The `kraft` Spark data source (Spark 4 Python Data Source API).

    from quorumctl.spark import register
    register(spark)
    df = spark.read.format("kraft").load("/var/lib/kafka/meta")          # or .load([p1, p2])
    df = spark.read.format("kraft").option("splitSize", "64m").load("hdfs://nn/kraft/*/")

Planning (`partitions()`) runs once on the driver: it finds the files, reads
each log dir's meta.properties, walks batch headers of large files to cut them
at batch boundaries, and packs the pieces into tasks (see `plan.py`). Each
task then decodes its pieces and hands Spark Arrow record batches directly
(`rows.py` decodes, `arrow.py` builds), so rows never go through Python-side pickling.

Options (all optional):
  splitSize      largest task, bytes or with k/m/g suffix (default 128m)
  minPartitions  make at least this many tasks when the input allows (default:
                 one per core for small inputs, three per core for larger ones,
                 see plan.default_min_partitions)
  cores          the cores that default counts (default 1; `read_kraft` passes
                 the session's default parallelism)
  openCost       what opening one file counts as, in bytes (default 256k)
  batchRows      rows per Arrow batch handed to Spark (default 8192)
  plan           a plan made by the driver already (JSON; spark-export uses it)
  s3Endpoint, s3Region, s3PathStyle   for s3a:// / s3:// input read through pyarrow
"""

from __future__ import annotations

import json

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from . import plan as planning
from .plan import parse_size
from . import schema as row_schema

NAME = "kraft"


class KraftPartition(InputPartition):
    """The pieces one task decodes."""

    def __init__(self, index: int, pieces: list):
        super().__init__(index)
        self.pieces = pieces


def plan_to_json(plan: planning.Plan) -> str:
    files = {f.path: i for i, f in enumerate(plan.files)}
    return json.dumps(
        {
            "files": [f.__dict__ for f in plan.files],
            "partitions": [[[files[p.file.path], p.start, p.end] for p in part] for part in plan.partitions],
            "split_bytes": plan.split_bytes,
        }
    )


def plan_from_json(text: str) -> planning.Plan:
    d = json.loads(text)
    files = [planning.SourceFile(**f) for f in d["files"]]
    parts = [[planning.Piece(files[i], a, b) for i, a, b in part] for part in d["partitions"]]
    return planning.Plan(files, parts, d["split_bytes"])


def _paths(options) -> list[str]:
    if "paths" in options:  # DataFrameReader.load([...]) passes a JSON list
        return list(json.loads(options["paths"]))
    if "path" in options:
        return [options["path"]]
    raise ValueError("kraft: give a path: spark.read.format('kraft').load(PATH)")


def _fs_options(options) -> dict:
    return {k: options[k] for k in ("s3endpoint", "s3region", "s3pathstyle") if k in options}


def _options(options) -> dict:
    # Spark hands options case-insensitively but as given; normalise once
    return {str(k).lower(): v for k, v in dict(options).items()}


class KraftDataSource(DataSource):
    """spark.read.format("kraft"): one row per record of KRaft metadata log
    segments, snapshots and bootstrap.checkpoint files (schema: docs/parquet.md)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self):
        return row_schema.struct_type()

    def reader(self, schema):
        return KraftReader(_options(self.options), schema)


class KraftReader(DataSourceReader):
    def __init__(self, options: dict, schema):
        expected = row_schema.struct_type()
        if [f.name for f in schema.fields] != [f.name for f in expected.fields]:
            raise ValueError("the kraft data source has a fixed schema; do not pass .schema(...)")
        self.options = options
        self.schema = schema

    def _plan(self) -> planning.Plan:
        o = self.options
        if "plan" in o:
            return plan_from_json(o["plan"])
        return planning.make_plan(
            _paths(o),
            split_size=parse_size(o.get("splitsize", planning.DEFAULT_SPLIT_SIZE)),
            min_partitions=int(o["minpartitions"]) if "minpartitions" in o else None,
            slots=int(o.get("cores", 1)),
            open_cost=parse_size(o.get("opencost", planning.DEFAULT_OPEN_COST)),
            options=_fs_options(o),
        )

    def partitions(self):
        plan = self._plan()
        return [KraftPartition(i, pieces) for i, pieces in enumerate(plan.partitions)]

    def read(self, partition):
        from . import arrow

        arrow_schema = row_schema.arrow_schema(self.schema)
        batch_rows = int(self.options.get("batchrows", 8192))
        yield from arrow.arrow_batches(partition.pieces, arrow_schema, batch_rows, options=_fs_options(self.options))


def register(spark) -> None:
    """Make spark.read.format("kraft") available in this session."""
    spark.dataSource.register(KraftDataSource)


def read_kraft(spark, paths, **options):
    """A DataFrame of the files under `paths` (a path, URI, glob or a list of
    them); options as for the data source (splitSize, minPartitions, ...).
    Counts the session's cores for the default number of tasks
    (plan.default_min_partitions) unless minPartitions is given."""
    register(spark)
    if isinstance(paths, str):
        paths = [paths]
    if "cores" not in options:
        try:
            cores = spark.sparkContext.defaultParallelism
        except Exception:  # Spark Connect has no SparkContext
            import os

            cores = os.cpu_count() or 1
        options["cores"] = cores
    reader = spark.read.format(NAME)
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader.load(list(paths) if len(paths) > 1 else paths[0])
