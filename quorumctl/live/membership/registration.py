"""`cluster clear-registration ID`: a ghost registration (a node that is gone but still
registered, strimzi#11039) cleared by the way the cluster's version and state allow.

A controller removed from the voters (remove-controller) stays registered with the
supported ranges of the release it last ran (KAFKA-20395); every metadata.version
upgrade above its range is refused ("Controller N only supports versions ...").

  * a broker: UnregisterBroker (`quorumctl cluster unregister`; --apply sends it);
  * a controller at metadata.version 4.4-IV2 or later: UnregisterController
    (`quorumctl cluster unregister-controller`; --apply sends it);
  * a controller below 4.4-IV2 (where KIP-1312's unregistration is refused, and which
    the ghost itself keeps the cluster below): the re-registration workaround. A
    controller process with the ghost's node id, on the new release, formatted afresh
    with --no-initial-controllers and controller.quorum.auto.join.enable=false, starts
    as an observer (never a voter), registers again with the new release's ranges, and
    is stopped. Starting a process is the operator's part: quorumctl prints each step
    with its exact commands and, on every run, checks where each one stands (the
    node's config given with --node-config; the process fetching as an observer in
    DescribeQuorum; Kafka's own ValidateOnly verdict on the target metadata.version no
    longer naming the controller; the process stopped again).

Exit 0 once nothing blocks (or, in a dry run of a fix quorumctl sends itself, when its
checks pass); 1 while steps remain or a check refuses; 2 bad options; 3 unreachable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import InputError, Refused
from ...wire.access import ClusterAccess
from ...live.describe import fetch_quorum
from ...domain.quorum import fetching


@dataclass
class Step:
    who: str  # operator | quorumctl
    what: str  # what to do, with the exact commands
    state: str  # done | to do | running | n/a
    evidence: str = ""

    def to_json(self) -> dict:
        return {"who": self.who, "what": self.what, "state": self.state, "evidence": self.evidence}


@dataclass
class ClearPlan:
    node_id: int
    apply: bool
    kind: str | None = None  # controller | broker | unknown (a broker's, not visible here) | None (not registered)
    method: str | None = None  # unregister-broker | unregister-controller | re-register | None
    metadata_version: str | None = None
    target: str | None = None
    checked: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    cleared: bool = False  # nothing of this registration blocks (the target) any more
    looked_at: str = "controllers"  # the registrations checked: controllers | brokers
    applied: bool = False
    upgrade: str | None = None  # the features upgrade that follows a re-registration, as a command line

    def to_json(self) -> dict:
        return {
            "nodeId": self.node_id,
            "apply": self.apply,
            "kind": self.kind,
            "method": self.method,
            "metadataVersion": self.metadata_version,
            "target": self.target,
            "checked": self.checked,
            "steps": [s.to_json() for s in self.steps],
            "cleared": self.cleared,
            "applied": self.applied,
        }


def node_config_text(node_id: int, bootstrap: str, listener: str, host: str, port: int, log_dir: str) -> str:
    """The server.properties of the re-registering controller."""
    return "\n".join(
        [
            f"node.id={node_id}",
            "process.roles=controller",
            f"controller.quorum.bootstrap.servers={bootstrap}",
            "controller.quorum.auto.join.enable=false",
            f"controller.listener.names={listener}",
            f"listeners={listener}://{host}:{port}",
            f"advertised.listeners={listener}://{host}:{port}",
            f"log.dirs={log_dir}",
            "# plus your controllers' security settings (listener.security.protocol.map, TLS, SASL)",
        ]
    )


def _check_node_config(path: str, node_id: int) -> list[str]:
    """What is wrong with the re-registering controller's config (empty: nothing)."""
    from ...config.server import load

    c = load(path)
    bad = []
    if c.node_id != node_id:
        bad.append(f"node.id is {c.node_id}, not {node_id}")
    if c.process_roles != ["controller"]:
        bad.append(
            f"process.roles is {','.join(c.process_roles) or 'unset'}, not controller (a broker would "
            "register as a broker)"
        )
    if c.quorum_voters:
        bad.append(
            "controller.quorum.voters is set: a static voter list names it a voter; use "
            "controller.quorum.bootstrap.servers"
        )
    if not c.quorum_bootstrap_servers:
        bad.append("controller.quorum.bootstrap.servers is not set")
    if c.props.get("controller.quorum.auto.join.enable", "false").strip().lower() != "false":
        bad.append("controller.quorum.auto.join.enable is true: it would add itself to the voters")
    return [f"{path}: {b}" for b in bad]


