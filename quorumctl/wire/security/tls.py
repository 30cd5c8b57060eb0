"""TLS client contexts from Kafka-style ssl.* settings (stdlib `ssl`).

Certificates are always verified (Kafka has no "trust all" switch either);
the host name is checked unless ssl.endpoint.identification.algorithm is
empty. Trust comes from ssl.truststore.* (PEM file, inline PEM, JKS or
PKCS12), or the system's CA store when no truststore is given. A client
certificate (mutual TLS) comes from ssl.keystore.* (PEM file with key and
chain, inline PEM, JKS or PKCS12; a JKS key's password is ssl.key.password,
else ssl.keystore.password, as in Kafka's DefaultSslEngineFactory). JKS is
read by `jks` (our reader), PKCS12 by `cryptography`, imported only then.
"""

from __future__ import annotations

import os
import ssl
import tempfile

from ...errors import InputError

_JKS_MAGIC = b"\xfe\xed\xfe\xed"


def _store_kind(declared: str | None, data: bytes, what: str, path: str) -> str:
    """JKS, PEM or PKCS12. JKS and PKCS12 are told apart by content, as Java
    9+ does (keystore.type.compat): keytool writes PKCS12 files that Kafka
    reads as its default type 'JKS', and the other way round."""
    if declared in (None, "JKS", "PKCS12", "PEM"):
        if data.startswith(_JKS_MAGIC):
            if declared == "PEM":
                raise InputError(f"{what} {path} is a JKS store, not PEM: set its type to JKS")
            return "JKS"
        if data.startswith(b"\xce\xce\xce\xce"):
            raise InputError(
                f"{what} {path} is a JCEKS store, which quorumctl cannot read; convert it "
                "with keytool -importkeystore -deststoretype PKCS12"
            )
        if b"-----BEGIN" in data[:4096]:
            return "PEM"
        if declared == "PEM":
            raise InputError(f"{what} {path} is not PEM (no -----BEGIN line)")
        return "PKCS12"
    raise InputError(f"{what} type {declared} is not supported (use JKS, PKCS12 or PEM)")


def _jks(data: bytes, password: str | None, what: str, path: str):
    from .jks import JksError, read_jks

    try:
        return read_jks(data, password)
    except JksError as e:
        pw = what.rsplit(" ", 1)[-1].replace(".location", ".password")
        hint = f" (check {pw})" if e.wrong_password else ""
        raise InputError(f"cannot open {what} {path} as JKS: {e}{hint}") from None


def _jks_key_pem(store, key_password: str | None, what: str, path: str, setting: str) -> tuple[str, str]:
    """(chain PEM, unencrypted PKCS8 key PEM) of a JKS keystore's one key entry."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, load_der_private_key
    from .jks import JksError, decrypt_key

    if not store.keys:
        raise InputError(f"{what} {path} has no private key entry (it holds only trusted certificates)")
    entry = store.keys[0]
    if key_password is None:
        raise InputError(f"{what} {path}: a JKS private key needs {setting}")
    try:
        der = decrypt_key(entry, key_password)
    except JksError as e:
        raise InputError(f"cannot open {what} {path}: {e} (check {setting})") from None
    try:
        key = load_der_private_key(der, None)
        chain = [x509.load_der_x509_certificate(c) for c in entry.chain]
    except ValueError as e:
        raise InputError(f"cannot open {what} {path}: key {entry.alias!r} does not decode: {e}") from None
    key_pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
    return "".join(_pem_of(c) for c in chain), key_pem


def _needs_cryptography(kind: str, what: str, path: str) -> None:
    """JKS and PKCS12 stores are read with `cryptography`, which the standalone
    executable leaves out (tools/build_standalone.py): one line, and what works instead."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise InputError(
            f"{what} {path} is {kind}, which needs the 'cryptography' package; the standalone executable "
            f"leaves it out: give the store as PEM (ssl.*.type=PEM; docs/standalone.md)"
        ) from None


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise InputError(f"cannot read {what} {path}: {e.strerror or e}") from None


def _pkcs12(data: bytes, password: str | None, what: str, path: str):
    try:
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:  # pragma: no cover - cryptography is a dependency
        raise InputError(f"{what} {path} is PKCS12, which needs the 'cryptography' package") from None
    pw = password.encode() if password else None
    try:
        return pkcs12.load_pkcs12(data, pw)
    except (ValueError, TypeError) as e:
        raise InputError(f"cannot open {what} {path} as PKCS12 (wrong password?): {e}") from None


def _pem_of(cert) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding

    return cert.public_bytes(Encoding.PEM).decode("ascii")


