"""Readers and writers of a KRaft log dir's small state files.

- meta.properties (java.util.Properties; v0 with broker.id, v1 with node.id,
  cluster.id and optional directory.id), as MetaProperties.Builder reads it;
- quorum-state (one JSON line, data_version 0 or 1, FileQuorumStateStore);
- leader-epoch-checkpoint (CheckpointFile: version line 0, count, `epoch offset` lines);
- partition.metadata (`version: 0` / `topic_id: <uuid>`).

Each reader takes a path and returns plain data, raising InputError with one
line naming the file, the line or position, and what was expected. dump-log and
verify call these too.
"""

from __future__ import annotations

import json
import os
import re

from .. import ids
from ..errors import InputError, at_line
from ..config import properties
from ..openfile import open_regular
from ..schema.spec import Field, Message

META_PROPERTIES = "meta.properties"
QUORUM_STATE = "quorum-state"
EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"

_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _read(path: str) -> bytes:
    with open_regular(path) as f:
        return f.read(1 << 20)  # these files are tiny; never slurp a huge impostor


def _read_text(path: str) -> str:
    raw = _read(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: byte {e.start}: not UTF-8 text") from None


def _java_int(text: str, bounds=_INT32) -> int | None:
    """Integer.parseInt / Long.parseLong: optional sign, decimal digits, in range."""
    if not re.fullmatch(r"[+-]?[0-9]+", text) or len(text.lstrip("+-").lstrip("0")) > 19:
        return None  # longer than any int64 (and no 5000-digit int() for Python to refuse)
    v = int(text)
    return v if bounds[0] <= v <= bounds[1] else None


# -- meta.properties -----------------------------------------------------------


def parse_meta_properties(props: dict[str, str], path: str = META_PROPERTIES) -> dict:
    """MetaProperties.Builder(props).build(): {"version", "cluster.id", "node.id",
    "directory.id"} with absent optional keys left out; node.id is an int.
    (A v0 file's broker.id becomes node.id, as Kafka does.)"""
    vtext = props.get("version", "0")
    version = _java_int(vtext.strip())
    if version is None:
        raise InputError(f"{path}: Invalid meta.properties version string '{vtext}'")
    if version not in (0, 1):
        raise InputError(f"{path}: Unknown meta.properties version number {version}")
    out: dict = {"version": version}
    id_key = "broker.id" if version == 0 else "node.id"
    if id_key in props:
        node = _java_int(props[id_key])
        if node is None:
            raise InputError(f"{path}: Unable to read {id_key} as a base-10 number: {props[id_key]!r}")
        out["node.id"] = node
    elif version == 1:
        raise InputError(f"{path}: Failed to find node.id")
    if "cluster.id" in props:
        out["cluster.id"] = props["cluster.id"]
    elif version == 1:
        raise InputError(f"{path}: cluster.id was not found.")
    if "directory.id" in props:
        try:
            ids.parse(props["directory.id"])
        except ids.InvalidUuid as e:
            raise InputError(f"{path}: Unable to read directory.id as a Uuid: {e}") from None
        out["directory.id"] = props["directory.id"]
    return out


def read_meta_properties(path: str) -> dict:
    """Read and validate a meta.properties file (see parse_meta_properties);
    the raw properties are under "properties"."""
    raw = _read(path)
    try:
        props = properties.loads(raw)
    except properties.PropertiesError as e:
        raise InputError(at_line(path, e.line, str(e))) from None
    out = parse_meta_properties(props, path)
    out["properties"] = props
    return out


def meta_properties_text(
    version: int, cluster_id: str | None, node_id: int | None, directory_id: str | None, epoch_s: float | None = None
) -> bytes:
    """The bytes Kafka writes (MetaProperties.toProperties() then Properties.store)."""
    props: dict[str, str] = {"version": str(version)}  # Java inserts in this order
    if cluster_id is not None:
        props["cluster.id"] = cluster_id
    if version == 0:
        if node_id is not None:
            props["broker.id"] = str(node_id)
    else:
        props["node.id"] = str(node_id)
    if directory_id is not None:
        props["directory.id"] = directory_id
    return properties.dumps(props, "", epoch_s)


def kafka_metadata_string(meta: dict) -> str:
    """`{cluster.id=..., directory.id=..., node.id=1, version=1}` as `kafka-storage info`
    prints it (a TreeMap of toProperties())."""
    props = {"version": str(meta["version"])}
    if "cluster.id" in meta:
        props["cluster.id"] = meta["cluster.id"]
    if "node.id" in meta:
        props["broker.id" if meta["version"] == 0 else "node.id"] = str(meta["node.id"])
    if "directory.id" in meta:
        props["directory.id"] = meta["directory.id"]
    return "{" + ", ".join(f"{k}={props[k]}" for k in sorted(props)) + "}"


# -- quorum-state --------------------------------------------------------------


def _short(v) -> str:
    """A value for an error line: a hostile file's 4000-digit number or megabyte
    string is cut, so the line stays one readable line."""
    r = repr(v)
    return r if len(r) <= 80 else f"{r[:60]}... ({len(r)} characters)"


# Kafka's QuorumStateData (raft/.../QuorumStateData.json), the schema of the one
# JSON line; parse_quorum_state checks a file against it.
QUORUM_STATE_DATA = Message(
    "QuorumStateData",
    "0-1",
    [
        Field("ClusterId", "string", "0"),
        Field("LeaderId", "int32", "0+", default=-1),
        Field("LeaderEpoch", "int32", "0+", default=-1),
        Field("VotedId", "int32", "0+", default=-1),
        Field("VotedDirectoryId", "uuid", "1+"),
        Field("AppliedOffset", "int64", "0"),
        Field(
            "CurrentVoters",
            "[]Voter",
            "0",
            nullable="0",
            fields=[
                Field("VoterId", "int32", "0"),
            ],
        ),
    ],
    flexible="0+",
)


def _check_quorum_state_field(path: str, f: Field, v) -> None:
    """Raise InputError unless `v` is a JSON value of field `f`'s type."""
    name, typ = f.key, f.type
    if v is None and f.nullable is not None:
        return
    if typ in ("int32", "int64"):
        bounds = _INT32 if typ == "int32" else _INT64
        if not isinstance(v, int) or isinstance(v, bool) or not bounds[0] <= v <= bounds[1]:
            raise InputError(f"{path}: field '{name}' must be an {typ}, found {_short(v)}")
    elif typ == "string":
        if not isinstance(v, str):
            raise InputError(f"{path}: field '{name}' must be a string, found {_short(v)}")
    elif typ == "uuid":
        if not isinstance(v, str):
            raise InputError(f"{path}: field '{name}' must be a Uuid string, found {_short(v)}")
        try:
            ids.parse(v)
        except ids.InvalidUuid as e:
            raise InputError(f"{path}: field '{name}': {e}") from None
    elif f.is_array and f.is_struct:  # currentVoters: [{"voterId": <int>}, ...]
        keys = [m.key for m in f.members]
        if not isinstance(v, list) or not all(
            isinstance(x, dict) and all(isinstance(x.get(k), int) and not isinstance(x.get(k), bool) for k in keys)
            for x in v
        ):
            shape = ", ".join(f'"{k}": <int>' for k in keys)
            raise InputError(f"{path}: field '{name}' must be a list of {{{shape}}} objects, found {_short(v)}")


def parse_quorum_state(text: str, path: str = QUORUM_STATE) -> dict:
    """Validate quorum-state JSON (FileQuorumStateStore + QuorumStateData v0/v1)."""
    line = text.split("\n", 1)[0]  # Kafka reads the first line only
    if not line.strip():
        raise InputError(f"{path}: File ended prematurely (expected one JSON line)")
    try:
        node = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: invalid JSON at column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise InputError(f"{path}: invalid JSON: nested too deeply (expected one flat JSON object)") from None
    except ValueError as e:  # Python refuses integers of more than sys.get_int_max_str_digits() digits
        raise InputError(f"{path}: invalid JSON: {str(e).split(';')[0]} (no quorum-state field is that long)") from None
    if not isinstance(node, dict):
        raise InputError(f"{path}: expected a JSON object, found {type(node).__name__}")
    if "data_version" not in node:
        raise InputError(f"{path}: does not have data_version field")
    dv = node["data_version"]
    if not isinstance(dv, int) or isinstance(dv, bool):
        raise InputError(f"{path}: data_version must be an integer, found {dv!r}")
    if not QUORUM_STATE_DATA.supports(dv):
        v = QUORUM_STATE_DATA.versions
        raise InputError(
            f"{path}: data_version ({dv}) is not within the min ({v.start}) and max ({v.stop - 1}) supported version"
        )
    out: dict = {}
    for f in QUORUM_STATE_DATA.fields:
        if not f.present_in(dv):
            continue
        if f.key not in node:
            raise InputError(
                f"{path}: QuorumStateData: unable to locate field '{f.key}', which is mandatory in version {dv}"
            )
        _check_quorum_state_field(path, f, node[f.key])
        out[f.key] = node[f.key]
    out["data_version"] = dv
    return out


def read_quorum_state(path: str) -> dict:
    """The quorum-state fields of its data_version (Kafka's names), plus data_version.
    v0: clusterId, leaderId, leaderEpoch, votedId, appliedOffset, currentVoters;
    v1: leaderId, leaderEpoch, votedId, votedDirectoryId."""
    return parse_quorum_state(_read_text(path), path)


def quorum_state_voters(state: dict) -> list[int] | None:
    """The voter ids a v0 quorum-state lists (None for v1, which keeps none)."""
    if state.get("data_version") == 0 and state.get("currentVoters") is not None:
        return [v["voterId"] for v in state["currentVoters"]]
    return None


# -- leader-epoch-checkpoint ---------------------------------------------------


def parse_epoch_checkpoint(text: str, path: str = EPOCH_CHECKPOINT) -> list[tuple[int, int]]:
    """CheckpointFile read: version 0, a count, then `epoch startOffset` lines
    (split on whitespace runs, as Kafka does)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if not lines:
        return []
    version = _java_int(lines[0])
    if version is None:
        raise InputError(at_line(path, 1, f"expected the version number 0, found {lines[0]!r}"))
    if version != 0:
        raise InputError(at_line(path, 1, f"Unrecognised version:{version}, expected version: 0"))
    if len(lines) == 1:
        return []
    count = _java_int(lines[1])
    if count is None or count < 0:
        raise InputError(at_line(path, 2, f"expected the entry count, found {lines[1]!r}"))
    entries = []
    for i, ln in enumerate(lines[2:], start=3):
        parts = re.split(r"\s+", ln)
        if len(parts) != 2:
            raise InputError(
                at_line(path, i, f"Malformed line in checkpoint file: {ln!r} (expected '<epoch> <startOffset>')")
            )
        epoch = _java_int(parts[0])
        offset = _java_int(parts[1], _INT64)
        if epoch is None or offset is None:
            raise InputError(
                at_line(path, i, f"Malformed line in checkpoint file: {ln!r} (expected '<epoch> <startOffset>')")
            )
        entries.append((epoch, offset))
    if len(entries) != count:
        raise InputError(f"{path}: Expected [{count}] entries in checkpoint file, but found only [{len(entries)}]")
    return entries


def read_epoch_checkpoint(path: str) -> list[tuple[int, int]]:
    """[(epoch, start offset), ...] in file order."""
    return parse_epoch_checkpoint(_read_text(path), path)


def epoch_checkpoint_text(entries) -> bytes:
    """CheckpointWriteBuffer: `0\\n<count>\\n` then `<epoch> <offset>\\n` lines."""
    out = ["0", str(len(entries))] + [f"{e} {o}" for e, o in entries]
    return ("\n".join(out) + "\n").encode("ascii")


# -- partition.metadata --------------------------------------------------------


def parse_partition_metadata(text: str, path: str = PARTITION_METADATA) -> dict:
    """PartitionMetadataReadBuffer: `version: N` then `topic_id: <uuid>`."""
    lines = text.split("\n")
    first = lines[0] if lines else ""
    parts = re.split(r":\s+", first)
    if len(parts) != 2 or parts[0] != "version":
        raise InputError(at_line(path, 1, f"Malformed line: {first!r} (expected 'version: 0')"))
    version = _java_int(parts[1])
    if version is None:
        raise InputError(at_line(path, 1, f"Malformed line: {first!r} (expected 'version: 0')"))
    if version < 0:
        raise InputError(f"{path}: Unrecognized version of partition metadata file: {version}")
    second = lines[1] if len(lines) > 1 else ""
    parts = re.split(r":\s+", second)
    if len(parts) != 2 or parts[0] != "topic_id":
        raise InputError(at_line(path, 2, f"Malformed line: {second!r} (expected 'topic_id: <uuid>')"))
    try:
        ids.parse(parts[1])
    except ids.InvalidUuid as e:
        raise InputError(at_line(path, 2, str(e))) from None
    if ids.canonical(parts[1]) == ids.ZERO_UUID:
        raise InputError(f"{path}: Invalid topic ID in partition metadata file")
    return {"version": version, "topic_id": parts[1]}


def read_partition_metadata(path: str) -> dict:
    """{"version": int, "topic_id": str}."""
    return parse_partition_metadata(_read_text(path), path)


def partition_metadata_text(topic_id: str) -> bytes:
    return f"version: 0\ntopic_id: {topic_id}".encode("ascii")


def exists(directory: str, name: str) -> bool:
    return os.path.isfile(os.path.join(directory, name))
