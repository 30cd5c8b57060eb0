"""The shared domain: the models and rules both sides of quorumctl use, with no
I/O of their own. Beneath the live layer (live/, which fills them from a running
cluster) and the offline one (ops/, image/: from files), and what render/ shows.
Its modules:

quorum          the describe model (Quorum, Replica) and Kafka's computed values
health_verdict  what a probe found, the verdict over the probes, --can-restart, the exit status
health_watch    describe health --watch: the samples' history, stalled and flapping
quorum_metrics  the snapshot serve's metrics show
features        feature changes and the rules that allow them
cluster         kafka-cluster's results: endpoints, the unregister plan
"""
