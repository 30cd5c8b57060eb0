"""spark-export's hot path for plain metadata batches (rows._plain_body: the
frame walk of records.batch.plain_value_spans, the generated text decoders, the
typed columns memoised by value tail) gives exactly the columns of the general
path (Record objects, dicts, msgspec: rows._body_columns) for every batch of
the real corpus and of the real controller log in ../shared/perf."""

from __future__ import annotations

import gzip
import json

import pytest

from quorumctl.records import metadata as md
from quorumctl.records.batch import ATTR_COMPRESSION, ATTR_CONTROL, Batch, BatchReader, encode_batch
from quorumctl.spark import arrow as A
from quorumctl.spark import rows as R
from samples import CORPUS, SHARED

PERF_LOG = SHARED / "perf" / "churn-controller-1.log.gz"


def same(fast, general) -> bool:
    """The fast path's columns equal the general path's (payload_json as text:
    the general path gives bytes, the fast path str; Arrow takes both alike;
    typed entries memoised by value tail resolved for their own value, as the
    Arrow builder does for whole columns)."""

    def text(col, values):
        return [
            (h, p.decode() if isinstance(p, bytes) else p, R.resolve_typed(t, v)) for (h, p, t), v in zip(col, values)
        ]

    return (list(fast[0]),) + fast[1:5] + (text(fast[5], fast[3]), fast[6]) == general[:5] + (
        text(general[5], general[3]),
        general[6],
    )


def compare(source) -> dict:
    seen = {"batches": 0, "plain_batches": 0, "records": 0, "fast_records": 0}
    # both paths give a pure function of recordCount and the body: compare each distinct one once
    done: dict = {}
    for b in BatchReader(source):
        if not isinstance(b, Batch) or b.attributes & (ATTR_CONTROL | ATTR_COMPRESSION):
            continue
        seen["batches"] += 1
        key = (b.record_count, bytes(b.data[R.HEADER_SIZE :]))
        if key not in done:
            done[key] = check(source, b)
        records, fast = done[key]
        seen["records"] += records
        if fast:
            seen["plain_batches"] += 1
            seen["fast_records"] += records
    return seen


def check(source, b) -> tuple[int, bool]:
    """(records, whether the fast path took the batch), asserting it matches the general path."""
    fast = R._plain_body(b, b.data, R.decode_value)
    try:
        records = b.records()
    except Exception:  # an undecodable batch: the fast path must decline it
        assert fast is None, (source, b.position)
        return 0, False
    if fast is None:
        return len(records), False
    assert same(fast, R._body_columns(b, records, R.decode_value)), (source, b.position)
    return len(records), True


@pytest.mark.shared("corpus/CATALOG.json")
def test_fast_rows_equal_the_general_path_on_every_corpus_batch():
    cat = json.loads((CORPUS / "CATALOG.json").read_text())
    total: dict = {}
    for repo in cat.values():
        for f in repo["files"]:
            if f["kind"] in ("snapshot", "bootstrap.checkpoint", "metadata-log"):
                for k, v in compare(str(CORPUS / f["local"])).items():
                    total[k] = total.get(k, 0) + v
    assert total["records"] > 500_000, total
    assert total["fast_records"] > 0.9 * total["records"], total  # the comparison is not vacuous


@pytest.mark.shared("perf/churn-controller-1.log.gz")
def test_fast_rows_equal_the_general_path_on_the_real_controller_log():
    seen = compare(gzip.decompress(PERF_LOG.read_bytes()))
    assert seen["records"] == 207_022  # (the other 5 are in control batches)
    assert seen["fast_records"] == seen["records"], seen


def test_fast_rows_decline_or_match_what_is_not_plain():
    """Keys and headers decline; an undecodable value inside a plain batch, an
    unknown type and a record with typed columns all match the general path."""
    topic = md.encode_metadata("TopicRecord", 0, {"name": 't\u00e9"x', "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})
    part = md.encode_metadata(
        "PartitionRecord",
        0,
        {
            "partitionId": 3,
            "topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
            "replicas": [1, 2],
            "isr": [2],
            "removingReplicas": [],
            "addingReplicas": [],
            "leader": 2,
            "leaderEpoch": 7,
            "partitionEpoch": 1,
        },
    )
    part2 = md.encode_metadata(
        "PartitionRecord",
        0,
        {
            "partitionId": 4,
            "topicId": "AAAAAAAAAAAAAAAAAAAAAg",
            "replicas": [1, 2],
            "isr": [2],
            "removingReplicas": [],
            "addingReplicas": [],
            "leader": 2,
            "leaderEpoch": 7,
            "partitionEpoch": 1,
        },
    )
    for records in (
        [(None, topic), (None, part), (None, part2), (None, part)],
        [(None, part[:-1]), (None, b"\x01\x63\x00"), (None, part2)],
    ):
        b = next(iter(BatchReader(encode_batch(records, base_offset=5))))
        fast = R._plain_body(b, b.data, R.decode_value)
        assert fast is not None
        assert same(fast, R._body_columns(b, b.records(), R.decode_value))
    body = R._plain_body(b, b.data, R.decode_value)
    head, _payload, entry = body[5][2]
    assert head == R._head("metadata", "PARTITION_RECORD", 3, 0, None)
    assert R.resolve_typed(entry, body[3][2]) == (R.TOPIC, (None, "AAAAAAAAAAAAAAAAAAAAAg", 4, 2, 7, [1, 2], [2]))
    # the entry is memoised by the value's tail, which partition 3 of topic ...AQ (above)
    # shares: it holds that record's leading fields; each row's own come from its value
    assert len(entry) == 3 and entry[1][1:3] == ("AAAAAAAAAAAAAAAAAAAAAQ", 3)
    for keyed in ([(b"k", topic)], [(None, topic, [("h", b"v")])]):
        b = next(iter(BatchReader(encode_batch(keyed, base_offset=5))))
        assert R._plain_body(b, b.data, R.decode_value) is None


def _table(path, batch_rows):
    import os

    import pyarrow as pa

    from quorumctl.spark import plan, schema

    sf = plan.SourceFile(path=str(path), kind="segment", size=os.path.getsize(path))
    batches = list(A.arrow_batches([plan.Piece(sf, 0, sf.size)], schema.arrow_schema(), batch_rows))
    return pa.Table.from_batches(batches, schema=schema.arrow_schema())


@pytest.mark.shared("perf/churn-controller-1.log.gz")
@pytest.mark.parametrize("batch_rows", [8192, 333])
def test_arrow_columns_from_memoised_entries_equal_the_general_path(tmp_path, monkeypatch, batch_rows):
    """The builder's vectorised columns (distinct typed entries gathered, topic
    and partition ids read from each value's bytes) equal those of the general
    path, where every row carries its own values, over the real controller log."""
    path = tmp_path / "real.log"
    path.write_bytes(gzip.decompress(PERF_LOG.read_bytes()))
    fast = _table(path, batch_rows)
    monkeypatch.setattr(R, "_plain_body", lambda batch, data, decode: None)
    general = _table(path, batch_rows)
    assert fast.num_rows == general.num_rows == 207_027
    for name in fast.column_names:
        assert fast.column(name).equals(general.column(name)), name
    # not vacuous: most rows are partitions, with many topics and partition ids
    parts = fast.filter(pa_compute().equal(fast.column("record_type"), "PARTITION_RECORD"))
    assert parts.num_rows > 10_000
    assert len(set(parts.column("topic_id").to_pylist())) > 10
    assert len(set(parts.column("partition_id").to_pylist())) > 10


def pa_compute():
    import pyarrow.compute as pc

    return pc
