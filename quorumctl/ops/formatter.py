"""`bootstrap format`: Kafka's storage tool's Formatter, offline.

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

import contextlib
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import ids
from ..errors import InputError, Refused
from ..logdir import statefiles as state_files
from ..versions import (
    LATEST_PRODUCTION,
    METADATA_VERSION,
    MIN_LEVEL,
    NAME_OF,
    SCRAM_MIN_LEVEL,
    FormatError,
    catalogue,
    default_level,
    from_feature_level,
    parse_release_version,
)
from . import fsutil
from .dirinfo import ensemble_problems, read_dir
from .initial_voters import DynamicVoter, java_string_hashmap_order, parse_dynamic_voters, voters_record
from .scram import parse_scram


def parse_feature_args(args: Sequence[str]) -> dict[str, int]:
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


def effective_features(
    release: str | None, requested: dict[str, int], dynamic: bool, unstable: bool = False, kafka: str = "4.3"
) -> tuple[str, int, dict]:
    """Formatter.calculateEffectiveReleaseVersion + calculateEffectiveFeatureLevels
    (Kafka 4.3), honouring --feature (Kafka 3.9 parsed it and then ignored it,
    KAFKA-17868). `dynamic`: Formatter.hasDynamicQuorum (Kafka 4.3: the config has no
    controller.quorum.voters; kraft.version 1 by default, 0 refused); `unstable`: the
    config's unstable.feature.versions.enable; `kafka`: whose catalogue ("4.3", or "4.4": the
    4.4 branch's levels and share.version 2).
    Returns (release name, metadata.version level, {feature: level})."""
    requested = dict(requested)
    cat = catalogue(kafka)
    if METADATA_VERSION in requested:
        if release is not None:
            raise FormatError(f"Use --release-version instead of --feature {METADATA_VERSION}=X to avoid ambiguity.")
        lvl = requested.pop(METADATA_VERSION)
        name = from_feature_level(lvl, kafka)
    else:
        name, lvl = (
            parse_release_version(release, unstable, kafka)
            if release is not None
            else (
                NAME_OF[cat.max_level if unstable else LATEST_PRODUCTION],
                cat.max_level if unstable else LATEST_PRODUCTION,
            )
        )
    if lvl > LATEST_PRODUCTION and not unstable:
        raise FormatError(f"{METADATA_VERSION} {name} is not yet stable.")
    for f in sorted(requested):
        if f not in cat.features:
            raise FormatError(f"Unsupported feature: {f}. Supported features are: {', '.join(sorted(cat.features))}")
    levels = {METADATA_VERSION: lvl}
    for fname, feat in sorted(cat.features.items()):
        if fname == "kraft.version":
            levels[fname] = _kraft_level(requested.get(fname), dynamic)
        else:
            levels[fname] = requested.get(fname, default_level(feat, lvl))
    for fname, feat in sorted(cat.features.items()):
        level = levels[fname]
        if level not in feat.levels or (level > cat.latest_production_level[fname] and not unstable):
            raise FormatError(f"No feature:{fname} with feature level {level}")
        if level >= 1 and lvl < MIN_LEVEL:
            raise FormatError(
                f"{fname} could not be set to {level} because it depends on "
                f"metadata.version={MIN_LEVEL} ({NAME_OF[MIN_LEVEL]})"
            )
        for dep, minimum in feat.levels[level][1].items():
            have = levels.get(dep)
            if have is None or have < minimum:
                raise FormatError(f"{fname} could not be set to {level} because it depends on {dep} level {minimum}")
    return name, lvl, levels


def _kraft_level(configured: int | None, dynamic: bool) -> int:
    """Formatter.effectiveKRaftFeatureLevel, Kafka 4.3's words."""
    if configured is not None:
        if configured == 0 and dynamic:
            raise FormatError(
                "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the "
                "flags --standalone, --initial-controllers, or --no-initial-controllers is used. For "
                "dynamic controllers support, try removing the --feature flag for kraft.version."
            )
        if configured != 0 and not dynamic:
            raise FormatError(
                f"Cannot set kraft.version to {configured} unless controller.quorum.voters is empty "
                "and one of the flags --standalone, --initial-controllers, or --no-initial-controllers "
                "is used. For dynamic controllers support, try using one of --standalone, "
                "--initial-controllers, or --no-initial-controllers and removing "
                "controller.quorum.voters."
            )
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


# -- format -------------------------------------------------------------------------


class FormatRefused(Refused):
    """A format refused (a formatted dir, a running node): nothing was written (exit 1)."""


