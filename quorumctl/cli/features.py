"""`quorumctl features describe`: kafka-features describe, byte for byte."""

from typing import Annotated, Optional

import typer

from .options import (
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    KafkaRelease,
    KafkaVersion,
    PlainOutputOpt,
    Timeout,
    group,
    printer,
)


def describe(
    ctx: typer.Context,
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
    kafka_version: KafkaVersion = KafkaRelease.v43,
    node_id: Annotated[
        Optional[int],
        typer.Option(
            "--node-id",
            metavar="N",
            help="Ask this node (a broker with --bootstrap-server, a controller with "
            "--bootstrap-controller) for its supported ranges.",
        ),
    ] = None,
):
    """Supported and finalized feature levels: kafka-features describe (its text, byte for byte).

    Example: quorumctl features describe --bootstrap-controller localhost:9093
    """
    from ..live.describe import describe_features
    from ..render.features import features_doc, features_text
    from ..wire.access import ClusterAccess

    f = describe_features(ClusterAccess(bootstrap_server, bootstrap_controller, command_config), timeout, node_id)
    printer(ctx).emit(output, f, text=lambda f: features_text(f, kafka_version.value), json=features_doc)


def register(app: typer.Typer) -> None:
    from .features_update import disable, downgrade, upgrade

    g = group(
        "Feature levels of the cluster: describe, upgrade, downgrade, disable (kafka-features).\n\n"
        "Example: quorumctl features describe --bootstrap-server localhost:9092"
    )
    g.command("describe")(describe)
    g.command("upgrade")(upgrade)
    g.command("downgrade")(downgrade)
    g.command("disable")(disable)
    app.add_typer(g, name="features")
