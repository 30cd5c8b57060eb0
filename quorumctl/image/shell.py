"""The image as kafka-metadata-shell lays it out: `/image/topics/byName/NAME/0`,
`/image/cluster/brokers/1`, `/image/features/metadataVersion` ... with each leaf's
text as the shell prints it (Kafka's toString of PartitionRegistration,
BrokerRegistration, StandardAcl ...), and the shell's path rules (its glob per
path component, `.` and `..`). Facts from Kafka 4.3's `org.apache.kafka.image.node`
and `org.apache.kafka.shell` packages; nodes are built on demand from one Image,
so a 256k-partition image costs nothing until a path is visited.

SCRAM credentials print as Kafka's redacted form: the image never keeps salts or
keys (see model). Client quota entities and their values are named as the shell
names them (`clientId(app)_user(bob)`, Java's Double.toString).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from .model import (
    ADDING,
    DIRS,
    ELR,
    ISR,
    LAST_ELR,
    LEADER,
    LEADER_EPOCH,
    PARTITION_EPOCH,
    RECOVERY,
    RECOVERY_STATES,
    REMOVING,
    REPLICAS,
    SCRAM_MECHANISMS,
    Image,
    partition_json,
)

# ConfigResource.Type: id -> name, in the enum's order (resourceFromName tries them in it)
CONFIG_TYPE_NAMES = {32: "GROUP", 16: "CLIENT_METRICS", 8: "BROKER_LOGGER", 4: "BROKER", 2: "TOPIC", 0: "UNKNOWN"}
SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
# the config names Kafka 4.3's image keeps per resource type (DefaultSupportedConfigChecker:
# LogConfig's names, ClientMetricsConfigs', GroupConfig's; every broker config; nothing of
# another type): a record naming another is skipped on replay, so the shell never shows it
_GROUP_CONFIGS = frozenset(
    f"{kind}.{name}"
    for kind, names in (
        ("consumer", ("session.timeout.ms", "heartbeat.interval.ms", "assignment.interval.ms")),
        (
            "share",
            (
                "session.timeout.ms",
                "heartbeat.interval.ms",
                "record.lock.duration.ms",
                "delivery.count.limit",
                "partition.max.record.locks",
                "auto.offset.reset",
                "isolation.level",
                "renew.acknowledge.enable",
                "assignment.interval.ms",
            ),
        ),
        (
            "streams",
            (
                "session.timeout.ms",
                "heartbeat.interval.ms",
                "num.standby.replicas",
                "initial.rebalance.delay.ms",
                "assignment.interval.ms",
            ),
        ),
    )
    for name in names
)


def supported_config(typ: int, name: str) -> bool:
    if typ == 4:
        return True
    if typ == 2:
        from ..config.topic import NAMES

        return name in NAMES or name == "internal.segment.bytes"
    if typ == 16:
        return name in ("metrics", "interval.ms", "match")
    if typ == 32:
        return name in _GROUP_CONFIGS
    return False


QUOTA_TYPES = (("client-id", "clientId"), ("ip", "ip"), ("user", "user"))  # the shell's order


def java_sort_key(s: str) -> bytes:
    """String.compareTo's order (UTF-16 code units), which every listing of the shell uses."""
    return s.encode("utf-16-be", "surrogatepass")


def java_sorted(names: Iterable[str]) -> list[str]:
    return sorted(names, key=java_sort_key)


# -- leaf texts (Kafka's toString) -------------------------------------------------------


def _ints(xs) -> str:
    return "[" + ", ".join(map(str, xs)) + "]"


def partition_text(p: tuple) -> str:
    """PartitionRegistration.toString."""
    rec = RECOVERY_STATES.get(p[RECOVERY], p[RECOVERY])
    return (
        f"PartitionRegistration(replicas={_ints(p[REPLICAS])}, directories=[{', '.join(p[DIRS])}], "
        f"isr={_ints(p[ISR])}, removingReplicas={_ints(p[REMOVING])}, addingReplicas={_ints(p[ADDING])}, "
        f"elr={_ints(p[ELR])}, lastKnownElr={_ints(p[LAST_ELR])}, leader={p[LEADER]}, "
        f"leaderRecoveryState={rec}, leaderEpoch={p[LEADER_EPOCH]}, partitionEpoch={p[PARTITION_EPOCH]})"
    )


def _uuid_key(u: str):
    """Uuid.compareTo: the two halves as signed longs."""
    from ..ids import longs

    try:
        return longs(u)
    except ValueError:
        return (0, 0)


