"""OAUTHBEARER (RFC 7628, KIP-255/KIP-768) on the client side: getting a
token as Kafka 4.3's login does, and the SASL exchange.

Tokens: the KIP-768 client-credentials grant (a form POST with HTTP Basic
client id and secret, Kafka's ClientSecretRequestFormatter; the JWT in the
answer's access_token, else id_token, JwtResponseParser), a token read from a
file:// URL (FileJwtRetriever), or the unsecured form (an unsigned JWT made
here, OAuthBearerUnsecuredLoginCallbackHandler). The token's claims are read
as Kafka's ClientJwtValidator reads them (exp, iat, sub, scope; the signature
is the broker's business).

HTTP: the stdlib's urllib.request, imported only here. One form POST needs no
more, and a third-party client (requests, httpx) would be a new dependency and
~50-100 ms of import for every OAuth connection; TLS to an https endpoint uses
the default system trust (as Kafka's HttpURLConnection uses the JVM's).

A token is cached in the process for the same endpoint, client and scope and
renewed once `sasl.login.refresh.window.factor` (0.8) of its life has passed,
so `--watch`, which opens its connections anew each refresh, renews a token
that expires during the watch instead of sending an expired one.

Secrets (the client secret, the token) never enter a message: errors name
the setting and quote only the endpoint's RFC 6749 error fields.
"""

from __future__ import annotations

import base64
import json
import threading
import time

from ...errors import ClusterError, InputError

_cache: dict[tuple, tuple[str, float, float]] = {}  # key -> (token, got_at, expires_at) (epoch seconds)
_lock = threading.Lock()

UNRETRYABLE = {400, 401, 402, 403, 404, 405, 406, 407, 409, 410, 411, 412, 413, 414, 415, 501, 505}


class TokenError(ClusterError):
    """The token endpoint refused us or answered nonsense: exit 3."""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def claims_of(token: str, where: str) -> dict:
    """The payload of a JWT, unverified (ClientJwtValidator's reading)."""
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError(f"{where}: the token is not a JWT (expected 3 dot-separated parts, got {len(parts)})")
    try:
        claims = json.loads(_b64url_decode(parts[1]))
    except ValueError:
        raise TokenError(f"{where}: the token's payload is not base64url JSON") from None
    if not isinstance(claims, dict):
        raise TokenError(f"{where}: the token's payload is not a JSON object")
    return claims


def check_claims(claims: dict, o, where: str) -> float:
    """The expiry (epoch seconds) of a token whose claims Kafka's client accepts."""
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool):
        raise TokenError(f"{where}: the token has no numeric exp claim")
    sub = claims.get(o.sub_claim_name)
    if not isinstance(sub, str) or not sub.strip():
        raise TokenError(f"{where}: the token has no {o.sub_claim_name} claim (sasl.oauthbearer.sub.claim.name)")
    if exp <= time.time():
        raise TokenError(f"{where}: the token has already expired (exp {exp})")
    return float(exp)


# -- getting a token --------------------------------------------------------------------


def _error_fields(body: bytes) -> str:
    """RFC 6749 5.2 error fields of an error answer (Kafka's formatErrorMessage
    quotes them; they hold no secret), else a short, printable snippet."""
    text = body.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and "error" in doc:
        desc = doc.get("error_description")
        return f"{doc['error']}" + (f": {desc}" if desc else "")
    snippet = " ".join(text.split())[:200]
    return snippet or "no error text"


