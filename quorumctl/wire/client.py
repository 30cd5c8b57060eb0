"""Finding the node to ask, asking it, and retrying: what the Kafka admin
client does for `kafka-metadata-quorum`, in a few hundred lines.

Two ways in, as in Kafka:
  --bootstrap-server      a broker; it forwards DescribeQuorum / AddRaftVoter /
                          RemoveRaftVoter to the active controller.
  --bootstrap-controller  a controller; DescribeCluster(EndpointType=2) names the
                          active controller and lists the controllers' addresses;
                          requests go straight to the active controller.
Both take a list and fail over to the next entry when one cannot be reached.
Retriable answers (NOT_LEADER_OR_FOLLOWER, NOT_CONTROLLER, REQUEST_TIMED_OUT,
no known leader, ...) are retried with exponential backoff until the deadline;
NOT_LEADER_OR_FOLLOWER that names a leader (LeaderId >= 0 with LeaderEpoch > 0;
Kafka 3.9 itself sends LeaderId 0 / epoch 0, i.e. no hint) is followed at once.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from ..errors import ClusterError, ExitStatus, InputError
from ..ids import METADATA_TOPIC_ID
from . import kerrors
from . import messages
from ..config.addresses import Address
from .connection import Connection, NodeError, OutOfTime

METADATA_TOPIC = "__cluster_metadata"
BROKERS, CONTROLLERS = 1, 2


class WrongEndpointType(InputError):
    """--bootstrap-server given a controller, or --bootstrap-controller a broker (exit 2)."""

    exit_code = ExitStatus.USAGE


def wrong_endpoint(name: str, mode: str) -> WrongEndpointType:
    """The one wording of a bootstrap address of the wrong kind: `mode` is what
    the option expects ("server": a broker, "controller": a controller)."""
    if mode == "server":
        return WrongEndpointType(
            f"{name} is a KRaft controller, not a broker (it does not serve Metadata): "
            f"use --bootstrap-controller {name}"
        )
    return WrongEndpointType(f"{name} is a broker, not a controller: use --bootstrap-server {name}")


class _Retry(Exception):
    """Internal: a transient condition; `hint` is a leader id to try first."""

    def __init__(self, message: str, hint: int | None = None):
        super().__init__(message)
        self.hint = hint


@dataclass
class ClusterInfo:
    cluster_id: str | None
    controller_id: int  # the active controller (controllers) or some broker (brokers)
    nodes: dict[int, Address]  # id -> address of the listed brokers or controllers
    endpoint_type: int
    source: str


@dataclass
class QuorumResponse:
    """A successful DescribeQuorum answer: the partition data of
    __cluster_metadata-0 plus the top-level Nodes, as decoded (camelCase)."""

    partition: dict
    nodes: list = field(default_factory=list)
    version: int = 0
    source: str = ""


class QuorumClient:
    def __init__(self, bootstrap: list[Address], mode: str, cfg, timeout_s: float | None = None):
        if mode not in ("server", "controller"):
            raise ValueError(mode)
        self.bootstrap = bootstrap
        self.mode = mode
        self.cfg = cfg
        if timeout_s is None:
            timeout_s = (cfg.api_timeout_ms or 15_000) / 1000.0
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self._conns: dict[Address, Connection] = {}
        self._controllers: dict[int, Address] = {}
        self._leader: Address | None = None
        self._info: ClusterInfo | None = None

    # -- connections ------------------------------------------------------------------
    def close(self):
        for c in self._conns.values():
            c.close()
        self._conns.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _conn(self, addr: Address, open_by: float | None = None) -> Connection:
        """A connection to `addr`, opened (connect, TLS, ApiVersions, SASL) by
        `open_by` at the latest (default: the deadline), used until the deadline."""
        c = self._conns.get(addr)
        if c is not None and c.sock is not None:
            return c
        c = Connection(addr, self.cfg, open_by or self.deadline).open()
        c.deadline = self.deadline
        self._conns[addr] = c
        return c

    def _drop(self, addr: Address | None):
        if addr is not None:
            c = self._conns.pop(addr, None)
            if c is not None:
                c.close()

    def _bootstrap_conn(self) -> Connection:
        """A connection to the first reachable bootstrap address (in order)."""
        failures: list[NodeError] = []
        for i, addr in enumerate(self.bootstrap):
            # each address gets an equal share of the time left, so one that
            # accepts and never answers (a hung JVM) cannot starve the others
            untried = len(self.bootstrap) - i
            open_by = time.monotonic() + (self.deadline - time.monotonic()) / untried
            try:
                conn = self._conn(addr, open_by)
            except NodeError as e:
                e.bootstrap = True
                if e.kind in ("tls", "auth"):
                    raise  # the same settings will fail everywhere: say so now
                failures.append(e)
                continue
            self._check_endpoint_kind(conn)
            return conn
        if len(failures) == 1:
            raise failures[0]
        err = NodeError(
            failures[-1].address,
            "could not reach any bootstrap server: " + "; ".join(str(f) for f in failures),
            failures[-1].kind,
        )
        err.bootstrap = True
        raise err

    def _check_endpoint_kind(self, conn: Connection):
        """Controller listeners do not serve Metadata (API 3); brokers always do
        (Kafka 3.7 says "The node does not support METADATA" in that case)."""
        is_broker = conn.supports(messages.METADATA)
        if (self.mode == "server") != is_broker:
            raise wrong_endpoint(conn.name, self.mode)

    # -- retry loop ---------------------------------------------------------------
    def _with_retries(self, what: str, attempt):
        """Run attempt(hint) until it returns, retrying transient failures with
        exponential backoff (and jitter) until the deadline. A leader hint is
        followed at once, but each named leader only once."""
        t0 = time.monotonic()
        backoff = max(self.cfg.retry_backoff_ms, 1) / 1000.0
        cap = max(self.cfg.retry_backoff_max_ms, self.cfg.retry_backoff_ms) / 1000.0
        hint: int | None = None
        tried: set[int] = set()
        retry: _Retry | None = None
        while True:
            try:
                return attempt(hint)
            except _Retry as e:
                last: Exception = e
                retry = e
                hint = e.hint if e.hint is not None and e.hint not in tried and e.hint in self._controllers else None
                if hint is not None:
                    tried.add(hint)
                    if time.monotonic() < self.deadline:
                        continue
            except NodeError as e:
                if e.kind == "timeout" and retry is not None and time.monotonic() >= self.deadline:
                    # the --timeout ran out during a retry: the retriable answer
                    # is the news; a wait cut short by the deadline is a footnote
                    cut = "" if isinstance(e, OutOfTime) else f" (the last try: {e})"
                    raise self._gave_up(what, t0, f"{retry}{cut}") from None
                # unreachable bootstrap servers, TLS/SASL failures, protocol
                # violations and missing APIs will not get better by retrying
                if e.bootstrap or e.kind not in ("closed", "timeout", "refused"):
                    raise
                # the active controller went away (killed, restarting): the
                # others elect a new one within the fetch timeout, so ask the
                # bootstrap list again until the deadline, as Kafka's admin client does
                last, hint = e, None
                self._drop(_address_of(e.address))
                self._leader = None
            sleep = backoff * (0.8 + 0.4 * random.random())
            if time.monotonic() + sleep >= self.deadline:
                if isinstance(last, NodeError):
                    raise last  # its own message says what timed out or broke
                raise self._gave_up(what, t0, last) from None
            time.sleep(sleep)
            backoff = min(backoff * 2, cap)

    @staticmethod
    def _gave_up(what: str, t0: float, reason) -> ClusterError:
        return ClusterError(f"{what}: gave up after {time.monotonic() - t0:.1f} s: {reason}")

    # -- DescribeCluster --------------------------------------------------------------
    def _describe_cluster(self, conn: Connection, endpoint_type: int) -> ClusterInfo:
        lo = 1 if endpoint_type == CONTROLLERS else 0
        if not conn.supports(messages.DESCRIBE_CLUSTER) or conn.version_for(messages.DESCRIBE_CLUSTER, lo=lo) is None:
            if endpoint_type == CONTROLLERS:
                raise NodeError(
                    conn.name,
                    f"{conn.name} does not support DescribeCluster v1 (Kafka 3.7+ "
                    "controllers do): use --bootstrap-server with a broker",
                    "unsupported",
                )
            return self._metadata_cluster(conn)
        body = {"includeClusterAuthorizedOperations": False, "endpointType": endpoint_type}
        version, resp = conn.request(messages.DESCRIBE_CLUSTER, body, lo=lo)
        code = resp["errorCode"]
        if code == kerrors.MISMATCHED_ENDPOINT_TYPE or (code == kerrors.INVALID_REQUEST and version == 0):
            if endpoint_type == CONTROLLERS:
                raise WrongEndpointType(
                    f"{conn.name} is a broker, not a controller: use --bootstrap-server {conn.name}"
                )
            raise WrongEndpointType(
                f"{conn.name} is a KRaft controller, not a broker: use --bootstrap-controller {conn.name}"
            )
        if code:
            err = kerrors.KafkaError(code, resp.get("errorMessage"), conn.name, "DescribeCluster")
            if err.retriable:
                raise _Retry(str(err))
            raise err
        nodes = {b["brokerId"]: Address(b["host"], b["port"]) for b in resp["brokers"]}
        return ClusterInfo(resp["clusterId"], resp["controllerId"], nodes, resp.get("endpointType", BROKERS), conn.name)

    def _metadata_cluster(self, conn: Connection) -> ClusterInfo:
        """Cluster id from Metadata, for brokers without DescribeCluster (< 2.8)."""
        # v0 would read an empty topic list as "all topics"; v1+ as "none"
        version, resp = conn.request(
            messages.METADATA,
            {
                "topics": [],
                "allowAutoTopicCreation": False,
                "includeClusterAuthorizedOperations": False,
                "includeTopicAuthorizedOperations": False,
            },
            lo=1,
        )
        nodes = {b["nodeId"]: Address(b["host"], b["port"]) for b in resp["brokers"]}
        return ClusterInfo(resp.get("clusterId"), resp.get("controllerId", -1), nodes, BROKERS, conn.name)

    def cluster_info(self) -> ClusterInfo:
        """The cluster id and (with --bootstrap-controller) the active controller."""
        if self._info is not None:
            return self._info

        def attempt(_hint):
            conn = self._bootstrap_conn()
            return self._discover(conn)

        self._info = self._with_retries("DescribeCluster", attempt)
        return self._info

    def _discover(self, conn: Connection) -> ClusterInfo:
        if self.mode == "server":
            return self._describe_cluster(conn, BROKERS)
        info = self._describe_cluster(conn, CONTROLLERS)
        self._controllers.update(info.nodes)
        if info.controller_id < 0 or info.controller_id not in info.nodes:
            raise _Retry(
                f"{conn.name} knows no active controller (ControllerId {info.controller_id}): "
                "the quorum may have no leader; `quorumctl describe health` probes every controller"
            )
        self._leader = info.nodes[info.controller_id]
        return info

    # -- routing for quorum requests ------------------------------------------------------
    def _target(self, hint: int | None) -> Connection:
        if self.mode == "server":
            return self._bootstrap_conn()
        if hint is not None and hint in self._controllers:
            self._leader = self._controllers[hint]
        if self._leader is None:
            self._info = self._discover(self._bootstrap_conn())
        assert self._leader is not None  # _discover (controller mode) sets it or raises
        return self._conn(self._leader)

    def _quorum_call(self, what: str, key: int, body, handle):
        def attempt(hint):
            conn = self._target(hint)
            try:
                version, resp = conn.request(key, body() if callable(body) else body)
            except NodeError as e:
                if e.kind == "unsupported" and key == messages.DESCRIBE_QUORUM:
                    raise NodeError(
                        conn.name,
                        f"{conn.name} does not support DescribeQuorum (API 55): "
                        "not a KRaft cluster, or Kafka older than 2.8",
                        "unsupported",
                    ) from None
                if e.kind == "unsupported" and key in (messages.ADD_RAFT_VOTER, messages.REMOVE_RAFT_VOTER):
                    raise NodeError(
                        conn.name,
                        f"{conn.name} does not support {what} (API {key}): changing the voters needs Kafka 3.9+",
                        "unsupported",
                    ) from None
                if e.kind == "timeout" and self.mode == "server":
                    raise NodeError(
                        e.address,
                        f"{e} (the broker forwards {what} to the active controller: "
                        "the quorum may have no leader; `quorumctl describe health` "
                        "probes every controller)",
                        e.kind,
                    ) from None
                raise
            return handle(conn, version, resp)

        return self._with_retries(what, attempt)

    def controller_request(self, what: str, key: int, body: dict) -> tuple[str, dict]:
        """`body` sent to the active controller (through the broker in server mode, which
        forwards it), asked again where the answer is retriable (NOT_CONTROLLER: leadership
        moved) until the deadline: (the node that answered, its response). Any other
        error code in the response is the caller's to judge."""

        def handle(conn: Connection, version: int, resp: dict) -> tuple[str, dict]:
            code = resp.get("errorCode", 0)
            if code and kerrors.KafkaError(code, None, conn.name, what).retriable:
                self._raise_for(code, resp.get("errorMessage"), conn.name, what, None)
            return conn.name, resp

        return self._quorum_call(what, key, body, handle)

    def describe_quorum(self) -> QuorumResponse:
        body = {"topics": [{"topicName": METADATA_TOPIC, "partitions": [{"partitionIndex": 0}]}]}
        return self._quorum_call("DescribeQuorum", messages.DESCRIBE_QUORUM, body, self._handle_quorum)

    def _handle_quorum(self, conn: Connection, version: int, resp: dict) -> QuorumResponse:
        try:
            return parse_describe_quorum(conn.name, version, resp)
        except kerrors.KafkaError as err:
            self._raise_for(err.code, err.server_message, conn.name, "DescribeQuorum", err.partition)
            raise  # pragma: no cover - _raise_for always raises for a non-zero code

    def _raise_for(self, code: int, message: str | None, name: str, api: str, partition: dict | None):
        if not code:
            return
        err = kerrors.KafkaError(code, message, name, api)
        if code == kerrors.NOT_LEADER_OR_FOLLOWER:
            hint = leader_hint(partition)
            self._leader = None
            raise _Retry(str(err) + ("" if hint is None else f" (leader hint: {hint})"), hint)
        if err.retriable:
            self._leader = None
            raise _Retry(str(err))
        raise err

    # -- voter changes (KIP-853) ------------------------------------------------------
    def add_raft_voter(self, voter_id: int, directory_id: str, listeners: list[dict]) -> None:
        def body_for():
            left = max(int((self.deadline - time.monotonic()) * 1000), 1)
            return {
                "clusterId": None,
                "timeoutMs": min(left, self.cfg.request_timeout_ms),
                "voterId": voter_id,
                "voterDirectoryId": directory_id,
                "listeners": listeners,
                "ackWhenCommitted": True,
            }  # v1 (Kafka 4.3): answer once committed, as v0 does

        self._quorum_call("AddRaftVoter", messages.ADD_RAFT_VOTER, body_for, self._handle_voter_change("AddRaftVoter"))

    def remove_raft_voter(self, voter_id: int, directory_id: str) -> None:
        body = {"clusterId": None, "voterId": voter_id, "voterDirectoryId": directory_id}
        self._quorum_call(
            "RemoveRaftVoter", messages.REMOVE_RAFT_VOTER, body, self._handle_voter_change("RemoveRaftVoter")
        )

    # -- feature levels (UpdateFeatures, API 57) -------------------------------------------
    def update_features(self, updates: dict[str, int], upgrade_type: int, validate_only: bool) -> dict[str, str | None]:
        """Send UpdateFeatures (to the active controller, or a broker that forwards it)
        and read the answer as Kafka's admin client does: feature -> None (accepted) or
        its error message. A top-level error fails every feature with its message
        (v2 answers carry nothing else); v0/v1 answers carry one result per feature."""

        def body():
            left = max(int((self.deadline - time.monotonic()) * 1000), 1)
            return {
                "timeoutMs": min(left, self.cfg.request_timeout_ms),
                "featureUpdates": [
                    {"feature": f, "maxVersionLevel": lvl, "upgradeType": upgrade_type} for f, lvl in updates.items()
                ],
                "validateOnly": validate_only,
            }

        def handle(conn, version, resp):
            code = resp["errorCode"]
            if code:
                err = kerrors.KafkaError(code, resp.get("errorMessage"), conn.name, "UpdateFeatures")
                if err.retriable:
                    self._leader = None
                    raise _Retry(str(err))
                if code in kerrors.AUTH_ERRORS:
                    raise err
                msg = resp.get("errorMessage") or kerrors.error_name(code)
                return dict.fromkeys(updates, msg)
            out: dict[str, str | None] = dict.fromkeys(updates)
            for r in resp.get("results") or ():
                if r["feature"] in out and r["errorCode"]:
                    out[r["feature"]] = r.get("errorMessage") or kerrors.error_name(r["errorCode"])
            return out

        return self._quorum_call("UpdateFeatures", messages.UPDATE_FEATURES, body, handle)

    # -- the metadata log, read as an observer reads it (Fetch 1, FetchSnapshot 59) ----------
    def fetch_metadata(self, offset: int, last_epoch: int, leader_epoch: int, max_bytes: int) -> dict:
        """One Fetch of __cluster_metadata-0 from the active controller, as Kafka's raft client
        builds it (KafkaRaftClient.buildFetchRequest) for a fetcher without a node id: ReplicaId
        -1 (ReplicaState left at its default, as Kafka writes it), which the leader reads as "not a
        replica" and keeps no state for (LeaderState.updateReplicaState); MaxWaitMs 0 answers at once.
        The partition's answer, decoded (camelCase); a retriable error is retried."""
        if self.mode != "controller":
            raise InputError("the metadata log is read from the controllers: use --bootstrap-controller")
        cluster_id = self.cluster_info().cluster_id
        body = {
            "clusterId": cluster_id,
            "replicaId": -1,
            "maxWaitMs": 0,
            "minBytes": 0,
            "maxBytes": max_bytes,
            "topics": [
                {
                    "topicId": METADATA_TOPIC_ID,
                    "partitions": [
                        {
                            "partition": 0,
                            "currentLeaderEpoch": leader_epoch,
                            "fetchOffset": offset,
                            "lastFetchedEpoch": last_epoch,
                            "partitionMaxBytes": max_bytes,
                        }
                    ],
                }
            ],
        }

        def handle(conn, version, resp):
            # a top-level error comes with no partition (FetchRequest.getErrorResponse, v13+)
            self._raise_for(resp["errorCode"], None, conn.name, "Fetch", None)
            part = _single(conn.name, "Fetch", resp, "responses", "partitions", "partitionIndex")
            if resp["responses"][0].get("topicId") != METADATA_TOPIC_ID:
                raise NodeError(conn.name, f"{conn.name} answered Fetch for another topic", "protocol")
            self._raise_for(part["errorCode"], None, conn.name, "Fetch", part.get("currentLeader"))
            return part

        return self._quorum_call("Fetch", messages.FETCH, body, handle)

    def fetch_snapshot(self, snapshot_id: tuple[int, int], position: int, leader_epoch: int, max_bytes: int) -> dict:
        """One FetchSnapshot of __cluster_metadata-0's snapshot `snapshot_id` (end offset, epoch)
        from byte `position`, as RaftUtil.singletonFetchSnapshotRequest builds it, with ReplicaId -1.
        The partition's answer (size, position, unalignedRecords)."""
        cluster_id = self.cluster_info().cluster_id
        body = {
            "clusterId": cluster_id,
            "replicaId": -1,
            "maxBytes": max_bytes,
            "topics": [
                {
                    "name": METADATA_TOPIC,
                    "partitions": [
                        {
                            "partition": 0,
                            "currentLeaderEpoch": leader_epoch,
                            "snapshotId": {"endOffset": snapshot_id[0], "epoch": snapshot_id[1]},
                            "position": position,
                        }
                    ],
                }
            ],
        }

        def handle(conn, version, resp):
            self._raise_for(resp["errorCode"], None, conn.name, "FetchSnapshot", None)
            part = _single(conn.name, "FetchSnapshot", resp, "topics", "partitions", "index")
            self._raise_for(part["errorCode"], None, conn.name, "FetchSnapshot", part.get("currentLeader"))
            return part

        return self._quorum_call("FetchSnapshot", messages.FETCH_SNAPSHOT, body, handle)

    def bootstrap_connection(self) -> Connection:
        """A connection to the first bootstrap address that answers, retried until the deadline."""
        return self._with_retries("ApiVersions", lambda _hint: self._bootstrap_conn())

    def _handle_voter_change(self, api: str):
        def handle(conn, version, resp):
            self._raise_for(resp["errorCode"], resp.get("errorMessage"), conn.name, api, None)
            return None

        return handle


