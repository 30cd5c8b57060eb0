"""A thin Kafka wire-protocol client for the KRaft quorum APIs, and the live
jobs built on it (describe, features describe, describe health, add/remove-
controller, whether a voter still answers). Messages are declared with schema/;
a server.properties or --command-config is read by config/; what the answers
look like on screen is render/'s; the simulated cluster that answers the tests
is testing/. Its modules:

messages        the message descriptions (quorumctl.schema) and the API table
wire            framing and request/response headers
connection      one node: TCP, TLS, ApiVersions, SASL, requests with timeouts; loads --command-config
tls, sasl       TLS contexts and SASL mechanisms for connection
kerrors         Kafka's error codes and the exception that carries one
client          bootstrap, active-controller discovery, retries (describe, features, registrations)
quorum          the describe model and Kafka's computed values
voters          add-controller / remove-controller (KIP-853)
health_probe    describe health: every controller probed on its own, in parallel, within one deadline
health_verdict  what a probe found, the verdict over the probes, --can-restart (Strimzi's rule), the exit status
health_watch    describe health --watch: the samples' history, stalled and flapping
liveness        is a voter really gone? (recover asks before it declares voters lost)
node_probe      probe: one node's own view and the leader's view of it; startup, ready, live
gates           wait: a condition on the quorum, sampled until it holds or the deadline
exporter        serve's sampler: the quorum sampled every interval, reduced to a snapshot of plain numbers
"""