def _post(o, deadline: float) -> str:
    import urllib.error
    import urllib.parse
    import urllib.request

    cid, secret, scope = o.client_id, o.client_secret, o.scope
    if o.header_urlencode:
        cid, secret = urllib.parse.quote_plus(cid), urllib.parse.quote_plus(secret)
        scope = urllib.parse.quote_plus(scope) if scope else None
    basic = base64.b64encode(f"{cid}:{secret}".encode("utf-8")).decode("ascii")
    body = "grant_type=client_credentials" + (f"&scope={scope}" if scope else "")
    req = urllib.request.Request(
        o.token_endpoint_url,
        data=body.encode("utf-8"),
        method="POST",
        headers={
            "Accept": "application/json",
            "Authorization": f"Basic {basic}",
            "Cache-Control": "no-cache",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    where = f"token endpoint {o.token_endpoint_url}"
    backoff = o.retry_backoff_ms / 1000
    last = ""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TokenError(f"{where}: no token before the timeout ran out ({last or 'no answer'})")
        timeout = min(left, (o.read_timeout_ms or o.connect_timeout_ms or 10_000) / 1000)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, data = r.status, r.read(1 << 20)
        except urllib.error.HTTPError as e:
            status, data = e.code, e.read(1 << 16)
        except urllib.error.URLError as e:
            reason = getattr(e.reason, "strerror", None) or str(e.reason)
            last = f"cannot reach it: {reason}"
            status, data = None, b""
        except (TimeoutError, OSError) as e:
            last = f"cannot reach it: {getattr(e, 'strerror', None) or type(e).__name__}"
            status, data = None, b""
        if status in (200, 201):
            if not data:
                raise TokenError(f"{where} answered {status} with an empty body")
            try:
                doc = json.loads(data)
            except ValueError:
                raise TokenError(f"{where} answered with something that is not JSON") from None
            for key in ("access_token", "id_token"):
                v = doc.get(key) if isinstance(doc, dict) else None
                if isinstance(v, str) and v.strip():
                    return v.strip()
            raise TokenError(f"{where}: the answer holds no access_token or id_token")
        if status is not None:
            fields = _error_fields(data)
            if status == 401 or (status == 400 and fields.startswith(("invalid_client", "unauthorized_client"))):
                raise TokenError(
                    f"{where} refused client {o.client_id!r} (HTTP {status}, {fields}): check "
                    f"{o.client_secret_setting} and the client id"
                )
            if status in UNRETRYABLE:
                raise TokenError(f"{where} refused the token request (HTTP {status}, {fields})")
            last = f"HTTP {status}, {fields}"
        time.sleep(min(backoff, max(0.0, deadline - time.monotonic())))
        backoff = min(backoff * 2, o.retry_backoff_max_ms / 1000)


def _read_file_token(o) -> str:
    import urllib.parse
    import urllib.request

    path = urllib.request.url2pathname(urllib.parse.urlparse(o.token_endpoint_url).path)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError as e:
        raise InputError(
            f"sasl.oauthbearer.token.endpoint.url: cannot read the token file {path}: {e.strerror or e}"
        ) from None


def _unsecured_token(o) -> tuple[str, float]:
    """OAuthBearerUnsecuredLoginCallbackHandler's token: {"alg":"none"}, exp, iat,
    and the unsecuredLogin{String,Number,List}Claim_* claims."""
    opts = o.unsecured_options
    principal_claim = (opts.get("unsecuredLoginPrincipalClaimName") or "").strip() or "sub"
    try:
        lifetime = int(opts.get("unsecuredLoginLifetimeSeconds", "3600"))
    except ValueError:
        raise InputError("sasl.jaas.config: unsecuredLoginLifetimeSeconds must be an integer") from None
    # whole milliseconds, as Kafka's handler, one back: Kafka's unsecured validator allows
    # no skew, and a broker validating within the same millisecond would see an iat in
    # its future (1000 * iat > currentTimeMillis) and answer invalid_token
    now = (int(time.time() * 1000) - 1) / 1000.0
    claims: dict = {"exp": now + lifetime, "iat": now}
    for key, value in opts.items():
        for prefix, kind in (
            ("unsecuredLoginStringClaim_", "s"),
            ("unsecuredLoginNumberClaim_", "n"),
            ("unsecuredLoginListClaim_", "l"),
        ):
            if key.startswith(prefix) and len(key) > len(prefix):
                name = key[len(prefix) :]
                if name in ("exp", "iat"):
                    raise InputError(f"sasl.jaas.config: {key}: the claim name {name} is reserved")
                if kind == "s":
                    claims[name] = value
                elif kind == "n":
                    try:
                        claims[name] = float(value)
                    except ValueError:
                        raise InputError(f"sasl.jaas.config: {key} must be a number") from None
                else:
                    claims[name] = value[1:].split(value[0]) if len(value) > 1 else []
    sub = claims.get(principal_claim)
    if not isinstance(sub, str) or not sub.strip():
        raise InputError(
            f"sasl.jaas.config: the unsecured OAUTHBEARER login needs unsecuredLoginStringClaim_{principal_claim}"
        )
    header = _b64url(json.dumps({"alg": "none"}, separators=(",", ":")).encode())
    payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{payload}.", claims["exp"]


def token_for(o, deadline: float) -> str:
    """A token for OAuthSettings `o`: the cached one while it is within its
    refresh window, else a new one."""
    key: tuple
    if o.kind == "unsecured":
        key = ("unsecured", tuple(sorted(o.unsecured_options.items())))
    else:
        key = (o.kind, o.token_endpoint_url, o.client_id, o.scope, o.client_secret)
    with _lock:
        hit = _cache.get(key)
        now = time.time()
        if hit is not None:
            token, got, exp = hit
            if now < got + (exp - got) * o.refresh_window_factor:
                return token
        where = f"the token from sasl.oauthbearer.token.endpoint.url {o.token_endpoint_url}"
        if o.kind == "unsecured":
            token, exp = _unsecured_token(o)
        elif o.kind == "file":
            token = _read_file_token(o)
            exp = check_claims(claims_of(token, where), o, where)
        else:
            token = _post(o, deadline)
            exp = check_claims(claims_of(token, where), o, where)
        _cache[key] = (token, now, exp)
        return token


# -- the SASL exchange ------------------------------------------------------------------


class OAuthBearerClient:
    """RFC 7628's client: `n,,^Aauth=Bearer <token>[^Akey=value...]^A^A`; a
    server error arrives as a JSON challenge, answered with ^A (Kafka's
    OAuthBearerSaslClient), after which the server fails the exchange."""

    def __init__(self, token: str, extensions: dict[str, str]):
        ext = "".join(f"\x01{k}={v}" for k, v in extensions.items())
        self._first = f"n,,\x01auth=Bearer {token}{ext}\x01\x01".encode("utf-8")
        self.done = False
        self.server_error: dict | None = None

    def first(self) -> bytes:
        return self._first

    def step(self, server_token: bytes) -> bytes | None:
        if server_token:
            try:
                self.server_error = json.loads(server_token.decode("utf-8", "replace"))
            except ValueError:
                self.server_error = {"status": server_token.decode("utf-8", "replace")[:100]}
            return b"\x01"
        self.done = True
        return None
