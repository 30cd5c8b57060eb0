"""The few server.properties settings the offline storage commands need,
with Kafka's defaults and precedence (KafkaConfig)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError
from ..openfile import open_regular
from . import properties

DEFAULT_LOG_DIR = "/tmp/kafka-logs"


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
            for ep in _split(self.props.get(key, "")):
                lname, _, rest = ep.partition("://")
                if lname.strip() != name:
                    continue
                host, _, port = rest.rpartition(":")
                if host.startswith("[") and host.endswith("]"):
                    host = host[1:-1]
                try:
                    return (host or "localhost", int(port))
                except ValueError:
                    raise InputError(f"{self.path}: {key}: bad port in {ep!r}") from None
        raise InputError(f"{self.path}: No controller listeners found ({name} is not in "
                         "advertised.listeners or listeners)")


def _split(v: str) -> list[str]:
    return [x.strip() for x in v.split(",") if x.strip()]


def load(path: str) -> ServerConfig:
    with open_regular(path, "a configuration file") as f:
        raw = f.read(1 << 22)
    try:
        props = properties.loads(raw)
    except properties.PropertiesError as e:
        raise InputError(f"{path}: line {e.line}: {e}") from None
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

