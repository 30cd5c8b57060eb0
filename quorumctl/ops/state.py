"""`state`: the offline view of one or more replicas of the metadata log: each
replica as Kafka loads it, which one wins an election and where the others
diverge or clash, and which entries are provably committed."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ExitStatus, InputError


@dataclass
class StateResult:
    replicas: list  # raft.replica.Replica, as Kafka loads each
    comparison: dict | None  # raft.replica.compare, with two replicas or more
    committed: dict | None  # raft.committed.classify, with two replicas or more

    @property
    def exit_code(self) -> ExitStatus:
        """PROBLEMS when a replica has problems or two replicas clash (log matching)."""
        return ExitStatus.of(
            (self.comparison is not None and "log_matching" in self.comparison)
            or any(r.problems for r in self.replicas)
        )


def state(paths: list[str], configs: list[str]) -> StateResult:
    from ..config.addresses import static_voter_ids
    from ..raft.committed import classify
    from ..raft.replica import compare, load_replica, metadata_dir_from_config

    targets = list(paths) + [metadata_dir_from_config(c) for c in configs]
    if not targets:
        raise InputError("give at least one log dir (or -c server.properties)")
    replicas = [load_replica(p) for p in targets]
    labels = [r.label for r in replicas]
    for r in replicas:
        if labels.count(r.label) > 1:
            r.label = f"{r.label} ({r.log_dir})"
    many = len(replicas) > 1
    return StateResult(
        replicas, compare(replicas) if many else None, classify(replicas, *static_voter_ids(configs)) if many else None
    )
