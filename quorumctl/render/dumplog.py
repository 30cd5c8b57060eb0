"""dump-log output for record-batch files (.log, snapshots, bootstrap.checkpoint).

Text is kafka-dump-log 4.1's, line for line, for the same options, except the
deliberate differences listed in docs/dump-log.md (e.g. an undecodable metadata
value keeps going with a note).
Doubles print as Java prints them (`java_double`), raw keys and payloads as
Java's String decodes them (`records.javatext.java_utf8`).
JSON is one object per batch (JSON Lines), records included.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from ..records import metadata as md
from ..records.batch import (
    ATTR_COMPRESSION,
    ATTR_CONTROL,
    ATTR_DELETE_HORIZON,
    ATTR_LOG_APPEND_TIME,
    ATTR_TRANSACTIONAL,
    HEADER_SIZE,
    Batch,
    LegacyEntry,
    plain_value_spans,
)
from ..records.javatext import java_utf8
from ..records.metadata import payload_prefix
from ..logdir import filekinds
from .output import json_bytes, json_line, tagged


@dataclass
class Options:
    deep: bool = False  # --deep-iteration (one line per record)
    print_data: bool = False  # --print-data-log (key and payload)
    metadata_decoder: bool = False  # --cluster-metadata-decoder
    skip_record_metadata: bool = False
    offset_start: int | None = None
    offset_end: int | None = None  # inclusive
    record_types: frozenset | None = None  # names as typed by the user, upper-cased
    kafka: str = "4.3"  # whose kafka-dump-log text to print where 4.1 and 4.3 differ

    @property
    def records_needed(self) -> bool:
        return self.deep or self.print_data or self.metadata_decoder or self.record_types is not None


def _bool(b: bool) -> str:
    return "true" if b else "false"


def batch_line(b: Batch, crc_ok: bool) -> str:
    # Java's OptionalLong.toString, as Kafka 4.1 prints batch.deleteHorizonMs
    dh = f"OptionalLong[{b.base_timestamp}]" if b.attributes & ATTR_DELETE_HORIZON else "OptionalLong.empty"
    ts_type = "LogAppendTime" if b.attributes & ATTR_LOG_APPEND_TIME else "CreateTime"
    return (
        f"baseOffset: {b.base_offset} lastOffset: {b.base_offset + b.last_offset_delta} "
        f"count: {b.record_count} baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} "
        f"producerId: {b.producer_id} producerEpoch: {b.producer_epoch} "
        f"partitionLeaderEpoch: {b.leader_epoch} isTransactional: {_bool(b.attributes & ATTR_TRANSACTIONAL)} "
        f"isControl: {_bool(b.attributes & ATTR_CONTROL)} deleteHorizonMs: {dh} position: {b.position} "
        f"{ts_type}: {b.max_timestamp} size: {b.size} magic: 2 "
        f"compresscodec: {b.compression_name} crc: {b.crc} isvalid: {_bool(crc_ok)}"
    )


def legacy_line(e: LegacyEntry) -> str:
    return f"offset: {e.base_offset} position: {e.position} size: {e.size} magic: {e.magic} (message format v0/v1 is not decoded)"


def control_text(key, value) -> str:
    """What follows the record metadata for a control record (Kafka's forms)."""
    ctype = md.control_type(key)
    if ctype in (md.ABORT, md.COMMIT):
        d = md.decode_control(key, value)
        if d.data is None:
            return f" controlType: {md.CONTROL_NAMES[ctype]}({ctype}) error: {d.error}"
        return f" endTxnMarker: {d.type_name} coordinatorEpoch: {d.data['coordinatorEpoch']}"
    if ctype in md.CONTROL_LABELS:
        d = md.decode_control(key, value)
        if d.data is None:
            return f" controlType: {d.type_name}({ctype}) error: {d.error}"
        # Kafka 4.1 (KAFKA-19069) writes "LeaderChange:" with a colon, the others without
        sep = ": " if ctype == md.LEADER_CHANGE else " "
        return f" {d.name}{sep}{json_bytes(d.data).decode()}"
    return f" controlType: UNKNOWN({ctype})"


# Top-level float64 fields by metadata api key (ClientQuotaRecord's value): Kafka
# prints them with Java's Double.toString (Jackson writes doubles that way), so
# the text form does too; JSON output keeps plain JSON numbers.
_DOUBLES = {
    key: [f.key for f in msg.fields if f.type == "float64"]
    for key, msg in md.METADATA_RECORDS.items()
    if any(f.type == "float64" for f in msg.fields)
}


def java_double(x: float) -> str:
    """Java's Double.toString: plain decimal (at least one fractional digit)
    for 1e-3 <= |x| < 1e7, else computerized scientific notation (1.048576E7),
    with the shortest digits that round-trip (what JDK 19+ prints; JDK 17
    differs only for a few values near the ends of the double range)."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = f"{abs(x)!r}".partition("e")  # repr: shortest round-trip digits
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = int(exp or 0) + len(whole) - (len(whole + frac) - len(digits))  # digits before the point
    digits = digits.rstrip("0") or "0"
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        return f"{sign}{digits[:point].ljust(point, '0')}.{digits[point:] or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


def _java_doubles(api_key: int, data: dict) -> dict:
    fields = _DOUBLES.get(api_key)
    if not fields:
        return data
    import msgspec

    out = dict(data)
    for k in fields:
        v = out.get(k)
        if isinstance(v, float):
            text = java_double(v)
            out[k] = msgspec.Raw((text if v == v and abs(v) != float("inf") else f'"{text}"').encode())
    return out


def metadata_json(value) -> dict:
    """The payload object {"type","version","data"} (or with "error") of one metadata value."""
    hit = md.decode_metadata_fast(value)
    if hit is not None:
        return {"type": md.TYPE_NAMES[hit[0]], "version": hit[1], "data": hit[2]}
    return md.decode_metadata(value).to_json()


def metadata_payload(value) -> str:
    """Kafka's {"type":..,"version":..,"data":{..}} as text for one metadata value (hot path:
    the wrapper's text is cached per type and version, only the data is encoded)."""
    hit = md.decode_metadata_fast(value)
    if hit is not None:
        return (payload_prefix(hit[0], hit[1]) + json_bytes(_java_doubles(hit[0], hit[2])) + b"}").decode()
    d = md.decode_metadata(value)
    payload = d.to_json()
    if d.data is not None:
        payload["data"] = _java_doubles(d.api_key, d.data)
    return json_bytes(payload).decode()


def record_type_name(batch: Batch, key, value) -> str:
    """The type name used by --record-type: the control type or metadata type (enum style)."""
    if batch.attributes & ATTR_CONTROL:
        ctype = md.control_type(key)
        return md.CONTROL_NAMES.get(ctype, "UNKNOWN")
    return md.decode_metadata(value).type_name


def matches_type(batch: Batch, rec, opts: Options) -> bool:
    if opts.record_types is None:
        return True
    name = record_type_name(batch, rec.key, rec.value)
    return name in opts.record_types or name.removesuffix("_RECORD") in opts.record_types


def record_lines(b: Batch, records, opts: Options, out: list) -> None:
    """Append the deep-iteration lines of one batch's (already filtered) records."""
    ts_type = "LogAppendTime" if b.attributes & ATTR_LOG_APPEND_TIME else "CreateTime"
    log_append = b.attributes & ATTR_LOG_APPEND_TIME
    control = b.attributes & ATTR_CONTROL
    print_contents = opts.print_data or opts.metadata_decoder
    app = out.append
    decode = opts.metadata_decoder
    kafka43 = opts.kafka != "4.1"
    for r in records:
        if opts.skip_record_metadata:
            line = ""
            prefix = "| "
        else:
            hk = ",".join(h[0] for h in r.headers) if r.headers else ""
            ts = b.max_timestamp if log_append else r.timestamp
            line = (
                f"| offset: {r.offset} {ts_type}: {ts} "
                f"keySize: {-1 if r.key is None else len(r.key)} "
                f"valueSize: {-1 if r.value is None else len(r.value)} "
                f"sequence: {r.sequence} headerKeys: [{hk}]"
            )
            prefix = " "
            if control:
                line += control_text(r.key, r.value)
        if print_contents and not control:
            # Kafka's StringDecoder: new String(bytes, UTF_8), with Java's replacement of malformed input
            if r.key is not None:
                line += f"{prefix}key: {java_utf8(r.key)}"
                prefix = " "
            if r.value is not None:
                # 4.3 starts a payload without key or metadata with "| "; 4.1 always with " "
                line += (
                    (prefix if kafka43 else " ")
                    + "payload: "
                    + (metadata_payload(r.value) if decode else java_utf8(r.value))
                )
        app(line)


def batch_json(path: str, b: Batch, crc_ok: bool) -> dict:
    """The JSON object of one batch without its records (documented in
    docs/json.md); dump-log streams "records" (and "error") after these keys."""
    log_append = b.attributes & ATTR_LOG_APPEND_TIME
    return {
        "kind": "batch",
        "file": path,
        "position": b.position,
        "baseOffset": b.base_offset,
        "lastOffset": b.base_offset + b.last_offset_delta,
        "count": b.record_count,
        "baseSequence": b.base_sequence,
        "lastSequence": b.last_sequence,
        "producerId": b.producer_id,
        "producerEpoch": b.producer_epoch,
        "partitionLeaderEpoch": b.leader_epoch,
        "isTransactional": bool(b.attributes & ATTR_TRANSACTIONAL),
        "isControl": bool(b.attributes & ATTR_CONTROL),
        "deleteHorizonMs": b.base_timestamp if b.attributes & ATTR_DELETE_HORIZON else None,
        "timestampType": "LogAppendTime" if log_append else "CreateTime",
        "baseTimestamp": b.base_timestamp,
        "maxTimestamp": b.max_timestamp,
        "size": b.size,
        "magic": b.magic,
        "compression": b.compression_name,
        "crc": b.crc,
        "crcValid": crc_ok,
    }


def records_json(b: Batch, records, decode_metadata: bool) -> list[dict]:
    """The JSON objects of some of a batch's records (a slice of them at a time)."""
    log_append = b.attributes & ATTR_LOG_APPEND_TIME
    recs: list[dict] = []
    app = recs.append
    control = b.attributes & ATTR_CONTROL
    max_ts = b.max_timestamp
    for r in records:
        key, value = r.key, r.value
        ro = {
            "offset": r.offset,
            "timestamp": max_ts if log_append else r.timestamp,
            "keySize": -1 if key is None else len(key),
            "valueSize": -1 if value is None else len(value),
            "sequence": r.sequence,
            "headers": [{"key": k, "value": None if v is None else base64.b64encode(v).decode()} for k, v in r.headers]
            if r.headers
            else [],
        }
        if control:
            d = md.decode_control(r.key, r.value)
            ro["control"] = (
                {"type": d.type_name, "typeId": md.control_type(r.key), "data": d.data}
                if d.data is not None
                else {"type": d.type_name, "typeId": md.control_type(r.key), "error": d.error}
            )
        elif decode_metadata:
            ro["payload"] = metadata_json(value)
        else:
            ro["key"] = None if key is None else base64.b64encode(key).decode()
            ro["value"] = None if value is None else base64.b64encode(value).decode()
        app(ro)
    return recs


# -- writing the lines -----------------------------------------------------

FLUSH_LINES = 4096
FLUSH_LINE_CHARS = 1 << 16  # a line this long is written out at once
RAW_BLOCK = 1 << 20  # the compiled core's output is written in blocks of about this size


class Sink:
    """Buffered writer of a printer's stdout and stderr (`Printer.stdout`, `.stderr`):
    stdout lines are joined and written in blocks."""

    def __init__(self, out, err):
        self.out = out
        self.err = err
        self.buf: list[str] = []
        self.pending: list[str] = []  # the parts of an unfinished line (see part)
        self.raws: list[bytes] = []  # the compiled core's output not yet written (see raw)
        self.raw_size = 0

    def line(self, s: str):
        if self.raws:
            self._flush_raw()
        self.buf.append(s)
        # a JSON batch line holds all its records (MBs): 4096 of them must not pile up
        if len(self.buf) >= FLUSH_LINES or len(s) >= FLUSH_LINE_CHARS:
            self.flush()

    def lines(self, ls):
        if self.raws:
            self._flush_raw()
        self.buf.extend(ls)
        if len(self.buf) >= FLUSH_LINES:
            self.flush()

    plain = True  # lines go out as they are: the hot path and worker processes may make them

    def batch(self, b, crc_ok: bool):
        """kafka-dump-log's line for one batch (its records follow through records())."""
        self.line(batch_line(b, crc_ok))

    def records(self, b, records, opts: Options, decode_metadata: bool):
        """kafka-dump-log's lines for some of a batch's records (--deep-iteration)."""
        if self.raws:
            self._flush_raw()
        record_lines(b, records, opts, self.buf)
        if len(self.buf) >= FLUSH_LINES:
            self.flush()

    def doc(self, obj: dict):
        """A file's JSON object (JSON output)."""
        self.line(json_line(obj))

    def part(self, s: str):
        """Part of one line that may be long (a batch's JSON object with its
        records): parts are written out once a few have gathered, so a line is
        never held whole."""
        self.pending.append(s)
        if len(self.pending) >= 16:
            self.flush()
            self.out.write("".join(self.pending))
            self.pending.clear()

    def end_line(self):
        if self.raws:
            self._flush_raw()
        self.buf.append("".join(self.pending))
        self.pending.clear()
        if len(self.buf) >= FLUSH_LINES:
            self.flush()

    def flush(self):
        if self.raws:
            self._flush_raw()
        if self.buf:
            self.buf.append("")  # the last newline, without copying the block once more
            self.out.write("\n".join(self.buf))
            self.buf.clear()

    def raw(self, data: bytes):
        """Whole lines as UTF-8 bytes (the compiled core's output, newlines included),
        after the lines before them; gathered and written in blocks, as bytes where the
        stream takes them in UTF-8."""
        if self.buf:
            self.flush()
        self.raws.append(data)
        self.raw_size += len(data)
        if self.raw_size >= RAW_BLOCK:
            self._flush_raw()

    def _flush_raw(self):
        if not self.raws:
            return
        parts = self.raws
        self.raws = []
        self.raw_size = 0
        write_bytes = getattr(self.out, "write_bytes", None)
        if write_bytes is not None:
            for part in parts:
                write_bytes(part)
            return
        buffer = getattr(self.out, "buffer", None)
        if buffer is not None and is_utf8(getattr(self.out, "encoding", None)):
            self.out.flush()
            buffer.writelines(parts)  # each part as it is: no joined copy
        else:
            self.out.write(b"".join(parts).decode("utf-8"))

    def error(self, s: str):
        self.flush()
        self.err.write(s + "\n")

    def tell(self, message: str):
        """A line of ours ("quorumctl: MESSAGE") in its place among the dump's."""
        self.error(tagged(message))


def is_utf8(encoding: str | None) -> bool:
    return (encoding or "").lower().replace("-", "").replace("_", "") == "utf8"


def payload_fallback(value: bytes, as_json: bool) -> str:
    """The payload text of a metadata value the compiled core's generated decoders
    leave to this path (an undecodable value, doubles, unknown tagged fields)."""
    if as_json:
        return json_bytes(metadata_json(value)).decode()
    return metadata_payload(value)


def header_line(path: str) -> str:
    kind = filekinds.kind_of(path)
    if kind == filekinds.BOOTSTRAP:
        return "KRaft bootstrap snapshot"
    if kind == filekinds.SNAPSHOT:
        sid = filekinds.snapshot_id(path)
        if sid is None:
            return "Snapshot end offset: unknown (the name is not <20-digit offset>-<10-digit epoch>.checkpoint)"
        return f"Snapshot end offset: {sid[0]}, epoch: {sid[1]}"
    base = filekinds.base_offset_of(path)
    return f"Log starting offset: {base if base is not None else 'unknown (the name is not numeric)'}"


# -- the hot path: a whole batch of metadata records from bytes to lines ------

FAST_MAX_BYTES = 1 << 20  # bigger record sections stream through the general path (bounded memory)


def fast_metadata_lines(b: Batch, as_json: bool) -> list[str] | None:
    """The lines (text: one per record; JSON: the records' objects) of a plain
    metadata batch with --cluster-metadata-decoder (or -o json on a metadata
    log), decoded without a Record object or a dict per record: the record frame
    is walked by records.batch.plain_value_spans and each value goes through the generated per-(type,
    version) text decoder. The same text as record_lines / records_json give
    (tests/unit/test_dumplog_fastpath.py checks every record of the corpus). None
    when the batch is anything but the usual case (control, compressed, large,
    keys, headers, non-consecutive offsets, a malformed frame): the caller then
    takes the general path, which reports precisely."""
    attrs = b.attributes
    if attrs & (ATTR_CONTROL | ATTR_COMPRESSION) or b.length > FAST_MAX_BYTES:
        return None
    data = bytes(b.data[HEADER_SIZE:])
    spans = plain_value_spans(data, 0, b.record_count)
    if spans is None:
        return None
    base_off = b.base_offset
    base_ts = b.base_timestamp
    base_seq = b.base_sequence
    log_append = attrs & ATTR_LOG_APPEND_TIME
    max_ts = b.max_timestamp
    ts_name = "LogAppendTime" if log_append else "CreateTime"
    seq = -1
    fns = md.payload_text_fn
    table: dict = {}
    lookup = table.get
    out: list[str] = []
    app = out.append
    for i, ts_delta, pos, vend in zip(range(b.record_count), *spans):
        vlen = vend - pos
        if base_seq >= 0:
            seq = (base_seq + i) & 0x7FFFFFFF
        ts = max_ts if log_append else base_ts + ts_delta
        if vlen >= 3 and data[pos] == 1:
            k = data[pos + 1] << 7 | data[pos + 2]
            hit = lookup(k, False)
            if hit is False:
                api, ver = data[pos + 1], data[pos + 2]
                hit = table[k] = fns(api, ver) if api < 128 and ver < 128 else None
            if hit is not None:
                try:
                    body, p = hit[1](data, pos + 3, vend)
                except Exception:  # any failure: the plain decoder says what is wrong
                    p = -1
                if p == vend:
                    if as_json:
                        app(
                            f'{{"offset":{base_off + i},"timestamp":{ts},"keySize":-1,"valueSize":{vlen},'
                            f'"sequence":{seq},"headers":[],"payload":{hit[0]}{body}}}}}'
                        )
                    else:
                        app(
                            f"| offset: {base_off + i} {ts_name}: {ts} keySize: -1 valueSize: {vlen} "
                            f"sequence: {seq} headerKeys: [] payload: {hit[0]}{body}}}"
                        )
                    continue
        # not a value the text decoders take: the plain decoder's text (with its error note)
        value = data[pos:vend]
        if as_json:
            app(
                f'{{"offset":{base_off + i},"timestamp":{ts},"keySize":-1,"valueSize":{vlen},'
                f'"sequence":{seq},"headers":[],"payload":{json_bytes(metadata_json(value)).decode()}}}'
            )
        else:
            app(
                f"| offset: {base_off + i} {ts_name}: {ts} keySize: -1 valueSize: {vlen} "
                f"sequence: {seq} headerKeys: [] payload: {metadata_payload(value)}"
            )
    return out
