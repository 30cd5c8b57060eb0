"""The scenario of `quorumctl demo`: real `describe` output without a Kafka cluster.

Starts the simulated quorum (`quorumctl.testing`) on 127.0.0.1 in this
process: controllers 1-3 and broker 4 speaking the Kafka protocol over TCP.
Then runs describe status, replication and health against it through the
same client code as the real commands, silences controller 3 (as a paused
JVM would be), lets 5 s of (virtual) time pass, and describes again.
With --serve it keeps the quorum up so you can point any command (or
kafka-metadata-quorum, or kafka-python) at it.
"""

from __future__ import annotations

import time

from ..render.output import Output, Printer


def _say(printer: Printer, out: Output, text: str):
    if out is not Output.json:
        printer.write(text + "\n")
        printer.flush()


def run_demo(printer: Printer, out: Output, serve: bool = False) -> None:
    """Describe the simulated quorum, silence controller 3, describe again; with
    `serve`, keep it up (controller 3 back) until Ctrl-C. Prints as `out` says
    (JSON: the describe documents only, no narration) through `printer`."""
    from ..live.describe import describe_quorum
    from ..render.quorum import health_doc, health_table, health_text, quorum_forms
    from ..timefmt import now_ms
    from ..wire.access import ClusterAccess
    from .scenarios import demo_cluster

    cluster = demo_cluster()
    try:
        broker = cluster.brokers()[0]
        c1, c2 = cluster.controllers()[0], cluster.controllers()[1]
        ctl = ",".join(c.address for c in cluster.controllers())
        _say(
            printer,
            out,
            "# A simulated KRaft quorum on 127.0.0.1 (Kafka protocol over TCP; nothing leaves this machine):",
        )
        _say(printer, out, f"#   controllers 1, 2, 3 at {ctl}; broker 4 at {broker.address}")

        def describe(kind: str, flag: str, address: str):
            _say(printer, out, f"\n$ quorumctl describe {kind} {flag} {address}")
            mode = {"--bootstrap-server": (address, None), "--bootstrap-controller": (None, address)}[flag]
            printer.emit(out, describe_quorum(ClusterAccess(*mode), 10.0), **quorum_forms(kind, now_ms()))

        def health(timeout: float):
            from ..config.client import ClientConfig
            from ..config.addresses import parse_address
            from ..live.health.probe import check_health

            _say(
                printer, out, f"\n$ quorumctl describe health --bootstrap-controller {c1.address} --timeout {timeout:g}"
            )
            h = check_health(ClientConfig(), controllers=[parse_address(c1.address)], timeout_s=timeout)
            printer.emit(out, h, text=health_text, table=health_table, json=health_doc)

        describe("status", "--bootstrap-server", broker.address)
        describe("replication", "--bootstrap-controller", c2.address)
        health(2.0)
        _say(
            printer,
            out,
            "\n# Controller 3 stops answering (like a SIGSTOPped JVM) and 5 s pass; 60 records are appended.",
        )
        cluster.silence(3)
        cluster.advance(ms=5000, records=60)
        describe("status", "--bootstrap-controller", c1.address)
        describe("replication", "--bootstrap-controller", c1.address)
        health(1.0)
        if serve:
            cluster.silence(3, False)
            _say(
                printer,
                out,
                f"\n# Controller 3 is back. Serving until Ctrl-C: try\n"
                f"#   quorumctl describe replication --bootstrap-controller {c1.address} --watch 1",
            )
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    finally:
        cluster.stop()
