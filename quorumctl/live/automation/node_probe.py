"""`quorumctl probe`: is *this* node attached to the quorum? For Kubernetes
startup, readiness and liveness probes and for roll scripts.

Two views are gathered within one deadline, in parallel:
  the node's own   ApiVersions (it answers, and as which role); a controller's
                   DescribeCluster(EndpointType=2) names the leader it follows
                   (-1: it knows none); a broker's DescribeCluster (v2,
                   IncludeFencedBrokers) says whether it is registered and
                   fenced; from its log dir, when given: quorum-state (the
                   leader and epoch it last wrote) and how long ago its log end
                   last moved (an attached replica appends at least every
                   metadata.max.idle.interval.ms, 500 ms, the leader's no-op)
  the leader's     `health_probe.check_health` over every controller we can
                   find (the node itself, --bootstrap-controller, --config's
                   voters): who leads in which epoch, the voters caught up, and
                   this node's replica state in DescribeQuorum (voter or
                   observer: log end, last fetch, last caught up). A broker
                   forwards DescribeQuorum to the leader, so a broker's probe
                   gets the leader's view through the broker too.

The decision (`decide`) is a pure function of those facts (`Facts`):
  startup  the node answers Kafka's protocol in the expected role
  ready    controller: it follows the leader that leads the newest epoch (or
           is that leader, with a caught-up majority), and the leader counts
           it caught up (lastCaughtUp within controller.quorum.fetch.timeout.ms)
           broker: registered, unfenced, and caught up as an observer
  live     fails only on a wedge a restart fixes: the node is attached to
           nothing (it does not answer, knows no leader, follows another, or
           the leader has not heard from it) for longer than the grace period,
           proven by the leader's last-fetch time of it or by its log end not
           moving, while the others have a leader with a caught-up majority
           without it. A quorum that lost its majority, a prober that cannot
           see any leader, and a detachment of unknown age all pass: a restart
           would not help there, and every pod crash-looping makes it worse.
Exit statuses: 0 passes, 1 fails (with the reason), 3 nothing answered at all
(startup and ready: `ClusterError`; liveness passes then, saying why).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

from ...config.addresses import Address
from ...errors import ClusterError, ExitStatus, InputError, QuorumctlError
from ...wire import messages
from ...wire.client import BROKERS, METADATA_TOPIC, parse_describe_quorum
from ...wire.access import ClusterAccess
from ...wire.connection import Connection, NodeError
from ...domain.health_verdict import DEFAULT_FETCH_TIMEOUT_MS, Health
from ...domain.quorum import Quorum, Replica, quorum_from_partition

KINDS = ("startup", "ready", "live")
ROLES = ("controller", "broker")
DEFAULT_GRACE_S = 30.0


@dataclass
class LogDirView:
    """What the node's own log dir says (read-only; nothing is locked)."""

    path: str
    node_id: int | None = None
    state_leader_id: int | None = None  # quorum-state: the leader it last recorded (None: none)
    state_epoch: int | None = None
    state_age_s: float | None = None  # since quorum-state was last written
    log_end_offset: int | None = None  # the end of its last complete batch
    log_age_s: float | None = None  # since its active segment last grew
    error: str | None = None


