"""Where a command reads: files (log dirs, configs: offline) or the cluster (live,
through the connection options). A command that can do either builds one `Source`
from its command line, and the source says what does not go together: both sides at
once, neither, an option that has no meaning on the side chosen. Each command keeps
its own words; the rules are here."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from ..wire.access import ClusterAccess


@dataclass
class Source:
    """`files`: what the command reads offline (log dirs, and for some commands -c
    configs); `access`: the connection options; `live`: whether the command line asks
    the cluster (a bootstrap address given, by default)."""

    files: list[str]
    access: "ClusterAccess"
    live: bool

    @classmethod
    def of(cls, files: Iterable[str] | None, access: "ClusterAccess", live: bool | None = None) -> "Source":
        return cls(list(files or []), access, access.given if live is None else live)

    def one(self, both: str | None = None, neither: str | None = None) -> "Source":
        """Refuse files and the cluster together (with `both`'s words) and, when `neither`
        is given, a command line with neither."""
        if both is not None and self.live and self.files:
            raise InputError(both)
        if neither is not None and not self.live and not self.files:
            raise InputError(neither)
        return self

    def refuse(self, options: Iterable[tuple[str, bool]], why: str) -> None:
        """Refuse the first of `options` (flag, given?) given: `why`, with {flag}, says why
        it has no meaning on the side chosen."""
        for flag, given in options:
            if given:
                raise InputError(why.format(flag=flag))