@dataclass
class FormatDir:
    path: str
    kind: str  # data | metadata | dynamic-metadata | dynamic-metadata-voter
    directory_id: str
    write_snapshot: bool

    @property
    def description(self) -> str:
        return {
            "data": "data directory",
            "metadata": "metadata directory",
            "dynamic-metadata": "dynamic metadata directory",
            "dynamic-metadata-voter": "dynamic metadata voter directory",
        }[self.kind]


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
    kafka: str = "4.3"  # whose layout: "4.3" (bootstrap.checkpoint) or "4.4" (the zero checkpoint only)
    dirs: list[FormatDir] = field(default_factory=list)
    already_formatted: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def bootstrap_metadata_text(self) -> str:
        """BootstrapMetadata.toString (Kafka 4.3 prints it before formatting), the SCRAM
        keys redacted: storedKey and serverKey stand in for the password and do not
        belong in a terminal or a CI log."""
        return (
            f"BootstrapMetadata(records=[{', '.join(_record_text(k, v, d) for k, v, d in self.records)}], "
            f"metadataVersionLevel={self.mv_level}, source=format command)"
        )

    def to_json(self) -> dict:
        return {
            "cluster_id": self.cluster_id,
            "node_id": self.node_id,
            "release_version": self.release,
            "metadata_version": self.mv_level,
            "features": self.features,
            "bootstrap_records": [
                {
                    "type": ("FEATURE_LEVEL_RECORD" if k == 12 else "USER_SCRAM_CREDENTIAL_RECORD"),
                    "version": v,
                    "data": _redact(d),
                }
                for k, v, d in self.records
            ],
            "initial_voters": [v.text() for v in self.voters] if self.voters else None,
            "directories": [
                {
                    "path": d.path,
                    "kind": d.description,
                    "directory_id": d.directory_id,
                    "bootstrap_snapshot": d.write_snapshot,
                }
                for d in self.dirs
            ],
            "already_formatted": self.already_formatted,
        }


def _java_bytes(b: bytes) -> str:
    """Arrays.toString(byte[]): signed bytes."""
    return "[" + ", ".join(str(x - 256 if x > 127 else x) for x in b) + "]"


def _record_text(api_key: int, version: int, d: dict) -> str:
    """ApiMessageAndVersion.toString of a bootstrap record, as Kafka's generated toString."""
    if api_key == 12:
        body = f"FeatureLevelRecord(name='{d['name']}', featureLevel={d['featureLevel']})"
    else:
        body = (
            f"UserScramCredentialRecord(name='{d['name']}', mechanism={d['mechanism']}, "
            f"salt={_java_bytes(d['salt'])}, storedKey=[redacted], serverKey=[redacted], "
            f"iterations={d['iterations']})"
        )
    return f"ApiMessageAndVersion({body} at version {version})"


def _redact(d: dict) -> dict:
    if "storedKey" in d:
        return {"name": d["name"], "mechanism": d["mechanism"], "iterations": d["iterations"]}
    return d


@dataclass(frozen=True, kw_only=True)
class FormatTarget:
    """What is formatted, resolved from a FormatRequest and the node's configuration
    (resolve_target): plan_format's input."""

    dirs: list[str]
    metadata_dir: str
    cluster_id: str
    node_id: int
    release: str | None
    features: dict[str, int]
    scram: list[str]
    voters: list[DynamicVoter] | None
    listener_name: str
    ignore_formatted: bool
    allow_non_uuid: bool
    no_initial_controllers: bool = False
    unstable: bool = False  # the config's unstable.feature.versions.enable
    dynamic: bool | None = None  # the config names no static voters (None: no config, the flags decide)
    kafka: str = "4.3"
    controller: bool = True  # process.roles holds controller


