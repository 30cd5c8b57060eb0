"""`bootstrap format` and `bootstrap info`: Kafka's storage tool, offline.

Facts from Kafka's sources: MetadataVersion.java (feature levels, release
strings, fromVersionString), the feature classes (KRaftVersion,
TransactionVersion, GroupVersion, EligibleLeaderReplicasVersion: levels,
the metadata.version each becomes the default at, dependencies), Formatter
(effective release version and feature levels, kraft.version rules, directory
types and their messages), BootstrapMetadata (the records and their order),
ScramParser/ScramFormatter (SCRAM credentials), DynamicVoter(s) and VoterSet
(the KIP-853 bootstrap snapshot), MetaPropertiesEnsemble and StorageTool's
infoCommand (checks and their wording). docs/storage.md has the release table
and where each row was verified.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import secrets
import shutil
from dataclasses import dataclass, field

from .. import ids
from ..errors import InputError, Refused
from . import files as state_files
from . import fsutil
from .properties import _java_string_hash


class FormatError(InputError):
    """Kafka's FormatterException: a format/info/version-mapping request that cannot be
    carried out (bad release version, feature level, SCRAM argument, directory state).

    A library error; it subclasses InputError only so the CLI reports it as every
    bad-input error: one line on stderr, exit 2."""


# -- metadata.version -------------------------------------------------------------

# (version string, feature level); Kafka 3.3-IV3 .. 4.2-IV1, checked against MetadataVersion.java
# of the Kafka 4.1.0 release (upstream commit 13f70256; levels 1-25 also at tags 3.3.1 .. 3.9.0-rc3).
# 4.1's LATEST_PRODUCTION is 4.1-IV1 (27); 4.2-IV0/IV1 (28, 29) exist in 4.1 as unstable
# versions: formatted only with unstable.feature.versions.enable=true, as kafka-storage does.
METADATA_VERSIONS = [
    ("3.3-IV3", 7), ("3.4-IV0", 8), ("3.5-IV0", 9), ("3.5-IV1", 10), ("3.5-IV2", 11),
    ("3.6-IV0", 12), ("3.6-IV1", 13), ("3.6-IV2", 14), ("3.7-IV0", 15), ("3.7-IV1", 16),
    ("3.7-IV2", 17), ("3.7-IV3", 18), ("3.7-IV4", 19), ("3.8-IV0", 20), ("3.9-IV0", 21),
    ("4.0-IV0", 22), ("4.0-IV1", 23), ("4.0-IV2", 24), ("4.0-IV3", 25), ("4.1-IV0", 26), ("4.1-IV1", 27),
    ("4.2-IV0", 28), ("4.2-IV1", 29),
]
# versions Kafka knows but quorumctl does not format (below Kafka 4's minimum 3.3-IV3)
_OLDER = {"3.0-IV1": 1, "3.1-IV0": 2, "3.2-IV0": 3, "3.3-IV0": 4, "3.3-IV1": 5, "3.3-IV2": 6}
LEVEL_OF = dict(METADATA_VERSIONS)
NAME_OF = {lvl: name for name, lvl in METADATA_VERSIONS}
MIN_LEVEL = 7
MAX_LEVEL = 29
LATEST_PRODUCTION = 27           # 4.1-IV1: what kafka-storage 4.1 formats with by default
DEFAULT_RELEASE = "4.1-IV1"
SCRAM_MIN_LEVEL = 11             # MetadataVersion.isScramSupported: 3.5-IV2
KRAFT_V1_MIN_LEVEL = 21          # KRaftVersion 1 depends on metadata.version 3.9-IV0
METADATA_VERSION = "metadata.version"


def version_name(level: int) -> str:
    """A metadata.version feature level's name ("3.9-IV0"), also below Kafka 4's minimum."""
    return NAME_OF.get(level) or {v: k for k, v in _OLDER.items()}.get(level) or f"level {level}"


def release_by_name() -> dict[str, str]:
    """"3.7" -> "3.7-IV4": the last production version of each release (IBP_VERSIONS:
    an unreleased one such as "4.2" is known only by its full name, "4.2-IV0")."""
    out = {}
    for name, lvl in METADATA_VERSIONS:
        if lvl <= LATEST_PRODUCTION:
            out[name.split("-")[0]] = name
    return out


def parse_release_version(text: str) -> tuple[str, int]:
    """MetadataVersion.fromVersionString: "3.7-IV4", "3.7" or "3.7.1" (first two
    segments) -> (version string, feature level)."""
    t = text.strip()
    segs = t.split(".")
    key = t if len(segs) <= 2 else ".".join(segs[:2])
    name = key if key in LEVEL_OF else release_by_name().get(key)
    if name is None:
        if key in _OLDER or key in ("3.0", "3.1", "3.2"):
            raise FormatError(f"--release-version {text}: quorumctl formats metadata.version 3.3-IV3 "
                             f"({MIN_LEVEL}) and later, as Kafka 4 does")
        raise FormatError(f"--release-version {text}: unknown metadata.version; known: "
                         f"{METADATA_VERSIONS[0][0]} .. {METADATA_VERSIONS[-1][0]} (or a release such as 3.9, 4.1)")
    return name, LEVEL_OF[name]


# -- other features ---------------------------------------------------------------

@dataclass(frozen=True)
class Feature:
    name: str
    # level -> (metadata.version level it is the default from, {feature: minimum level})
    levels: dict


FEATURES = {
    "kraft.version": Feature("kraft.version", {0: (1, {}), 1: (21, {METADATA_VERSION: 21})}),
    "transaction.version": Feature("transaction.version", {0: (1, {}), 1: (24, {}), 2: (24, {})}),
    "group.version": Feature("group.version", {0: (1, {}), 1: (22, {})}),
    "eligible.leader.replicas.version": Feature("eligible.leader.replicas.version",
                                                {0: (1, {}), 1: (26, {METADATA_VERSION: 23})}),
    "share.version": Feature("share.version", {0: (1, {}), 1: (28, {})}),
    "streams.version": Feature("streams.version", {0: (1, {}), 1: (29, {})}),
}
# Each feature's LATEST_PRODUCTION in Kafka 4.1: a higher level needs unstable.feature.versions.enable
LATEST_PRODUCTION_LEVEL = {"kraft.version": 1, "transaction.version": 2, "group.version": 1,
                           "eligible.leader.replicas.version": 1, "share.version": 1, "streams.version": 0}


def default_level(feature: Feature, mv_level: int) -> int:
    """Features.defaultValue: the highest level whose bootstrap metadata.version
    is at or below mv_level."""
    best = 0
    for lvl in sorted(feature.levels):
        if feature.levels[lvl][0] <= mv_level:
            best = lvl
        else:
            break
    return best


def parse_feature_args(args: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for a in args:
        name, eq, level = a.partition("=")
        name = name.strip()
        if not eq or not name:
            raise FormatError(f"--feature {a}: expected name=level")
        try:
            lvl = int(level.strip())
        except ValueError:
            raise FormatError(f"--feature {a}: the level must be an integer") from None
        if not -32768 <= lvl <= 32767:
            raise FormatError(f"--feature {a}: the level must fit in an int16")
        if name in out:
            raise FormatError(f"--feature {name} was given more than once")
        out[name] = lvl
    return out


def effective_features(release: str | None, requested: dict[str, int], dynamic: bool,
                       unstable: bool = False) -> tuple[str, int, dict]:
    """Formatter.calculateEffectiveReleaseVersion + calculateEffectiveFeatureLevels
    (Kafka 4.1), honouring --feature (Kafka 3.9 parsed it and then ignored it,
    KAFKA-17868). `dynamic`: --standalone, --initial-controllers or
    --no-initial-controllers was given (kraft.version 1 by default, 0 refused);
    `unstable`: the config's unstable.feature.versions.enable.
    Returns (release name, metadata.version level, {feature: level})."""
    requested = dict(requested)
    if METADATA_VERSION in requested:
        if release is not None:
            raise FormatError(f"Use --release-version instead of --feature {METADATA_VERSION}=X to avoid ambiguity.")
        lvl = requested.pop(METADATA_VERSION)
        if lvl not in NAME_OF:
            raise FormatError(f"--feature {METADATA_VERSION}={lvl}: quorumctl formats levels {MIN_LEVEL} "
                             f"({NAME_OF[MIN_LEVEL]}) to {MAX_LEVEL} ({NAME_OF[MAX_LEVEL]})")
        name = NAME_OF[lvl]
    else:
        name, lvl = parse_release_version(release or (NAME_OF[MAX_LEVEL] if unstable else DEFAULT_RELEASE))
    if lvl > LATEST_PRODUCTION and not unstable:
        raise FormatError(f"{METADATA_VERSION} {name} is not yet stable.")
    for f in requested:
        if f not in FEATURES:
            raise FormatError(f"Unsupported feature: {f}. Supported features are: {', '.join(sorted(FEATURES))}")
    levels = {METADATA_VERSION: lvl}
    for fname, feat in sorted(FEATURES.items()):
        if fname == "kraft.version":
            levels[fname] = _kraft_level(requested.get(fname), dynamic)
        else:
            levels[fname] = requested.get(fname, default_level(feat, lvl))
    for fname, feat in sorted(FEATURES.items()):
        level = levels[fname]
        if level not in feat.levels or (level > LATEST_PRODUCTION_LEVEL[fname] and not unstable):
            raise FormatError(f"No feature:{fname} with feature level {level}")
        if level >= 1 and lvl < 4:
            raise FormatError(f"{fname} could not be set to {level} because it depends on metadata.version=4 (3.3-IV0)")
        for dep, minimum in feat.levels[level][1].items():
            have = levels.get(dep)
            if have is None or have < minimum:
                raise FormatError(f"{fname} could not be set to {level} because it depends on {dep} level {minimum}")
    return name, lvl, levels


def _kraft_level(configured: int | None, dynamic: bool) -> int:
    if configured is not None:
        if configured == 0 and dynamic:
            raise FormatError("Cannot set kraft.version to 0 if one of the flags --standalone, --initial-controllers, "
                             "or --no-initial-controllers is used. For dynamic controllers support, try removing "
                             "the --feature flag for kraft.version.")
        if configured != 0 and not dynamic:
            raise FormatError(f"Cannot set kraft.version to {configured} unless one of the flags --standalone, "
                             "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers "
                             "support, try using one of --standalone, --initial-controllers, or "
                             "--no-initial-controllers.")
        return configured
    return 1 if dynamic else 0


def bootstrap_records(mv_level: int, levels: dict, scram_records: list) -> list:
    """BootstrapMetadata.fromVersions + SCRAM: FeatureLevelRecord(metadata.version),
    then every other feature above 0 by name (never kraft.version), then SCRAM."""
    recs = [(12, 0, {"name": METADATA_VERSION, "featureLevel": mv_level})]
    for name in sorted(levels):
        if name in (METADATA_VERSION, "kraft.version"):
            continue
        if levels[name] > 0:
            recs.append((12, 0, {"name": name, "featureLevel": levels[name]}))
    return recs + scram_records


# -- version-mapping / feature-dependencies (kafka-storage 4.1) -----------------------

def version_mapping(release: str | None) -> dict:
    """StorageTool.runVersionMappingCommand: the default level of every feature at a
    metadata.version (the latest production one by default). `release` is echoed as given."""
    given = release if release is not None else DEFAULT_RELEASE
    try:
        _name, lvl = parse_release_version(given)
    except FormatError:
        raise FormatError(f"Unknown release version '{given}'. Supported versions are: "
                         f"{NAME_OF[MIN_LEVEL]} to {NAME_OF[LATEST_PRODUCTION]}") from None
    return {"release": given, METADATA_VERSION: lvl,
            "features": {name: default_level(f, lvl) for name, f in FEATURES.items()}}


def version_mapping_text(doc: dict) -> str:
    lines = [f"{METADATA_VERSION}={doc[METADATA_VERSION]} ({doc['release']})"]
    lines += [f"{name}={lvl}" for name, lvl in doc["features"].items()]
    return "\n".join(lines) + "\n"


def feature_dependencies(args: list[str]) -> list[dict]:
    """StorageTool.runFeatureDependenciesCommand: what each feature=level needs
    (unreleased levels included, as Kafka looks them up with unstable allowed)."""
    out = []
    for a in args:
        name, eq, text = a.partition("=")
        if not eq or "=" in text:
            raise FormatError(f"--feature {a}: expected feature=level")
        try:
            lvl = int(text)
        except ValueError:
            raise FormatError(f"Invalid version format: {text} for feature {name}") from None
        if name == METADATA_VERSION:
            if lvl not in NAME_OF:
                raise FormatError(f"Unknown metadata.version {lvl}")
            out.append({"feature": name, "level": lvl, "version": NAME_OF[lvl], "requires": {}})
            continue
        feat = FEATURES.get(name)
        if feat is None:
            raise FormatError(f"Unknown feature: {name}")
        if lvl not in feat.levels:
            raise FormatError(f"Feature level {lvl} is not supported for feature {name}")
        out.append({"feature": name, "level": lvl, "requires": dict(feat.levels[lvl][1])})
    return out


def feature_dependencies_text(deps: list[dict]) -> str:
    lines = []
    for d in deps:
        label = f"{d['feature']}={d['level']}" + (f" ({d['version']})" if "version" in d else "")
        if not d["requires"]:
            lines.append(f"{label} has no dependencies.")
            continue
        lines.append(f"{label} requires:")
        for dep, lvl in d["requires"].items():
            lines.append(f"    {dep}={lvl}" + (f" ({NAME_OF[lvl]})" if dep == METADATA_VERSION else ""))
    return "\n".join(lines) + "\n"


# -- SCRAM ------------------------------------------------------------------------

SCRAM_MECHANISMS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}
SCRAM_MIN_ITERATIONS, SCRAM_MAX_ITERATIONS = 4096, 16384


def _random_salt() -> bytes:
    """ScramFormatter.secureRandomBytes: a 130-bit random number in base 36, as UTF-8."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    while True:
        n, r = divmod(n, 36)
        s = digits[r] + s
        if n == 0:
            break
    return s.encode()


