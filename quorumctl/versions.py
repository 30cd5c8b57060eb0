"""Kafka's release and feature catalogue: every metadata.version (its feature
level and release string), every other feature's levels with the
metadata.version each becomes the default at and what it depends on, and the
lookups kafka-storage's version-mapping and feature-dependencies print.
Everything that reads a level, a release or a feature's rule reads it here:
format, doctor's version traps, the image, spark-export.

Facts from Kafka's sources: MetadataVersion.java (feature levels, release
strings, fromVersionString) and the feature classes (KRaftVersion,
TransactionVersion, GroupVersion, EligibleLeaderReplicasVersion, ...: levels,
the metadata.version each becomes the default at, dependencies). docs/storage.md
has the release table and where each row was verified.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError


class FormatError(InputError):
    """Kafka's FormatterException: a format/info/version-mapping request that cannot be
    carried out (bad release version, feature level, SCRAM argument, directory state).

    A library error; it subclasses InputError only so the CLI reports it as every
    bad-input error: one line on stderr, exit 2."""


# -- metadata.version -------------------------------------------------------------

# (version string, feature level); Kafka 3.3-IV3 .. 4.4-IV2, checked against MetadataVersion.java
# of the Kafka 4.3.0 release (upstream commit a9ce3221; levels 7-29 also at 4.1.0, 13f70256, and
# levels 1-25 at tags 3.3.1 .. 3.9.0-rc3) and of the 4.4 branch (87943b2f, the build in
# ../shared/kafka). 4.3's LATEST_PRODUCTION is 4.3-IV0 (30): 4.2-IV0/IV1 (28, 29), unstable in
# 4.1, are production in 4.3. 4.4-IV0 (31) exists in 4.3 as an unstable version; the 4.4 branch
# adds 4.4-IV1 (32, CIDR ACL host patterns, KIP-1276) and 4.4-IV2 (33, controller
# unregistration, KIP-1312), all three still unstable there (its LATEST_PRODUCTION is 4.3-IV0):
# known only with unstable.feature.versions.enable=true, as kafka-storage does.
METADATA_VERSIONS = [
    ("3.3-IV3", 7),
    ("3.4-IV0", 8),
    ("3.5-IV0", 9),
    ("3.5-IV1", 10),
    ("3.5-IV2", 11),
    ("3.6-IV0", 12),
    ("3.6-IV1", 13),
    ("3.6-IV2", 14),
    ("3.7-IV0", 15),
    ("3.7-IV1", 16),
    ("3.7-IV2", 17),
    ("3.7-IV3", 18),
    ("3.7-IV4", 19),
    ("3.8-IV0", 20),
    ("3.9-IV0", 21),
    ("4.0-IV0", 22),
    ("4.0-IV1", 23),
    ("4.0-IV2", 24),
    ("4.0-IV3", 25),
    ("4.1-IV0", 26),
    ("4.1-IV1", 27),
    ("4.2-IV0", 28),
    ("4.2-IV1", 29),
    ("4.3-IV0", 30),
    ("4.4-IV0", 31),
    ("4.4-IV1", 32),
    ("4.4-IV2", 33),
]
# versions Kafka 3 knew but Kafka 4 does not (below its minimum 3.3-IV3): names for old files only
_OLDER = {"3.0-IV1": 1, "3.1-IV0": 2, "3.2-IV0": 3, "3.3-IV0": 4, "3.3-IV1": 5, "3.3-IV2": 6}
LEVEL_OF = dict(METADATA_VERSIONS)
NAME_OF = {lvl: name for name, lvl in METADATA_VERSIONS}
MIN_LEVEL = 7
MAX_LEVEL = 31  # MetadataVersion.latestTesting() of Kafka 4.3 (the newest release)
# MetadataVersion.latestTesting() of each Kafka whose kafka-storage quorumctl can follow
# (4.1: 4.2-IV1; 4.3: 4.4-IV0; the 4.4 branch: 4.4-IV2)
MAX_LEVEL_OF = {"4.1": 29, "4.3": 31, "4.4": 33}
LATEST_PRODUCTION = 30  # 4.3-IV0: what kafka-storage 4.3 (and the 4.4 branch) formats with by default
DEFAULT_RELEASE = "4.3-IV0"
KAFKA41_LATEST_PRODUCTION = 27  # 4.1-IV1: kafka-storage 4.1's default (`-r 4.1-IV1` writes its files)
SCRAM_MIN_LEVEL = 11  # MetadataVersion.isScramSupported: 3.5-IV2
KRAFT_V1_MIN_LEVEL = 21  # KRaftVersion 1's bootstrap metadata.version (Kafka 4.1 also made it a dependency)
# MetadataVersion.isControllerRegistrationSupported: 3.7-IV0; below it the active controller
# checks no controller's supported range but its own (features upgrade)
CONTROLLER_REGISTRATION_LEVEL = 15
# MetadataVersion.isControllerUnregistrationSupported (4.4 branch): 4.4-IV2; below it the
# controller refuses UnregisterController with UNSUPPORTED_VERSION
CONTROLLER_UNREGISTRATION_LEVEL = 33
# the levels whose didMetadataChange is true in Kafka 4.3.0's MetadataVersion (and 32, 33 in the
# 4.4 branch's): a downgrade across one of them would lose metadata, and the controller refuses it
# (features downgrade)
METADATA_CHANGED = frozenset({7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33})
METADATA_VERSION = "metadata.version"


def version_name(level: int) -> str:
    """A metadata.version feature level's name ("3.9-IV0"), also below Kafka 4's minimum."""
    return NAME_OF.get(level) or {v: k for k, v in _OLDER.items()}.get(level) or f"level {level}"


def release_by_name() -> dict[str, str]:
    """ "3.7" -> "3.7-IV4": the last production version of each release (IBP_VERSIONS:
    an unstable one such as "4.4" is known only by its full name, "4.4-IV0")."""
    out = {}
    for name, lvl in METADATA_VERSIONS:
        if lvl <= LATEST_PRODUCTION:
            out[name.split("-")[0]] = name
    return out


def supported_versions_text(unstable: bool, kafka: str = "4.3") -> str:
    """MetadataVersion.metadataVersionsToString(MINIMUM, latest production or testing)."""
    top = MAX_LEVEL_OF[kafka] if unstable else LATEST_PRODUCTION
    return ", ".join(name for name, lvl in METADATA_VERSIONS if lvl <= top)


def parse_release_version(text: str, unstable: bool = False, kafka: str = "4.3") -> tuple[str, int]:
    """MetadataVersion.fromVersionString (Kafka 4.3): "3.7-IV4", "3.7" or "3.7.1" (first
    two segments) -> (version string, feature level); an unstable version only with
    `unstable` (unstable.feature.versions.enable), else Kafka's refusal."""
    segs = text.split(".")
    key = text if len(segs) <= 2 else ".".join(segs[:2])
    name = key if key in LEVEL_OF else release_by_name().get(key)
    if name is None or (LEVEL_OF[name] > LATEST_PRODUCTION and not unstable) or LEVEL_OF[name] > MAX_LEVEL_OF[kafka]:
        raise FormatError(
            f"Unknown metadata.version '{text}'. Supported metadata.version are: "
            f"{supported_versions_text(unstable, kafka)}"
        )
    return name, LEVEL_OF[name]


