"""The `quorumctl` entry point: one Typer app, one module per command group.

Command modules stay thin (parse, call, render) and import their heavy
dependencies inside the command functions, so `quorumctl --help` and
`describe status` start fast. Errors become one line on stderr with the exit
codes of `quorumctl.errors`; `--debug` shows the traceback as well.
"""

import functools
import importlib
import inspect
import sys
from typing import Annotated, Any

import typer

from ..errors import ExitStatus, QuorumctlError
from ..render.output import Printer

app = typer.Typer(
    name="quorumctl",
    help="Operator toolkit for Apache Kafka's KRaft metadata quorum.\n\n"
    "Example: quorumctl describe status --bootstrap-controller localhost:9093",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_state = {"debug": False}

# Each module defines `register(app)`; the order is the order of --help.
COMMAND_MODULES = [
    "describe",
    "features",
    "controllers",
    "migrate",
    "membership",  # replace-controller
    "demo",
    "dumplog",
    "verify",
    "state",
    "truncate",
    "image",
    "shell",
    "topics",
    "cluster",
    "cluster_controller",  # joins the cluster group registered just before
    "cluster_registration",  # clear-registration, in the same group
    "recover",
    "voters",
    "doctor",
    "bundle",
    "bootstrap",
    "spark_export",
    "probe",
    "wait",
    "serve",
]


def _print_version(ctx: typer.Context, value: bool) -> None:
    if not value:
        return
    # importlib.metadata only when asked: the installed distribution's version,
    # which pyproject.toml takes from quorumctl.__version__ (the one place it is written)
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("quorumctl")
    except PackageNotFoundError:
        v = "(not installed: no package metadata)"
    from ..core import NAME

    ctx.ensure_object(Printer).write(f"quorumctl {v} (core: {NAME})\n")
    raise typer.Exit(ExitStatus.OK)


def _print_completions(ctx: typer.Context, value: str | None) -> None:
    if value is None:
        return
    from .share import completions

    ctx.ensure_object(Printer).write(completions(value))
    raise typer.Exit(ExitStatus.OK)


def _print_man(ctx: typer.Context, value: bool) -> None:
    if not value:
        return
    from .share import man_page

    ctx.ensure_object(Printer).write(man_page())
    raise typer.Exit(ExitStatus.OK)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show the full traceback on errors.")] = False,
    _version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            is_eager=True,
            expose_value=False,
            callback=_print_version,
            help="Print quorumctl's version and exit.",
        ),
    ] = False,
    _completions: Annotated[
        str | None,
        typer.Option(
            "--completions",
            metavar="SHELL",
            is_eager=True,
            expose_value=False,
            callback=_print_completions,
            help="Print the completion script for SHELL (bash, zsh or fish) and exit.",
        ),
    ] = None,
    _man: Annotated[
        bool,
        typer.Option(
            "--man", is_eager=True, expose_value=False, callback=_print_man, help="Print the man page (roff) and exit."
        ),
    ] = False,
):
    _state["debug"] = debug


for _name in COMMAND_MODULES:
    importlib.import_module(f"quorumctl.cli.{_name}").register(app)


