"""A simulated KRaft quorum speaking the Kafka protocol (for tests, the
benchmark and `quorumctl demo`, whose scenario is `quorumctl.testing.demo`):
see `quorumctl.testing.sim`.

    from quorumctl.testing.sim import SimulatedCluster, replica
    from quorumctl.testing.scenarios import demo_cluster
"""
