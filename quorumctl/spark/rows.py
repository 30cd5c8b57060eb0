"""Decoding pieces of files into rows of the export schema (`Rows`, columns as
Python lists), which arrow.py turns into Arrow batches.

This is what every Spark task runs (and what tests and the benchmark call
without Spark). It streams a piece with `BatchReader` (one batch in memory at
a time), decodes records and their values with quorumctl's own decoders, and
fills `Rows` of about `batch_rows` rows. Python touches as few values as it
can, since per-value work is what costs:
- the batch columns are the batches' raw 61-byte headers, kept as bytes (the
  Arrow builder parses them in one vectorised numpy pass);
- plain metadata batches (uncompressed, null keys, no headers: nearly all of
  a metadata log) take dump-log's hot path: the record frames are walked
  without Record objects (`plain_value_spans`), payload_json comes straight
  from the value's bytes through the generated text decoders, and the typed
  columns are memoised by the value's tail (see `_row_fn`); other batches go
  through Record objects and dicts (`_body_columns`), which report problems;
- small batch bodies are memoised by their bytes (`BodyCache`), so a log full
  of identical NoOpRecord batches costs one decode;
- file columns are a piece's constants (`file_values`), never per row.

Problems never raise: a batch whose records do not decode becomes one
`batch_error` row, a bad tail one `tail_error` row, an unreadable file one
`file_error` row (see docs/parquet.md).
"""

from __future__ import annotations

from ..records import metadata as md
from ..records.metadata import payload_prefix
from ..records.crc import crc32c
from ..records.batch import (
    ATTR_COMPRESSION,
    ATTR_CONTROL,
    ATTR_LOG_APPEND_TIME,
    CRC_START,
    HEADER_SIZE,
    BatchError,
    BatchReader,
    LegacyEntry,
    plain_value_spans,
)
from ..render.output import json_bytes
from . import fs
from .plan import Piece
from .schema import NAMES

# Column groups in schema order; `timestamp` and `date` are derived from
# `timestamp_ms` in Arrow, so rows never carry them.
FILE_COLS = NAMES[0:8]  # source_file .. snapshot_epoch
BATCH_COLS = NAMES[8:27]  # row_kind .. producer_epoch
RECORD_COLS = [n for n in NAMES[27:] if n not in ("timestamp", "date")]
assert FILE_COLS[-1] == "snapshot_epoch" and BATCH_COLS[0] == "row_kind"
assert BATCH_COLS[-1] == "producer_epoch" and RECORD_COLS[0] == "record_index"
N_TYPED = 16
assert RECORD_COLS[-N_TYPED] == "topic_name" and RECORD_COLS[-1] == "config_value"

OWN_COLS = RECORD_COLS[:6]  # record_index, offset, timestamp_ms, key, value, headers
DECODED_COLS = RECORD_COLS[6:]  # record_kind .. config_value
assert OWN_COLS[-1] == "headers" and DECODED_COLS[0] == "record_kind"
_NONE_DECODED = ((None,) * 5, None, (0, ()))  # the decoded part of an error row

# ConfigResource.Type ids (clients' org.apache.kafka.common.config.ConfigResource)
CONFIG_RESOURCE_TYPES = {0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}


# -- typed columns -------------------------------------------------------------
# A record fills at most one family of typed columns; each extractor returns
# (family number, the family's values): the record's "typed entry". Rows of
# other families get nulls. The hot path's entries are memoised and shared by
# many rows (see `_row_fn`), so the Arrow builder converts each distinct entry
# once and gathers.
FAMILIES: list[tuple[str, ...]] = [
    (),  # 0: no typed entry (NO_TYPED)
    ("topic_name", "topic_id", "partition_id", "leader", "leader_epoch", "replicas", "isr"),
    ("broker_id", "broker_epoch", "fenced"),
    ("feature_name", "feature_level"),
    ("config_resource_type", "config_resource_name", "config_key", "config_value"),
]
TOPIC, BROKER, FEATURE, CONFIG = 1, 2, 3, 4
NO_TYPED = (0, ())


def _topic(d):
    return TOPIC, (d.get("name"), d.get("topicId"), None, None, None, None, None)


def _remove_topic(d):
    return TOPIC, (None, d.get("topicId"), None, None, None, None, None)


def _partition(d):
    return TOPIC, (
        None,
        d.get("topicId"),
        d.get("partitionId"),
        d.get("leader"),
        d.get("leaderEpoch"),
        d.get("replicas"),
        d.get("isr"),
    )


