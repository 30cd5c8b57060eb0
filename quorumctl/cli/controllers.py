"""`quorumctl add-controller` / `remove-controller` (KIP-853, as Kafka 3.9's
kafka-metadata-quorum): AddRaftVoter (80) / RemoveRaftVoter (81), with --dry-run.

Thin: the options go to `quorumctl.live.membership.voters`, which reads the new
controller's properties, checks and asks; `quorumctl.render.quorum` renders the
result, printed through `render.output`. Exit codes: 0 done; 1 the quorum refused the change; 2 bad options or
properties; 3 cluster unreachable or authentication failed.
"""

from typing import Annotated

import typer

from .options import (
    Apply,
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    DryRun,
    PlainOutputOpt,
    Timeout,
    printer,
)


def add_controller(
    ctx: typer.Context,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    dry_run: DryRun = False,
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """Add a controller to the KRaft voter set (AddRaftVoter).

    Example: quorumctl add-controller --bootstrap-controller localhost:9093 --command-config controller.properties
    """
    from ..live.membership.voters import add_controller as add
    from ..render.quorum import voter_change_doc, voter_change_text
    from ..wire.access import ClusterAccess

    printer(ctx).emit(
        output,
        add(ClusterAccess(bootstrap_server, bootstrap_controller, command_config), timeout, dry_run),
        text=lambda r: voter_change_text(r) + "\n",
        json=voter_change_doc,
    )


def remove_controller(
    ctx: typer.Context,
    *,  # keyword-only: a required option below keeps its place in --help
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    controller_id: Annotated[int, typer.Option("--controller-id", "-i", help="The id of the controller to remove.")],
    controller_directory_id: Annotated[
        str, typer.Option("--controller-directory-id", "-d", help="The directory id of the controller to remove.")
    ],
    dry_run: DryRun = False,
    unregister: Annotated[
        bool,
        typer.Option(
            "--unregister",
            help="Also unregister the controller once removed (Kafka 4.4, metadata.version "
            "4.4-IV2; the controller must be stopped). A dry run unless --apply.",
        ),
    ] = False,
    apply: Apply = False,
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """Remove a controller from the KRaft voter set (RemoveRaftVoter).

    With --unregister (Kafka 4.4's remove-controller --unregister) it also removes the
    controller's registration (UnregisterController): a dry run by default, --apply to do
    both; refused, before anything is sent, while the controller still runs or below
    metadata.version 4.4-IV2.

    Example: quorumctl remove-controller --bootstrap-controller localhost:9093 -i 3 -d eAmx4J3YZ63RPobrVgXBAw
    """
    from ..errors import InputError
    from ..live.membership.voters import remove_controller as remove
    from ..render.quorum import voter_change_doc, voter_change_text
    from ..wire.access import ClusterAccess

    access = ClusterAccess(bootstrap_server, bootstrap_controller, command_config)
    if apply and not unregister:
        raise InputError(
            "--apply goes with --unregister (without it remove-controller acts unless --dry-run, as Kafka's does)"
        )
    if unregister:
        from ..live.membership.unregister import remove_and_unregister
        from ..render.quorum import unregister_text

        printer(ctx).emit(
            output,
            remove_and_unregister(access, timeout, controller_id, controller_directory_id, apply),
            text=lambda p: unregister_text(p, "remove-controller") + "\n",
            json=lambda p: p.to_json(),
        )
        return
    printer(ctx).emit(
        output,
        remove(access, timeout, controller_id, controller_directory_id, dry_run),
        text=lambda r: voter_change_text(r) + "\n",
        json=voter_change_doc,
    )


def register(app: typer.Typer) -> None:
    app.command("add-controller")(add_controller)
    app.command("remove-controller")(remove_controller)
