"""The jobs that judge or change a log dir: verify, format (formatter, as
kafka-storage's Formatter), truncate and recover, with fsutil's log-dir lock
and atomic exchange that every writer shares and the backup runs (backups)
through which truncate and recover change a partition directory. A job plans from
logdir/ and raft/, refuses what is unsafe, writes only with --apply; its text
is rendered by quorumctl.render, its options parsed by quorumctl.cli.
"""
