"""The `quorumctl` entry point: one Typer app, one module per command group.

Command modules stay thin (parse, call, render) and import their heavy
dependencies inside the command functions, so `quorumctl --help` and
`describe status` start fast. Errors become one line on stderr with the exit
codes of `quorumctl.errors`; `--debug` shows the traceback as well.
"""

from __future__ import annotations

import importlib
import sys

import typer

from ..errors import EXIT_INPUT, QuorumctlError

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
    "controllers",
    "demo",
    "dumplog",
    "verify",
    "state",
    "truncate",
    "bootstrap",
    "spark_export",
]


@app.callback()
def _root(debug: bool = typer.Option(False, "--debug", help="Show the full traceback on errors.")):
    _state["debug"] = debug


for _name in COMMAND_MODULES:
    importlib.import_module(f"quorumctl.cli.{_name}").register(app)


def fail(message: str, code: int = EXIT_INPUT) -> "typer.Exit":
    """Print a one-line error and return the Exit to raise."""
    sys.stderr.write(f"quorumctl: error: {message}\n")
    return typer.Exit(code)


def main() -> None:
    import signal

    # a closed pipe (`quorumctl dump-log ... | head`) ends us quietly, as it does `cat`
    try:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    except ValueError:  # not the main thread (main() called from a test's thread)
        pass
    try:
        app()
    except QuorumctlError as e:
        if _state["debug"]:
            import traceback
            traceback.print_exc()
        sys.stderr.write(f"quorumctl: error: {e}\n")
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("quorumctl: interrupted\n")
        sys.exit(130)
    except Exception as e:  # a bug: still one line unless --debug
        if _state["debug"]:
            raise
        sys.stderr.write(f"quorumctl: internal error: {type(e).__name__}: {e} (rerun with --debug for the traceback)\n")
        sys.exit(EXIT_INPUT)


if __name__ == "__main__":
    main()
