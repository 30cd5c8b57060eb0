"""`quorumctl wait`: block until a condition on the quorum holds, for roll
scripts (Ansible, Helm hooks) that must not restart the next node too soon.

Each sample is `describe health`'s check (every controller probed in
parallel), given at most the interval and never more than the time left, so
the deadline is kept whatever the nodes do. The conditions:
  healthy        the verdict is healthy (a leader, every voter caught up,
                 every controller answers)
  leader         some controller answers DescribeQuorum as the leader
  can-restart    Strimzi's rule for restarting these nodes together now
                 (`health_verdict.can_restart`)
  caught-up      each node caught up with the leader: a voter by the verdict's
                 rule, an observer (a broker) by the same rule on the leader's
                 record of it
A sample where nothing answers blocks too ("nothing answered: ..."); it is not
an error while time is left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ...errors import ClusterError, InputError
from ...domain.health_verdict import Health, can_restart

CONDITIONS = ("healthy", "leader", "can-restart", "caught-up")


@dataclass
class WaitResult:
    condition: str
    ids: list[int]
    ok: bool
    reason: str  # why it holds, or what still blocks
    samples: int
    elapsed_s: float
    timeout_s: float
    interrupted: bool = False


def check(h: Health, condition: str, ids: list[int]) -> tuple[bool, str]:
    """(holds, why it holds or what blocks) for one sample."""
    if condition == "leader":
        if h.leader_id is not None:
            return True, f"{h.leader_id} leads epoch {h.leader_epoch}"
        return False, "no leader: " + (h.reasons[0] if h.reasons else "no controller answered as the leader")
    if condition == "healthy":
        if h.verdict == "healthy":
            return True, (
                f"healthy: leader {h.leader_id} in epoch {h.leader_epoch}, {h.caught_up} of "
                f"{len(h.voters)} voters caught up"
            )
        return False, f"{h.verdict}: " + "; ".join(h.reasons[:3] or ["(no reason given)"])
    if condition == "can-restart":
        r = can_restart(h, ids)
        if r.allowed:
            return True, "; ".join(f"node {n.id}: {n.reason}" for n in r.nodes)
        return False, "; ".join(f"node {n.id}: {n.reason}" for n in r.nodes if not n.allowed)
    if condition == "caught-up":
        return _caught_up(h, ids)
    raise InputError(f"unknown condition {condition!r}: expected one of {', '.join(CONDITIONS)}")


def _caught_up(h: Health, ids: list[int]) -> tuple[bool, str]:
    if h.quorum is None:
        return False, "no leader to catch up with: " + (h.reasons[0] if h.reasons else "")
    q = h.quorum
    lead = q.leader()
    voters = {v.id: v for v in h.voters}
    observers = {r.id: r for r in q.observers}
    done, blocks = [], []
    for i in ids:
        if i in voters:
            v = voters[i]
            if v.caught_up:
                done.append(f"voter {i} caught up")
            else:
                how = f"{v.lag_time_ms} ms behind" if v.lag_time_ms is not None else "not caught up"
                blocks.append(f"voter {i} is {how} (log end lag {v.lag})")
        elif i in observers:
            r = observers[i]
            lag_ms = None
            if lead is not None and lead.last_caught_up is not None and r.last_caught_up is not None:
                lag_ms = lead.last_caught_up - r.last_caught_up
            ok = (lag_ms < h.fetch_timeout_ms) if lag_ms is not None else r.log_end_offset >= q.high_watermark
            if ok:
                done.append(f"observer {i} caught up")
            else:
                blocks.append(
                    f"observer {i} is "
                    + (
                        f"{lag_ms} ms behind"
                        if lag_ms is not None
                        else f"at {r.log_end_offset}, high watermark {q.high_watermark}"
                    )
                )
        else:
            blocks.append(f"node {i} is not fetching from leader {q.leader_id} (neither a voter nor an observer)")
    if blocks:
        return False, "; ".join(blocks)
    return True, ", ".join(done) + f" (leader {q.leader_id}, epoch {q.leader_epoch})"


def wait_for(
    sample: Callable[[float], Health],
    condition: str,
    ids: list[int],
    timeout_s: float,
    interval_s: float,
    progress: Callable[[WaitResult], None] | None = None,
    clock=time.monotonic,
    sleep=time.sleep,
) -> WaitResult:
    """Sample every `interval_s` (each sample given at most the interval and the
    time left) until `condition` holds or `timeout_s` passes."""
    if condition not in CONDITIONS:
        raise InputError(f"unknown condition {condition!r}: expected one of {', '.join(CONDITIONS)}")
    if condition in ("can-restart", "caught-up") and not ids:
        raise InputError(f"wait {condition} needs at least one node id")
    t0 = clock()
    deadline = t0 + timeout_s
    res = WaitResult(condition, list(ids), False, "not sampled yet", 0, 0.0, timeout_s)
    while True:
        started = clock()
        left = deadline - started
        # the interval, or what is left of the deadline in tenths (a reason says "within the 0.4 s timeout")
        budget = interval_s if left >= interval_s else max(int(left * 10) / 10, 0.1)
        try:
            h = sample(budget)
        except ClusterError as e:
            ok, why = False, f"nothing answered: {e}"
        else:
            ok, why = check(h, condition, ids)
        res.samples += 1
        res.ok, res.reason, res.elapsed_s = ok, why, clock() - t0
        if ok:
            return res
        if progress is not None:
            progress(res)
        now = clock()
        if now < deadline:
            sleep(max(0.0, min(interval_s - (now - started), deadline - now)))
        if clock() >= deadline:
            res.elapsed_s = clock() - t0
            return res
