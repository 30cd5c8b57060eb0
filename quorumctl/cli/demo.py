"""`quorumctl demo`: real `describe` output without a Kafka cluster (the
scenario is `quorumctl.testing.demo`); --write-examples writes the docs' log dirs.
"""

from typing import Annotated, Optional

import typer

from ..render.output import Output, Printer
from .options import OutputOpt, printer


def demo(
    ctx: typer.Context,
    output: OutputOpt = None,
    serve: Annotated[bool, typer.Option("--serve", help="Keep the simulated quorum running until Ctrl-C.")] = False,
    write_examples: Annotated[
        Optional[str],
        typer.Option(
            "--write-examples",
            metavar="DIR",
            help="Instead: write the log dirs the README's examples use (diverged/, damaged/, crashed/) under DIR.",
        ),
    ] = None,
):
    """Describe a simulated 3-controller quorum (no Kafka needed): status, replication, health, an outage.

    With --write-examples DIR it starts nothing and writes the example log dirs
    of the README and docs instead.

    Example: quorumctl demo
    """
    pr = printer(ctx)
    if write_examples is not None:
        _write_examples(pr, write_examples, pr.resolve(output))
        return
    from ..testing.demo import run_demo

    run_demo(pr, pr.resolve(output), serve=serve)


def _write_examples(pr: Printer, root: str, out: Output) -> None:
    from ..render.demo import examples_doc, examples_text
    from ..testing.examples import write_examples

    pr.emit(out, write_examples(root), text=lambda w: examples_text(w, root), json=examples_doc)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
