"""Generated metadata log segments for the split test and the benchmark.

Real logs are hundreds of MB to GBs; the corpus is 51 MB in total, so the
large inputs are made with the project's own writer (`encode_batch`,
`encode_metadata`, `encode_control`). Writing GBs record by record in Python
would take minutes, so a few hundred batch templates are encoded once and
then stamped out: each copy gets its own base offset, leader epoch and
timestamps, and the records of "unique" templates get fresh topic ids,
partition ids, broker epochs and config values patched in at known byte
positions, so their values do not repeat (as in a real log) and every batch
gets a correct CRC-32C. NoOpRecord heartbeat batches, by far the most common
batch in real logs, stay identical, as they are in reality.

`write_segment` returns what it wrote (batches, records, per-type record
counts, the offset range) so tests can check an export against it.
"""

from __future__ import annotations

import os
import random
import struct
from collections import Counter
from dataclasses import dataclass, field


from ..records import compression
from ..records.crc import crc32c
from ..records import metadata as md
from ..records.batch import (
    ATTRIBUTES,
    CRC_START,
    HEAD_TO_CRC,
    HEADER_SIZE,
    LOG_OVERHEAD,
    OFFSETS,
    TIMESTAMPS,
    encode_batch,
)

_TIMES_AT = OFFSETS["base_timestamp"] - CRC_START  # base/max timestamp within the CRC-covered part
_RECORDS_AT = HEADER_SIZE - CRC_START  # the records within the CRC-covered part
_LENGTH_BEFORE_CRC = HEAD_TO_CRC.size - LOG_OVERHEAD  # batchLength counts these header bytes too

SENTINEL_UUID = bytes.fromhex("5eed5eed5eed5eed5eed5eed5eed5eed")
SENTINEL_I32 = 0x5EED5EED
SENTINEL_I64 = 0x5EED5EED5EED5EED
SENTINEL_TEXT = "5eed5eed5eed5eed"  # 16 characters, replaced by 16 hex digits
_UUID_B64 = "Xu1e7V7tXu1e7V7tXu1e7Q"  # SENTINEL_UUID in Kafka's base64 form


@dataclass
class Template:
    name: str
    weight: float  # relative frequency (by batch count)
    after_crc: bytes  # the CRC-covered part of the batch (attributes .. records)
    records: int
    types: Counter  # record type name -> count in one copy
    control: bool = False
    patches: list = field(default_factory=list)  # (position, width, is text) in after_crc, or in
    codec: int = 0  # `plain` for a compressed template, which is
    plain: bytes = b""  # patched, then compressed, per copy


@dataclass
class Written:
    path: str
    bytes: int = 0
    batches: int = 0
    records: int = 0
    first_offset: int = 0
    last_offset: int = -1
    types: Counter = field(default_factory=Counter)


def _template(name, weight, records, codec=0, control=False) -> Template:
    raw = encode_batch(records, base_offset=0, control=control, base_timestamp=0, max_timestamp=0)
    after = raw[CRC_START:]
    plain = b""
    if codec:
        # keep the uncompressed records to patch; the attributes get the codec
        plain = after[_RECORDS_AT:]
        after = ATTRIBUTES.pack(codec) + after[ATTRIBUTES.size : _RECORDS_AT]
    types: Counter[str] = Counter()
    for key, value in ((r[0], r[1]) for r in records):
        d = md.decode_control(key, value) if control else md.decode_metadata(value)
        types[d.type_name] += 1
    patches = []
    # longest sentinels first, blanking each find, since the int patterns
    # also occur inside the uuid sentinel
    scratch = bytearray(plain if codec else after)
    for sentinel in (
        SENTINEL_UUID,
        SENTINEL_TEXT.encode(),
        struct.pack(">q", SENTINEL_I64),
        struct.pack(">i", SENTINEL_I32),
    ):
        start = 0
        while (i := scratch.find(sentinel, start)) >= 0:
            patches.append((i, len(sentinel), sentinel == SENTINEL_TEXT.encode()))
            scratch[i : i + len(sentinel)] = bytes(len(sentinel))
            start = i + len(sentinel)
    return Template(name, weight, after, len(records), types, control, sorted(patches), codec, plain)


