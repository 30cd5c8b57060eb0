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
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

from ..config.addresses import Address
from .health_probe import probe_one
from .health_verdict import Probe


@dataclass
class VoterProbe:
    voter_id: int
    address: Address
    state: str                    # silent | unknown | accepts | answers
    detail: str                   # one phrase: why silent, or what answered
    cluster_id: str | None = None
    kind: str | None = None       # controller | broker (answers only)
    leader_id: int | None = None
    leader_epoch: int | None = None
    frozen: bool = False          # accepts: no byte came back at all (not a foreign protocol's answer)

    def same_cluster_controller(self, cluster_id: str | None) -> bool:
        """A controller of this very cluster (or one that would not say which cluster)."""
        return (self.state == "answers" and self.kind == "controller"
                and (self.cluster_id is None or cluster_id is None or self.cluster_id == cluster_id))

    def to_json(self) -> dict:
        return {"voter_id": self.voter_id, "address": str(self.address), "state": self.state,
                "detail": self.detail, "cluster_id": self.cluster_id, "kind": self.kind,
                "leader_id": self.leader_id, "leader_epoch": self.leader_epoch, "frozen": self.frozen}


def _tcp_accepts(addr: Address, timeout: float) -> tuple[str, str] | None:
    """None when a TCP connection is accepted, else (silent | unknown, why not)."""
    try:
        with socket.create_connection((addr.host, addr.port), timeout=max(timeout, 0.05)):
            return None
    except ConnectionRefusedError:
        return "silent", "connection refused"
    except socket.gaierror as e:
        return "unknown", f"cannot resolve host {addr.host!r} ({e.strerror})"
    except (socket.timeout, TimeoutError):
        return "unknown", (f"no TCP answer within {timeout:.1f} s (a host that is off or cut off, or a frozen "
                           "process whose accept queue is full)")
    except OSError as e:
        return "unknown", f"cannot connect ({e.strerror or e})"


def _one(voter_id: int, addr: Address, cfg, deadline: float) -> VoterProbe:
    failed = _tcp_accepts(addr, deadline - time.monotonic())
    if failed is not None:
        return VoterProbe(voter_id, addr, *failed)
    p = probe_one(Probe(addr, "lost-voter", "controller", node_id=voter_id), cfg, deadline)
    if not p.reachable:
        return VoterProbe(voter_id, addr, "accepts", "a TCP connection is accepted, but no Kafka answer comes"
                          + (f": {p.error}" if p.error else ""), frozen=p.timed_out or p.error is None)
    if p.kind == "broker":
        role = "a broker"
    elif p.is_leader:
        role = f"the leader of epoch {p.leader_epoch}"
    elif p.leader_view is not None:
        role = f"a controller following leader {p.leader_view}" + (
            f" in epoch {p.leader_epoch}" if p.leader_epoch is not None else "")
    else:
        role = "a controller that knows no leader"
    cluster = f" of cluster {p.cluster_id}" if p.cluster_id else ""
    return VoterProbe(voter_id, addr, "answers", f"answers as {role}{cluster}", p.cluster_id, p.kind,
                      p.leader_view, p.leader_epoch)


def probe_voters(endpoints: dict[int, list[Address]], cfg, timeout_s: float) -> list[VoterProbe]:
    """Every (voter, endpoint) probed in parallel within `timeout_s`; a probe still
    running at the deadline counts as `accepts` (it got past connect or is stuck in
    it: either way not provably silent)."""
    deadline = time.monotonic() + timeout_s
    jobs = [(vid, a) for vid in sorted(endpoints) for a in endpoints[vid]]
    results: dict[int, VoterProbe] = {}

    def work(i: int, vid: int, a: Address):
        try:
            results[i] = _one(vid, a, cfg, deadline)
        except Exception as e:   # a bug must not read as "silent"
            results[i] = VoterProbe(vid, a, "accepts", f"probe failed: {type(e).__name__}: {e}", frozen=True)

    threads = [threading.Thread(target=work, args=(i, vid, a), daemon=True, name=f"probe voter {vid} {a}")
               for i, (vid, a) in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()) + 0.5)
    return [results.get(i) or VoterProbe(vid, a, "accepts", f"no answer within the {timeout_s:g} s timeout",
                                         frozen=True)
            for i, (vid, a) in enumerate(jobs)]
