"""The few server.properties settings the offline storage commands need,
with Kafka's defaults and precedence (KafkaConfig)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import InputError, at_line
from ..openfile import open_regular
from . import properties

DEFAULT_LOG_DIR = "/tmp/kafka-logs"
_LISTENER = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass
class ServerConfig:
    path: str
    props: dict[str, str]
    node_id: int | None = None
    process_roles: list[str] = field(default_factory=list)
    log_dirs: list[str] = field(default_factory=list)
    metadata_log_dir: str = ""
    controller_listener_names: list[str] = field(default_factory=list)
    quorum_voters: str = ""
    quorum_bootstrap_servers: str = ""

    @property
    def is_controller(self) -> bool:
        return "controller" in self.process_roles

    @property
    def kraft(self) -> bool:
        return bool(self.process_roles)

    def all_dirs(self) -> list[str]:
        """configToLogDirectories: log dirs plus the metadata dir, sorted, unique."""
        return sorted(set(self.log_dirs) | {self.metadata_log_dir})

    def advertised_controller_endpoint(self) -> tuple[str, int]:
        """(host, port) of the first controller listener, advertised.listeners
        first then listeners (KafkaConfig.effectiveAdvertisedControllerListeners);
        an empty host becomes "localhost", as StorageTool does for --standalone."""
        if not self.controller_listener_names:
            raise InputError(f"{self.path}: controller.listener.names is not set")
        name = self.controller_listener_names[0]
        for key in ("advertised.listeners", "listeners"):
            found = parse_listeners(self.props.get(key, ""), key, self.path).get(name.upper())
            if found is not None:
                return (found[0] or "localhost", found[1])
        raise InputError(
            f"{self.path}: No controller listeners found ({name} is not in advertised.listeners or listeners)"
        )


def _split(v: str) -> list[str]:
    return [x.strip() for x in v.split(",") if x.strip()]


def load(path: str) -> ServerConfig:
    with open_regular(path, "a configuration file") as f:
        raw = f.read(1 << 22)
    try:
        props = properties.loads(raw)
    except properties.PropertiesError as e:
        raise InputError(at_line(path, e.line, str(e))) from None
    props = {k: v.strip() for k, v in props.items()}
    cfg = ServerConfig(path=path, props=props)
    nid = props.get("node.id", props.get("broker.id"))
    if nid is not None and nid != "":
        try:
            cfg.node_id = int(nid)
        except ValueError:
            raise InputError(f"{path}: node.id must be an integer, found {nid!r}") from None
    cfg.process_roles = _split(props.get("process.roles", ""))
    dirs = props.get("log.dirs") or props.get("log.dir") or DEFAULT_LOG_DIR
    cfg.log_dirs = _split(dirs)
    cfg.metadata_log_dir = props.get("metadata.log.dir") or cfg.log_dirs[0]
    cfg.controller_listener_names = _split(props.get("controller.listener.names", ""))
    cfg.quorum_voters = props.get("controller.quorum.voters", "")
    cfg.quorum_bootstrap_servers = props.get("controller.quorum.bootstrap.servers", "")
    return cfg


# -- a controller's identity, for add-controller ------------------------------------


def parse_listeners(text: str, key: str, source: str) -> dict[str, tuple[str | None, int]]:
    """NAME -> (host or None, port) of a listeners / advertised.listeners value
    (`NAME://host:port`, IPv6 hosts in brackets; names upper-cased, as Kafka does)."""
    out: dict[str, tuple[str | None, int]] = {}
    for entry in re.split(r"\s*,\s*", text.strip()):
        if not entry:
            continue
        m = _LISTENER.match(entry)
        if not m:
            raise InputError(f"{source}: {key}: cannot parse {entry!r} as NAME://host:port")
        port = int(m.group(3))
        if not 0 <= port <= 65535:  # a TCP port; written as an unsigned 16-bit field (VotersRecord)
            raise InputError(f"{source}: {key}: port {port} of {entry!r} is not a TCP port (0-65535)")
        out[m.group(1).upper()] = (m.group(2) or None, port)
    return out


def controller_from_properties(props: dict[str, str], source: str):
    """(node id, directory id, [(name, host, port)], meta.properties path and
    its cluster.id or None) of a controller's config."""
    from ..errors import InputError
    from .properties import load_properties
    from ..schema.codec import EncodeError, uuid_bytes
    import os

    if "node.id" not in props:
        raise InputError(f"{source}: node.id not found: is this a controller's configuration file?")
    try:
        node_id = int(props["node.id"].strip())
    except ValueError:
        raise InputError(f"{source}: node.id {props['node.id']!r} is not an integer") from None
    if node_id < 0:
        raise InputError(f"{source}: node.id is negative: is this a controller's configuration file?")
    if "controller" not in props.get("process.roles", ""):
        raise InputError(
            f"{source}: process.roles does not contain 'controller': is this a controller's configuration file?"
        )
    if "metadata.log.dir" in props:
        mdir = props["metadata.log.dir"]
    elif "log.dirs" in props and props["log.dirs"].strip():
        mdir = props["log.dirs"].strip().split(",")[0]
    else:
        raise InputError(
            f"{source}: neither metadata.log.dir nor log.dirs is set: is this a controller's configuration file?"
        )
    meta_path = os.path.join(mdir, "meta.properties")
    if not os.path.isfile(meta_path):
        raise InputError(f"Unable to read meta.properties from {mdir} (is the controller formatted?)")
    meta = load_properties(meta_path, "meta.properties")
    dir_id = meta.get("directory.id", "").strip()
    if not dir_id:
        raise InputError(f"No directory id found in {mdir}/meta.properties")
    try:
        uuid_bytes(dir_id)
    except EncodeError:
        raise InputError(f"{meta_path}: directory.id {dir_id!r} is not a valid id") from None
    listeners = parse_listeners(props.get("listeners", ""), "listeners", source)
    listeners.update(parse_listeners(props.get("advertised.listeners", ""), "advertised.listeners", source))
    if "controller.listener.names" not in props:
        raise InputError(
            f"{source}: controller.listener.names was not found: is this a controller's configuration file?"
        )
    endpoints = []
    for name in props["controller.listener.names"].split(","):
        name = name.strip().upper()
        if name not in listeners:
            raise InputError(
                f"{source}: cannot find listener {name} of controller.listener.names "
                "in listeners or advertised.listeners"
            )
        host, port = listeners[name]
        ep = (name, host or "localhost", port)
        if ep not in endpoints:
            endpoints.append(ep)
    return node_id, dir_id, endpoints, meta_path, (meta.get("cluster.id", "").strip() or None)
