"""Bulk export of KRaft metadata logs with Spark: planning splits, decoding
pieces into rows and Arrow batches, writing Parquet, the session and its JVM,
`--follow`. The decoding itself is records/'s and the files' layout logdir/'s;
spark/ holds only what runs on Spark or feeds it, and `quorumctl spark-export`'s
options are cli/spark_export.py's.

Importing this package imports neither PySpark nor pyarrow; the entry points
below do, when called.

- `register(spark)`: make `spark.read.format("kraft")` available in a session.
- `read_kraft(spark, paths, **options)`: a DataFrame of the records under `paths`.
- `export(paths, out, spark=None, **options)`: what `quorumctl spark-export` runs
  (`options`: job.ExportRequest's fields).
"""


def register(spark) -> None:
    from .source import register as _register

    _register(spark)


def read_kraft(spark, paths, **options):
    from .source import read_kraft as _read

    return _read(spark, paths, **options)


def export(paths, out, spark=None, **options):
    from .job import ExportRequest, export as _export

    return _export(ExportRequest(paths=paths, out=out, **options), spark)
