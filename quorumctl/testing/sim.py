"""A simulated KRaft quorum that speaks the real Kafka protocol over TCP
(optionally TLS and SASL PLAIN / SCRAM), for tests, benchmarks and
`quorumctl demo`.

`SimulatedCluster` holds the quorum state in DescribeQuorum's own shape
(camelCase dicts: leaderId, leaderEpoch, highWatermark, currentVoters,
observers, nodes) and any number of `SimNode` listeners on loopback:
  controllers  answer ApiVersions, DescribeCluster (EndpointType=2 only),
               DescribeQuorum (the leader in full, the others
               NOT_LEADER_OR_FOLLOWER, optionally naming the leader),
               AddRaftVoter / RemoveRaftVoter (the leader only);
  brokers      answer ApiVersions, DescribeCluster (EndpointType=1), Metadata,
               and forward DescribeQuorum / AddRaftVoter / RemoveRaftVoter to
               the leader (hanging, as a real broker does, when the leader is
               silent or unknown); UnregisterBroker where a test enables it.
Each answer is encoded at the version the client asked for, so a v0 or v1
client gets exactly the fields that version has.

The state is scriptable: `set_leader`, `silence` (the node's listener accepts
but never answers, like a SIGSTOPped JVM, and its replica stops advancing),
`advance` (pretend time passed: silenced replicas age, and in live mode the
leader's log grows and the replicas that still fetch catch up), `set_fault` (garbage, a huge size, a
response cut short, a closed connection, an error code), and API profiles of
older Kafka versions ("3.7": DescribeQuorum v0-1 ...; "2.7": no DescribeQuorum).

Everything listens on 127.0.0.1 only; all loops are bounded and stop() joins
the threads.
"""

from __future__ import annotations

import copy
import socket
import struct
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..wire import kerrors
from ..wire import messages
from ..ids import METADATA_TOPIC_ID, ZERO_UUID
from ..wire.framing import decode_request, encode_response, frame
from ..schema.codec import DecodeError
from .auth import AuthFailed, server_mechanism

METADATA_TOPIC = "__cluster_metadata"
_NOT_LEADER_MESSAGE = (
    "For requests intended only for the leader, this error indicates that the broker is not the current leader."
)

# Versions each role advertises, per Kafka release (facts from Kafka's schemas
# and `kafka-metadata-quorum` history: DescribeQuorum v1 in 3.3, v2 in 3.9,
# DescribeCluster v1 in 3.7, AddRaftVoter/RemoveRaftVoter in 3.9, AddRaftVoter v1 in 4.3).
_COMMON = {messages.SASL_HANDSHAKE: (0, 1), messages.SASL_AUTHENTICATE: (0, 2)}
PROFILES: dict[str, dict[str, dict[int, tuple[int, int]]]] = {
    "4.3": {  # AddRaftVoter v1 (AckWhenCommitted) in 4.3; DescribeCluster v2 and UpdateFeatures v2 since 4.0
        "controller": {
            messages.API_VERSIONS: (0, 4),
            messages.DESCRIBE_QUORUM: (0, 2),
            messages.DESCRIBE_CLUSTER: (0, 2),
            messages.ADD_RAFT_VOTER: (0, 1),
            messages.REMOVE_RAFT_VOTER: (0, 0),
            messages.UPDATE_FEATURES: (0, 2),
        },
        "broker": {
            messages.API_VERSIONS: (0, 4),
            messages.METADATA: (0, 12),
            messages.DESCRIBE_QUORUM: (0, 2),
            messages.DESCRIBE_CLUSTER: (0, 2),
            messages.ADD_RAFT_VOTER: (0, 1),
            messages.REMOVE_RAFT_VOTER: (0, 0),
            messages.UPDATE_FEATURES: (0, 2),
        },
    },
    "3.9": {
        "controller": {
            messages.API_VERSIONS: (0, 4),
            messages.DESCRIBE_QUORUM: (0, 2),
            messages.DESCRIBE_CLUSTER: (0, 1),
            messages.ADD_RAFT_VOTER: (0, 0),
            messages.REMOVE_RAFT_VOTER: (0, 0),
        },
        "broker": {
            messages.API_VERSIONS: (0, 4),
            messages.METADATA: (0, 12),
            messages.DESCRIBE_QUORUM: (0, 2),
            messages.DESCRIBE_CLUSTER: (0, 1),
            messages.ADD_RAFT_VOTER: (0, 0),
            messages.REMOVE_RAFT_VOTER: (0, 0),
        },
    },
    "3.7": {
        "controller": {
            messages.API_VERSIONS: (0, 3),
            messages.DESCRIBE_QUORUM: (0, 1),
            messages.DESCRIBE_CLUSTER: (0, 1),
        },
        "broker": {
            messages.API_VERSIONS: (0, 3),
            messages.METADATA: (0, 12),
            messages.DESCRIBE_QUORUM: (0, 1),
            messages.DESCRIBE_CLUSTER: (0, 1),
        },
    },
    "3.0": {
        "controller": {messages.API_VERSIONS: (0, 3), messages.DESCRIBE_QUORUM: (0, 0)},
        "broker": {
            messages.API_VERSIONS: (0, 3),
            messages.METADATA: (0, 11),
            messages.DESCRIBE_QUORUM: (0, 0),
            messages.DESCRIBE_CLUSTER: (0, 0),
        },
    },
    "2.7": {
        "controller": {messages.API_VERSIONS: (0, 3)},
        "broker": {messages.API_VERSIONS: (0, 3), messages.METADATA: (0, 9)},
    },
}

