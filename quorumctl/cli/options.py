"""Every option that more than one command takes, declared once: one name, one
help text. A command annotates its parameter with the alias and gives its own
default: `output: OutputOpt = None`, `timeout: Deadline = 5.0`.

Also declared once: the bounds of numeric options (`positive`, `positive_seconds`,
`non_negative`: callbacks, so a bad value is refused as it is parsed), the parsing
of node-id lists (`parse_node_ids`) and the way a command group is built (`group`).

Metavars also choose what the shell completions offer (tools/generate.py):
FILE completes files, DIR directories, HOST:PORT,... nothing.

The cli modules do without `from __future__ import annotations`: Typer reads each
parameter's annotation, and as strings they would be compiled again each time the
command tree is built (20 ms more at every start).
"""

from enum import Enum
from typing import Annotated, List, Optional

import typer

from ..errors import InputError
from ..render.output import Output, PlainOutput, Printer

ADDRS = "HOST:PORT,..."


def group(help: str) -> typer.Typer:
    """A command group: -h as well as --help, and its help when given no command."""
    return typer.Typer(help=help, no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]})


def printer(ctx: typer.Context) -> Printer:
    """The printer cli/main made for this run (click's context object), which every
    write of the command goes through; one on the process's streams when the app runs
    without main (Typer's test runner)."""
    return ctx.ensure_object(Printer)


def _bound(least: float, inclusive: bool, rule: str):
    """An option's callback that refuses a number (seconds, a count) below `least`
    (or equal to it unless `inclusive`): `--timeout must be positive, not 0`. It runs
    while the command line is parsed: a bad value is one line, exit 2, before any work."""

    def check(param: typer.CallbackParam, value):
        if value is not None and (value < least or (value == least and not inclusive)):
            shown = f"{value:g}" if isinstance(value, float) else value
            raise InputError(f"{param.opts[0]} {rule}, not {shown}")
        return value

    return check


positive = _bound(0, False, "must be positive")
positive_seconds = _bound(0, False, "must be a positive number of seconds")  # --watch's wording
non_negative = _bound(0, True, "must not be negative")


def parse_node_ids(values, option: str) -> list[int]:
    """`--can-restart 2 --can-restart 3,4` (or `--lost-voters 2,3`) -> [2, 3, 4]: each
    id once, in the order given; `values` is a string or a list of them."""
    ids: list[int] = []
    for v in [values] if isinstance(values, str) else values or []:
        for part in str(v).split(","):
            part = part.strip()
            try:
                i = int(part)
            except ValueError:
                raise InputError(f"invalid {option} {part!r}: expected a node id (an integer)") from None
            if i < 0:
                raise InputError(f"invalid {option} {part!r}: a node id is not negative")
            if i not in ids:
                ids.append(i)
    return ids


class KafkaRelease(str, Enum):
    """Whose tool text to print where Kafka 4.1's, 4.3's and the 4.4 branch's differ (4.3, the
    newest release, by default)."""

    v43 = "4.3"
    v41 = "4.1"
    v44 = "4.4"

    @property
    def catalogue(self) -> str:
        """Whose catalogue (metadata.versions, feature levels) and storage layout: the 4.4
        branch's for 4.4, else 4.3's (4.1's tools differ only where Kafka 4.3 fixed them)."""
        return "4.4" if self is KafkaRelease.v44 else "4.3"


KafkaVersion = Annotated[
    KafkaRelease,
    typer.Option(
        "--kafka-version",
        metavar="4.3|4.1|4.4",
        help="Where Kafka 4.1's, 4.3's and 4.4's tools print differently, print as this release's does.",
    ),
]

