"""Building Arrow record batches of the export schema from rows.py's `Rows`.

`arrow_batches` is what every Spark task runs (writer.py, source.py; tests and
the benchmark call it without Spark): rows.fill_rows decodes a piece into
`Rows`, and `ArrowBuilder` turns them into columnar batches of exactly the
schema, touching as few values in Python as it can:
- the batch columns come from the batches' raw 61-byte headers, parsed in one
  vectorised numpy pass per Arrow batch, and are spread over their records
  with one gather;
- the decoded heads and typed entries are shared objects: each distinct one is
  converted once and gathered per row; the leading fields of entries memoised
  by their value's tail (rows.LeadLayout) are read from the value column;
- file columns are constant per piece and repeated in C.
"""

from __future__ import annotations

from ..records import compression
from ..records.batch import (
    ATTR_COMPRESSION,
    ATTR_CONTROL,
    ATTR_LOG_APPEND_TIME,
    ATTR_TRANSACTIONAL,
    HEADER_SIZE,
    LOG_OVERHEAD,
    NUMPY_HEADER,
)
from .rows import FAMILIES, FILE_COLS, HEAD_COLS, NUMPY_FIXED, BodyCache, Rows, Stats, file_values, fill_rows
from .schema import NAMES

MAX_TIMESTAMP_MS = 253402300799999  # 9999-12-31T23:59:59.999Z, the end of Spark's range