def version_range(r) -> str:
    """VersionRange.toString."""
    lo, hi = r
    if lo == hi:
        return str(lo)
    if hi == 32767:
        return f"{lo}+"
    return f"{lo}-{hi}"


def _endpoints(listeners: list[str], protocols: dict[str, int]) -> str:
    eps = []
    for text in listeners:
        name, _, rest = text.partition("://")
        host, _, port = rest.rpartition(":")
        eps.append((name, host, port))
    eps.sort(key=lambda e: java_sort_key(e[0]))
    return ", ".join(
        f"Endpoint(listenerName='{n}', securityProtocol={SECURITY_PROTOCOLS.get(protocols.get(n, -1), 'UNKNOWN')}, "
        f"host='{h}', port={p})"
        for n, h, p in eps
    )


def _features(fs: dict) -> str:
    return ", ".join(f"{k}: {version_range(fs[k])}" for k in java_sorted(fs))


def broker_text(bid: int, b: dict, protocols: dict[str, int]) -> str:
    """BrokerRegistration.toString (Kafka 4.3)."""
    rack = "Optional.empty" if b.get("rack") is None else f"Optional[{b['rack']}]"
    dirs = sorted(b.get("directories") or (), key=_uuid_key)
    cordoned = b.get("cordonedDirectories")
    return (
        f"BrokerRegistration(id={bid}, epoch={b['epoch']}, incarnationId={b['incarnationId']}, "
        f"listeners=[{_endpoints(b['listeners'], protocols)}], supportedFeatures={{{_features(b['supportedFeatures'])}}}, "
        f"rack={rack}, fenced={_bool(b['fenced'])}, inControlledShutdown={_bool(b['inControlledShutdown'])}, "
        f"isMigratingZkBroker={_bool(b['isMigratingZkBroker'])}, directories=[{', '.join(dirs)}], "
        f"cordonedDirectories={'null' if cordoned is None else '[' + ', '.join(cordoned) + ']'})"
    )


def controller_text(cid: int, c: dict, protocols: dict[str, int]) -> str:
    """ControllerRegistration.toString."""
    return (
        f"ControllerRegistration(id={cid}, incarnationId={c['incarnationId']}, "
        f"zkMigrationReady={_bool(c['zkMigrationReady'])}, listeners=[{_endpoints(c['listeners'], protocols)}], "
        f"supportedFeatures={{{_features(c['supportedFeatures'])}}})"
    )


def _bool(b) -> str:
    return "true" if b else "false"


def acl_text(a: dict) -> str:
    """StandardAcl (a Java record) toString."""
    return (
        f"StandardAcl[resourceType={a['resourceType']}, resourceName={a['resourceName']}, "
        f"patternType={a['patternType']}, principal={a['principal']}, host={a['host']}, "
        f"operation={a['operation']}, permissionType={a['permissionType']}]"
    )


def token_text(tid: str, t: dict) -> str:
    """DelegationTokenDataNode.print, parentheses and all."""
    return (
        f"DelegationTokenDatatokenId={tid}(owner={t['owner']}(tokenRequester={t['requester']}"
        f"(renewers={' '.join(t['renewers'])}, issueTimestamp={t['issueTimestamp']}, "
        f"maxTimestamp={t['maxTimestamp']}), expiryTimestamp={t['expirationTimestamp']}"
    )


def scram_text(v: dict) -> str:
    """ScramCredentialDataNode.print as Kafka's redaction prints it: the image keeps no
    salt or key (model), and quorumctl prints no secret."""
    return "ScramCredentialData(salt=[redacted], storedKey=[redacted], serverKey=[redacted], iterations=[redacted])"


def java_double(x: float) -> str:
    """Double.toString: plain between 10^-3 and 10^7, else d.dddE±n; shortest digits."""
    x = float(x)
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    sign = "-" if x < 0 else ""
    digits, exp = _shortest(abs(x))  # value = 0.d1d2... x 10^exp
    if 1e-3 <= abs(x) < 1e7:
        point = exp
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        whole = digits[:point].ljust(point, "0")
        frac = digits[point:] or "0"
        return f"{sign}{whole}.{frac}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exp - 1}"


def _shortest(x: float) -> tuple[str, int]:
    """The shortest digits that read back as x (repr's), and exp with x = 0.DIGITS x 10^exp."""
    from decimal import Decimal

    t = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, t.digits))
    exp = len(digits) + int(t.exponent)
    stripped = digits.lstrip("0")
    exp -= len(digits) - len(stripped)
    return stripped.rstrip("0") or "0", exp


