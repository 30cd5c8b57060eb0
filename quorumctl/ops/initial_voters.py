"""KIP-853's initial voters for `bootstrap format --standalone/--initial-controllers`
(Kafka's DynamicVoter(s) and VoterSet): parsing ID@HOST:PORT:DIRECTORY_ID, and the
VotersRecord of the bootstrap snapshot in the order Java's HashMaps give it."""

from __future__ import annotations

from dataclasses import dataclass

from .. import ids
from ..config.properties import _java_string_hash
from ..versions import FormatError


@dataclass
class DynamicVoter:
    node_id: int
    host: str
    port: int
    directory_id: str

    def text(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.node_id}@{host}:{self.port}:{self.directory_id}"


def parse_dynamic_voter(text: str) -> DynamicVoter:
    """DynamicVoter.parse: id@host:port:directoryId ([v6] hosts in brackets)."""
    s = text.strip()
    at = s.find("@")
    if at < 0:
        raise FormatError(f"{text}: No @ found in dynamic voter string.")
    if at == 0:
        raise FormatError(f"{text}: Invalid @ at beginning of dynamic voter string.")
    try:
        node = int(s[:at])
    except ValueError:
        raise FormatError(f"{text}: Failed to parse node id in dynamic voter string.") from None
    if node < 0:
        raise FormatError(f"{text}: Invalid negative node id {node} in dynamic voter string.")
    rest = s[at + 1 :]
    if not rest:
        raise FormatError(f"{text}: No hostname found after node id.")
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise FormatError(f"{text}: Hostname began with left bracket, but no right bracket was found.")
        host, rest = rest[1:end], rest[end + 1 :]
    else:
        c = rest.find(":")
        if c < 0:
            raise FormatError(f"{text}: No colon following hostname could be found.")
        host, rest = rest[:c], rest[c:]
    if not rest.startswith(":"):
        raise FormatError(f"{text}: Port section must start with a colon.")
    rest = rest[1:]
    c = rest.find(":")
    if c < 0:
        raise FormatError(f"{text}: No colon following port could be found.")
    try:
        port = int(rest[:c])
    except ValueError:
        raise FormatError(f"{text}: Failed to parse port in dynamic voter string.") from None
    if not 0 <= port <= 65535:
        raise FormatError(f"{text}: Invalid port {port} in dynamic voter string.")
    dirid = rest[c + 1 :]
    try:
        ids.parse(dirid)
    except ids.InvalidUuid as e:
        raise FormatError(f"{text}: Failed to parse directory ID in dynamic voter string: {e}") from None
    return DynamicVoter(node, host, port, dirid)


def parse_dynamic_voters(text: str) -> list[DynamicVoter]:
    voters: dict[int, DynamicVoter] = {}
    for part in text.strip().split(","):
        if part:
            v = parse_dynamic_voter(part)
            if v.node_id in voters:
                raise FormatError(f"Node id {v.node_id} was specified more than once.")
            voters[v.node_id] = v
    if not voters:
        raise FormatError("No voters given.")
    return [voters[k] for k in sorted(voters)]


def _table_size_for(c: int) -> int:
    n = 1
    while n < c:
        n <<= 1
    return n


def java_int_hashmap_order(ids_sorted: list[int]) -> list[int]:
    """Iteration order of VoterSet.fromMap(new HashMap<>(m)) where m is a HashMap
    filled in ascending id order: by bucket (id ^ id >>> 16) & (capacity - 1), then
    insertion order (capacity = tableSizeFor(n / 0.75 + 1))."""
    n = len(ids_sorted)
    src_cap = 16
    while n > src_cap * 3 // 4:
        src_cap *= 2

    def bucket(k, cap):
        h = k & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    source = sorted(range(n), key=lambda i: (bucket(ids_sorted[i], src_cap), i))
    source_ids = [ids_sorted[i] for i in source]
    cap = _table_size_for(int(n / 0.75 + 1.0))
    order = sorted(range(n), key=lambda i: (bucket(source_ids[i], cap), i))
    return [source_ids[i] for i in order]


def voters_record(voters: list[DynamicVoter], listener_name: str) -> list[dict]:
    """VoterSet.toVotersRecord: each voter with its one controller endpoint and
    supported kraft.version 0..1, in Java HashMap order."""
    by_id = {v.node_id: v for v in voters}
    out = []
    for vid in java_int_hashmap_order(sorted(by_id)):
        v = by_id[vid]
        out.append(
            {
                "voterId": v.node_id,
                "voterDirectoryId": v.directory_id,
                "endpoints": [{"name": listener_name.upper(), "host": v.host, "port": v.port}],
                "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1},
            }
        )
    return out


def java_string_hashmap_order(keys_sorted: list[str]) -> list[str]:
    """Iteration order of a java.util.HashMap<String, ?> of up to 12 keys inserted in
    sorted order (how Kafka's copier visits the directories it formats)."""
    cap = 16
    while len(keys_sorted) > cap * 3 // 4:
        cap *= 2

    def bucket(k):
        h = _java_string_hash(k)
        return (h ^ (h >> 16)) & (cap - 1)

    return [k for _, k in sorted(enumerate(keys_sorted), key=lambda p: (bucket(p[1]), p[0]))]
