"""Diagnosing a KRaft quorum from what the operator has, and packing it for
support. `doctor`'s findings: the report (findings), the checks of configs and
log dirs (file_checks), of registrations of nodes that are gone
(registrations), of the live quorum (live_checks), and the known-traps table
(traps); `bundle` gathers every command's output into one archive. Judging only:
the readers of files are logdir/ and config/, Raft's logic raft/, the live
questions live/, and the text of a report render/diagnose.py."""
