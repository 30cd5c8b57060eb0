"""Reading the Kerberos and OAuth settings of a --command-config as Kafka
4.3's admin client reads them (config/client.py), the token a login gets
(wire/security/oauth.py) and GSSAPI's server host (wire/security/kerberos.py), without
a cluster; the live exchanges are tests/kafka/test_kafka_security.py's."""

from __future__ import annotations

import base64
import json
import time

import pytest

from quorumctl.config.client import config_from_properties
from quorumctl.errors import InputError

KRB = "com.sun.security.auth.module.Krb5LoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


def read(**props):
    return config_from_properties({k.replace("_", "."): v for k, v in props.items()}, "c.properties")


def refused(props: dict) -> str:
    with pytest.raises(InputError) as e:
        config_from_properties(props, "c.properties")
    return str(e.value)


def test_gssapi_is_the_default_mechanism(tmp_path):
    kt = tmp_path / "ops.keytab"
    kt.write_bytes(b"\x05\x02")
    cfg = config_from_properties(
        {
            "security.protocol": "SASL_SSL",
            "sasl.kerberos.service.name": "kafka",
            "sasl.jaas.config": f'{KRB} required useKeyTab=true keyTab="{kt}" principal="ops@EXAMPLE.COM";',
        },
        "c.properties",
    )
    assert cfg.sasl_mechanism == "GSSAPI"
    k = cfg.kerberos
    assert (k.service_name, k.use_keytab, k.keytab, k.principal, k.use_ticket_cache) == (
        "kafka",
        True,
        str(kt),
        "ops@EXAMPLE.COM",
        False,
    )


def test_kerberos_service_name_as_kafkas_kerberos_login():
    base = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"}
    # the JAAS serviceName alone
    cfg = config_from_properties(
        {**base, "sasl.jaas.config": f"{KRB} required useTicketCache=true serviceName=kafka;"}, "c"
    )
    assert cfg.kerberos.service_name == "kafka"
    assert refused({**base, "sasl.jaas.config": f"{KRB} required useTicketCache=true;"}) == (
        "c.properties: sasl.mechanism GSSAPI needs sasl.kerberos.service.name (the brokers' Kerberos service, "
        "often kafka): no serviceName in sasl.jaas.config either"
    )
    assert refused(
        {
            **base,
            "sasl.kerberos.service.name": "kafka",
            "sasl.jaas.config": f"{KRB} required useTicketCache=true serviceName=other;",
        }
    ) == (
        "c.properties: conflicting serviceName values in sasl.jaas.config (other) and "
        "sasl.kerberos.service.name (kafka)"
    )
    assert refused(
        {
            **base,
            "sasl.kerberos.service.name": "kafka",
            "sasl.jaas.config": f"{KRB} required useKeyTab=true keyTab=/nonexistent principal=p;",
        }
    ) == ("c.properties: sasl.jaas.config keyTab /nonexistent does not exist")
    assert "quorumctl cannot prompt" in refused(
        {**base, "sasl.kerberos.service.name": "kafka", "sasl.jaas.config": f"{KRB} required;"}
    )
    assert refused(
        {
            **base,
            "sasl.kerberos.service.name": "kafka",
            "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="u" password="p";',
        }
    ).startswith(f"c.properties: sasl.mechanism GSSAPI needs sasl.jaas.config with {KRB}")


def oauth(**extra):
    props = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class": HANDLER,
        "sasl.oauthbearer.token.endpoint.url": "https://idp.example.com/token",
        "sasl.jaas.config": f'{OAUTH_MODULE} required clientId="jaas-id" clientSecret="jaas-secret" '
        'scope="jaas-scope" extension_logicalCluster="lkc-1";',
    }
    props.update(extra)
    return config_from_properties(props, "c.properties")