def _partition_change(d):
    leader = d.get("leader")
    if leader == -2:  # NO_LEADER_CHANGE: Kafka never writes it, but say "unchanged" if it does
        leader = None
    return TOPIC, (None, d.get("topicId"), d.get("partitionId"), leader, None, d.get("replicas"), d.get("isr"))


def _broker(fenced_key=None, id_key="brokerId", epoch_key="brokerEpoch", fixed=None):
    def f(d):
        if fixed is not None:
            fenced = fixed
        elif fenced_key == "registration":
            fenced = d.get("fenced")
        elif fenced_key == "change":
            fenced = {1: True, -1: False}.get(d.get("fenced"))
        else:
            fenced = None
        return BROKER, (d.get(id_key), d.get(epoch_key), fenced)

    return f


def _feature(d):
    # (Kafka 3.0-3.2's layout has a min/max pair: the max is the finalized level)
    return FEATURE, (d.get("name"), d.get("featureLevel", d.get("maxFeatureLevel")))


def _config(d):
    rt = d.get("resourceType")
    return CONFIG, (
        CONFIG_RESOURCE_TYPES.get(rt, None if rt is None else str(rt)),
        d.get("resourceName"),
        d.get("name"),
        d.get("value"),
    )


_K = md.API_KEYS
TYPED_METADATA = {
    _K["TopicRecord"]: _topic,
    _K["RemoveTopicRecord"]: _remove_topic,
    _K["PartitionRecord"]: _partition,
    _K["PartitionChangeRecord"]: _partition_change,
    _K["RegisterBrokerRecord"]: _broker("registration"),
    _K["UnregisterBrokerRecord"]: _broker(),
    _K["BrokerRegistrationChangeRecord"]: _broker("change"),
    _K["FenceBrokerRecord"]: _broker(id_key="id", epoch_key="epoch", fixed=True),
    _K["UnfenceBrokerRecord"]: _broker(id_key="id", epoch_key="epoch", fixed=False),
    _K["ProducerIdsRecord"]: _broker(),
    _K["FeatureLevelRecord"]: _feature,
    _K["ConfigRecord"]: _config,
}


# -- decoding values ----------------------------------------------------------------


def file_values(piece: Piece) -> tuple:
    f = piece.file
    return (
        f.path,
        f.kind,
        f.cluster_id,
        f.node_id,
        f.directory_id,
        f.segment_base_offset,
        f.snapshot_end_offset,
        f.snapshot_epoch,
    )


_HEADS: dict = {}


def _head(kind, type_name, api_key, version, error) -> tuple:
    """(record_kind, record_type, record_api_key, record_version, decode_error),
    interned: a log has few distinct ones, and the Arrow builder gathers them."""
    h = (kind, type_name, api_key, version, error)
    got = _HEADS.get(h)
    if got is None:
        if len(_HEADS) > 4096:  # decode errors carry positions: do not hoard them
            return h
        got = _HEADS[h] = h
    return got


_FAST: dict = {}


def _fast_parts(api_key: int, version: int):
    """(head, JSON prefix, typed extractor) of a metadata (api key, version)."""
    got = _FAST.get((api_key, version))
    if got is None:
        type_name = md.TYPE_NAMES[api_key]
        got = _FAST[(api_key, version)] = (
            _head("metadata", type_name, api_key, version, None),
            payload_prefix(api_key, version),
            TYPED_METADATA.get(api_key),
        )
    return got


def decode_value(key, value, control: bool) -> tuple:
    """(head, payload_json, typed entry) for one record's key and value (see
    `_head`, FAMILIES): a pure function of them (a LEADER_CHANGE's
    leader_epoch, which comes from its batch, is filled in by the caller)."""
    if not control:
        hit = md.decode_metadata_fast(value)
        if hit is not None:  # the hot path, as dump-log's: only the data is encoded
            head, prefix, fn = _fast_parts(hit[0], hit[1])
            data = hit[2]
            return head, prefix + json_bytes(data) + b"}", fn(data) if fn is not None else NO_TYPED
    d = md.decode_control(key, value) if control else md.decode_metadata(value)
    data = d.data
    if data is None:
        return _head(d.kind, d.type_name, d.api_key, d.version, d.error), None, NO_TYPED
    if control:
        typed = (
            (TOPIC, (None, None, None, data.get("leaderId"), None, None, None))
            if d.api_key == md.LEADER_CHANGE
            else NO_TYPED
        )
    else:
        fn = TYPED_METADATA.get(d.api_key)
        typed = fn(data) if fn is not None else NO_TYPED
    return _head(d.kind, d.type_name, d.api_key, d.version, None), json_bytes(d.to_json()), typed