def _load_chain_from_memory(ctx: ssl.SSLContext, chain_pem: str, key_pem: str, password: str | None):
    # load_cert_chain only reads files: use a private temporary directory and
    # remove it at once (the key never lives longer than this call on disk).
    with tempfile.TemporaryDirectory(prefix="quorumctl-tls-") as d:
        cert_path = os.path.join(d, "chain.pem")
        key_path = os.path.join(d, "key.pem")
        for p, text in ((cert_path, chain_pem), (key_path, key_pem)):
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        ctx.load_cert_chain(cert_path, key_path, password=password)


def context_for(cfg) -> ssl.SSLContext:
    """The client SSLContext of a ClientConfig, built once and kept on it."""
    if cfg._ssl_context is None:
        cfg._ssl_context = client_context(cfg)
    return cfg._ssl_context


def client_context(cfg) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = cfg.check_hostname
    ctx.verify_mode = ssl.CERT_REQUIRED
    src = cfg.source
    # -- trust
    try:
        if cfg.truststore_certificates:
            ctx.load_verify_locations(cadata=cfg.truststore_certificates)
        elif cfg.truststore_location:
            what = f"{src}: ssl.truststore.location"
            data = _read(cfg.truststore_location, what)
            kind = _store_kind(cfg.truststore_type, data, what, cfg.truststore_location)
            if kind != "PEM":
                _needs_cryptography(kind, what, cfg.truststore_location)
            if kind == "PEM":
                ctx.load_verify_locations(cadata=data.decode("ascii", "replace"))
            elif kind == "JKS":
                from cryptography import x509

                store = _jks(data, cfg.truststore_password, what, cfg.truststore_location)
                # Java's TrustManagerFactory trusts the trusted-certificate entries
                # and, of each key entry, its own certificate
                ders = store.certificates + [k.chain[0] for k in store.keys if k.chain]
                if not ders:
                    raise InputError(f"{what} {cfg.truststore_location} holds no certificates")
                ctx.load_verify_locations(cadata="".join(_pem_of(x509.load_der_x509_certificate(d)) for d in ders))
            else:
                p12 = _pkcs12(data, cfg.truststore_password, what, cfg.truststore_location)
                certs = [c.certificate for c in p12.additional_certs]
                if p12.cert is not None:
                    certs.append(p12.cert.certificate)
                if not certs:
                    raise InputError(f"{what} {cfg.truststore_location} holds no certificates")
                ctx.load_verify_locations(cadata="".join(_pem_of(c) for c in certs))
        else:
            ctx.load_default_certs()
    except ssl.SSLError as e:
        raise InputError(f"{src}: cannot load the TLS truststore: {e.reason or e}") from None
    # -- client certificate (mutual TLS)
    try:
        if cfg.keystore_chain or cfg.keystore_key:
            if not (cfg.keystore_chain and cfg.keystore_key):
                raise InputError(f"{src}: ssl.keystore.certificate.chain and ssl.keystore.key go together")
            _load_chain_from_memory(ctx, cfg.keystore_chain, cfg.keystore_key, cfg.key_password)
        elif cfg.keystore_location:
            what = f"{src}: ssl.keystore.location"
            data = _read(cfg.keystore_location, what)
            kind = _store_kind(cfg.keystore_type, data, what, cfg.keystore_location)
            if kind != "PEM":
                _needs_cryptography(kind, what, cfg.keystore_location)
            if kind == "PEM":
                ctx.load_cert_chain(cfg.keystore_location, password=cfg.key_password or cfg.keystore_password)
            elif kind == "JKS":
                store = _jks(data, cfg.keystore_password, what, cfg.keystore_location)
                setting = "ssl.key.password" if cfg.key_password is not None else "ssl.keystore.password"
                chain, key_pem = _jks_key_pem(
                    store,
                    cfg.key_password if cfg.key_password is not None else cfg.keystore_password,
                    what,
                    cfg.keystore_location,
                    setting,
                )
                _load_chain_from_memory(ctx, chain, key_pem, None)
            else:
                from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

                p12 = _pkcs12(data, cfg.keystore_password, what, cfg.keystore_location)
                if p12.key is None or p12.cert is None:
                    raise InputError(f"{what} {cfg.keystore_location} has no private key with a certificate")
                key_pem = p12.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
                chain = _pem_of(p12.cert.certificate) + "".join(_pem_of(c.certificate) for c in p12.additional_certs)
                _load_chain_from_memory(ctx, chain, key_pem, None)
    except ssl.SSLError as e:
        raise InputError(f"{src}: cannot load the TLS keystore (wrong ssl.key.password?): {e.reason or e}") from None
    return ctx
