"""Unregistering a controller (KIP-1312, Kafka 4.4): UnregisterController (API 94,
v0), what Kafka 4.4's `kafka-cluster.sh unregister-controller --id N` and
`kafka-metadata-quorum.sh remove-controller ... --unregister` send (Admin
.unregisterController: to the least loaded broker, which forwards it, or to the
active controller). The controller writes UnregisterControllerRecord; it refuses
below metadata.version 4.4-IV2 (UNSUPPORTED_VERSION), for an id with no
registration (CONTROLLER_ID_NOT_REGISTERED, 136) and for itself (INVALID_REQUEST).

Kafka checks nothing else. A controller that still runs registers again (and a
voter's registration is what the quorum's features checks read), so quorumctl
refuses, before sending anything, with every reason that applies:

  * metadata.version below 4.4-IV2 (the finalized level the node we ask reports);
  * the controller is a voter (DescribeQuorum): remove it from the voters first;
  * it still runs: it fetches from the leader as an observer (a last fetch within
    OBSERVER_WINDOW_S of now, DescribeQuorum), or it answers (or accepts TCP
    connections but does not answer, a frozen JVM that may wake) on its registered
    endpoint (DescribeCluster with EndpointType 2, through --bootstrap-controller)
    or an endpoint DescribeQuorum gives for it (something else answering there, another
    cluster's node or another protocol, does not count);
  * (through --bootstrap-controller) it is not registered at all.

A dry run (the default) makes every check and sends nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...errors import InputError, QuorumctlError, Refused
from ...wire import kerrors, messages
from ...wire.access import ClusterAccess
from ...live.describe import fetch_quorum

# a controller whose last fetch is this recent still runs (controller.quorum.fetch.timeout.ms
# is 2 s by default: a running observer fetches far more often)
OBSERVER_WINDOW_S = 15.0
PROBE_TIMEOUT_S = 3.0


@dataclass
class UnregisterPlan:
    controller_id: int
    apply: bool
    checked: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    done: bool = False
    removed_voter: str | None = None  # remove-controller --unregister: the directory id removed

    def to_json(self) -> dict:
        return {
            "controller_id": self.controller_id,
            "apply": self.apply,
            "checked": self.checked,
            "refusals": self.refusals,
            "unregistered": self.done,
            "removed_voter": self.removed_voter,
        }


def _checks(client, controller_id: int, plan: UnregisterPlan, voter_ok: bool, cfg) -> None:
    from ...versions import CONTROLLER_UNREGISTRATION_LEVEL, METADATA_VERSION, NAME_OF, version_name
    from ..liveness import probe_voters

    conn = client.bootstrap_connection()
    mv = conn.finalized_features.get(METADATA_VERSION)
    need = f"{NAME_OF[CONTROLLER_UNREGISTRATION_LEVEL]} ({CONTROLLER_UNREGISTRATION_LEVEL})"
    if mv is None or mv < CONTROLLER_UNREGISTRATION_LEVEL:
        have = "unknown" if mv is None else f"{version_name(mv)} ({mv})"
        plan.refusals.append(
            f"metadata.version is {have} ({conn.name}'s finalized level): unregistering a "
            f"controller needs {need} (KIP-1312); the controller would refuse it with "
            "UNSUPPORTED_VERSION"
        )
    else:
        plan.checked.append(f"checked: metadata.version {version_name(mv)} ({mv}) is at least {need}")
    q = fetch_quorum(client)
    voters = sorted(v.id for v in q.voters)
    if controller_id in voters and not voter_ok:
        plan.refusals.append(
            f"controller {controller_id} is a voter (voters {', '.join(map(str, voters))}, "
            f"leader {q.leader_id}): remove it from the voters first (quorumctl remove-controller "
            f"-i {controller_id} -d DIRECTORY_ID, then stop it), or use remove-controller "
            "--unregister once it is stopped"
        )
    elif controller_id not in voters:
        plan.checked.append(
            f"checked: controller {controller_id} is not a voter (voters {', '.join(map(str, voters))})"
        )
    now_ms = time.time() * 1000
    obs = next((o for o in q.observers if o.id == controller_id), None)
    if obs is not None and obs.last_fetch is not None and now_ms - obs.last_fetch < OBSERVER_WINDOW_S * 1000:
        plan.refusals.append(
            f"controller {controller_id} still runs: it fetched from the leader as an observer "
            f"{max(now_ms - obs.last_fetch, 0) / 1000:.1f} s ago (DescribeQuorum); it would "
            "register again: stop it first"
        )
    else:
        plan.checked.append(
            f"checked: controller {controller_id} does not fetch from the leader "
            f"(no observer fetch in the last {OBSERVER_WINDOW_S:g} s)"
        )
    endpoints = []
    if client.mode == "controller":
        registered = client.cluster_info().nodes
        if controller_id not in registered:
            plan.refusals.append(
                f"controller {controller_id} is not registered (registered controllers: "
                f"{', '.join(map(str, sorted(registered))) or 'none'}); the controller would "
                "answer CONTROLLER_ID_NOT_REGISTERED"
            )
        else:
            endpoints.append(registered[controller_id])
            plan.checked.append(f"checked: controller {controller_id} is registered at {registered[controller_id]}")
    from ...config.addresses import Address

    for e in q.nodes.get(controller_id, []):
        a = Address(e.host, e.port)
        if a not in endpoints:
            endpoints.append(a)
    if endpoints:
        cluster_id = client.cluster_info().cluster_id
        for p in probe_voters({controller_id: endpoints}, cfg, PROBE_TIMEOUT_S)[0]:
            if p.state == "answers" and not p.same_cluster_controller(cluster_id):
                plan.checked.append(
                    f"checked: {p.address} {p.detail}: not a controller of this cluster (the address was taken over)"
                )
            elif p.state == "answers" or (p.state == "accepts" and p.frozen):
                plan.refusals.append(
                    f"controller {controller_id} still runs: {p.address} {p.detail}; it would "
                    "register again: stop it first"
                )
            else:
                plan.checked.append(f"checked: nothing answers on {p.address} ({p.detail})")
    else:
        plan.checked.append(
            f"note: no endpoint of controller {controller_id} is known here (through a broker the "
            "registrations are not listed; --bootstrap-controller probes its registered endpoint)"
        )


def _send(client, controller_id: int) -> None:
    try:
        name, resp = client.controller_request(
            "UnregisterController", messages.UNREGISTER_CONTROLLER, {"controllerId": controller_id}
        )
    except QuorumctlError as e:
        if getattr(e, "kind", None) == "unsupported":
            raise Refused(f"{e}: the cluster does not support the controller unregistration API (Kafka 4.4+)") from e
        raise
    if resp["errorCode"]:
        err = kerrors.KafkaError(resp["errorCode"], resp.get("errorMessage"), name, "UnregisterController")
        if resp["errorCode"] in kerrors.AUTH_ERRORS:
            raise err
        raise Refused(str(err))


def unregister_controller(
    access: ClusterAccess, timeout: float | None, controller_id: int, apply: bool
) -> UnregisterPlan:
    """`cluster unregister-controller --id N`: the checks, then (with `apply`) the request."""
    if controller_id < 0:
        raise InputError(f"invalid negative --id: {controller_id}")
    plan = UnregisterPlan(controller_id, apply)
    with access.connect(timeout) as client:
        _checks(client, controller_id, plan, False, access.client_config())
        if plan.refusals:
            raise UnregisterRefused(plan)
        if apply:
            _send(client, controller_id)
            plan.done = True
    return plan


def remove_and_unregister(
    access: ClusterAccess, timeout: float | None, controller_id: int, directory_id: str, apply: bool
) -> UnregisterPlan:
    """`remove-controller --unregister`: the unregistration's checks (the controller may
    still be a voter: it is removed first), then RemoveRaftVoter and UnregisterController."""
    from .voters import remove_controller

    plan = UnregisterPlan(controller_id, apply)
    with access.connect(timeout) as client:
        _checks(client, controller_id, plan, True, access.client_config())
    if plan.refusals:
        raise UnregisterRefused(plan)
    change = remove_controller(access, timeout, controller_id, directory_id, not apply)
    plan.removed_voter = change.directory_id
    if apply:
        with access.connect(timeout) as client:
            try:
                _send(client, controller_id)
            except QuorumctlError as e:
                raise Refused(
                    f"Failed to unregister controller {controller_id}: {e}. It was removed from the "
                    f"voters; to unregister it, run `quorumctl cluster unregister-controller --id "
                    f"{controller_id} --apply`"
                ) from e
        plan.done = True
    return plan


class UnregisterRefused(Refused):
    """quorumctl refused to unregister (every reason given); nothing was sent (exit 1)."""

    def __init__(self, plan: UnregisterPlan):
        self.plan = plan
        super().__init__(f"refusing to unregister controller {plan.controller_id}: " + "; ".join(plan.refusals))