BootstrapServer = Annotated[
    Optional[str],
    typer.Option(
        "--bootstrap-server",
        metavar=ADDRS,
        help="Comma-separated host:port list of brokers (a broker forwards to the active controller).",
    ),
]
BootstrapController = Annotated[
    Optional[str],
    typer.Option(
        "--bootstrap-controller",
        metavar=ADDRS,
        help="Comma-separated host:port list of controllers (DescribeCluster names the active one; asked directly).",
    ),
]
CommandConfig = Annotated[
    Optional[str],
    typer.Option(
        "--command-config",
        metavar="FILE",
        help="Kafka client properties file: security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.*, "
        "ssl.keystore.*, request.timeout.ms, client.id ...",
    ),
]
ControllerCommandConfig = Annotated[
    Optional[str],
    typer.Option(
        "--controller-command-config",
        metavar="FILE",
        help="Kafka client properties for the controllers' listener when it is secured otherwise than the "
        "--bootstrap-server listener (default: --command-config).",
    ),
]
# kafka-cluster's short forms (-b, -C, -c): the same options, for its command lines as written
BootstrapServerB = Annotated[
    Optional[str],
    typer.Option(
        "--bootstrap-server",
        "-b",
        metavar=ADDRS,
        help="Comma-separated host:port list of brokers (a broker forwards to the active controller).",
    ),
]
BootstrapControllerC = Annotated[
    Optional[str],
    typer.Option(
        "--bootstrap-controller",
        "-C",
        metavar=ADDRS,
        help="Comma-separated host:port list of controllers (DescribeCluster names the active one; asked directly).",
    ),
]
CommandConfigC = Annotated[
    Optional[str],
    typer.Option(
        "--command-config",
        "-c",
        metavar="FILE",
        help="Kafka client properties file: security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.*, "
        "ssl.keystore.*, request.timeout.ms, client.id ...",
    ),
]
# Two kinds of --timeout: a request budget (Kafka's tools' meaning), and a deadline
# for commands that probe every node in parallel and must answer whatever they do.
Timeout = Annotated[
    Optional[float],
    typer.Option(
        "--timeout",
        callback=positive,
        metavar="SECONDS",
        help="Give up after this many seconds in total (default: default.api.timeout.ms or 15).",
    ),
]
Deadline = Annotated[
    float,
    typer.Option(
        "--timeout",
        callback=positive,
        metavar="SECONDS",
        help="Answer within this many seconds, whatever the nodes do (a node that hangs never blocks longer).",
    ),
]
FetchTimeoutMs = Annotated[
    Optional[int],
    typer.Option(
        "--fetch-timeout-ms",
        callback=positive,
        help="Caught-up threshold (default: the config's controller.quorum.fetch.timeout.ms, else 2000).",
    ),
]
FlappingEpochs = Annotated[
    int,
    typer.Option(
        "--flapping-epochs",
        callback=positive,
        metavar="N",
        help="This many leader epoch changes within a minute is 'flapping' (with --watch, and for serve).",
    ),
]
Grace = Annotated[
    float,
    typer.Option(
        "--grace",
        callback=non_negative,
        metavar="SECONDS",
        help="Liveness: how long a node may be attached to nothing before a restart is called for.",
    ),
]
SampleInterval = Annotated[
    float,
    typer.Option(
        "--interval",
        callback=positive,
        metavar="SECONDS",
        help="Sample the quorum every SECONDS; a sample never takes longer.",
    ),
]
SampleTimeout = Annotated[
    float,
    typer.Option(
        "--timeout", callback=positive, metavar="SECONDS", help="A sample's deadline (never more than --interval)."
    ),
]
GateTimeout = Annotated[
    float,
    typer.Option(
        "--timeout",
        callback=positive,
        metavar="SECONDS",
        help="Give up (exit 1, saying what still blocks) after this many seconds.",
    ),
]
Watch = Annotated[
    Optional[float],
    typer.Option(
        "--watch",
        callback=positive_seconds,
        metavar="SECONDS",
        help="Refresh every SECONDS until interrupted (Ctrl-C). describe status/replication exit 3 if the last refresh "
        "failed, else 0; describe health exits with the last sample's status.",
    ),
]
OutputOpt = Annotated[
    Optional[Output],
    typer.Option(
        "--output",
        "-o",
        help="text (Kafka's format where Kafka has one; the default when piped), table (the default on a terminal) "
        "or json.",
    ),
]
PlainOutputOpt = Annotated[Optional[PlainOutput], typer.Option("--output", "-o", help="text (the default) or json.")]


def _not_with(other: str):
    """A callback that refuses `--apply --dry-run` (either order) as the command line is
    parsed: one line, exit 2, in every command that takes both. click handles the options
    given in their command-line order, so the second of the two sees the first in ctx.params."""

    def check(ctx: typer.Context, value: bool):
        given = [ctx.params.get(p.name or "") for p in ctx.command.params if other in p.opts]
        if value and any(given):
            raise InputError("give --apply or --dry-run, not both")
        return value

    return check


Apply = Annotated[
    bool,
    typer.Option(
        "--apply",
        callback=_not_with("--dry-run"),
        help="Do it (the default is a dry run that prints the plan and changes nothing).",
    ),
]
BackupDir = Annotated[
    Optional[str],
    typer.Option(
        "--backup-dir",
        metavar="DIR",
        help="Where replaced files are kept (default: <log dir>.quorumctl-backup beside the log dir, on its file "
        "system).",
    ),
]
ServerConfig = Annotated[
    Optional[str],
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="A node's server.properties (log.dirs / metadata.log.dir, node.id, the quorum settings).",
    ),
]
ServerConfigs = Annotated[
    List[str],
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="A node's server.properties (log.dirs / metadata.log.dir, node.id, the quorum settings). Repeatable.",
    ),
]
MetadataTarget = Annotated[
    Optional[str],
    typer.Option(
        "--metadata", metavar="VERSION", help="The metadata.version to go to, by name (4.3-IV0, or a release: 4.3)."
    ),
]
# Every command that has --apply takes --dry-run too (its default, said out loud: the same
# output, nothing changed); add-controller and remove-controller take it as Kafka's do.
DryRun = Annotated[
    bool,
    typer.Option("--dry-run", callback=_not_with("--apply"), help="Print what would be done, but do not do it."),
]
ReleaseVersion = Annotated[
    Optional[str],
    typer.Option(
        "--release-version",
        "-r",
        help="A metadata.version such as 4.3-IV0, or a release such as 3.9 (bootstrap: default 4.3-IV0, Kafka 4.3's; "
        "4.1-IV1 gives Kafka 4.1's defaults; features: that level with every feature's default at it).",
    ),
]
FeatureLevels = Annotated[
    List[str],
    typer.Option("--feature", "-f", metavar="NAME=LEVEL", help="feature=level (repeatable), e.g. group.version=1."),
]
# the point of the metadata log a command reads the image at (image, topics describe)
AtOffset = Annotated[
    Optional[int],
    typer.Option("--at-offset", metavar="N", min=0, help="The metadata image after the record at offset N."),
]
AtTime = Annotated[
    Optional[str],
    typer.Option(
        "--at-time",
        metavar="TIME",
        help="The metadata image after the last record at or before TIME (ISO-8601 or epoch ms).",
    ),
]
