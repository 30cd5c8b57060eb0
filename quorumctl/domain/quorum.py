"""The quorum as `kafka-metadata-quorum` sees it, and the values its
`describe --status` / `--replication` compute (Kafka 3.9
MetadataQuorumCommand + KafkaAdminClient.describeMetadataQuorum):

- a replica's -1 timestamps mean "unknown" (the admin client maps -1 to empty);
  DescribeQuorum v0 has no timestamps at all, v0/v1 no directory ids (zero
  uuid), and only v2 has the voters' endpoints (`Nodes`);
- leader = the first voter whose id is LeaderId;
- MaxFollowerLag = leader LEO - LEO of the voter with the smallest LEO (the
  leader included, the first one on ties);
- MaxFollowerLagTimeMs = 0 if that voter is the leader, else the difference of
  their lastCaughtUpTimestamps when both are known, else -1;
- replication rows: the leader, the other voters in response order
  ("Follower"), the observers ("Observer"); Lag = leader LEO - replica LEO.

Where Kafka's tool throws (the leader is not among the voters), quorumctl
looks for the leader among the observers too (a leader removing itself is
still leader until the new voter set commits) and otherwise reports the
lag values as unknown instead of crashing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ids import ZERO_UUID


@dataclass
class Endpoint:
    name: str
    host: str
    port: int

    def __str__(self):
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


@dataclass
class Replica:
    id: int
    directory_id: str | None  # None: zero uuid (static quorum, or v0/v1 answer)
    log_end_offset: int
    last_fetch: int | None  # epoch ms; None: unknown (-1, or a v0 answer)
    last_caught_up: int | None


@dataclass
class Quorum:
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: list[Replica]
    observers: list[Replica]
    nodes: dict[int, list[Endpoint]] = field(default_factory=dict)
    version: int = 2  # DescribeQuorum version of the answer
    source: str = ""  # host:port that answered
    cluster_id: str | None = None

    @property
    def has_timestamps(self) -> bool:
        return self.version >= 1

    @property
    def has_directory_ids(self) -> bool:
        return self.version >= 2

    def endpoints(self, node_id: int) -> list[Endpoint]:
        return self.nodes.get(node_id, [])

    def leader(self) -> Replica | None:
        for r in self.voters:
            if r.id == self.leader_id:
                return r
        for r in self.observers:
            if r.id == self.leader_id:
                return r
        return None

    def leader_is_voter(self) -> bool:
        return any(r.id == self.leader_id for r in self.voters)


@dataclass
class Replaced:
    """A voter whose node fetches as an observer under another directory id: its disk
    was replaced (or wiped and formatted again) and the voter set still names the old
    one (KIP-853 keys a voter by id and directory id)."""

    voter: Replica
    observer: Replica


# an observer whose last fetch is this much older than the leader's clock has stopped: the
# leader lists a removed voter's old directory id as an observer for 5 minutes after its
# last fetch (LeaderState.OBSERVER_SESSION_TIMEOUT_MS)
FETCHING_MS = 15_000


def fetching(q: Quorum, r: Replica) -> bool:
    """`r` fetched from the leader within FETCHING_MS of the leader's own timestamp
    (its clock, not ours); unknown timestamps count as fetching."""
    leader = q.leader()
    now = leader.last_fetch if leader is not None else None
    return now is None or r.last_fetch is None or now - r.last_fetch < FETCHING_MS


def replaced_voters(q: Quorum) -> list[Replaced]:
    """The voters of `q` whose node id fetches as an observer with another directory id
    (a static quorum, or a v0/v1 answer, has no directory ids: none)."""
    observers: dict[int, Replica] = {}
    for o in q.observers:
        if o.directory_id is not None and fetching(q, o):
            observers.setdefault(o.id, o)
    return [
        Replaced(v, observers[v.id])
        for v in q.voters
        if v.directory_id is not None and v.id in observers and observers[v.id].directory_id != v.directory_id
    ]


def replaced_text(q: Quorum, r: Replaced) -> str:
    """The replaced-disk finding, as health and doctor say it."""
    n = len(q.voters)
    lost = len(replaced_voters(q))
    fewer = "one fewer" if lost == 1 else f"{lost} fewer"
    return (
        f"controller {r.voter.id} runs as an observer with directory id {r.observer.directory_id}; the voter "
        f"set names {r.voter.id} with directory id {r.voter.directory_id} (a replaced disk?): the quorum has "
        f"{n - lost} voters, {fewer} than believed"
    )


def replaced_fix(node_id: int, bootstrap: str) -> str:
    """The fix for a replaced disk; `bootstrap` is the option and address to give."""
    return (
        f"quorumctl replace-controller {node_id} {bootstrap} (a dry run; --apply removes the old directory id "
        "from the voters, then adds the new one)"
    )


def _ts(v) -> int | None:
    return None if v is None or v == -1 else v


def _replica(d: dict) -> Replica:
    did = d.get("replicaDirectoryId")
    return Replica(
        d["replicaId"],
        None if did in (None, ZERO_UUID) else did,
        d["logEndOffset"],
        _ts(d.get("lastFetchTimestamp")),
        _ts(d.get("lastCaughtUpTimestamp")),
    )


def quorum_from_partition(
    partition: dict, nodes: list | None = None, version: int = 2, source: str = "", cluster_id: str | None = None
) -> Quorum:
    """A Quorum from decoded DescribeQuorum partition data and Nodes."""
    node_map: dict[int, list[Endpoint]] = {}
    for n in nodes or []:
        node_map[n["nodeId"]] = [Endpoint(e["name"], e["host"], e["port"]) for e in n["listeners"]]
    return Quorum(
        partition["leaderId"],
        partition["leaderEpoch"],
        partition["highWatermark"],
        [_replica(r) for r in partition["currentVoters"]],
        [_replica(r) for r in partition["observers"]],
        node_map,
        version,
        source,
        cluster_id,
    )


@dataclass
class StatusValues:
    max_follower_lag: int | None
    max_follower_lag_time_ms: int | None  # Kafka's value (-1 when unknown)
    lag_time_known: bool = True  # False where Kafka prints -1 for "unknown"


def status_values(q: Quorum) -> StatusValues:
    leader = q.leader()
    if leader is None or not q.voters:
        return StatusValues(None, None, False)
    most_behind = q.voters[0]
    for r in q.voters[1:]:
        if r.log_end_offset < most_behind.log_end_offset:
            most_behind = r
    lag = leader.log_end_offset - most_behind.log_end_offset
    if most_behind is leader:
        lag_ms = 0
    elif leader.last_caught_up is not None and most_behind.last_caught_up is not None:
        lag_ms = leader.last_caught_up - most_behind.last_caught_up
    else:
        return StatusValues(lag, -1, False)
    return StatusValues(lag, lag_ms)


@dataclass
class Row:
    replica: Replica
    status: str  # Leader | Follower | Observer
    lag: int | None  # leader LEO - replica LEO; None when the leader is unknown


def replication_rows(q: Quorum) -> list[Row]:
    leader = q.leader()
    lead_leo = leader.log_end_offset if leader is not None else None

    def lag(r: Replica):
        return None if lead_leo is None else lead_leo - r.log_end_offset

    rows: list[Row] = []
    if leader is not None:
        rows.append(Row(leader, "Leader", 0 if lead_leo is not None else None))
    rows += [Row(r, "Follower", lag(r)) for r in q.voters if r.id != q.leader_id]
    rows += [Row(r, "Observer", lag(r)) for r in q.observers if r is not leader]
    return rows
