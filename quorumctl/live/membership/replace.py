"""`replace-controller ID`: a voter's disk replaced (wiped and formatted again), done
live as KIP-853 allows: RemoveRaftVoter for (ID, old directory id), then AddRaftVoter
for (ID, new directory id, its endpoints).

The order is forced and safe. The leader refuses AddRaftVoter for an id already in
the voter set (DUPLICATE_VOTER, whatever the directory id), so the old entry goes
first. Removing it loses nothing: the old directory id no longer fetches, so the
n named voters already had only n - 1 that vote; the new set of n - 1 needs a
majority of n - 1, which the caught-up others are (checked first). Adding the new
directory id back makes n voters with n live. Each change is one VotersRecord,
committed before the next is accepted (Kafka's one-at-a-time rule).

The preflight is add-controller's and more: the quorum answers with a leader;
kraft.version 1 (a dynamic quorum); ID is a voter whose directory id does not fetch
while node ID fetches as an observer under a new directory id, recently and caught
up (the leader times out AddRaftVoter for a voter behind); the node answers on the
endpoints the voter set stores for it (or --endpoint) as a controller of this
cluster (the leader sends it ApiVersions); the other voters caught up are a majority
of the voter set without ID. A dry run (the default) checks and prints the steps;
--apply acts, then waits until DescribeQuorum shows ID a voter with the new
directory id, the voter set as large as before, and no observer with a voter's id.

A re-run after an interrupted --apply picks up where it stopped: ID not a voter
while it fetches as an observer is the second step alone (with --endpoint, as the
voter set no longer stores its endpoints).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...errors import InputError, QuorumctlError, Refused
from ...wire import kerrors
from ...wire.access import ClusterAccess
from ...live.describe import fetch_quorum
from ...domain.quorum import FETCHING_MS, Endpoint, Quorum, fetching

PROBE_TIMEOUT_S = 3.0
ADD_TIMEOUT_S = 60.0  # AddRaftVoter's deadline without --timeout (the observer may be catching up)
VERIFY_S = 60.0  # how long --apply waits for DescribeQuorum to show the result


@dataclass
class ReplacePlan:
    controller_id: int
    apply: bool
    old_directory_id: str | None = None
    new_directory_id: str | None = None
    endpoints: list[str] = field(default_factory=list)
    voters_before: list[int] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "controllerId": self.controller_id,
            "apply": self.apply,
            "oldDirectoryId": self.old_directory_id,
            "newDirectoryId": self.new_directory_id,
            "endpoints": self.endpoints,
            "votersBefore": self.voters_before,
            "checked": self.checked,
            "steps": self.steps,
            "done": self.done,
            "verified": self.verified,
        }


def parse_endpoint(text: str) -> Endpoint:
    """NAME://HOST:PORT (an IPv6 host in brackets)."""
    from ...config.addresses import parse_address

    name, sep, rest = text.strip().partition("://")
    if not sep or not name:
        raise InputError(f"invalid --endpoint {text!r}: expected NAME://HOST:PORT, e.g. CONTROLLER://c3:9093")
    try:
        a = parse_address(rest, "--endpoint")
    except QuorumctlError:
        raise InputError(f"invalid --endpoint {text!r}: expected NAME://HOST:PORT, e.g. CONTROLLER://c3:9093") from None
    return Endpoint(name, a.host, a.port)


def _majority_after_removal(q: Quorum, cid: int, fetch_timeout_ms: int) -> tuple[list[int], int]:
    """The voters other than `cid` caught up (health's rule), and the majority of the
    voter set without `cid`."""
    from ...domain.health_verdict import caught_up

    leader = q.leader()
    others = [v for v in q.voters if v.id != cid]
    ok = sorted(v.id for v in others if caught_up(q, leader, v, fetch_timeout_ms)[0])
    return ok, len(others) // 2 + 1


