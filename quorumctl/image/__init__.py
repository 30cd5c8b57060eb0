"""The cluster metadata image, offline: replay a metadata log dir to any offset
or time (replay), the image's tree and paths (view), the history of one entity
(history), and what changed between two points (diff). The semantics and the
record handling are in model.
"""