@dataclass
class Facts:
    """Everything `decide` looks at; filled by `probe_node`, built by hand in tests."""

    role: str
    address: str
    node_id: int | None = None
    answers: bool = False  # ApiVersions answered
    answered_as: str | None = None  # controller | broker
    error: str | None = None  # why it did not answer (or a request failed)
    follows: int | None = None  # controller: the leader it names (None: none)
    registered: bool | None = None  # broker: listed by its own DescribeCluster
    fenced: bool | None = None  # broker: IsFenced (None: not known, DescribeCluster < v2)
    # the leader's view (None: no controller answered as the leader)
    leader_id: int | None = None
    leader_epoch: int | None = None
    high_watermark: int | None = None
    leader_now_ms: int | None = None  # the leader's clock: its own replica's last fetch time
    replica: str | None = None  # voter | observer | None (the leader has no record of it)
    log_end_offset: int | None = None
    last_fetch_ms: int | None = None
    last_caught_up_ms: int | None = None
    voters: int | None = None
    caught_up_without: int | None = None  # voters caught up, this node not counted
    majority: int | None = None
    peers_answered: int = 0  # other controllers that answered at all
    log_dir: LogDirView | None = None
    fetch_timeout_ms: int = DEFAULT_FETCH_TIMEOUT_MS

    def silent_ms(self) -> int | None:
        """How long the leader has not heard from the node, by the leader's clock."""
        if self.last_fetch_ms is None or self.leader_now_ms is None:
            return None
        return max(self.leader_now_ms - self.last_fetch_ms, 0)

    def caught_up(self) -> bool | None:
        """Caught up by the leader's clock (Strimzi's rule, as `describe health`)."""
        if self.leader_id is not None and self.node_id == self.leader_id:
            return True
        if self.replica is None:
            return None
        if self.last_caught_up_ms is None or self.leader_now_ms is None:
            # a v0 answer (no timestamps): caught up when its log end reaches the high watermark
            if self.log_end_offset is None or self.high_watermark is None:
                return None
            return self.log_end_offset >= self.high_watermark
        return self.leader_now_ms - self.last_caught_up_ms < self.fetch_timeout_ms


@dataclass
class Verdict:
    kind: str
    role: str
    ok: bool
    status: int
    reason: str
    facts: Facts
    grace_s: float
    detached_s: float | None = None  # how long it has been attached to nothing (live), if known
    checks: list[tuple[str, bool | None, str]] = field(default_factory=list)


def _who(f: Facts) -> str:
    return f"{f.role} {f.node_id} ({f.address})" if f.node_id is not None else f"{f.role} at {f.address}"


def _ms(ms: int | None) -> str:
    return "an unknown time" if ms is None else (f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms} ms")


def attachment(f: Facts) -> tuple[bool, str]:
    """(attached, why): is the node following the current leader, and does the
    leader count it caught up? The readiness question, for both roles."""
    if not f.answers:
        return False, f"does not answer: {f.error or 'no answer'}"
    if f.answered_as is not None and f.answered_as != f.role:
        return False, f"answers as a {f.answered_as}, not a {f.role}"
    if f.role == "controller":
        if f.leader_id is None:
            if f.follows is None:
                return False, "knows no leader, and no controller answered as the leader"
            return False, f"follows leader {f.follows}, but no controller answered as the leader"
        if f.node_id == f.leader_id:
            if f.majority is not None and f.caught_up_without is not None and f.caught_up_without + 1 < f.majority:
                return False, (
                    f"leads epoch {f.leader_epoch}, but only {f.caught_up_without + 1} of "
                    f"{f.voters} voters are caught up (a majority needs {f.majority})"
                )
            return True, f"the leader of epoch {f.leader_epoch}"
        if f.follows is None:
            return False, f"knows no leader while {f.leader_id} leads epoch {f.leader_epoch}"
        if f.follows != f.leader_id:
            return False, f"follows {f.follows}, but {f.leader_id} leads epoch {f.leader_epoch}"
    else:
        if f.registered is False:
            return False, "is not registered with the controllers (not among the brokers it lists)"
        if f.fenced:
            return False, "is registered but fenced"
        if f.registered is None and f.leader_id is None:
            return False, "no leader answered: its registration cannot be checked"
        if f.leader_id is None:
            return False, "no controller answered as the leader"
    if f.node_id is None:
        return False, "its node id is unknown (give --node-id): the leader's record of it cannot be found"
    if f.replica is None:
        return False, (f"the leader {f.leader_id} (epoch {f.leader_epoch}) has no record of node {f.node_id} fetching")
    cu = f.caught_up()
    if cu is False:
        behind = (
            ""
            if f.log_end_offset is None or f.high_watermark is None
            else f", log end {f.log_end_offset} vs high watermark {f.high_watermark}"
        )
        last = (
            f.leader_now_ms - f.last_caught_up_ms
            if f.last_caught_up_ms is not None and f.leader_now_ms is not None
            else None
        )
        return False, (
            f"not caught up: last caught up {_ms(last)} ago by the leader's clock (fetch timeout "
            f"{f.fetch_timeout_ms} ms{behind})"
        )
    if cu is None:
        return False, "the leader's answer does not say whether it is caught up"
    what = "a voter" if f.replica == "voter" else "an observer"
    return True, (
        f"{what} caught up with leader {f.leader_id} in epoch {f.leader_epoch}"
        + ("" if f.log_end_offset is None else f" (log end {f.log_end_offset})")
    )


