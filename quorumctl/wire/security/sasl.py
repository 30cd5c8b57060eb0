"""SASL mechanisms: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, 7677),
client side, plus the SCRAM primitives the simulated endpoint's server side
shares. Hashing and key derivation are the stdlib's (hashlib.pbkdf2_hmac, hmac).

A mechanism object yields the tokens to send in SaslAuthenticate requests:
`first()`, then `step(server_token)` until `done`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
SCRAM_MIN_ITERATIONS = 4096  # Kafka's ScramMechanism minimum for both


class SaslError(Exception):
    """The server's SASL answer is malformed or fails verification."""


def saslname(user: str) -> str:
    """RFC 5802 escaping of a user name ('=' and ',' are special)."""
    return user.replace("=", "=3D").replace(",", "=2C")


def parse_attrs(msg: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in msg.split(","):
        if len(part) >= 2 and part[1] == "=":
            out.setdefault(part[0], part[2:])
    return out


def hi(hash_name: str, password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(hash_name, password.encode("utf-8"), salt, iterations)


def hmac_(hash_name: str, key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, hash_name).digest()


def scram_keys(hash_name: str, salted: bytes) -> tuple[bytes, bytes, bytes]:
    """(ClientKey, StoredKey, ServerKey) from a salted password."""
    client_key = hmac_(hash_name, salted, b"Client Key")
    stored_key = hashlib.new(hash_name, client_key).digest()
    server_key = hmac_(hash_name, salted, b"Server Key")
    return client_key, stored_key, server_key


class Plain:
    def __init__(self, username: str, password: str):
        self._token = b"\x00" + username.encode("utf-8") + b"\x00" + password.encode("utf-8")
        self.done = False

    def first(self) -> bytes:
        self.done = True
        return self._token

    def step(self, server_token: bytes) -> bytes | None:
        return None


class ScramClient:
    def __init__(self, mechanism: str, username: str, password: str, nonce: str | None = None):
        self.hash = SCRAM_HASHES[mechanism]
        self.mechanism = mechanism
        self._password = password
        self._nonce = nonce or secrets.token_urlsafe(24)
        self._bare = f"n={saslname(username)},r={self._nonce}"
        self._state = 0
        self._server_sig = b""
        self.done = False

    def first(self) -> bytes:
        self._state = 1
        return ("n,," + self._bare).encode("utf-8")

    def step(self, server_token: bytes) -> bytes | None:
        msg = server_token.decode("utf-8", "replace")
        attrs = parse_attrs(msg)
        if "e" in attrs:
            raise SaslError(f"server rejected SCRAM authentication: {attrs['e']}")
        if self._state == 1:
            try:
                nonce, salt, iters = attrs["r"], base64.b64decode(attrs["s"]), int(attrs["i"])
            except (KeyError, ValueError) as e:
                raise SaslError(f"malformed SCRAM server-first message ({e})") from None
            if not nonce.startswith(self._nonce):
                raise SaslError("SCRAM server nonce does not extend the client nonce")
            if iters < SCRAM_MIN_ITERATIONS:
                raise SaslError(f"SCRAM iteration count {iters} is below the minimum {SCRAM_MIN_ITERATIONS}")
            salted = hi(self.hash, self._password, salt, iters)
            client_key, stored_key, server_key = scram_keys(self.hash, salted)
            without_proof = f"c=biws,r={nonce}"
            auth = f"{self._bare},{msg},{without_proof}".encode("utf-8")
            sig = hmac_(self.hash, stored_key, auth)
            proof = bytes(a ^ b for a, b in zip(client_key, sig))
            self._server_sig = hmac_(self.hash, server_key, auth)
            self._state = 2
            return f"{without_proof},p={base64.b64encode(proof).decode()}".encode("utf-8")
        if self._state == 2:
            v = attrs.get("v")
            if v is None:
                raise SaslError("malformed SCRAM server-final message")
            try:
                got = base64.b64decode(v)
            except ValueError:
                raise SaslError("malformed SCRAM server signature") from None
            if not hmac.compare_digest(got, self._server_sig):
                raise SaslError("SCRAM server signature does not verify: the server does not know the password")
            self._state = 3
            self.done = True
            return None
        raise SaslError("unexpected SCRAM message after the exchange completed")


def client_mechanism(mechanism: str, username: str, password: str):
    if mechanism == "PLAIN":
        return Plain(username, password)
    return ScramClient(mechanism, username, password)
