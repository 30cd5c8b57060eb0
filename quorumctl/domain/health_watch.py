"""`describe health --watch`: a short history of samples and the verdicts only a
history shows, `stalled` and `flapping`."""

from __future__ import annotations

import time
from dataclasses import dataclass

from .health_verdict import Health


STALL_SAMPLES = 3  # the high watermark still (or no leader) over this many samples: stalled
FLAPPING_EPOCHS = 3  # this many epoch changes within a minute: flapping
FLAP_WINDOW_S = 60.0


@dataclass
class Sample:
    at: float  # time.time()
    verdict: str
    leader_id: int | None
    leader_epoch: int | None
    high_watermark: int | None
    leader_leo: int | None


def sample_of(h: Health, at: float | None = None) -> Sample:
    leader = h.quorum.leader() if h.quorum is not None else None
    return Sample(
        time.time() if at is None else at,
        h.verdict,
        h.leader_id,
        h.leader_epoch,
        h.high_watermark,
        None if leader is None else leader.log_end_offset,
    )


def _span(a: Sample, b: Sample) -> str:
    return f"{b.at - a.at:.0f} s"


class History:
    """The samples of `describe health --watch` and the verdicts only a history
    shows: `stalled` (the high watermark does not move while the leader's log
    grows, or no leader or no high watermark, for `stall_samples` samples: a
    healthy KRaft leader commits a no-op at least every
    metadata.max.idle.interval.ms, 500 ms) and `flapping` (`flapping_epochs` or
    more leader epoch changes within a minute; the verdict when both hold)."""

    def __init__(self, stall_samples: int = STALL_SAMPLES, flapping_epochs: int = FLAPPING_EPOCHS, keep: int = 30):
        self.stall_samples, self.flapping_epochs, self.keep = stall_samples, flapping_epochs, keep
        self.samples: list[Sample] = []

    def add(self, s: Sample) -> None:
        self.samples.append(s)
        # keep at least a minute's worth for the flapping count
        while len(self.samples) > self.keep and s.at - self.samples[0].at > FLAP_WINDOW_S:
            self.samples.pop(0)

    def stalled(self) -> str | None:
        w = self.samples[-self.stall_samples :]
        if len(w) < self.stall_samples or w[-1].verdict == "unreachable":
            return None
        span = _span(w[0], w[-1])
        leaderless = sum(1 for s in w if s.leader_id is None)
        # a leader that has not committed in its epoch yet answers with no high watermark (-1):
        # a leader all the same (one elected again and again never gets one)
        unknown = [s for s in w if s.leader_id is not None and (s.high_watermark is None or s.high_watermark < 0)]
        # the others that have a leader, with their high watermark
        led_hw = [
            (s, s.high_watermark)
            for s in w
            if s.leader_id is not None and s not in unknown and s.high_watermark is not None
        ]
        led = [s for s, _ in led_hw]
        if not led:
            if not unknown:
                return f"stalled: no leader for {len(w)} samples ({span})"
            ids = sorted({s.leader_id for s in unknown if s.leader_id is not None})  # (each has one)
            epochs = sorted({s.leader_epoch for s in unknown if s.leader_epoch is not None})
            who = f"leader {ids[0]}" if len(ids) == 1 else "leaders " + ", ".join(map(str, ids))
            if epochs:
                who += f" (epoch {epochs[0]})" if len(epochs) == 1 else f" (epochs {epochs[0]} -> {epochs[-1]})"
            return f"stalled: no high watermark for {len(w)} samples ({span}): {who} committed nothing in its epoch" + (
                f", and no leader in {leaderless} of them" if leaderless else ""
            )
        hw = led_hw[0][1]
        if any(h > hw for _, h in led_hw):
            return None
        grew = (
            len(led) >= 2
            and led[0].leader_leo is not None
            and led[-1].leader_leo is not None
            and led[-1].leader_leo > led[0].leader_leo
        )
        if not grew and not leaderless and not unknown:
            return None
        what = []
        if grew:
            what.append(f"while the leader's log end offset grew {led[0].leader_leo} -> {led[-1].leader_leo}")
        if leaderless:
            what.append(f"with no leader in {leaderless} of them")
        if unknown:
            what.append(f"with no high watermark in {len(unknown)} of them")
        return f"stalled: the high watermark stayed at {hw} for {len(w)} samples ({span}) " + " and ".join(what)

    def epoch_changes(self) -> tuple[int, Sample | None, Sample | None]:
        """Leader epoch changes within the last minute: (count, first, last sample with an epoch)."""
        now = self.samples[-1].at if self.samples else 0
        known = [
            (s, s.leader_epoch) for s in self.samples if s.leader_epoch is not None and now - s.at <= FLAP_WINDOW_S
        ]
        if len(known) < 2:
            return 0, None, None
        return max(e for _, e in known) - known[0][1], known[0][0], known[-1][0]

    def flapping(self) -> str | None:
        n, first, last = self.epoch_changes()
        if n < self.flapping_epochs or first is None or last is None:  # n > 0: both set
            return None
        return (
            f"flapping: the leader epoch changed {n} times in {_span(first, last)} "
            f"(epoch {first.leader_epoch} -> {max(s.leader_epoch for s in self.samples if s.leader_epoch is not None)}; "
            f"{self.flapping_epochs} or more within a minute is flapping)"
        )


def watch_verdict(h: Health, history: History) -> tuple[str, list[str]]:
    """The verdict with the history taken into account, and the reasons that say why."""
    stalled, flapping = history.stalled(), history.flapping()
    # flapping first: a quorum whose elections repeat commits nothing (stalled) because of
    # them, and the repeated elections are what the operator has to find the cause of
    extra = [r for r in (flapping, stalled) if r]
    if flapping:
        return "flapping", extra
    if stalled:
        return "stalled", extra
    return h.verdict, extra
