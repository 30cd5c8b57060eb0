"""Is a voter really gone? `recover` asks before it makes a survivor the only voter.

Declaring a live voter lost splits the quorum in two (the survivor leads alone in
a new epoch while the others go on in the old one), so each declared-lost voter
is probed on every endpoint the files or the configuration give for it, all in
parallel within one deadline:

  silent    the host answers that nothing listens there (connection refused): the
            process is gone; the only answer that lets recovery go on
  unknown   no answer at all (no SYN-ACK before the deadline, host unreachable,
            name unresolvable): a powered-off host, a partitioned one that may
            still lead the others, and a frozen JVM whose accept queue is full
            (SYNs dropped) all look like this, so it is not taken as gone
  accepts   a TCP connection is accepted but no Kafka answer comes: a frozen
            (SIGSTOPped, GC-bound, swapping) JVM looks exactly like this, and it
            may wake up; or the address now belongs to another program
  answers   Kafka answers ApiVersions; DescribeCluster and DescribeQuorum then say
            which cluster it serves and what it believes (leader of epoch N,
            follower of leader L in epoch N, or a broker)

The host recover runs on is the worst place to judge "silent" from: it may be the
one that lost contact (a firewall that resets its connections answers exactly as
"nothing listens"). So every other node that can be asked is a witness: the
registered brokers and controllers of the image, and the operator's
--bootstrap-server. A broker forwards DescribeQuorum to whichever controller leads,
so a witness that answers with a leader proves the quorum is alive somewhere.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..config.addresses import Address
from .health.probe import probe_one
from ..domain.health_verdict import Probe


UNRESOLVED = "cannot resolve host"  # the probe detail of a name that does not resolve


@dataclass
class VoterProbe:
    voter_id: int
    address: Address
    state: str  # silent | unknown | accepts | answers
    detail: str  # one phrase: why silent, or what answered
    cluster_id: str | None = None
    kind: str | None = None  # controller | broker (answers only)
    leader_id: int | None = None
    leader_epoch: int | None = None
    frozen: bool = False  # accepts: no byte came back at all (not a foreign protocol's answer)
    node_id: int | None = None  # answers: the node id it answered as, where the wire says (leader, or listed)

    @property
    def unresolved(self) -> bool:
        """Its name did not resolve: a host gone, or a controller that moved (a stale endpoint)."""
        return self.state == "unknown" and self.detail.startswith(UNRESOLVED)

    def same_cluster_controller(self, cluster_id: str | None) -> bool:
        """A controller of this very cluster (or one that would not say which cluster)."""
        return (
            self.state == "answers"
            and self.kind == "controller"
            and (self.cluster_id is None or cluster_id is None or self.cluster_id == cluster_id)
        )

    def to_json(self) -> dict:
        return {
            "voter_id": self.voter_id,
            "address": str(self.address),
            "state": self.state,
            "detail": self.detail,
            "cluster_id": self.cluster_id,
            "kind": self.kind,
            "leader_id": self.leader_id,
            "leader_epoch": self.leader_epoch,
            "frozen": self.frozen,
            "node_id": self.node_id,
        }


def _tcp_accepts(addr: Address, timeout: float) -> tuple[str, str] | None:
    """None when a TCP connection is accepted, else (silent | unknown, why not)."""
    try:
        with socket.create_connection((addr.host, addr.port), timeout=max(timeout, 0.05)):
            return None
    except ConnectionRefusedError:
        return "silent", "connection refused"
    except socket.gaierror as e:
        return "unknown", f"{UNRESOLVED} {addr.host!r} ({e.strerror})"
    except (socket.timeout, TimeoutError):
        return "unknown", (
            f"no TCP answer within {timeout:.1f} s (a host that is off or cut off, or a frozen "
            "process whose accept queue is full)"
        )
    except OSError as e:
        return "unknown", f"cannot connect ({e.strerror or e})"


def _one(voter_id: int, addr: Address, cfg, deadline: float) -> VoterProbe:
    failed = _tcp_accepts(addr, deadline - time.monotonic())
    if failed is not None:
        return VoterProbe(voter_id, addr, *failed)
    p = probe_one(Probe(addr, "lost-voter", "controller", node_id=voter_id), cfg, deadline)
    if not p.reachable:
        return VoterProbe(
            voter_id,
            addr,
            "accepts",
            "a TCP connection is accepted, but no Kafka answer comes" + (f": {p.error}" if p.error else ""),
            frozen=p.timed_out or p.error is None,
        )
    if p.kind == "broker":
        role = "a broker"
    elif p.is_leader:
        role = f"the leader of epoch {p.leader_epoch}"
    elif p.leader_view is not None:
        role = f"a controller following leader {p.leader_view}" + (
            f" in epoch {p.leader_epoch}" if p.leader_epoch is not None else ""
        )
    else:
        role = "a controller that knows no leader"
    cluster = f" of cluster {p.cluster_id}" if p.cluster_id else ""
    # which node answered: the leader names itself; another controller lists the controllers (DescribeCluster)
    nid = (
        p.quorum.leader_id
        if p.is_leader and p.quorum is not None
        else next((i for i, a in p.listed.items() if a == addr), None)
    )
    return VoterProbe(
        voter_id,
        addr,
        "answers",
        f"answers as {role}{cluster}",
        p.cluster_id,
        p.kind,
        p.leader_view,
        p.leader_epoch,
        node_id=nid if p.kind == "controller" else None,
    )


@dataclass
class Witness:
    """What one other node (a broker, an observer, a --bootstrap-server) says of the quorum."""

    who: str  # "broker 4", "controller 5", "bootstrap server", "bootstrap controller"
    node_id: int | None
    address: Address | None  # the endpoint that gave the answer kept (the first when none did)
    state: str  # leader | no-leader | unreachable | other-cluster
    detail: str
    leader_id: int | None = None
    leader_epoch: int | None = None
    cluster_id: str | None = None
    recent_voters: list[int] | None = None  # voters the leader heard from lately (DescribeQuorum)
    refused: bool = False  # unreachable because nothing listens there (from here)

    def to_json(self) -> dict:
        return {
            "who": self.who,
            "node_id": self.node_id,
            "address": str(self.address) if self.address else None,
            "state": self.state,
            "detail": self.detail,
            "leader_id": self.leader_id,
            "leader_epoch": self.leader_epoch,
            "cluster_id": self.cluster_id,
            "recent_voters": self.recent_voters,
            "refused": self.refused,
        }


RECENT_FETCH_MS = 60_000  # a voter the leader heard from within this long is alive


def _asked(who: str, node_id: int | None, addr: Address, cfg, deadline: float, cluster_id: str | None) -> Witness:
    failed = _tcp_accepts(addr, deadline - time.monotonic())
    if failed is not None:
        refused = failed[0] == "silent"
        return Witness(
            who,
            node_id,
            addr,
            "unreachable",
            f"nothing listens ({failed[1]})" if refused else failed[1],
            refused=refused,
        )
    p = probe_one(Probe(addr, "witness", "broker", node_id=node_id), cfg, deadline)
    if not p.reachable:
        return Witness(who, node_id, addr, "unreachable", p.error or "no answer")
    if cluster_id and p.cluster_id and p.cluster_id != cluster_id:
        return Witness(who, node_id, addr, "other-cluster", f"serves cluster {p.cluster_id}", cluster_id=p.cluster_id)
    if p.leader_view is not None and p.leader_view >= 0:
        via = (
            "DescribeQuorum, forwarded to the active controller"
            if p.kind == "broker"
            else "DescribeQuorum"
            if p.is_leader
            else "its DescribeQuorum answer names the leader"
        )
        recent = None
        if p.quorum is not None:
            now = int(time.time() * 1000)  # the leader's clock against ours: a hint, not the proof
            recent = sorted(
                v.id
                for v in p.quorum.voters
                if v.id == p.leader_view or (v.last_fetch is not None and now - v.last_fetch <= RECENT_FETCH_MS)
            )
        return Witness(
            who,
            node_id,
            addr,
            "leader",
            f"sees leader {p.leader_view} in epoch {p.leader_epoch} ({via})",
            p.leader_view,
            p.leader_epoch,
            p.cluster_id,
            recent,
        )
    why = p.error or "no leader known"
    if p.timed_out:
        why = "asked, no answer in time" + (
            " (a broker waits for an active controller to forward DescribeQuorum to)" if p.kind == "broker" else ""
        )
    return Witness(
        who,
        node_id,
        addr,
        "no-leader",
        f"answers, knows no leader: {why}",
        leader_epoch=p.leader_epoch,
        cluster_id=p.cluster_id,
    )


def _best(found: list[Witness]) -> Witness:
    """One node's verdict over its endpoints: a leader seen on any of them wins."""
    for state in ("leader", "no-leader", "other-cluster", "unreachable"):
        for w in found:
            if w.state == state:
                return w
    return found[0]