def clear_registration(
    access: ClusterAccess,
    timeout: float | None,
    node_id: int,
    target: str | None,
    node_config: str | None,
    apply: bool,
) -> ClearPlan:
    from ...domain.features import parse_change
    import shlex

    from ...versions import CONTROLLER_UNREGISTRATION_LEVEL, METADATA_VERSION, NAME_OF, version_name

    if node_id < 0:
        raise InputError(f"invalid negative node id: {node_id}")
    if not access.controllers and not access.servers:
        raise InputError(
            "give --bootstrap-controller (controller registrations are listed by the controllers) "
            "or --bootstrap-server (for a broker's)"
        )
    # every name quorumctl knows (4.4's catalogue, the widest): the controllers' verdict judges the level
    change = parse_change("upgrade", target, None, kafka="4.4") if target else None
    plan = ClearPlan(node_id, apply, target=target)
    # the controllers when given (they list the controllers' registrations), else the brokers
    controllers = access.via(None, access.controllers)
    with (controllers if access.controllers else access).connect(timeout) as client:
        q = fetch_quorum(client)
        mv = client.bootstrap_connection().finalized_features.get(METADATA_VERSION)
        supported = client.bootstrap_connection().supported_features.get(METADATA_VERSION)
        plan.metadata_version = None if mv is None else version_name(mv)
        voters = sorted(v.id for v in q.voters)
        if node_id in voters:
            raise Refused(
                f"node {node_id} is a voter (voters {', '.join(map(str, voters))}): not a ghost; remove it "
                "from the voters first (quorumctl remove-controller) if it is gone"
            )
        plan.checked.append(
            f"checked: node {node_id} is not a voter (voters {', '.join(map(str, voters))}); "
            f"metadata.version {plan.metadata_version}"
        )
        registered = client.cluster_info().nodes if client.mode == "controller" else {}
        # the leader's clock, not ours: an observer that fetched in the last FETCHING_MS runs
        running = any(o.id == node_id and fetching(q, o) for o in q.observers)
        verdict = None
        if change is not None and node_id in registered:
            verdict = client.update_features(change.updates, change.upgrade_type, validate_only=True)
    if node_id in registered:
        plan.kind = "controller"
        plan.checked.append(f"checked: controller {node_id} is registered at {registered[node_id]}")
    elif access.servers:
        return _broker(plan, access.via(access.servers), timeout, apply)
    else:
        plan.checked.append(
            f"checked: no controller {node_id} is registered (registered controllers: "
            f"{', '.join(map(str, sorted(registered))) or 'none'})"
        )
        return _broker_via_controller(plan, controllers, timeout, apply, running)
    mine = None  # does Kafka's verdict name this controller? None: unknown
    if verdict is not None:
        why = verdict.get(METADATA_VERSION)
        # Kafka stops at the first node that refuses (brokers, then controllers): another
        # node named first says nothing about this one
        mine = True if why and f"Controller {node_id} " in why else (False if why is None else None)
        plan.checked.append(
            f"checked: Kafka's verdict on metadata.version {target} (UpdateFeatures, validateOnly): "
            + (why or "accepted")
        )
    if mv is not None and mv >= CONTROLLER_UNREGISTRATION_LEVEL:
        return _unregister_controller(plan, controllers, timeout, apply)
    plan.method = "re-register"
    # a controller is registered only when asked through the controllers: their options
    again = ["quorumctl", "cluster", "clear-registration", str(node_id), *controllers.args()]
    again += ["--node-config", node_config] if node_config else []
    # the target an upgrade to the controllers' release asks for: the highest it supports
    highest = version_name(supported[1]) if supported and supported[1] in NAME_OF else None
    if target:
        conn = controllers.args()
        plan.upgrade = shlex.join(["quorumctl", "features", "upgrade", "--metadata", target, *conn, "--apply"])
    _re_register(plan, q, registered, node_config, running, mine, again, target or highest, access.controllers)
    return plan


