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

The probes are judged by `health_verdict`; `--watch`'s history is `health_watch`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from ...errors import ClusterError, QuorumctlError
from ...wire import kerrors
from ...wire import messages
from ...wire.client import BROKERS, CONTROLLERS, METADATA_TOPIC, leader_hint, parse_describe_quorum, wrong_endpoint
from ...config.addresses import Address
from ...wire.access import ClusterAccess
from ...wire.connection import Connection, NodeError
from ...domain.health_verdict import DEFAULT_FETCH_TIMEOUT_MS, Health, Inputs, Probe, can_restart, failure, judge
from ...domain.quorum import quorum_from_partition


def probe_one(p: Probe, cfg, deadline: float) -> Probe:
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
            _, r = conn.request(
                messages.DESCRIBE_CLUSTER,
                {"includeClusterAuthorizedOperations": False, "endpointType": CONTROLLERS},
                lo=1,
            )
            if r["errorCode"] == 0:
                p.cluster_id = r["clusterId"]
                p.leader_view = r["controllerId"] if r["controllerId"] >= 0 else None
                p.listed = {b["brokerId"]: Address(b["host"], b["port"]) for b in r["brokers"]}
        elif p.kind == "broker" and conn.supports(messages.DESCRIBE_CLUSTER):
            _, r = conn.request(
                messages.DESCRIBE_CLUSTER, {"includeClusterAuthorizedOperations": False, "endpointType": BROKERS}
            )
            if r["errorCode"] == 0:
                p.cluster_id = r["clusterId"]
                for b in r["brokers"]:  # which of the listed brokers is this one
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
                part = err.partition
                if err.code == kerrors.NOT_LEADER_OR_FOLLOWER:
                    hint = leader_hint(part)
                    if hint is not None and part is not None:  # a hint comes from a partition
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
    from ...config.addresses import parse_address_list, parse_quorum_voters

    voters = parse_quorum_voters(props.get("controller.quorum.voters", ""), source)
    boot = []
    if props.get("controller.quorum.bootstrap.servers", "").strip():
        boot = parse_address_list(
            props["controller.quorum.bootstrap.servers"], f"{source}: controller.quorum.bootstrap.servers"
        )
    fetch = props.get("controller.quorum.fetch.timeout.ms")
    fetch_ms = None
    if fetch is not None and fetch.strip():
        from ...errors import InputError

        try:
            fetch_ms = int(fetch.strip())
        except ValueError:
            raise InputError(f"{source}: controller.quorum.fetch.timeout.ms must be an integer") from None
    return voters, boot, fetch_ms


def check_health(
    cfg,
    *,
    controllers: Sequence[Address] = (),
    servers: Sequence[Address] = (),
    config_voters: dict[int, Address] | None = None,
    config_bootstrap: Sequence[Address] = (),
    timeout_s: float = 5.0,
    fetch_timeout_ms: int = DEFAULT_FETCH_TIMEOUT_MS,
    max_probes: int = 64,
    controller_cfg=None,
) -> Health:
    """Probe `controllers`, `servers` and the config's voters with `cfg`; every
    controller (given, configured or learnt) with `controller_cfg` when given."""
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
            use = cfg if p.expected == "broker" or controller_cfg is None else controller_cfg
            results.put(probe_one(p, use, deadline))
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
        failed = [failure(p) for p in probes.values()]
        raise ClusterError(failed[0] if len(failed) == 1 else "nothing answered: " + "; ".join(failed))
    elapsed_ms = (time.monotonic() - t0) * 1000
    return judge(Inputs(list(probes.values()), config_voters or {}, fetch_timeout_ms, timeout_s, elapsed_ms))


def probe_quorum(
    access: ClusterAccess,
    config: str | None,
    timeout: float,
    fetch_timeout_ms: int | None,
    restart_ids: list[int] | None = None,
) -> Health:
    """`describe health` from Kafka-style options: the targets come from the
    addresses given and the server config's voters / bootstrap servers; the
    caught-up threshold from the option, else the config, else Kafka's default.
    With `restart_ids`, also whether those nodes may be restarted now. The
    controllers are probed with the controllers' client configuration when given
    (their listener may be secured otherwise than the brokers')."""
    from ...errors import InputError
    from ...config.addresses import parse_address_list

    cfg = access.client_config()
    ccfg = access.controller_client_config()
    voters, boot, cfg_fetch = {}, [], None
    if config:
        from ...config.properties import load_properties

        voters, boot, cfg_fetch = targets_from_server_config(load_properties(config, "server config"), config)
    controllers = parse_address_list(access.controllers, "--bootstrap-controller") if access.controllers else []
    servers = parse_address_list(access.servers, "--bootstrap-server") if access.servers else []
    if not (controllers or servers or voters or boot):
        raise InputError(
            "nothing to probe: give --bootstrap-controller, --bootstrap-server, or --config "
            "with controller.quorum.voters / controller.quorum.bootstrap.servers"
        )
    fetch = fetch_timeout_ms if fetch_timeout_ms is not None else (cfg_fetch or DEFAULT_FETCH_TIMEOUT_MS)
    # the option is checked where it is parsed (cli/options.py), but this may be the config's value
    if fetch <= 0:
        raise InputError(f"--fetch-timeout-ms must be positive, not {fetch}")
    part = None
    if servers:
        # the data partitions (health_partitions), asked of a broker while the controllers are probed
        import threading
        from .partitions import probe_partitions

        box: list = []

        def ask():
            try:
                box.append(probe_partitions(servers, cfg, time.monotonic() + timeout, timeout))
            except QuorumctlError as e:
                from .partitions import PartitionHealth

                box.append(PartitionHealth(str(servers[0]), error=str(e)))

        part = threading.Thread(target=ask, daemon=True)
        part.start()
    h = check_health(
        cfg,
        controllers=controllers,
        servers=servers,
        config_voters=voters,
        config_bootstrap=boot,
        timeout_s=timeout,
        fetch_timeout_ms=fetch,
        controller_cfg=ccfg,
    )
    if ccfg is None and servers:
        # one file for two listeners: a broker took it, no controller did
        probes = list(h.probes)
        if any(p.ok for p in probes if p.expected == "broker") and not any(
            p.ok for p in probes if p.expected == "controller"
        ):
            h.notes.append(
                f"no controller accepted --command-config's {cfg.security_protocol} connection that the brokers "
                "took: if the controllers' listener is secured otherwise, give its client properties with "
                "--controller-command-config"
            )
    if part is not None:
        from .partitions import apply

        part.join(timeout + 1)
        apply(h, box[0] if box else None)
    if restart_ids:
        h.restart = can_restart(h, restart_ids)
    return h