# -- the hot path: plain metadata batches -------------------------------------------
# Most of a metadata log is uncompressed batches of metadata records with null
# keys and no headers. Their record frames are walked without Record objects
# (records/batch.plain_value_spans, as dump-log's hot path), each value's
# payload text comes straight from its bytes through the generated text
# decoder (as dump-log's), and the typed columns of the bulk record types are
# memoised by the same value tail the text decoder memoises its text by (a
# PartitionRecord's replicas, ISR, leader and epochs repeat across partitions;
# only the leading partition id and topic id differ).


class _Lead:
    """A stand-in for a leading field's value, to see where an extractor puts it."""

    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


# extractors that copy the leading fixed-size fields (topic id, partition id) as
# they are: their memoised entry stands for every value with the same tail, and
# the builder reads the leading fields from the value column (`LeadLayout`)
LEAD_AS_IS = (_topic, _remove_topic, _partition, _partition_change)
TYPED_MEMO = 16_384

# struct format characters of codec.FIXED as numpy dtypes
NUMPY_FIXED = {
    "?": "?",
    "b": "i1",
    "h": ">i2",
    "H": ">u2",
    "i": ">i4",
    "I": ">u4",
    "q": ">i8",
    "d": ">f8",
    "16s": "V16",
}


class LeadLayout:
    """Where the leading fixed-size fields of one (api key, version)'s values
    go among its typed values: `fields` is [(typed position, byte offset in
    the value, struct code, is uuid)], the offsets counted from the value's
    first byte (`_row_fn` only takes values whose frame version, api key and
    version are one byte each, so the fields start at byte 3)."""

    __slots__ = ("fields", "size")

    def __init__(self, lead, extract, data: dict, width: int):
        import re
        import struct

        fmt, keys, uuids = lead[0].format, lead[1], lead[2]
        codes = re.findall(r"16s|[?bhHiIqd]", fmt.lstrip(">"))
        assert len(codes) == len(keys) and all(c in NUMPY_FIXED for c in codes), fmt
        offsets, at = [], 3
        for c in codes:
            offsets.append(at)
            at += struct.calcsize(">" + c)
        self.size = at - 3
        assert self.size == lead[0].size, fmt
        probe = dict(data)
        probe.update({k: _Lead(i) for i, k in enumerate(keys)})
        got = extract(probe)[1]
        self.fields = [
            (j, offsets[v.i], codes[v.i], uuids[v.i]) for j, v in enumerate(got[:width]) if isinstance(v, _Lead)
        ]

    def resolve(self, entry: tuple, value: bytes) -> tuple:
        """`entry`'s (family, values) for one value: what the builder computes
        for whole columns at once (see arrow.ArrowBuilder._lead_overlay)."""
        import struct
        from ..schema.codec import uuid_str

        values = list(entry[1])
        for j, off, code, is_uuid in self.fields:
            raw = struct.unpack_from(">" + code, value, off)[0]
            values[j] = uuid_str(raw) if is_uuid else raw
        return entry[0], tuple(values)


def resolve_typed(entry: tuple, value) -> tuple:
    """A row's typed entry as (family, values), whether memoised by tail (a
    third element, its LeadLayout) or not."""
    return entry[2].resolve(entry, value) if len(entry) == 3 else entry


