"""Scaffolding for tests, benchmarks and `quorumctl demo`, kept out of the
production layers: a simulated KRaft quorum speaking the Kafka protocol (sim,
scenarios; its SASL server side: auth), the demo's scenario (demo), and
log dirs written with quorumctl's own writer (synth; the docs' example dirs:
examples). No command but `demo` uses it, and nothing in a production layer
imports it. Servers only the tests need (a test CA, a KDC, an OIDC provider)
are in tests/support/, outside the package.

    from quorumctl.testing.sim import SimulatedCluster, replica
    from quorumctl.testing.scenarios import demo_cluster
"""
