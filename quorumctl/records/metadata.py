"""Record values of the metadata log: metadata records and control records.

A metadata record's value is: unsigned varint frame version (1), unsigned
varint api key, unsigned varint version, then the body in the flexible
encoding (Kafka's MetadataRecordSerde). A control record's key is int16
version + int16 type; its value is the control message, whose first field is
its own int16 version.

Unknown types or versions never raise: they come back as `Decoded` with
`data` None, the raw bytes and a note, so dumps go on.
"""

from __future__ import annotations

import struct

from ..schema.codec import DecodeError, codec, read_uvarint, uvarint_bytes
from .control_schemas import (
    ABORT,  # noqa: F401 (re-exported)
    COMMIT,  # noqa: F401 (re-exported)
    CONTROL_TYPES,
    KRAFT_VERSION,
    KRAFT_VOTERS,
    LEADER_CHANGE,
    SNAPSHOT_FOOTER,
    SNAPSHOT_HEADER,
    body_version,
)
from .metadata_schemas import API_KEYS_BY_CLASS_NAME as API_KEYS
from .metadata_schemas import FEATURE_LEVEL_PRE_3_3, METADATA_RECORDS, TYPE_NAMES

FRAME_VERSION = 1
_KEY = struct.Struct(">hh")
_I16 = struct.Struct(">h")

CONTROL_NAMES = {t: name for t, (name, _msg) in CONTROL_TYPES.items()}
# Kafka's dump-log label for the decoded control payloads it prints
CONTROL_LABELS = {
    SNAPSHOT_HEADER: "SnapshotHeader",
    SNAPSHOT_FOOTER: "SnapshotFooter",
    KRAFT_VERSION: "KRaftVersion",
    KRAFT_VOTERS: "KRaftVoters",
    LEADER_CHANGE: "LeaderChange",
}


class Decoded:
    """One decoded value. `kind` is 'metadata' or 'control'; `name` is the
    class-style name (PartitionRecord, LeaderChange ...), `type_name` Kafka's
    enum name (PARTITION_RECORD, LEADER_CHANGE ...); `data` the field dict, or
    None with `error` set when it could not be decoded."""

    __slots__ = ("kind", "api_key", "version", "name", "type_name", "data", "error")

    def __init__(self, kind, api_key, version, name, type_name, data, error=None):
        self.kind = kind
        self.api_key = api_key
        self.version = version
        self.name = name
        self.type_name = type_name
        self.data = data
        self.error = error

    def to_json(self) -> dict:
        """Kafka's dump-log JSON form {"type","version","data"} (plus our note on failure)."""
        if self.data is not None:
            return {"type": self.type_name, "version": self.version, "data": self.data}
        return {"type": self.type_name, "version": self.version, "error": self.error}


_decoders: dict[tuple[int, int], object] = {}


def _body_decoder(api_key: int, version: int):
    """The generated decoder for (api key, version), or None when unknown."""
    key = (api_key, version)
    fn = _decoders.get(key)
    if fn is None:
        msg = METADATA_RECORDS.get(api_key)
        if msg is None or not msg.supports(version):
            return None
        fn = _decoders[key] = codec(msg).decoder(version)
    return fn


_payload_fns: dict[int, tuple | None] = {}


def payload_text_fn(api_key: int, version: int):
    """(prefix, fn) for Kafka's payload JSON of a metadata (api key, version) straight
    from bytes: prefix + fn(buf, body_start, end)[0] + "}" is the text that
    msgspec writes for {"type","version","data"}, with fn the generated text
    decoder. None when unknown, or when a field is a double (Kafka's text prints
    those as Java does: the dict path handles them)."""
    key = api_key << 7 | version
    hit = _payload_fns.get(key, False)
    if hit is False:
        msg = METADATA_RECORDS.get(api_key)
        hit = None
        if msg is not None and msg.supports(version) and not _has_double(msg.fields):
            hit = (f'{{"type":"{TYPE_NAMES[api_key]}","version":{version},"data":', codec(msg).text_decoder(version))
        _payload_fns[key] = hit
    return hit


def _has_double(fields) -> bool:
    return any(f.type.endswith("float64") or (f.fields and _has_double(f.fields)) for f in fields)


def decode_metadata_fast(value):
    """(api key, version, data) for a well-formed value with the usual one-byte frame,
    else None (then `decode_metadata` says exactly what is wrong). The hot path of
    dump-log: no Decoded object, no error text."""
    if value is None or len(value) < 3 or value[0] != 1 or value[1] >= 128 or value[2] >= 128:
        return None
    fn = _body_decoder(value[1], value[2])
    if fn is None:
        return None
    try:
        data, end = fn(value, 3)
    except Exception:  # any failure: the slow path reports it precisely
        return None
    return (value[1], value[2], data) if end == len(value) else None