def plan_format(target: FormatTarget) -> FormatPlan:
    """`kafka` "4.4": the 4.4 branch's catalogue and layout (KAFKA-19648): no
    bootstrap.checkpoint; a controller's metadata dir (`controller`: process.roles holds
    controller) gets the zero checkpoint with the bootstrap records (and, in a dynamic
    quorum, the KRaft version and voters); a broker only meta.properties."""
    t = target
    dirs, metadata_dir, cluster_id, node_id, voters = t.dirs, t.metadata_dir, t.cluster_id, t.node_id, t.voters
    kafka = t.kafka
    if node_id is None or node_id < 0:
        raise FormatError("You must specify a valid non-negative node ID.")
    why = ids.check_cluster_id(cluster_id)
    if why is not None and not t.allow_non_uuid:
        raise FormatError(
            f"invalid cluster id {cluster_id!r}: {why}. Generate one with `quorumctl bootstrap "
            "random-uuid` (or pass --allow-non-uuid to keep it, as Kafka would)"
        )
    if not dirs:
        raise FormatError("You must specify at least one directory to format")
    if metadata_dir not in dirs:
        raise FormatError(
            f"The specified metadata log directory, {metadata_dir} was not one of the given directories: {sorted(dirs)}"
        )
    # Formatter.hasDynamicQuorum: Kafka 4.3 takes it from the config (no controller.quorum.voters);
    # without one (dynamic None), --standalone/--initial-controllers/--no-initial-controllers decide,
    # as in Kafka 4.1 (--no-initial-controllers writes no voter snapshot)
    dynamic = t.dynamic if t.dynamic is not None else (voters is not None or t.no_initial_controllers)
    release_name, mv, levels = effective_features(t.release, t.features, dynamic, t.unstable, kafka)
    scram_records = [parse_scram(a) for a in t.scram]
    if scram_records and mv < SCRAM_MIN_LEVEL:
        raise FormatError("SCRAM is only supported in metadata.version 3.5-IV2 or later.")
    records = bootstrap_records(mv, levels, scram_records)
    plan = FormatPlan(cluster_id, node_id, release_name, mv, levels, records, voters, t.listener_name, kafka)
    statuses = [read_dir(d) for d in sorted(set(dirs))]
    probs = ensemble_problems(statuses, cluster_id, node_id)
    if probs:
        raise FormatRefused(probs[0])
    formatted = [s for s in statuses if s.meta is not None]
    errors = [s for s in statuses if s.error is not None]
    plan.already_formatted = [s.path for s in formatted]
    if formatted and not t.ignore_formatted:
        raise FormatRefused(
            f"Log directory {formatted[0].path} is already formatted. Use --ignore-formatted "
            "to ignore this directory and format the others."
        )
    for s in errors:
        plan.messages.append(f"I/O error trying to read log directory {s.path}. Ignoring...")
    empty = [s for s in statuses if s.meta is None and s.error is None]
    if errors and not empty and not formatted:
        raise FormatRefused("No available log directories to format.")
    taken = {s.meta["directory.id"] for s in formatted if s.meta is not None and s.meta.get("directory.id")}
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
        if kind == "dynamic-metadata-voter" and voters is not None:  # (a voter's kind needs voters)
            did = next(v.directory_id for v in voters if v.node_id == node_id)
        else:
            did = ids.random_directory_id(taken)
        taken.add(did)
        snapshot = kind.startswith("dynamic") if kafka != "4.4" else (kind != "data" and t.controller)
        plan.dirs.append(FormatDir(s.path, kind, did, snapshot))
    return plan


def _refuse_leftover_log(path: str) -> None:
    """An unformatted dir that still holds a metadata log: formatting would graft a new
    identity onto old data; Kafka does it silently, quorumctl refuses."""
    pdir = os.path.join(path, "__cluster_metadata-0")
    if not os.path.isdir(pdir):
        return
    for name in os.listdir(pdir):
        if name.endswith(".log") or (
            name.endswith(".checkpoint") and name != "00000000000000000000-0000000000.checkpoint"
        ):
            raise FormatRefused(
                f"{path} has no meta.properties but holds a metadata log ({pdir}/{name}); "
                "refusing to format over it: restore its meta.properties or move the directory away"
            )


SNAPSHOT_ZERO = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"


def dir_files(plan: FormatPlan, d: FormatDir, now_ms: int) -> dict[str, bytes]:
    """The files one directory gets, relative path -> bytes."""
    from ..logdir.snapshots import encode_snapshot

    if plan.kafka == "4.4":
        # Formatter.writeBoostrapSnapshot (4.4): header (+ KRaftVersion and voters when
        # kraft.version is 1), the bootstrap records, footer; nothing else but meta.properties
        out = {}
        if d.write_snapshot:
            out[SNAPSHOT_ZERO] = encode_snapshot(
                plan.records,
                epoch=0,
                last_contained_log_timestamp=now_ms,
                kraft_version=plan.features["kraft.version"],
                voters=voters_record(plan.voters, plan.listener_name) if plan.voters else None,
                timestamp_ms=now_ms,
            )
        out[state_files.META_PROPERTIES] = state_files.meta_properties_text(
            1, plan.cluster_id, plan.node_id, d.directory_id, now_ms / 1000
        )
        return out
    out = {
        state_files.BOOTSTRAP_CHECKPOINT: encode_snapshot(
            plan.records, epoch=0, last_contained_log_timestamp=0, timestamp_ms=now_ms
        )
    }
    if d.write_snapshot:
        assert plan.voters is not None  # before 4.4 only a dynamic quorum's metadata dir gets a snapshot
        voters = voters_record(plan.voters, plan.listener_name)
        out["__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"] = encode_snapshot(
            [],
            epoch=0,
            last_contained_log_timestamp=now_ms,
            kraft_version=plan.features["kraft.version"],
            voters=voters,
            timestamp_ms=now_ms,
        )
    out[state_files.META_PROPERTIES] = state_files.meta_properties_text(
        1, plan.cluster_id, plan.node_id, d.directory_id, now_ms / 1000
    )
    return out


