"""`quorumctl image`, `history`, `diff`: the cluster's metadata image at any
point of a log dir, the history of one entity, the changes between two points."""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from ..render.output import Output, Printer
from .options import AtOffset, AtTime, OutputOpt, printer


def _exit_on_log_end(pr: Printer, doc: dict, offset: int) -> None:
    """A log that ends early (a torn tail, a batch whose CRC fails, a record that does
    not decode) is reported as dump-log and verify report it: the output stands, one
    line on stderr says where replay stopped, and the exit code is 1."""
    if doc.get("logEnd"):
        pr.warning(f"the log ends early: {doc['logEnd']}; replay stopped at offset {offset}")
        raise typer.Exit(ExitStatus.PROBLEMS)


def image(
    ctx: typer.Context,
    args: Annotated[
        Optional[List[str]],
        typer.Argument(
            metavar="LOG_DIR_OR_FILES... [PATH]",
            help="A log dir (or its __cluster_metadata-0, or .log/.checkpoint files), "
            "then optionally an image path such as /topics/NAME/0, /brokers/1, "
            "/features, /configs/topic/NAME.",
        ),
    ] = None,
    at_offset: AtOffset = None,
    at_time: AtTime = None,
    no_snapshot: Annotated[
        bool,
        typer.Option(
            "--no-snapshot", help="Replay bootstrap.checkpoint and the whole log instead of starting from a snapshot."
        ),
    ] = False,
    snapshot: Annotated[
        Optional[str],
        typer.Option(
            "--snapshot",
            "-s",
            metavar="FILE",
            help="A snapshot (or log dir) to read, as kafka-metadata-shell's --snapshot: the same as giving it first.",
        ),
    ] = None,
    names: Annotated[
        bool, typer.Option("--names", help="Only the names of PATH's children, one a line (the metadata shell's ls).")
    ] = False,
    find: Annotated[
        Optional[str],
        typer.Option(
            "--find",
            metavar="PATTERN",
            help="Every path under PATH whose name matches the glob PATTERN (a PATTERN "
            "with a / matches the whole path), one a line (the metadata shell's "
            "find).",
        ),
    ] = None,
    output: OutputOpt = None,
):
    """The cluster's metadata image at any offset or time (default: the end), or one subtree.

    Example: quorumctl image /var/lib/kafka/meta /topics/orders --at-time 2024-05-01T02:00:00Z

    Example: quorumctl image /var/lib/kafka/meta /brokers --names
    """
    import os

    from ..errors import InputError
    from ..image.replay import Point
    from ..timefmt import parse_time
    from ..image.view import image_document
    from ..render.image import image_table, write_image_json, write_image_text

    pr = printer(ctx)
    if at_offset is not None and at_time is not None:
        raise InputError("give --at-offset or --at-time, not both")
    args = ([snapshot] if snapshot else []) + list(args or [])
    if not args:
        raise InputError("give a log dir, snapshot or log files to read (or --snapshot FILE)")
    path = None
    if len(args) > 1 and args[-1].startswith("/") and not os.path.exists(args[-1]):
        path, args = args[-1], args[:-1]
    point = Point(offset=at_offset, time_ms=None if at_time is None else parse_time(at_time))
    mode = pr.resolve(output)
    if names or find is not None:
        _names_or_find(pr, args, point, path, not no_snapshot, names, find, mode)
        return
    doc = image_document(list(args), point, path, use_snapshots=not no_snapshot, lazy=mode is not Output.table)
    if mode is Output.json:  # streamed: the topics are written one at a time, never built whole
        pr.write_bytes(lambda write: write_image_json(doc, write))
    elif mode is Output.text:
        write_image_text(doc, pr.write)
    else:
        pr.emit(mode, doc, text=None, table=image_table)
    _exit_on_log_end(pr, doc, doc["at"]["offset"])


def _names_or_find(pr: Printer, args, point, path, use_snapshots: bool, names: bool, find, mode) -> None:
    import fnmatch
    from ..errors import InputError
    from ..image.view import children, image_document, walk_paths
    from ..render.image import names_doc, names_text

    if names and find is not None:
        raise InputError("give --names or --find, not both")
    doc = image_document(list(args), point, path, use_snapshots=use_snapshots)
    base = "" if doc["path"] in ("/", "") else doc["path"].rstrip("/")
    if names:
        found = children(doc["image"]) if isinstance(doc["image"], dict) else [base.rsplit("/", 1)[-1]]
        key = "names"
    else:
        whole = "/" in find
        found = [
            p for p in walk_paths(doc["image"], base) if fnmatch.fnmatchcase(p if whole else p.rsplit("/", 1)[-1], find)
        ]
        key = "paths"
    pr.emit(mode, found, text=names_text, json=lambda f: names_doc(doc, key, f))
    _exit_on_log_end(pr, doc, doc["at"]["offset"])


