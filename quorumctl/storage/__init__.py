"""Offline storage: the small state files of a KRaft log dir, log-dir scanning,
locking and crash-safe writes, epoch histories and divergence, truncation and
formatting. Everything here reads files read-only unless a caller asks to write.
"""
