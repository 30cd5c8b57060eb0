"""`bootstrap info`: the log dirs of a node checked as kafka-storage's info command
and MetaPropertiesEnsemble check them (missing, unformatted, mismatched ids)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .. import ids
from ..errors import InputError
from ..logdir import statefiles as state_files


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
            out.append(
                f"Stored node id {m['node.id']} doesn't match previous node id {node_id} in {path}. "
                "If you moved your data, make sure your configured node id matches. If you intend to "
                "create a new node, you should remove all data in your data directories."
            )
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
            problems.append(
                "Mismatched meta.properties versions between storage directories (version 0 and version 1)."
            )
    seen: dict[str, str] = {}
    for st in statuses:
        did = st.meta.get("directory.id") if st.meta else None
        if did is None:
            continue
        if ids.is_reserved_directory_id(did):
            problems.append(f"Invalid reserved directory ID {did} found in {st.path}")
        key = ids.canonical(did)
        if key in seen:
            problems.append(f"Duplicate directory ID {did} found. It was the ID of {seen[key]}, but also of {st.path}")
        seen[key] = st.path
    if first is not None:
        if kraft_mode and first["version"] == 0:
            problems.append(
                "The kafka configuration file appears to be for a cluster in KRaft mode, but "
                "the directories are formatted for legacy mode."
            )
        elif not kraft_mode and first["version"] == 1:
            problems.append(
                "The kafka configuration file appears to be for a legacy cluster, but "
                "the directories are formatted for a cluster in KRaft mode."
            )
    return {
        "directories": [
            {
                "path": s.path,
                "exists": s.exists,
                "formatted": s.meta is not None,
                "meta_properties": s.meta,
                "error": s.error,
                "starts_on": starts_on(s.path) if s.meta is not None else None,
            }
            for s in statuses
        ],
        "found": found,
        "metadata": first,
        "problems": problems,
        "warnings": warnings,
    }


# -- which Kafka releases can start a directory ---------------------------------------


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(x) for x in release.split("."))


def starts_on(log_dir: str) -> dict | None:
    """Which Kafka releases can start a formatted log dir, from what it holds:

    * its metadata.version (the metadata log's, else the bootstrap records'): a Kafka
      whose MetadataVersion has that level, from the release that introduced it on
      (a level above LATEST_PRODUCTION needs unstable.feature.versions.enable=true);
    * its layout: kafka-storage 4.4 (KAFKA-19648) writes no bootstrap.checkpoint, the
      bootstrap records go into a controller's zero checkpoint and a broker gets only
      meta.properties; Kafka's own note (4.4's --release-version help): such a
      directory is not forward-compatible, the node must run the kafka-storage
      release that formatted it or a newer one, whatever --release-version said.
      A node that already started has its metadata in the log: the layout no longer
      decides, the metadata.version does.

    None when the dir is not formatted (no meta.properties) or holds neither (no
    metadata.version found, not 4.4's layout): nothing to go by."""
    from ..logdir.features import finalized_levels
    from ..raft.replica import load_replica
    from ..versions import LATEST_PRODUCTION, METADATA_VERSION, NAME_OF, version_name

    if not os.path.isfile(os.path.join(log_dir, state_files.META_PROPERTIES)):
        return None
    pdir = os.path.join(log_dir, "__cluster_metadata-0")
    replica = None
    if os.path.isdir(pdir):
        try:
            replica = load_replica(log_dir)
        except (InputError, OSError):
            replica = None
    has_boot = os.path.isfile(os.path.join(log_dir, state_files.BOOTSTRAP_CHECKPOINT))
    started = replica is not None and (replica.log_end > 0 or replica.quorum_state is not None)
    reasons: list[str] = []
    release = "3.3"  # the oldest KRaft release whose levels Kafka 4 still knows
    layout = None
    if not has_boot and not started:
        zero = os.path.join(pdir, "00000000000000000000-0000000000.checkpoint")
        if os.path.isfile(zero) or replica is None:
            layout = "4.4"
            where = f"{zero} holds the bootstrap records" if os.path.isfile(zero) else "only meta.properties"
            reasons.append(
                f"formatted by kafka-storage 4.4 or newer (no {state_files.BOOTSTRAP_CHECKPOINT}, "
                f"{where}; KAFKA-19648): not forward-compatible"
            )
            release = "4.4"
    mv = None
    try:
        mv = finalized_levels(replica if started else None, log_dir).get(METADATA_VERSION)
        if mv is None and replica is not None:
            mv = finalized_levels(replica, log_dir).get(METADATA_VERSION)
    except (InputError, OSError):
        mv = None
    unstable = False
    if mv is not None:
        name = NAME_OF.get(mv.level)
        if name is None:
            reasons.append(f"metadata.version {version_name(mv.level)} is not one quorumctl knows")
        else:
            mv_release = name.split("-")[0]
            unstable = mv.level > LATEST_PRODUCTION
            reasons.append(
                f"metadata.version {name} ({mv.path}@{mv.offset}) needs Kafka {mv_release} or newer"
                + (
                    " with unstable.feature.versions.enable=true (unstable in every release quorumctl knows)"
                    if unstable
                    else ""
                )
            )
            if _release_key(mv_release) > _release_key(release):
                release = mv_release
    if not reasons:  # neither a 4.4 layout nor a metadata.version: nothing to say
        return None
    # worth a line of text: what the metadata.version alone does not say (4.4's layout, or an
    # unstable level); the JSON always has it
    notable = layout == "4.4" or unstable
    return {
        "path": log_dir,
        "min_release": release,
        "notable": notable,
        "layout": layout or ("started" if started else "bootstrap.checkpoint"),
        "metadata_version": mv.level if mv else None,
        "needs_unstable": unstable,
        "text": f"Kafka {release} or newer" + (" (with unstable.feature.versions.enable=true)" if unstable else ""),
        "reasons": reasons,
    }
