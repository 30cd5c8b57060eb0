"""A reader of Java's JKS keystores (`keytool -storetype JKS`), for
ssl.truststore.* and ssl.keystore.* of type JKS, Kafka's default type.

Why our own reader: the one Python library for JKS, pyjks, has had no release
since 2020 and pulls in pycryptodomex, twofish (an unmaintained C extension)
and javaobj for JCEKS/BKS features Kafka clients never need. What a Kafka
client needs of a JKS file is small and fixed since Java 1.2: the entries
(trusted certificates; private keys with their chains), the store's integrity
digest, and Sun's KeyProtector cipher of a private key. Those are read here
with the stdlib (hashlib, struct); the keys and certificates themselves go to
`cryptography` (already a dependency), as for PKCS12.

Layout (big-endian): magic FEEDFEED, version (1 or 2), entry count; per entry
a tag (1 private key, 2 trusted certificate), alias (Java modified UTF-8 with
a 2-byte length), creation time (8 bytes); a private key entry holds a DER
EncryptedPrivateKeyInfo then its chain; a certificate (v2: with its type
name) is a 4-byte length and DER. The store ends with SHA-1(password as
UTF-16BE, b"Mighty Aphrodite", everything before). KeyProtector (OID
1.3.6.1.4.1.42.2.17.1.1): salt(20) | key XOR keystream | SHA-1 check, the
keystream being successive SHA-1(password, previous) blocks from the salt.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field

JKS_MAGIC = b"\xfe\xed\xfe\xed"
JCEKS_MAGIC = b"\xce\xce\xce\xce"
_KEY_PROTECTOR_OID = bytes.fromhex("2b060104012a02110101")  # 1.3.6.1.4.1.42.2.17.1.1
_WHITENER = b"Mighty Aphrodite"


class JksError(Exception):
    """The store is malformed, or a password is wrong (`wrong_password`)."""

    def __init__(self, message: str, wrong_password: bool = False):
        super().__init__(message)
        self.wrong_password = wrong_password


@dataclass
class KeyEntry:
    alias: str
    encrypted: bytes = field(repr=False)  # the KeyProtector blob (salt | data | check)
    chain: list[bytes] = field(default_factory=list)  # DER certificates, the entry's own first


@dataclass
class Keystore:
    certificates: list[bytes]  # DER of every trusted certificate entry
    keys: list[KeyEntry]


def _pw_bytes(password: str) -> bytes:
    return password.encode("utf-16-be")


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise JksError("the file ends in the middle of an entry (truncated or not a JKS store)")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def u16(self) -> int:
        return struct.unpack(">H", self.take(2))[0]

    def u32(self) -> int:
        return struct.unpack(">I", self.take(4))[0]

    def utf(self) -> str:
        # Java's modified UTF-8 differs from UTF-8 only for NUL and non-BMP characters
        return self.take(self.u16()).decode("utf-8", "replace")


def read_jks(data: bytes, password: str | None) -> Keystore:
    """The entries of a JKS store. With a password the integrity digest is
    checked (as Java's KeyStore.load does); without one it is not."""
    if data[:4] == JCEKS_MAGIC:
        raise JksError("it is a JCEKS store; convert it with keytool -importkeystore -deststoretype PKCS12")
    if data[:4] != JKS_MAGIC:
        raise JksError("it is not a JKS store")
    if len(data) < 32:
        raise JksError("the file is too short for a JKS store")
    if password is not None:
        body, digest = data[:-20], data[-20:]
        want = hashlib.sha1(_pw_bytes(password) + _WHITENER + body).digest()
        if not hmac.compare_digest(want, digest):
            raise JksError("the store was tampered with, or the password is wrong", wrong_password=True)
    r = _Reader(data[:-20])
    r.take(4)
    version = r.u32()
    if version not in (1, 2):
        raise JksError(f"unknown JKS version {version}")
    count = r.u32()
    certs: list[bytes] = []
    keys: list[KeyEntry] = []

    def cert() -> bytes:
        if version == 2:
            kind = r.utf()
            if kind != "X.509":
                raise JksError(f"certificate type {kind!r} is not X.509")
        return r.take(r.u32())

    for _ in range(count):
        tag = r.u32()
        alias = r.utf()
        r.take(8)  # creation time
        if tag == 1:
            enc = r.take(r.u32())
            chain = [cert() for _ in range(r.u32())]
            keys.append(KeyEntry(alias, _key_protector_blob(enc), chain))
        elif tag == 2:
            certs.append(cert())
        else:
            raise JksError(f"entry {alias!r} has a kind ({tag}) a JKS store does not hold")
    return Keystore(certs, keys)


# -- DER, only as far as EncryptedPrivateKeyInfo needs --------------------------------


def _tlv(data: bytes, pos: int) -> tuple[int, bytes, int]:
    """(tag, value, position after) of the DER element at `pos`."""
    try:
        tag = data[pos]
        n = data[pos + 1]
        pos += 2
        if n & 0x80:
            k = n & 0x7F
            n = int.from_bytes(data[pos : pos + k], "big")
            pos += k
    except IndexError:
        raise JksError("a private key entry is not valid DER") from None
    if pos + n > len(data):
        raise JksError("a private key entry is not valid DER")
    return tag, data[pos : pos + n], pos + n


def _key_protector_blob(enc: bytes) -> bytes:
    tag, seq, _ = _tlv(enc, 0)
    if tag != 0x30:
        raise JksError("a private key entry is not an EncryptedPrivateKeyInfo")
    tag, alg, pos = _tlv(seq, 0)
    _, oid, _ = _tlv(alg, 0)
    if oid != _KEY_PROTECTOR_OID:
        raise JksError(
            "a private key is protected by an algorithm other than Sun's KeyProtector "
            "(convert the store to PKCS12 with keytool -importkeystore)"
        )
    tag, blob, _ = _tlv(seq, pos)
    if tag != 0x04 or len(blob) < 40:
        raise JksError("a private key entry is not an EncryptedPrivateKeyInfo")
    return blob


def decrypt_key(entry: KeyEntry, password: str) -> bytes:
    """The PKCS#8 DER of a private key entry (Sun's KeyProtector)."""
    pw = _pw_bytes(password)
    salt, data, check = entry.encrypted[:20], entry.encrypted[20:-20], entry.encrypted[-20:]
    stream = bytearray()
    block = salt
    while len(stream) < len(data):
        block = hashlib.sha1(pw + block).digest()
        stream += block
    plain = bytes(a ^ b for a, b in zip(data, stream))
    if not hmac.compare_digest(hashlib.sha1(pw + plain).digest(), check):
        raise JksError(f"the password of key {entry.alias!r} is wrong", wrong_password=True)
    return plain