def _plan(client, cfg, plan: ReplacePlan, given: list[Endpoint], fetch_timeout_ms: int) -> list[str]:
    """Fill `plan` from DescribeQuorum; the refusals (empty: the change may go ahead)."""
    from ...config.addresses import Address
    from ..liveness import probe_voters

    cid = plan.controller_id
    refusals: list[str] = []
    q = fetch_quorum(client)
    if q.leader_id < 0 or q.leader() is None:
        return [
            f"the quorum has no leader (epoch {q.leader_epoch}): a voter change needs one; "
            "`quorumctl describe health` says why"
        ]
    plan.checked.append(
        f"checked: {q.source} answered DescribeQuorum: leader {q.leader_id}, epoch {q.leader_epoch}, "
        f"cluster {q.cluster_id}"
    )
    kraft = client.bootstrap_connection().finalized_features.get("kraft.version")
    if kraft is not None and kraft < 1:
        return [
            f"kraft.version is {kraft}: a static quorum (controller.quorum.voters) has no directory ids to "
            "replace and cannot change its voters live; migrate it to a dynamic quorum first"
        ]
    if not q.has_directory_ids:
        return [f"{q.source} answered DescribeQuorum v{q.version}, without directory ids: Kafka 3.9+ is needed"]
    voters = sorted(v.id for v in q.voters)
    plan.voters_before = voters
    voter = next((v for v in q.voters if v.id == cid), None)
    others = [
        o
        for o in q.observers
        if o.id == cid and o.directory_id is not None and (voter is None or o.directory_id != voter.directory_id)
    ]
    # the leader lists a removed voter's old directory id as an observer for 5 minutes:
    # the one that fetches is the node's new disk
    observer = next((o for o in others if fetching(q, o)), None)
    vtext = ", ".join(map(str, voters))
    if observer is None:
        if voter is not None and (not others or fetching(q, voter)):
            return [
                f"controller {cid} is a voter (directory id {voter.directory_id}) and no observer with id {cid} "
                "fetches under another directory id: nothing to replace (start the node on its new disk, "
                "formatted with --no-initial-controllers, and let it fetch first)"
            ]
        if not others:
            return [
                f"controller {cid} is not a voter (voters {vtext}) and does not fetch as an observer: "
                "nothing to replace"
            ]
        observer = others[0]
        refusals.append(
            f"controller {cid} (directory id {observer.directory_id}) has not fetched from the leader "
            f"in the last {FETCHING_MS // 1000} s: it must run before it can become a voter"
        )
    else:
        plan.checked.append(
            f"checked: controller {cid} fetches as an observer with directory id {observer.directory_id}"
        )
    plan.new_directory_id = observer.directory_id
    leo = q.leader().log_end_offset
    behind = max(leo - observer.log_end_offset, 0)
    plan.checked.append(
        f"checked: it is {behind} offset(s) behind the leader (the leader adds a voter only "
        "once it has caught up; --apply retries until --timeout)"
    )
    if voter is not None:
        plan.old_directory_id = voter.directory_id
        plan.checked.append(
            f"checked: the voter set names controller {cid} with directory id {voter.directory_id} (voters {vtext})"
        )
        ok, need = _majority_after_removal(q, cid, fetch_timeout_ms)
        if len(ok) < need:
            refusals.append(
                f"without controller {cid} the voter set has {len(voters) - 1} voters and needs {need}, "
                f"but only {len(ok)} are caught up ({', '.join(map(str, ok)) or 'none'}): removing "
                f"{cid} first would stall the quorum; bring the others back first"
            )
        else:
            plan.checked.append(
                f"checked: without controller {cid} the caught-up voters {', '.join(map(str, ok))} "
                f"are a majority of {len(voters) - 1} (need {need})"
            )
    else:
        plan.checked.append(
            f"checked: controller {cid} is not a voter (voters {vtext}): the old directory id was "
            "removed already; only the addition remains"
        )
    eps = given or (q.endpoints(cid) if voter is not None else [])
    if not eps:
        raise InputError(
            f"controller {cid}'s endpoints are not in the voter set any more: give them with "
            "--endpoint NAME://HOST:PORT (its controller.listener.names as advertised)"
        )
    plan.endpoints = [str(e) for e in eps]
    plan.checked.append(
        f"checked: endpoints {', '.join(plan.endpoints)} ({'--endpoint' if given else 'as the voter set stores them'})"
    )
    probes = probe_voters({cid: [Address(e.host, e.port) for e in eps]}, cfg, PROBE_TIMEOUT_S)[0]
    for p in probes:
        if p.same_cluster_controller(q.cluster_id):
            plan.checked.append(f"checked: {p.address} answers as a controller of cluster {q.cluster_id}")
        else:
            refusals.append(
                f"{p.address} ({', '.join(plan.endpoints)}) {p.detail}: the leader sends the new voter "
                "ApiVersions there and times out AddRaftVoter unless controller "
                f"{cid} of this cluster answers (give its endpoints with --endpoint)"
            )
    if voter is not None:
        plan.steps.append(
            f"RemoveRaftVoter controller {cid} directory id {voter.directory_id}: the voter set "
            f"becomes {', '.join(str(i) for i in voters if i != cid)}"
        )
    plan.steps.append(
        f"AddRaftVoter controller {cid} directory id {observer.directory_id} endpoints "
        f"{', '.join(plan.endpoints)}: the voter set becomes {', '.join(map(str, sorted(set(voters) | {cid})))}"
    )
    return refusals