def parse_scram(arg: str, salt_source=_random_salt) -> tuple[int, int, dict]:
    """ScramParser: 'SCRAM-SHA-256=[name=alice,password=alice-secret]' (or
    iterations=, salt= base64, saltedpassword= base64) -> a UserScramCredentialRecord."""
    text = arg.strip()
    mech, eq, conf = text.partition("=")
    if not eq:
        raise FormatError(f"Failed to find equals sign in SCRAM argument '{text}'")
    if mech not in SCRAM_MECHANISMS:
        raise FormatError(f"The add-scram mechanism {mech} is not supported.")
    if not conf.startswith("["):
        raise FormatError("Expected configuration string to start with [")
    if not conf.endswith("]"):
        raise FormatError("Expected configuration string to end with ]")
    comps: dict[str, str] = {}
    for part in conf[1:-1].split(","):
        k, eq2, v = part.partition("=")
        if not eq2:
            raise FormatError(f"No equals sign found in SCRAM component: {part}")
        if len(v) >= 2 and v.startswith('"') and v.endswith('"'):
            v = v[1:-1]
        comps[k] = v
    name = comps.pop("name", None)
    if name is None:
        raise FormatError("You must supply 'name' to add-scram")
    salt = None
    if "salt" in comps:
        s = comps.pop("salt")
        try:
            salt = base64.b64decode(s, validate=True)
        except ValueError:
            raise FormatError(f"Failed to decode given salt: {s}") from None
    iterations = 4096
    if "iterations" in comps:
        it = comps.pop("iterations")
        try:
            iterations = int(it)
        except ValueError:
            raise FormatError(f"Failed to parse iterations count: {it}") from None
    password = comps.pop("password", None)
    salted = comps.pop("saltedpassword", None)
    if password is None:
        if salted is None:
            raise FormatError("You must supply one of 'password' or 'saltedpassword' to add-scram")
        if salt is None:
            raise FormatError("You must supply 'salt' with 'saltedpassword' to add-scram")
        try:
            salted_bytes = base64.b64decode(salted, validate=True)
        except ValueError:
            raise FormatError(f"Failed to decode given saltedPassword: {salted}") from None
    if comps:
        raise FormatError(f"Unknown SCRAM configurations: {', '.join(sorted(comps))}")
    mtype, algo = SCRAM_MECHANISMS[mech]
    if salt is None:
        salt = salt_source()
    if iterations < SCRAM_MIN_ITERATIONS:
        raise FormatError(f"The 'iterations' value must be >= {SCRAM_MIN_ITERATIONS} for add-scram using {mech}")
    if iterations > SCRAM_MAX_ITERATIONS:
        raise FormatError(f"The 'iterations' value must be <= {SCRAM_MAX_ITERATIONS} for add-scram using {mech}")
    if password is not None:
        salted_bytes = hashlib.pbkdf2_hmac(algo, password.encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted_bytes, b"Client Key", algo).digest()
    stored_key = hashlib.new(algo, client_key).digest()
    server_key = hmac.new(salted_bytes, b"Server Key", algo).digest()
    return (11, 0, {"name": name, "mechanism": mtype, "salt": salt, "storedKey": stored_key,
                    "serverKey": server_key, "iterations": iterations})


