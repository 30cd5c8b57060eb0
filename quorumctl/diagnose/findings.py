"""doctor's report: a finding (code, severity, message, evidence, remedy), a log dir
as doctor read it, and the report of one run (what was read and what was found),
with its JSON document. The checks that fill it are `file_checks` (configs and log
dirs), `registrations` (nodes registered in the metadata image that are gone) and
`live_checks` (the live quorum)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..config.server import ServerConfig
from ..logdir import statefiles as state_files
from ..versions import version_name as metadata_version_name

if TYPE_CHECKING:  # types only: doctor loads the metadata logs lazily
    from ..logdir.features import Level
    from ..raft.replica import Replica


@dataclass
class Finding:
    code: str
    severity: str  # error | warning
    message: str
    evidence: list[str]
    remedy: str
    node_id: int | None = None  # the one node it is about, where another check looks it up (not in the JSON)
    # a stale endpoint's set-endpoints fix: (listener name, configs, voters' log dirs), so that every
    # stale voter's finding names one command with all of them (file_checks.merge_set_endpoints)
    fix: tuple | None = None

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "evidence": self.evidence,
            "remedy": self.remedy,
        }


@dataclass
class LogDir:
    path: str
    config: ServerConfig | None  # the (first) config naming it, if any
    also: list = field(default_factory=list)  # other configs naming it (a misconfiguration)
    meta: dict | None = None
    meta_lines: dict = field(default_factory=dict)
    replica: Replica | None = None  # when it holds the metadata log
    problem: str | None = None
    starts_on: dict | None = None  # ops.dirinfo.starts_on: which Kafka releases can start it

    @property
    def meta_path(self) -> str:
        return os.path.join(self.path, state_files.META_PROPERTIES)

    def meta_at(self, key: str) -> str:
        line = self.meta_lines.get(key)
        return f"{self.meta_path}:{line}" if line else self.meta_path


@dataclass
class Report:
    configs: list[ServerConfig]
    log_dirs: list[LogDir]
    voters: dict | None  # {"ids", "source", "node": replica label, "by_id": {id: voter dict}}
    findings: list[Finding]
    metadata_version: Level | None = None  # the cluster's finalized metadata.version
    # with only --bootstrap-controller: the brokers registered in the leader's log, or why not visible
    registrations: dict | None = None

    def to_json(self) -> dict:
        return {
            "configs": [
                {
                    "path": c.path,
                    "node_id": c.node_id,
                    "process_roles": c.process_roles,
                    "metadata_log_dir": c.metadata_log_dir,
                    "quorum": "static" if c.quorum_voters else ("dynamic" if c.quorum_bootstrap_servers else None),
                }
                for c in self.configs
            ],
            "log_dirs": [
                {
                    "path": d.path,
                    "node_id": (d.meta or {}).get("node.id"),
                    "cluster_id": (d.meta or {}).get("cluster.id"),
                    "directory_id": (d.meta or {}).get("directory.id"),
                    "metadata_log": d.replica is not None,
                    "kraft_version": getattr(d.replica, "kraft_version", None),
                    "starts_on": d.starts_on,
                    "problem": d.problem,
                }
                for d in self.log_dirs
            ],
            "voter_set": (
                {"ids": self.voters["ids"], "source": self.voters["source"], "from": self.voters["node"]}
                if self.voters
                else None
            ),
            "metadata_version": (
                {
                    "level": self.metadata_version.level,
                    "name": metadata_version_name(self.metadata_version.level),
                    "evidence": self.metadata_version.evidence,
                }
                if self.metadata_version
                else None
            ),
            **({"registrations": self.registrations} if self.registrations is not None else {}),
            "findings": [f.to_json() for f in self.findings],
            "ok": not self.findings,
        }
