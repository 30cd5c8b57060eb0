"""Raft's logic, offline, over the files of one or several replicas of the
metadata log: epoch histories and the Fetch divergence exchange (epochs), one
replica as Kafka loads it and the comparison of several (replica), which
entries are provably committed (committed) and the log matching property
(logmatch). Nothing here writes or speaks the wire.
"""