def _row_fn(api_key: int, version: int):
    """(data, start, end) -> the decoded tuple (head, payload_json, typed
    entry) of the metadata value at data[start:end], or None when the fast
    path does not take it (then `decode_value` says what is wrong). None for
    types the text decoders do not render (unknown, or with doubles)."""
    pt = md.payload_text_fn(api_key, version)
    if pt is None:
        return None
    prefix, text = pt
    head = _head("metadata", md.TYPE_NAMES[api_key], api_key, version, None)
    extract = TYPED_METADATA.get(api_key)
    if extract is None:

        def untyped_row(data, s, e):
            try:
                body, p = text(data, s + 3, e)
            except Exception:  # any failure: the general path reports it precisely
                return None
            return (head, prefix + body + "}", NO_TYPED) if p == e else None

        return untyped_row
    from ..schema.codec import codec

    lead = codec(md.METADATA_RECORDS[api_key]).lead(version) if extract in LEAD_AS_IS else None
    if lead is None:

        def typed_row(data, s, e):
            try:
                body, p = text(data, s + 3, e)
            except Exception:
                return None
            hit = md.decode_metadata_fast(data[s:e]) if p == e else None
            return None if hit is None else (head, prefix + body + "}", extract(hit[2]))

        return typed_row

    # the typed entry of the value's tail (all but the leading fields), memoised by
    # its bytes: (family, values, layout), whose leading fields the builder fills in
    # from each row's value; the layout is made on first use
    skip = 3 + lead[0].size
    memo: dict = {}
    layout = None

    def miss(data, s, e):
        nonlocal layout
        hit = md.decode_metadata_fast(data[s:e])
        if hit is None:
            return None
        family, values = extract(hit[2])
        if layout is None:
            layout = LeadLayout(lead, extract, hit[2], len(values))
        if len(memo) >= TYPED_MEMO:
            memo.clear()
        entry = memo[data[s + skip : e]] = (family, values, layout)
        return entry

    def row(data, s, e):
        try:
            body, p = text(data, s + 3, e)
        except Exception:
            return None
        if p != e:
            return None
        entry = memo.get(data[s + skip : e])
        if entry is None:
            entry = miss(data, s, e)
            if entry is None:
                return None
        return head, prefix + body + "}", entry

    return row


_ROW_FNS: dict = {}


def _plain_body(batch, data, decode) -> tuple | None:
    """`_body_columns` of an uncompressed metadata batch whose records are as
    Kafka writes them (see plain_value_spans), without Record objects; None
    for any other batch."""
    if type(data) is not bytes:
        data = bytes(data)  # (a memoryview: slices must be bytes, strings decode from them)
    spans = plain_value_spans(data, HEADER_SIZE, batch.record_count)
    if spans is None:
        return None
    tss, starts, ends = spans
    decoded: list = []
    app = decoded.append
    special = []
    fns = _ROW_FNS
    get = fns.get
    values = [data[s:e] for s, e in zip(starts, ends)]
    for s, e, value in zip(starts, ends, values):
        if e - s >= 3 and data[s] == 1 and data[s + 1] < 128 and data[s + 2] < 128:
            k = data[s + 1] << 7 | data[s + 2]
            fn = get(k, False)
            if fn is False:
                fn = fns[k] = _row_fn(data[s + 1], data[s + 2])
            if fn is not None:
                dv = fn(data, s, e)
                if dv is not None:
                    app(dv)
                    continue
        dv = decode(None, value, False)
        if dv[0][4] is not None:
            special.append(len(decoded))
        app(dv)
    n = len(starts)
    return (range(n), tss, [None] * n, values, [()] * n, decoded, special)


class BodyCache:
    """Decoded small batch bodies by their bytes. Metadata logs repeat whole
    batches (a NoOpRecord heartbeat batch every 500 ms differs from the last
    only in its header), and decoding is a pure function of the bytes, so a
    bounded memo saves most of the decode work on real logs. A body's records
    are kept relative to the batch header (offset and timestamp deltas), so a
    hit only adds the header's base offset and timestamp. (Single values are
    not memoised: measured, their memo cost as much as it saved, even on the
    NoOp-heavy corpus, once the bodies are.)

    A body is kept only when seen a second time: a log whose bodies never
    repeat would otherwise fill the memo with decoded values it never reuses,
    which measured 12-16% slower on such a log (memory churn and GC work)."""

    def __init__(self, limit: int = 1 << 14):
        self.limit = limit
        self.bodies: dict = {}
        self.seen: set = set()  # hashes of bodies seen once (a collision costs one memo entry)

    def get(self, key):
        return self.bodies.get(key)

    def remember(self, key, rel):
        h = hash(key)
        if h not in self.seen:
            if len(self.seen) >= 4 * self.limit:
                self.seen.clear()
            self.seen.add(h)
            return
        if len(self.bodies) >= self.limit:
            self.bodies.clear()
        self.bodies[key] = rel