def _mode(rel: str) -> int:
    """The zero snapshot is read-only to its owner, as Kafka leaves it (a snapshot file is
    created 0600 and frozen with setReadOnly); the other files 0644."""
    return 0o400 if rel == SNAPSHOT_ZERO else 0o644


def _remove_stale_staging(parent: str, prefix: str) -> None:
    """Staging directories an interrupted format left beside the log dir (nobody
    holds their lock any more)."""
    for name in os.listdir(parent):
        if not name.startswith(prefix):
            continue
        full = os.path.join(parent, name)
        try:
            lock = fsutil.LogDirLock(full).acquire()
        except (fsutil.LockHeld, InputError, OSError):  # held, or not ours to remove
            continue
        try:
            shutil.rmtree(full, ignore_errors=True)
        finally:
            lock.release()


def _check_target(path: str, apply: bool) -> None:
    """A log dir to format must be a directory, or be creatable in one; with `apply`, one we
    can create files in (a file created and removed: a read-only mount refuses root too)."""
    from .backups import write_probe

    where = os.path.abspath(path)
    while not os.path.lexists(where):
        where = os.path.dirname(where)
    if not os.path.isdir(where):
        raise FormatError(f"{path}: {where} is not a directory; nothing was written")
    if apply:
        why = write_probe(where)
        if why is not None:
            raise FormatError(f"{path}: cannot write in {where} ({why}); nothing was written")


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
                    fsutil.write_synced(full, data, _mode(rel))
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
    created: list[str] = []  # what a full disk makes us remove again (meta.properties comes last)

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
            fsutil.atomic_write(full, data, tmp_suffix=tmp, mode=_mode(rel))
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


@dataclass(frozen=True, kw_only=True)
class FormatRequest:
    """What `bootstrap format` is asked: kafka-storage format's options, as
    cli/bootstrap.py reads them from the command line."""

    config: str | None = None  # the node's server.properties
    cluster_id: str
    node_id: int | None = None  # default: the config's node.id
    log_dirs: Sequence[str] = ()  # default: the config's log.dirs
    metadata_log_dir: str | None = None  # default: metadata.log.dir, else the first log dir
    add_scram: Sequence[str] = ()
    ignore_formatted: bool = False
    release_version: str | None = None
    features: Sequence[str] = ()  # name=level
    standalone: bool = False
    no_initial_controllers: bool = False
    initial_controllers: str | None = None
    controller_listener_name: str | None = None
    allow_non_uuid: bool = False
    apply: bool = False
    kafka: str = "4.3"  # whose kafka-storage ("4.3" or "4.4": plan_format)


def run_format(request: FormatRequest) -> FormatRun:
    """Format the log dirs of the request's config (or the given ones): plan, then with
    `apply` write each under Kafka's .lock, in the order Kafka's tool does. `kafka` "4.4":
    as the 4.4 branch's kafka-storage (plan_format); a node without a config counts as a
    controller when it is given voters (--standalone, --initial-controllers)."""
    target = resolve_target(request)
    for path in target.dirs:
        _check_target(path, request.apply)
    locks = []
    try:
        if request.apply:
            for path in target.dirs:
                if os.path.isdir(path):
                    locks.append(fsutil.LogDirLock(path).acquire())
        plan = plan_format(target)
        results, out_lines = _format_dirs(plan, request.apply)
    finally:
        for lk in locks:
            lk.release()
    return FormatRun(plan, results, out_lines, request.apply)


