"""Server side of SASL PLAIN and SCRAM-SHA-256/512 for the simulated endpoint,
as a Kafka broker's SaslServerAuthenticator behaves: a SaslHandshake picks
the mechanism, then SaslAuthenticate rounds carry the tokens; a wrong
password ends with SASL_AUTHENTICATION_FAILED and a closed connection.
"""

from __future__ import annotations

import base64
import hmac
import secrets
from typing import NoReturn

from ..wire.security.sasl import SCRAM_HASHES, hi, hmac_, parse_attrs, scram_keys


class AuthFailed(Exception):
    pass


class PlainServer:
    def __init__(self, users: dict[str, str]):
        self.users = users
        self.done = False
        self.user: str | None = None

    def step(self, token: bytes) -> bytes:
        parts = token.split(b"\x00")
        if len(parts) != 3:
            raise AuthFailed("Invalid SASL/PLAIN message")
        user, pw = parts[1].decode("utf-8", "replace"), parts[2].decode("utf-8", "replace")
        if self.users.get(user) != pw or not user:
            raise AuthFailed("Authentication failed: Invalid username or password")
        self.done, self.user = True, user
        return b""


class ScramServer:
    def __init__(self, mechanism: str, users: dict[str, str], iterations: int = 4096):
        self.mechanism = mechanism
        self.hash = SCRAM_HASHES[mechanism]
        self.users = users
        self.iterations = iterations
        self.state = 0
        self.done = False
        self.user: str | None = None

    def _fail(self) -> NoReturn:
        raise AuthFailed(
            "Authentication failed during authentication due to invalid credentials "
            f"with SASL mechanism {self.mechanism}"
        )

    def step(self, token: bytes) -> bytes:
        msg = token.decode("utf-8", "replace")
        if self.state == 0:
            if not msg.startswith(("n,", "y,")):
                raise AuthFailed("Invalid SCRAM client first message")
            bare = msg.split(",", 2)[2]
            attrs = parse_attrs(bare)
            user = attrs.get("n", "").replace("=2C", ",").replace("=3D", "=")
            cnonce = attrs.get("r")
            if not cnonce:
                raise AuthFailed("Invalid SCRAM client first message")
            self.user = user
            # unknown users get a fake salt so that they fail at the proof, as Kafka does
            self.salt = secrets.token_bytes(16)
            self.nonce = cnonce + secrets.token_urlsafe(18)
            self.bare = bare
            self.server_first = f"r={self.nonce},s={base64.b64encode(self.salt).decode()},i={self.iterations}"
            self.state = 1
            return self.server_first.encode()
        if self.state == 1:
            attrs = parse_attrs(msg)
            if attrs.get("r") != self.nonce or "p" not in attrs:
                raise AuthFailed("Invalid SCRAM client final message")
            without_proof = msg[: msg.rindex(",p=")]
            password = self.users.get(self.user) if self.user is not None else None  # (set in state 0)
            if password is None:
                self._fail()
            salted = hi(self.hash, password, self.salt, self.iterations)
            client_key, stored_key, server_key = scram_keys(self.hash, salted)
            auth = f"{self.bare},{self.server_first},{without_proof}".encode()
            sig = hmac_(self.hash, stored_key, auth)
            try:
                proof = base64.b64decode(attrs["p"])
            except ValueError:
                self._fail()
            expected = bytes(a ^ b for a, b in zip(client_key, sig))
            if not hmac.compare_digest(proof, expected):
                self._fail()
            self.state = 2
            self.done = True
            return f"v={base64.b64encode(hmac_(self.hash, server_key, auth)).decode()}".encode()
        raise AuthFailed("SCRAM exchange already complete")


def server_mechanism(mechanism: str, users: dict[str, str]):
    if mechanism == "PLAIN":
        return PlainServer(users)
    return ScramServer(mechanism, users)
