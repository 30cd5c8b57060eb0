"""Readers of every kind of file a KRaft log dir holds, one module per kind:
meta.properties, quorum-state, leader-epoch-checkpoint, partition.metadata and
bootstrap.checkpoint (statefiles), log segments (segments), offset and time
indexes (indexes), producer-state snapshots (producer_state), Raft snapshots
(snapshots), finalized feature levels (features); filekinds names each file's
kind from its name. Read-only, one file at a time: judging several files
together is raft/ (Raft's logic) or ops/ (the jobs).
"""
