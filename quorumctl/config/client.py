"""Client settings from a Kafka client properties file (`--command-config`).

Understood keys (Kafka's names and defaults unless noted):
  security.protocol                      PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
  sasl.mechanism                         PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512
  sasl.jaas.config                       `... required username="u" password="p";`
  ssl.truststore.type/location/password  JKS (Kafka's default), PKCS12 or PEM (JKS and PKCS12 told apart by content)
  ssl.truststore.certificates            inline PEM CA certificates
  ssl.keystore.type/location/password    JKS, PKCS12 or PEM client certificate + key (mutual TLS)
  ssl.keystore.certificate.chain         inline PEM chain, with ssl.keystore.key
  ssl.key.password                       password of the key (JKS: else ssl.keystore.password; PEM)
  ssl.endpoint.identification.algorithm  "https" (default) checks the host name; empty disables it
  request.timeout.ms                     per request (quorumctl default 10000; Kafka's 30000)
  socket.connection.setup.timeout.ms     per TCP connect (default 10000)
  default.api.timeout.ms                 whole operation, unless --timeout is given
  retry.backoff.ms / retry.backoff.max.ms  100 / 1000
  client.id                              default "quorumctl"
Other keys are ignored, as the Kafka admin client ignores keys it does not use.
Secrets are kept out of every message and repr.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import InputError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


@dataclass
class ClientConfig:
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    truststore_type: str | None = None
    truststore_location: str | None = None
    truststore_password: str | None = field(default=None, repr=False)
    truststore_certificates: str | None = None
    keystore_type: str | None = None
    keystore_location: str | None = None
    keystore_password: str | None = field(default=None, repr=False)
    keystore_chain: str | None = None
    keystore_key: str | None = field(default=None, repr=False)
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True
    request_timeout_ms: int = 10_000
    connect_timeout_ms: int = 10_000
    api_timeout_ms: int | None = None
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1000
    client_id: str = "quorumctl"
    max_response_bytes: int = MAX_RESPONSE_BYTES
    source: str = "defaults"
    _ssl_context: object = field(default=None, repr=False, compare=False)

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def _int(props: dict, key: str, default: int | None, source: str, minimum: int = 0) -> int | None:
    raw = props.get(key)
    if raw is None or raw.strip() == "":
        return default
    try:
        v = int(raw.strip())
    except ValueError:
        raise InputError(f"{source}: {key} must be an integer, not {raw!r}") from None
    if v < minimum:
        raise InputError(f"{source}: {key} must be at least {minimum}, not {v}")
    return v


def parse_jaas(text: str, source: str) -> dict[str, str]:
    """The options of a one-module JAAS entry:
    `<LoginModule class> <flag> name="value" name2=value2;`"""
    i, n = 0, len(text)
    tokens: list[str] = []
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "=;":
            tokens.append(c)
            i += 1
        elif c in "\"'":
            q = c
            j = i + 1
            buf = []
            while j < n and text[j] != q:
                if text[j] == "\\" and j + 1 < n:
                    j += 1
                buf.append(text[j])
                j += 1
            if j >= n:
                raise InputError(f"{source}: sasl.jaas.config has an unterminated quoted value")
            tokens.append("\x00" + "".join(buf))  # marks a quoted token
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "=;\"'":
                j += 1
            tokens.append(text[i:j])
            i = j
    if len(tokens) < 2 or tokens[1] not in ("required", "requisite", "sufficient", "optional"):
        raise InputError(f"{source}: sasl.jaas.config must look like "
                         "'<LoginModule> required username=\"...\" password=\"...\";'")
    opts: dict[str, str] = {}
    k = 2
    while k < len(tokens) and tokens[k] != ";":
        if k + 2 >= len(tokens) or tokens[k + 1] != "=":
            raise InputError(f"{source}: sasl.jaas.config: expected name=value after {tokens[k].lstrip(chr(0))!r}")
        opts[tokens[k].lstrip("\x00")] = tokens[k + 2].lstrip("\x00")
        k += 3
    return opts


def config_from_properties(props: dict[str, str], source: str) -> ClientConfig:
    cfg = ClientConfig(source=source)
    proto = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if proto not in PROTOCOLS:
        raise InputError(f"{source}: security.protocol {proto!r} is not one of {', '.join(PROTOCOLS)}")
    cfg.security_protocol = proto
    if cfg.uses_sasl:
        mech = props.get("sasl.mechanism", "GSSAPI").strip().upper()
        if mech not in MECHANISMS:
            raise InputError(f"{source}: sasl.mechanism {mech} is not supported by quorumctl "
                             f"(use {', '.join(MECHANISMS)})")
        cfg.sasl_mechanism = mech
        jaas = props.get("sasl.jaas.config")
        if not jaas:
            raise InputError(f"{source}: security.protocol {proto} needs sasl.jaas.config with username and password")
        opts = parse_jaas(jaas, source)
        if "username" not in opts or "password" not in opts:
            raise InputError(f"{source}: sasl.jaas.config must set both username and password")
        cfg.username, cfg.password = opts["username"], opts["password"]
    cfg.truststore_type = (props.get("ssl.truststore.type") or "").strip().upper() or None
    cfg.truststore_location = props.get("ssl.truststore.location") or None
    cfg.truststore_password = props.get("ssl.truststore.password") or None
    cfg.truststore_certificates = props.get("ssl.truststore.certificates") or None
    cfg.keystore_type = (props.get("ssl.keystore.type") or "").strip().upper() or None
    cfg.keystore_location = props.get("ssl.keystore.location") or None
    cfg.keystore_password = props.get("ssl.keystore.password") or None
    cfg.keystore_chain = props.get("ssl.keystore.certificate.chain") or None
    cfg.keystore_key = props.get("ssl.keystore.key") or None
    cfg.key_password = props.get("ssl.key.password") or None
    alg = props.get("ssl.endpoint.identification.algorithm")
    if alg is not None:
        alg = alg.strip().lower()
        if alg not in ("", "https"):
            raise InputError(f"{source}: ssl.endpoint.identification.algorithm must be 'https' or empty")
        cfg.check_hostname = alg == "https"
    cfg.request_timeout_ms = _int(props, "request.timeout.ms", cfg.request_timeout_ms, source, 1)
    cfg.connect_timeout_ms = _int(props, "socket.connection.setup.timeout.ms", cfg.connect_timeout_ms, source, 1)
    cfg.api_timeout_ms = _int(props, "default.api.timeout.ms", None, source, 1)
    cfg.retry_backoff_ms = _int(props, "retry.backoff.ms", cfg.retry_backoff_ms, source)
    cfg.retry_backoff_max_ms = _int(props, "retry.backoff.max.ms", cfg.retry_backoff_max_ms, source)
    cid = props.get("client.id")
    if cid:
        cfg.client_id = cid
    for key in ("truststore_location", "keystore_location"):
        path = getattr(cfg, key)
        if path and not os.path.isfile(path):
            raise InputError(f"{source}: ssl.{key.replace('_', '.')} {path} does not exist")
    return cfg
