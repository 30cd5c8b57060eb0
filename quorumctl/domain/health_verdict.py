"""`describe health`'s judgement of the probes: what a probe found (`Probe`, filled by
`health_probe`), the verdict, each voter's health, `--can-restart` and the exit status.

Verdict (caught-up rule as Strimzi's KafkaQuorumCheck): a voter is caught up
when leader.lastCaughtUpTimestamp - voter.lastCaughtUpTimestamp <
controller.quorum.fetch.timeout.ms (2000 ms by default); the leader is caught up
by definition; with a v0 answer (no timestamps) a voter is caught up when its
log end offset reaches the high watermark. With n voters the quorum needs
m = n // 2 + 1 caught up; it can lose (caught up - m) more.
  healthy    a leader answered, every voter is caught up, every probe answered
  degraded   a leader answered and a majority is caught up, but a voter lags,
             a controller does not answer from here, another controller
             still answers as the leader of an older epoch (not resigned yet),
             or a voter's node fetches as an observer under a new directory id
             (a replaced disk: the voter set names the old one)
  unhealthy  no controller answered as leader, fewer than m voters caught up,
             or two controllers answer as the leader of the same epoch
Nothing answering at all is not a verdict but an error (exit 3), as in
`describe status`: a typo in an address must not look like a dead quorum.

Only voters are judged: a registered controller that is not a voter (one
removed with remove-controller and wiped stays registered, KAFKA-20395) is a
note, never a reason to be degraded.

`can_restart` answers "may I restart these nodes now?" by Strimzi's rule: the
caught-up voters without them must still be a majority.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from ..config.addresses import Address
from .quorum import Quorum

DEFAULT_FETCH_TIMEOUT_MS = 2000
LISTED = 20  # partitions named per list (describe health's partitions); the rest are counted


@dataclass
class Probe:
    address: Address
    origin: str  # bootstrap-controller | bootstrap-server | config | discovered
    expected: str  # controller | broker
    node_id: int | None = None
    kind: str | None = None  # what it turned out to be: controller | broker
    reachable: bool = False
    answered: bool = False  # finished within the deadline
    error: str | None = None
    latency_ms: float | None = None
    cluster_id: str | None = None
    leader_view: int | None = None  # who it believes is the active controller
    leader_epoch: int | None = None
    is_leader: bool = False
    quorum: Quorum | None = None
    listed: dict = field(default_factory=dict)  # id -> Address it told us about
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """Connected and answered every request in time."""
        return self.reachable and self.answered and self.error is None


@dataclass
class VoterHealth:
    id: int
    directory_id: str | None
    caught_up: bool | None
    lag: int | None
    lag_time_ms: int | None
    address: Address | None
    reachable: bool | None
    can_restart: bool | None = None  # restarting this voter alone keeps a caught-up majority


@dataclass
class RestartCheck:
    id: int
    voter: bool
    caught_up: bool | None
    allowed: bool
    reason: str


@dataclass
class RestartAnswer:
    """`--can-restart`: may these nodes be restarted now (all of them at once)?"""

    ids: list[int]
    allowed: bool
    nodes: list[RestartCheck]


@dataclass
class Inputs:
    """What the verdict is judged on: one sample's probes, the voters the server config
    names, the caught-up threshold, the sample's deadline and how long it took."""

    probes: list[Probe]
    config_voters: dict[int, Address] = field(default_factory=dict)
    fetch_timeout_ms: int = DEFAULT_FETCH_TIMEOUT_MS
    timeout_s: float = 0.0
    elapsed_ms: float = 0.0


