"""The row schema of `spark-export` and of the `kraft` Spark data source.

One row per record (plus one row per batch, tail or file that could not be
decoded). The column list below is the contract documented in docs/parquet.md
(a test checks that the document and this list agree): columns are only ever
added at the end, never renamed, retyped or reordered.

This module imports neither PySpark nor pyarrow: the CLI reads it at start-up.
"""

from __future__ import annotations

# (name, Spark SQL type, nullable, description)
COLUMNS: list[tuple[str, str, bool, str]] = [
    # -- where the row comes from
    ("source_file", "string", False, "the file, as a local absolute path or the URI given"),
    ("file_kind", "string", False, "`segment`, `snapshot` or `bootstrap` (bootstrap.checkpoint)"),
    ("cluster_id", "string", True, "`cluster.id` of the log dir's meta.properties"),
    ("node_id", "int", True, "`node.id` (or v0 `broker.id`) of the log dir's meta.properties"),
    ("directory_id", "string", True, "`directory.id` of the log dir's meta.properties"),
    ("segment_base_offset", "bigint", True, "base offset in a segment's file name"),
    ("snapshot_end_offset", "bigint", True, "end offset in a snapshot's file name (its snapshot id)"),
    ("snapshot_epoch", "int", True, "epoch in a snapshot's file name (its snapshot id)"),
    # -- what the row is
    (
        "row_kind",
        "string",
        False,
        "`record`; or `batch_error` (a batch whose records do not decode), `tail_error` "
        "(bytes after the last batch that are not a batch: torn or corrupt tail), "
        "`file_error` (the file could not be read)",
    ),
    ("corrupt", "boolean", False, "true for error rows and for records of a batch whose CRC-32C does not match"),
    ("error", "string", True, "what is wrong, with the byte position (null when nothing is)"),
    # -- the batch
    ("batch_position", "bigint", True, "byte position of the batch in the file"),
    ("batch_size", "int", True, "bytes of the batch (batchLength + 12)"),
    ("batch_base_offset", "bigint", True, "baseOffset"),
    ("batch_last_offset", "bigint", True, "baseOffset + lastOffsetDelta"),
    ("batch_leader_epoch", "int", True, "partitionLeaderEpoch"),
    ("batch_magic", "int", True, "magic (2 for every KRaft batch)"),
    ("batch_crc", "bigint", True, "the stored CRC-32C (unsigned)"),
    ("batch_crc_valid", "boolean", True, "whether the stored CRC-32C matches the batch"),
    ("batch_codec", "string", True, "`none`, `gzip`, `snappy`, `lz4` or `zstd`"),
    ("batch_is_control", "boolean", True, "the control attribute"),
    ("batch_is_transactional", "boolean", True, "the transactional attribute"),
    ("batch_timestamp_type", "string", True, "`CreateTime` or `LogAppendTime`"),
    ("batch_max_timestamp", "bigint", True, "maxTimestamp, epoch ms"),
    ("batch_record_count", "int", True, "recordCount"),
    ("producer_id", "bigint", True, "producerId (-1 when none)"),
    ("producer_epoch", "int", True, "producerEpoch (-1 when none)"),
    # -- the record
    ("record_index", "int", True, "position of the record in its batch, from 0"),
    ("offset", "bigint", True, "the record's offset"),
    ("timestamp_ms", "bigint", True, "epoch ms as Kafka reports it (the batch's maxTimestamp under LogAppendTime)"),
    ("timestamp", "timestamp", True, "`timestamp_ms` as a UTC timestamp (null when negative)"),
    ("date", "date", True, "the UTC date of `timestamp` (handy for `--partition-by date`)"),
    ("key", "binary", True, "the record key bytes (null key: null)"),
    ("value", "binary", True, "the record value bytes"),
    ("headers", "array<struct<key:string,value:binary>>", True, "the record headers, in order"),
    # -- the decoded record
    ("record_kind", "string", True, "`metadata` or `control`"),
    (
        "record_type",
        "string",
        True,
        "Kafka's type name: PARTITION_RECORD, TOPIC_RECORD ... or LEADER_CHANGE, SNAPSHOT_HEADER ...",
    ),
    ("record_api_key", "int", True, "the metadata record api key, or the control record type"),
    ("record_version", "int", True, "the record's schema version"),
    (
        "payload_json",
        "string",
        True,
        'the decoded record in kafka-dump-log\'s form {"type":...,"version":...,"data":{...}} '
        "(doubles as plain JSON numbers, not Java's 1.0E7)",
    ),
    ("decode_error", "string", True, "why the value did not decode (unknown type or version, garbage)"),
    # -- typed columns for the most queried fields (null when the record has no such field)
    ("topic_name", "string", True, "TopicRecord.name"),
    ("topic_id", "string", True, "topicId of Topic, Partition, PartitionChange, RemoveTopic records"),
    ("partition_id", "int", True, "partitionId of Partition and PartitionChange records"),
    (
        "leader",
        "int",
        True,
        "PartitionRecord.leader; PartitionChangeRecord.leader when it changes (null: unchanged); "
        "LEADER_CHANGE control record: the new quorum leader",
    ),
    (
        "leader_epoch",
        "int",
        True,
        "PartitionRecord.leaderEpoch; LEADER_CHANGE: the quorum epoch (its batch's leader epoch)",
    ),
    ("replicas", "array<int>", True, "replicas of PartitionRecord, of PartitionChangeRecord when changed"),
    ("isr", "array<int>", True, "isr of PartitionRecord, of PartitionChangeRecord when changed"),
    (
        "broker_id",
        "int",
        True,
        "RegisterBroker / UnregisterBroker / BrokerRegistrationChange / ProducerIds brokerId, Fence / UnfenceBroker id",
    ),
    ("broker_epoch", "bigint", True, "the broker epoch of the same records"),
    (
        "fenced",
        "boolean",
        True,
        "true for FenceBroker, false for UnfenceBroker; RegisterBroker.fenced; "
        "BrokerRegistrationChange: true (1) / false (-1) / null (no change)",
    ),
    ("feature_name", "string", True, "FeatureLevelRecord.name (metadata.version, kraft.version ...)"),
    ("feature_level", "int", True, "FeatureLevelRecord.featureLevel"),
    (
        "config_resource_type",
        "string",
        True,
        "ConfigRecord.resourceType by name: TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP (else the number)",
    ),
    ("config_resource_name", "string", True, "ConfigRecord.resourceName (empty: the cluster default)"),
    ("config_key", "string", True, "ConfigRecord.name"),
    ("config_value", "string", True, "ConfigRecord.value (null: the config is deleted)"),
]

NAMES = [c[0] for c in COLUMNS]
INDEX = {name: i for i, name in enumerate(NAMES)}


def struct_type():
    """The schema as a pyspark StructType (imports PySpark; needs no JVM, so
    Python workers can build it too)."""
    from pyspark.sql import types as T

    simple = {
        "string": T.StringType(),
        "int": T.IntegerType(),
        "bigint": T.LongType(),
        "boolean": T.BooleanType(),
        "timestamp": T.TimestampType(),
        "date": T.DateType(),
        "binary": T.BinaryType(),
    }
    compound = {
        "array<int>": T.ArrayType(T.IntegerType()),
        "array<struct<key:string,value:binary>>": T.ArrayType(
            T.StructType([T.StructField("key", T.StringType()), T.StructField("value", T.BinaryType())])
        ),
    }
    return T.StructType([T.StructField(n, simple.get(t) or compound[t], nullable) for n, t, nullable, _ in COLUMNS])


def arrow_schema(spark_schema=None):
    """The pyarrow schema Spark expects from the data source for `struct_type()`
    (built with PySpark's own type mapping, so the two never disagree)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark_schema if spark_schema is not None else struct_type(), timezone="UTC")