def leader_hint(partition: dict | None) -> int | None:
    """The leader a NOT_LEADER_OR_FOLLOWER answer names, if it names one."""
    if partition is not None and partition.get("leaderId", -1) >= 0 and partition.get("leaderEpoch", 0) > 0:
        return partition["leaderId"]
    return None


def parse_describe_quorum(name: str, version: int, resp: dict) -> QuorumResponse:
    """Check a DescribeQuorum answer the way Kafka's admin client does (one
    topic __cluster_metadata, one partition 0, no error codes). A non-zero
    code raises KafkaError; at partition level it carries `.partition`."""
    if resp["errorCode"]:
        raise kerrors.KafkaError(resp["errorCode"], resp.get("errorMessage"), name, "DescribeQuorum")
    topics = resp["topics"]
    if len(topics) != 1 or topics[0]["topicName"] != METADATA_TOPIC:
        got = [t["topicName"] for t in topics]
        raise NodeError(
            name, f"{name} answered DescribeQuorum for topics {got}, expected [{METADATA_TOPIC!r}]", "protocol"
        )
    parts = topics[0]["partitions"]
    if len(parts) != 1 or parts[0]["partitionIndex"] != 0:
        raise NodeError(
            name,
            f"{name} answered DescribeQuorum for partitions {[p['partitionIndex'] for p in parts]}, expected [0]",
            "protocol",
        )
    p = parts[0]
    if p["errorCode"]:
        err = kerrors.KafkaError(p["errorCode"], p.get("errorMessage"), name, "DescribeQuorum")
        err.partition = p
        raise err
    return QuorumResponse(p, resp.get("nodes", []), version, name)


