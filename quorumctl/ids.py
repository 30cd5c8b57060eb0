"""Kafka's Uuid rules (org.apache.kafka.common.Uuid and DirectoryId).

A Kafka Uuid is 16 bytes (most significant long, then least significant long,
big-endian) shown as URL-safe base64 without padding: always 22 characters of
[A-Za-z0-9_-]. `Uuid.randomUuid()` never returns a reserved id (zero, or one =
the metadata topic id) nor one whose text starts with '-' (it would look like a
command-line flag). A directory id is additionally never "reserved" in
DirectoryId's sense: most significant long 0 and least significant long < 100
(a signed comparison in Java, so a negative lsb counts as reserved too).

`Uuid.fromString` accepts at most 24 characters that Java's URL-safe base64
decoder turns into exactly 16 bytes (padding allowed, unused trailing bits
ignored); the messages of `InvalidUuid` are Kafka's own.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import struct

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
ONE_UUID = "AAAAAAAAAAAAAAAAAAAAAQ"
METADATA_TOPIC_ID = ONE_UUID
RESERVED = frozenset({ZERO_UUID, ONE_UUID})

# DirectoryId's named reserved ids (MIGRATING = 0, UNASSIGNED = 1, LOST = 2)
DIRECTORY_MIGRATING = ZERO_UUID
DIRECTORY_UNASSIGNED = ONE_UUID
DIRECTORY_LOST = "AAAAAAAAAAAAAAAAAAAAAg"

_URLSAFE = re.compile(r"^[A-Za-z0-9_-]*={0,2}$")
_LONGS = struct.Struct(">qq")


class InvalidUuid(ValueError):
    """Text that Kafka's Uuid.fromString would reject (message as Kafka words it)."""


def to_str(raw: bytes) -> str:
    """Uuid.toString(): URL-safe base64 of the 16 bytes, no padding."""
    if len(raw) != 16:
        raise ValueError(f"a Uuid is 16 bytes, not {len(raw)}")
    return base64.urlsafe_b64encode(raw)[:22].decode("ascii")


def parse(text: str) -> bytes:
    """Uuid.fromString(): the 16 bytes, or InvalidUuid with Kafka's message."""
    if len(text) > 24:
        raise InvalidUuid(f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
    if not _URLSAFE.match(text) or "=" in text.rstrip("="):
        bad = next((c for c in text if not (c.isascii() and (c.isalnum() or c in "-_="))), "=")
        raise InvalidUuid(f"Illegal base64 character {ord(bad):x}")
    body = text.rstrip("=")
    pad = len(text) - len(body)
    if len(body) % 4 == 1 or (pad and (len(body) + pad) % 4):
        # Java rejects a dangling 6-bit unit and padding that does not complete a unit
        raise InvalidUuid(f"Input string `{text}` is not valid base64")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError) as e:  # pragma: no cover - guarded above
        raise InvalidUuid(f"Input string `{text}` is not valid base64: {e}") from None
    if len(raw) != 16:
        raise InvalidUuid(
            f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to "
            "the expected 16 bytes of a base64-encoded UUID"
        )
    return raw


def canonical(text: str) -> str:
    """The text Kafka prints for the id `text` parses to (may differ from `text`
    when it carries padding or non-zero unused bits)."""
    return to_str(parse(text))


def longs(text_or_raw) -> tuple[int, int]:
    """(mostSignificantBits, leastSignificantBits) as Java's signed longs."""
    raw = parse(text_or_raw) if isinstance(text_or_raw, str) else text_or_raw
    return _LONGS.unpack(raw)


def is_reserved_directory_id(text_or_raw) -> bool:
    """DirectoryId.reserved(): msb == 0 and lsb < 100 (signed, as in Java)."""
    msb, lsb = longs(text_or_raw)
    return msb == 0 and lsb < 100


def random_uuid(randbytes=os.urandom) -> str:
    """Uuid.randomUuid(): random 16 bytes, re-rolled while reserved or starting with '-'.
    (Java uses a type-4 UUID: version and variant bits set; so do we.)"""
    while True:
        raw = bytearray(randbytes(16))
        raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
        raw[8] = (raw[8] & 0x3F) | 0x80  # IETF variant
        text = to_str(bytes(raw))
        if text not in RESERVED and not text.startswith("-"):
            return text


def random_directory_id(existing=(), randbytes=os.urandom) -> str:
    """DirectoryId.random() / Copier.generateValidDirectoryId(): never reserved,
    never starting with '-', never one of `existing`."""
    taken = set(existing)
    while True:
        text = to_str(randbytes(16))
        if text.startswith("-") or is_reserved_directory_id(text) or text in taken:
            continue
        return text


def check_cluster_id(text: str) -> str | None:
    """Why `text` is not a valid Kafka cluster id (16 bytes of URL-safe base64,
    written canonically, not reserved), or None when it is valid."""
    try:
        canon = canonical(text)
    except InvalidUuid as e:
        return str(e)
    if canon != text:
        return f"`{text}` is not in canonical form; Kafka would print it as {canon}"
    if canon in RESERVED:
        return f"{text} is a reserved Uuid"
    return None
