"""Bulk export of KRaft metadata logs with Spark.

Importing this package imports neither PySpark nor pyarrow; the entry points
below do, when called.

- `register(spark)`: make `spark.read.format("kraft")` available in a session.
- `read_kraft(spark, paths, **options)`: a DataFrame of the records under `paths`.
- `export(paths, out, ...)`: what `quorumctl spark-export` runs.
"""


def register(spark) -> None:
    from .source import register as _register
    _register(spark)


def read_kraft(spark, paths, **options):
    from .source import read_kraft as _read
    return _read(spark, paths, **options)


def export(paths, out, **kwargs):
    from .job import export as _export
    return _export(paths, out, **kwargs)