class ArrowBuilder:
    """Turns `Rows` into pyarrow RecordBatches of exactly `arrow_schema`."""

    def __init__(self, arrow_schema):
        import numpy as np
        import pyarrow as pa

        self.np, self.pa = np, pa
        self.schema = arrow_schema
        self.types = {f.name: f.type for f in arrow_schema}
        self.header_dtype = np.dtype(NUMPY_HEADER)
        assert self.header_dtype.itemsize == HEADER_SIZE
        self.codec_names = pa.array([compression.NAMES.get(c, "unknown") for c in range(8)])
        self.ts_names = pa.array(["CreateTime", "LogAppendTime"])

    def _repeat(self, value, name, n):
        pa = self.pa
        t = self.types[name]
        if value is None or not pa.types.is_list(t):
            return pa.repeat(pa.scalar(value, t), n)
        # pa.repeat of a list scalar is slow (ms per call); gather instead
        return pa.array([value], t).take(pa.array(self.np.zeros(n, dtype=self.np.int32)))

    def _column(self, values, name):
        """A Python list (or tuple) as an Arrow array; one value throughout
        (codec, an error-free batch's null error ...) is repeated in C."""
        first = values[0]
        if values.count(first) == len(values):
            return self._repeat(first, name, len(values))
        return self.pa.array(values, self.types[name])

    def _distinct(self, objects):
        """(index of each distinct object's first row, each row's distinct
        number), by identity: the decoded heads and typed entries are shared
        objects, so a batch has few distinct ones however many rows."""
        np = self.np
        _, first, inverse = np.unique(
            np.fromiter(map(id, objects), np.uint64, len(objects)), return_index=True, return_inverse=True
        )
        return first, inverse.reshape(-1)

    def _typed_columns(self, cols: dict, typed, value_col):
        """The typed columns from the rows' typed entries: each distinct entry's
        values converted once, gathered per row; then the leading fields of
        memoised entries (topic id, partition id) read for each row from its
        value (`_lead_overlay`)."""
        import pyarrow.compute as pc

        np, pa = self.np, self.pa
        T = self.types
        n = len(typed)
        first, inverse = self._distinct(typed)
        entries = [typed[i] for i in first.tolist()]
        fam_of = np.fromiter((e[0] for e in entries), np.int8, len(entries))
        for f in range(1, len(FAMILIES)):
            names = FAMILIES[f]
            mine = np.flatnonzero(fam_of == f)
            if not len(mine):
                for name in names:
                    cols[name] = pa.nulls(n, T[name])
                continue
            slot = np.full(len(entries), -1, dtype=np.int32)
            slot[mine] = np.arange(len(mine), dtype=np.int32)
            per_row = slot[inverse]
            gather = pa.array(per_row, pa.int32(), mask=per_row < 0 if len(mine) < len(entries) else None)
            mine_entries = [entries[i] for i in mine.tolist()]
            overlay = self._lead_overlay(mine_entries, mine, inverse, value_col, n)
            for j, name in enumerate(names):
                col = self._column([e[1][j] for e in mine_entries], name).take(gather)
                if j in overlay:
                    col = pc.coalesce(overlay[j].cast(T[name]), col)
                cols[name] = col

    def _lead_overlay(self, entries, entry_ids, inverse, value_col, n) -> dict:
        """{typed position: column} of the leading fields of the rows whose
        entry is memoised by tail (its third element is a LeadLayout), read
        from their values' bytes in one vectorised gather per layout; null in
        other rows."""
        np, pa = self.np, self.pa
        layouts: dict = {}
        for i, e in zip(entry_ids.tolist(), entries):
            if len(e) == 3:
                layouts.setdefault(id(e[2]), (e[2], []))[1].append(i)
        if not layouts:
            return {}
        offsets = np.frombuffer(value_col.buffers()[1], np.int32, n + 1, value_col.offset * 4)
        data = np.frombuffer(value_col.buffers()[2], np.uint8)
        ints: dict = {}  # position -> (values, which rows have none)
        uuids: dict = {}  # position -> (row -> index into strings, strings)
        from ..schema.codec import uuid_str

        for layout, ids in layouts.values():
            rows_l = np.flatnonzero(np.isin(inverse, ids))
            raw = data[(offsets[rows_l] + 3)[:, None] + np.arange(layout.size)]
            for j, off, code, is_uuid in layout.fields:
                if is_uuid:
                    # ids come in runs (a topic's partitions follow each other): one
                    # string per run, from the codec's cache
                    u = raw[:, off - 3 : off + 13]
                    change = np.ones(len(u), bool)
                    change[1:] = (u[1:] != u[:-1]).any(axis=1)
                    index, strings = uuids.setdefault(j, (np.full(n, -1, np.int32), []))
                    index[rows_l] = np.cumsum(change, dtype=np.int32) - 1 + len(strings)
                    firsts = u[change].tobytes()
                    strings.extend(map(uuid_str, [firsts[i : i + 16] for i in range(0, len(firsts), 16)]))
                else:
                    size = np.dtype(NUMPY_FIXED[code]).itemsize
                    vals = raw[:, off - 3 : off - 3 + size].copy().view(NUMPY_FIXED[code]).reshape(-1)
                    full, unset = ints.setdefault(j, (np.zeros(n, np.int64), np.ones(n, bool)))
                    full[rows_l] = vals
                    unset[rows_l] = False
        out = {}
        for j, (index, strings) in uuids.items():
            out[j] = pa.array(strings, pa.string()).take(pa.array(index, pa.int32(), mask=index < 0))
        for j, (full, unset) in ints.items():
            out[j] = pa.array(full, pa.int64(), mask=unset)
        return out

    def build(self, fvals: tuple, rows: Rows):
        np, pa = self.np, self.pa
        T = self.types
        n = len(rows)
        entries = len(rows.count)
        cols = {name: self._repeat(v, name, n) for name, v in zip(FILE_COLS, fvals)}

        # per entry -> per row
        counts = np.asarray(rows.count, dtype=np.int64)
        spread = None if entries == n else np.repeat(np.arange(entries), counts)

        def rowwise(arr):
            return arr if spread is None else arr.take(pa.array(spread))

        for name, entry_values in (
            ("row_kind", rows.kind),
            ("corrupt", rows.corrupt),
            ("error", rows.error),
            ("batch_position", rows.position),
            ("batch_crc_valid", rows.crc_ok),
        ):
            cols[name] = rowwise(self._column(entry_values, name))

        h = np.frombuffer(bytes(rows.headers), dtype=self.header_dtype)
        valid = np.asarray(rows.valid, dtype=bool)
        mask = None if valid.all() else ~valid
        if spread is not None:
            h = h[spread]
            mask = None if mask is None else mask[spread]

        def hcol(values, name):
            return pa.array(values.astype(T[name].to_pandas_dtype()), T[name], mask=mask)

        base = h["base_offset"].astype(np.int64)
        attrs = h["attributes"].astype(np.int64)
        cols["batch_size"] = hcol(h["length"].astype(np.int64) + LOG_OVERHEAD, "batch_size")
        cols["batch_base_offset"] = hcol(base, "batch_base_offset")
        cols["batch_last_offset"] = hcol(base + h["last_offset_delta"], "batch_last_offset")
        cols["batch_leader_epoch"] = hcol(h["leader_epoch"], "batch_leader_epoch")
        cols["batch_magic"] = hcol(h["magic"], "batch_magic")
        cols["batch_crc"] = hcol(h["crc"], "batch_crc")
        maskarr = None if mask is None else pa.array(mask)
        codec = self.codec_names.take(pa.array(attrs & ATTR_COMPRESSION))
        ts_type = self.ts_names.take(pa.array((attrs & ATTR_LOG_APPEND_TIME) >> 3))
        control = pa.array((attrs & ATTR_CONTROL) != 0, mask=mask)
        txn = pa.array((attrs & ATTR_TRANSACTIONAL) != 0, mask=mask)
        if maskarr is not None:
            import pyarrow.compute as pc

            codec = pc.if_else(maskarr, pa.scalar(None, pa.string()), codec)
            ts_type = pc.if_else(maskarr, pa.scalar(None, pa.string()), ts_type)
        cols["batch_codec"] = codec
        cols["batch_is_control"] = control
        cols["batch_is_transactional"] = txn
        cols["batch_timestamp_type"] = ts_type
        cols["batch_max_timestamp"] = hcol(h["max_timestamp"], "batch_max_timestamp")
        cols["batch_record_count"] = hcol(h["record_count"], "batch_record_count")
        cols["producer_id"] = hcol(h["producer_id"], "producer_id")
        cols["producer_epoch"] = hcol(h["producer_epoch"], "producer_epoch")

        # record columns
        is_record = np.asarray([k == "record" for k in rows.kind], dtype=bool)
        starts = np.cumsum(counts) - counts
        index = np.arange(n, dtype=np.int64) - np.repeat(starts, counts)
        rec_mask = None if is_record.all() else ~np.repeat(is_record, counts)
        cols["record_index"] = pa.array(index.astype(np.int32), pa.int32(), mask=rec_mask)
        cols["offset"] = pa.array(rows.offset, pa.int64())
        ms = pa.array(rows.ts, pa.int64())
        cols["timestamp_ms"] = ms
        cols["key"] = self._column(rows.key, "key")
        cols["value"] = pa.array(rows.value, pa.binary())
        hs = rows.rheaders
        if hs.count(()) + hs.count(None) == n:  # the usual case: no record has headers
            cols["headers"] = (
                pa.array([None if h is None else [] for h in hs], T["headers"])
                if None in hs
                else self._repeat([], "headers", n)
            )
        else:
            cols["headers"] = pa.array([None if h is None else list(h) for h in hs], T["headers"])
        # a timestamp Spark can hold: 0001..9999; Kafka's -1 (no timestamp) and negatives -> null
        msv = np.asarray(ms.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
        ok = (msv >= 0) & (msv <= MAX_TIMESTAMP_MS)
        us = np.where(ok, msv, 0) * 1000
        cols["timestamp"] = pa.array(us, pa.int64(), mask=~ok).cast(T["timestamp"])
        cols["date"] = cols["timestamp"].cast(T["date"])

        # decoded columns
        heads, payloads, typed = zip(*rows.decoded)
        # few distinct (interned) heads: convert those, gather by identity
        first, inverse = self._distinct(heads)
        if len(first) == 1:
            for name, v in zip(HEAD_COLS, heads[0]):
                cols[name] = self._repeat(v, name, n)
        else:
            take = pa.array(inverse.astype(np.int32), pa.int32())
            for name, values in zip(HEAD_COLS, zip(*(heads[i] for i in first.tolist()))):
                cols[name] = self._column(list(values), name).take(take)
        cols["payload_json"] = self._column(payloads, "payload_json")
        self._typed_columns(cols, typed, cols["value"])
        return pa.RecordBatch.from_arrays([cols[name] for name in NAMES], schema=self.schema)


def arrow_batches(
    pieces, arrow_schema, batch_rows: int = 8192, options: dict | None = None, stats: Stats | None = None
):
    """Yield pyarrow RecordBatches (exactly `arrow_schema`) for the pieces."""
    import gc

    builder = ArrowBuilder(arrow_schema)
    cache = BodyCache()
    # Decoding allocates millions of small tuples that refcounting frees; the
    # default GC thresholds would traverse the value cache over and over
    # (20% of the time). Collect rarely while decoding, as before afterwards.
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        for piece in pieces:
            fvals = file_values(piece)
            for rows in fill_rows(piece, Rows, options, stats, cache, batch_rows):
                yield builder.build(fvals, rows)
    finally:
        gc.set_threshold(*thresholds)