def from_feature_level(level: int, kafka: str = "4.3") -> str:
    """MetadataVersion.fromFeatureLevel: the version's name, or Kafka's refusal."""
    if level not in NAME_OF or level > MAX_LEVEL_OF[kafka]:
        raise FormatError(
            f"No MetadataVersion with feature level {level}. Valid feature levels are from "
            f"{MIN_LEVEL} to {MAX_LEVEL_OF[kafka]}."
        )
    return NAME_OF[level]


# -- other features ---------------------------------------------------------------


@dataclass(frozen=True)
class Feature:
    name: str
    # level -> (metadata.version level it is the default from, {feature: minimum level})
    levels: dict


FEATURES = {
    # Kafka 4.1's kraft.version 1 depended on metadata.version 21; 4.3 dropped the dependency
    "kraft.version": Feature("kraft.version", {0: (1, {}), 1: (21, {})}),
    "transaction.version": Feature("transaction.version", {0: (1, {}), 1: (24, {}), 2: (24, {})}),
    "group.version": Feature("group.version", {0: (1, {}), 1: (22, {})}),
    "eligible.leader.replicas.version": Feature(
        "eligible.leader.replicas.version", {0: (1, {}), 1: (26, {METADATA_VERSION: 23})}
    ),
    "share.version": Feature("share.version", {0: (1, {}), 1: (28, {})}),
    "streams.version": Feature("streams.version", {0: (1, {}), 1: (29, {})}),
}
# Each feature's LATEST_PRODUCTION in Kafka 4.3 (4.1: streams.version 0): a higher level needs
# unstable.feature.versions.enable
LATEST_PRODUCTION_LEVEL = {
    "kraft.version": 1,
    "transaction.version": 2,
    "group.version": 1,
    "eligible.leader.replicas.version": 1,
    "share.version": 1,
    "streams.version": 1,
}