def quota_entity_name(entity: str) -> str:
    """quorumctl's entity ("client-id=app,user=bob") as ClientQuotasImageNode names it
    ("clientId(app)_user(bob)"); a default entity name reads <default>."""
    parts = dict(kv.split("=", 1) for kv in entity.split(",") if "=" in kv)
    out = []
    for typ, label in QUOTA_TYPES:
        if typ in parts:
            v = parts[typ].replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            out.append(f"{label}({v})")
    return "_".join(out)


def kafka_time(ms: int) -> str:
    """DateTimeFormatter.ISO_ZONED_DATE_TIME of an epoch-ms instant in zone UTC:
    seconds always, the fraction without trailing zeros, then Z[UTC]."""
    from datetime import datetime, timedelta, timezone

    dt = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)
    frac = f".{ms % 1000:03d}".rstrip("0") if ms % 1000 else ""
    if frac == ".":
        frac = ""
    year = dt.year
    head = f"{year:04d}" if 0 <= year <= 9999 else f"{year:+05d}"
    return f"{head}-{dt:%m-%dT%H:%M:%S}{frac}Z[UTC]"


# -- nodes ------------------------------------------------------------------------------


@dataclass
class Node:
    """A directory (children by name, built on demand) or a leaf (its text)."""

    names: Callable[[], Iterable[str]] | None = None
    get: Callable[[str], "Node | None"] | None = None
    text: str | None = None
    data: object = None  # a leaf's value as JSON (cat -o json), when it has more than its text

    @property
    def is_dir(self) -> bool:
        return self.names is not None

    def child(self, name: str) -> "Node | None":
        return None if self.get is None else self.get(name)

    def child_names(self) -> list[str]:
        return [] if self.names is None else list(self.names())


def leaf(text: str, data: object = None) -> Node:
    return Node(text=text, data=data)


def fixed(children: dict[str, Callable[[], Node | None]]) -> Node:
    return Node(names=lambda: children.keys(), get=lambda n: children[n]() if n in children else None)


def mapping(keys: Callable[[], Iterable[str]], get: Callable[[str], Node | None]) -> Node:
    return Node(names=keys, get=get)


@dataclass
class Provenance:
    offset: int
    epoch: int
    timestamp: int

    def text(self) -> str:
        return f"offset {self.offset}, epoch {self.epoch}, time {kafka_time(self.timestamp)}"


def kafka_provenance(path: str) -> Provenance | None:
    """What kafka-metadata-shell's /image/provenance says after reading one file: it
    replays every batch as a log commit (SnapshotFileReader), so the last metadata
    batch's last offset, leader epoch and max timestamp, offsets as the file numbers
    them (a snapshot's from 0). None when the file holds no metadata batch."""
    from ..records.batch import Batch, BatchError, BatchReader

    last = None
    try:
        with BatchReader(path) as reader:
            for b in reader:
                if isinstance(b, Batch) and not b.is_control and b.record_count > 0:
                    last = b
    except (OSError, BatchError):
        pass
    if last is None:
        return None
    return Provenance(last.base_offset + last.record_count - 1, last.leader_epoch, last.max_timestamp)


def root(img: Image, provenance: Provenance | None = None, version: str = "", commit: str = "unknown") -> Node:
    """The shell's `/`: `local` (the shell's version) and `image`."""
    local = fixed({"version": lambda: leaf(version), "commitId": lambda: leaf(commit)})
    return fixed({"local": lambda: local, "image": lambda: image_node(img, provenance)})


def image_node(img: Image, provenance: Provenance | None = None) -> Node:
    prov = provenance or Provenance(img.offset, img.epoch, img.timestamp)
    return fixed(
        {
            "provenance": lambda: leaf(prov.text()),
            "features": lambda: _features_node(img),
            "cluster": lambda: fixed(
                {
                    "brokers": lambda: _registrations(img, img.brokers, "broker", broker_text),
                    "controllers": lambda: _registrations(img, img.controllers, "controller", controller_text),
                }
            ),
            "topics": lambda: fixed({"byName": lambda: _by_name(img), "byId": lambda: _by_id(img)}),
            "configs": lambda: _configs(img),
            "clientQuotas": lambda: _quotas(img),
            "producerIds": lambda: fixed(
                {"nextProducerId": lambda: leaf(str((img.producer_ids or {}).get("nextProducerId", -1)))}
            ),
            "acls": lambda: fixed(
                {
                    "byId": lambda: mapping(
                        lambda: img.acls.keys(),
                        lambda n: leaf(acl_text(img.acls[n]), img.acls[n]) if n in img.acls else None,
                    )
                }
            ),
            "scram": lambda: _scram(img),
            "delegationToken": lambda: mapping(
                lambda: img.tokens.keys(), lambda n: leaf(token_text(n, img.tokens[n])) if n in img.tokens else None
            ),
        }
    )


