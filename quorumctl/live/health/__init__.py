"""describe health, live: every controller probed on its own within one deadline
(probe) and the partitions' state asked of a broker (partitions); the verdict
over what they found is the domain's (domain/health_verdict.py)."""
