"""Kafka's record batches (v2 framing, CRC-32C, compression) and the records
inside them: metadata records and Raft control records, with their schemas
and decoders. Bytes in, values out: files and directories are logdir/'s.
"""