FAULTS = ("silent", "garbage", "noise", "huge", "truncate", "close", "error")


def replica(
    replica_id: int,
    log_end_offset: int,
    last_fetch: int = -1,
    last_caught_up: int = -1,
    directory_id: str | None = None,
) -> dict:
    """One ReplicaState in DescribeQuorum's shape."""
    return {
        "replicaId": replica_id,
        "replicaDirectoryId": directory_id or ZERO_UUID,
        "logEndOffset": log_end_offset,
        "lastFetchTimestamp": last_fetch,
        "lastCaughtUpTimestamp": last_caught_up,
    }


def node(node_id: int, *listeners: tuple[str, str, int]) -> dict:
    """One DescribeQuorum v2 Node: listeners are (name, host, port)."""
    return {"nodeId": node_id, "listeners": [{"name": n, "host": h, "port": p} for n, h, p in listeners]}


# (feature, supported min, supported max = finalized level) of a Kafka 4.1 node
SIM_FEATURES = [
    ("eligible.leader.replicas.version", 0, 1),
    ("group.version", 0, 1),
    ("kraft.version", 0, 1),
    ("metadata.version", 7, 27),
    ("share.version", 0, 1),
    ("streams.version", 0, 1),
    ("transaction.version", 0, 2),
]


@dataclass(frozen=True)
class LiveMode:
    """Live mode: the leader's log grows by `growth_per_s` records a second, and
    every replica that still fetches follows it, voter or observer `i` fetching
    `fetch_lag_ms[i]` ms behind the leader's clock (0 when not named)."""

    growth_per_s: float = 0.0
    fetch_lag_ms: Mapping[int, int] = field(default_factory=dict)


