"""Settings known to be traps with the cluster's finalized metadata.version: one
declarative table, each entry with the Kafka KIP/JIRA that explains it, what it
checks, and the remedy. doctor runs every entry against every config given.

Each entry was verified in Kafka's sources (apache/kafka 3.9.0-rc3 and the 4.1.0
release, upstream commit 13f70256):
* JBOD: KafkaConfig.validateWithMetadataVersion requires
  MetadataVersion.isDirectoryAssignmentSupported (3.7-IV2) of a broker whose
  log.dirs has more than one dir; MetadataVersionConfigValidator turns the
  failure into a fault ("Broker configuration does not support the cluster
  MetadataVersion"). MV 3.7-IV2 was added by KAFKA-15922 for KIP-858.
* SCRAM: ScramControlManager.alterCredentials answers UNSUPPORTED_VERSION ("The
  current metadata.version does not support SCRAM") below isScramSupported
  (3.5-IV2), so no SCRAM credential can exist (KAFKA-14084, KIP-554).
* Delegation tokens: DelegationTokenControlManager answers UNSUPPORTED_VERSION
  below isDelegationTokenSupported (3.6-IV2) when the controller has
  delegation.token.secret.key (KAFKA-15219; moved to 3.6-IV2 by #14270).

The version names come from ops.formatter's metadata.version table. Findings
about the quorum's kind (static vs dynamic, kraft.version) live in doctor itself
and name KIP-853 / KAFKA-16538 there; docs/diagnose.md lists both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..config.server import ServerConfig
from ..versions import NAME_OF


def _jbod(c: ServerConfig) -> str | None:
    if "broker" in c.process_roles and len(c.log_dirs) > 1:
        return "log.dirs" if "log.dirs" in c.props else "log.dir"
    return None


_SCRAM_KEYS = ("sasl.enabled.mechanisms", "sasl.mechanism.inter.broker.protocol", "sasl.mechanism.controller.protocol")


def _scram(c: ServerConfig) -> str | None:
    for k in sorted(c.props):
        if (
            k in _SCRAM_KEYS or (k.startswith("listener.name.") and k.endswith(".sasl.enabled.mechanisms"))
        ) and "SCRAM-SHA-" in c.props[k].upper():
            return k
    return None


def _delegation_tokens(c: ServerConfig) -> str | None:
    if c.is_controller:
        if c.props.get("delegation.token.secret.key"):  # DelegationTokenManagerConfigs.tokenAuthEnabled
            return "delegation.token.secret.key"
    return None


@dataclass(frozen=True)
class Trap:
    code: str
    severity: str
    reference: str  # the Kafka KIP / JIRA
    min_level: int  # the metadata.version level the setting needs
    setting: Callable[[ServerConfig], str | None]  # the key of the config that uses it, or None
    what: str  # what breaks, after "<key> needs metadata.version X"
    remedy: str

    @property
    def min_version(self) -> str:
        return NAME_OF[self.min_level]


TRAPS = (
    Trap(
        "jbod-needs-metadata-version",
        "error",
        "KIP-858, KAFKA-15922",
        17,
        _jbod,
        "a broker with several log dirs (JBOD) fails as soon as it loads a lower metadata.version "
        '("Multiple log directories (aka JBOD) are not supported in the current MetadataVersion")',
        "upgrade metadata.version first (kafka-features upgrade --metadata 3.7-IV2 or newer), or keep one "
        "log dir per broker until then",
    ),
    Trap(
        "scram-needs-metadata-version",
        "error",
        "KIP-554, KAFKA-14084",
        11,
        _scram,
        'the controllers refuse to store SCRAM credentials (UNSUPPORTED_VERSION: "The current '
        'metadata.version does not support SCRAM"), so no SCRAM login can succeed',
        "upgrade metadata.version to 3.5-IV2 or newer before enabling SCRAM, or use another SASL mechanism",
    ),
    Trap(
        "delegation-tokens-need-metadata-version",
        "warning",
        "KAFKA-15219",
        14,
        _delegation_tokens,
        "the controllers answer every CreateDelegationToken with UNSUPPORTED_VERSION",
        "upgrade metadata.version to 3.6-IV2 or newer (kafka-features upgrade --metadata 3.6-IV2)",
    ),
)