def resolve_target(request: FormatRequest) -> FormatTarget:
    """The dirs, node, voters and features to format with: the request's options, else the
    config's settings, checked as kafka-storage checks them (in its order and words)."""
    from ..config.server import load as config_load

    rq = request
    if sum(bool(x) for x in (rq.standalone, rq.no_initial_controllers, rq.initial_controllers)) > 1:
        raise FormatError("--standalone, --no-initial-controllers and --initial-controllers are mutually exclusive")
    cfg = config_load(rq.config) if rq.config else None
    if cfg is not None and not cfg.kraft:
        raise FormatError(
            "The kafka configuration file appears to be for a legacy cluster. Formatting is only "
            "supported for clusters in KRaft mode."
        )
    nid = rq.node_id if rq.node_id is not None else (cfg.node_id if cfg else None)
    if nid is None:
        raise FormatError("give --node-id or -c server.properties with node.id")
    dirs = list(rq.log_dirs) or (cfg.log_dirs if cfg else [])
    mdir = rq.metadata_log_dir or (cfg.metadata_log_dir if cfg and not rq.log_dirs else (dirs[0] if dirs else None))
    if mdir is None:
        raise FormatError("give --log-dir (or -c server.properties)")
    listener = rq.controller_listener_name or (
        cfg.controller_listener_names[0] if cfg and cfg.controller_listener_names else "CONTROLLER"
    )
    # Kafka 4.3: the quorum is dynamic (kraft.version 1) when the config names no static
    # voters, whatever the flags; without a config, quorumctl takes the flags (Kafka 4.1's rule)
    static_voters = cfg is not None and bool(cfg.quorum_voters.strip())
    dynamic = (
        (not static_voters)
        if cfg is not None
        else bool(rq.standalone or rq.initial_controllers or rq.no_initial_controllers)
    )
    if static_voters and (rq.initial_controllers or rq.standalone):
        raise FormatError(
            "You cannot specify controller.quorum.voters and format the node with "
            "--initial-controllers or --standalone. If you want to use dynamic quorum, please "
            "remove controller.quorum.voters and specify controller.quorum.bootstrap.servers instead."
        )
    voters = None
    if rq.initial_controllers:
        voters = parse_dynamic_voters(rq.initial_controllers)
    if rq.standalone:
        if cfg is None:
            raise FormatError("--standalone needs -c server.properties (for the node's controller listener)")
        if not cfg.is_controller:
            raise FormatError("You can only use --standalone on a controller.")
        host, port = cfg.advertised_controller_endpoint()
        voters = [DynamicVoter(nid, host, port, ids.random_directory_id())]
    if voters is None and not rq.no_initial_controllers and cfg is not None and cfg.is_controller and not static_voters:
        raise FormatError(
            "Because controller.quorum.voters is not set on this controller, you must specify one of "
            "the following: --standalone, --initial-controllers, or --no-initial-controllers."
        )
    return FormatTarget(
        dirs=sorted(set(dirs) | {mdir}),
        metadata_dir=mdir,
        cluster_id=rq.cluster_id,
        node_id=nid,
        # Kafka 4 removed inter.broker.protocol.version: kafka-storage 4.3 formats with
        # --release-version or its latest production version, whatever the config says
        release=rq.release_version,
        features=parse_feature_args(rq.features),
        scram=list(rq.add_scram),
        voters=voters,
        listener_name=listener,
        ignore_formatted=rq.ignore_formatted,
        allow_non_uuid=rq.allow_non_uuid,
        no_initial_controllers=rq.no_initial_controllers,
        dynamic=dynamic,
        kafka=rq.kafka,
        controller=cfg.is_controller if cfg is not None else voters is not None,
        unstable=cfg is not None and cfg.props.get("unstable.feature.versions.enable", "").strip().lower() == "true",
    )


def _format_dirs(plan: FormatPlan, apply: bool) -> tuple[dict, list[str]]:
    """Kafka's lines for the plan, and with `apply` each directory written (under the
    caller's locks) in the order Kafka's tool writes them: (how each was written, lines)."""
    import time

    out_lines: list[str] = list(plan.messages)
    results: dict[str, str] = {}
    if not plan.dirs:
        out_lines.append("All of the log directories are already formatted.")
        return results, out_lines
    out_lines.append(f"Bootstrap metadata: {plan.bootstrap_metadata_text()}")
    now = int(time.time() * 1000)
    order = java_string_hashmap_order([d.path for d in plan.dirs])
    by_path = {d.path: d for d in plan.dirs}
    for p in order:
        d = by_path[p]
        if not apply:
            out_lines.append(f"Would format {d.description} {d.path} with metadata.version {plan.release}.")
            continue
        out_lines.append(f"Formatting {d.description} {d.path} with metadata.version {plan.release}.")
        try:
            results[d.path] = format_dir(plan, d, now, backup_root=None)
        except fsutil.OutOfSpace as e:
            if results:  # the directories before it are formatted, wholly
                raise fsutil.OutOfSpace(f"{e}; already formatted before it: {', '.join(results)}") from None
            raise
    if not apply:
        out_lines.append("Dry run: nothing was written. Run again with --apply to format.")
    return results, out_lines
