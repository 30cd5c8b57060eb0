"""`features upgrade|downgrade`: the change asked for, and which registered
nodes block it.

The active controller refuses an UpdateFeatures whose new level lies outside the
supported range of any registered broker (fenced or not: every registration
counts) or, from metadata.version 3.7-IV0 on, of any registered controller
(FeatureControlManager.reasonNotSupported, Kafka 4.3). It names only the first
one it meets; `blockers` names them all, in Kafka's words ("Broker 4 only
supports versions 7-27"). `controller_verdict` replays the rest of the
controller's checks for the offline mode, where no controller can be asked:
the direction of the change, metadata.version downgrades that would lose
metadata, and feature dependencies (Feature.validateVersion).

Facts from Kafka 4.3.0 (a9ce3221): tools/.../FeatureCommand.java (argument
parsing and its messages), metadata/.../controller/FeatureControlManager.java
and QuorumFeatures.java (the checks and their messages),
server-common/.../MetadataVersion.java (didMetadataChange per level).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import InputError
from ..versions import (
    CATALOGUES,
    CONTROLLER_REGISTRATION_LEVEL,
    FEATURES,
    LATEST_PRODUCTION,
    MAX_LEVEL,
    METADATA_CHANGED,
    METADATA_VERSION,
    MIN_LEVEL,
    NAME_OF,
    catalogue,
    default_level,
    java_short,
    java_trim,
    parse_release_version,
)

# FeatureUpdate.UpgradeType codes (the UpdateFeatures request's UpgradeType, v1+)
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
UPGRADE_TYPE_NAMES = {UPGRADE: "UPGRADE", SAFE_DOWNGRADE: "SAFE_DOWNGRADE", UNSAFE_DOWNGRADE: "UNSAFE_DOWNGRADE"}


class FeatureUpdateError(InputError):
    """A features upgrade/downgrade request that cannot be built (FeatureCommand's
    TerseException or argument error): one line, exit 2."""


@dataclass
class Change:
    """What `features upgrade|downgrade` asks for: feature -> new level, in the order given."""

    op: str  # "upgrade" or "downgrade"
    updates: dict[str, int]
    upgrade_type: int


def parse_change(
    op: str,
    metadata: str | None,
    features: list[str] | None,
    unsafe: bool = False,
    release_version: str | None = None,
    kafka: str = "4.3",
) -> Change:
    """FeatureCommand.handleUpgradeOrDowngrade's reading of --release-version, --metadata
    and --feature (Kafka 4.3): a metadata.version by name (unstable ones known too, as
    Kafka's fromVersionString(.., true)), feature=level pairs parsed as Java shorts;
    --release-version alone, with every production feature at its default level for
    that metadata.version (an upgrade leaves out the features whose default is 0).
    `disable` (handleDisable): `features` are names, each to level 0, a downgrade.
    `kafka`: whose catalogue ("4.3", "4.4": the versions known by name, the features' defaults)."""
    if op not in ("upgrade", "downgrade", "disable"):
        raise ValueError(op)
    kind = UPGRADE if op == "upgrade" else (UNSAFE_DOWNGRADE if unsafe else SAFE_DOWNGRADE)
    updates: dict[str, int] = {}
    if op == "disable":
        for name in features or ():
            if name in updates:
                raise FeatureUpdateError(f"Feature {name} was specified more than once.")
            updates[name] = 0
        if not updates:
            raise FeatureUpdateError(f"You must specify at least one feature to {op}")
        return Change(op, updates, kind)
    if release_version is not None:
        if metadata is not None or features:
            raise FeatureUpdateError("Can not specify `release-version` with other feature flags.")
        try:
            _name, mv = parse_release_version(release_version, unstable=True, kafka=kafka)
        except InputError as e:
            raise FeatureUpdateError(str(e)) from None
        updates[METADATA_VERSION] = mv
        for name, spec in catalogue(kafka).features.items():
            level = default_level(spec, mv)
            if kind != UPGRADE or level > 0:  # "Don't send a request to upgrade a feature to 0."
                updates[name] = level
        return Change(op, updates, kind)
    if metadata is not None:
        try:
            _name, level = parse_release_version(metadata, unstable=True, kafka=kafka)
        except InputError as e:
            raise FeatureUpdateError(str(e)) from None
        updates[METADATA_VERSION] = level
    for text in features or ():
        name, level = parse_name_and_level(text)
        if name in updates:
            raise FeatureUpdateError(f"Feature {name} was specified more than once.")
        updates[name] = level
    if not updates:
        raise FeatureUpdateError(f"You must specify at least one feature to {op}")
    return Change(op, updates, kind)


def parse_name_and_level(text: str) -> tuple[str, int]:
    """FeatureCommand.parseNameAndLevel, with its messages."""
    name, eq, level_text = text.partition("=")
    if not eq:
        raise FeatureUpdateError(f"Can't parse feature=level string {text}: equals sign not found.")
    name, level_text = java_trim(name), java_trim(level_text)
    level = java_short(level_text)
    if level is None:
        raise FeatureUpdateError(f"Can't parse feature=level string {text}: unable to parse {level_text} as a short.")
    return name, level


@dataclass
class Node:
    """A registered broker or controller, as far as it is known."""

    kind: str  # "broker" or "controller"
    id: int
    supported: dict[str, tuple[int, int]] | None  # None: not known (it did not answer)
    fenced: bool | None = None  # brokers; None: not known
    address: str | None = None
    last_seen_ms: int | None = None
    last_seen: str | None = None  # what last_seen_ms is ("last fetch", "registration changed")
    error: str | None = None  # why `supported` is not known
    extra: dict = field(default_factory=dict)


def range_text(lo: int, hi: int) -> str:
    """VersionRange.toString: "7-27", "1" when min == max, "7+" up to Short.MAX_VALUE."""
    if lo == hi:
        return str(lo)
    if hi == 32767:
        return f"{lo}+"
    return f"{lo}-{hi}"


def reason_not_supported(level: int, what: str, rng: tuple[int, int]) -> str | None:
    """QuorumFeatures.reasonNotSupported: Kafka's sentence, or None when `rng` holds `level`."""
    lo, hi = rng
    if lo <= level <= hi:
        return None
    if hi == 0:
        return f"{what} does not support this feature."
    return f"{what} only supports versions {range_text(lo, hi)}"


def checked_kinds(metadata_level: int | None) -> tuple[str, ...]:
    """Whose registrations the controller checks at the current metadata.version."""
    if metadata_level is not None and metadata_level < CONTROLLER_REGISTRATION_LEVEL:
        return ("broker",)
    return ("broker", "controller")


def blockers(nodes: list[Node], change: Change, metadata_level: int | None = None) -> list[dict]:
    """Every (node, feature) whose supported range excludes the new level: brokers
    first, then controllers, each by id; a feature a node does not list is
    supported at 0 only (QuorumFeatures.DISABLED)."""
    kinds = checked_kinds(metadata_level)
    out = []
    for kind in kinds:
        for n in sorted((n for n in nodes if n.kind == kind), key=lambda n: n.id):
            supported = n.supported
            if supported is None:
                continue
            for feature, level in change.updates.items():
                rng = supported.get(feature, (0, 0))
                why = reason_not_supported(level, f"{kind.capitalize()} {n.id}", rng)
                if why is not None:
                    out.append({"node": n, "feature": feature, "level": level, "supported": rng, "reason": why})
    return out


def newest_production(feature: str) -> int:
    """The newest level of `feature` that some release quorumctl knows ships as production."""
    if feature == METADATA_VERSION:
        return LATEST_PRODUCTION
    return max(CATALOGUES[k].latest_production_level.get(feature, 0) for k in CATALOGUES)


def is_unstable_level(feature: str, level: int) -> bool:
    """A level some release quorumctl knows defines, above every release's production range."""
    if level <= newest_production(feature):
        return False
    if feature == METADATA_VERSION:
        return level in NAME_OF
    return any(level in c.features[feature].levels for c in CATALOGUES.values() if feature in c.features)


def advertised_only(b: dict) -> bool:
    """True when a blocker is only a controller's ApiVersions answer stopping at the production
    range, for an unstable level: a controller advertises unstable levels with
    unstable.api.versions.enable, but registers them, and the active controller checks them,
    with unstable.feature.versions.enable (ControllerServer, Kafka 4.3 and the 4.4 branch).
    That does not prove it refuses the level; brokers advertise what they register."""
    return (
        b["node"].kind == "controller"
        and is_unstable_level(b["feature"], b["level"])
        and b["supported"][1] == newest_production(b["feature"])
    )


_NAMED = re.compile(r"(Local controller|Controller|Broker) (\d+) only supports versions (\d+)(?:-(\d+)|(\+))?")


def named_by_kafka(verdict: dict[str, str | None]) -> dict[tuple[str, int], tuple[int, int]]:
    """The nodes Kafka's verdict names as not supporting a level: (kind, id) -> the range it
    gives (VersionRange's text read back)."""
    out = {}
    for msg in verdict.values():
        for m in _NAMED.finditer(msg or ""):
            lo = int(m.group(3))
            hi = 32767 if m.group(5) else int(m.group(4) or lo)
            out[("broker" if m.group(1) == "Broker" else "controller", int(m.group(2)))] = (lo, hi)
    return out


def settle_advertised(found: list[dict], verdict: dict[str, str | None]) -> tuple[list[dict], list[str]]:
    """Live blockers once Kafka's verdict is known: a controller whose blocking is
    `advertised_only` stays a blocker only when the verdict names it (with the range Kafka
    gives, its registration's); the others become notes."""
    named = named_by_kafka(verdict)
    keep, notes = [], []
    for b in found:
        n = b["node"]
        if not advertised_only(b):
            keep.append(b)
            continue
        if (n.kind, n.id) in named:
            rng = named[(n.kind, n.id)]
            keep.append(
                dict(
                    b, supported=rng, reason=reason_not_supported(b["level"], f"Controller {n.id}", rng) or b["reason"]
                )
            )
            continue
        lo, hi = b["supported"]
        notes.append(
            f"controller {n.id} advertises {b['feature']} {range_text(lo, hi)} (ApiVersions: the "
            f"production range unless unstable.api.versions.enable); the active controller checks its "
            f"registration, which has unstable levels with unstable.feature.versions.enable: not counted "
            f"as blocking {b['level']}, Kafka's verdict decides"
        )
    return keep, notes


def metadata_changed_between(a: int, b: int) -> bool:
    """MetadataVersion.checkIfMetadataChanged: a level in (low, high] changed the metadata."""
    lo, hi = min(a, b), max(a, b)
    return any(lvl in METADATA_CHANGED for lvl in range(lo + 1, hi + 1))


def controller_verdict(
    change: Change, finalized: dict[str, int], nodes: list[Node], local: int | None = None
) -> dict[str, str | None]:
    """What the active controller would answer, per feature (FeatureControlManager.updateFeature,
    Kafka 4.3): None where the change is accepted, else Kafka's error message. For the offline
    mode: the checks of every registration come from `nodes` (the image's registrations).
    `local` is the active controller's id, when known: it checks its own range first, as
    "Local controller N", then the brokers, then the other controllers."""
    mv = finalized.get(METADATA_VERSION)
    proposed = dict(finalized)
    proposed.update(change.updates)
    found = blockers(nodes, change, mv)
    if local is not None:
        mine = list(blockers([n for n in nodes if n.kind == "controller" and n.id == local], change, None))
        for b in mine:
            b["reason"] = reason_not_supported(b["level"], f"Local controller {local}", b["supported"])
        found = mine + [b for b in found if not (b["node"].kind == "controller" and b["node"].id == local)]
    # the controller checks the features in its HashMap's order and stops at the first error,
    # which then fails every feature of the request (QuorumController.updateFeatures)
    for feature in java_hash_order(list(change.updates)):
        why = _feature_verdict(change, feature, change.updates[feature], finalized, proposed, found, mv)
        if why is not None:
            return dict.fromkeys(change.updates, ALL_FAILED + why)
    return dict.fromkeys(change.updates)


ALL_FAILED = "The update failed for all features since the following feature had an error: "


def _java_string_hash(s: str) -> int:
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def java_hash_order(keys: list[str]) -> list[str]:
    """The iteration order of a java.util.HashMap<String, ?> filled with `keys` in
    this order (its default capacity 16, doubled past 3/4 full): by bucket
    (hash ^ hash >>> 16, masked), then insertion order within a bucket."""
    cap = 16
    while len(keys) > cap * 3 // 4:
        cap *= 2

    def bucket(k: str) -> int:
        h = _java_string_hash(k)
        return (h ^ (h >> 16)) & (cap - 1)

    return sorted(keys, key=bucket)  # sorted() is stable: insertion order within a bucket


def _feature_verdict(change, feature, level, finalized, proposed, found, mv) -> str | None:
    def invalid(msg):
        return f"Invalid update version {level} for feature {feature}. {msg}"

    current = finalized.get(feature, 0)
    if level < 0:
        return invalid("A feature version cannot be less than 0.")
    for b in found:
        if b["feature"] == feature:
            return invalid(b["reason"])
    if level < current and change.upgrade_type == UPGRADE:
        return invalid(
            "Can't downgrade the version of this feature without setting the upgrade type to either "
            "safe or unsafe downgrade."
        )
    if level > current and change.upgrade_type != UPGRADE:
        return invalid("Can't downgrade to a newer version.")
    if feature == METADATA_VERSION:
        if level not in NAME_OF:
            return f"Invalid metadata.version {level}. Valid versions are from {MIN_LEVEL} to {MAX_LEVEL}."
        if mv is not None and level < mv and metadata_changed_between(mv, level):
            why = (
                "Unsafe metadata downgrade is not supported in this version."
                if change.upgrade_type == UNSAFE_DOWNGRADE
                else "Refusing to perform the requested downgrade because it might delete metadata information."
            )
            return f"Unsupported metadata.version downgrade from {mv} to {level}. {why}"
        return None
    if feature == "kraft.version":
        if change.upgrade_type != UPGRADE and level != current:
            return invalid("Can't downgrade the version of this feature.")
        return None
    spec = FEATURES.get(feature)
    if spec is not None and level >= 1:
        have = proposed.get(METADATA_VERSION)
        if have is None or have < MIN_LEVEL:
            return invalid(
                f"{feature} could not be set to {level} because it depends on "
                f"metadata.version={MIN_LEVEL} ({NAME_OF[MIN_LEVEL]})"
            )
        for dep, need in (spec.levels.get(level, (0, {}))[1]).items():
            if proposed.get(dep) is None or proposed[dep] < need:
                return invalid(f"{feature} could not be set to {level} because it depends on {dep} level {need}")
    return None


def command_lines(change: Change, errors: dict[str, str | None], dry_run: bool) -> list[str]:
    """FeatureCommand.update's lines, one per feature in name order: "metadata.version was
    upgraded to 30." / "... can be upgraded to 30." / "Can not upgrade metadata.version to 30. <why>"
    ("Could not" when not a dry run)."""
    out = []
    for feature in sorted(errors):
        level = change.updates[feature]
        err = errors[feature]
        what = f"disable {feature}" if change.op == "disable" else f"{change.op} {feature} to {level}"
        if err is not None:
            out.append(f"{'Can not' if dry_run else 'Could not'} {what}. {err}")
        else:
            done = "disabled." if change.op == "disable" else f"{change.op}d to {level}."
            out.append(f"{feature}{' can be ' if dry_run else ' was '}{done}")
    return out


def failure_line(errors: dict[str, str | None]) -> str | None:
    """FeatureCommand's last line when something failed (it goes to stderr there)."""
    failed = sum(1 for e in errors.values() if e is not None)
    return f"{failed} out of {len(errors)} operation(s) failed." if failed else None


def ghost_notes(
    change: Change, found: list[dict], verdict: dict[str, str | None], voters: set[int], controllers: str | None
) -> list[str]:
    """A blocking controller that is no voter: a ghost registration (a controller removed from
    the voters stays registered, KAFKA-20395); `cluster clear-registration` plans its fix,
    through `controllers` (the addresses for its command line) when known."""
    from ..versions import version_name

    ids = {b["node"].id for b in found if b["node"].kind == "controller"}
    ids |= {i for kind, i in named_by_kafka(verdict) if kind == "controller"}
    level = change.updates.get(METADATA_VERSION)
    target = f" --metadata {version_name(level)}" if level is not None else ""
    via = (
        f"--bootstrap-controller {controllers}{target}"
        if controllers
        else f"{target} with --bootstrap-controller and the controllers' addresses (not known here)"
    )
    return [
        f"controller {i} is registered but not a voter (voters {', '.join(map(str, sorted(voters)))}): a ghost "
        f"registration (a removed controller stays registered); clear it: quorumctl cluster clear-registration {i} "
        f"{via.strip()} (docs/membership.md)"
        for i in sorted(ids - voters)
    ]
