"""`quorumctl shell`: kafka-metadata-shell over a log dir (or files), with time travel.

Kafka's verbs (ls, cd, pwd, cat, find, tree, history, help, man, exit) over
Kafka's paths (/image/topics/byName/NAME/0 ...) print Kafka's text, byte for
byte when not on a terminal; `at`, `where`, `changes`, `diff`, `follow` and
`cat -o json` are quorumctl's. The image is replayed once and moved in time
(image/timeline); the REPL (prompt_toolkit) is imported only when a person
types at a terminal."""

import sys
from typing import Annotated, Iterator, List, Optional

import typer

from ..errors import ExitStatus
from .options import printer

# -- the command line -----------------------------------------------------------------


def _split_sources(args: list[str], snapshot: str | None) -> tuple[list[str], list[str]]:
    """The sources (existing paths) and the command words after them."""
    import os

    if snapshot:
        return [snapshot], args
    sources: list[str] = []
    for i, a in enumerate(args):
        if os.path.exists(a) and not (sources and a.startswith("/") and i > 0 and _is_image_path(a)):
            sources.append(a)
        else:
            return sources, args[i:]
    return sources, []


def _is_image_path(a: str) -> bool:
    return a == "/" or a.startswith(("/image", "/local"))


def shell(
    ctx: typer.Context,
    args: Annotated[
        Optional[List[str]],
        typer.Argument(
            metavar="LOG_DIR_OR_FILES... [COMMAND...]",
            help="A log dir (or its __cluster_metadata-0, or .log/.checkpoint files), then optionally one "
            "command to run (as kafka-metadata-shell takes it), e.g. ls /image/topics/byName.",
        ),
    ] = None,
    snapshot: Annotated[
        Optional[str],
        typer.Option(
            "--snapshot",
            "-s",
            metavar="FILE",
            help="A snapshot, log segment or log dir to read, as kafka-metadata-shell's --snapshot; "
            "every word after the options is then the command.",
        ),
    ] = None,
    commands: Annotated[
        Optional[str],
        typer.Option(
            "--command",
            "-c",
            metavar="COMMANDS",
            help='Commands to run, separated by ";" (e.g. "cd /image/topics; ls").',
        ),
    ] = None,
    at: Annotated[
        Optional[str],
        typer.Option("--at", metavar="OFFSET|TIME", help="Start at this offset or time instead of the end."),
    ] = None,
):
    """Browse the metadata image as kafka-metadata-shell does, at any point of the log.

    Kafka's commands (ls, cd, pwd, cat, find, tree, history, help, man, exit) over Kafka's paths
    (/image/topics/byName/NAME/0, /image/cluster/brokers/1, /image/features/metadataVersion ...),
    with Kafka's output; and quorumctl's: at OFFSET|TIME|-15m|end, where, changes PATH, diff A [B],
    follow, cat -o json PATH. With a command after the source, or -c, or commands on standard input,
    it runs them and exits (2 if one named nothing or was misused).

    Example: quorumctl shell /var/lib/kafka/meta

    Example: quorumctl shell --snapshot 00000000000000001234-0000000005.checkpoint ls /image/topics/byName
    """
    from ..errors import InputError
    from ..image.timeline import Timeline, parse_at
    from .shell_session import Session, Stop

    sources, words = _split_sources(list(args or []), snapshot)
    # options after the source (click stops parsing options at the first argument)
    while len(words) >= 2 and words[0] in ("-c", "--command", "--at"):
        if words[0] == "--at":
            at = words[1]
        else:
            commands = words[1]
        words = words[2:]
    if not sources:
        if args:
            raise InputError(f"{args[0]}: no such file or directory (give a log dir, snapshot or log files to read)")
        raise InputError("give a log dir, snapshot or log files to read (or --snapshot FILE)")
    if words and commands is not None:
        raise InputError("give a command after the source or -c, not both")
    pr = printer(ctx)
    tl = Timeline(sources)
    tl.load()
    if at is not None:
        from ..image.replay import extent

        tl.goto(parse_at(at, end_ms=extent(tl.src).get("lastTimestamp")))
    if tl.end_reason:
        pr.warning(f"the log ends early: {tl.end_reason}; replay stopped at offset {tl.image.offset}")
    interactive = not words and commands is None and sys.stdin.isatty() and pr.stdout_isatty
    if interactive:
        from .shell_repl import repl

        repl(pr, tl)
        raise typer.Exit(ExitStatus.OK)
    out = pr.stdout
    session = Session(tl, out.write, err=pr.stderr.write)
    try:
        if words:
            session.run_words(words)
        elif commands is not None:
            for part in _split_commands(commands):
                session.run_line(part)
        else:
            for line in sys.stdin:
                session.run_line(line.rstrip("\n"))
    except Stop:
        pass
    out.flush()
    if session.failed:
        raise typer.Exit(ExitStatus.USAGE)
    if tl.end_reason:
        raise typer.Exit(ExitStatus.PROBLEMS)


def _split_commands(text: str) -> Iterator[str]:
    """-c's commands: split at each `;` outside quotes."""
    buf: list[str] = []
    quote = None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == ";":
            yield "".join(buf)
            buf = []
            continue
        buf.append(ch)
    yield "".join(buf)


def register(app: typer.Typer) -> None:
    app.command(
        "shell",
        context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
    )(shell)
