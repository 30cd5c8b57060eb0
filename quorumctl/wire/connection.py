"""One connection to one Kafka node: TCP (+TLS), ApiVersions, SASL, requests.

Every connect, handshake and read is bounded by the smaller of its own
timeout and the caller's deadline; a response larger than the configured limit
is refused before anything is allocated. Failures raise `NodeError` (a
ClusterError, exit 3) whose text is one line naming host:port and the cause.
"""

from __future__ import annotations

import socket
import struct
import time

from ..config.addresses import Address
from ..errors import ClusterError
from ..schema.codec import DecodeError, EncodeError
from . import messages
from .kerrors import UNSUPPORTED_VERSION, SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM, error_name
from .framing import decode_response, encode_request

CLIENT_SOFTWARE_NAME = "quorumctl"


def _a(name: str) -> str:
    """`name` with its indefinite article: "an ApiVersions", "a DescribeQuorum"."""
    return ("an " if name[:1].upper() in "AEIOU" else "a ") + name


def _software_version() -> str:
    try:
        from .. import __version__

        return str(__version__)
    except ImportError:  # pragma: no cover
        return "0"


class NodeError(ClusterError):
    """A failure talking to one node. `kind` is one of: refused, unresolved,
    timeout, closed, protocol, tls, auth, unsupported, error."""

    def __init__(self, address: str, message: str, kind: str):
        super().__init__(message)
        self.address = address
        self.kind = kind
        self.bootstrap = False  # True: it failed to reach a bootstrap address (QuorumClient)


class OutOfTime(NodeError):
    """The --timeout ran out before an operation could start."""

    def __init__(self, address: str):
        super().__init__(address, f"{address}: out of time (the --timeout ran out)", "timeout")


_SIZE = struct.Struct(">i")


class _NoSigpipe:
    """Writing to a socket the peer has closed (a listener that refused our
    certificate, a TLS hello sent to a plaintext port) raises SIGPIPE, which
    main() leaves deadly (for `| head`): the process would vanish with no
    message. So SIGPIPE is blocked in this thread while we write, the write
    fails with EPIPE (reported as one line), and a pending SIGPIPE is
    consumed before the mask is restored."""

    def __enter__(self):
        import signal

        self._signal = signal
        try:
            self._old: set[int | signal.Signals] | None = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPIPE})
        except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
            self._old = None
        return self

    def __exit__(self, *exc):
        signal = self._signal
        if self._old is not None:
            while signal.sigtimedwait({signal.SIGPIPE}, 0) is not None:
                pass
            signal.pthread_sigmask(signal.SIG_SETMASK, self._old)
        return False


_no_sigpipe = _NoSigpipe