def _single(name: str, api: str, resp: dict, topics: str, partitions: str, index: str) -> dict:
    """The one partition (0) of the one topic an answer about __cluster_metadata-0 must hold."""
    ts = resp.get(topics) or []
    parts = ts[0][partitions] if len(ts) == 1 else []
    if len(parts) != 1 or parts[0][index] != 0:
        raise NodeError(
            name, f"{name} answered {api} with {len(ts)} topic(s), not __cluster_metadata-0 alone", "protocol"
        )
    return parts[0]


def _address_of(name: str | None) -> Address | None:
    """The Address whose str() is `name` (NodeError carries the text form)."""
    if not name:
        return None
    if name.startswith("["):
        host, _, port = name[1:].partition("]:")
    else:
        host, _, port = name.rpartition(":")
    try:
        return Address(host, int(port))
    except ValueError:
        return None


class Refresher:
    """The --watch loop's state. A failed refresh is kept, not raised: during an
    incident the view must keep going when the cluster blips, showing the last
    good answer with the error and its time beneath it. Bad input still raises."""

    def __init__(self, once):
        self.once = once
        self.last = None  # the last good answer
        self.failure: tuple[str, str] | None = None  # the last refresh's (HH:MM:SS, error); None when it worked

    def refresh(self) -> bool:
        """Ask once; True when it answered."""
        try:
            self.last = self.once()
        except InputError:
            raise
        except ClusterError as e:
            self.failure = (time.strftime("%H:%M:%S"), str(e))
            return False
        self.failure = None
        return True
