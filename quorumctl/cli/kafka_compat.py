"""Kafka's tools' options that quorumctl does not take, each with the one-line
reason it gives and the quorumctl way, when there is one. `cli/main` consults
it before parsing: `quorumctl topics --create ...` (a kafka-topics command line
with the tool name replaced) exits 2 with the reason instead of click's "No such
option". tests/kafka/test_kafka_help_parity.py holds every option of Kafka 4.3's
--help to this table or to an option quorumctl accepts.
"""

_WRITE = "quorumctl does not {what} topics (it reads them: topics describe); use kafka-topics.sh {flag}"

# first command word -> Kafka option -> why not, and what to use instead
REFUSED: dict[str, dict[str, str]] = {
    "topics": {
        "--create": _WRITE.format(what="create", flag="--create"),
        "--alter": _WRITE.format(what="alter", flag="--alter"),
        "--delete": _WRITE.format(what="delete", flag="--delete"),
        "--partitions": _WRITE.format(what="create or alter", flag="--partitions"),
        "--replication-factor": _WRITE.format(what="create", flag="--replication-factor"),
        "--replica-assignment": _WRITE.format(what="create or alter", flag="--replica-assignment"),
        "--if-not-exists": _WRITE.format(what="create", flag="--if-not-exists"),
        "--delete-config": "kafka-topics' --delete-config was removed in Kafka 4.0; use kafka-configs.sh --alter "
        "--delete-config",
        "--list": "kafka-topics --list is not supported: quorumctl topics describe --bootstrap-server ADDR "
        "-o json lists every topic with its partitions",
        "--version": "quorumctl -V prints quorumctl's version (kafka-topics --version prints Kafka's)",
    },
    "features": {},
    "cluster": {
        "--config": "kafka-cluster's --config is deprecated in Kafka: use --command-config (-c), the same "
        "client properties file",
    },
}


def refusal(args: list[str], root) -> str | None:
    """The reason to refuse `args` (already in quorumctl's order), or None: the first
    option of REFUSED's table for its command that the command itself does not take."""
    if not args or "-h" in args or "--help" in args:
        return None
    words = [a for a in args if a != "--debug"]
    table = REFUSED.get(words[0]) if words else None
    if not table:
        return None
    cmd = root
    for w in words:
        sub = getattr(cmd, "commands", {}).get(w)
        if sub is None:
            break
        cmd = sub
    takes = {o for p in getattr(cmd, "params", []) for o in (*p.opts, *p.secondary_opts)}
    for a in words[1:]:
        if a == "--":
            break
        name = a.split("=", 1)[0]
        if name in table and name not in takes:
            return table[name]
    return None