def history(
    ctx: typer.Context,
    log_dir: Annotated[
        List[str],
        typer.Argument(
            metavar="LOG_DIR_OR_FILES...", help="A log dir (or its __cluster_metadata-0, or .log/.checkpoint files)."
        ),
    ],
    topic: Annotated[
        Optional[str], typer.Option("--topic", metavar="NAME", help="A topic (all its partitions).")
    ] = None,
    partition: Annotated[
        Optional[int], typer.Option("--partition", "-p", metavar="P", min=0, help="With --topic: one partition.")
    ] = None,
    broker: Annotated[
        Optional[int], typer.Option("--broker", metavar="ID", help="A broker's registration and configs.")
    ] = None,
    config_resource: Annotated[
        Optional[str],
        typer.Option(
            "--config-resource",
            metavar="TYPE:NAME",
            help="A config resource, e.g. topic:orders, broker:1 (every other --config names a server.properties).",
        ),
    ] = None,
    feature: Annotated[
        Optional[str], typer.Option("--feature", metavar="NAME", help="A feature, e.g. metadata.version.")
    ] = None,
    voter: Annotated[
        Optional[int],
        typer.Option("--voter", metavar="ID", help="A controller: its voter entry (KIP-853) and registration."),
    ] = None,
    until: Annotated[
        Optional[str], typer.Option("--until", metavar="OFFSET|TIME", help="Stop at this offset or time.")
    ] = None,
    output: OutputOpt = None,
):
    """Every record that touched one topic, partition, broker, config, feature or voter.

    Each with offset, time, leader epoch and what it changed (before -> after).

    Example: quorumctl history /var/lib/kafka/meta --topic orders --partition 7
    """
    from ..errors import InputError
    from ..image.history import Entity
    from ..image.history import history as run_history
    from ..image.replay import parse_point
    from ..render.image import history_table, history_text

    chosen = [
        (k, v)
        for k, v in (
            ("topic", topic),
            ("broker", broker),
            ("config", config_resource),
            ("feature", feature),
            ("voter", voter),
        )
        if v is not None
    ]
    if len(chosen) != 1:
        raise InputError("give exactly one of --topic, --broker, --config-resource, --feature, --voter")
    if partition is not None and topic is None:
        raise InputError("--partition needs --topic")
    kind, name = chosen[0]
    doc = run_history(list(log_dir), Entity(kind, str(name), partition), until=parse_point(until))
    pr = printer(ctx)
    pr.emit(output, doc, text=history_text, table=history_table)
    _exit_on_log_end(pr, doc, doc["end"]["offset"])


def diff(
    ctx: typer.Context,
    log_dir: Annotated[
        List[str],
        typer.Argument(
            metavar="LOG_DIR_OR_FILES...", help="A log dir (or its __cluster_metadata-0, or .log/.checkpoint files)."
        ),
    ],
    frm: Annotated[
        str,
        typer.Option(
            "--from", metavar="OFFSET|TIME", help="The first point: an offset, or a time (ISO-8601 or epoch ms)."
        ),
    ],
    to: Annotated[
        Optional[str], typer.Option("--to", metavar="OFFSET|TIME", help="The second point (default: the end).")
    ] = None,
    timeline: Annotated[
        bool,
        typer.Option(
            "--timeline",
            help="Also every change in between, in log order with offset and time "
            "(what the net diff hides: objects created and deleted inside the window, "
            "a feature downgraded and upgraded back).",
        ),
    ] = False,
    output: OutputOpt = None,
):
    """What changed between two points of a metadata log: a summary, then each change.

    Example: quorumctl diff /var/lib/kafka/meta --from 2024-05-01T02:00:00Z --to 2024-05-01T02:15:00Z
    """
    from ..image.diff import diff as run_diff
    from ..image.replay import parse_point
    from ..render.image import diff_table, write_diff_json, write_diff_text

    pr = printer(ctx)
    mode = pr.resolve(output)
    # the changes written as they are computed (0.7 M partitions created, built whole, were 1.4 GB)
    doc = run_diff(list(log_dir), parse_point(frm), parse_point(to), timeline=timeline, lazy=True)
    if mode is Output.json:
        pr.write_bytes(lambda write: write_diff_json(doc, write))
    elif mode is Output.text:
        write_diff_text(doc, pr.write)
    else:
        pr.emit(mode, doc, text=None, table=diff_table)
    _exit_on_log_end(pr, doc, doc["to"]["offset"])


def register(app: typer.Typer) -> None:
    app.command("image")(image)
    app.command("history")(history)
    app.command("diff")(diff)
