"""`quorumctl state`: offline view of one or more replicas' metadata logs."""

from __future__ import annotations

from typing import List

import typer

from ..errors import ExitStatus
from ..render.output import Output
from .options import OutputOpt, ServerConfigs


def state(
    paths: List[str] = typer.Argument(None, metavar="LOG_DIR...",
                                      help="Log dirs or __cluster_metadata-0 dirs (the replicas of one quorum)."),
    config: ServerConfigs = [],
    output: OutputOpt = None,
):
    """Offline view of replicas: quorum-state, epochs, snapshots, offsets, divergence.

    With several replicas: which one wins an election (last epoch, then end
    offset), where each other one diverges from it (KIP-595's DivergingEpoch rule),
    which logs clash (different batches at one offset and epoch: Raft's log
    matching broken; exit 1), and which entries of each are provably committed
    (held by a majority of the voters), provably uncommitted, or unknown.

    Example: quorumctl state /var/lib/kafka/c1 /var/lib/kafka/c2 /var/lib/kafka/c3
    """
    import sys

    from ..errors import InputError
    from ..render.output import json_line, resolve
    from ..render.state import replica_doc, state_table, state_text
    from ..raft.committed import classify
    from ..protocol.connection import static_voter_ids
    from ..raft.replica import compare, load_replica, metadata_dir_from_config

    targets = list(paths or []) + [metadata_dir_from_config(c) for c in config]
    if not targets:
        raise InputError("give at least one log dir (or -c server.properties)")
    replicas = [load_replica(p) for p in targets]
    labels = [r.label for r in replicas]
    for r in replicas:
        if labels.count(r.label) > 1:
            r.label = f"{r.label} ({r.log_dir})"
    comparison = compare(replicas) if len(replicas) > 1 else None
    doc = {"replicas": [replica_doc(r) for r in replicas], "comparison": comparison}
    if len(replicas) > 1:
        doc["committed"] = classify(replicas, *static_voter_ids(config))
    mode = resolve(output)
    if mode is Output.json:
        sys.stdout.write(json_line(doc) + "\n")
    elif mode is Output.table:
        from rich.console import Console
        Console().print(state_table(doc))
    else:
        sys.stdout.write(state_text(doc))
    clash = comparison is not None and "log_matching" in comparison
    raise typer.Exit(ExitStatus.of(clash or any(j["problems"] for j in doc["replicas"])))


def register(app: typer.Typer) -> None:
    app.command("state")(state)