# The 4.4 branch (ShareVersion.java at 87943b2f): share.version 2 (the share groups' dead-letter
# queue, KIP-1191), the default from 4.4-IV0 (31) on, no dependency, and its LATEST_PRODUCTION
# (so `--feature share.version=2` needs no unstable setting, though its default level comes only
# with an unstable metadata.version). No other feature changed and none was added.
FEATURES_44 = dict(FEATURES, **{"share.version": Feature("share.version", {0: (1, {}), 1: (28, {}), 2: (31, {})})})
LATEST_PRODUCTION_LEVEL_44 = dict(LATEST_PRODUCTION_LEVEL, **{"share.version": 2})


@dataclass(frozen=True)
class Catalogue:
    """What one Kafka release's kafka-storage knows: its newest (testing) metadata.version,
    its features with their levels, and each feature's latest production level."""

    kafka: str
    max_level: int
    features: dict
    latest_production_level: dict


CATALOGUES = {
    "4.3": Catalogue("4.3", MAX_LEVEL_OF["4.3"], FEATURES, LATEST_PRODUCTION_LEVEL),
    "4.4": Catalogue("4.4", MAX_LEVEL_OF["4.4"], FEATURES_44, LATEST_PRODUCTION_LEVEL_44),
}


def catalogue(kafka: str = "4.3") -> Catalogue:
    """The catalogue of Kafka `kafka` ("4.3", the newest release, by default; "4.4")."""
    return CATALOGUES[kafka]


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


# -- version-mapping / feature-dependencies (kafka-storage 4.3) -----------------------


def version_mapping(release: str | None, kafka: str = "4.3") -> dict:
    """StorageTool.runVersionMappingCommand: the default level of every feature at a
    metadata.version (the latest production one by default; unstable ones known too, as
    Kafka 4.3 looks them up). `release` is echoed as given."""
    given = release if release is not None else DEFAULT_RELEASE
    _name, lvl = parse_release_version(given, unstable=True, kafka=kafka)
    return {
        "release": given,
        METADATA_VERSION: lvl,
        "features": {name: default_level(f, lvl) for name, f in catalogue(kafka).features.items()},
    }


def feature_dependencies(args: list[str], kafka: str = "4.3") -> list[dict]:
    """StorageTool.runFeatureDependenciesCommand: what each feature=level needs
    (unreleased levels included, as Kafka looks them up with unstable allowed)."""
    out = []
    for a in args:
        name, eq, text = a.partition("=")
        if not eq:
            raise FormatError(
                f"Invalid feature format: {a}. Expected format: 'feature=version' (e.g. 'group.version=1')"
            )
        name, text = java_trim(name), java_trim(text)
        lvl = java_short(text)
        if lvl is None:
            raise FormatError(f"Invalid version format: {text} for feature {name}")
        if name == METADATA_VERSION:
            if lvl not in NAME_OF or lvl > MAX_LEVEL_OF[kafka]:
                raise FormatError(f"Unknown metadata.version {lvl}")
            out.append({"feature": name, "level": lvl, "version": NAME_OF[lvl], "requires": {}})
            continue
        feat = catalogue(kafka).features.get(name)
        if feat is None:
            raise FormatError(f"Unknown feature: {name}")
        if lvl not in feat.levels:
            raise FormatError(f"Feature level {lvl} is not supported for feature {name}")
        out.append({"feature": name, "level": lvl, "requires": dict(feat.levels[lvl][1])})
    return out


def java_trim(s: str) -> str:
    """String.trim: strips code points up to U+0020 (not Unicode spaces)."""
    i, j = 0, len(s)
    while i < j and s[i] <= " ":
        i += 1
    while j > i and s[j - 1] <= " ":
        j -= 1
    return s[i:j]


def java_short(text: str) -> int | None:
    """Short.parseShort: an optional sign and decimal digits, in range; else None
    (Python's int() would also take "1_0", spaces and other forms)."""
    import re

    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    v = int(text)
    return v if -32768 <= v <= 32767 else None
