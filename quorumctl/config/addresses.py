"""host:port addresses as Kafka's settings and options write them: one address,
a comma-separated list (--bootstrap-server, controller.quorum.bootstrap.servers)
and controller.quorum.voters (`id@host:port,...`, IPv6 hosts in brackets)."""

from __future__ import annotations


class Address:
    __slots__ = ("host", "port")

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port

    def __str__(self):
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def __repr__(self):
        return f"Address({str(self)!r})"

    def __eq__(self, other):
        return isinstance(other, Address) and (self.host.lower(), self.port) == (other.host.lower(), other.port)

    def __hash__(self):
        return hash((self.host.lower(), self.port))


def parse_address(text: str, what: str = "address") -> Address:
    from ..errors import InputError

    t = text.strip()
    if t.startswith("["):
        host, sep, rest = t[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise InputError(f"invalid {what} {text!r}: expected [ipv6]:port")
        port_s = rest[1:]
    else:
        host, sep, port_s = t.rpartition(":")
        if not sep or not host:
            raise InputError(f"invalid {what} {text!r}: expected host:port")
        if ":" in host:
            raise InputError(f"invalid {what} {text!r}: write IPv6 addresses as [host]:port")
    try:
        port = int(port_s)
    except ValueError:
        raise InputError(f"invalid {what} {text!r}: port {port_s!r} is not a number") from None
    if not 0 < port < 65536:
        raise InputError(f"invalid {what} {text!r}: port {port} is out of range")
    return Address(host, port)


def parse_quorum_voters(text: str, source: str) -> dict[int, Address]:
    """controller.quorum.voters (`id@host:port,...`, IPv6 hosts in brackets) -> {id: Address}:
    the one reader of that setting (describe's health check, recover, doctor)."""
    from ..errors import InputError

    out: dict[int, Address] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        nid, sep, addr = part.partition("@")
        try:
            node_id = int(nid)
        except ValueError:
            node_id = None
        if not sep or node_id is None:
            raise InputError(f"{source}: controller.quorum.voters entry {part!r} is not id@host:port")
        out[node_id] = parse_address(addr, "controller.quorum.voters address")
    return out


def static_voter_ids(configs: list[str]) -> tuple[list[int] | None, str]:
    """The voter ids controller.quorum.voters names in these server.properties (a
    static quorum) and which files name them; (None, "") when none does."""
    from .server import load

    ids: set[int] = set()
    named = []
    for path in configs:
        cfg = load(path)
        if cfg.quorum_voters:
            ids |= set(parse_quorum_voters(cfg.quorum_voters, path))
            named.append(path)
    return (sorted(ids), "controller.quorum.voters in " + ", ".join(named)) if named else (None, "")


def parse_address_list(text: str, what: str) -> list[Address]:
    from ..errors import InputError

    out: list[Address] = []
    for part in text.split(","):
        if part.strip():
            a = parse_address(part, what)
            if a not in out:
                out.append(a)
    if not out:
        raise InputError(f"{what} is empty: expected host:port[,host:port...]")
    return out
