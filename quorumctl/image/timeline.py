"""One image kept in memory and moved through time (the shell's `at` and `follow`).

Moving forward replays on from where the image is. Moving back starts from the
nearest earlier point it can: a checkpoint (a copy of an image met before, its
maps copied and its values shared, as diff keeps its "from" image) or the
snapshot replay would start from, whichever is later. Checkpoints are few
(`MAX_CHECKPOINTS`, the end always among them), so memory stays a small
multiple of one image. `refresh` re-reads a log dir Kafka is still writing and
applies what was appended since.
"""

from __future__ import annotations

import os
import time

from ..errors import InputError
from .model import Image
from .replay import Point, Replay, Source, Step, check_inside, open_source, plan

MAX_CHECKPOINTS = 4  # besides the end
# partitions per checkpoint at most: at a million partitions a copy's maps are ~100 MB
CHECKPOINT_MAX_PARTITIONS = 300_000


def parse_at(text: str, now_ms: int | None = None, end_ms: int | None = None) -> Point:
    """`at`'s argument: `end`, an offset, a time (ISO-8601 or epoch ms), or a time back
    from the end of the log (`-15m`, `-2h`, `-30s`, `-1d`)."""
    import re

    from .replay import parse_point

    t = text.strip()
    if t in ("end", "now", "latest"):
        return Point()
    m = re.fullmatch(r"-(\d+(?:\.\d+)?)(ms|s|m|h|d)", t)
    if m:
        unit = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}[m.group(2)]
        base = end_ms if end_ms is not None else (now_ms if now_ms is not None else int(time.time() * 1000))
        return Point(time_ms=base - int(float(m.group(1)) * unit))
    try:
        return parse_point(t)
    except InputError:
        raise InputError(
            f"at {text}: expected an offset, a time (ISO-8601 or epoch ms), -15m/-2h/-1d (back from the end) or end"
        ) from None


def source(paths: list[str]) -> Source:
    """open_source, and one file under any name as kafka-metadata-shell --snapshot reads it:
    a snapshot when it starts with a SnapshotHeader, else a log segment."""
    if len(paths) == 1 and os.path.isfile(paths[0]):
        from ..logdir.filekinds import SEGMENT_RE, SNAPSHOT_RE

        name = os.path.basename(paths[0])
        if not SNAPSHOT_RE.match(name) and not SEGMENT_RE.match(name) and name != "bootstrap.checkpoint":
            return _sniffed(paths[0])
    return open_source(paths)


def _sniffed(path: str) -> Source:
    from ..logdir.segments import SnapshotFile
    from ..records import metadata as md
    from ..records.batch import Batch, BatchError, BatchReader

    first = None
    try:
        with BatchReader(path) as reader:
            for b in reader:
                if isinstance(b, Batch):
                    first = b
                break
            is_snapshot = False
            if first is not None and first.is_control:
                rec = next(iter(first.iter_records()), None)
                is_snapshot = rec is not None and md.control_type(rec.key) == md.SNAPSHOT_HEADER
    except (OSError, BatchError) as e:
        raise InputError(f"{path}: not a metadata log or snapshot file ({e})") from None
    if first is None:
        raise InputError(f"{path}: holds no record batch")
    src = Source(path)
    if is_snapshot:
        src.snapshots = [SnapshotFile(0, 0, path, os.path.getsize(path))]
    else:
        src.segments = [(first.base_offset, path)]
    return src


