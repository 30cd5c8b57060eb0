"""Kafka's Uuid rules (Uuid.java, DirectoryId.java): generation, parsing, reservation."""

from __future__ import annotations

import base64
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quorumctl import ids

URLSAFE22 = re.compile(r"^[A-Za-z0-9_-]{22}$")


def test_random_uuid_shape():
    seen = set()
    for _ in range(2000):
        u = ids.random_uuid()
        assert URLSAFE22.match(u)
        assert not u.startswith("-")
        assert u not in ids.RESERVED
        raw = ids.parse(u)
        assert raw[6] >> 4 == 4  # type-4 UUID, as java.util.UUID.randomUUID()
        assert raw[8] >> 6 == 0b10
        assert ids.to_str(raw) == u
        seen.add(u)
    assert len(seen) == 2000


def test_random_uuid_rerolls_dash():
    # 0xf8 encodes to '-' first in URL-safe base64: rerolled. (The zero and one ids cannot
    # come out at all: the type-4 version bits are always set, as in Java's randomUUID.)
    rolls = [bytes([0xF8]) + bytes(15), bytes(16), bytes(range(1, 17))]
    out = ids.random_uuid(randbytes=lambda n: rolls.pop(0))
    assert len(rolls) == 1
    assert out == "AAAAAAAAQACAAAAAAAAAAA"
    assert out not in ids.RESERVED


def test_random_directory_id_never_reserved_or_taken():
    taken = "AQIDBAUGBwgJCgsMDQ4PEA"
    rolls = [
        bytes(15) + b"\x05",  # msb 0, lsb 5: reserved
        bytes(8) + b"\xff" * 8,  # msb 0, lsb -1: reserved (signed comparison, as Java)
        bytes(range(1, 17)),  # == taken
        bytes(range(2, 18)),
    ]
    out = ids.random_directory_id({taken}, randbytes=lambda n: rolls.pop(0))
    assert not rolls
    assert out == ids.to_str(bytes(range(2, 18)))


def test_reserved_directory_ids():
    assert ids.is_reserved_directory_id(ids.DIRECTORY_MIGRATING)
    assert ids.is_reserved_directory_id(ids.DIRECTORY_UNASSIGNED)
    assert ids.is_reserved_directory_id(ids.DIRECTORY_LOST)
    assert ids.is_reserved_directory_id(ids.to_str(bytes(15) + bytes([99])))
    assert not ids.is_reserved_directory_id(ids.to_str(bytes(15) + bytes([100])))
    assert ids.is_reserved_directory_id(ids.to_str(bytes(8) + b"\x80" + bytes(7)))  # negative lsb
    assert not ids.is_reserved_directory_id(ids.to_str(b"\x00" * 7 + b"\x01" + bytes(8)))
    assert ids.longs(ids.DIRECTORY_LOST) == (0, 2)


def test_parse_messages_are_kafkas():
    with pytest.raises(
        ids.InvalidUuid,
        match=r"^Input string `bad` decoded as 2 bytes, which is not equal to the "
        r"expected 16 bytes of a base64-encoded UUID$",
    ):
        ids.parse("bad")
    with pytest.raises(ids.InvalidUuid, match=r"^Input string with prefix `AAAAAAAAAAAAAAAAAAAAAAAA` is too long"):
        ids.parse("A" * 25)
    with pytest.raises(ids.InvalidUuid, match="decoded as 17 bytes"):
        ids.parse("A" * 23)
    with pytest.raises(ids.InvalidUuid, match="Illegal base64 character 2b"):
        ids.parse("AAAAAAAAAAAAAAAAAAAA+A")
    # padding is accepted, as Java's decoder does
    assert ids.parse("AAAAAAAAAAAAAAAAAAAAAQ==") == bytes(15) + b"\x01"


def test_cluster_id_checks():
    assert ids.check_cluster_id("XFBpci3ORzK2hz44Gtmrwg") is None
    assert ids.check_cluster_id("rTcAzcTXQpG_6c1zYns8Xw") is None
    assert "decoded as 7 bytes" in ids.check_cluster_id("not-a-uuid")
    assert "reserved" in ids.check_cluster_id(ids.ZERO_UUID)
    assert "reserved" in ids.check_cluster_id(ids.METADATA_TOPIC_ID)
    # same 16 bytes as the zero id, written with non-zero unused bits: not canonical
    assert "canonical" in ids.check_cluster_id("AAAAAAAAAAAAAAAAAAAAAB")
    assert "canonical" in ids.check_cluster_id("XFBpci3ORzK2hz44Gtmrwg==")
    # KAFKA-16473: the Docker wrapper formatted with the literal id `Some(<id>)`
    assert "is too long to be decoded as a base64 UUID" in ids.check_cluster_id("Some(XFBpci3ORzK2hz44Gtmrwg)")
    assert "`my-kafka-cluster` decoded as 12 bytes" in ids.check_cluster_id("my-kafka-cluster")


@given(st.binary(min_size=16, max_size=16))
def test_round_trip(raw):
    text = ids.to_str(raw)
    assert len(text) == 22
    assert ids.parse(text) == raw
    assert text == base64.urlsafe_b64encode(raw).decode().rstrip("=")
    msb, lsb = ids.longs(raw)
    assert ids.is_reserved_directory_id(raw) == (msb == 0 and lsb < 100)