def _features_node(img: Image) -> Node:
    from ..versions import version_name

    finalized = {k: v for k, v in img.features.items() if k != "metadata.version"}

    def get(name: str) -> Node | None:
        if name == "metadataVersion":
            mv = img.metadata_version
            return leaf("Optional.empty" if mv is None else f"Optional[{version_name(mv)}]")
        if name.startswith("finalized_"):
            return leaf(str(finalized.get(name[len("finalized_") :], 0)))
        return None

    return mapping(lambda: ["metadataVersion", *(f"finalized_{k}" for k in finalized)], get)


def _registrations(img: Image, regs: dict, kind: str, text) -> Node:
    def get(name: str) -> Node | None:
        try:
            i = int(name)
        except ValueError:
            return None
        r = regs.get(i)
        return None if r is None else leaf(text(i, r, img.protocols.get((kind, i), {})), {"id": i, **r})

    return mapping(lambda: [str(i) for i in regs], get)


def _topic(img: Image, t) -> Node:
    def get(name: str) -> Node | None:
        if name == "name":
            return leaf(t.name)
        if name == "id":
            return leaf(t.id)
        if not re.fullmatch(r"[+-]?\d+", name):
            return None
        p = t.partitions.get(int(name))
        return None if p is None else leaf(partition_text(p), partition_json(p))

    return mapping(lambda: ["name", "id", *(str(p) for p in t.partitions)], get)


def _by_name(img: Image) -> Node:
    def get(name: str) -> Node | None:
        t = img.topic(name)
        return None if t is None else _topic(img, t)

    return mapping(lambda: img.topic_ids.keys(), get)


def _by_id(img: Image) -> Node:
    def get(name: str) -> Node | None:
        t = img.topics.get(name)
        return None if t is None else _topic(img, t)

    return mapping(lambda: img.topics.keys(), get)


def _config_name(typ: int, name: str) -> str:
    t = CONFIG_TYPE_NAMES.get(typ, "UNKNOWN")
    return t if name == "" else f"{t}:{name}"


def _configs(img: Image) -> Node:
    def resource(name: str):
        for tid, tname in CONFIG_TYPE_NAMES.items():  # ConfigurationsImageNode.resourceFromName
            if name.startswith(tname):
                key = name[len(tname) :]
                if key == "":
                    return tid, ""
                if key.startswith(":"):
                    return tid, key[1:]
                return None
        return None

    def kept(key) -> dict:
        kv = img.configs.get(key) or {}
        return {k: v for k, v in kv.items() if v is not None and supported_config(key[0], k)}

    def get(name: str) -> Node | None:
        r = resource(name)
        kv = None if r is None else kept(r)
        if not kv:
            return None
        return mapping(lambda: kv.keys(), lambda k: leaf(kv[k]) if k in kv else None)

    return mapping(lambda: [_config_name(t, n) for t, n in img.configs if kept((t, n))], get)


def _quotas(img: Image) -> Node:
    def names() -> list[str]:
        return [quota_entity_name(e) for e in img.quotas]

    def get(name: str) -> Node | None:
        for e, kv in img.quotas.items():
            if quota_entity_name(e) == name:
                return _quota(kv)
        return None

    return mapping(names, get)


def _quota(kv: dict) -> Node:
    return mapping(lambda: kv.keys(), lambda k: leaf(java_double(kv[k])) if k in kv else None)


def _scram(img: Image) -> Node:
    def mech(m: str) -> Node | None:
        if m not in SCRAM_MECHANISMS.values():
            return None
        users = {u: v for (mm, u), v in img.scram.items() if mm == m}
        return mapping(lambda: users.keys(), lambda u: leaf(scram_text(users[u])) if u in users else None)

    return mapping(lambda: list(SCRAM_MECHANISMS.values()), mech)


# -- paths (CommandUtils, GlobComponent, GlobVisitor) --------------------------------------


def split_path(path: str) -> list[str]:
    return [p for p in path.split("/") if p]


