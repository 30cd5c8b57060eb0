"""The declarative message DSL shared by the wire protocol and the metadata
records (spec: fields, versions, tagged fields) and its codec (compiled
encoders and decoders). Knows no particular message: those are declared in
wire/messages.py and records/.
"""
