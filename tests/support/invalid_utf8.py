"""Byte strings that are not UTF-8, of every class a decoder treats apart:
overlong forms, encoded surrogates, code points above U+10FFFF, stray
continuation bytes, sequences cut short (at the end and in the middle), and
seeded random strings. Shared by the differential test against the JDK
(test_javatext.py) and the comparison with the real kafka-dump-log
(test_kafka_dumplog_utf8.py)."""

from __future__ import annotations

import random

# valid characters of each encoded length, at the ends of the ranges
VALID = ["é", "ÿ", "߿", "ࠀ", "€", "\ud7ff", "\ue000", "\uffff", "𐀀", "𐍈", "\U0010ffff"]

NAMED = [
    bytes.fromhex(h)
    for h in [
        "c080",
        "c1bf",
        "e08080",
        "e09fbf",
        "f0808080",
        "f08fbfbf",
        "f8888080",
        "fc8480808080",  # overlong
        "eda080",
        "edbfbf",
        "edafbfedbfbf",
        "eda0",
        "edbf",
        "eda041",
        "edbfc3a9",  # surrogates
        "f4908080",
        "f7bfbfbf",
        "f5",
        "f580808080",
        "fe",
        "ff",  # above U+10FFFF
        "80",
        "bf",
        "8080",
        "41bf42",
        "c3a9a9",
        "e282ac80",  # stray continuations
    ]
]


def truncations() -> list[bytes]:
    """Each valid multi-byte character cut short: at the end, before ASCII,
    after ASCII, twice, before another character."""
    out = []
    for ch in VALID:
        full = ch.encode()
        for k in range(1, len(full)):
            cut = full[:k]
            out += [cut, cut + b"A", b"A" + cut, cut + cut, cut + "€".encode(), cut + full]
    return out


def random_strings(n: int, seed: int = 25, max_len: int = 24) -> list[bytes]:
    """n strings mixing ASCII, continuation bytes, lead bytes and valid characters."""
    rng = random.Random(seed)
    pools = [range(0x20, 0x7F), range(0x80, 0xC0), range(0xC0, 0x100), range(0xE0, 0xF5)]
    valid = [c.encode() for c in VALID]
    out = []
    for _ in range(n):
        b = bytearray()
        for _ in range(rng.randrange(0, max_len + 1)):
            if rng.random() < 0.15:
                b += rng.choice(valid)
            else:
                b += bytes([rng.choice(pools[rng.randrange(len(pools))])])
        out.append(bytes(b))
    return out


def in_context(cases: list[bytes]) -> list[bytes]:
    """Each case alone, between ASCII, behind a Latin-1 character (the JDK
    decodes a leading run of Latin-1 on a path of its own), and repeated."""
    out = []
    for c in cases:
        out += [c, b"ab" + c + b"cd", "é".encode() + c, "é".encode() + c + b"A", c + c, c * 3]
    return out
