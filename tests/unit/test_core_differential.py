"""The compiled core (quorumctl._core, Rust) against the pure-Python path: for
every record-batch file of the real-data corpus and for generated batches of
every metadata record type and version (every codec), both give byte-identical
dump-log text and JSON; hostile mutations of real batches are either declined
by the core (the pure path then reports them) or printed identically. Skipped
where the core is not built (a machine without cargo; CI builds it)."""

from __future__ import annotations

import io
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from quorumctl.core import core
from quorumctl.records import metadata as md
from quorumctl.records.batch import Batch, BatchReader, Producer, encode_batch
from quorumctl.records.metadata_schemas import METADATA_RECORDS
from quorumctl.render import dumplog as R
from quorumctl.render.output import json_line
from samples import CORPUS, corpus_record_files
from test_record_schemas import message_strategy

pytestmark = pytest.mark.skipif(core is None, reason="the compiled core is not built (or QUORUMCTL_PURE=1)")

OPTS = R.Options(deep=True, print_data=True, metadata_decoder=True)


def pure_batch(b: Batch, as_json: bool) -> bytes:
    """What the pure path prints for one batch (the compiled core's part of it)."""
    records = b.records()
    if as_json:
        return ",".join(json_line(r) for r in R.records_json(b, records, True)).encode()
    out: list[str] = [R.batch_line(b, b.crc_valid())]
    R.record_lines(b, records, OPTS, out)
    return "".join(line + "\n" for line in out).encode()


def core_batch(b: Batch, as_json: bool):
    return core.metadata_batch(bytes(b.data), b.position, as_json, R.payload_fallback)


def compare_source(source, seen: dict) -> None:
    for b in BatchReader(source):
        if not isinstance(b, Batch):
            continue
        seen["batches"] += 1
        for as_json in (False, True):
            got = core_batch(b, as_json)
            if got is None:
                continue
            out, n = got[0], got[1]
            assert got[2] == b.crc_valid()
            assert n == b.record_count
            assert out == pure_batch(b, as_json), (source, b.position, as_json)
            if not as_json:
                seen["core_batches"] += 1
                seen["core_records"] += n


@pytest.mark.shared("corpus/CATALOG.json")
def test_core_equals_pure_path_on_every_corpus_batch():
    seen = {"batches": 0, "core_batches": 0, "core_records": 0}
    files = corpus_record_files()
    for path in files:
        compare_source(str(path), seen)
    # the core carried nearly all of it: the comparison is not vacuous, and the
    # batches left to the pure path (control batches, torn ones) are rare
    assert len(files) > 100
    assert seen["core_records"] > 700_000, seen
    assert seen["core_batches"] > 0.85 * seen["batches"], seen


def run_dump(paths, as_json: bool, use_core, monkeypatch) -> tuple[int, bytes, str]:
    from quorumctl.dump import log as dumplog

    monkeypatch.setattr(dumplog, "core", use_core)
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    err = io.StringIO()
    sink = R.Sink(out, err)
    request = dumplog.DumpRequest(
        paths=[str(p) for p in paths], metadata_decoder=not as_json, output="json" if as_json else "text"
    )
    code = dumplog.run(request, sink)
    out.flush()
    return code, raw.getvalue(), err.getvalue()


@pytest.mark.shared("corpus/CATALOG.json")
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_dump_log_command_is_byte_identical_on_both_cores(as_json, monkeypatch):
    """The whole command (batch lines, problems, the files' other lines) over a
    sample of the corpus's files, one run per core."""
    files = corpus_record_files()
    sample = random.Random(46).sample(files, min(40, len(files)))
    pure = run_dump(sample, as_json, None, monkeypatch)
    rust = run_dump(sample, as_json, core, monkeypatch)
    assert len(pure[1]) > 100_000
    assert rust == pure


# -- generated batches: every metadata record type and version, every codec --

CASES = [(msg, v) for _key, msg in sorted(METADATA_RECORDS.items()) for v in msg.versions]


@pytest.mark.parametrize("msg,v", CASES, ids=[f"{m.name}-v{v}" for m, v in CASES])
def test_generated_batches_of_every_record_type(msg, v):
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.lists(message_strategy(msg, v), min_size=1, max_size=4),
        st.sampled_from([0, 1, 2, 3, 4]),
        st.integers(0, 2**40),
        st.integers(-1, 2**31 - 1),
        st.booleans(),
    )
    def run(values, codec, base_offset, base_sequence, log_append):
        records = [(None, md.encode_metadata(msg.api_key, v, value)) for value in values]
        data = encode_batch(
            records,
            base_offset=base_offset,
            base_timestamp=1_700_000_000_000,
            compression_codec=codec,
            log_append_time=log_append,
            producer=Producer(base_sequence=base_sequence),
        )
        (b,) = list(BatchReader(data))
        for as_json in (False, True):
            got = core_batch(b, as_json)
            assert got is not None  # a plain batch: the core takes it, whatever the codec
            assert got[0] == pure_batch(b, as_json)

    run()