def probe_voters(
    endpoints: dict[int, list[Address]],
    cfg,
    timeout_s: float,
    witnesses: Sequence[tuple[str, int | None, list[Address]]] = (),
    cluster_id: str | None = None,
) -> tuple[list[VoterProbe], list[Witness]]:
    """Every (voter, endpoint) and every (witness, endpoint) probed in parallel within
    `timeout_s`. A voter probe still running at the deadline counts as `accepts` (it
    got past connect or is stuck in it: either way not provably silent); a witness
    still running as `no-leader` (it answered ApiVersions or is stuck connecting: a
    broker waits for a controller to forward to)."""
    deadline = time.monotonic() + timeout_s
    jobs = [(vid, a) for vid in sorted(endpoints) for a in endpoints[vid]]
    wjobs = [(i, who, nid, a) for i, (who, nid, addrs) in enumerate(witnesses) for a in addrs]
    results: dict[int, VoterProbe] = {}
    asked: dict[int, Witness] = {}

    def work(i: int, vid: int, a: Address):
        try:
            results[i] = _one(vid, a, cfg, deadline)
        except Exception as e:  # a bug must not read as "silent"
            results[i] = VoterProbe(vid, a, "accepts", f"probe failed: {type(e).__name__}: {e}", frozen=True)

    def ask(j: int, who: str, nid: int | None, a: Address):
        try:
            asked[j] = _asked(who, nid, a, cfg, deadline, cluster_id)
        except Exception as e:  # a bug reads as "could not be asked", a stated risk
            asked[j] = Witness(who, nid, a, "unreachable", f"probe failed: {type(e).__name__}: {e}")

    threads = [
        threading.Thread(target=work, args=(i, vid, a), daemon=True, name=f"probe voter {vid} {a}")
        for i, (vid, a) in enumerate(jobs)
    ]
    threads += [
        threading.Thread(target=ask, args=(j, who, nid, a), daemon=True, name=f"ask {who} {a}")
        for j, (_, who, nid, a) in enumerate(wjobs)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()) + 0.5)
    probes = [
        results.get(i) or VoterProbe(vid, a, "accepts", f"no answer within the {timeout_s:g} s timeout", frozen=True)
        for i, (vid, a) in enumerate(jobs)
    ]
    seen: list[Witness] = []
    for i, (who, nid, _) in enumerate(witnesses):
        found = [
            asked.get(j) or Witness(who, nid, a, "no-leader", f"no answer within the {timeout_s:g} s timeout")
            for j, (wi, _, _, a) in enumerate(wjobs)
            if wi == i
        ]
        seen.append(_best(found) if found else Witness(who, nid, None, "unreachable", "no known address"))
    return probes, seen


def probe_voters_and_witnesses(
    endpoints: dict[int, list[tuple[str, int]]],
    witnesses: Sequence[tuple[str, int | None, list]],
    cfg,
    timeout_s: float,
    cluster_id: str | None,
) -> tuple[list[VoterProbe], list[Witness]]:
    """probe_voters over (host, port) lists as ops plans hold them (recover's declared-lost
    voters, set-endpoints' stored and new endpoints), each address asked once: a witness's
    address that is also a voter's is probed as the voter's."""
    voters = {v: [Address(h, p) for h, p in eps] for v, eps in endpoints.items()}
    probed = {a for eps in voters.values() for a in eps}
    asking = []
    for who, nid, eps in witnesses:
        mine = [a for a in (Address(h, p) for h, p in eps) if a not in probed]
        probed.update(mine)
        if mine:
            asking.append((who, nid, mine))
    return probe_voters(voters, cfg, timeout_s, asking, cluster_id)
