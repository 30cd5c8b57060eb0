"""`quorumctl wait`: block until the quorum is healthy, has a leader, may lose
these nodes, or has them caught up. Thin: `live.automation.gates` waits, `render.wait`
prints."""

from typing import Annotated, List, Optional

import typer

from ..errors import ExitStatus
from .options import (
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    FetchTimeoutMs,
    GateTimeout,
    PlainOutputOpt,
    SampleInterval,
    ServerConfig,
    parse_node_ids,
    printer,
)


def wait(
    ctx: typer.Context,
    condition: Annotated[str, typer.Argument(metavar="healthy|leader|can-restart|caught-up", help="What to wait for.")],
    ids: Annotated[
        Optional[List[str]], typer.Argument(metavar="[ID...]", help="can-restart, caught-up: the node ids (also 2,3).")
    ] = None,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    config: ServerConfig = None,
    command_config: CommandConfig = None,
    timeout: GateTimeout = 300.0,
    interval: SampleInterval = 2.0,
    fetch_timeout_ms: FetchTimeoutMs = None,
    output: PlainOutputOpt = None,
):
    """Block until a condition on the quorum holds: a gate for roll scripts.

    healthy: a leader, every voter caught up, every controller answers. leader: some controller leads.
    can-restart ID...: restarting these nodes together keeps a caught-up majority (Strimzi's rule).
    caught-up ID...: each node (a voter, or a broker as an observer) is caught up with the leader.

    Exit 0 as soon as it holds, 1 at the deadline (saying what still blocks), 130 on Ctrl-C. A sample
    where nothing answers blocks like any other. Progress goes to stderr on a terminal only.

    Example: quorumctl wait can-restart 2 --bootstrap-controller c1:9093 --timeout 600
    """
    from ..live.automation.gates import wait_for
    from ..live.health.probe import probe_quorum
    from ..render.wait import Progress, wait_doc, wait_text

    node_ids = parse_node_ids(ids, "node id")
    if condition in ("healthy", "leader") and node_ids:
        from ..errors import InputError

        raise InputError(f"wait {condition} takes no node ids (got {', '.join(map(str, node_ids))})")
    from ..wire.access import ClusterAccess

    access = ClusterAccess(bootstrap_server, bootstrap_controller, command_config)
    pr = printer(ctx)
    progress = Progress(pr.stderr)

    def sample(budget: float):  # each sample reads the client configuration afresh
        return probe_quorum(access.renewed(), config, budget, fetch_timeout_ms)

    from ..live.automation.gates import WaitResult
    import time

    t0 = time.monotonic()
    try:
        r = wait_for(sample, condition, node_ids, timeout, interval, progress)
    except KeyboardInterrupt:  # exits 130 below, with what was seen so far
        progress.done()
        r = WaitResult(condition, node_ids, False, "interrupted (Ctrl-C)", 0, time.monotonic() - t0, timeout, True)
        pr.emit(output, r, text=wait_text, json=wait_doc)
        raise typer.Exit(ExitStatus.INTERRUPTED) from None
    progress.done()
    pr.emit(output, r, text=wait_text, json=wait_doc)
    raise typer.Exit(ExitStatus.of(not r.ok))


def register(app: typer.Typer) -> None:
    app.command("wait")(wait)