def decode_metadata(value) -> Decoded:
    """Decode a metadata record value (frame + body)."""
    if value is None:
        return Decoded("metadata", None, None, "Unknown", "UNKNOWN", None, "null value")
    try:
        if len(value) >= 3 and value[0] == 1 and value[1] < 128 and value[2] < 128:
            frame, api_key, version, pos = 1, value[1], value[2], 3  # the usual one-byte frame
        else:
            frame, pos = read_uvarint(value, 0)
            api_key, pos = read_uvarint(value, pos)
            version, pos = read_uvarint(value, pos)
    except (IndexError, DecodeError):
        return Decoded(
            "metadata", None, None, "Unknown", "UNKNOWN", None, "value too short for the metadata record frame"
        )
    if frame != FRAME_VERSION:
        return Decoded(
            "metadata",
            api_key,
            version,
            "Unknown",
            "UNKNOWN",
            None,
            f"unsupported frame version {frame} (expected {FRAME_VERSION})",
        )
    fn = _body_decoder(api_key, version)
    msg = METADATA_RECORDS.get(api_key)
    if fn is None or msg is None:  # (a decoder is found only for a known type)
        if msg is None:
            return Decoded(
                "metadata",
                api_key,
                version,
                f"UnknownRecord{api_key}",
                f"UNKNOWN_RECORD_{api_key}",
                None,
                f"unknown metadata record type {api_key}",
            )
        return Decoded(
            "metadata",
            api_key,
            version,
            msg.name,
            TYPE_NAMES[api_key],
            None,
            f"unknown version {version} of {msg.name} (known {msg.valid})",
        )
    data, error = _decode_body(fn, msg, version, value, pos)
    if error is not None and (api_key, version) == (FEATURE_LEVEL_PRE_3_3.api_key, 0):
        legacy, legacy_error = _decode_body(codec(FEATURE_LEVEL_PRE_3_3).decoder(0), msg, 0, value, pos)
        if legacy_error is None:  # written by Kafka 3.0-3.2 (see metadata_schemas)
            data, error = legacy, None
    return Decoded("metadata", api_key, version, msg.name, TYPE_NAMES[api_key], data, error)


def _decode_body(fn, msg, version: int, value, pos: int) -> tuple:
    """(data, None) when the body decodes and fills the value exactly, else (None, why)."""
    try:
        data, end = fn(value, pos)
    except DecodeError as e:
        return None, str(e)
    except (IndexError, struct.error):
        return None, f"{msg.name} v{version} is cut short"
    except UnicodeDecodeError:
        return None, f"{msg.name} v{version} has invalid UTF-8 in a string"
    if end != len(value):
        return None, f"found {len(value) - end} byte(s) of garbage after {msg.name}"
    return data, None


def control_type(key) -> int:
    """The control type in a control record key, or -1 if the key is malformed."""
    if key is None or len(key) < 4:
        return -1
    return _KEY.unpack_from(key, 0)[1]


def decode_control(key, value) -> Decoded:
    ctype = control_type(key)
    entry = CONTROL_TYPES.get(ctype)
    if entry is None:
        return Decoded("control", ctype, None, "Unknown", "UNKNOWN", None, f"unknown control type {ctype}")
    name, msg = entry
    label = CONTROL_LABELS.get(ctype, name)
    if value is None or len(value) < 2:
        return Decoded("control", ctype, None, label, name, None, "control record value too short")
    (version,) = _I16.unpack_from(value, 0)
    schema_version = body_version(ctype, version)  # Kafka reads newer values with its own version
    if schema_version is None:
        return Decoded("control", ctype, version, label, name, None, f"invalid control record version {version}")
    try:
        data, end = codec(msg).decode(schema_version, value, 0)
    except DecodeError as e:
        return Decoded("control", ctype, version, label, name, None, str(e))
    if end != len(value):
        return Decoded(
            "control", ctype, version, label, name, None, f"found {len(value) - end} byte(s) of garbage after {name}"
        )
    return Decoded("control", ctype, version, label, name, data)


_PREFIX: dict[tuple[int, int], bytes] = {}


def payload_prefix(api_key: int, version: int) -> bytes:
    """The start of Kafka's payload JSON for a metadata (api key, version), up
    to its data (`{"type":"PARTITION_RECORD","version":1,"data":`): dump-log and
    spark-export encode only the data and add the closing brace."""
    prefix = _PREFIX.get((api_key, version))
    if prefix is None:
        prefix = _PREFIX[(api_key, version)] = f'{{"type":"{TYPE_NAMES[api_key]}","version":{version},"data":'.encode()
    return prefix


# -- writing -----------------------------------------------------------------


def encode_metadata(api_key_or_name, version: int, data: dict) -> bytes:
    api_key = API_KEYS[api_key_or_name] if isinstance(api_key_or_name, str) else api_key_or_name
    body = codec(METADATA_RECORDS[api_key]).encode(version, data)
    return uvarint_bytes(FRAME_VERSION) + uvarint_bytes(api_key) + uvarint_bytes(version) + body


def control_key(ctype: int) -> bytes:
    return _KEY.pack(0, ctype)


def encode_control(ctype: int, data: dict) -> tuple[bytes, bytes]:
    """(key, value) of a control record; the value's version is data['version']."""
    _name, msg = CONTROL_TYPES[ctype]
    return control_key(ctype), codec(msg).encode(data.get("version", 0), data)


def records_with_keys(path: str, keys, from_offset: int = 0):
    """(offset, Decoded) of each metadata record whose api key is in `keys`, in
    one record-batch file (a segment, snapshot or bootstrap.checkpoint), at or
    after from_offset. Other records are passed over on their frame's first two
    bytes, not decoded; control batches are skipped. The walk ends where the
    file can no longer be read (verify reports the damage)."""
    from .batch import Batch, BatchError, BatchReader

    try:
        with BatchReader(path) as reader:
            for b in reader:
                if not isinstance(b, Batch) or b.is_control or b.last_offset < from_offset:
                    continue
                for r in b.iter_records():
                    v = r.value
                    if v is None or len(v) < 3 or r.offset < from_offset:
                        continue
                    if v[0] == FRAME_VERSION and v[1] < 128 and v[1] not in keys:
                        continue  # another type, told by its one-byte api key
                    d = decode_metadata(v)
                    if d.api_key in keys and d.data is not None:
                        yield r.offset, d
    except (BatchError, OSError):
        return
