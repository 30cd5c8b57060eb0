"""What the offline repairs of several replicas share (`recover`, `voters
set-endpoints`): a base replica the result starts from, a new epoch above every
one seen, the probes of the voters and the witnesses asked, risks, next steps,
and one refusal, the first reason found not to act.

A live refusal (a voter that answers, a witness that sees a leader) is the most
serious: `live_refusals_first` puts it ahead of any refusal found while
planning."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..raft.replica import Replica


@dataclass(kw_only=True)
class ReplicaStep:
    """What a plan does to one given replica and what that replica loses."""

    replica: Replica
    action: str
    keeps_to: int  # offsets below this stay (the log end when nothing is lost)
    losses: dict | None = None  # summary of the entries it loses (from keeps_to to its log end)


@dataclass(kw_only=True)
class RepairPlan:
    base: Replica  # the most up-to-date replica given: the result starts from its log
    new_epoch: int
    max_epoch_seen: int
    probes: list = field(default_factory=list)  # liveness.VoterProbe
    witness_endpoints: list = field(default_factory=list)  # [(who, node id, [(host, port)])] to ask
    witnesses: list = field(default_factory=list)  # liveness.Witness
    risks: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    refusal: str | None = None

    def refuse(self, msg: str) -> None:
        """Keep the first reason: the others may follow from it."""
        if self.refusal is None:
            self.refusal = msg

    @property
    def cluster_id(self) -> str | None:
        # every replica given is of one cluster (checked before planning)
        return self.base.meta.get("cluster.id") if self.base.meta else None

    @contextmanager
    def live_refusals_first(self, probes: Sequence, witnesses: Sequence) -> Iterator[None]:
        """Record the answers; a refusal made inside replaces one made while planning."""
        self.probes, self.witnesses = list(probes), list(witnesses)
        earlier, self.refusal = self.refusal, None
        yield
        if self.refusal is None:
            self.refusal = earlier

    def refuse_unusable_base(self, start_again: str) -> None:
        """Refuse a base whose files cannot be copied as they are; `start_again` ends the
        advice for a log that ends before its snapshot."""
        base = self.base
        if base.problems:
            self.refuse(
                f"{base.partition_dir} has problems ({base.problems[0]}); check it with `quorumctl state` "
                "and `quorumctl verify` first"
            )
        if base.replaced_by_snapshot:
            self.refuse(
                f"{base.partition_dir}: the log ends before its latest snapshot; start the node once so "
                f"Kafka restarts the log at the snapshot, stop it, then {start_again}"
            )
        assert base.files is not None  # a loaded replica has its files
        if base.files.unknown:
            self.refuse(
                f"{base.partition_dir}: unexpected entries "
                f"{', '.join(map(os.path.basename, base.files.unknown))}; refusing to copy a partition "
                "directory with contents quorumctl does not know"
            )

    def refuse_no_segment(self) -> None:
        assert self.base.scan is not None  # a loaded replica has its scan
        if not [s for s in self.base.scan.segments if s.files.log]:
            self.refuse(f"{self.base.partition_dir}: no log segment to start from")

    def base_json(self) -> dict:
        b = self.base
        return {"node_id": b.node_id, "log_dir": b.log_dir, "last_epoch": b.last_epoch, "log_end_offset": b.log_end}

    def answers_json(self) -> dict:
        return {"probes": [p.to_json() for p in self.probes], "witnesses": [w.to_json() for w in self.witnesses]}

    def verdict_json(self) -> dict:
        return {"risks": self.risks, "next_steps": self.steps, "refused": self.refusal}