def _broker_via_controller(
    plan: ClearPlan, controllers: ClusterAccess, timeout: float | None, apply: bool, running: bool
) -> ClearPlan:
    """A node that is no registered controller, asked through the controllers only: they do
    not list brokers (DescribeCluster on a controller lists controllers), so a broker's
    registration is not known until UnregisterBroker is sent to the controller, as
    `kafka-cluster.sh unregister --bootstrap-controller` does. Never "nothing to clear"
    on a guess: a dry run says it is unknown (exit 1) with the two commands that tell."""
    import shlex

    from ...wire import kerrors, messages

    plan.looked_at = "brokers"
    if running:
        raise Refused(
            f"node {plan.node_id} fetches from the leader now (an observer in DescribeQuorum: a running "
            "broker): not a ghost; stop it first"
        )
    plan.checked.append(f"checked: node {plan.node_id} does not fetch from the leader (DescribeQuorum observers)")
    cmd = shlex.join(["quorumctl", "cluster", "clear-registration", str(plan.node_id), *controllers.args(), "--apply"])
    if not apply:
        plan.kind, plan.method = "unknown", "unregister-broker"
        plan.steps.append(
            Step(
                "quorumctl",
                cmd,
                "to do",
                f"whether broker {plan.node_id} is registered is not known here: the controllers list only "
                "controllers; --bootstrap-server lists the brokers (fenced ones too), --apply sends "
                "UnregisterBroker to the controller, which answers whether it was registered",
            )
        )
        return plan

    # to the active controller (DescribeCluster names it), as Kafka's admin client sends it: any
    # other controller answers NOT_CONTROLLER
    with controllers.connect(timeout) as client:
        if not client.bootstrap_connection().supports(messages.UNREGISTER_BROKER):
            raise Refused("the controller does not support UnregisterBroker (Kafka before 3.0?)")
        name, r = client.controller_request("UnregisterBroker", messages.UNREGISTER_BROKER, {"brokerId": plan.node_id})
    if r["errorCode"] == kerrors.BROKER_ID_NOT_REGISTERED:
        plan.checked.append(
            f"checked: the controller answers BROKER_ID_NOT_REGISTERED: no broker {plan.node_id} is registered"
        )
        plan.kind, plan.cleared = None, True
        return plan
    if r["errorCode"]:
        raise kerrors.KafkaError(r["errorCode"], r.get("errorMessage"), name, "UnregisterBroker")
    plan.kind, plan.method, plan.applied, plan.cleared = "broker", "unregister-broker", True, True
    plan.steps.append(Step("quorumctl", cmd, "done", "UnregisterBroker sent to the controller: accepted"))
    return plan


def _broker(plan: ClearPlan, brokers: ClusterAccess, timeout: float | None, apply: bool) -> ClearPlan:
    from ..cluster import unregister

    plan.kind, plan.method, plan.looked_at = "broker", "unregister-broker", "brokers"
    u = unregister(brokers, timeout, plan.node_id, apply)
    cmd = f"quorumctl cluster unregister --bootstrap-server {brokers.servers} --id {plan.node_id} --apply"
    if u.refused is not None:
        plan.kind = "broker" if u.registered else None
        plan.cleared = not u.registered
        plan.steps.append(Step("quorumctl", cmd, "done" if plan.cleared else "to do", u.refused))
        if u.registered:
            raise Refused(f"refusing to clear broker {plan.node_id}'s registration: {u.refused}")
        return plan
    plan.applied = bool(u.applied)
    plan.cleared = plan.applied or not apply
    plan.steps.append(
        Step(
            "quorumctl",
            cmd,
            "done" if plan.applied else "to do",
            f"broker {plan.node_id} is registered and fenced at {u.endpoint}",
        )
    )
    return plan