def _meta(name, version, data):
    return (None, md.encode_metadata(name, version, data))


def templates(seed: int = 7) -> list[Template]:
    """The batch kinds of a busy cluster's metadata log, with weights by batch count."""
    rnd = random.Random(seed)
    out = [_template("noop", 60, [_meta("NoOpRecord", 0, {})])]
    # partition reassignments / ISR changes: 1..20 PartitionChangeRecords, unique partitions
    for n in (1, 2, 5, 20):
        recs = [
            _meta(
                "PartitionChangeRecord",
                0,
                {
                    "partitionId": SENTINEL_I32,
                    "topicId": _UUID_B64,
                    "isr": sorted(rnd.sample(range(1, 10), 3)),
                    "leader": rnd.randint(1, 9),
                },
            )
            for _ in range(n)
        ]
        out.append(_template(f"partition-change-{n}", 10 / n, recs))
    # broker heartbeats changing registration state, fencing
    out.append(
        _template(
            "broker-registration-change",
            6,
            [_meta("BrokerRegistrationChangeRecord", 0, {"brokerId": 3, "brokerEpoch": SENTINEL_I64, "fenced": -1})],
        )
    )
    out.append(_template("fence", 1, [_meta("FenceBrokerRecord", 0, {"id": 2, "epoch": SENTINEL_I64})]))
    out.append(_template("unfence", 1, [_meta("UnfenceBrokerRecord", 0, {"id": 2, "epoch": SENTINEL_I64})]))
    # topic creations: TopicRecord + N PartitionRecords + a ConfigRecord
    for n in (3, 12, 50, 200):
        recs = [_meta("TopicRecord", 0, {"name": f"topic-{SENTINEL_TEXT}", "topicId": _UUID_B64})]
        recs += [
            _meta(
                "PartitionRecord",
                1,
                {
                    "partitionId": SENTINEL_I32,
                    "topicId": _UUID_B64,
                    "replicas": [1, 2, 3],
                    "isr": [1, 2, 3],
                    "removingReplicas": [],
                    "addingReplicas": [],
                    "leader": 1 + i % 3,
                    "leaderEpoch": 0,
                    "partitionEpoch": 0,
                    "directories": [_UUID_B64] * 3,
                },
            )
            for i in range(n)
        ]
        recs.append(
            _meta(
                "ConfigRecord",
                0,
                {
                    "resourceType": 2,
                    "resourceName": f"topic-{SENTINEL_TEXT}",
                    "name": "retention.ms",
                    "value": SENTINEL_TEXT,
                },
            )
        )
        out.append(_template(f"create-topic-{n}", 3 / (1 + n // 20), recs))
    # config changes with large values (client quotas, SSL settings, ...)
    for size in (200, 2000, 8000):
        recs = [
            _meta(
                "ConfigRecord",
                0,
                {"resourceType": 4, "resourceName": "1", "name": f"custom.{i}", "value": SENTINEL_TEXT + "x" * size},
            )
            for i in range(4)
        ]
        out.append(_template(f"config-{size}", 1, recs))
    # compressed snapshot-like batches (Kafka writes metadata uncompressed; other
    # writers may not, and the codec paths get exercised)
    for codec in (compression.LZ4, compression.ZSTD, compression.GZIP, compression.SNAPPY):
        recs = [
            _meta(
                "PartitionRecord",
                1,
                {
                    "partitionId": SENTINEL_I32,
                    "topicId": _UUID_B64,
                    "replicas": [1, 2, 3],
                    "isr": [1, 2, 3],
                    "removingReplicas": [],
                    "addingReplicas": [],
                    "leader": 1 + i % 3,
                    "leaderEpoch": rnd.randint(0, 9),
                    "partitionEpoch": 0,
                    "directories": [],
                },
            )
            for i in range(300)
        ]
        out.append(_template(f"compressed-{compression.NAMES[codec]}", 0.05, recs, codec=codec))
    out.append(
        _template(
            "feature-level", 0.2, [_meta("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 21})]
        )
    )
    # quorum leader elections
    key, value = md.encode_control(
        md.LEADER_CHANGE,
        {
            "version": 0,
            "leaderId": 2,
            "voters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}],
            "grantingVoters": [{"voterId": 2}, {"voterId": 3}],
        },
    )
    out.append(_template("leader-change", 0.3, [(key, value)], control=True))
    return out


# Few records per byte: large config values and topic creations dominate the
# bytes, so a 300 MB test segment has ~10^5 records, not ~10^6, and still every
# batch kind (tiny to 32 KB, compressed, control) sits next to every other.
BULKY = {
    "noop": 30,
    "config-8000": 12,
    "config-2000": 6,
    "create-topic-50": 0.5,
    "create-topic-200": 0.05,
    "compressed-lz4": 0.1,
    "compressed-zstd": 0.1,
    "compressed-gzip": 0.1,
    "compressed-snappy": 0.1,
}


def write_segment(
    path: str,
    target_bytes: int,
    *,
    base_offset: int = 0,
    seed: int = 0,
    start_ms: int = 1_735_689_600_000,
    step_ms: int = 500,
    epoch: int = 1,
    mix: dict | None = None,
) -> Written:
    """Write a segment of about `target_bytes` (never more) and say what is in it.
    `mix` overrides template weights by name (e.g. BULKY)."""
    rnd = random.Random(seed)
    temps = templates()
    weights = [(mix or {}).get(t.name, t.weight) for t in temps]
    w = Written(path, first_offset=base_offset)
    offset = base_offset
    ts = start_ms
    unique = seed << 40
    buf = bytearray()
    with open(path, "wb") as f:
        while True:
            t = rnd.choices(temps, weights)[0]
            patched = bytearray(t.plain if t.codec else t.after_crc)
            for pos, width, text in t.patches:
                unique += 1
                if text:
                    patched[pos : pos + 16] = b"%016x" % unique
                else:
                    patched[pos : pos + width] = (unique & ((1 << (8 * width - 1)) - 1)).to_bytes(width, "big")
            body = bytearray(t.after_crc) + compression.compress(t.codec, bytes(patched)) if t.codec else patched
            size = HEAD_TO_CRC.size + len(body)
            if w.bytes + size > target_bytes:
                break
            TIMESTAMPS.pack_into(body, _TIMES_AT, ts, ts)
            if rnd.random() < 0.001:
                epoch += 1  # an election now and then
            buf += HEAD_TO_CRC.pack(offset, len(body) + _LENGTH_BEFORE_CRC, epoch, 2, crc32c(body))
            buf += body
            w.bytes += size
            w.batches += 1
            w.records += t.records
            w.types.update(t.types)
            offset += t.records
            ts += step_ms
            if len(buf) >= 1 << 22:
                f.write(buf)
                buf.clear()
        f.write(buf)
    w.last_offset = offset - 1
    return w


def write_log_dir(
    root: str,
    total_bytes: int,
    segment_bytes: int = 256 << 20,
    seed: int = 0,
    cluster_id: str = "c5M0_9gDSzSKNXLYtZaAnw",
    node_id: int = 1,
) -> list[Written]:
    """A metadata log dir (`root/__cluster_metadata-0/` with meta.properties in
    `root`) of consecutive segments adding up to about `total_bytes`."""
    part = os.path.join(root, "__cluster_metadata-0")
    os.makedirs(part, exist_ok=True)
    with open(os.path.join(root, "meta.properties"), "w") as f:
        f.write(f"#\n#generated\nnode.id={node_id}\nversion=1\ncluster.id={cluster_id}\n")
    out: list[Written] = []
    offset = 0
    ts = 1_735_689_600_000
    i = 0
    while total_bytes - sum(x.bytes for x in out) > 1 << 16:
        size = min(segment_bytes, total_bytes - sum(x.bytes for x in out))
        w = write_segment(
            os.path.join(part, f"{offset:020d}.log"), size, base_offset=offset, seed=seed * 1000 + i, start_ms=ts
        )
        out.append(w)
        offset = w.last_offset + 1
        ts += w.batches * 500
        i += 1
    return out
