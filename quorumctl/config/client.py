"""Client settings from a Kafka client properties file (`--command-config`).

Understood keys (Kafka's names and defaults unless noted):
  security.protocol                      PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
  sasl.mechanism                         GSSAPI (Kafka's default) | PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 | OAUTHBEARER
  sasl.jaas.config                       PLAIN/SCRAM: `... required username="u" password="p";`
                                         GSSAPI: Krb5LoginModule (useKeyTab, keyTab, principal,
                                         useTicketCache, ticketCache, serviceName)
                                         OAUTHBEARER: OAuthBearerLoginModule (clientId, clientSecret,
                                         scope, extension_*; unsecuredLogin* for the unsecured form)
  sasl.kerberos.service.name             the broker's Kerberos service (or JAAS serviceName; no default)
  sasl.login.callback.handler.class      OAuthBearerLoginCallbackHandler: KIP-768 token endpoint;
                                         unset: the unsecured OAUTHBEARER login (as Kafka)
  sasl.oauthbearer.token.endpoint.url    http(s):// (client credentials) or file:// (a token file)
  sasl.oauthbearer.jwt.retriever.class   Default-, ClientCredentials- or FileJwtRetriever
  sasl.oauthbearer.client.credentials.client.id/.client.secret, sasl.oauthbearer.scope
                                         (before the JAAS clientId/clientSecret/scope, as Kafka 4.3)
  sasl.oauthbearer.header.urlencode      false
  sasl.oauthbearer.sub.claim.name / scope.claim.name   sub / scope
  sasl.login.connect.timeout.ms / read.timeout.ms      token endpoint timeouts (default 10000)
  sasl.login.retry.backoff.ms / .max.ms                100 / 10000
  sasl.login.refresh.window.factor       0.8: a cached token is renewed past this share of its life
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
from typing import overload

from ..errors import InputError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
OAUTH_LOGIN_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
OAUTH_RETRIEVERS = {
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever": "default",
    "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever": "client_credentials",
    "org.apache.kafka.common.security.oauthbearer.FileJwtRetriever": "file",
}
UNSECURED_LOGIN_HANDLER = (
    "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"
)
KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


@dataclass
class KerberosSettings:
    """GSSAPI: who we are (a keytab and principal, or a ticket cache) and
    the broker's service name, from Krb5LoginModule's options."""

    service_name: str
    use_keytab: bool = False
    keytab: str | None = None
    principal: str | None = None
    use_ticket_cache: bool = False
    ticket_cache: str | None = None


@dataclass
class OAuthSettings:
    """OAUTHBEARER: how the token is had. `kind` is "client_credentials"
    (KIP-768: POST to the token endpoint), "file" (a token read from a file)
    or "unsecured" (an unsigned JWT made here, OAuthBearerUnsecuredLoginCallbackHandler)."""

    kind: str
    token_endpoint_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_secret_setting: str = "sasl.oauthbearer.client.credentials.client.secret"
    scope: str | None = None
    header_urlencode: bool = False
    connect_timeout_ms: int | None = None
    read_timeout_ms: int | None = None
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 10_000
    refresh_window_factor: float = 0.8
    sub_claim_name: str = "sub"
    scope_claim_name: str = "scope"
    extensions: dict = field(default_factory=dict, repr=False)
    unsecured_options: dict = field(default_factory=dict, repr=False)


@dataclass
class ClientConfig:
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    kerberos: KerberosSettings | None = None
    oauth: OAuthSettings | None = None
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


@overload
def _int(props: dict, key: str, default: int, source: str, minimum: int = 0) -> int: ...
@overload
def _int(props: dict, key: str, default: None, source: str, minimum: int = 0) -> int | None: ...
def _int(props: dict, key: str, default: int | None, source: str, minimum: int = 0) -> int | None:
    """An integer setting of at least `minimum`; `default` when it is absent or empty."""
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
    return parse_jaas_entry(text, source)[1]


def parse_jaas_entry(text: str, source: str) -> tuple[str, dict[str, str]]:
    """(login module class, options) of a one-module JAAS entry."""
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
        raise InputError(
            f'{source}: sasl.jaas.config must look like \'<LoginModule> required username="..." password="...";\''
        )
    opts: dict[str, str] = {}
    k = 2
    while k < len(tokens) and tokens[k] != ";":
        if k + 2 >= len(tokens) or tokens[k + 1] != "=":
            raise InputError(f"{source}: sasl.jaas.config: expected name=value after {tokens[k].lstrip(chr(0))!r}")
        opts[tokens[k].lstrip("\x00")] = tokens[k + 2].lstrip("\x00")
        k += 3
    return tokens[0].lstrip("\x00"), opts


def config_from_properties(props: dict[str, str], source: str) -> ClientConfig:
    cfg = ClientConfig(source=source)
    proto = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if proto not in PROTOCOLS:
        raise InputError(f"{source}: security.protocol {proto!r} is not one of {', '.join(PROTOCOLS)}")
    cfg.security_protocol = proto
    if cfg.uses_sasl:
        mech = props.get("sasl.mechanism", "GSSAPI").strip().upper()
        if mech not in MECHANISMS:
            raise InputError(
                f"{source}: sasl.mechanism {mech} is not supported by quorumctl (use {', '.join(MECHANISMS)})"
            )
        cfg.sasl_mechanism = mech
        jaas = props.get("sasl.jaas.config")
        if not jaas:
            need = {"GSSAPI": "Krb5LoginModule", "OAUTHBEARER": "OAuthBearerLoginModule"}.get(
                mech, "username and password"
            )
            raise InputError(
                f"{source}: security.protocol {proto} with sasl.mechanism {mech} needs sasl.jaas.config ({need})"
            )
        module, opts = parse_jaas_entry(jaas, source)
        if mech == "GSSAPI":
            cfg.kerberos = _kerberos(props, module, opts, source)
        elif mech == "OAUTHBEARER":
            cfg.oauth = _oauth(props, module, opts, source)
        else:
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


def _bool(opts: dict, key: str) -> bool:
    return opts.get(key, "false").strip().lower() == "true"


def _kerberos(props: dict, module: str, opts: dict, source: str) -> KerberosSettings:
    """Krb5LoginModule's options and the service name, as Kafka's KerberosLogin
    reads them: JAAS serviceName, else sasl.kerberos.service.name (both: equal)."""
    if module != KRB5_MODULE:
        raise InputError(f"{source}: sasl.mechanism GSSAPI needs sasl.jaas.config with {KRB5_MODULE}, not {module}")
    jaas_name = opts.get("serviceName")
    conf_name = props.get("sasl.kerberos.service.name")
    if jaas_name is not None and conf_name is not None and jaas_name != conf_name:
        raise InputError(
            f"{source}: conflicting serviceName values in sasl.jaas.config ({jaas_name}) and "
            f"sasl.kerberos.service.name ({conf_name})"
        )
    service = jaas_name if jaas_name is not None else conf_name
    if not service:
        raise InputError(
            f"{source}: sasl.mechanism GSSAPI needs sasl.kerberos.service.name (the brokers' "
            "Kerberos service, often kafka): no serviceName in sasl.jaas.config either"
        )
    k = KerberosSettings(
        service_name=service.strip(),
        use_keytab=_bool(opts, "useKeyTab"),
        keytab=opts.get("keyTab"),
        principal=opts.get("principal"),
        use_ticket_cache=_bool(opts, "useTicketCache"),
        ticket_cache=opts.get("ticketCache"),
    )
    if k.use_keytab:
        if not k.keytab:
            raise InputError(f"{source}: sasl.jaas.config has useKeyTab=true but no keyTab")
        if not os.path.isfile(k.keytab):
            raise InputError(f"{source}: sasl.jaas.config keyTab {k.keytab} does not exist")
        if not k.principal:
            raise InputError(f"{source}: sasl.jaas.config has useKeyTab=true but no principal")
    if not (k.use_keytab or k.use_ticket_cache):
        raise InputError(
            f"{source}: sasl.jaas.config (Krb5LoginModule) must set useKeyTab=true or "
            "useTicketCache=true: quorumctl cannot prompt for a Kerberos password"
        )
    return k


def _float(props: dict, key: str, default: float, source: str, lo: float, hi: float) -> float:
    raw = props.get(key)
    if raw is None or not raw.strip():
        return default
    try:
        v = float(raw)
    except ValueError:
        raise InputError(f"{source}: {key} must be a number, not {raw!r}") from None
    if not lo <= v <= hi:
        raise InputError(f"{source}: {key} must be between {lo} and {hi}, not {v}")
    return v


def _oauth(props: dict, module: str, opts: dict, source: str) -> OAuthSettings:
    """The OAUTHBEARER login as Kafka 4.3 chooses it: no
    sasl.login.callback.handler.class means the unsecured login
    (LoginManager's default for OAUTHBEARER); OAuthBearerLoginCallbackHandler
    means sasl.oauthbearer.jwt.retriever.class (DefaultJwtRetriever: file://
    endpoint URLs read a file, others are KIP-768 client credentials). The
    client id, secret and scope come from sasl.oauthbearer.* first, then the
    JAAS options (ConfigOrJaas)."""
    if not module.endswith(".OAuthBearerLoginModule"):
        raise InputError(
            f"{source}: sasl.mechanism OAUTHBEARER needs sasl.jaas.config with "
            f"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule, not {module}"
        )
    handler = (props.get("sasl.login.callback.handler.class") or "").strip()
    extensions = {k[len("extension_") :]: v for k, v in opts.items() if k.startswith("extension_")}
    if not handler or handler == UNSECURED_LOGIN_HANDLER:
        if not opts or all(k.startswith("unsecuredLoginExtension_") for k in opts):
            raise InputError(
                f"{source}: sasl.jaas.config (OAuthBearerLoginModule) gives no token: set "
                f"sasl.login.callback.handler.class={OAUTH_LOGIN_HANDLER} and "
                "sasl.oauthbearer.token.endpoint.url, or unsecuredLoginStringClaim_sub for "
                "the unsecured form"
            )
        ext = {
            k[len("unsecuredLoginExtension_") :]: v for k, v in opts.items() if k.startswith("unsecuredLoginExtension_")
        }
        return OAuthSettings(kind="unsecured", unsecured_options=dict(opts), extensions=ext)
    if handler != OAUTH_LOGIN_HANDLER:
        raise InputError(
            f"{source}: sasl.login.callback.handler.class {handler} is not supported by quorumctl "
            f"(use {OAUTH_LOGIN_HANDLER})"
        )
    retriever = (
        props.get("sasl.oauthbearer.jwt.retriever.class") or ""
    ).strip() or "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever"
    if retriever not in OAUTH_RETRIEVERS:
        raise InputError(
            f"{source}: sasl.oauthbearer.jwt.retriever.class {retriever} is not supported by "
            f"quorumctl (use one of {', '.join(OAUTH_RETRIEVERS)})"
        )
    url = (props.get("sasl.oauthbearer.token.endpoint.url") or "").strip()
    if not url:
        raise InputError(f"{source}: the OAUTHBEARER login needs sasl.oauthbearer.token.endpoint.url")
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in ("http", "https", "file"):
        raise InputError(f"{source}: sasl.oauthbearer.token.endpoint.url {url} must be an http, https or file URL")
    kind = OAUTH_RETRIEVERS[retriever]
    if kind == "default":
        kind = "file" if scheme == "file" else "client_credentials"
    if kind == "file" and scheme != "file":
        raise InputError(f"{source}: FileJwtRetriever needs a file:// sasl.oauthbearer.token.endpoint.url")
    if kind == "client_credentials" and scheme == "file":
        raise InputError(
            f"{source}: ClientCredentialsJwtRetriever needs an http(s):// sasl.oauthbearer.token.endpoint.url"
        )
    o = OAuthSettings(kind=kind, token_endpoint_url=url, extensions=extensions)
    o.sub_claim_name = (props.get("sasl.oauthbearer.sub.claim.name") or "sub").strip()
    o.scope_claim_name = (props.get("sasl.oauthbearer.scope.claim.name") or "scope").strip()
    o.connect_timeout_ms = _int(props, "sasl.login.connect.timeout.ms", None, source, 1)
    o.read_timeout_ms = _int(props, "sasl.login.read.timeout.ms", None, source, 1)
    o.retry_backoff_ms = _int(props, "sasl.login.retry.backoff.ms", 100, source)
    o.retry_backoff_max_ms = _int(props, "sasl.login.retry.backoff.max.ms", 10_000, source)
    o.refresh_window_factor = _float(props, "sasl.login.refresh.window.factor", 0.8, source, 0.5, 1.0)
    if kind == "file":
        return o
    if props.get("sasl.oauthbearer.assertion.file") or props.get("sasl.oauthbearer.assertion.claim.iss"):
        raise InputError(
            f"{source}: client assertions (sasl.oauthbearer.assertion.*) are not supported by "
            "quorumctl; use a client secret"
        )

    def config_or_jaas(config_name: str, jaas_name: str) -> tuple[str | None, str]:
        if config_name in props:
            return props[config_name], config_name
        if jaas_name in opts:
            return opts[jaas_name], f"sasl.jaas.config {jaas_name}"
        return None, config_name

    cid, cid_setting = config_or_jaas("sasl.oauthbearer.client.credentials.client.id", "clientId")
    secret, o.client_secret_setting = config_or_jaas(
        "sasl.oauthbearer.client.credentials.client.secret", "clientSecret"
    )
    scope, _ = config_or_jaas("sasl.oauthbearer.scope", "scope")
    if cid is None or not cid.strip():
        raise InputError(
            f"{source}: the OAUTHBEARER client credentials login needs {cid_setting} (or clientId in sasl.jaas.config)"
        )
    if secret is None or not secret.strip():
        raise InputError(
            f"{source}: the OAUTHBEARER client credentials login needs "
            f"{o.client_secret_setting} (or clientSecret in sasl.jaas.config)"
        )
    o.client_id, o.client_secret = cid.strip(), secret.strip()
    o.scope = scope.strip() if scope and scope.strip() else None
    o.header_urlencode = (props.get("sasl.oauthbearer.header.urlencode") or "false").strip().lower() == "true"
    return o
