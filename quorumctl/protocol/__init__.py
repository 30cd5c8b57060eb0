"""A thin Kafka wire-protocol client for the KRaft quorum APIs.

messages    the message descriptions (quorumctl.schema) and the API table
wire        framing and request/response headers
connection  one node: TCP, TLS, ApiVersions, SASL, requests with timeouts
client      bootstrap, active-controller discovery, retries (describe, add/remove voter)
quorum      the describe model and Kafka's computed values
health      parallel per-controller probes and the health verdict
config      --command-config (Kafka client properties), tls, sasl, properties
"""