def detached_for(f: Facts) -> float | None:
    """Seconds the node has been attached to nothing, when something proves it:
    the leader's last fetch of it (its clock), else its log end standing still."""
    ms = f.silent_ms()
    if ms is not None:
        return ms / 1000
    if f.log_dir is not None and f.log_dir.log_age_s is not None:
        return f.log_dir.log_age_s
    return None


def decide(f: Facts, kind: str, grace_s: float = DEFAULT_GRACE_S) -> Verdict:
    if kind == "startup":
        ok = f.answers and (f.answered_as in (None, f.role))
        if ok:
            why = f"answers as a {f.role}"
        elif f.answers:
            why = f"answers as a {f.answered_as}, not a {f.role}"
        else:
            why = f"does not answer: {f.error or 'no answer'}"
        return Verdict(kind, f.role, ok, ExitStatus.of(not ok), f"{_who(f)} {why}", f, grace_s)
    attached, why = attachment(f)
    if kind == "ready":
        return Verdict(
            kind,
            f.role,
            attached,
            ExitStatus.of(not attached),
            f"{_who(f)} is {'ready' if attached else 'not ready'}: {why}",
            f,
            grace_s,
        )
    # live
    if attached:
        return Verdict(kind, f.role, True, ExitStatus.OK, f"{_who(f)} is live: {why}", f, grace_s, 0.0)
    if f.answered_as is not None and f.answered_as != f.role:
        return Verdict(kind, f.role, False, ExitStatus.PROBLEMS, f"{_who(f)} is not live: {why}", f, grace_s)
    others = f.leader_id is not None and f.leader_id != f.node_id
    if not others:
        if f.leader_id is None:
            tail = (
                "no controller answered as the leader (a quorum without a majority, or none reachable "
                "from here): a restart would not help"
            )
        else:
            tail = "it is the leader itself"
        return Verdict(
            kind,
            f.role,
            True,
            ExitStatus.OK,
            f"{_who(f)} is live (not attached: {why}; liveness holds: {tail})",
            f,
            grace_s,
        )
    if (
        f.role == "controller"
        and f.majority is not None
        and f.caught_up_without is not None
        and f.caught_up_without < f.majority
    ):
        return Verdict(
            kind,
            f.role,
            True,
            ExitStatus.OK,
            f"{_who(f)} is live (not attached: {why}; liveness holds: the others are "
            f"{f.caught_up_without} caught-up voters of {f.voters}, short of a majority of "
            f"{f.majority}: the quorum itself is in trouble)",
            f,
            grace_s,
        )
    gone = detached_for(f)
    if gone is None:
        return Verdict(
            kind,
            f.role,
            True,
            ExitStatus.OK,
            f"{_who(f)} is live (not attached: {why}; liveness holds: for how long is unknown: "
            "the leader has no fetch time of it and no --log-dir was given)",
            f,
            grace_s,
        )
    if gone <= grace_s:
        return Verdict(
            kind,
            f.role,
            True,
            ExitStatus.OK,
            f"{_who(f)} is live (not attached for {gone:.1f} s: {why}; the grace period is {grace_s:g} s)",
            f,
            grace_s,
            gone,
        )
    return Verdict(
        kind,
        f.role,
        False,
        ExitStatus.PROBLEMS,
        f"{_who(f)} is not live: attached to nothing for {gone:.1f} s (grace {grace_s:g} s) while "
        f"{f.leader_id} leads epoch {f.leader_epoch}: {why}",
        f,
        grace_s,
        gone,
    )


# -- gathering the facts ---------------------------------------------------------------


