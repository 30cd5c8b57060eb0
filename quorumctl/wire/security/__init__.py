"""TLS and SASL for wire/connection: TLS contexts from a client configuration (tls,
with jks, our reader of Java KeyStores), SASL PLAIN and SCRAM (sasl), OAUTHBEARER
tokens from an OIDC token endpoint (oauth) and GSSAPI through python-gssapi
(kerberos); the last two are imported only when a configuration asks for them."""
