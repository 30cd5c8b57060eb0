"""Output: Kafka-compatible text, Rich tables and JSON, one module per kind of
result (quorum, state, recover, ...) and output.py for the choice of form.
Rendering only: a renderer receives a computed result and computes nothing
that a library call should.
"""