@dataclass
class Health:
    """The verdict over one sample (`inputs`): the leader's answer it trusts (`quorum`,
    None when no controller answered as the leader) and what follows from it."""

    verdict: str
    reasons: list[str]
    inputs: Inputs
    quorum: Quorum | None = None
    cluster_id: str | None = None
    voters: list[VoterHealth] = field(default_factory=list)
    majority: int | None = None
    caught_up: int | None = None
    can_lose: int | None = None
    notes: list[str] = field(default_factory=list)  # worth knowing, not a reason to be degraded
    restart: RestartAnswer | None = None
    partitions: object = None  # health_partitions.PartitionHealth: the data partitions, asked of a broker

    @property
    def leader_id(self) -> int | None:
        return None if self.quorum is None else self.quorum.leader_id

    @property
    def leader_epoch(self) -> int | None:
        return None if self.quorum is None else self.quorum.leader_epoch

    @property
    def high_watermark(self) -> int | None:
        return None if self.quorum is None else self.quorum.high_watermark

    @property
    def probes(self) -> list[Probe]:
        return self.inputs.probes

    @property
    def fetch_timeout_ms(self) -> int:
        return self.inputs.fetch_timeout_ms

    @property
    def timeout_s(self) -> float:
        return self.inputs.timeout_s

    @property
    def elapsed_ms(self) -> float:
        return self.inputs.elapsed_ms


def caught_up(q: Quorum, leader, r, fetch_timeout_ms: int):
    """(caught up?, lag in ms or None) of replica `r` by the rule above."""
    if r is leader:
        return True, 0
    if q.has_timestamps:
        if leader is None or leader.last_caught_up is None or r.last_caught_up is None:
            return False, None
        lag_ms = leader.last_caught_up - r.last_caught_up
        return lag_ms < fetch_timeout_ms, lag_ms
    return r.log_end_offset >= q.high_watermark, None


