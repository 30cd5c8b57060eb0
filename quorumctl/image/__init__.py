"""The cluster metadata image, offline: replay a metadata log dir to any offset
or time (replay, with parallel's worker walking record frames ahead), the
image's tree and paths (view, whose topics section stays unbuilt until a
renderer streams it), the history of one entity (history), what changed
between two points (diff), kafka-topics --describe computed from an image
(topics), and a features upgrade checked against the image's
registrations (feature_update). The semantics of each record are in model.
Replaying and querying only: reading a file's bytes is logdir/'s and records/',
printing is render/'s, and nothing here writes a log dir (ops/ does).
"""
