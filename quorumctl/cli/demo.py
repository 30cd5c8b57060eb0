"""`quorumctl demo`: real `describe` output without a Kafka cluster (the
scenario is `quorumctl.testing.demo`); --write-examples writes the docs' log dirs.
"""

from typing import Annotated, Optional

import typer

from ..render.output import Output
from .options import OutputOpt


def demo(
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
    from ..render.output import resolve

    if write_examples is not None:
        _write_examples(write_examples, resolve(output))
        return
    from ..testing.demo import run_demo

    run_demo(resolve(output), serve=serve)


def _write_examples(root: str, out: Output) -> None:
    from ..render.demo import examples_doc, examples_text
    from ..render.output import emit
    from ..testing.examples import write_examples

    emit(out, write_examples(root), text=lambda w: examples_text(w, root), json=examples_doc)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
