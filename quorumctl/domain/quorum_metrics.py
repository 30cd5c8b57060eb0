"""What `quorumctl serve`'s metrics show: the snapshot of plain numbers the
sampler (live/automation/exporter.py) reduces each sample to, and the verdicts
it can name. render/metrics.py turns a snapshot into OpenMetrics; neither side
needs the other's imports, so both depend on this module alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

VERDICTS = ("healthy", "degraded", "unhealthy", "stalled", "flapping", "unreachable")


@dataclass
class VoterRow:
    id: int
    caught_up: bool | None
    lag_records: int | None
    lag_seconds: float | None  # behind the leader's last caught-up time
    last_fetch_age_seconds: float | None
    reachable: bool | None


@dataclass
class ObserverRow:
    id: int
    lag_records: int | None
    last_fetch_age_seconds: float | None


@dataclass
class Snapshot:
    """What the metrics show, as of the last sample (all plain values)."""

    at: float = 0.0  # time.time() of the last sample (0: none yet)
    up: bool = False  # some controller answered
    verdict: str = "unreachable"
    has_leader: bool = False
    leader_id: int | None = None
    leader_epoch: int | None = None
    high_watermark: int | None = None
    high_watermark_age_seconds: float | None = None
    voters: int | None = None
    caught_up: int | None = None
    majority: int | None = None
    can_lose: int | None = None
    stale_registrations: int = 0
    controllers_answering: int = 0
    controllers_probed: int = 0
    voter_rows: list[VoterRow] = field(default_factory=list)
    observer_rows: list[ObserverRow] = field(default_factory=list)
    sample_seconds: float = 0.0
    samples: int = 0
    epoch_changes: int = 0  # leader epoch increases seen since start
    sample_errors: dict[str, int] = field(default_factory=dict)
    last_error: str | None = None