def _voter_change(call, after_ok) -> None:
    """A voter change; a refusal that only says it is done already (a retry of a request
    the leader committed) counts as done; other refusals exit 1."""
    try:
        call()
    except kerrors.KafkaError as e:
        if kerrors.error_name(e.code) in ("VOTER_NOT_FOUND", "DUPLICATE_VOTER") and after_ok():
            return
        if e.code in kerrors.AUTH_ERRORS:
            raise
        raise Refused(str(e)) from e


def replace_controller(
    access: ClusterAccess,
    timeout: float | None,
    controller_id: int,
    endpoints: list[str],
    apply: bool,
    fetch_timeout_ms: int = 2000,
) -> ReplacePlan:
    if controller_id < 0:
        raise InputError(f"invalid negative controller id: {controller_id}")
    given = [parse_endpoint(e) for e in endpoints or []]
    cfg = access.client_config()
    plan = ReplacePlan(controller_id, apply)
    with access.connect(timeout) as client:
        refusals = _plan(client, cfg, plan, given, fetch_timeout_ms)
    if refusals:
        raise Refused(f"refusing to replace controller {controller_id}: " + "; ".join(refusals))
    if not apply:
        return plan
    cid, new = controller_id, plan.new_directory_id
    listeners = [
        {"name": e.name, "host": e.host, "port": e.port} for e in (given or [parse_endpoint(t) for t in plan.endpoints])
    ]

    # each step gets a client of its own: --timeout is each step's deadline
    def voter_keys() -> set[tuple[int, str | None]]:
        with access.connect(timeout) as c:
            return {(v.id, v.directory_id) for v in fetch_quorum(c).voters}

    if plan.old_directory_id is not None:
        old = plan.old_directory_id
        with access.connect(timeout) as client:
            _voter_change(lambda: client.remove_raft_voter(cid, old), lambda: (cid, old) not in voter_keys())
        plan.done.append(f"removed voter {cid} directory id {old}")
    try:
        # the leader answers REQUEST_TIMED_OUT while the observer catches up: retried until the deadline
        with access.connect(timeout or ADD_TIMEOUT_S) as client:
            _voter_change(lambda: client.add_raft_voter(cid, new, listeners), lambda: (cid, new) in voter_keys())
    except QuorumctlError as e:
        eps = " ".join(f"--endpoint {t}" for t in plan.endpoints)
        via = (
            f"--bootstrap-controller {access.controllers}"
            if access.controllers
            else f"--bootstrap-server {access.servers}"
        )
        raise Refused(
            f"controller {cid} is not a voter: AddRaftVoter failed: {e}; once it fetches and has caught "
            f"up, run again: quorumctl replace-controller {cid} {via} {eps} --apply"
        ) from e
    plan.done.append(f"added voter {cid} directory id {new}")
    plan.verified = _verify(lambda: _fresh_quorum(access, timeout), plan)
    return plan


def _fresh_quorum(access: ClusterAccess, timeout: float | None) -> Quorum:
    with access.connect(timeout) as c:
        return fetch_quorum(c)


def _verify(describe, plan: ReplacePlan) -> list[str]:
    """Wait until DescribeQuorum shows the replacement whole (raise when it does not)."""
    cid, new = plan.controller_id, plan.new_directory_id
    want = sorted(set(plan.voters_before) | {cid})
    end = time.monotonic() + VERIFY_S
    while True:
        q = describe()
        ids = sorted(v.id for v in q.voters)
        mine = next((v for v in q.voters if v.id == cid), None)
        # the removed (id, old directory id) stays listed as an observer until 5 minutes
        # after its last fetch: only an observer that fetches under a voter's id is wrong
        shadows = sorted({o.id for o in q.observers if fetching(q, o)} & set(ids))
        stale = [o for o in q.observers if o.id == cid and o.directory_id != new and not fetching(q, o)]
        problems = []
        if ids != want:
            problems.append(f"the voters are {', '.join(map(str, ids))}, not {', '.join(map(str, want))}")
        if mine is None or mine.directory_id != new:
            problems.append(f"controller {cid} is not a voter with directory id {new}")
        if shadows:
            problems.append(f"observers fetching under a voter's id: {', '.join(map(str, shadows))}")
        if not problems:
            return [
                f"verified: voters {', '.join(map(str, ids))} (leader {q.leader_id}, epoch {q.leader_epoch}), "
                f"controller {cid} with directory id {new}; no observer fetches under a voter's id"
            ] + [
                f"note: the leader lists the old directory id {o.directory_id} as an observer that does not "
                "fetch, until 5 minutes after its last fetch (Kafka's observer session timeout)"
                for o in stale
            ]
        if time.monotonic() > end:
            raise Refused(
                f"controller {cid} was added back, but DescribeQuorum does not show the replacement "
                f"after {VERIFY_S:g} s: " + "; ".join(problems)
            )
        time.sleep(1)