class Stats:
    """What pieces held, counted as the export's summary counts them: batches
    that gave rows (record batches with records, and undecodable batches),
    records, errors (undecodable or CRC-failing batches, bad tails,
    unreadable files), records of CRC-failing batches, undecodable values."""

    __slots__ = ("batches", "records", "errors", "decode_errors", "corrupt_records")

    def __init__(self):
        self.batches = self.records = self.errors = self.decode_errors = self.corrupt_records = 0

    def add(self, other: "Stats | dict"):
        for k in self.__slots__:
            setattr(self, k, getattr(self, k) + (other[k] if isinstance(other, dict) else getattr(other, k)))

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}


HEAD_COLS = ("record_kind", "record_type", "record_api_key", "record_version", "decode_error")
assert set(HEAD_COLS) | {"payload_json"} | {c for f in FAMILIES[1:] for c in f} == set(DECODED_COLS)
_ZERO_HEADER = bytes(HEADER_SIZE)
SMALL_BATCH = HEADER_SIZE + 256  # batches up to this size have their decoded body memoised


class Rows:
    """The rows of one Arrow batch under construction, column by column.
    Per batch entry (a record batch, or an error): its raw header, position,
    row kind, corrupt flag, error, CRC result and how many rows it spans; per
    row: the record's own values and its decoded tuple."""

    __slots__ = (
        "headers",
        "valid",
        "position",
        "kind",
        "corrupt",
        "error",
        "crc_ok",
        "count",
        "offset",
        "ts",
        "key",
        "value",
        "rheaders",
        "decoded",
    )
    headers: bytearray
    # per batch entry
    valid: list[bool]
    position: list[int | None]
    kind: list[str]
    corrupt: list[bool]
    error: list[str | None]
    crc_ok: list[bool | None]
    count: list[int]
    # per row
    offset: list[int | None]
    ts: list[int | None]
    key: list[bytes | None]
    value: list[bytes | None]
    rheaders: list
    decoded: list[tuple]

    def __init__(self):
        self.headers = bytearray()
        for name in self.__slots__[1:]:
            setattr(self, name, [])

    def __len__(self):
        return len(self.offset)

    def error_row(self, kind: str, error: str, position=None, header: bytes | None = None, crc_ok=None):
        self.headers += header if header is not None else _ZERO_HEADER
        self.valid.append(header is not None)
        self.position.append(position)
        self.kind.append(kind)
        self.corrupt.append(True)
        self.error.append(error)
        self.crc_ok.append(crc_ok)
        self.count.append(1)
        self.offset.append(None)
        self.ts.append(None)
        self.key.append(None)
        self.value.append(None)
        self.rheaders.append(None)
        self.decoded.append(_NONE_DECODED)


