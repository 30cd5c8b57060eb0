"""Replaying a large log segment on two cores: worker processes decode byte
ranges (cut at batch boundaries, as dump-log's parallel path does) while the
main process applies the records, in log order, to the one image.

The division of work follows the costs: iterating and decoding records is
~85% of a replay, applying them the rest. A worker turns each record into a
small tuple (a PartitionRecord into the image's partition tuple already), so
what crosses the pipe is cheap to unpickle and to apply. At most two ranges
per worker are in flight, so memory stays bounded whatever the log's size.
Used for segments of PARALLEL_MIN_BYTES and more, with no history observer
and no --at-time (which needs a timestamp test per record).
"""

from __future__ import annotations

import os

from ..records import metadata as md
from ..records.batch import Batch, BatchError, BatchReader
from .model import BUILT_PARTITION, partition_from_record

PARALLEL_MIN_BYTES = 16 << 20
CHUNK_BYTES = 4 << 20
_CONTROL = (md.LEADER_CHANGE, md.KRAFT_VERSION, md.KRAFT_VOTERS)


def _decode_range(args):
    """Worker: the batches of one byte range as (epoch, last offset, last timestamp,
    items), items (offset, key, payload); key -1 a control record (payload
    (type, data or error)), -2 a record that does not decode (payload (label,
    problem or None)). Returns (batches, why the range ended early or None, batch count)."""
    path, start, end, skip_below, stop_off = args
    decode_fast = md.decode_metadata_fast
    out = []
    n = 0
    with BatchReader(path, start, end) as reader:
        for b in reader:
            if not isinstance(b, Batch):
                return out, f"unsupported batch magic {b.magic} at byte {b.position}", n
            if b.last_offset < skip_below:
                continue
            if stop_off is not None and b.base_offset > stop_off:
                return out, None, n
            if not b.crc_valid():
                return out, (f"CRC mismatch in the batch at offset {b.base_offset} (byte {b.position}): "
                             f"the log ends before it"), n
            n += 1
            items = []
            last = None
            try:
                for r in b.iter_records():
                    off = r.offset
                    if off < skip_below:
                        continue
                    if stop_off is not None and off > stop_off:
                        break
                    last = r
                    if b.is_control:
                        ct = md.control_type(r.key)
                        if ct in _CONTROL or ct == md.SNAPSHOT_HEADER:
                            d = md.decode_control(r.key, r.value)
                            items.append((off, -1, (ct, d.type_name, d.data, d.error)))
                        else:
                            items.append((off, -1, (ct, None, None, None)))
                        continue
                    fast = decode_fast(r.value)
                    if fast is None:
                        d = md.decode_metadata(r.value)
                        if d.data is None:
                            label = f"{d.type_name} v{d.version}" if d.api_key is not None else "undecodable"
                            problem = None if d.name == "Unknown" or d.name.startswith("UnknownRecord") \
                                else f"{d.name}: {d.error}"
                            items.append((off, -2, (label, problem)))
                            continue
                        fast = (d.api_key, d.version, d.data)
                    key, data = fast[0], fast[2]
                    if key == 3:
                        items.append((off, BUILT_PARTITION, (data["topicId"], data.get("partitionId", -1),
                                                             partition_from_record(data))))
                    else:
                        items.append((off, key, data))
            except BatchError as e:
                if last is not None:
                    out.append((b.leader_epoch, last.offset, last.timestamp, items))
                return out, f"position {e.pos}: {e}", n
            if last is not None:
                out.append((b.leader_epoch, last.offset, last.timestamp, items))
        st = reader.stop
        if st is not None and st.reason is not None and (end is None or st.position < end):
            return out, f"{st.detail or st.reason} at byte {st.position}", n
    return out, None, n


def apply_segment(rp, path: str, stop_off: int | None, workers: int = 2) -> bool:
    """Replay one segment into rp.image with worker processes; False when the log
    ended early (rp.end_reason says why) or the stop offset was reached."""
    import multiprocessing as mp

    from ..dumplog import batch_boundaries
    img = rp.image
    skip_below = img.offset + 1
    cuts = batch_boundaries(path, CHUNK_BYTES)
    ranges = [(path, a, z, skip_below, stop_off) for a, z in zip(cuts, cuts[1:] + [None])]
    ctx = mp.get_context("fork")
    pool = ctx.Pool(workers)
    try:
        pending = []
        it = iter(ranges)
        for args in it:
            pending.append(pool.apply_async(_decode_range, (args,)))
            if len(pending) >= 2 * workers:
                break
        while pending:
            batches, why, n = pending.pop(0).get()
            nxt = next(it, None)
            if nxt is not None and why is None:
                pending.append(pool.apply_async(_decode_range, (nxt,)))
            rp.batches += n
            _apply_batches(rp, batches)
            if why is not None:
                rp.end_reason = f"{os.path.basename(path)}: {why}"
                return False
            if stop_off is not None and img.offset >= stop_off:
                return False
    finally:
        pool.terminate()
        pool.join()
    return True


def _apply_batches(rp, batches) -> None:
    from .model import _APPLY, TRANSACTION_KEYS
    img = rp.image
    topics = img.topics
    apply = _APPLY.get
    for epoch, last_off, last_ts, items in batches:
        img.epoch = epoch
        n = 0
        for off, key, payload in items:
            if key == BUILT_PARTITION and img.pending is None:
                n += 1
                tid, pid, p = payload
                t = topics.get(tid)
                if t is None:
                    img.problem(off, f"PartitionRecord for unknown topic id {tid}")
                else:
                    t.partitions[pid] = p
            elif key >= 0 or key == BUILT_PARTITION:
                if img.pending is None and key not in TRANSACTION_KEYS:
                    n += 1
                    fn = apply(key)
                    if fn is not None:
                        fn(img, payload, off)
                else:
                    img.replay(key, payload, off)
            elif key == -1:
                ct, type_name, data, error = payload
                if ct in _CONTROL:
                    rp.apply_control(img, ct, type_name, data, error, off)
            else:
                label, problem = payload
                img.unknown_record(label)
                if problem:
                    img.problem(off, problem)
        img.records += n
        img.offset, img.timestamp = last_off, last_ts