def _unregister_controller(
    plan: ClearPlan, controllers: ClusterAccess, timeout: float | None, apply: bool
) -> ClearPlan:
    from .unregister import unregister_controller

    plan.method = "unregister-controller"
    cmd = (
        f"quorumctl cluster unregister-controller --bootstrap-controller {controllers.controllers} "
        f"--id {plan.node_id} --apply"
    )
    u = unregister_controller(controllers, timeout, plan.node_id, apply)
    plan.checked += u.checked
    plan.applied = u.done
    plan.cleared = u.done or not apply
    plan.steps.append(
        Step(
            "quorumctl",
            cmd,
            "done" if u.done else "to do",
            "UnregisterController (KIP-1312, metadata.version 4.4-IV2+)",
        )
    )
    return plan


def _re_register(
    plan: ClearPlan,
    q,
    registered: dict,
    node_config: str | None,
    running: bool,
    mine: bool | None,
    again: list[str],
    target: str | None,
    asked: str | None,
) -> None:
    """`again`: this command's line (without --metadata); `target`: the metadata.version to
    check (--metadata, else the highest the controllers' release supports); `asked`: the
    --bootstrap-controller given, the quorum's address when DescribeQuorum names no endpoints."""
    import shlex

    cid = plan.node_id
    voters = sorted(q.voters, key=lambda v: v.id)
    eps = [e for v in voters for e in q.endpoints(v.id)[:1]]
    bootstrap = ",".join(f"{e.host}:{e.port}" for e in eps) or str(asked)
    listener = eps[0].name if eps else "CONTROLLER"
    addr = registered[cid]  # a re-registration is planned only for a registered controller
    host, port = addr.host, addr.port
    if node_config is None:
        cfg_path = f"controller-{cid}.properties"
        plan.steps.append(
            Step(
                "operator",
                f"write {cfg_path} on a host with the new release (its address may be "
                "another's):\n"
                + node_config_text(cid, bootstrap, listener, host, port, f"/var/lib/kafka/reregister-{cid}"),
                "to do",
                "give it with --node-config to have it checked",
            )
        )
    else:
        cfg_path = node_config
        bad = _check_node_config(node_config, cid)
        if bad:
            raise InputError("; ".join(bad))
        plan.steps.append(
            Step(
                "operator",
                f"the config {node_config}",
                "done",
                f"node.id {cid}, process.roles controller, controller.quorum.bootstrap.servers, auto join off",
            )
        )
    plan.steps.append(
        Step(
            "operator",
            f"format a fresh log dir with the new release: bin/kafka-storage.sh format "
            f"--cluster-id {q.cluster_id} --config {cfg_path} --no-initial-controllers",
            "done" if running or mine is False else "to do",
        )
    )
    fix_known = mine is False
    plan.steps.append(
        Step(
            "operator",
            f"start it on the new release: bin/kafka-server-start.sh {cfg_path}; it "
            "fetches as an observer and registers again",
            "running" if running else ("done" if fix_known else "to do"),
            f"DescribeQuorum: observer {cid} " + ("fetches" if running else "does not fetch"),
        )
    )
    if mine is None and plan.target is not None:
        state, why = "to do", "Kafka's verdict names another node first: clear that one too, then check again"
    elif mine is None and target is None:
        state, why = (
            "to do",
            ("give --metadata with the metadata.version to upgrade to, to have Kafka check the registration's range"),
        )
    elif mine is None:
        state, why = "to do", f"give --metadata {target} to have Kafka check the registration's range"
    elif mine:
        state, why = "to do", f"Kafka still names controller {cid}: its registration is the old release's"
    else:
        state, why = "done", f"Kafka's verdict on metadata.version {plan.target} no longer names controller {cid}"
    check = (
        f"check that the registration covers metadata.version {target}: {shlex.join(again + ['--metadata', target])}"
        if target
        else "check that the registration covers the metadata.version to upgrade to: run this command again "
        "with --metadata and that version (the controllers' release is not known here)"
    )
    plan.steps.append(Step("quorumctl", check, state, why))
    plan.steps.append(
        Step(
            "operator",
            "stop it (bin/kafka-server-stop.sh, or stop its service); its log dir may "
            "be deleted: the registration stays with the new ranges",
            "done" if fix_known and not running else "to do",
            f"DescribeQuorum: observer {cid} " + ("still fetches" if running else "does not fetch"),
        )
    )
    plan.cleared = fix_known and not running
