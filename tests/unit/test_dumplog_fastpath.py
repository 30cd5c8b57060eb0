"""dump-log's hot path (render.dumplog.fast_metadata_lines and the generated
text decoders) gives exactly the text of the plain decoder (Record objects,
dicts, msgspec), for every record of the real corpus and of the real
controller log in ../shared/perf, in text and JSON."""

from __future__ import annotations

import gzip

import pytest

from quorumctl.core import core
from quorumctl.records import metadata as md
from quorumctl.records.batch import BatchReader, Batch, encode_batch
from quorumctl.render import dumplog as R
from quorumctl.render.output import json_line
from samples import SHARED, corpus_record_files

PERF_LOG = SHARED / "perf" / "churn-controller-1.log.gz"
OPTS = R.Options(deep=True, print_data=True, metadata_decoder=True)


def plain_lines(b: Batch, as_json: bool) -> list[str]:
    records = b.records()
    if as_json:
        return [json_line(r) for r in R.records_json(b, records, True)]
    out: list[str] = []
    R.record_lines(b, records, OPTS, out)
    return out


def compare_file(source) -> dict:
    """Compare both paths on every batch and every metadata value of one file;
    returns how much each covered."""
    seen = {"batches": 0, "fast_batches": 0, "records": 0, "fast_records": 0, "values": 0, "text_values": 0}
    for b in BatchReader(source):
        if not isinstance(b, Batch):
            continue
        seen["batches"] += 1
        try:
            records = b.records()
        except Exception:  # an undecodable batch: the fast path must decline it
            assert R.fast_metadata_lines(b, False) is None
            continue
        seen["records"] += len(records)
        for as_json in (False, True):
            fast = R.fast_metadata_lines(b, as_json)
            if fast is not None:
                assert fast == plain_lines(b, as_json), (source, b.position, as_json)
                if not as_json:
                    seen["fast_batches"] += 1
                    seen["fast_records"] += len(fast)
        if b.is_control:
            continue
        for r in records:  # compressed batches too: each value through the text decoder
            v = r.value
            seen["values"] += 1
            if v is None or len(v) < 3 or v[0] != 1 or v[1] >= 128 or v[2] >= 128:
                continue
            hit = md.payload_text_fn(v[1], v[2])
            if hit is None:
                continue
            try:
                body, end = hit[1](bytes(v), 3, len(v))
            except Exception:
                body, end = None, -1
            plain = md.decode_metadata_fast(v)
            if end != len(v):
                assert plain is None, (source, r.offset)
                continue
            seen["text_values"] += 1
            text = hit[0] + body + "}"
            assert text == R.metadata_payload(v), (source, r.offset)
    return seen


@pytest.mark.shared("corpus/CATALOG.json")
def test_fast_path_equals_plain_decoder_on_every_corpus_record():
    total: dict = {}
    for path in corpus_record_files():
        for k, v in compare_file(str(path)).items():
            total[k] = total.get(k, 0) + v
    # the fast path carried nearly all of it (so the comparison above is not vacuous)
    assert total["records"] > 700_000
    assert total["fast_records"] > 0.9 * total["records"], total
    assert total["text_values"] > 0.9 * total["values"], total


@pytest.mark.shared("perf/churn-controller-1.log.gz")
def test_fast_path_equals_plain_decoder_on_the_real_controller_log():
    seen = compare_file(gzip.decompress(PERF_LOG.read_bytes()))
    assert seen["records"] == 207_027
    assert seen["batches"] == 817
    assert seen["fast_records"] > 200_000, seen
    assert seen["text_values"] > 200_000, seen


def test_fast_path_declines_what_it_does_not_render():
    """Keys, headers, control and compressed batches, and broken values go the plain way;
    an undecodable value inside an otherwise plain batch still renders like the plain path."""
    value = md.encode_metadata("TopicRecord", 0, {"name": 't\u00e9"x', "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})
    plain = BatchReader(encode_batch([(None, value)], base_offset=5))
    b = next(iter(plain))
    assert R.fast_metadata_lines(b, False) == plain_lines(b, False)
    assert R.fast_metadata_lines(b, False)[0].endswith(
        'payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":"t\u00e9\\"x","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}}'
    )
    keyed = next(iter(BatchReader(encode_batch([(b"k", value)], base_offset=5))))
    assert R.fast_metadata_lines(keyed, False) is None
    headed = next(iter(BatchReader(encode_batch([(None, value, [("h", b"v")])], base_offset=5))))
    assert R.fast_metadata_lines(headed, True) is None
    zipped = next(iter(BatchReader(encode_batch([(None, value)], base_offset=5, compression_codec=1))))
    assert R.fast_metadata_lines(zipped, False) is None
    broken = next(iter(BatchReader(encode_batch([(None, value[:-1]), (None, b"\x01\x63\x00")], base_offset=5))))
    assert R.fast_metadata_lines(broken, False) == plain_lines(broken, False)
    assert R.fast_metadata_lines(broken, True) == plain_lines(broken, True)
    assert '"error"' in R.fast_metadata_lines(broken, True)[1]


def test_one_process_json_holds_one_batch_line_at_a_time(tmp_path):
    """dump-log in one process (stdout not a file, or one core) writes a JSON batch
    line out as soon as it is made: the sink once held up to 4096 of these
    (MBs each: ~1 GB on the 140 MB perf log) before writing."""
    from quorumctl.dump import log as dumplog

    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    value = md.encode_metadata("NoOpRecord", 0, {})
    batches = [encode_batch([(None, value)] * 2000, base_offset=2000 * k) for k in range(12)]
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))

    class Writes:
        def __init__(self):
            self.sizes: list[int] = []

        def write(self, s):
            self.sizes.append(len(s))

        def flush(self):
            pass

    out, err = Writes(), Writes()
    assert dumplog.run(dumplog.DumpRequest(paths=[str(d)], output="json"), R.Sink(out, err)) == 0
    line = 2000 * len(
        '{"offset":0,"timestamp":0,"keySize":-1,"valueSize":4,"sequence":-1,"headers":[],'
        '"payload":{"type":"NO_OP_RECORD","version":0,"data":{}}},'
    )
    assert sum(out.sizes) > 12 * line  # every batch's line was written ...
    # ... one at a time, not all 12 together (the compiled core's lines are gathered
    # into blocks of about R.RAW_BLOCK: at most that plus one batch line)
    assert max(out.sizes) < (R.RAW_BLOCK if core is not None else 0) + 2 * line
    assert err.sizes == []