def test_oauth_settings_come_before_jaas_options():
    o = oauth().oauth
    assert (o.kind, o.client_id, o.client_secret, o.scope, o.client_secret_setting, o.extensions) == (
        "client_credentials",
        "jaas-id",
        "jaas-secret",
        "jaas-scope",
        "sasl.jaas.config clientSecret",
        {"logicalCluster": "lkc-1"},
    )
    o = oauth(
        **{
            "sasl.oauthbearer.client.credentials.client.id": "cfg-id",
            "sasl.oauthbearer.client.credentials.client.secret": "cfg-secret",
            "sasl.oauthbearer.scope": "cfg-scope",
        }
    ).oauth
    assert (o.client_id, o.client_secret, o.scope, o.client_secret_setting) == (
        "cfg-id",
        "cfg-secret",
        "cfg-scope",
        "sasl.oauthbearer.client.credentials.client.secret",
    )
    # defaults as Kafka's SaslConfigs
    assert (
        o.retry_backoff_ms,
        o.retry_backoff_max_ms,
        o.refresh_window_factor,
        o.header_urlencode,
        o.sub_claim_name,
        o.scope_claim_name,
    ) == (100, 10_000, 0.8, False, "sub", "scope")
    # secrets stay out of the repr
    text = repr(oauth())
    assert "jaas-secret" not in text and "lkc-1" not in text


def test_oauth_retrievers_and_the_unsecured_default():
    assert oauth(**{"sasl.oauthbearer.token.endpoint.url": "file:///run/token.jwt"}).oauth.kind == "file"
    assert (
        oauth(
            **{
                "sasl.oauthbearer.jwt.retriever.class": "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever"
            }
        ).oauth.kind
        == "client_credentials"
    )
    assert "not supported by quorumctl" in refused(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.login.callback.handler.class": HANDLER,
            "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
            "sasl.oauthbearer.jwt.retriever.class": "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever",
            "sasl.jaas.config": f"{OAUTH_MODULE} required clientId=a clientSecret=b;",
        }
    )
    # no login callback handler: Kafka's LoginManager default, the unsecured login
    cfg = config_from_properties(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="admin";',
        },
        "c",
    )
    assert cfg.oauth.kind == "unsecured"
    msg = refused(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f"{OAUTH_MODULE} required ;",
        }
    )
    assert msg.startswith("c.properties: sasl.jaas.config (OAuthBearerLoginModule) gives no token")
    msg = refused(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.login.callback.handler.class": HANDLER,
            "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
            "sasl.jaas.config": f"{OAUTH_MODULE} required clientId=a;",
        }
    )
    assert msg == (
        "c.properties: the OAUTHBEARER client credentials login needs "
        "sasl.oauthbearer.client.credentials.client.secret (or clientSecret in sasl.jaas.config)"
    )


def _claims(token: str) -> dict:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_unsecured_token_as_kafkas_login_callback_handler():
    from quorumctl.wire.security.oauth import token_for

    cfg = config_from_properties(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="admin" '
            'unsecuredLoginListClaim_scope=",a,b" '
            'unsecuredLoginNumberClaim_n="2" '
            'unsecuredLoginLifetimeSeconds="60";',
        },
        "c",
    )
    t0 = time.time()
    token = token_for(cfg.oauth, time.monotonic() + 5)
    header, _, sig = token.split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))) == {"alg": "none"} and sig == ""
    c = _claims(token)
    assert (c["sub"], c["scope"], c["n"]) == ("admin", ["a", "b"], 2.0)
    assert t0 - 1 <= c["iat"] <= time.time() and abs(c["exp"] - c["iat"] - 60) < 1e-6
    # whole milliseconds, never ahead of the broker's own clock read (Kafka's unsecured
    # validator refuses 1000 * iat > its currentTimeMillis with no skew allowed)
    assert abs(c["iat"] * 1000 - round(c["iat"] * 1000)) < 1e-3 and c["iat"] * 1000 < int(time.time() * 1000)
    assert token_for(cfg.oauth, time.monotonic() + 5) == token  # cached within its refresh window