def prose(text: str) -> str:
    """A command's help with each paragraph on one line. The docstrings wrap at
    the source's width, and Typer's Rich help keeps a paragraph's line breaks
    (after the first): `doctor -h` broke "cannot" from "serve" wherever the
    terminal was wider or narrower than the source. A paragraph starting with
    click's \\b keeps its lines."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


def _prose_help(group: typer.Typer) -> None:
    for info in group.registered_commands:
        text = info.help if info.help is not None else inspect.getdoc(info.callback)
        if text:
            info.help = prose(text)
    for sub in group.registered_groups:
        assert sub.typer_instance is not None  # add_typer always sets it
        _prose_help(sub.typer_instance)


_prose_help(app)


def usage_line(e) -> str:
    """A click usage error as one line: what is wrong, and where the help is."""
    ctx = getattr(e, "ctx", None)
    message = " ".join(e.format_message().split())
    if ctx is not None:
        message += f" (see '{ctx.command_path} -h')"
    return message


# Kafka's tools take the connection options before the subcommand (`kafka-metadata-quorum
# --bootstrap-server X describe --status`); runbooks are written that way
CONNECTION_OPTIONS = ("--bootstrap-server", "--bootstrap-controller", "--command-config")


def kafka_order(args: list[str], root) -> list[str]:
    """Kafka's command lines in quorumctl's order: a connection option (and `--debug`)
    given before or between the command words moves after them, and a `--NAME` where a
    group expects a command is that command (`describe --status`, `topics --describe`,
    Kafka's action flags). Everything after the command words stays as it was."""
    path: list[str] = []
    moved: list[str] = []
    path_debug = False
    group = root
    i = 0
    while i < len(args) and group is not None and hasattr(group, "commands"):
        a = args[i]
        name, eq, _ = a.partition("=")
        if a == "--debug":
            i += 1
            path_debug = True
            continue
        if name in CONNECTION_OPTIONS:
            if eq:
                moved.append(a)
                i += 1
            else:
                moved.extend(args[i : i + 2])
                i += 2
            continue
        word = a[2:] if a.startswith("--") and a[2:] in group.commands and group is not root else a
        if word in group.commands:
            path.append(word)
            group = group.commands[word]
            i += 1
            continue
        break
    rest = args[i:]
    if group is not None and hasattr(group, "commands") and group is not root:
        # Kafka's action flag after other options (`kafka-topics --topic t --describe`): still the command
        end = rest.index("--") if "--" in rest else len(rest)
        flag = next((a for a in rest[:end] if a.startswith("--") and a[2:] in group.commands), None)
        if flag is not None:
            rest.remove(flag)
            path.append(flag[2:])
    if not moved and not path_debug and path == args[: len(path)] and "--debug" not in rest:
        return args
    # --debug is the root's: anywhere before `--`, it moves to the front
    end = rest.index("--") if "--" in rest else len(rest)
    debug = ["--debug"] if path_debug or "--debug" in rest[:end] else []
    rest = [a for a in rest[:end] if a != "--debug"] + rest[end:]
    if "--" in rest:
        cut = rest.index("--")
        rest = rest[:cut] + moved + rest[cut:]
    else:
        rest = rest + moved
    return debug + path + rest


@functools.cache
def root_command():
    """The click command tree of `app`, built once a process (Typer takes ~40 ms
    to build it, and main() needs it for Kafka's option order and to run)."""
    return typer.main.get_command(app)


def _registered_name(info: typer.models.CommandInfo | typer.models.TyperInfo) -> str:
    """A top-level command's or group's name as Typer gives it (a command's function name,
    dashed, unless named)."""
    if isinstance(info, typer.models.CommandInfo) and not info.name and info.callback is not None:
        return typer.main.get_command_name(info.callback.__name__)
    return info.name if isinstance(info.name, str) else ""


@functools.cache
def _branch(name: str):
    """The root with only its command or group `name`: the same options and help, built in
    a few ms. Typer reads every command's signature to build the whole tree, which was a
    fifth of `verify`'s CPU on a 140 MB log."""
    import copy

    one = copy.copy(app)
    one.registered_commands = [c for c in app.registered_commands if _registered_name(c) == name]
    one.registered_groups = [g for g in app.registered_groups if _registered_name(g) == name]
    return typer.main.get_command(one)


def command_for(args: list[str]):
    """The tree main() runs `args` on: the branch of the command named first, else the whole
    tree (root options or help, a Kafka-style option first, a mistyped command to suggest a
    name for, shell completion)."""
    import os

    first = args[0] if args else ""
    if first.startswith("-") or "_QUORUMCTL_COMPLETE" in os.environ:
        return root_command()
    known = {_registered_name(c) for c in app.registered_commands} | {
        _registered_name(g) for g in app.registered_groups
    }
    return _branch(first) if first in known else root_command()


def main(printer: Printer | None = None) -> None:
    """Run `quorumctl` on sys.argv, everything it shows going through `printer` (made
    here on the process's stdout and stderr unless a caller hands one in: a test, or
    `run_captured`). Every error that ends a command is reported here, as one line."""
    import contextlib
    import signal

    printer = Printer() if printer is None else printer
    # click's exception classes, found through typer's public BadParameter, which derives
    # from them (typer 0.28 vendors click in a private module; earlier releases use click)
    bases: dict[str, Any] = {c.__name__: c for c in typer.BadParameter.__mro__}
    usage_error, click_exception = bases["UsageError"], bases["ClickException"]

    # a closed pipe (`quorumctl dump-log ... | head`) ends us quietly, as it does `cat`
    try:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    except ValueError:  # not the main thread (main() called from a test's thread)
        pass
    code: Any = ExitStatus.OK
    status: int | None = None
    # click and Typer print --help and a bare group's help to sys.stdout themselves: while
    # they run, sys.stdout and sys.stderr are the printer's (the same objects, unless a
    # caller handed in a printer of its own)
    with contextlib.redirect_stdout(printer.stdout), contextlib.redirect_stderr(printer.stderr):
        try:
            # not standalone: click's usage errors reach us, to be printed as one line
            # instead of Rich's boxed panel
            args = sys.argv[1:]
            root = command_for(args)
            if any(a.startswith("--") for a in args):
                from .kafka_compat import refusal

                args = kafka_order(args, root)
                why = refusal(args, root)
                if why is not None:
                    printer.error(why)
                    sys.exit(ExitStatus.USAGE)
            # the tree Typer would build for app(...) (with pretty exceptions off, Typer's
            # call adds nothing else a user sees)
            code = root(args=args, standalone_mode=False, prog_name="quorumctl", obj=printer)
        except usage_error as e:
            if type(e).__name__ == "NoArgsIsHelpError":
                # a bare group (`quorumctl`, `quorumctl describe`): its help is what was asked for
                printer.write(e.format_message() + "\n")
                status = ExitStatus.OK
            else:
                printer.error(usage_line(e))
                status = ExitStatus.USAGE
        except click_exception as e:
            printer.error(" ".join(e.format_message().split()))
            status = e.exit_code
        except typer.Abort:  # EOF at a prompt: no input where input was needed
            printer.tell("aborted")
            status = ExitStatus.USAGE
        except QuorumctlError as e:
            if _state["debug"]:
                import traceback

                traceback.print_exc(file=printer.stderr)
            printer.error(str(e))
            status = e.exit_code
        except KeyboardInterrupt:
            printer.tell("interrupted")
            status = ExitStatus.INTERRUPTED
        except Exception as e:  # a bug: still one line unless --debug
            if _state["debug"]:
                raise
            printer.tell(f"internal error: {type(e).__name__}: {e} (rerun with --debug for the traceback)")
            status = ExitStatus.INTERNAL
    if status is None:
        status = code if isinstance(code, int) else ExitStatus.OK
    sys.exit(status)


if __name__ == "__main__":
    main()


def run_captured(args, *, width: int | None = None) -> tuple[int, str, str]:
    """`quorumctl ARGS` through `main`, in this process, with the installed script's
    exit-code handling: (exit code, stdout, stderr), written to a printer on two
    StringIOs (Rich tables at `width` columns, else Rich's default for a file). `bundle`
    gathers the other commands' outputs with it; the tests' `cli` fixture is this function."""
    import io

    out, err = io.StringIO(), io.StringIO()
    printer = Printer(out, err, width=width)
    argv = sys.argv
    sys.argv = ["quorumctl", *map(str, args)]
    code = 0
    try:
        main(printer)
    except SystemExit as e:
        code = int(e.code) if isinstance(e.code, int) else (ExitStatus.OK if e.code is None else ExitStatus.PROBLEMS)
    finally:
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()
