"""Diagnosing a KRaft quorum from what the operator has: server.properties
files, log dirs, and optionally the live quorum (`doctor`), and packing it all
for support (`bundle`)."""
