"""How to reach the cluster: Kafka's connection options, held in one object.

`--bootstrap-server`, `--bootstrap-controller`, `--command-config` (and
`--controller-command-config`) are read once from the command line into a
`ClusterAccess` by the CLI layer, and handed down whole: no function below the
commands takes them one by one. The client configuration is loaded here and only
here, when first asked for (so a bad file is reported where it was before: after
the command's own checks, before any connection), and kept for the command's run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config.client import ClientConfig
    from .client import QuorumClient


@dataclass
class _Loaded:
    """The client configurations once loaded; shared by the views of one ClusterAccess."""

    client: ClientConfig | None = None
    controller: ClientConfig | None = None


@dataclass
class ClusterAccess:
    """The connection options of one command line: the bootstrap addresses as given
    (`servers`: --bootstrap-server, `controllers`: --bootstrap-controller, each a
    comma-separated list, parsed where they are used so an address's error keeps its
    place) and the client properties files' paths."""

    servers: str | None = None
    controllers: str | None = None
    command_config: str | None = None
    controller_command_config: str | None = None
    _loaded: _Loaded = field(default_factory=_Loaded, repr=False, compare=False)

    @property
    def given(self) -> bool:
        """Whether a bootstrap address (of either kind) was given."""
        return bool(self.servers or self.controllers)

    def client_config(self) -> ClientConfig:
        """The parsed `--command-config` (defaults when none), its TLS material loaded
        at once: a bad truststore or keystore is reported before any connection."""
        if self._loaded.client is None:
            self._loaded.client = _load(self.command_config)
        return self._loaded.client

    def controller_client_config(self) -> ClientConfig | None:
        """The parsed `--controller-command-config`, or None when not given (the
        controllers are then reached with `client_config()`)."""
        if self.controller_command_config is None:
            return None
        if self._loaded.controller is None:
            self._loaded.controller = _load(self.controller_command_config)
        return self._loaded.controller

    def via(self, servers: str | None = None, controllers: str | None = None) -> ClusterAccess:
        """The same client configuration, reaching the cluster through other addresses
        (a controller a job found, or only one of the two kinds given)."""
        return ClusterAccess(servers, controllers, self.command_config, self.controller_command_config, self._loaded)

    def renewed(self) -> ClusterAccess:
        """The same options with the configuration read again when next asked for: each
        sample of a long-running loop (serve, --watch, wait) reads it afresh, so a
        renewed ticket or a rotated truststore is taken up as it was before."""
        return ClusterAccess(self.servers, self.controllers, self.command_config, self.controller_command_config)

    def connect(self, timeout: float | None) -> QuorumClient:
        """A QuorumClient through the bootstrap addresses given (exactly one kind)."""
        from ..config.addresses import parse_address_list
        from ..errors import InputError
        from .client import QuorumClient

        if self.servers and self.controllers:
            raise InputError("--bootstrap-server and --bootstrap-controller cannot be used together")
        if not self.servers and not self.controllers:
            raise InputError("one of --bootstrap-server or --bootstrap-controller is required")
        cfg = self.client_config()
        if self.servers:
            return QuorumClient(parse_address_list(self.servers, "--bootstrap-server"), "server", cfg, timeout)
        assert self.controllers  # one of the two is given (checked above)
        return QuorumClient(parse_address_list(self.controllers, "--bootstrap-controller"), "controller", cfg, timeout)

    def bootstrap_args(self) -> list[str]:
        """The bootstrap option as a command line: the controllers when given, else the
        brokers; none when neither is."""
        if self.controllers:
            return ["--bootstrap-controller", self.controllers]
        return ["--bootstrap-server", self.servers] if self.servers else []

    def config_args(self) -> list[str]:
        """--command-config as a command line, when given."""
        return ["--command-config", self.command_config] if self.command_config else []

    def args(self) -> list[str]:
        """The options as a command line, for the commands a plan or a bundle runs: the
        bootstrap option, then --command-config; none without a bootstrap address."""
        via = self.bootstrap_args()
        return via + self.config_args() if via else []


def _load(path: str | None) -> ClientConfig:
    """The one loader of a client properties file (defaults when None)."""
    from ..config.client import ClientConfig, config_from_properties
    from ..config.properties import load_properties

    if path is None:
        return ClientConfig()
    cfg = config_from_properties(load_properties(path, "command config"), path)
    if cfg.uses_tls:
        from .security.tls import context_for

        context_for(cfg)
    return cfg
