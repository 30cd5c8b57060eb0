"""The finalized feature levels a log dir holds (FeatureLevelRecord), read from
its files the way a controller loads them: the last FeatureLevelRecord of each
feature in the metadata log after the latest snapshot, else in that snapshot,
else in bootstrap.checkpoint (which a controller copies into an empty log when
it first leads; a later upgrade is a FeatureLevelRecord in the log, so a
bootstrap.checkpoint older than the log is normal).

Every level comes with where it was read (file@offset), for doctor's evidence.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..records import metadata as md
from .statefiles import BOOTSTRAP_CHECKPOINT

FEATURE_LEVEL_KEY = md.API_KEYS["FeatureLevelRecord"]


@dataclass
class Level:
    name: str
    level: int
    path: str
    offset: int

    @property
    def evidence(self) -> str:
        return f"{self.path}@{self.offset}: FeatureLevelRecord {self.name}={self.level}"


def _levels_in(path: str, from_offset: int = 0) -> dict[str, Level]:
    """The last FeatureLevelRecord of each feature in one record-batch file (a
    segment, snapshot or bootstrap.checkpoint), at or after from_offset."""
    return {
        d.data["name"]: Level(d.data["name"], d.data["featureLevel"], path, offset)
        for offset, d in md.records_with_keys(path, (FEATURE_LEVEL_KEY,), from_offset)
    }


def finalized_levels(replica=None, log_dir: str | None = None) -> dict[str, Level]:
    """{feature: Level} for a metadata log (`raft.replica.Replica`) or, when
    it has none or holds no FeatureLevelRecord, the log dir's bootstrap.checkpoint."""
    levels: dict[str, Level] = {}
    if replica is not None:
        for path, start in replica.snapshot_and_log():
            levels.update(_levels_in(path, start))
        log_dir = log_dir or replica.log_dir
    if not levels and log_dir is not None:
        boot = os.path.join(log_dir, BOOTSTRAP_CHECKPOINT)
        if os.path.isfile(boot):
            levels.update(_levels_in(boot))
    return levels