@pytest.mark.shared("corpus/CATALOG.json")
def test_mutated_batches_are_declined_or_identical():
    """Hostile bytes: random byte flips in real batches. The core never raises;
    what it prints is what the pure path prints."""
    rng = random.Random(4646)
    files = [p for p in corpus_record_files() if p.stat().st_size < 2 << 20]
    tried = taken = 0
    for path in rng.sample(files, min(30, len(files))):
        for b in list(BatchReader(str(path)))[:20]:
            if not isinstance(b, Batch):
                continue
            raw = bytearray(b.data)
            for _ in range(8):
                m = bytearray(raw)
                for _ in range(rng.randint(1, 3)):
                    m[rng.randrange(61, len(m)) if len(m) > 61 else rng.randrange(len(m))] = rng.randrange(256)
                (mb,) = [x for x in BatchReader(bytes(m)) if isinstance(x, Batch)] or [None]
                if mb is None:
                    continue
                tried += 1
                for as_json in (False, True):
                    got = core.metadata_batch(bytes(m), 0, as_json, R.payload_fallback)
                    if got is not None:
                        taken += 1
                        mb.position = 0
                        assert got[0] == pure_batch(mb, as_json)
    assert tried > 500
    assert taken > 50  # flips inside values: printed (with the pure path's error notes) identically


def test_a_panic_in_the_core_is_one_exception_not_a_crash():
    with pytest.raises(core.CoreError, match="internal error in the compiled core"):
        core._panic_for_test()
    assert issubclass(core.CoreError, ValueError)


# -- verify's batch-level pass (rust/src/verify.rs) --------------------------


def verify_json(paths, use_core, monkeypatch, deep: bool = False) -> list[dict]:
    from quorumctl.ops import verify as V

    monkeypatch.setattr(V, "core", use_core)
    return [r.to_json() for r in V.verify_paths([str(p) for p in paths], deep=deep)]


class CountingCore:
    """The core, counting the batches its verify walk checked itself."""

    def __init__(self):
        self.inline = 0

    def verify_walk(self, *args):
        got = core.verify_walk(*args)
        self.inline += got[2]
        return got


@pytest.mark.shared("corpus/CATALOG.json")
def test_verify_reports_are_identical_on_both_cores_for_every_corpus_dir(monkeypatch):
    """verify of every directory of the corpus holding record batches (metadata logs,
    snapshots, bootstrap checkpoints, topic segments, with their indexes and state
    files): the same reports, problems and statistics, field by field and in order."""
    cat = json.loads((CORPUS / "CATALOG.json").read_text())
    kinds = ("snapshot", "bootstrap.checkpoint", "metadata-log", "topic-segment")
    dirs = sorted({(CORPUS / f["local"]).parent for r in cat.values() for f in r["files"] if f["kind"] in kinds})
    counting = CountingCore()
    batches = 0
    for d in dirs:
        pure = verify_json([d], None, monkeypatch)
        assert verify_json([d], counting, monkeypatch) == pure, d
        batches += sum(r["stats"].get("batches", 0) for r in pure)
    assert len(dirs) > 500
    assert counting.inline > 0.5 * batches > 10_000  # the core checked most batches itself


def _batch(rng: random.Random, base: int, epoch: int, records: list, **kw) -> bytes:
    return encode_batch(
        records,
        base_offset=base,
        leader_epoch=epoch,
        base_timestamp=1_700_000_000_000 + rng.randrange(10**6),
        compression_codec=rng.choice([0, 0, 1, 2, 3, 4]),
        **kw,
    )


def _mutate(rng: random.Random, data: bytes) -> bytes:
    """One of the damage classes the batch-level pass checks, at a random place."""
    m = bytearray(data)
    what = rng.randrange(6)
    if what == 0:  # a flipped bit: CRC mismatch
        i = rng.randrange(21, len(m))
        m[i] ^= 1 << rng.randrange(8)
    elif what == 1:  # recordCount off by one (CRC left as it was: both problems)
        m[57:61] = (int.from_bytes(m[57:61], "big", signed=True) + rng.choice([-1, 1])).to_bytes(4, "big", signed=True)
    elif what == 2:  # magic 1: a legacy entry
        m[16] = 1
    elif what == 3:  # a negative lastOffsetDelta
        m[23:27] = (-2).to_bytes(4, "big", signed=True)
    elif what == 4:  # a base offset near the end of the long range
        m[0:8] = (2**63 - rng.randrange(1, 4)).to_bytes(8, "big")
    else:  # an impossible length
        m[8:12] = rng.choice([0, 13, 2**31 - 1]).to_bytes(4, "big")
    return bytes(m)