class Timeline:
    """The image of a source at one point, and how to move it."""

    def __init__(self, paths: list[str]):
        self.paths = list(paths)
        self.src: Source = source(self.paths)
        self.rp: Replay | None = None  # the replay the current image came from (resumable forward)
        self.image: Image = Image()
        self.point: Point = Point()  # where it was asked to be
        self.at_end = False
        self.checkpoints: list[Image] = []  # never mutated: copies are taken from them
        self.end_image: Image | None = None
        self.end_reason: str | None = None
        self.start: dict | None = None  # where the replay of the current image began
        self.end_start: dict | None = None

    # -- moving ---------------------------------------------------------------------

    def load(self) -> Image:
        """The image at the end of the source (the shell starts there)."""
        rp = Replay(plan(self.src, Point()))
        rp.use_workers()
        try:
            rp.run(Point())
        finally:
            rp.close()
        self._landed(rp, Point(), at_end=True)
        return self.image

    def goto(self, point: Point) -> Image:
        if point.offset is None and point.time_ms is None:
            return self._to_end()
        start = self._best_start(point)
        if start is None:
            rp = Replay(plan(self.src, point))
        else:
            rp = Replay(self._log_steps_after(start.offset), image=start.copy())
        if point.time_ms is None:
            rp.use_workers()
        try:
            img = rp.run(point)
        finally:
            rp.close()
        check_inside(self.src, point, img, "at")
        self._landed(rp, point, at_end=False)
        return self.image

    def _to_end(self) -> Image:
        if self.at_end:
            return self.image
        if self.end_image is not None:
            self.image = self.end_image.copy()
            self.rp = None
            self.start = self.end_start
            self.point, self.at_end = Point(), True
            return self.image
        return self.load()

    def _best_start(self, point: Point) -> Image | None:
        """The latest image met before that is at or before `point` and at least as late
        as the snapshot a fresh replay would start from; None: replay from the plan."""
        cands = [self.image, *self.checkpoints] + ([self.end_image] if self.end_image is not None else [])
        ok = []
        for img in cands:
            if img is None or img.offset < 0 or img.pending is not None:
                continue
            if point.offset is not None and img.offset > point.offset:
                continue
            if point.time_ms is not None and img.timestamp > point.time_ms:
                continue
            ok.append(img)
        if not ok:
            return None
        best = max(ok, key=lambda i: i.offset)
        snap = next((s for s in plan(self.src, point) if s.kind == "snapshot"), None)
        if snap is not None and snap.base_offset - 1 > best.offset:
            return None
        if best.offset + 1 < (self.src.log_start or 0):
            return None  # the log no longer holds what follows it
        return best

    def _log_steps_after(self, offset: int) -> list[Step]:
        steps = []
        segs = self.src.segments
        for i, (base, path) in enumerate(segs):
            nxt = segs[i + 1][0] if i + 1 < len(segs) else None
            if nxt is not None and nxt <= offset + 1:
                continue
            steps.append(Step("log", path, base))
        return steps

    def _landed(self, rp: Replay, point: Point, at_end: bool, *, start: dict | None = None) -> None:
        old = self.image
        self.start = start if start is not None else rp.describe_start()
        self.rp, self.image, self.point, self.at_end = rp, rp.image, point, at_end
        self.end_reason = rp.end_reason
        if at_end:
            self.end_image = self.image.copy()
            self.end_start = self.start
        elif (
            old is not None
            and old is not self.image
            and old.offset >= 0
            and (self.end_image is None or old.offset != self.end_image.offset)
        ):
            self._keep(old)

    def _keep(self, img: Image) -> None:
        if img.partition_count() > CHECKPOINT_MAX_PARTITIONS or img.pending is not None:
            return
        if any(c.offset == img.offset for c in self.checkpoints):
            return
        self.checkpoints.append(img)  # the image left behind: nothing mutates it any more
        if len(self.checkpoints) > MAX_CHECKPOINTS:
            self.checkpoints.pop(0)

    # -- following a live log -----------------------------------------------------------

    def refresh(self) -> tuple[Image, Image] | None:
        """Re-read the source (new segments, appended batches) and apply what follows the
        end image. Returns (before, after) when something was applied, else None; the
        shell is then at the new end."""
        self.src = source(self.paths)
        base = self.end_image if self.end_image is not None else self.image
        if base.offset < 0 or (self.src.log_start is not None and base.offset + 1 < self.src.log_start):
            before = base
            self.end_image = None
            self.at_end = False
            self.load()
            return (before, self.image) if self.image.offset != before.offset else None
        steps = self._log_steps_after(base.offset)
        if not steps:
            return None
        if self._last_offset_hint() <= base.offset:
            return None
        rp = Replay(steps, image=base.copy())
        try:
            rp.run(Point())
        finally:
            rp.close()
        if rp.image.offset == base.offset:
            return None
        self._landed(rp, Point(), at_end=True, start=self.start)
        return base, self.image

    def _last_offset_hint(self) -> int:
        """The last offset of the newest segment, from batch headers (cheap): a poll with
        nothing new stops here without building a replay."""
        from ..records.batch import Batch, BatchReader

        if not self.src.segments:
            return -1
        path = self.src.segments[-1][1]
        last = self.src.segments[-1][0] - 1
        try:
            with BatchReader(path) as reader:
                for b in reader:
                    if isinstance(b, Batch):
                        last = b.last_offset
        except (OSError, ValueError):
            pass
        return last

    # -- describing ---------------------------------------------------------------------

    def where(self) -> dict:
        img = self.image
        return {
            "offset": img.offset,
            "epoch": img.epoch,
            "timestamp": img.timestamp,
            "atEnd": self.at_end,
            "records": img.records,
            "start": self.start,
        }

    def single_file(self) -> str | None:
        """The one file the source is (as kafka-metadata-shell --snapshot reads), else None."""
        if len(self.paths) == 1 and os.path.isfile(self.paths[0]):
            return self.paths[0]
        return None