# -- KIP-853 initial voters ---------------------------------------------------------

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
    rest = s[at + 1:]
    if not rest:
        raise FormatError(f"{text}: No hostname found after node id.")
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise FormatError(f"{text}: Hostname began with left bracket, but no right bracket was found.")
        host, rest = rest[1:end], rest[end + 1:]
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
    dirid = rest[c + 1:]
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
        out.append({"voterId": v.node_id, "voterDirectoryId": v.directory_id,
                    "endpoints": [{"name": listener_name.upper(), "host": v.host, "port": v.port}],
                    "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}})
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


# -- the directories ----------------------------------------------------------------

@dataclass
class DirStatus:
    path: str
    exists: bool
    is_dir: bool
    meta: dict | None = None
    error: str | None = None

    @property
    def formatted(self) -> bool:
        return self.meta is not None or self.error is not None


def read_dir(path: str) -> DirStatus:
    st = DirStatus(path, os.path.exists(path), os.path.isdir(path))
    mp = os.path.join(path, state_files.META_PROPERTIES)
    if st.is_dir and os.path.exists(mp):
        try:
            st.meta = state_files.read_meta_properties(mp)
            st.meta.pop("properties", None)
        except InputError as e:
            st.error = str(e)
    return st


def ensemble_problems(dirs: list[DirStatus], cluster_id: str | None, node_id: int | None) -> list[str]:
    """MetaPropertiesEnsemble.verify's failures (Kafka's wording, without its
    Optional[...] wrapper and its typo)."""
    out = []
    seen: dict[str, str] = {}
    for d in sorted(dirs, key=lambda d: d.path):
        m = d.meta
        if m is None:
            continue
        path = os.path.join(d.path, state_files.META_PROPERTIES)
        if "cluster.id" not in m:
            if m["version"] != 0:
                out.append(f"cluster.id was not specified in the v1 file: {path}")
        elif cluster_id is None:
            cluster_id = m["cluster.id"]
        elif m["cluster.id"] != cluster_id:
            out.append(f"Invalid cluster.id in: {path}. Expected {cluster_id}, but read {m['cluster.id']}")
        if "node.id" not in m:
            if m["version"] != 0:
                out.append(f"node.id was not specified in {path}")
        elif node_id is None:
            node_id = m["node.id"]
        elif m["node.id"] != node_id:
            out.append(f"Stored node id {m['node.id']} doesn't match previous node id {node_id} in {path}. "
                       "If you moved your data, make sure your configured node id matches. If you intend to "
                       "create a new node, you should remove all data in your data directories.")
        did = m.get("directory.id")
        if did is not None:
            if ids.is_reserved_directory_id(did):
                out.append(f"Invalid reserved directory ID {did} found in {d.path}")
            prev = seen.get(ids.canonical(did))
            if prev is not None:
                out.append(f"Duplicate directory ID {did} found. It was the ID of {prev}, but also of {d.path}")
            seen[ids.canonical(did)] = d.path
    return out


def info(dirs: list[str], kraft_mode: bool = True) -> dict:
    """StorageTool.infoCommand, plus duplicate/reserved directory ids and mixed
    meta.properties versions. Directories in sorted order, as Kafka walks them."""
    problems: list[str] = []
    warnings: list[str] = []
    found: list[str] = []
    statuses = []
    first = None
    for path in sorted(dirs):
        st = read_dir(path)
        statuses.append(st)
        if not st.is_dir:
            problems.append(f"{path} does not exist" if not st.exists else f"{path} is not a directory")
            continue
        found.append(path)
        mp = os.path.join(path, state_files.META_PROPERTIES)
        if st.error is not None:
            problems.append(f"Error loading {mp}: {st.error.split(': ', 1)[-1]}")
            continue
        if st.meta is None:
            problems.append(f"{path} is not formatted.")
            continue
        cid = st.meta.get("cluster.id")
        if cid is not None:
            why = ids.check_cluster_id(cid)
            if why is not None:
                warnings.append(f"{mp}: cluster.id {cid} is not a valid Kafka Uuid ({why})")
        if first is None:
            first = st.meta
        elif first.get("cluster.id") != st.meta.get("cluster.id"):
            problems.append("Mismatched cluster IDs between storage directories.")
        elif first.get("node.id") != st.meta.get("node.id"):
            problems.append("Mismatched node IDs between storage directories.")
        elif first["version"] != st.meta["version"]:
            problems.append("Mismatched meta.properties versions between storage directories "
                            "(version 0 and version 1).")
    seen: dict[str, str] = {}
    for st in statuses:
        did = st.meta.get("directory.id") if st.meta else None
        if did is None:
            continue
        if ids.is_reserved_directory_id(did):
            problems.append(f"Invalid reserved directory ID {did} found in {st.path}")
        key = ids.canonical(did)
        if key in seen:
            problems.append(f"Duplicate directory ID {did} found. It was the ID of {seen[key]}, "
                            f"but also of {st.path}")
        seen[key] = st.path
    if first is not None:
        if kraft_mode and first["version"] == 0:
            problems.append("The kafka configuration file appears to be for a cluster in KRaft mode, but "
                            "the directories are formatted for legacy mode.")
        elif not kraft_mode and first["version"] == 1:
            problems.append("The kafka configuration file appears to be for a legacy cluster, but "
                            "the directories are formatted for a cluster in KRaft mode.")
    return {"directories": [{"path": s.path, "exists": s.exists, "formatted": s.meta is not None,
                             "meta_properties": s.meta, "error": s.error} for s in statuses],
            "found": found, "metadata": first, "problems": problems, "warnings": warnings}


def info_text(doc: dict, dirs_given: int) -> str:
    """StorageTool.infoCommand's output, line for line."""
    if dirs_given == 0:
        return "No directories specified.\n"
    out = []
    if doc["found"]:
        out.append("Found log directory:" if len(doc["found"]) == 1 else "Found log directories:")
        out.extend(f"  {d}" for d in doc["found"])
        out.append("")
    if doc["metadata"] is not None:
        out.append(f"Found metadata: {state_files.kafka_metadata_string(doc['metadata'])}")
        out.append("")
    if doc["problems"]:
        out.append("Found problem:" if len(doc["problems"]) == 1 else "Found problems:")
        out.extend(f"  {p}" for p in doc["problems"])
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


# -- format -------------------------------------------------------------------------

class FormatRefused(Refused):
    """A format refused (a formatted dir, a running node): nothing was written (exit 1)."""


@dataclass
class FormatDir:
    path: str
    kind: str               # data | metadata | dynamic-metadata | dynamic-metadata-voter
    directory_id: str
    write_snapshot: bool

    @property
    def description(self) -> str:
        return {"data": "data directory", "metadata": "metadata directory",
                "dynamic-metadata": "dynamic metadata directory",
                "dynamic-metadata-voter": "dynamic metadata voter directory"}[self.kind]


@dataclass
class FormatPlan:
    cluster_id: str
    node_id: int
    release: str
    mv_level: int
    features: dict
    records: list
    voters: list[DynamicVoter] | None
    listener_name: str
    dirs: list[FormatDir] = field(default_factory=list)
    already_formatted: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"cluster_id": self.cluster_id, "node_id": self.node_id, "release_version": self.release,
                "metadata_version": self.mv_level, "features": self.features,
                "bootstrap_records": [{"type": ("FEATURE_LEVEL_RECORD" if k == 12 else "USER_SCRAM_CREDENTIAL_RECORD"),
                                       "version": v, "data": _redact(d)} for k, v, d in self.records],
                "initial_voters": [v.text() for v in self.voters] if self.voters else None,
                "directories": [{"path": d.path, "kind": d.description, "directory_id": d.directory_id,
                                 "bootstrap_snapshot": d.write_snapshot} for d in self.dirs],
                "already_formatted": self.already_formatted}


def _redact(d: dict) -> dict:
    if "storedKey" in d:
        return {"name": d["name"], "mechanism": d["mechanism"], "iterations": d["iterations"]}
    return d


def plan_format(*, dirs: list[str], metadata_dir: str, cluster_id: str, node_id: int, release: str | None,
                features: dict[str, int], scram: list[str], voters: list[DynamicVoter] | None,
                listener_name: str, ignore_formatted: bool, allow_non_uuid: bool,
                no_initial_controllers: bool = False, unstable: bool = False) -> FormatPlan:
    if node_id is None or node_id < 0:
        raise FormatError("You must specify a valid non-negative node ID.")
    why = ids.check_cluster_id(cluster_id)
    if why is not None and not allow_non_uuid:
        raise FormatError(f"invalid cluster id {cluster_id!r}: {why}. Generate one with `quorumctl bootstrap "
                         "random-uuid` (or pass --allow-non-uuid to keep it, as Kafka would)")
    if not dirs:
        raise FormatError("You must specify at least one directory to format")
    if metadata_dir not in dirs:
        raise FormatError(f"The specified metadata log directory, {metadata_dir} was not one of the given "
                         f"directories: {sorted(dirs)}")
    # Kafka 4.1: --no-initial-controllers makes the quorum dynamic too (kraft.version 1),
    # though no voter snapshot is written (Formatter.hasDynamicQuorum)
    release_name, mv, levels = effective_features(release, features, voters is not None or no_initial_controllers,
                                                  unstable)
    scram_records = [parse_scram(a) for a in scram]
    if scram_records and mv < SCRAM_MIN_LEVEL:
        raise FormatError("SCRAM is only supported in metadata.version 3.5-IV2 or later.")
    records = bootstrap_records(mv, levels, scram_records)
    plan = FormatPlan(cluster_id, node_id, release_name, mv, levels, records, voters, listener_name)
    statuses = [read_dir(d) for d in sorted(set(dirs))]
    probs = ensemble_problems(statuses, cluster_id, node_id)
    if probs:
        raise FormatRefused(probs[0])
    formatted = [s for s in statuses if s.meta is not None]
    errors = [s for s in statuses if s.error is not None]
    plan.already_formatted = [s.path for s in formatted]
    if formatted and not ignore_formatted:
        raise FormatRefused(f"Log directory {formatted[0].path} is already formatted. Use --ignore-formatted "
                            "to ignore this directory and format the others.")
    for s in errors:
        plan.messages.append(f"I/O error trying to read log directory {s.path}. Ignoring...")
    empty = [s for s in statuses if s.meta is None and s.error is None]
    if errors and not empty and not formatted:
        raise FormatRefused("No available log directories to format.")
    taken = {s.meta["directory.id"] for s in formatted if s.meta.get("directory.id")}
    for s in empty:
        _refuse_leftover_log(s.path)
        if s.path != metadata_dir:
            kind = "data"
        elif voters is None:
            kind = "metadata"
        elif any(v.node_id == node_id for v in voters):
            kind = "dynamic-metadata-voter"
        else:
            kind = "dynamic-metadata"
        if kind == "dynamic-metadata-voter":
            did = next(v.directory_id for v in voters if v.node_id == node_id)
        else:
            did = ids.random_directory_id(taken)
        taken.add(did)
        plan.dirs.append(FormatDir(s.path, kind, did, kind.startswith("dynamic")))
    return plan


def _refuse_leftover_log(path: str) -> None:
    """An unformatted dir that still holds a metadata log: formatting would graft a new
    identity onto old data; Kafka does it silently, quorumctl refuses."""
    pdir = os.path.join(path, "__cluster_metadata-0")
    if not os.path.isdir(pdir):
        return
    for name in os.listdir(pdir):
        if name.endswith(".log") or (name.endswith(".checkpoint")
                                     and name != "00000000000000000000-0000000000.checkpoint"):
            raise FormatRefused(f"{path} has no meta.properties but holds a metadata log ({pdir}/{name}); "
                                "refusing to format over it: restore its meta.properties or move the directory away")


def dir_files(plan: FormatPlan, d: FormatDir, now_ms: int) -> dict[str, bytes]:
    """The files one directory gets, relative path -> bytes."""
    from .snapshots import encode_snapshot
    out = {state_files.BOOTSTRAP_CHECKPOINT: encode_snapshot(plan.records, epoch=0, last_contained_log_timestamp=0,
                                                   timestamp_ms=now_ms)}
    if d.write_snapshot:
        voters = voters_record(plan.voters, plan.listener_name)
        out["__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"] = encode_snapshot(
            [], epoch=0, last_contained_log_timestamp=now_ms, kraft_version=plan.features["kraft.version"],
            voters=voters, timestamp_ms=now_ms)
    out[state_files.META_PROPERTIES] = state_files.meta_properties_text(1, plan.cluster_id, plan.node_id, d.directory_id, now_ms / 1000)
    return out


def _remove_stale_staging(parent: str, prefix: str) -> None:
    """Staging directories an interrupted format left beside the log dir (nobody
    holds their lock any more)."""
    for name in os.listdir(parent):
        if not name.startswith(prefix):
            continue
        full = os.path.join(parent, name)
        try:
            lock = fsutil.LogDirLock(full).acquire()
        except (fsutil.LockHeld, OSError):
            continue
        try:
            shutil.rmtree(full, ignore_errors=True)
        finally:
            lock.release()


def _only_lock(path: str) -> bool:
    return os.path.isdir(path) and not os.path.ismount(path) and set(os.listdir(path)) <= {".lock"}


def format_dir(plan: FormatPlan, d: FormatDir, now_ms: int, backup_root: str | None = None) -> str:
    """Write one directory crash-safely; returns how ("created", "swapped" or "in place").

    An absent directory is built beside it and renamed into place; one holding
    nothing but Kafka's .lock is built beside it and swapped in (renameat2
    exchange), so either is wholly unformatted or wholly formatted. Any other
    directory (a mount point, other files) is written in place, meta.properties
    last: without it Kafka and quorumctl treat the directory as unformatted."""
    content = dir_files(plan, d, now_ms)
    path = os.path.abspath(d.path)
    parent = os.path.dirname(path)
    if not os.path.exists(path) or _only_lock(path):
        existed = os.path.exists(path)
        os.makedirs(parent, exist_ok=True)
        prefix = f".{os.path.basename(path)}.quorumctl-format-"
        _remove_stale_staging(parent, prefix)
        staging = os.path.join(parent, f"{prefix}{os.getpid()}")
        fsutil.step(f"build {staging}")
        if os.path.lexists(staging):
            shutil.rmtree(staging)
        os.mkdir(staging)
        if existed:
            st = os.stat(path)
            os.chmod(staging, st.st_mode & 0o7777)
        lock = fsutil.LogDirLock(staging).acquire()
        try:
            # a full disk while building: the staging directory goes, `path` was not touched
            with fsutil.out_of_space(path, undo=lambda: shutil.rmtree(staging, ignore_errors=True)):
                for rel, data in content.items():
                    full = os.path.join(staging, rel)
                    os.makedirs(os.path.dirname(full), exist_ok=True)
                    fsutil.write_synced(full, data)
                    fsutil.fsync_dir(os.path.dirname(full))
                fsutil.fsync_dir(staging)
            fsutil.step(f"move {staging} into place as {path}")
            if existed:
                fsutil.exchange(staging, path)
            else:
                os.rename(staging, path)
            fsutil.fsync_dir(parent)
        finally:
            lock.release()
        if existed:
            shutil.rmtree(staging, ignore_errors=True)
        return "swapped" if existed else "created"
    created: list[str] = []   # what a full disk makes us remove again (meta.properties comes last)

    def undo():
        for f in reversed(created):
            with contextlib.suppress(OSError):
                os.unlink(f) if not os.path.isdir(f) else os.rmdir(f)

    with fsutil.out_of_space(path, undo=undo):
        for rel, data in content.items():
            full = os.path.join(path, rel)
            if not os.path.isdir(os.path.dirname(full)):
                os.makedirs(os.path.dirname(full))
                created.append(os.path.dirname(full))
            if os.path.exists(full) and backup_root:
                dst = os.path.join(backup_root, os.path.basename(path), rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(full, dst)
            tmp = ".tmp" if not rel.endswith(".checkpoint") or rel == state_files.BOOTSTRAP_CHECKPOINT else ".part"
            if not os.path.exists(full):
                created.append(full)
            created.append(full + tmp)
            fsutil.atomic_write(full, data, tmp_suffix=tmp)
            created.remove(full + tmp)
    return "in place"


# -- the whole job, as `quorumctl bootstrap format` runs it (Kafka's Formatter) ----------

@dataclass
class FormatRun:
    """What a format run planned and wrote, and the lines Kafka's tool prints for it."""
    plan: FormatPlan
    results: dict
    lines: list[str]
    applied: bool

    def to_json(self) -> dict:
        doc = self.plan.to_json()
        doc["applied"] = self.applied
        doc["results"] = self.results
        return doc


def run_format(*, config: str | None, cluster_id: str, node_id: int | None = None, log_dirs: list[str] = (),
               metadata_log_dir: str | None = None, add_scram: list[str] = (), ignore_formatted: bool = False,
               release_version: str | None = None, features: list[str] = (), standalone: bool = False,
               no_initial_controllers: bool = False, initial_controllers: str | None = None,
               controller_listener_name: str | None = None, allow_non_uuid: bool = False,
               apply: bool = False) -> FormatRun:
    """Format the log dirs of `config` (or the given ones): plan, then with `apply`
    write each under Kafka's .lock, in the order Kafka's tool does."""
    import time

    from .config import load as config_load

    if sum(bool(x) for x in (standalone, no_initial_controllers, initial_controllers)) > 1:
        raise FormatError("--standalone, --no-initial-controllers and --initial-controllers are mutually exclusive")
    cfg = config_load(config) if config else None
    if cfg is not None and not cfg.kraft:
        raise FormatError("The kafka configuration file appears to be for a legacy cluster. Formatting is only "
                         "supported for clusters in KRaft mode.")
    nid = node_id if node_id is not None else (cfg.node_id if cfg else None)
    if nid is None:
        raise FormatError("give --node-id or -c server.properties with node.id")
    dirs = list(log_dirs) or (cfg.log_dirs if cfg else [])
    mdir = metadata_log_dir or (cfg.metadata_log_dir if cfg and not log_dirs else (dirs[0] if dirs else None))
    if mdir is None:
        raise FormatError("give --log-dir (or -c server.properties)")
    all_dirs = sorted(set(dirs) | {mdir})
    listener = controller_listener_name or (cfg.controller_listener_names[0] if cfg and cfg.controller_listener_names
                                            else "CONTROLLER")
    # Kafka 4 removed inter.broker.protocol.version: kafka-storage 4.1 formats with
    # --release-version or its latest production version, whatever the config says
    release = release_version
    voters = None
    if initial_controllers:
        voters = parse_dynamic_voters(initial_controllers)
    if standalone:
        if cfg is None:
            raise FormatError("--standalone needs -c server.properties (for the node's controller listener)")
        if not cfg.is_controller:
            raise FormatError("You can only use --standalone on a controller.")
        host, port = cfg.advertised_controller_endpoint()
        voters = [DynamicVoter(nid, host, port, ids.random_directory_id())]
    if voters is None and not no_initial_controllers and cfg is not None and cfg.is_controller \
            and not cfg.quorum_voters:
        raise FormatError("Because controller.quorum.voters is not set on this controller, you must specify one of "
                         "the following: --standalone, --initial-controllers, or --no-initial-controllers.")
    feature_levels = parse_feature_args(features)
    locks = []
    out_lines: list[str] = []
    try:
        if apply:
            for d in all_dirs:
                if os.path.isdir(d):
                    locks.append(fsutil.LogDirLock(d).acquire())
        plan = plan_format(dirs=all_dirs, metadata_dir=mdir, cluster_id=cluster_id, node_id=nid,
                           release=release, features=feature_levels, scram=list(add_scram), voters=voters,
                           listener_name=listener, ignore_formatted=ignore_formatted,
                           allow_non_uuid=allow_non_uuid, no_initial_controllers=no_initial_controllers,
                           unstable=cfg is not None and
                           cfg.props.get("unstable.feature.versions.enable", "").strip().lower() == "true")
        out_lines.extend(plan.messages)
        results = {}
        if not plan.dirs:
            out_lines.append("All of the log directories are already formatted.")
        else:
            now = int(time.time() * 1000)
            order = java_string_hashmap_order([d.path for d in plan.dirs])
            by_path = {d.path: d for d in plan.dirs}
            for p in order:
                d = by_path[p]
                if apply:
                    out_lines.append(f"Formatting {d.description} {d.path} with metadata.version {plan.release}.")
                    try:
                        results[d.path] = format_dir(plan, d, now, backup_root=None)
                    except fsutil.OutOfSpace as e:
                        if results:   # the directories before it are formatted, wholly
                            raise fsutil.OutOfSpace(f"{e}; already formatted before it: "
                                                    f"{', '.join(results)}") from None
                        raise
                else:
                    out_lines.append(f"Would format {d.description} {d.path} with metadata.version {plan.release}.")
            if not apply:
                out_lines.append("Dry run: nothing was written. Run again with --apply to format.")
    finally:
        for lk in locks:
            lk.release()
    return FormatRun(plan, results, out_lines, apply)