def generated_log(rng: random.Random, values: list) -> bytes:
    """A log of batches of the metadata records in `values` (drawn at random) with control batches,
    producers, epoch changes (and regressions), offset gaps and overlaps, damaged
    batches, and a torn, zero-filled or short tail."""
    out = []
    offset = rng.choice([0, 0, 5, 2**40])
    epoch = rng.randrange(1, 5)
    for _ in range(rng.randint(1, 60)):
        chunk = [rng.choice(values) for _ in range(rng.randint(1, 4))]
        r = rng.random()
        if r < 0.1:
            epoch += 1
        elif r < 0.13:
            epoch -= 1
        elif r < 0.17:
            offset += rng.choice([-3, -1, 2, 100])
        if rng.random() < 0.1:
            data = _batch(rng, offset, epoch, [(b"\x00\x00\x00\x02", b"\x00\x00" + bytes(6))], control=True)
            out.append(data)
            offset += 1
        kw = {"producer": Producer(id=rng.randrange(3), epoch=0, base_sequence=0)} if rng.random() < 0.2 else {}
        data = _batch(rng, offset, epoch, [(None, v) for v in chunk], **kw)
        if rng.random() < 0.1:
            data = _mutate(rng, data)
        out.append(data)
        offset += len(chunk)
    tail = rng.choice([b"", b"", bytes(rng.randrange(1, 40)), out[-1][: rng.randrange(1, len(out[-1]))]])
    return b"".join(out) + tail


VALUES = st.sampled_from(CASES).flatmap(
    lambda mv: message_strategy(*mv).map(lambda value: md.encode_metadata(mv[0].api_key, mv[1], value))
)


def test_an_entry_of_another_magic_after_the_last_batch_on_both_cores(tmp_path, monkeypatch):
    """Found by the generated logs below: a magic 1 entry after batches the core checked
    is no batch, so the file's last offset stays the last batch's (the core once lost it)."""
    noop = b"\x01\x14\x00\x00"  # NoOpRecord v0
    legacy = (12).to_bytes(8, "big") + (20).to_bytes(4, "big") + bytes(4) + b"\x01" + bytes(15)
    data = encode_batch([(None, noop)] * 2, base_offset=0) + encode_batch([(None, noop)], base_offset=2) + legacy
    path = tmp_path / "__cluster_metadata-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(data)
    pure = verify_json([path], None, monkeypatch)
    assert [p["kind"] for p in pure[0]["problems"]] == ["bad-magic"]
    assert (pure[0]["stats"]["batches"], pure[0]["stats"]["last_offset"]) == (2, 2)
    assert verify_json([path], core, monkeypatch) == pure


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    values=st.lists(VALUES, min_size=1, max_size=12),
    seed=st.integers(0, 2**32),
    where=st.sampled_from(["metadata", "topic", "snapshot"]),
)
def test_verify_reports_are_identical_on_both_cores_for_generated_logs(values, seed, where, tmp_path_factory):
    rng = random.Random(seed)
    data = generated_log(rng, values)
    d = tmp_path_factory.mktemp("verify")
    if where == "metadata":
        path = d / "__cluster_metadata-0" / "00000000000000000000.log"
    elif where == "topic":
        path = d / "orders-0" / "00000000000000000000.log"
    else:
        path = d / "__cluster_metadata-0" / f"{len(values):020d}-{rng.randrange(5):010d}.checkpoint"
    path.parent.mkdir()
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        pure = verify_json([path], None, mp)
        assert verify_json([path], core, mp) == pure


# -- the frame walk of image replay and spark-export (plain_value_spans) -----


def test_plain_value_spans_is_the_cores_where_it_is_built():
    from quorumctl.records import batch as B

    data = encode_batch([(None, b"\x01\x02\x00"), (None, b"\x01\x03\x00")], base_offset=0)
    assert B._core is core
    assert B.plain_value_spans(data, 61, 2) == B.plain_value_spans_py(data, 61, 2) == ([0, 0], [67, 77], [70, 80])


@pytest.mark.shared("corpus/CATALOG.json")
def test_plain_value_spans_identical_on_every_corpus_batch_and_mutations():
    """Every uncompressed batch of the corpus, and random byte flips of a sample
    (hostile frames: the core declines exactly where the pure path does)."""
    from quorumctl.records.batch import HEADER_SIZE, plain_value_spans_py

    rng = random.Random(4647)
    plain = mutated = 0
    for path in corpus_record_files():
        for b in BatchReader(str(path)):
            if not isinstance(b, Batch) or b.compression:
                continue
            data = bytes(b.data)
            want = plain_value_spans_py(data, HEADER_SIZE, b.record_count)
            assert core.plain_value_spans(data, HEADER_SIZE, b.record_count) == want, (path, b.position)
            plain += want is not None
            if rng.random() < 0.05:
                for _ in range(4):
                    m = bytearray(data)
                    for _ in range(rng.randint(1, 3)):
                        m[rng.randrange(HEADER_SIZE, len(m)) if len(m) > HEADER_SIZE else 0] = rng.randrange(256)
                    count = b.record_count + rng.choice([0, 0, 0, -1, 1])
                    got = core.plain_value_spans(bytes(m), HEADER_SIZE, count)
                    assert got == plain_value_spans_py(bytes(m), HEADER_SIZE, count)
                    mutated += 1
    assert plain > 10_000 and mutated > 500


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 8), st.integers(-2, 40))
def test_plain_value_spans_identical_on_arbitrary_bytes(data, pos, count):
    from quorumctl.records.batch import plain_value_spans_py

    assert core.plain_value_spans(data, pos, count) == plain_value_spans_py(data, pos, count)