def test_token_endpoint_refusal_and_renewal():
    """Against the test OIDC provider: the request Kafka's ClientSecretRequestFormatter
    sends, a 401 named by its setting (never the secret), a token renewed past
    80 % of its life."""
    pytest.importorskip("cryptography")
    from quorumctl.wire.security.oauth import TokenError, token_for
    from oidc import OidcServer

    srv = OidcServer({"ops": "pä55:wörd"}, lifetime_s=2).start()
    try:

        def cfg(secret):
            return config_from_properties(
                {
                    "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "OAUTHBEARER",
                    "sasl.login.callback.handler.class": HANDLER,
                    "sasl.oauthbearer.token.endpoint.url": srv.token_url,
                    "sasl.oauthbearer.client.credentials.client.id": "ops",
                    "sasl.oauthbearer.client.credentials.client.secret": secret,
                    "sasl.jaas.config": f"{OAUTH_MODULE} required ;",
                },
                "c",
            ).oauth

        good = cfg("pä55:wörd")
        t1 = token_for(good, time.monotonic() + 5)
        assert _claims(t1)["sub"] == "ops" and len(srv.issued) == 1
        assert token_for(good, time.monotonic() + 5) == t1
        time.sleep(1.7)  # past 0.8 of a 2 s life
        t2 = token_for(good, time.monotonic() + 5)
        assert t2 != t1 and len(srv.issued) == 2
        with pytest.raises(TokenError) as e:
            token_for(cfg("wrong-secret-x"), time.monotonic() + 5)
        assert str(e.value) == (
            f"token endpoint {srv.token_url} refused client 'ops' (HTTP 401, invalid_client: "
            "Invalid client credentials): check sasl.oauthbearer.client.credentials.client.secret "
            "and the client id"
        )
        assert srv.refused == 1
    finally:
        srv.stop()


def test_kerberos_server_host_is_javas_get_host_name():
    from quorumctl.wire.security.kerberos import server_host
    import socket

    assert server_host("kafka-1.example.com") == "kafka-1.example.com"  # a name stays as given
    try:
        expected = socket.gethostbyaddr("127.0.0.1")[0]
    except OSError:
        expected = "127.0.0.1"
    assert server_host("127.0.0.1") == expected  # an IP: its reverse name


def test_an_expired_token_from_a_file_is_one_refusal(tmp_path):
    """FileJwtRetriever's token, read as ClientJwtValidator reads it: an expired
    one is refused before it is sent (exit 3 from a command), naming the file."""
    from quorumctl.wire.security.oauth import TokenError, token_for

    def jwt(claims: dict) -> str:
        enc = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()  # noqa: E731
        return f"{enc({'alg': 'RS256'})}.{enc(claims)}.c2ln"

    f = tmp_path / "token.jwt"
    cfg = config_from_properties(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.login.callback.handler.class": HANDLER,
            "sasl.oauthbearer.token.endpoint.url": f"file://{f}",
            "sasl.jaas.config": f"{OAUTH_MODULE} required ;",
        },
        "c",
    ).oauth
    f.write_text(jwt({"sub": "ops", "iat": 1000, "exp": 2000}) + "\n")
    with pytest.raises(TokenError) as e:
        token_for(cfg, time.monotonic() + 5)
    assert str(e.value) == (
        f"the token from sasl.oauthbearer.token.endpoint.url file://{f}: the token has already expired (exp 2000)"
    )
    f.write_text(jwt({"iat": 1000, "exp": time.time() + 600}))
    with pytest.raises(TokenError) as e:
        token_for(cfg, time.monotonic() + 5)
    assert str(e.value) == (
        f"the token from sasl.oauthbearer.token.endpoint.url file://{f}: the token has no "
        "sub claim (sasl.oauthbearer.sub.claim.name)"
    )
    good = jwt({"sub": "ops", "iat": 1000, "exp": time.time() + 600})
    f.write_text(good + "\n")
    assert token_for(cfg, time.monotonic() + 5) == good