def read_log_dir(path: str, now: float | None = None) -> LogDirView:
    """meta.properties' node id, quorum-state's leader and epoch and its age, and
    the metadata log's end offset and how long ago it last grew."""
    from ...logdir import statefiles
    from ...logdir.segments import scan_partition
    from ...raft.replica import resolve_partition_dir

    now = time.time() if now is None else now
    root, part = resolve_partition_dir(path)
    v = LogDirView(path)
    try:
        meta = statefiles.read_meta_properties(os.path.join(root, "meta.properties"))
        v.node_id = meta.get("node.id") if isinstance(meta.get("node.id"), int) else None
    except (InputError, OSError):
        pass
    qs = os.path.join(part, "quorum-state")
    if os.path.isfile(qs):
        try:
            st = statefiles.read_quorum_state(qs)
            v.state_leader_id = st.get("leaderId") if st.get("leaderId", -1) >= 0 else None
            v.state_epoch = st.get("leaderEpoch")
            v.state_age_s = max(now - os.stat(qs).st_mtime, 0.0)
        except (InputError, OSError) as e:
            v.error = str(e)
    pf = scan_partition(part)
    if pf.segments:
        seg = pf.segments[-1]
        if seg.log:
            info = os.stat(seg.log)
            v.log_age_s = max(now - info.st_mtime, 0.0)
            v.log_end_offset = _log_end(seg.log, seg.base_offset, info.st_size)
    return v


def _log_end(path: str, base_offset: int, size: int) -> int | None:
    """The offset after the last complete batch of the active segment, walked from
    its offset index's last entry (a few batch headers, not the segment)."""
    from ...logdir.indexes import read_offset_index
    from ...records.batch import (
        LAST_OFFSET_DELTA,
        LAST_OFFSET_DELTA_OFFSET,
        LENGTH_PREFIX,
        LOG_OVERHEAD,
        MIN_RECORD_OVERHEAD,
    )

    start = 0
    idx = path[: -len(".log")] + ".index"
    try:
        entries = read_offset_index(idx, base_offset) if os.path.isfile(idx) else []
        if entries:
            start = entries[-1][1]
    except (InputError, OSError, ValueError):
        start = 0
    need = LAST_OFFSET_DELTA_OFFSET + LAST_OFFSET_DELTA.size
    last = None
    pos = start
    with open(path, "rb") as fh:
        while size - pos >= need:
            head = os.pread(fh.fileno(), need, pos)
            if len(head) < need:
                break
            base, length = LENGTH_PREFIX.unpack_from(head, 0)
            if length < MIN_RECORD_OVERHEAD or pos + LOG_OVERHEAD + length > size:
                break  # a preallocated zero tail or a torn last batch: the end
            last = base + LAST_OFFSET_DELTA.unpack_from(head, LAST_OFFSET_DELTA_OFFSET)[0]
            pos += LOG_OVERHEAD + length
    return None if last is None else last + 1


def _broker_view(addr: Address, cfg, deadline: float, node_id: int | None) -> dict:
    """A broker's own answers: role, registration and fencing, and the leader's
    view that it forwards (DescribeQuorum)."""
    out: dict = {
        "answers": False,
        "error": None,
        "as": None,
        "node_id": node_id,
        "registered": None,
        "fenced": None,
        "quorum": None,
    }
    try:
        conn = Connection(addr, cfg, deadline).open()
    except NodeError as e:
        out["error"] = str(e)
        return out
    out["answers"] = True
    try:
        out["as"] = "broker" if conn.supports(messages.METADATA) else "controller"
        if out["as"] != "broker":
            return out
        v2 = conn.version_for(messages.DESCRIBE_CLUSTER, lo=2) is not None
        if conn.supports(messages.DESCRIBE_CLUSTER):
            _, r = conn.request(
                messages.DESCRIBE_CLUSTER,
                {"includeClusterAuthorizedOperations": False, "endpointType": BROKERS, "includeFencedBrokers": True},
            )
            if r["errorCode"] == 0:
                out["cluster_id"] = r["clusterId"]
                me = [
                    b
                    for b in r["brokers"]
                    if (node_id is not None and b["brokerId"] == node_id)
                    or (node_id is None and Address(b["host"], b["port"]) == addr)
                ]
                if me:
                    out["node_id"] = me[0]["brokerId"]
                    out["registered"] = True
                    out["fenced"] = bool(me[0].get("isFenced")) if v2 else False
                else:
                    # v2 lists fenced brokers too: absent means not registered; before v2 it may be fenced
                    out["registered"] = False if v2 else None
                    out["fenced"] = None
        if conn.supports(messages.DESCRIBE_QUORUM):
            body = {"topics": [{"topicName": METADATA_TOPIC, "partitions": [{"partitionIndex": 0}]}]}
            version, resp = conn.request(messages.DESCRIBE_QUORUM, body)
            qr = parse_describe_quorum(conn.name, version, resp)
            out["quorum"] = quorum_from_partition(qr.partition, qr.nodes, qr.version, conn.name)
    except QuorumctlError as e:
        out["error"] = str(e)
    finally:
        conn.close()
    return out


