"""A small OpenID Connect provider for OAUTHBEARER tests: a token endpoint
(the client-credentials grant with HTTP Basic client authentication) issuing
RS256-signed JWTs, and the JWKS that verifies them, on 127.0.0.1 in a thread.
Signing is `cryptography`'s; the JWT and JWK encodings (RFC 7515/7517/7519)
are written here. It counts the tokens it issues (`issued`)."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _uint(n: int) -> str:
    return _b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


class OidcServer:
    def __init__(
        self,
        clients: dict[str, str],
        audience: str = "kafka",
        issuer: str | None = None,
        lifetime_s: float = 3600,
        scope_claim: str = "scope",
    ):
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.clients = clients
        self.audience = audience
        self.lifetime_s = lifetime_s
        self.scope_claim = scope_claim
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "quorumctl-test-key"
        self.issued: list[dict] = []  # the claims of every token issued
        self.refused = 0
        self._srv = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self._srv.server_address[1]
        self.issuer = issuer or f"http://127.0.0.1:{self.port}"
        self.token_url = f"http://127.0.0.1:{self.port}/token"
        self.jwks_url = f"http://127.0.0.1:{self.port}/jwks"
        self._thread = threading.Thread(target=self._srv.serve_forever, daemon=True)

    def start(self) -> "OidcServer":
        self._thread.start()
        return self

    def stop(self):
        self._srv.shutdown()
        self._srv.server_close()

    def jwks(self) -> dict:
        pub = self.key.public_key().public_numbers()
        return {
            "keys": [
                {"kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.kid, "n": _uint(pub.n), "e": _uint(pub.e)}
            ]
        }

    def sign(self, claims: dict) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        header = _b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": self.kid}).encode())
        payload = _b64url(json.dumps(claims).encode())
        sig = self.key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{header}.{payload}.{_b64url(sig)}"

    def _token(self, client_id: str, scope: str | None) -> dict:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": client_id,
            "aud": self.audience,
            "iat": now,
            "exp": now + max(1, int(self.lifetime_s)),
            "jti": f"t{len(self.issued)}",
        }
        if scope:
            claims[self.scope_claim] = scope
        self.issued.append(claims)
        return {"access_token": self.sign(claims), "token_type": "Bearer", "expires_in": int(self.lifetime_s)}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, doc: dict):
                body = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path == "/jwks":
                    self._send(200, server.jwks())
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self):
                from urllib.parse import parse_qs

                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                if self.path != "/token" or form.get("grant_type") != ["client_credentials"]:
                    self._send(400, {"error": "unsupported_grant_type"})
                    return
                auth = self.headers.get("Authorization", "")
                try:
                    cid, _, secret = base64.b64decode(auth.split(" ", 1)[1]).decode().partition(":")
                except (IndexError, ValueError):
                    cid, secret = "", None
                if not auth.startswith("Basic ") or server.clients.get(cid) != secret:
                    server.refused += 1
                    self._send(401, {"error": "invalid_client", "error_description": "Invalid client credentials"})
                    return
                self._send(200, server._token(cid, form["scope"][0] if form.get("scope") else None))

        return Handler
