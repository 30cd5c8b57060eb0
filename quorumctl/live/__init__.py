"""What quorumctl asks of a running cluster, over the wire (wire/), with the
answers filled into the shared domain's models and judged by its rules
(domain/). Nothing here formats output (render/ does) or parses options (cli/).
Each concept has its place:

describe        describe status/replication (a Quorum), features describe, registered controllers
features        features upgrade/downgrade checked against the live cluster
cluster         kafka-cluster's cluster-id, list-endpoints, unregister
topics          topics --describe against a broker
liveness        is a voter really gone? (recover asks before it declares voters lost)
metadata_log    the committed metadata log read from the leader as an observer reads it (doctor)
health/         describe health: every controller probed (probe), the partitions' state (partitions)
automation/     probe (node_probe), wait (gates), serve's sampler (exporter)
membership/     add/remove-controller (voters), replace, unregister, registration, migrate
"""
