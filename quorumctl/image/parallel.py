"""Replaying a large log segment on two cores: a worker process walks the record
frames (records.batch.plain_value_spans) of byte ranges cut at batch boundaries,
ahead of this process, which reads the same batches and applies them in log
order (replay._apply_plain) with the value positions it is handed.

The division follows the costs once records are applied straight from their
bytes: walking the frames is about 40% of a replay, applying the rest, and
what crosses the pipe is small (two 32-bit positions per record, as array
bytes, which pickle as one block). Only positions cross: records and images
stay in this process, so nothing is decoded twice. At most a few ranges are
in flight, so memory stays bounded whatever the log's size. Used for segments
of PARALLEL_MIN_BYTES and more, except with --at-time (which needs every
record's timestamp).
"""

from __future__ import annotations

import os
from array import array

from ..records.batch import HEADER_SIZE, ATTR_COMPRESSION, ATTR_CONTROL, BatchReader, batch_cuts, plain_value_spans

PARALLEL_MIN_BYTES = 16 << 20
CHUNK_BYTES = 4 << 20
IN_FLIGHT = 3
LOCAL = object()  # SpanFeed.spans: "not walked here, walk it yourself"
ARRAY_CODES = ("q", "I", "I")  # timestamp deltas (varlongs), value starts, value ends


def _walk_range(args):
    """Worker: (where the range ends, {batch position: plain_value_spans' three lists as
    array bytes (timestamp deltas, value starts, value ends), or None} for the plain
    (uncompressed, non-control) batches of one byte range)."""
    path, start, end = args
    out = {}
    reader = BatchReader(path, start, end)
    with reader:
        for b in reader:
            if getattr(b, "attributes", ATTR_CONTROL) & (ATTR_CONTROL | ATTR_COMPRESSION):
                continue
            walked = plain_value_spans(bytes(b.data[HEADER_SIZE:]), 0, b.record_count)
            out[b.position] = (
                None if walked is None else tuple(array(code, x).tobytes() for code, x in zip(ARRAY_CODES, walked))
            )
    return reader.end, out


class SpanFeed:
    """The value positions of one segment's batches, walked by a worker process ahead
    of the caller, who asks for them batch by batch in file order (spans(position))."""

    def __init__(self, path: str):
        import multiprocessing as mp

        self.path = path
        with open(path, "rb") as f:
            cuts = [0] + batch_cuts(f, os.fstat(f.fileno()).st_size, CHUNK_BYTES)
        self._ranges = iter([(path, a, z) for a, z in zip(cuts, cuts[1:] + [None])])
        self._pool = mp.get_context("fork").Pool(1)
        self._pending = []
        self._current: dict = {}
        self._end = 0  # where the range of _current ends
        for args in self._ranges:
            self._pending.append(self._pool.apply_async(_walk_range, (args,)))
            if len(self._pending) >= IN_FLIGHT:
                break

    def spans(self, position: int):
        """What plain_value_spans gives for the batch at this position (as arrays), or LOCAL."""
        while position not in self._current:
            if position < self._end or not self._pending:
                return LOCAL  # not a batch the worker walked
            self._end, self._current = self._pending.pop(0).get()
            nxt = next(self._ranges, None)
            if nxt is not None:
                self._pending.append(self._pool.apply_async(_walk_range, (nxt,)))
        hit = self._current.pop(position)
        if hit is None:
            return None
        out = []
        for code, raw in zip(ARRAY_CODES, hit):
            a = array(code)
            a.frombytes(raw)
            out.append(a)
        return tuple(out)

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()