def fill_rows(
    piece: Piece,
    rows_out,
    options: dict | None = None,
    stats: Stats | None = None,
    cache: BodyCache | None = None,
    batch_rows: int = 8192,
):
    """Decode a piece into `Rows`, yielding each one that reaches `batch_rows`
    rows (and a last, shorter one). `rows_out()` makes a fresh Rows."""
    stats = stats if stats is not None else Stats()
    cache = cache if cache is not None else BodyCache()
    rows = rows_out()
    path = piece.file.path
    try:
        source = fs.open_input(path, options)
    except OSError as e:
        stats.errors += 1
        rows.error_row("file_error", f"cannot read {path}: {e.strerror or e}")
        yield rows
        return
    reader = BatchReader(source, start=piece.start, end=None if piece.last else piece.end)
    decode = decode_value
    try:
        for batch in reader:
            if isinstance(batch, LegacyEntry):
                stats.batches += 1
                stats.errors += 1
                rows.error_row(
                    "batch_error",
                    f"batch at byte {batch.position} (offset "
                    f"{batch.base_offset}) has magic {batch.magic}: not a v2 record "
                    f"batch, not decoded",
                    position=batch.position,
                )
                continue
            data = batch.data
            computed = crc32c(data[CRC_START:])
            crc_ok = computed == batch.crc
            crc_error = (
                None
                if crc_ok
                else (
                    f"CRC-32C mismatch in batch at byte {batch.position} (offset {batch.base_offset}): "
                    f"stored {batch.crc:#010x}, computed {computed:#010x}"
                )
            )
            # small batch bodies repeat verbatim (a NoOpRecord heartbeat batch differs
            # from the last only in its header): decode each distinct body once
            bkey = (batch.attributes, batch.record_count, data[HEADER_SIZE:]) if len(data) <= SMALL_BATCH else None
            rel = cache.get(bkey) if bkey is not None else None
            if rel is None:
                if not batch.attributes & (ATTR_CONTROL | ATTR_COMPRESSION):
                    rel = _plain_body(batch, data, decode)
                if rel is None:
                    try:
                        records = batch.records()
                    except BatchError as e:
                        stats.batches += 1
                        stats.errors += 1
                        msg = f"{e} (at byte {e.pos})" if e.pos is not None else str(e)
                        rows.error_row(
                            "batch_error",
                            f"{crc_error}; {msg}" if crc_error else msg,
                            position=batch.position,
                            header=data[:HEADER_SIZE],
                            crc_ok=crc_ok,
                        )
                        continue
                    rel = _body_columns(batch, records, decode)
                if bkey is not None:
                    cache.remember(bkey, rel)
            n = len(rel[0])
            if not n:
                continue  # an empty batch (compaction leaves them) has no row and is not counted
            stats.batches += 1
            stats.records += n
            if crc_error:
                stats.errors += 1
                stats.corrupt_records += n
            rows.headers += data[:HEADER_SIZE]
            rows.valid.append(True)
            rows.position.append(batch.position)
            rows.kind.append("record")
            rows.corrupt.append(not crc_ok)
            rows.error.append(crc_error)
            rows.crc_ok.append(crc_ok)
            rows.count.append(n)
            offset_deltas, ts_deltas, keys, values, headers, decoded, special = rel
            offset = rows.offset
            if type(offset_deltas) is range:  # (plain bodies: 0, 1, 2 ...)
                offset.extend(range(batch.base_offset, batch.base_offset + n))
            else:
                offset.extend(map(batch.base_offset.__add__, offset_deltas))
            if batch.attributes & ATTR_LOG_APPEND_TIME:
                rows.ts.extend([batch.max_timestamp] * n)
            elif ts_deltas.count(0) == n:  # (records appended together: the usual case)
                rows.ts.extend([batch.base_timestamp] * n)
            else:
                rows.ts.extend(map(batch.base_timestamp.__add__, ts_deltas))
            rows.key.extend(keys)
            rows.value.extend(values)
            rows.rheaders.extend(headers)
            if special:
                decoded = list(decoded)
                for i in special:
                    dv = decoded[i]
                    head = dv[0]
                    if head[4] is not None:
                        stats.decode_errors += 1
                    else:  # a LeaderChange: its leader epoch is the batch's
                        decoded[i] = (
                            head,
                            dv[1],
                            (TOPIC, (None, None, None, dv[2][1][3], batch.leader_epoch, None, None)),
                        )
            rows.decoded.extend(decoded)
            if len(offset) >= batch_rows:
                yield rows
                rows = rows_out()
    except OSError as e:
        stats.errors += 1
        rows.error_row("file_error", f"read error in {path}: {e.strerror or e}")
        yield rows
        return
    finally:
        if hasattr(source, "close"):
            source.close()
    stop = reader.stop
    if (
        stop is not None
        and stop.reason is not None
        and not (stop.remaining and _all_zero(piece, stop.position, stop.remaining, options))
    ):
        # (a preallocated, zero-filled tail is the end of the log, not damage)
        stats.errors += 1
        what = {"truncated": "torn tail", "short": "torn tail", "corrupt": "corrupt tail"}[stop.reason]
        rows.error_row("tail_error", f"{what} at byte {stop.position} of {path}: {stop.detail}", position=stop.position)
    if len(rows):
        yield rows


def _body_columns(batch, records, decode) -> tuple:
    """A decoded batch body as columns relative to its header (offset and
    timestamp deltas, keys, values, headers, decoded values) plus the indexes
    of the records that need their batch (LeaderChange) or count as decode
    errors: the part of a batch that `BodyCache` can keep and reuse."""
    control = batch.is_control
    base_off, base_ts = batch.base_offset, batch.base_timestamp
    decoded = [decode(r.key, r.value, control) for r in records]
    special = [i for i, dv in enumerate(decoded) if dv[0][4] is not None or (control and dv[0][2] == md.LEADER_CHANGE)]
    return (
        [r.offset - base_off for r in records],
        [r.timestamp - base_ts for r in records],
        [r.key for r in records],
        [r.value for r in records],
        [r.headers for r in records],
        decoded,
        special,
    )


def _all_zero(piece: Piece, position: int, length: int, options) -> bool:
    try:
        with fs.open_input(piece.file.path, options) as f:
            f.seek(position)
            left = length
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk or chunk.count(0) != len(chunk):
                    return False
                left -= len(chunk)
        return True
    except OSError:
        return False
