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
from ..records.batch import Batch, BatchError, BatchReader
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
    segment, snapshot or bootstrap.checkpoint), at or after from_offset. Only the
    record frame's api key is looked at for other records (one byte each)."""
    out: dict[str, Level] = {}
    try:
        with BatchReader(path) as reader:
            for b in reader:
                if not isinstance(b, Batch) or b.is_control or b.last_offset < from_offset:
                    continue
                for r in b.iter_records():
                    v = r.value
                    if v is None or len(v) < 3 or r.offset < from_offset:
                        continue
                    if v[0] == md.FRAME_VERSION and v[1] != FEATURE_LEVEL_KEY and v[1] < 128:
                        continue
                    d = md.decode_metadata(v)
                    if d.api_key == FEATURE_LEVEL_KEY and d.data is not None:
                        out[d.data["name"]] = Level(d.data["name"], d.data["featureLevel"], path, r.offset)
    except (BatchError, OSError):
        pass   # what can be read counts; verify reports the damage
    return out


def finalized_levels(replica=None, log_dir: str | None = None) -> dict[str, Level]:
    """{feature: Level} for a metadata log (`raft.replica.Replica`) or, when
    it has none or holds no FeatureLevelRecord, the log dir's bootstrap.checkpoint."""
    levels: dict[str, Level] = {}
    if replica is not None:
        snap = replica.latest_snapshot
        if snap is not None:
            levels.update(_levels_in(snap.path))
        start = snap.end_offset if snap is not None else 0
        for seg in replica.scan.segments:
            if seg.batches and seg.batches[-1].last_offset >= start:
                levels.update(_levels_in(seg.files.log, start))
        log_dir = log_dir or replica.log_dir
    if not levels and log_dir is not None:
        boot = os.path.join(log_dir, BOOTSTRAP_CHECKPOINT)
        if os.path.isfile(boot):
            levels.update(_levels_in(boot))
    return levels
