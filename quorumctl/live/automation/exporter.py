"""`quorumctl serve`'s sampler: the quorum sampled as `describe health --watch`
samples it, reduced after each sample to the plain numbers the metrics show
(`Snapshot`). No Prometheus import here: `render/metrics.py` turns a snapshot
into OpenMetrics, `cli/serve.py` serves it.

Promises that hold over days:
  bounded memory  the history is `health_watch.History` (a minute of samples),
                  the snapshot holds only the current voters, observers and
                  probes (a voter removed disappears from the next snapshot),
                  and counters are plain integers;
  a sample never blocks longer than the interval: each sample's deadline is
                  min(--timeout, the interval) (`check_health` keeps it: every
                  probe shares it);
  errors are metrics, not crashes: nothing answering, a refusal, a bug in a
                  sample: counted by kind in `sample_errors`, the last one's
                  text kept, and the loop goes on.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from ...errors import ClusterError, QuorumctlError
from ...domain.health_verdict import Health
from ...domain.health_watch import History, sample_of, watch_verdict
from ...domain.quorum_metrics import ObserverRow, Snapshot, VoterRow


def stale_registrations(h: Health) -> int:
    """Registered controllers that are not voters and do not answer (KAFKA-20395)."""
    if h.quorum is None:
        return 0
    voter_ids = {r.id for r in h.quorum.voters}
    return sum(
        1
        for p in h.probes
        if p.expected == "controller" and not p.ok and p.node_id is not None and p.node_id not in voter_ids
    )


class Sampler:
    """Samples every `interval_s` on its own thread; `snapshot()` is the latest."""

    def __init__(
        self,
        sample: Callable[[float], Health],
        interval_s: float,
        timeout_s: float,
        flapping_epochs: int = 3,
        clock=time.time,
    ):
        self.sample, self.interval_s, self.timeout_s = sample, interval_s, timeout_s
        self.history = History(flapping_epochs=flapping_epochs)
        self.clock = clock
        self._lock = threading.Lock()
        self._snap = Snapshot()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._samples = 0
        self._epoch_changes = 0
        self._errors: dict[str, int] = {}
        self._last_epoch: int | None = None
        self._hw: int | None = None
        self._hw_moved_at: float | None = None
        self._known: frozenset[str] = frozenset()

    def snapshot(self) -> Snapshot:
        with self._lock:
            return self._snap

    def known_addresses(self) -> set[str]:
        """The controllers' addresses the last sample probed (for /probe's allow list)."""
        with self._lock:
            return set(self._known)

    def budget(self) -> float:
        return min(self.timeout_s, self.interval_s)

    def step(self) -> Snapshot:
        """One sample, folded into a new snapshot (never raises)."""
        t0 = time.monotonic()
        now = self.clock()
        h: Health | None = None
        err = None
        try:
            h = self.sample(self.budget())
        except ClusterError as e:
            err = ("unreachable", str(e))
        except QuorumctlError as e:
            err = ("refused" if getattr(e, "exit_code", None) == 3 else "error", str(e))
        except Exception as e:  # a bug must not end the exporter: it is counted and shown
            err = ("internal", f"{type(e).__name__}: {e}")
        took = time.monotonic() - t0
        self._samples += 1
        if err is not None:
            self._errors[err[0]] = self._errors.get(err[0], 0) + 1
        snap = self._fold(h, now, took)
        if err is not None:
            snap.last_error = err[1]
        with self._lock:
            self._snap = snap
            if h is not None:
                self._known = frozenset(str(p.address) for p in h.probes)
        return snap

    def _fold(self, h: Health | None, now: float, took: float) -> Snapshot:
        s = Snapshot(at=now, sample_seconds=took, samples=self._samples, sample_errors=dict(self._errors))
        if h is None:
            from ...domain.health_watch import Sample

            self.history.add(Sample(now, "unreachable", None, None, None, None))
            s.epoch_changes = self._epoch_changes
            s.high_watermark_age_seconds = None if self._hw_moved_at is None else now - self._hw_moved_at
            return s
        self.history.add(sample_of(h, now))
        verdict, _ = watch_verdict(h, self.history)
        s.up = True
        s.verdict = verdict
        s.has_leader = h.leader_id is not None and h.quorum is not None
        s.leader_id, s.leader_epoch, s.high_watermark = h.leader_id, h.leader_epoch, h.high_watermark
        if h.leader_epoch is not None:
            if self._last_epoch is not None and h.leader_epoch > self._last_epoch:
                self._epoch_changes += h.leader_epoch - self._last_epoch
            self._last_epoch = h.leader_epoch if self._last_epoch is None else max(self._last_epoch, h.leader_epoch)
        s.epoch_changes = self._epoch_changes
        if h.high_watermark is not None and h.high_watermark >= 0 and h.high_watermark != self._hw:
            self._hw, self._hw_moved_at = h.high_watermark, now
        elif self._hw_moved_at is None:
            self._hw_moved_at = now  # no leader at start: the age counts from the first sample
        s.high_watermark_age_seconds = now - self._hw_moved_at
        s.voters = len(h.voters) if h.voters else None
        s.caught_up, s.majority, s.can_lose = h.caught_up, h.majority, h.can_lose
        s.stale_registrations = stale_registrations(h)
        ctrl = [p for p in h.probes if p.expected == "controller"]
        s.controllers_probed = len(ctrl)
        s.controllers_answering = sum(1 for p in ctrl if p.ok)
        q = h.quorum
        lead = q.leader() if q is not None else None
        lead_now = lead.last_fetch if lead is not None and lead.last_fetch is not None else None

        def age(ms):
            return None if ms is None or lead_now is None else max(lead_now - ms, 0) / 1000

        by_id = {r.id: r for r in q.voters} if q is not None else {}
        for v in h.voters:
            r = by_id.get(v.id)
            s.voter_rows.append(
                VoterRow(
                    v.id,
                    v.caught_up,
                    v.lag,
                    None if v.lag_time_ms is None else v.lag_time_ms / 1000,
                    age(r.last_fetch) if r is not None else None,
                    v.reachable,
                )
            )
        if q is not None and lead is not None:
            for r in q.observers:
                s.observer_rows.append(ObserverRow(r.id, lead.log_end_offset - r.log_end_offset, age(r.last_fetch)))
        return s

    def run(self) -> None:
        while not self._stop.is_set():
            t0 = time.monotonic()
            self.step()
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - t0)))

    def start(self) -> "Sampler":
        self._thread = threading.Thread(target=self.run, name="quorumctl serve sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.budget() + 2)