def _find(q: Quorum, nid: int | None) -> tuple[str | None, Replica | None]:
    if nid is None:
        return None, None
    for r in q.voters:
        if r.id == nid:
            return "voter", r
    for r in q.observers:
        if r.id == nid:
            return "observer", r
    return None, None


def facts_from(
    role: str,
    addr: Address,
    h: Health | None,
    own: dict | None,
    node_id: int | None,
    fetch_timeout_ms: int,
    log_dir: LogDirView | None,
) -> Facts:
    """The facts of one probe run: the health check over the controllers (`h`,
    None when nothing answered) and, for a broker, its own answers (`own`)."""
    f = Facts(role, str(addr), node_id=node_id, fetch_timeout_ms=fetch_timeout_ms, log_dir=log_dir)
    q = h.quorum if h is not None else None
    if role == "controller":
        me = next((p for p in (h.probes if h else []) if p.address == addr), None)
        if me is not None:
            f.answers = me.reachable  # connected and answered ApiVersions in time
            f.answered_as = me.kind
            f.error = me.error
            f.follows = me.node_id if me.is_leader else me.leader_view
            if f.node_id is None:
                f.node_id = me.node_id
        f.peers_answered = sum(1 for p in (h.probes if h else []) if p.address != addr and p.reachable)
    else:
        own = own or {}
        f.answers, f.answered_as, f.error = own.get("answers", False), own.get("as"), own.get("error")
        f.registered, f.fenced = own.get("registered"), own.get("fenced")
        if f.node_id is None:
            f.node_id = own.get("node_id")
        oq = own.get("quorum")
        if oq is not None and (q is None or oq.leader_epoch > q.leader_epoch):
            q = oq
        f.peers_answered = sum(1 for p in (h.probes if h else []) if p.reachable)
    if f.node_id is None and log_dir is not None:
        f.node_id = log_dir.node_id
    if q is None:
        return f
    f.leader_id, f.leader_epoch, f.high_watermark = q.leader_id, q.leader_epoch, q.high_watermark
    lead = q.leader()
    f.leader_now_ms = lead.last_fetch if lead is not None else None
    f.replica, r = _find(q, f.node_id)
    if r is not None:
        f.log_end_offset, f.last_fetch_ms, f.last_caught_up_ms = r.log_end_offset, r.last_fetch, r.last_caught_up
    if h is not None and h.quorum is q:
        f.voters, f.majority = len(h.voters), h.majority
        f.caught_up_without = sum(1 for v in h.voters if v.caught_up and v.id != f.node_id)
    else:
        n = len(q.voters)
        f.voters, f.majority = n, n // 2 + 1
        f.caught_up_without = None
    return f


def _check_role(addr: Address, role: str, answered_as: str | None) -> None:
    """A node answering in the other role is bad input (exit 2), not a verdict."""
    if answered_as is not None and answered_as != role:
        raise InputError(f"{addr} answers as a {answered_as}, not a {role}: check --role and the addresses")


