"""quorumctl: an operator toolkit for Apache Kafka's KRaft metadata quorum."""

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it)
