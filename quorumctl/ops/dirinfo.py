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