def probe_node(
    address: str,
    role: str,
    kind: str,
    *,
    access: ClusterAccess,
    config: str | None = None,
    timeout: float = 5.0,
    grace_s: float = DEFAULT_GRACE_S,
    fetch_timeout_ms: int | None = None,
    node_id: int | None = None,
    log_dir: str | None = None,
) -> Verdict:
    """`quorumctl probe`: gather the facts about the node at `address` within
    `timeout` seconds and decide `kind` for `role`. A broker is asked with the
    client configuration, the controllers with the controllers' when given."""
    from ...config.addresses import parse_address, parse_address_list
    from ..health.probe import check_health, targets_from_server_config

    if role not in ROLES:
        raise InputError(f"invalid --role {role!r}: expected one of {', '.join(ROLES)}")
    if kind not in KINDS:
        raise InputError(f"invalid --kind {kind!r}: expected one of {', '.join(KINDS)}")
    addr = parse_address(address, "NODE_ADDRESS")
    cfg = access.client_config()
    ccfg = access.controller_client_config() or cfg
    voters: dict[int, Address] = {}
    boot: list[Address] = []
    cfg_fetch = None
    if config:
        from ...config.properties import load_properties

        props = load_properties(config, "server config")
        voters, boot, cfg_fetch = targets_from_server_config(props, config)
        if node_id is None and props.get("node.id", "").strip().isdigit():
            node_id = int(props["node.id"].strip())
    fetch = fetch_timeout_ms if fetch_timeout_ms is not None else (cfg_fetch or DEFAULT_FETCH_TIMEOUT_MS)
    # the option is checked where it is parsed (cli/options.py), but this may be the config's value
    if fetch <= 0:
        raise InputError(f"--fetch-timeout-ms must be positive, not {fetch}")
    controllers = parse_address_list(access.controllers, "--bootstrap-controller") if access.controllers else []
    ld = read_log_dir(log_dir) if log_dir else None
    if node_id is None and ld is not None:
        node_id = ld.node_id
    deadline = time.monotonic() + timeout

    if kind == "startup":
        f = Facts(role, str(addr), node_id=node_id, fetch_timeout_ms=fetch, log_dir=ld)
        try:
            conn = Connection(addr, cfg if role == "broker" else ccfg, deadline).open()
        except NodeError as e:
            f.error = str(e)
        else:
            f.answers = True
            f.answered_as = "broker" if conn.supports(messages.METADATA) else "controller"
            conn.close()
            _check_role(addr, role, f.answered_as)
        v = decide(f, kind, grace_s)
        if not f.answers:  # nothing answered: an error (exit 3), as every command says it
            raise ClusterError(v.reason)
        return v

    own: dict | None = None
    worker = None
    if role == "broker":
        box: dict = {}
        worker = threading.Thread(
            target=lambda: box.update(_broker_view(addr, cfg, deadline, node_id)),
            name=f"probe broker {addr}",
            daemon=True,
        )
        worker.start()
        targets = controllers
    else:
        targets = [addr] + [a for a in controllers if a != addr]
    h: Health | None = None
    if targets or voters or boot:
        from ...wire.client import WrongEndpointType

        try:
            h = check_health(
                ccfg,
                controllers=targets,
                config_voters=voters,
                config_bootstrap=boot,
                timeout_s=timeout,
                fetch_timeout_ms=fetch,
            )
        except ClusterError:
            h = None  # nothing answered: the facts say so
        except WrongEndpointType:
            if role == "controller":
                _check_role(addr, role, "broker")
            raise InputError(
                "a --bootstrap-controller address answers as a broker, not a controller: check the addresses"
            ) from None
    if worker is not None:
        worker.join(max(deadline - time.monotonic(), 0) + 0.5)
        own = dict(box) if box else {"answers": False, "error": f"no answer within the {timeout:g} s timeout"}
    if own is not None:
        _check_role(addr, role, own.get("as"))
    f = facts_from(role, addr, h, own, node_id, fetch, ld)
    if role == "controller" and not f.answers and f.error is None:
        f.error = f"no answer within the {timeout:g} s timeout"
    v = decide(f, kind, grace_s)
    if not v.ok and not f.answers and f.peers_answered == 0 and f.leader_id is None:
        # nothing answered at all: no verdict on the quorum, an error (exit 3) as every command says it
        raise ClusterError(v.reason + " (and nothing else answered)")
    return v