def strip_dots(parts: list[str]) -> list[str]:
    out: list[str] = []
    for p in parts:
        if p == "..":
            if out:
                out.pop()
        elif p != ".":
            out.append(p)
    return out


def absolute(cwd: str, path: str) -> list[str]:
    """The components of PATH from the working directory, `.` and `..` resolved."""
    full = path if path.startswith("/") else f"{cwd}/{path}"
    return strip_dots(split_path(full))


_RE_SPECIAL = set("$()+.[]^{|")
_GLOB_SPECIAL = set("*?\\{}")


def glob_regex(glob: str) -> str | None:
    """GlobComponent.toRegularExpression: None for a literal (matches itself only);
    raises ValueError for a malformed glob (the shell then treats it as a literal)."""
    out = ["^"]
    literal = True
    group = False
    i = 0
    while i < len(glob):
        c = glob[i]
        i += 1
        if c == "?":
            literal = False
            out.append(".")
        elif c == "*":
            literal = False
            out.append(".*")
        elif c == "\\":
            if i == len(glob):
                out.append("\\\\")
            else:
                nxt = glob[i]
                i += 1
                out.append(("\\" if nxt in _GLOB_SPECIAL or nxt in _RE_SPECIAL else "") + nxt)
        elif c == "{":
            if group:
                raise ValueError("Can't nest glob groups.")
            literal = False
            out.append("(?:(?:")
            group = True
        elif c == "," and group:
            literal = False
            out.append(")|(?:")
        elif c == "}" and group:
            literal = False
            out.append("))")
            group = False
        else:
            out.append(("\\" if c in _RE_SPECIAL else "") + c)
    if group:
        raise ValueError("Unterminated glob group.")
    if literal:
        return None
    out.append("$")
    return "".join(out)


def _matcher(component: str):
    try:
        rx = glob_regex(component)
        pattern = None if rx is None else re.compile(rx, re.DOTALL)
    except (ValueError, re.error):
        pattern = None
    if pattern is None:
        return None
    return pattern.match


def visit(root_node: Node, cwd: str, glob: str) -> list[tuple[list[str], Node]]:
    """GlobVisitor: every (path components, node) the glob names, in the shell's order;
    empty when it names nothing."""
    parts = absolute(cwd, glob)
    found: list[tuple[list[str], Node]] = []

    def walk(i: int, node: Node, path: list[str]) -> None:
        if i >= len(parts):
            found.append((path, node))
            return
        comp = parts[i]
        match = _matcher(comp)
        if not node.is_dir:
            return
        if match is None:
            child = node.child(comp)
            if child is not None:
                walk(i + 1, child, [*path, comp])
            return
        for name in java_sorted(node.child_names()):
            if match(name):
                child = node.child(name)
                if child is not None:
                    walk(i + 1, child, [*path, name])

    walk(0, root_node, [])
    return found


def closest(root_node: Node, cwd: str, path: str, n: int = 5) -> tuple[str, list[str]]:
    """For a path that names nothing: the deepest directory it reaches and the names
    there closest to the first component that is missing."""
    import difflib

    parts = absolute(cwd, path)
    node = root_node
    walked: list[str] = []
    for comp in parts:
        child = node.child(comp) if node.is_dir else None
        if child is None:
            names = node.child_names() if node.is_dir else []
            close = difflib.get_close_matches(comp, names, n=n, cutoff=0.5)
            if not close:
                low = comp.lower()
                close = java_sorted(x for x in names if low in x.lower() or x.lower().startswith(low[:3]))[:n]
            return "/" + "/".join(walked), close
        node = child
        walked.append(comp)
    return "/" + "/".join(walked), []


def complete(root_node: Node, cwd: str, prefix: str) -> list[tuple[str, bool]]:
    """CommandUtils.completePath: (candidate, is a directory) for a path being typed."""
    parts = absolute(cwd, prefix)
    n_dirs = len(parts) if prefix.endswith("/") or prefix == "" else len(parts) - 1
    node = root_node
    for comp in parts[: max(n_dirs, 0)]:
        child = node.child(comp) if node.is_dir else None
        if child is None or not child.is_dir:
            return []
        node = child
    last = parts[n_dirs] if 0 <= n_dirs < len(parts) else ""
    head = prefix[: prefix.rfind("/") + 1] if "/" in prefix else ""
    out = []
    for name in java_sorted(node.child_names()):
        if name.startswith(last):
            child = node.child(name)
            is_dir = child is not None and child.is_dir
            out.append((head + name + ("/" if is_dir else ""), is_dir))
    return out