class Connection:
    """An open, negotiated (and authenticated) connection to one node."""

    def __init__(self, address: Address, cfg, deadline: float):
        self.address = address
        self.name = str(address)
        self.cfg = cfg
        self.deadline = deadline
        self.sock: socket.socket | None = None  # (an ssl.SSLSocket once TLS is up)
        self.api_versions: dict[int, tuple[int, int]] = {}
        self._corr = 0
        self.connect_ms: float | None = None

    # -- timing ------------------------------------------------------------------
    def _budget(self, per_op_ms: int) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise OutOfTime(self.name)
        return min(per_op_ms / 1000.0, left)

    # -- opening -----------------------------------------------------------------
    def open(self) -> "Connection":
        t0 = time.monotonic()
        cfg = self.cfg
        timeout = self._budget(cfg.connect_timeout_ms)
        try:
            raw = socket.create_connection((self.address.host, self.address.port), timeout=timeout)
        except socket.gaierror as e:
            raise NodeError(
                self.name, f"cannot resolve host {self.address.host!r}: {e.strerror}", "unresolved"
            ) from None
        except ConnectionRefusedError:
            raise NodeError(
                self.name,
                f"cannot connect to {self.name}: connection refused (nothing listens on that port)",
                "refused",
            ) from None
        except (socket.timeout, TimeoutError):
            raise NodeError(
                self.name, f"cannot connect to {self.name}: no answer within {timeout:.1f} s", "timeout"
            ) from None
        except OSError as e:
            raise NodeError(self.name, f"cannot connect to {self.name}: {e.strerror or e}", "refused") from None
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = raw
        try:
            if cfg.uses_tls:
                self._tls_handshake()
            self._negotiate_versions()
            if cfg.uses_sasl:
                self._authenticate()
        except BaseException:
            self.close()
            raise
        self.connect_ms = (time.monotonic() - t0) * 1000
        return self

    def _tls_handshake(self):
        import ssl
        from .security.tls import context_for

        ctx = context_for(self.cfg)
        timeout = self._budget(self.cfg.connect_timeout_ms)
        assert self.sock is not None  # connect() sets it before the handshake
        try:
            tls = ctx.wrap_socket(self.sock, server_hostname=self.address.host, do_handshake_on_connect=False)
            self.sock = tls
            tls.settimeout(timeout)
            with _no_sigpipe():
                tls.do_handshake()
        except ssl.SSLCertVerificationError as e:
            why = e.verify_message or e.reason or str(e)
            hint = (
                "; set ssl.truststore.* in --command-config to the CA that signed it"
                if "issuer" in why or "self-signed" in why or "self signed" in why
                else ""
            )
            if "Hostname mismatch" in why or "IP address mismatch" in why:
                hint = (
                    "; connect with a name in its certificate, or set "
                    "ssl.endpoint.identification.algorithm= to skip the check"
                )
            raise NodeError(
                self.name, f"TLS: the certificate of {self.name} is not trusted: {why.rstrip('.')}{hint}", "tls"
            ) from None
        except (socket.timeout, TimeoutError):
            raise NodeError(
                self.name, f"TLS handshake with {self.name} got no answer within {timeout:.1f} s", "timeout"
            ) from None
        except ssl.SSLError as e:
            reason = e.reason or str(e)
            hint = (
                " (is the listener TLS? check security.protocol)"
                if reason in ("WRONG_VERSION_NUMBER", "UNEXPECTED_EOF_WHILE_READING", "RECORD_LAYER_FAILURE")
                or "EOF" in str(e)
                else ""
            )
            raise NodeError(self.name, f"TLS handshake with {self.name} failed: {reason}{hint}", "tls") from None
        except (ConnectionError, OSError) as e:
            raise NodeError(
                self.name,
                f"TLS handshake with {self.name} failed: the connection was "
                f"closed ({e.strerror or type(e).__name__}); is the listener TLS? "
                "check security.protocol",
                "tls",
            ) from None

    def _negotiate_versions(self):
        api = messages.APIS[messages.API_VERSIONS]
        version = api.hi
        body = {"clientSoftwareName": CLIENT_SOFTWARE_NAME, "clientSoftwareVersion": _software_version()}
        for _ in range(3):
            payload = self._roundtrip_raw(api, version, body)
            try:
                _, resp = decode_response(api, version, payload)
            except DecodeError:
                # a server that does not know `version` answers in v0 form
                resp = None
            if resp is None or resp["errorCode"] == UNSUPPORTED_VERSION:
                try:
                    _, resp = decode_response(api, 0, payload)
                except DecodeError as e:
                    raise NodeError(
                        self.name,
                        f"{self.name} sent an ApiVersions answer that does not decode ({e}); is this a Kafka listener?",
                        "protocol",
                    ) from None
            code = resp["errorCode"]
            if code == 0:
                break
            if code == UNSUPPORTED_VERSION:
                theirs = next((k for k in resp["apiKeys"] if k["apiKey"] == messages.API_VERSIONS), None)
                nxt = min(api.hi, theirs["maxVersion"]) if theirs else 0
                if nxt >= version:
                    nxt = version - 1
                if nxt < 0:
                    break
                version = nxt
                continue
            raise NodeError(self.name, f"{self.name} answered ApiVersions with {error_name(code)}", "error")
        else:
            raise NodeError(self.name, f"{self.name} kept refusing our ApiVersions versions", "protocol")
        self.api_versions = {k["apiKey"]: (k["minVersion"], k["maxVersion"]) for k in resp["apiKeys"]}
        # the feature levels (ApiVersions v3+): what kafka-features describe prints
        self.supported_features = {
            f["name"]: (f["minVersion"], f["maxVersion"]) for f in resp.get("supportedFeatures") or ()
        }
        self.finalized_features = {f["name"]: f["maxVersionLevel"] for f in resp.get("finalizedFeatures") or ()}
        self.finalized_features_epoch = resp.get("finalizedFeaturesEpoch", -1)

    def _mechanism(self):
        """The SASL client of the configured mechanism; logging in (Kerberos,
        a token) happens here, before the first token is sent."""
        cfg = self.cfg
        try:
            if cfg.sasl_mechanism == "GSSAPI":
                from .security.kerberos import GssapiClient

                return GssapiClient(cfg, self.address.host)
            if cfg.sasl_mechanism == "OAUTHBEARER":
                from .security.oauth import OAuthBearerClient, token_for

                return OAuthBearerClient(token_for(cfg.oauth, self.deadline), cfg.oauth.extensions)
        except ClusterError as e:
            raise NodeError(self.name, f"{self.name}: {e}", "auth") from None
        from .security.sasl import client_mechanism

        return client_mechanism(cfg.sasl_mechanism, cfg.username, cfg.password)

    def _auth_hint(self, mech) -> str:
        m = self.cfg.sasl_mechanism
        if m == "OAUTHBEARER":
            err = getattr(mech, "server_error", None) or {}
            status = err.get("status") if isinstance(err, dict) else None
            how = {
                "unsecured": "the unsecured token (unsecuredLogin* in sasl.jaas.config)",
                "file": "the token in sasl.oauthbearer.token.endpoint.url",
            }.get(self.cfg.oauth.kind, "the token from sasl.oauthbearer.token.endpoint.url")
            return f" (the broker rejected {how}" + (f": {status}" if status else "") + ")"
        if m == "GSSAPI":
            return " (check the principal in sasl.jaas.config)"
        return " (check sasl.jaas.config username and password)"

    def _authenticate(self):
        from .security.sasl import SaslError

        cfg = self.cfg
        hv = self.version_for(messages.SASL_HANDSHAKE, lo=1)
        av = self.version_for(messages.SASL_AUTHENTICATE)
        if hv is None or av is None:
            raise NodeError(
                self.name,
                f"{self.name} does not offer SASL authentication (no SaslHandshake v1 / SaslAuthenticate)",
                "auth",
            )
        resp = self._request(messages.SASL_HANDSHAKE, hv, {"mechanism": cfg.sasl_mechanism})
        if resp["errorCode"] == UNSUPPORTED_SASL_MECHANISM:
            raise NodeError(
                self.name,
                f"SASL: {self.name} does not enable {cfg.sasl_mechanism} "
                f"(it offers {', '.join(resp['mechanisms']) or 'none'})",
                "auth",
            )
        if resp["errorCode"]:
            raise NodeError(
                self.name, f"SASL handshake with {self.name} failed: {error_name(resp['errorCode'])}", "auth"
            )
        mech = self._mechanism()
        try:
            token = mech.first()
            for _ in range(8):
                resp = self._request(messages.SASL_AUTHENTICATE, av, {"authBytes": token})
                if resp["errorCode"]:
                    msg = resp.get("errorMessage") or error_name(resp["errorCode"])
                    if resp["errorCode"] == SASL_AUTHENTICATION_FAILED:
                        msg = msg.rstrip(".") + self._auth_hint(mech)
                    raise NodeError(
                        self.name, f"SASL {cfg.sasl_mechanism} authentication to {self.name} failed: {msg}", "auth"
                    )
                if mech.done:
                    return
                token = mech.step(resp["authBytes"])
                if token is None:
                    return
        except SaslError as e:
            raise NodeError(
                self.name, f"SASL {cfg.sasl_mechanism} authentication to {self.name} failed: {e}", "auth"
            ) from None
        except NodeError:
            raise
        except ClusterError as e:  # Kerberos refused us mid-exchange
            raise NodeError(self.name, f"{self.name}: {e}", "auth") from None
        raise NodeError(self.name, f"SASL exchange with {self.name} did not finish", "auth")

    # -- requests ----------------------------------------------------------------
    def version_for(self, key: int, lo: int | None = None, hi: int | None = None) -> int | None:
        return messages.negotiate(key, self.api_versions.get(key), lo, hi)

    def supports(self, key: int) -> bool:
        return key in self.api_versions

    def request(self, key: int, body: dict, version: int | None = None, lo: int | None = None) -> tuple[int, dict]:
        """Send one request at `version` (default: the highest both support,
        at least `lo`); (version used, decoded response body)."""
        if version is None:
            version = self.version_for(key, lo=lo)
            if version is None:
                have = self.api_versions.get(key)
                api = messages.api_name(key)
                if have is None:
                    raise NodeError(self.name, f"{self.name} does not support {api} (API key {key})", "unsupported")
                want = f"v{lo}+" if lo else f"v{messages.APIS[key].lo}-{messages.APIS[key].hi}"
                raise NodeError(
                    self.name,
                    f"{self.name} supports {api} v{have[0]}-{have[1]} only; quorumctl needs {want}",
                    "unsupported",
                )
        return version, self._request(key, version, body)

    def _request(self, key: int, version: int, body: dict) -> dict:
        api = messages.APIS[key]
        payload = self._roundtrip_raw(api, version, body)
        try:
            _, resp = decode_response(api, version, payload)
        except DecodeError as e:
            raise NodeError(
                self.name, f"{self.name} sent {_a(api.name)} v{version} answer that does not decode: {e}", "protocol"
            ) from None
        return resp

    def _roundtrip_raw(self, api, version: int, body: dict) -> bytes:
        if self.sock is None:
            raise NodeError(self.name, f"{self.name}: connection is closed", "closed")
        self._corr = (self._corr + 1) & 0x7FFFFFFF
        corr = self._corr
        try:
            frame = encode_request(api, version, corr, self.cfg.client_id, body)
        except EncodeError as e:  # a bug or a bad value from the caller
            raise ClusterError(f"cannot encode {api.name} v{version}: {e}") from None
        timeout = self._budget(self.cfg.request_timeout_ms)
        what = f"{api.name}"
        try:
            end = time.monotonic() + timeout
            self.sock.settimeout(timeout)
            with _no_sigpipe():
                self.sock.sendall(frame)
            head = self._recv_exact(self.sock, 4, what, end, 0)
            (size,) = _SIZE.unpack(head)
            if head[:1] == b"\x15" and head[1:2] == b"\x03":
                raise NodeError(
                    self.name,
                    f"{self.name} answered {what} with a TLS alert: the listener "
                    "expects TLS (set security.protocol=SSL or SASL_SSL)",
                    "protocol",
                )
            if size < 4 or size > self.cfg.max_response_bytes:
                limit = self.cfg.max_response_bytes // (1024 * 1024)
                raise NodeError(
                    self.name,
                    f"{self.name} sent {_a(what)} response claiming {size} bytes "
                    f"(limit {limit} MiB, minimum 4): not a Kafka listener, or a "
                    "TLS/PLAINTEXT mismatch",
                    "protocol",
                )
            payload = self._recv_exact(self.sock, size, what, end, 4)
        except NodeError:
            self.close()
            raise
        except (socket.timeout, TimeoutError):
            self.close()
            raise NodeError(self.name, f"{self.name} did not answer {what} within {timeout:.1f} s", "timeout") from None
        except OSError as e:
            self.close()
            hint = ""
            if not self.api_versions and not self.cfg.uses_tls:
                hint = " (a TLS listener? check security.protocol)"
            raise NodeError(
                self.name,
                f"{self.name}: connection lost during {what}: {e.strerror or type(e).__name__}{hint}",
                "closed",
            ) from None
        (got_corr,) = _SIZE.unpack_from(payload, 0)
        if got_corr != corr:
            self.close()
            raise NodeError(
                self.name,
                f"{self.name} answered {what} with correlation id {got_corr}, expected {corr}: not a Kafka listener?",
                "protocol",
            )
        return payload

    def _recv_exact(self, sock: socket.socket, n: int, what: str, end: float, already: int) -> bytes:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            left = end - time.monotonic()
            if left <= 0:
                raise socket.timeout()
            sock.settimeout(left)
            k = sock.recv_into(view[got:], min(n - got, 1 << 20))
            if k == 0:
                if got == 0 and already == 0:
                    hint = ""
                    if not self.api_versions:
                        hint = " (a TLS listener? check security.protocol)" if not self.cfg.uses_tls else ""
                    elif not self.cfg.uses_sasl:
                        hint = " (does the listener require SASL? check security.protocol)"
                    raise NodeError(
                        self.name, f"{self.name} closed the connection without answering {what}{hint}", "closed"
                    )
                total = n + already
                raise NodeError(
                    self.name,
                    f"{self.name} closed the connection in the middle of the "
                    f"{what} response ({got + already} of {total} bytes)",
                    "closed",
                )
            got += k
        return bytes(buf)

    def close(self):
        s, self.sock = self.sock, None
        if s is not None:
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def connect(address: Address, cfg, deadline: float) -> Connection:
    return Connection(address, cfg, deadline).open()