def judge(inputs: Inputs) -> Health:
    probes, config_voters, fetch_timeout_ms = inputs.probes, inputs.config_voters, inputs.fetch_timeout_ms
    reasons: list[str] = []
    answers = [(p, p.quorum) for p in probes if p.quorum is not None]  # (probe, its DescribeQuorum answer)
    best, q = max(answers, key=lambda a: (a[1].leader_epoch, a[0].kind == "controller"), default=(None, None))
    by_id: dict[int, Probe] = {}
    for p in probes:
        if p.node_id is not None and (p.node_id not in by_id or p.reachable):
            by_id[p.node_id] = p
    cluster_id = next((p.cluster_id for p in probes if p.cluster_id), None)

    def reach(nid):
        p = by_id.get(nid)
        return None if p is None else p.ok

    unreachable = [p for p in probes if p.expected == "controller" and not p.ok]
    if best is None or q is None:  # both None, or both set
        voters = [VoterHealth(nid, None, None, None, None, a, reach(nid)) for nid, a in sorted(config_voters.items())]
        views: dict[int, list[Probe]] = {}
        for p in probes:
            if p.reachable and p.leader_view is not None:
                views.setdefault(p.leader_view, []).append(p)
        reasons.append("no controller answered DescribeQuorum as the leader")
        for lid, ps in sorted(views.items()):
            who = ", ".join(_label(p) for p in ps)
            lp = by_id.get(lid)
            state = "" if lp is None else (" (unreachable)" if not lp.reachable or lp.error else "")
            reasons.append(f"{who} believe{'s' if len(ps) == 1 else ''} the leader is {lid}{state}")
        n = len(voters) or None
        for p in unreachable:
            reasons.append(failure(p))
        return Health(
            "unhealthy", reasons, inputs, cluster_id=cluster_id, voters=voters, majority=(n // 2 + 1) if n else None
        )

    leader = q.leader()
    voter_ids = {r.id for r in q.voters}
    notes: list[str] = []
    # controllers that are not voters (known by id: DescribeCluster's registrations, the
    # config), given or learnt: noted, not judged (a removed controller stays
    # registered, KAFKA-20395, and a monitor's list of addresses outlives it)
    registered = [p for p in unreachable if p.node_id is not None and p.node_id not in voter_ids]
    unreachable = [p for p in unreachable if p not in registered]
    for p in registered:
        notes.append(
            f"controller {p.node_id} ({p.address}) is registered but not a voter, and does not answer: "
            f"a stale registration? (`quorumctl doctor` says how to clear it): {p.error}"
        )
    for p in probes:
        if (
            p.ok
            and p.kind == "controller"
            and p.node_id is not None
            and p.node_id not in voter_ids
            and p.node_id != q.leader_id
        ):
            notes.append(f"controller {p.node_id} ({p.address}) is registered and answers, but is not a voter")
    voters = []
    stale: set[int] = set()  # caught up by the leader's answer, silent to our probe since
    for r in q.voters:
        ok, lag_ms = caught_up(q, leader, r, fetch_timeout_ms)
        if ok and r is not leader and reach(r.id) is False:
            # The leader's answer came before the probes timed out: its lastCaughtUp for a
            # voter that has since not answered (frozen, partitioned) is history, and a
            # quorum must not be judged on it ("can lose 1 more" with 2 of 3 silent).
            ok = False
            stale.add(r.id)
        eps = q.endpoints(r.id)
        addr = (
            by_id[r.id].address
            if r.id in by_id
            else (Address(eps[0].host, eps[0].port) if eps else config_voters.get(r.id))
        )
        lag = None if leader is None else leader.log_end_offset - r.log_end_offset
        voters.append(VoterHealth(r.id, r.directory_id, ok, lag, lag_ms, addr, reach(r.id)))
    n = len(voters)
    m = n // 2 + 1
    k = sum(1 for v in voters if v.caught_up)
    can_lose = max(k - m, 0)
    for v in voters:
        v.can_restart = (k - (1 if v.caught_up else 0)) >= m
    if not q.leader_is_voter():
        reasons.append(f"the leader {q.leader_id} is not among the voters")
    # other controllers that answer DescribeQuorum as the leader: an old leader cut off from
    # its followers answers so until it resigns (1.5 fetch timeouts), beside the new one
    claims: dict[int, tuple[Probe, Quorum]] = {}  # node id -> (probe, its answer)
    for p, pq in answers:
        if p.kind == "controller" and p.is_leader and p.node_id is not None and p.node_id != q.leader_id:
            claims.setdefault(p.node_id, (p, pq))
    split = [p for p, pq in claims.values() if pq.leader_epoch == q.leader_epoch]
    if k < m or split:
        verdict = "unhealthy"
        if k < m:
            reasons.insert(0, f"only {k} of {n} voters are caught up; a majority needs {m}")
    else:
        lagging = [v for v in voters if not v.caught_up]
        verdict = "degraded" if lagging or unreachable or claims else "healthy"
    for p, pq in claims.values():
        if p in split:
            reasons.append(
                f"two leaders of epoch {q.leader_epoch}: {_label(best)} and {_label(p)} both answer "
                "as the leader (a Raft safety violation)"
            )
        else:
            reasons.append(
                f"{_label(p)} still answers as the leader of epoch {pq.leader_epoch}: it has not "
                f"learnt of epoch {q.leader_epoch} (leader {q.leader_id})"
            )
    # a voter whose node fetches as an observer under another directory id: its disk was
    # replaced (or wiped and formatted again); the voter set still names the old one
    from .quorum import replaced_fix, replaced_text, replaced_voters

    replaced = {r.voter.id: r for r in replaced_voters(q)}
    via = f"--bootstrap-{'controller' if best.kind == 'controller' else 'server'} {best.address}"
    if replaced and verdict == "healthy":
        verdict = "degraded"
    for v in voters:
        if v.id in replaced:
            reasons.append(f"{replaced_text(q, replaced[v.id])}; fix: {replaced_fix(v.id, via)}")
        elif v.id in stale:
            behind = "" if v.lag_time_ms is None else f" ({v.lag_time_ms} ms behind)"
            reasons.append(
                f"voter {v.id} does not answer; its last caught-up time from the leader{behind} predates the probes"
            )
        elif not v.caught_up and k >= m:
            how = f"{v.lag_time_ms} ms behind the leader" if v.lag_time_ms is not None else "not caught up"
            reasons.append(f"voter {v.id} is {how} (fetch timeout {fetch_timeout_ms} ms)")
    for p in unreachable:
        reasons.append(failure(p))
    for p in probes:
        if (
            p.reachable
            and p.kind == "controller"
            and p.leader_view is not None
            and p.leader_view != q.leader_id
            and (p.node_id not in claims or claims[p.node_id][0] is not p)
        ):
            reasons.append(f"{_label(p)} believes the leader is {p.leader_view}, not {q.leader_id}")
    return Health(
        verdict,
        reasons,
        inputs,
        q,
        cluster_id or q.cluster_id,
        voters=voters,
        majority=m,
        caught_up=k,
        can_lose=can_lose,
        notes=notes,
    )


def _ids_text(ids) -> str:
    return ", ".join(str(i) for i in ids) if ids else "none"


def can_restart(h: Health, ids: list[int]) -> RestartAnswer:
    """Strimzi's rule for restarting `ids` now, together: the voters caught up
    (as judged above: a voter that does not answer is not) without them must
    still be a majority. A node that is not a voter does not count towards the
    majority; restarting it is allowed while there is a leader to rejoin."""
    nodes: list[RestartCheck] = []
    if h.leader_id is None or h.quorum is None or h.majority is None:  # a leader's health has its majority
        why = "no controller answered as the leader"
        for i in ids:
            nodes.append(
                RestartCheck(
                    i,
                    any(v.id == i for v in h.voters),
                    None,
                    False,
                    f"{why}: a restarted node could not rejoin a quorum",
                )
            )
        return RestartAnswer(list(ids), False, nodes)
    by_id = {v.id: v for v in h.voters}
    caught = [v.id for v in h.voters if v.caught_up]
    left = [i for i in caught if i not in ids]
    ok = len(left) >= h.majority
    tail = (
        f"without {_ids_text(ids)} the caught-up voters are {_ids_text(left)} ({len(left)} of {len(h.voters)}), "
        f"a majority needs {h.majority}"
    )
    for i in ids:
        v = by_id.get(i)
        if v is None:
            nodes.append(
                RestartCheck(
                    i,
                    False,
                    None,
                    True,
                    f"not a voter (voters {_ids_text(sorted(by_id))}): the quorum's majority does not rest on it",
                )
            )
            continue
        if v.caught_up:
            what = "caught up" + (" (the leader: restarting it starts an election)" if i == h.leader_id else "")
        elif v.reachable is False:
            what = "not caught up (does not answer)"
        elif v.lag_time_ms is not None:
            what = f"not caught up ({v.lag_time_ms} ms behind the leader, fetch timeout {h.fetch_timeout_ms} ms)"
        else:
            what = "not caught up"
        nodes.append(RestartCheck(i, True, v.caught_up, ok, f"{what}; {tail}"))
    return RestartAnswer(list(ids), all(n.allowed for n in nodes), nodes)


def _label(p: Probe) -> str:
    return f"controller {p.node_id} ({p.address})" if p.node_id is not None else str(p.address)


def failure(p: Probe) -> str:
    """A probe's error as a reason, naming its address once (connection errors
    already start with it: "cannot connect to HOST:PORT: ...")."""
    error = cast(str, p.error)  # only a probe that is not ok fails, and that one has its error (Probe.ok)
    if str(p.address) not in error:
        return f"{_label(p)}: {error}"
    return f"controller {p.node_id}: {error}" if p.node_id is not None else error


def exit_status(h: Health, fail_on_lag: bool = False, verdict: str | None = None):
    """0 healthy/degraded (1 degraded with fail_on_lag), 1 unhealthy/stalled/flapping,
    (nothing answered is an error, exit 3, before any verdict); with --can-restart:
    0 allowed, 1 refused."""
    from ..errors import ExitStatus

    verdict = verdict or h.verdict
    if h.restart is not None:
        return ExitStatus.of(not h.restart.allowed)
    return ExitStatus.of(verdict in ("unhealthy", "stalled", "flapping") or (fail_on_lag and verdict == "degraded"))