class SimulatedCluster:
    def __init__(
        self,
        cluster_id: str,
        leader_id: int,
        leader_epoch: int,
        high_watermark: int,
        voters: list[dict],
        observers: list[dict] | None = None,
        nodes: list[dict] | None = None,
        *,
        live: LiveMode | None = None,
        dynamic: bool = True,
    ):
        """The quorum as DescribeQuorum reports it. `live`: it progresses on its own
        (None: only when scripted); `dynamic`: AddRaftVoter and RemoveRaftVoter are
        answered (else refused, as under kraft.version 0)."""
        self.cluster_id = cluster_id
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch
        self.high_watermark = high_watermark
        self.voters = [dict(r) for r in voters]
        self.observers = [dict(r) for r in observers or []]
        self.nodes = copy.deepcopy(nodes or [])
        self.live = live is not None
        self.dynamic = dynamic
        self.growth_per_s = live.growth_per_s if live is not None else 0.0
        self.fetch_lag_ms = dict(live.fetch_lag_ms) if live is not None else {}
        self.silent: set[int] = set()
        self.lock = threading.RLock()
        self.endpoints: list[SimNode] = []
        self._last_ms: int | None = None
        self._growth_carry = 0.0
        self.requests: list[tuple[int, int, int]] = []  # (node id, api key, version), for tests
        self.add_voter_requests: list[tuple[int, dict]] = []  # (version, AddRaftVoter body), for tests
        # finalized feature levels (ApiVersions; UpdateFeatures changes them) and the registrations'
        # supported ranges of nodes that have no listener here (a registered broker that is down)
        self.finalized = {n: hi for n, lo, hi in SIM_FEATURES if hi}
        self.update_features_requests: list[tuple[int, dict]] = []  # (version, UpdateFeatures body), for tests
        # the metadata log the leader serves to Fetch / FetchSnapshot (APIs 1 and 59, where a test
        # enables them): built from the registrations; its first `snapshot_records` records in a snapshot
        self.snapshot_records = 0
        self.uncommitted_records = 0  # the log's last records above the high watermark
        self.fetch_requests: list[tuple[int, dict]] = []  # (api key, body), for tests

    # -- clock and live progress ------------------------------------------------------
    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def advance(self, ms: int = 0, records: int = 0):
        """Pretend `ms` milliseconds passed and `records` were appended at the
        leader. The clock stays real (clients compare timestamps with their
        own clock): replicas that stopped fetching (silenced) age by `ms`; in
        live mode the leader's log also grows by growth_per_s over `ms` and
        the replicas that still fetch catch up."""
        with self.lock:
            for r in self.voters + self.observers:
                if r["replicaId"] in self.silent:
                    for k in ("lastFetchTimestamp", "lastCaughtUpTimestamp"):
                        if r[k] >= 0:
                            r[k] -= ms
            lead = self._find(self.leader_id)
            if lead is not None:
                lead["logEndOffset"] += records
                if self.live:
                    self._growth_carry += ms / 1000.0 * self.growth_per_s
            if self.live:
                self._refresh(self.now_ms())

    def _find(self, rid: int) -> dict | None:
        for r in self.voters:
            if r["replicaId"] == rid:
                return r
        for r in self.observers:
            if r["replicaId"] == rid:
                return r
        return None

    def _refresh(self, now: int):
        """Live mode: what the leader's LeaderState would report now."""
        lead = self._find(self.leader_id)
        if lead is None or self.leader_id in self.silent:
            return
        if self._last_ms is not None and self.growth_per_s:
            self._growth_carry += max(now - self._last_ms, 0) / 1000.0 * self.growth_per_s
        whole = int(self._growth_carry)
        self._growth_carry -= whole
        lead["logEndOffset"] += whole
        self._last_ms = now
        leo = lead["logEndOffset"]
        lead["lastFetchTimestamp"] = lead["lastCaughtUpTimestamp"] = now
        for r in self.voters + self.observers:
            if r is lead or r["replicaId"] in self.silent:
                continue
            t = now - self.fetch_lag_ms.get(r["replicaId"], 0)
            r["logEndOffset"] = leo
            r["lastFetchTimestamp"] = max(r["lastFetchTimestamp"], t)
            r["lastCaughtUpTimestamp"] = max(r["lastCaughtUpTimestamp"], t)
        leos = sorted((r["logEndOffset"] for r in self.voters), reverse=True)
        if leos:
            self.high_watermark = max(self.high_watermark, leos[len(leos) // 2])

    # -- scripting -------------------------------------------------------------------
    def set_leader(self, leader_id: int, epoch: int | None = None):
        with self.lock:
            old = self._find(self.leader_id)
            self.leader_id = leader_id
            self.leader_epoch = self.leader_epoch + 1 if epoch is None else epoch
            new = self._find(leader_id)
            if self.live and old is not None and new is not None:
                new["logEndOffset"] = max(new["logEndOffset"], old["logEndOffset"])

    def silence(self, node_id: int, silent: bool = True):
        """The node stops answering (its listeners accept and hold) and, in
        live mode, its replica stops fetching."""
        with self.lock:
            if self.live and silent and node_id not in self.silent:
                self._refresh(self.now_ms())
            (self.silent.add if silent else self.silent.discard)(node_id)

    def node_by_id(self, node_id: int) -> "SimNode":
        return next(e for e in self.endpoints if e.node_id == node_id)

    # -- endpoints ----------------------------------------------------------------------
    def add_controller(self, node_id: int, **kw) -> "SimNode":
        n = SimNode(self, node_id, "controller", **kw)
        self.endpoints.append(n)
        return n

    def add_broker(self, node_id: int, **kw) -> "SimNode":
        n = SimNode(self, node_id, "broker", **kw)
        self.endpoints.append(n)
        return n

    def add_nodes(self, controllers=(1, 2, 3), brokers=(4,), **kw) -> "SimulatedCluster":
        """The usual test topology: these controllers and brokers, each with the same options."""
        for i in controllers:
            self.add_controller(i, **kw)
        for i in brokers:
            self.add_broker(i, **kw)
        return self

    def advertise_controllers(self, listener: str = "CONTROLLER"):
        """Set the voters' endpoints (DescribeQuorum v2 Nodes) to the
        controllers' real listeners, once they are started."""
        with self.lock:
            voter_ids = {r["replicaId"] for r in self.voters}
            self.nodes = [
                node(e.node_id, (listener, e.advertised_host, e.port))
                for e in self.controllers()
                if e.node_id in voter_ids
            ]

    def controllers(self) -> list["SimNode"]:
        return [e for e in self.endpoints if e.role == "controller"]

    def brokers(self) -> list["SimNode"]:
        return [e for e in self.endpoints if e.role == "broker"]

    def start(self) -> "SimulatedCluster":
        for e in self.endpoints:
            e.start()
        return self

    def stop(self):
        for e in self.endpoints:  # signal all first, then wait: the accept loops poll every 0.1 s
            e.stop(join=False)
        for e in self.endpoints:
            e.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- answers -------------------------------------------------------------------------
    def quorum_answer(self) -> dict:
        """The DescribeQuorum response body (all v2 fields; the codec drops
        what an older version lacks)."""
        with self.lock:
            if self.live:
                self._refresh(self.now_ms())
            part = {
                "partitionIndex": 0,
                "errorCode": 0,
                "errorMessage": None,
                "leaderId": self.leader_id,
                "leaderEpoch": self.leader_epoch,
                "highWatermark": self.high_watermark,
                "currentVoters": [dict(r) for r in self.voters],
                "observers": [dict(r) for r in self.observers],
            }
            return {
                "errorCode": 0,
                "errorMessage": None,
                "topics": [{"topicName": METADATA_TOPIC, "partitions": [part]}],
                "nodes": copy.deepcopy(self.nodes),
            }

    def metadata_log(self) -> tuple[tuple[int, int, bytes] | None, int, bytes]:
        """(snapshot (end offset, epoch, bytes) or None, the log's start offset, its batches): the
        finalized feature levels and a RegisterBrokerRecord for each registered broker (fenced as
        the broker is), one record per batch, in the leader's epoch. The log's end is its high watermark."""
        from ..logdir.snapshots import encode_snapshot
        from ..records import metadata as md
        from ..records.batch import encode_batch

        records: list[tuple[str, int, dict]] = [
            ("FeatureLevelRecord", 0, {"name": n, "featureLevel": lvl}) for n, lvl in sorted(self.finalized.items())
        ]
        for b in self.brokers():
            if not b.registered:
                continue
            records.append(
                (
                    "RegisterBrokerRecord",
                    3,
                    {
                        "brokerId": b.node_id,
                        "incarnationId": ZERO_UUID,
                        "brokerEpoch": 10 + b.node_id,
                        "endPoints": [
                            {"name": "PLAINTEXT", "host": b.advertised_host, "port": b.port, "securityProtocol": 0}
                        ],
                        "features": [
                            {"name": n, "minSupportedVersion": lo, "maxSupportedVersion": hi}
                            for n, (lo, hi) in sorted(b.features.items())
                        ],
                        "rack": None,
                        "fenced": b.fenced,
                        "inControlledShutdown": False,
                        "logDirs": [],
                    },
                )
            )
        cut = min(self.snapshot_records, len(records))
        snapshot = None
        if cut:
            snapshot = (cut, self.leader_epoch, encode_snapshot(records[:cut], epoch=self.leader_epoch, timestamp_ms=0))
        log = b"".join(
            encode_batch([(None, md.encode_metadata(*r))], base_offset=cut + i, leader_epoch=self.leader_epoch)
            for i, r in enumerate(records[cut:])
        )
        return snapshot, cut, log

    def leader_reachable(self) -> bool:
        if self.leader_id < 0 or self.leader_id in self.silent:
            return False
        ctl = [e for e in self.controllers() if e.node_id == self.leader_id]
        return not ctl or (ctl[0].fault != "silent" and ctl[0].running)

    def add_voter(self, body: dict) -> tuple[int, str | None]:
        with self.lock:
            if not self.dynamic:
                return kerrors.UNSUPPORTED_VERSION, (
                    "Cluster doesn't support adding voter because the kraft.version feature is 0"
                )
            vid, did = body["voterId"], body["voterDirectoryId"]
            if any(r["replicaId"] == vid and r["replicaDirectoryId"] == did for r in self.voters):
                return kerrors.DUPLICATE_VOTER, (
                    f"The voter id for {_key(vid, did)} is already part of the set "
                    f"of voters [{', '.join(_key(r['replicaId'], r['replicaDirectoryId']) for r in self.voters)}]."
                )
            if not body["listeners"]:
                return kerrors.INVALID_REQUEST, "Add voter request didn't include any listeners"
            obs = next((r for r in self.observers if r["replicaId"] == vid and r["replicaDirectoryId"] == did), None)
            if obs is not None:
                self.observers.remove(obs)
            else:
                lead = self._find(self.leader_id)
                now = self.now_ms()
                obs = replica(vid, lead["logEndOffset"] if lead else 0, now, now, did)
            self.voters.append(obs)
            self.nodes = [n for n in self.nodes if n["nodeId"] != vid]
            self.nodes.append({"nodeId": vid, "listeners": [dict(e) for e in body["listeners"]]})
            return 0, None

    def remove_voter(self, body: dict) -> tuple[int, str | None]:
        with self.lock:
            if not self.dynamic:
                return kerrors.UNSUPPORTED_VERSION, (
                    "Cluster doesn't support removing voter because the kraft.version feature is 0"
                )
            vid, did = body["voterId"], body["voterDirectoryId"]
            if did == ZERO_UUID:
                return kerrors.INVALID_REQUEST, "Remove voter request didn't include a valid voter"
            v = next((r for r in self.voters if r["replicaId"] == vid and r["replicaDirectoryId"] == did), None)
            if v is None:
                return kerrors.VOTER_NOT_FOUND, (
                    f"Cannot remove voter {_key(vid, did)} from the set of voters "
                    f"[{', '.join(_key(r['replicaId'], r['replicaDirectoryId']) for r in self.voters)}]"
                )
            self.voters.remove(v)
            self.observers.append(v)
            self.nodes = [n for n in self.nodes if n["nodeId"] != vid]
            return 0, None


def _key(vid: int, did: str) -> str:
    return f"ReplicaKey(id={vid}, directoryId=Optional[{did}])"


_SIZE = struct.Struct(">i")


class _Hang:
    """A handler's answer that never comes (the node holds the connection)."""


_HANG = _Hang()


class SimNode:
    """One listener of the simulated cluster (a controller or a broker)."""

    def __init__(
        self,
        cluster: SimulatedCluster,
        node_id: int,
        role: str,
        *,
        port: int = 0,
        profile: str = "3.9",
        apis: dict[int, tuple[int, int]] | None = None,
        tls=None,
        sasl: dict | None = None,
        advertised_host: str = "127.0.0.1",
    ):
        self.cluster = cluster
        self.node_id = node_id
        self.role = role
        self.host = "127.0.0.1"
        self.advertised_host = advertised_host
        self.port = port
        self.apis = dict(_COMMON)
        self.apis.update(PROFILES[profile][role])
        if apis:
            self.apis.update(apis)
        self.tls = tls  # a server-side ssl.SSLContext, or None
        self.sasl = sasl  # {"mechanisms": [...], "users": {name: password}}
        # scripted by tests, as the faults below: who this node believes leads (None: the
        # real leader), and whether a follower's NOT_LEADER answer names the leader
        self.leader_view: int | None = None
        self.not_leader_hint = False
        # what this node supports (its ApiVersions and its registration); brokers: fenced or not
        self.features: dict[str, tuple[int, int]] = {n: (lo, hi) for n, lo, hi in SIM_FEATURES}
        self.fenced = False
        self.registered = True  # False once UnregisterBroker removed it (DescribeCluster stops listing it)
        self.fault: str | None = None
        self.fault_api: int | None = None
        self.fault_error: tuple[int, str | None, bool] | None = None
        self.running = False
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._clients: set[socket.socket] = set()
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def set_fault(self, fault: str | None, api: int | None = None, error: tuple | None = None):
        """Misbehave: `fault` in FAULTS (None: behave). `api`: only for that
        API key (None: every request, ApiVersions included). For "error",
        `error` = (code, message, top_level)."""
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        self.fault, self.fault_api, self.fault_error = fault, api, error

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> "SimNode":
        if self.running:
            return self
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.host, self.port))
        s.listen(64)
        s.settimeout(0.1)
        self.port = s.getsockname()[1]
        self._sock = s
        self._stop.clear()
        self.running = True
        t = threading.Thread(target=self._accept_loop, name=f"sim-{self.role}-{self.node_id}", daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def stop(self, join: bool = True):
        self._stop.set()
        self.running = False
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        with self._lock:
            for c in list(self._clients):
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                try:
                    c.close()
                except OSError:
                    pass
            self._clients.clear()
        if not join:
            return
        for t in self._threads:
            t.join(timeout=2)
        self._threads = [t for t in self._threads if t.is_alive()]

    def _accept_loop(self):
        assert self._sock is not None  # the loop's thread starts once the socket listens
        while not self._stop.is_set():
            try:
                c, _ = self._sock.accept()
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                return
            with self._lock:
                self._clients.add(c)
            t = threading.Thread(target=self._serve, args=(c,), daemon=True)
            t.start()
            self._threads = [x for x in self._threads if x.is_alive()] + [t]

    # -- one connection -------------------------------------------------------------------
    def _silent(self) -> bool:
        return (self.fault == "silent" and self.fault_api is None) or self.node_id in self.cluster.silent

    def _recv(self, c, n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            if self._stop.is_set():
                return None
            try:
                chunk = c.recv(n - len(buf))
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                return None
            if not chunk:
                return None
            buf += chunk
        return buf

    def _hold(self, c):
        """Keep the connection open without answering, until the client
        gives up or we stop (bounded by the client's own timeout)."""
        while not self._stop.is_set():
            try:
                if not c.recv(65536):
                    return
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                return

    def _serve(self, c: socket.socket):
        try:
            c.settimeout(0.2)
            if self.tls is not None and not self._silent():
                try:
                    c.settimeout(5)
                    c = self.tls.wrap_socket(c, server_side=True)
                    c.settimeout(0.2)
                except OSError:
                    return
            state = {"sasl": "start" if self.sasl else None, "mech": None}
            while not self._stop.is_set():
                if self._silent():
                    self._hold(c)
                    return
                head = self._recv(c, 4)
                if head is None:
                    return
                (size,) = _SIZE.unpack(head)
                if size < 8 or size > 1 << 20:
                    return
                payload = self._recv(c, size)
                if payload is None:
                    return
                if self._silent():
                    self._hold(c)
                    return
                if not self._answer(c, payload, state):
                    return
        finally:
            with self._lock:
                self._clients.discard(c)
            try:
                c.close()
            except OSError:
                pass

    def _answer(self, c, payload: bytes, state: dict) -> bool:
        try:
            header, api, body = decode_request(payload)
        except DecodeError:
            return False
        key, version, corr = header["requestApiKey"], header["requestApiVersion"], header["correlationId"]
        self.cluster.requests.append((self.node_id, key, version))
        fault = self.fault if (self.fault_api is None or self.fault_api == key) else None
        if fault == "close":
            return False
        if fault == "silent":
            self._hold(c)
            return False
        if fault == "noise":
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return False
        if fault == "huge":
            c.sendall(_SIZE.pack(0x7FFFFFFF) + _SIZE.pack(corr) + b"\x00" * 64)
            self._hold(c)
            return False
        if fault == "garbage":
            c.sendall(frame(_SIZE.pack(corr) + b"\xff" * 11))
            return True
        if api is None:
            return False  # Kafka closes the connection on an unknown API key
        if key == messages.API_VERSIONS:
            resp, version = self._api_versions(version)
        elif body is None or key not in self.apis or not self.apis[key][0] <= version <= self.apis[key][1]:
            return False  # an unsupported version does not parse: Kafka closes the connection
        else:
            if state["sasl"] not in (None, "done") and key not in (messages.SASL_HANDSHAKE, messages.SASL_AUTHENTICATE):
                return False  # request before authentication: Kafka closes the connection
            handler = getattr(self, f"_h{key}")
            resp = handler(version, body, state)
            if resp is _HANG:
                self._hold(c)
                return False
            if fault == "error" and self.fault_error:
                self._inject_error(key, resp, self.fault_error)
        data = encode_response(api, version, corr, resp)
        if fault == "truncate":
            c.sendall(data[: max(len(data) // 2, 6)])
            return False
        c.sendall(data)
        return not state.get("close")

    def _inject_error(self, key: int, resp: dict, error: tuple[int, str | None, bool]):
        code, message, top = error
        if key == messages.DESCRIBE_QUORUM and not top:
            p = resp["topics"][0]["partitions"][0]
            p["errorCode"], p["errorMessage"] = code, message
        else:
            resp["errorCode"] = code
            if key == messages.FETCH:
                resp["responses"] = []  # v13+: a top-level error and no partition (FetchRequest.getErrorResponse)
            if "errorMessage" in resp or key in (messages.DESCRIBE_QUORUM, messages.DESCRIBE_CLUSTER):
                resp["errorMessage"] = message

    # -- handlers (named _h<api key>) --------------------------------------------------------
    def _api_versions(self, version: int) -> tuple[dict, int]:
        lo, hi = self.apis[messages.API_VERSIONS]
        if not lo <= version <= hi:
            # answer in v0 form with our ApiVersions range only (KIP-511)
            return {
                "errorCode": kerrors.UNSUPPORTED_VERSION,
                "apiKeys": [{"apiKey": messages.API_VERSIONS, "minVersion": lo, "maxVersion": hi}],
            }, 0
        keys = [{"apiKey": k, "minVersion": v[0], "maxVersion": v[1]} for k, v in sorted(self.apis.items())]
        resp = {"errorCode": 0, "apiKeys": keys, "throttleTimeMs": 0}
        if version >= 3:
            # as a Kafka 4.1 node formatted at 4.1-IV1 answers (kafka-features describe reads these)
            resp["supportedFeatures"] = [
                {"name": n, "minVersion": lo, "maxVersion": hi} for n, (lo, hi) in sorted(self.features.items())
            ]
            resp["finalizedFeaturesEpoch"] = self.cluster.high_watermark
            resp["finalizedFeatures"] = [
                {"name": n, "maxVersionLevel": lvl, "minVersionLevel": lvl}
                for n, lvl in sorted(self.cluster.finalized.items())
            ]
        return resp, version

    def _h17(self, version: int, body: dict, state: dict) -> dict:  # SaslHandshake
        if not self.sasl:
            state["close"] = True
            return {"errorCode": kerrors.ILLEGAL_SASL_STATE, "mechanisms": []}
        mechs = list(self.sasl["mechanisms"])
        if body["mechanism"] not in mechs:
            state["close"] = True
            return {"errorCode": kerrors.UNSUPPORTED_SASL_MECHANISM, "mechanisms": mechs}
        state["sasl"] = "auth"
        state["mech"] = server_mechanism(body["mechanism"], self.sasl["users"])
        return {"errorCode": 0, "mechanisms": mechs}

    def _h36(self, version: int, body: dict, state: dict) -> dict:  # SaslAuthenticate
        mech = state.get("mech")
        if state.get("sasl") != "auth" or mech is None:
            state["close"] = True
            return {
                "errorCode": kerrors.ILLEGAL_SASL_STATE,
                "errorMessage": "Unexpected SaslAuthenticate",
                "authBytes": b"",
                "sessionLifetimeMs": 0,
            }
        try:
            out = mech.step(body["authBytes"])
        except AuthFailed as e:
            state["close"] = True
            return {
                "errorCode": kerrors.SASL_AUTHENTICATION_FAILED,
                "errorMessage": str(e),
                "authBytes": b"",
                "sessionLifetimeMs": 0,
            }
        if mech.done:
            state["sasl"] = "done"
        return {"errorCode": 0, "errorMessage": None, "authBytes": out, "sessionLifetimeMs": 0}

    def _h60(self, version: int, body: dict, state: dict) -> dict:  # DescribeCluster
        want = body.get("endpointType", 1)
        mine = 2 if self.role == "controller" else 1
        base: dict[str, Any] = {
            "throttleTimeMs": 0,
            "errorCode": 0,
            "errorMessage": None,
            "endpointType": mine,
            "clusterId": self.cluster.cluster_id,
            "controllerId": -1,
            "brokers": [],
            "clusterAuthorizedOperations": -2147483648,
        }
        if want not in (1, 2):
            base.update(
                errorCode=kerrors.INVALID_REQUEST if version == 0 else kerrors.UNSUPPORTED_ENDPOINT_TYPE,
                errorMessage=f"Unsupported endpoint type {want}",
            )
            return base
        if want != mine:
            names = {1: "BROKER", 2: "CONTROLLER"}
            base.update(
                errorCode=kerrors.INVALID_REQUEST if version == 0 else kerrors.MISMATCHED_ENDPOINT_TYPE,
                errorMessage=f"The request was sent to an endpoint of type {names[mine]}, "
                f"but we wanted an endpoint of type {names[want]}",
            )
            return base
        peers = [e for e in (self.cluster.controllers() if mine == 2 else self.cluster.brokers()) if e.registered]
        if mine == 1 and not body.get("includeFencedBrokers"):
            peers = [e for e in peers if not e.fenced]
        base["brokers"] = [
            {"brokerId": e.node_id, "host": e.advertised_host, "port": e.port, "rack": None, "isFenced": e.fenced}
            for e in peers
        ]
        ids = {e.node_id for e in peers}
        if mine == 2:
            view = self.cluster.leader_id if self.leader_view is None else self.leader_view
            base["controllerId"] = view if view in ids else -1
        else:
            base["controllerId"] = self.node_id  # KRaft brokers name some live broker here
        return base

    def _h3(self, version: int, body: dict, state: dict) -> dict:  # Metadata
        brokers = [
            {"nodeId": e.node_id, "host": e.advertised_host, "port": e.port, "rack": None}
            for e in self.cluster.brokers()
        ]
        topics = []
        for t in body.get("topics") or []:
            topics.append(
                {
                    "errorCode": kerrors.UNKNOWN_TOPIC_OR_PARTITION,
                    "name": t["name"],
                    "topicId": ZERO_UUID,
                    "isInternal": False,
                    "partitions": [],
                    "topicAuthorizedOperations": -2147483648,
                }
            )
        return {
            "throttleTimeMs": 0,
            "brokers": brokers,
            "clusterId": self.cluster.cluster_id,
            "controllerId": self.node_id,
            "topics": topics,
            "clusterAuthorizedOperations": -2147483648,
        }

    def _is_leader(self) -> bool:
        return self.role == "controller" and self.cluster.leader_id == self.node_id

    def _not_leader(self) -> dict:
        part = {
            "partitionIndex": 0,
            "errorCode": kerrors.NOT_LEADER_OR_FOLLOWER,
            "errorMessage": _NOT_LEADER_MESSAGE,
            "leaderId": 0,
            "leaderEpoch": 0,
            "highWatermark": 0,
            "currentVoters": [],
            "observers": [],
        }
        if self.not_leader_hint and self.cluster.leader_id >= 0:
            part["leaderId"], part["leaderEpoch"] = self.cluster.leader_id, self.cluster.leader_epoch
        return {
            "errorCode": 0,
            "errorMessage": None,
            "topics": [{"topicName": METADATA_TOPIC, "partitions": [part]}],
            "nodes": [],
        }

    def _h55(self, version: int, body: dict, state: dict):  # DescribeQuorum
        topics = body["topics"]
        if (
            len(topics) != 1
            or topics[0]["topicName"] != METADATA_TOPIC
            or [p["partitionIndex"] for p in topics[0]["partitions"]] != [0]
        ):
            return {
                "errorCode": 0,
                "errorMessage": None,
                "nodes": [],
                "topics": [
                    {
                        "topicName": t["topicName"],
                        "partitions": [
                            {
                                "partitionIndex": p["partitionIndex"],
                                "errorCode": kerrors.UNKNOWN_TOPIC_OR_PARTITION,
                                "errorMessage": None,
                                "leaderId": 0,
                                "leaderEpoch": 0,
                                "highWatermark": 0,
                                "currentVoters": [],
                                "observers": [],
                            }
                            for p in t["partitions"]
                        ],
                    }
                    for t in topics
                ],
            }
        if self.role == "broker":
            if not self.cluster.leader_reachable():
                return _HANG  # the forwarded request never comes back
            return self.cluster.quorum_answer()
        if not self._is_leader():
            return self._not_leader()
        return self.cluster.quorum_answer()

    def _voter_change(self, change) -> dict | _Hang:
        if self.role == "broker" and not self.cluster.leader_reachable():
            return _HANG
        if self.role == "controller" and not self._is_leader():
            code, msg = kerrors.NOT_LEADER_OR_FOLLOWER, _NOT_LEADER_MESSAGE
        else:
            code, msg = change()
        return {"throttleTimeMs": 0, "errorCode": code, "errorMessage": msg}

    def _h57(self, version: int, body: dict, state: dict):  # UpdateFeatures
        """The active controller's range check (FeatureControlManager.reasonNotSupported's
        wording, Kafka 4.3): every registered broker, then every controller; the first
        node whose range excludes a new level refuses the whole request. Brokers forward."""
        if self.role == "controller" and not self._is_leader():
            return {"throttleTimeMs": 0, "errorCode": kerrors.NOT_CONTROLLER, "errorMessage": None, "results": []}
        self.cluster.update_features_requests.append((version, body))
        error = None
        for u in body["featureUpdates"]:
            name, level = u["feature"], u["maxVersionLevel"]
            for e in sorted(self.cluster.brokers(), key=lambda e: e.node_id) + sorted(
                self.cluster.controllers(), key=lambda e: e.node_id
            ):
                if not e.registered:
                    continue
                lo, hi = e.features.get(name, (0, 0))
                if not lo <= level <= hi:
                    what = f"{e.role.capitalize()} {e.node_id}"
                    why = (
                        f"{what} does not support this feature."
                        if hi == 0
                        else f"{what} only supports versions {lo}-{hi}"
                    )
                    error = f"Invalid update version {level} for feature {name}. {why}"
                    break
            if error:
                break
        if error is None and not body.get("validateOnly"):
            with self.cluster.lock:
                for u in body["featureUpdates"]:
                    self.cluster.finalized[u["feature"]] = u["maxVersionLevel"]
        resp: dict[str, Any] = {
            "throttleTimeMs": 0,
            "errorCode": 0 if error is None else kerrors.INVALID_UPDATE_VERSION,
            "errorMessage": None
            if error is None
            else "The update failed for all features since the following feature had an error: " + error,
            "results": [],
        }
        return resp

    def _h64(self, version: int, body: dict, state: dict) -> dict:  # UnregisterBroker (brokers forward it)
        """The controller removes the registration (ClusterControlManager.unregisterBroker),
        or answers BROKER_ID_NOT_REGISTERED; served only where a test enables API 64. A
        controller that is not the active one answers NOT_CONTROLLER, as Kafka's does."""
        if self.role == "controller" and not self._is_leader():
            return {"throttleTimeMs": 0, "errorCode": kerrors.NOT_CONTROLLER, "errorMessage": None}
        with self.cluster.lock:
            mine = [e for e in self.cluster.brokers() if e.node_id == body["brokerId"] and e.registered]
            for e in mine:
                e.registered = False
        if not mine:
            return {
                "throttleTimeMs": 0,
                "errorCode": kerrors.BROKER_ID_NOT_REGISTERED,
                "errorMessage": f"Broker ID {body['brokerId']} not registered.",
            }
        return {"throttleTimeMs": 0, "errorCode": 0, "errorMessage": None}

    def _h1(self, version: int, body: dict, state: dict) -> dict:  # Fetch of __cluster_metadata-0
        """As KafkaRaftClient.handleFetchRequest answers an observer: the topic id checked, the
        leader epoch validated, a SnapshotId when the fetch starts below the snapshot's end, else
        the batches from the offset up to MaxBytes (the first one whole, a later one cut short
        where MaxBytes ends inside it, as Kafka's log read does), and the high watermark."""
        self.cluster.fetch_requests.append((messages.FETCH, body))
        topics = body["topics"]
        if len(topics) != 1 or topics[0]["topicId"] != METADATA_TOPIC_ID or len(topics[0]["partitions"]) != 1:
            return {"throttleTimeMs": 0, "errorCode": kerrors.INVALID_REQUEST, "sessionId": 0, "responses": []}
        req = topics[0]["partitions"][0]
        part: dict[str, Any] = {
            "partitionIndex": 0,
            "errorCode": 0,
            "highWatermark": -1,
            "lastStableOffset": -1,
            "logStartOffset": -1,
            "abortedTransactions": None,
            "preferredReadReplica": -1,
            "records": b"",
        }
        resp = {
            "throttleTimeMs": 0,
            "errorCode": 0,
            "sessionId": 0,
            "responses": [{"topicId": METADATA_TOPIC_ID, "partitions": [part]}],
        }
        if not self._is_leader():
            part["errorCode"] = kerrors.NOT_LEADER_OR_FOLLOWER
            return resp
        if req["currentLeaderEpoch"] != self.cluster.leader_epoch:
            part["errorCode"] = 74 if req["currentLeaderEpoch"] < self.cluster.leader_epoch else 75  # FENCED / UNKNOWN
            return resp
        from ..records.batch import BatchReader

        snapshot, start, log = self.cluster.metadata_log()
        offset = req["fetchOffset"]
        with BatchReader(log) as reader:
            batches = [(b.position, b.base_offset) for b in reader]
        part["highWatermark"] = start + len(batches) - self.cluster.uncommitted_records
        part["logStartOffset"] = start
        if snapshot is not None and offset < snapshot[0]:
            part["snapshotId"] = {"endOffset": snapshot[0], "epoch": snapshot[1]}
            return resp
        at = [(p, base) for p, base in batches if base >= offset]
        pos = at[0][0] if at else len(log)
        first = (at[1][0] if len(at) > 1 else len(log)) - pos  # the first batch goes whole (minOneMessage)
        part["records"] = log[pos : pos + max(body["maxBytes"], first)]
        return resp

    def _h59(self, version: int, body: dict, state: dict) -> dict:  # FetchSnapshot
        """A slice of the snapshot from Position, at most MaxBytes (RawSnapshotReader.slice)."""
        self.cluster.fetch_requests.append((messages.FETCH_SNAPSHOT, body))
        req = body["topics"][0]["partitions"][0]
        snapshot, _start, _log = self.cluster.metadata_log()
        part: dict[str, Any] = {
            "index": 0,
            "errorCode": 0,
            "snapshotId": req["snapshotId"],
            "size": 0,
            "position": req["position"],
            "unalignedRecords": b"",
        }
        want = (req["snapshotId"]["endOffset"], req["snapshotId"]["epoch"])
        if snapshot is None or want != snapshot[:2]:
            part["errorCode"] = 98  # SNAPSHOT_NOT_FOUND
        else:
            data = snapshot[2]
            part["size"] = len(data)
            part["unalignedRecords"] = data[req["position"] : req["position"] + body["maxBytes"]]
        return {"throttleTimeMs": 0, "errorCode": 0, "topics": [{"name": METADATA_TOPIC, "partitions": [part]}]}

    def _h80(self, version: int, body: dict, state: dict):  # AddRaftVoter
        self.cluster.add_voter_requests.append((version, body))
        return self._voter_change(lambda: self.cluster.add_voter(body))

    def _h81(self, version: int, body: dict, state: dict):  # RemoveRaftVoter
        return self._voter_change(lambda: self.cluster.remove_voter(body))


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
