"""Scaffolding for tests, benchmarks and `quorumctl demo`, kept out of the
production layers: a simulated KRaft quorum speaking the Kafka protocol (sim,
scenarios; TLS and SASL for it: certs, auth), the demo's scenario (demo), and
log dirs written with quorumctl's own writer (synth; the docs' example dirs:
examples). No command but `demo` uses it, and nothing in a production layer
imports it.

    from quorumctl.testing.sim import SimulatedCluster, replica
    from quorumctl.testing.scenarios import demo_cluster
"""
