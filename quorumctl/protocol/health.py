"""`describe health`: probe every controller we can find, each on its own,
all in parallel, within one deadline, and judge the quorum.

Where addresses come from: the bootstrap lists, `controller.quorum.voters`
(id@host:port) or `controller.quorum.bootstrap.servers` from a server.properties,
and whatever the answers name: the controllers listed by DescribeCluster
(EndpointType=2) and the voters' endpoints in DescribeQuorum v2 `Nodes`. A new
address is probed as soon as it is learnt; every probe shares the deadline, so
the whole check returns within its timeout even when nodes hang.

A probe: connect (TLS/SASL per --command-config), ApiVersions, DescribeCluster
(EndpointType=2, a controller's view of the active controller), DescribeQuorum
(answered in full only by the leader; other controllers say
NOT_LEADER_OR_FOLLOWER; a broker forwards it to the leader).

Verdict (caught-up rule as Strimzi's KafkaQuorumCheck): a voter is caught up
when leader.lastCaughtUpTimestamp - voter.lastCaughtUpTimestamp <
controller.quorum.fetch.timeout.ms (2000 ms by default); the leader is caught up
by definition; with a v0 answer (no timestamps) a voter is caught up when its
log end offset reaches the high watermark. With n voters the quorum needs
m = n // 2 + 1 caught up; it can lose (caught up - m) more.
  healthy    a leader answered, every voter is caught up, every probe answered
  degraded   a leader answered and a majority is caught up, but a voter lags or
             a controller does not answer from here
  unhealthy  no controller answered as leader, or fewer than m voters caught up
Nothing answering at all is not a verdict but an error (exit 3), as in
`describe status`: a typo in an address must not look like a dead quorum.

Only voters are judged: a registered controller that is not a voter (one
removed with remove-controller and wiped stays registered, KAFKA-20395) is a
note, never a reason to be degraded.

`can_restart` answers "may I restart these nodes now?" by Strimzi's rule: the
caught-up voters without them must still be a majority.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from ..errors import ClusterError, QuorumctlError
from . import kerrors
from . import messages
from .client import BROKERS, CONTROLLERS, METADATA_TOPIC, leader_hint, parse_describe_quorum, wrong_endpoint
from ..config.addresses import Address
from .connection import Connection, NodeError
from .quorum import Quorum, quorum_from_partition

DEFAULT_FETCH_TIMEOUT_MS = 2000


@dataclass
class Probe:
    address: Address
    origin: str                       # bootstrap-controller | bootstrap-server | config | discovered
    expected: str                     # controller | broker
    node_id: int | None = None
    kind: str | None = None           # what it turned out to be: controller | broker
    reachable: bool = False
    answered: bool = False            # finished within the deadline
    error: str | None = None
    latency_ms: float | None = None
    cluster_id: str | None = None
    leader_view: int | None = None    # who it believes is the active controller
    leader_epoch: int | None = None
    is_leader: bool = False
    quorum: Quorum | None = None
    listed: dict = field(default_factory=dict)   # id -> Address it told us about
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
    can_restart: bool | None = None   # restarting this voter alone keeps a caught-up majority


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
class Health:
    verdict: str
    reasons: list[str]
    cluster_id: str | None
    leader_id: int | None
    leader_epoch: int | None
    high_watermark: int | None
    voters: list[VoterHealth]
    majority: int | None
    caught_up: int | None
    can_lose: int | None
    fetch_timeout_ms: int
    timeout_s: float
    elapsed_ms: float
    probes: list[Probe]
    quorum: Quorum | None
    notes: list[str] = field(default_factory=list)   # worth knowing, not a reason to be degraded
    restart: RestartAnswer | None = None


def _probe(p: Probe, cfg, deadline: float) -> Probe:
    t0 = time.monotonic()
    try:
        conn = Connection(p.address, cfg, deadline).open()
    except NodeError as e:
        p.error = str(e)
        p.timed_out = e.kind == "timeout"
        p.answered = True
        return p
    p.reachable = True
    p.latency_ms = round((time.monotonic() - t0) * 1000, 1)
    try:
        p.kind = "broker" if conn.supports(messages.METADATA) else "controller"
        if p.kind == "controller" and conn.version_for(messages.DESCRIBE_CLUSTER, lo=1) is not None:
            _, r = conn.request(messages.DESCRIBE_CLUSTER, {"includeClusterAuthorizedOperations": False,
                                                     "endpointType": CONTROLLERS}, lo=1)
            if r["errorCode"] == 0:
                p.cluster_id = r["clusterId"]
                p.leader_view = r["controllerId"] if r["controllerId"] >= 0 else None
                p.listed = {b["brokerId"]: Address(b["host"], b["port"]) for b in r["brokers"]}
        elif p.kind == "broker" and conn.supports(messages.DESCRIBE_CLUSTER):
            _, r = conn.request(messages.DESCRIBE_CLUSTER, {"includeClusterAuthorizedOperations": False,
                                                     "endpointType": BROKERS})
            if r["errorCode"] == 0:
                p.cluster_id = r["clusterId"]
                for b in r["brokers"]:   # which of the listed brokers is this one
                    if Address(b["host"], b["port"]) == p.address:
                        p.node_id = b["brokerId"]
        if not conn.supports(messages.DESCRIBE_QUORUM):
            p.error = f"{conn.name} does not support DescribeQuorum"
        else:
            body = {"topics": [{"topicName": METADATA_TOPIC, "partitions": [{"partitionIndex": 0}]}]}
            version, resp = conn.request(messages.DESCRIBE_QUORUM, body)
            try:
                qr = parse_describe_quorum(conn.name, version, resp)
            except kerrors.KafkaError as err:
                part = getattr(err, "partition", None)
                if err.code == kerrors.NOT_LEADER_OR_FOLLOWER:
                    hint = leader_hint(part)
                    if hint is not None:
                        p.leader_view, p.leader_epoch = hint, part["leaderEpoch"]
                else:
                    p.error = str(err)
            else:
                q = quorum_from_partition(qr.partition, qr.nodes, qr.version, conn.name, p.cluster_id)
                p.quorum = q
                p.leader_view, p.leader_epoch = q.leader_id, q.leader_epoch
                if p.kind == "controller":
                    p.is_leader = True
                    p.node_id = q.leader_id
    except QuorumctlError as e:
        p.error = str(e)
        p.timed_out = isinstance(e, NodeError) and e.kind == "timeout"
    finally:
        conn.close()
        p.answered = True
    return p


def targets_from_server_config(props: dict[str, str], source: str):
    """(voters id->Address, bootstrap Addresses, fetch timeout ms) of a server.properties."""
    from ..config.addresses import parse_address_list, parse_quorum_voters
    voters = parse_quorum_voters(props.get("controller.quorum.voters", ""), source)
    boot = []
    if props.get("controller.quorum.bootstrap.servers", "").strip():
        boot = parse_address_list(props["controller.quorum.bootstrap.servers"],
                                  f"{source}: controller.quorum.bootstrap.servers")
    fetch = props.get("controller.quorum.fetch.timeout.ms")
    fetch_ms = None
    if fetch is not None and fetch.strip():
        from ..errors import InputError
        try:
            fetch_ms = int(fetch.strip())
        except ValueError:
            raise InputError(f"{source}: controller.quorum.fetch.timeout.ms must be an integer") from None
    return voters, boot, fetch_ms


def check_health(cfg, *, controllers: list[Address] = (), servers: list[Address] = (),
                 config_voters: dict[int, Address] | None = None,
                 config_bootstrap: list[Address] = (), timeout_s: float = 5.0,
                 fetch_timeout_ms: int = DEFAULT_FETCH_TIMEOUT_MS, max_probes: int = 64) -> Health:
    import queue
    import threading

    t0 = time.monotonic()
    deadline = t0 + timeout_s
    probes: dict[Address, Probe] = {}
    ids: dict[Address, int] = {}
    for nid, a in (config_voters or {}).items():
        ids[a] = nid
    # one daemon thread per probe: nothing waits for a probe stuck past the
    # deadline (e.g. in a slow DNS lookup), not even interpreter exit
    results: "queue.Queue[Probe]" = queue.Queue()
    running: dict[Address, Probe] = {}

    def work(p: Probe):
        try:
            results.put(_probe(p, cfg, deadline))
        except Exception as e:  # a bug: report it on the probe, do not lose the verdict
            p.error, p.answered = f"internal error: {type(e).__name__}: {e}", True
            results.put(p)

    def launch(addr: Address, origin: str, expected: str):
        if addr in probes or len(probes) >= max_probes or time.monotonic() >= deadline:
            return
        p = Probe(addr, origin, expected, node_id=ids.get(addr))
        probes[addr] = running[addr] = p
        # the worker fills its own copy; a probe still running at the deadline
        # keeps the main thread's record (no shared mutation)
        threading.Thread(target=work, args=(replace(p),), name=f"probe {addr}", daemon=True).start()

    for a in controllers:
        launch(a, "bootstrap-controller", "controller")
    for a in servers:
        launch(a, "bootstrap-server", "broker")
    for a in (config_voters or {}).values():
        launch(a, "config", "controller")
    for a in config_bootstrap:
        launch(a, "config", "controller")

    def learn(nid: int, addr: Address):
        known = [a for a, i in ids.items() if i == nid]
        ids.setdefault(addr, nid)
        if addr in probes and probes[addr].node_id is None:
            probes[addr].node_id = nid
        if not known and addr not in probes:
            launch(addr, "discovered", "controller")

    while running:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            p = results.get(timeout=left)
        except queue.Empty:
            break
        running.pop(p.address, None)
        p.node_id = p.node_id if p.node_id is not None else probes[p.address].node_id
        probes[p.address] = p
        for nid, addr in p.listed.items():
            learn(nid, addr)
        if p.quorum is not None:
            for nid, eps in p.quorum.nodes.items():
                if eps:
                    learn(nid, Address(eps[0].host, eps[0].port))
        if p.node_id is not None:
            ids.setdefault(p.address, p.node_id)
    # a probe that timed out just before the deadline and one still waiting
    # at the deadline are the same case: say it the same way
    for p in list(running.values()) + [p for p in probes.values() if p.timed_out]:
        p.error = f"no answer within the {timeout_s:g} s timeout"
    for a, p in probes.items():
        if p.node_id is None and a in ids:
            p.node_id = ids[a]
    # a bootstrap address of the wrong kind: the same error (exit 2) as `describe status`
    for p in probes.values():
        if p.origin in ("bootstrap-controller", "bootstrap-server") and p.kind and p.kind != p.expected:
            raise wrong_endpoint(str(p.address), "server" if p.expected == "broker" else "controller")
    if not any(p.reachable for p in probes.values()):
        failed = [_failure(p) for p in probes.values()]
        raise ClusterError(failed[0] if len(failed) == 1 else "nothing answered: " + "; ".join(failed))
    return judge(list(probes.values()), config_voters or {}, fetch_timeout_ms, timeout_s,
                 (time.monotonic() - t0) * 1000)


def _caught_up(q: Quorum, leader, r, fetch_timeout_ms: int):
    if r is leader:
        return True, 0
    if q.has_timestamps:
        if leader is None or leader.last_caught_up is None or r.last_caught_up is None:
            return False, None
        lag_ms = leader.last_caught_up - r.last_caught_up
        return lag_ms < fetch_timeout_ms, lag_ms
    return r.log_end_offset >= q.high_watermark, None


def judge(probes: list[Probe], config_voters: dict[int, Address], fetch_timeout_ms: int,
          timeout_s: float, elapsed_ms: float) -> Health:
    reasons: list[str] = []
    answers = [p for p in probes if p.quorum is not None]
    best = max(answers, key=lambda p: (p.quorum.leader_epoch, p.kind == "controller"), default=None)
    by_id: dict[int, Probe] = {}
    for p in probes:
        if p.node_id is not None and (p.node_id not in by_id or p.reachable):
            by_id[p.node_id] = p
    cluster_id = next((p.cluster_id for p in probes if p.cluster_id), None)

    def reach(nid):
        p = by_id.get(nid)
        return None if p is None else p.ok

    unreachable = [p for p in probes if p.expected == "controller" and not p.ok]
    if best is None:
        voters = [VoterHealth(nid, None, None, None, None, a, reach(nid))
                  for nid, a in sorted(config_voters.items())]
        views = {}
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
            reasons.append(_failure(p))
        return Health("unhealthy", reasons, cluster_id, None, None, None, voters,
                      (n // 2 + 1) if n else None, None, None, fetch_timeout_ms, timeout_s,
                      elapsed_ms, probes, None)

    q = best.quorum
    leader = q.leader()
    voter_ids = {r.id for r in q.voters}
    notes: list[str] = []
    # controllers that are not voters (known by id: DescribeCluster's registrations, the
    # config), given or learnt: noted, not judged (a removed controller stays
    # registered, KAFKA-20395, and a monitor's list of addresses outlives it)
    registered = [p for p in unreachable if p.node_id is not None and p.node_id not in voter_ids]
    unreachable = [p for p in unreachable if p not in registered]
    for p in registered:
        notes.append(f"controller {p.node_id} ({p.address}) is registered but not a voter, and does not answer: "
                     f"a stale registration? (`quorumctl doctor` says how to clear it): {p.error}")
    for p in probes:
        if (p.ok and p.kind == "controller" and p.node_id is not None and p.node_id not in voter_ids
                and p.node_id != q.leader_id):
            notes.append(f"controller {p.node_id} ({p.address}) is registered and answers, but is not a voter")
    voters: list[VoterHealth] = []
    stale: set[int] = set()   # caught up by the leader's answer, silent to our probe since
    for r in q.voters:
        ok, lag_ms = _caught_up(q, leader, r, fetch_timeout_ms)
        if ok and r is not leader and reach(r.id) is False:
            # The leader's answer came before the probes timed out: its lastCaughtUp for a
            # voter that has since not answered (frozen, partitioned) is history, and a
            # quorum must not be judged on it ("can lose 1 more" with 2 of 3 silent).
            ok = False
            stale.add(r.id)
        eps = q.endpoints(r.id)
        addr = by_id[r.id].address if r.id in by_id else (Address(eps[0].host, eps[0].port) if eps else config_voters.get(r.id))
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
    if k < m:
        verdict = "unhealthy"
        reasons.insert(0, f"only {k} of {n} voters are caught up; a majority needs {m}")
    else:
        lagging = [v for v in voters if not v.caught_up]
        verdict = "degraded" if lagging or unreachable else "healthy"
    for v in voters:
        if v.id in stale:
            behind = "" if v.lag_time_ms is None else f" ({v.lag_time_ms} ms behind)"
            reasons.append(f"voter {v.id} does not answer; its last caught-up time from the leader{behind} "
                           "predates the probes")
        elif not v.caught_up and k >= m:
            how = f"{v.lag_time_ms} ms behind the leader" if v.lag_time_ms is not None else "not caught up"
            reasons.append(f"voter {v.id} is {how} (fetch timeout {fetch_timeout_ms} ms)")
    for p in unreachable:
        reasons.append(_failure(p))
    for p in probes:
        if p.reachable and p.kind == "controller" and p.leader_view is not None and p.leader_view != q.leader_id:
            reasons.append(f"{_label(p)} believes the leader is {p.leader_view}, not {q.leader_id}")
    return Health(verdict, reasons, cluster_id or q.cluster_id, q.leader_id, q.leader_epoch,
                  q.high_watermark, voters, m, k, can_lose, fetch_timeout_ms, timeout_s,
                  elapsed_ms, probes, q, notes)


def _ids_text(ids) -> str:
    return ", ".join(str(i) for i in ids) if ids else "none"


def can_restart(h: Health, ids: list[int]) -> RestartAnswer:
    """Strimzi's rule for restarting `ids` now, together: the voters caught up
    (as judged above: a voter that does not answer is not) without them must
    still be a majority. A node that is not a voter does not count towards the
    majority; restarting it is allowed while there is a leader to rejoin."""
    nodes: list[RestartCheck] = []
    if h.leader_id is None or h.quorum is None:
        why = "no controller answered as the leader"
        for i in ids:
            nodes.append(RestartCheck(i, any(v.id == i for v in h.voters), None, False,
                                      f"{why}: a restarted node could not rejoin a quorum"))
        return RestartAnswer(list(ids), False, nodes)
    by_id = {v.id: v for v in h.voters}
    caught = [v.id for v in h.voters if v.caught_up]
    left = [i for i in caught if i not in ids]
    ok = len(left) >= h.majority
    tail = (f"without {_ids_text(ids)} the caught-up voters are {_ids_text(left)} ({len(left)} of {len(h.voters)}), "
            f"a majority needs {h.majority}")
    for i in ids:
        v = by_id.get(i)
        if v is None:
            nodes.append(RestartCheck(i, False, None, True,
                                      f"not a voter (voters {_ids_text(sorted(by_id))}): the quorum's majority "
                                      "does not rest on it"))
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


def _failure(p: Probe) -> str:
    """A probe's error as a reason, naming its address once (connection errors
    already start with it: "cannot connect to HOST:PORT: ...")."""
    if str(p.address) not in p.error:
        return f"{_label(p)}: {p.error}"
    return f"controller {p.node_id}: {p.error}" if p.node_id is not None else p.error


def probe_quorum(bootstrap_server: str | None, bootstrap_controller: str | None, config: str | None,
                 command_config: str | None, timeout: float, fetch_timeout_ms: int | None,
                 restart_ids: list[int] | None = None) -> Health:
    """`describe health` from Kafka-style options: the targets come from the
    addresses given and the server config's voters / bootstrap servers; the
    caught-up threshold from the option, else the config, else Kafka's default.
    With `restart_ids`, also whether those nodes may be restarted now."""
    from ..errors import InputError
    from .connection import load_client_config
    from ..config.addresses import parse_address_list

    if timeout <= 0:
        raise InputError(f"--timeout must be positive, not {timeout:g}")
    cfg = load_client_config(command_config)
    voters, boot, cfg_fetch = {}, [], None
    if config:
        from ..config.properties import load_properties
        voters, boot, cfg_fetch = targets_from_server_config(load_properties(config, "server config"), config)
    controllers = parse_address_list(bootstrap_controller, "--bootstrap-controller") if bootstrap_controller else []
    servers = parse_address_list(bootstrap_server, "--bootstrap-server") if bootstrap_server else []
    if not (controllers or servers or voters or boot):
        raise InputError("nothing to probe: give --bootstrap-controller, --bootstrap-server, or --config "
                         "with controller.quorum.voters / controller.quorum.bootstrap.servers")
    fetch = fetch_timeout_ms if fetch_timeout_ms is not None else (cfg_fetch or DEFAULT_FETCH_TIMEOUT_MS)
    if fetch <= 0:
        raise InputError(f"--fetch-timeout-ms must be positive, not {fetch}")
    h = check_health(cfg, controllers=controllers, servers=servers, config_voters=voters,
                     config_bootstrap=boot, timeout_s=timeout, fetch_timeout_ms=fetch)
    if restart_ids:
        h.restart = can_restart(h, restart_ids)
    return h


# -- --watch: a short history and what it shows ------------------------------------------

STALL_SAMPLES = 3          # the high watermark still (or no leader) over this many samples: stalled
FLAPPING_EPOCHS = 3        # this many epoch changes within a minute: flapping
FLAP_WINDOW_S = 60.0


@dataclass
class Sample:
    at: float                 # time.time()
    verdict: str
    leader_id: int | None
    leader_epoch: int | None
    high_watermark: int | None
    leader_leo: int | None


def sample_of(h: Health, at: float | None = None) -> Sample:
    leader = h.quorum.leader() if h.quorum is not None else None
    return Sample(time.time() if at is None else at, h.verdict, h.leader_id, h.leader_epoch,
                  h.high_watermark, None if leader is None else leader.log_end_offset)


def _span(a: Sample, b: Sample) -> str:
    return f"{b.at - a.at:.0f} s"


class History:
    """The samples of `describe health --watch` and the verdicts only a history
    shows: `stalled` (the high watermark does not move while the leader's log
    grows, or no leader, for `stall_samples` samples: a healthy KRaft leader
    commits a no-op at least every metadata.max.idle.interval.ms, 500 ms) and
    `flapping` (`flapping_epochs` or more leader epoch changes within a minute)."""

    def __init__(self, stall_samples: int = STALL_SAMPLES, flapping_epochs: int = FLAPPING_EPOCHS,
                 keep: int = 30):
        self.stall_samples, self.flapping_epochs, self.keep = stall_samples, flapping_epochs, keep
        self.samples: list[Sample] = []

    def add(self, s: Sample) -> None:
        self.samples.append(s)
        # keep at least a minute's worth for the flapping count
        while len(self.samples) > self.keep and s.at - self.samples[0].at > FLAP_WINDOW_S:
            self.samples.pop(0)

    def stalled(self) -> str | None:
        w = self.samples[-self.stall_samples:]
        if len(w) < self.stall_samples or w[-1].verdict == "unreachable":
            return None
        led = [s for s in w if s.leader_id is not None and s.high_watermark is not None and s.high_watermark >= 0]
        span = _span(w[0], w[-1])
        if not led:
            return f"stalled: no leader for {len(w)} samples ({span})"
        hw = led[0].high_watermark
        if any(s.high_watermark > hw for s in led):
            return None
        leaderless = len(w) - len(led)
        grew = (len(led) >= 2 and led[0].leader_leo is not None and led[-1].leader_leo is not None
                and led[-1].leader_leo > led[0].leader_leo)
        if not grew and not leaderless:
            return None
        what = []
        if grew:
            what.append(f"while the leader's log end offset grew {led[0].leader_leo} -> {led[-1].leader_leo}")
        if leaderless:
            what.append(f"with no leader in {leaderless} of them")
        return f"stalled: the high watermark stayed at {hw} for {len(w)} samples ({span}) " + " and ".join(what)

    def epoch_changes(self) -> tuple[int, Sample | None, Sample | None]:
        """Leader epoch changes within the last minute: (count, first, last sample with an epoch)."""
        now = self.samples[-1].at if self.samples else 0
        known = [s for s in self.samples if s.leader_epoch is not None and now - s.at <= FLAP_WINDOW_S]
        if len(known) < 2:
            return 0, None, None
        return max(s.leader_epoch for s in known) - known[0].leader_epoch, known[0], known[-1]

    def flapping(self) -> str | None:
        n, first, last = self.epoch_changes()
        if n < self.flapping_epochs:
            return None
        return (f"flapping: the leader epoch changed {n} times in {_span(first, last)} "
                f"(epoch {first.leader_epoch} -> {max(s.leader_epoch for s in self.samples if s.leader_epoch is not None)}; "
                f"{self.flapping_epochs} or more within a minute is flapping)")


def watch_verdict(h: Health, history: History) -> tuple[str, list[str]]:
    """The verdict with the history taken into account, and the reasons that say why."""
    stalled, flapping = history.stalled(), history.flapping()
    extra = [r for r in (stalled, flapping) if r]
    if stalled:
        return "stalled", extra
    if flapping:
        return "flapping", extra
    return h.verdict, extra


def exit_status(h: Health, fail_on_lag: bool = False, verdict: str | None = None):
    """0 healthy/degraded (1 degraded with fail_on_lag), 1 unhealthy/stalled/flapping,
    (nothing answered is an error, exit 3, before any verdict); with --can-restart:
    0 allowed, 1 refused."""
    from ..errors import ExitStatus
    verdict = verdict or h.verdict
    if h.restart is not None:
        return ExitStatus.of(not h.restart.allowed)
    return ExitStatus.of(verdict in ("unhealthy", "stalled", "flapping") or (fail_on_lag and verdict == "degraded"))


def parse_node_ids(values, option: str) -> list[int]:
    """`--can-restart 2 --can-restart 3,4` -> [2, 3, 4] (each id once, in order)."""
    from ..errors import InputError
    ids: list[int] = []
    for v in values or []:
        for part in str(v).split(","):
            part = part.strip()
            try:
                i = int(part)
            except ValueError:
                raise InputError(f"invalid {option} {part!r}: expected a node id (an integer)") from None
            if i < 0:
                raise InputError(f"invalid {option} {part!r}: a node id is not negative")
            if i not in ids:
                ids.append(i)
    return ids
