"""`quorumctl serve`: a long-running exporter of the quorum's health for
Prometheus (/metrics) and HTTP probes (/probe). The sampler is
`live.automation.exporter`, the metrics `render.metrics` (the only importer of
prometheus_client), the probe `live.automation.node_probe`; this module is the HTTP
server around them."""

import threading
from typing import Annotated

import typer

from ..errors import ExitStatus
from .options import (
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    ControllerCommandConfig,
    FetchTimeoutMs,
    FlappingEpochs,
    Grace,
    SampleInterval,
    SampleTimeout,
    ServerConfig,
    printer,
)

PROBE_CONCURRENCY = 4  # /probe requests at once; more get 429 (bounded threads and sockets)


def make_handler(registry, probe, allowed):
    """The HTTP handler: /metrics, /probe?node=HOST:PORT&role=controller|broker[&kind=ready|live|startup]
    [&format=json], and / (a short index)."""
    from http.server import BaseHTTPRequestHandler
    from urllib.parse import parse_qs, urlsplit

    from ..render.metrics import exposition

    slots = threading.BoundedSemaphore(PROBE_CONCURRENCY)

    class Handler(BaseHTTPRequestHandler):
        server_version = "quorumctl-serve"

        def log_message(self, *args):  # no line per scrape on stderr
            pass

        def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8"):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_HEAD(self):
            self.do_GET()

        def do_GET(self):
            url = urlsplit(self.path)
            if url.path == "/metrics":
                body, ctype = exposition(registry, self.headers.get("Accept"))
                return self._send(200, body, ctype)
            if url.path == "/probe":
                return self._probe(parse_qs(url.query))
            if url.path == "/":
                return self._send(
                    200,
                    b"quorumctl serve: /metrics (OpenMetrics), "
                    b"/probe?node=HOST:PORT&role=controller|broker&kind=ready|live|startup\n",
                )
            return self._send(404, b"not found: /metrics or /probe\n")

        def _probe(self, q: dict):
            from ..errors import QuorumctlError

            node, role = (q.get("node") or [""])[0], (q.get("role") or [""])[0]
            kind, fmt = (q.get("kind") or ["ready"])[0], (q.get("format") or ["text"])[0]
            if not node or not role:
                return self._send(400, b"give node=HOST:PORT and role=controller|broker\n")
            if not allowed(node):
                return self._send(
                    403,
                    f"{node} is not a node this exporter knows (a controller it probes or a "
                    "--bootstrap-server address); start it with --probe-any-address to allow "
                    "any\n".encode(),
                )
            if not slots.acquire(blocking=False):
                return self._send(429, b"too many probes at once\n")
            try:
                v = probe(node, role, kind)
            except QuorumctlError as e:
                code = 400 if e.exit_code == ExitStatus.USAGE else 503
                return self._send(code, f"{kind} failed: {e}\n".encode())
            finally:
                slots.release()
            if fmt == "json":
                from ..render.output import json_bytes
                from ..render.probe import probe_doc

                return self._send(200 if v.ok else 503, json_bytes(probe_doc(v)) + b"\n", "application/json")
            from ..render.probe import probe_text

            return self._send(200 if v.ok else 503, probe_text(v).encode())

    return Handler


def serve(
    ctx: typer.Context,
    listen: Annotated[
        str,
        typer.Option(
            "--listen",
            metavar="HOST:PORT",
            help="Where to serve /metrics and /probe (0.0.0.0:9464 for every interface).",
        ),
    ] = "127.0.0.1:9464",
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    config: ServerConfig = None,
    command_config: CommandConfig = None,
    controller_command_config: ControllerCommandConfig = None,
    interval: SampleInterval = 5.0,
    timeout: SampleTimeout = 5.0,
    fetch_timeout_ms: FetchTimeoutMs = None,
    flapping_epochs: FlappingEpochs = 3,
    grace: Grace = 30.0,
    once: Annotated[
        bool,
        typer.Option(
            "--once",
            help="Take one sample, print the metrics (Prometheus text format) on stdout and "
            "exit: for node_exporter's textfile collector or a cron job.",
        ),
    ] = False,
    probe_any_address: Annotated[
        bool,
        typer.Option(
            "--probe-any-address",
            help="Let /probe probe any host:port (default: only the controllers "
            "the exporter knows and the --bootstrap-server addresses).",
        ),
    ] = False,
):
    """Export the quorum's health to Prometheus (OpenMetrics on /metrics) and answer HTTP probes (/probe).

    Samples the quorum every --interval as describe health --watch does (a sample never takes longer),
    keeps a minute of history (stalled, flapping), and serves the latest sample: leader, epoch, caught-up
    voters, how many more it can lose, seconds since the high watermark moved, epoch changes, each voter's
    and observer's lag, stale registrations. Errors reaching the cluster are counted, never fatal.
    /probe?node=HOST:PORT&role=controller|broker&kind=ready|live|startup answers 200 or 503 with
    `quorumctl probe`'s line. Stops on SIGTERM (exit 0) or Ctrl-C (130). With --once: one sample,
    printed on stdout, no server.

    Example: quorumctl serve --listen 0.0.0.0:9464 --bootstrap-controller c1:9093,c2:9093,c3:9093
    """
    import signal
    from http.server import ThreadingHTTPServer

    from ..config.addresses import parse_address, parse_address_list
    from ..errors import InputError
    from ..live.automation.exporter import Sampler
    from ..live.health.probe import probe_quorum
    from ..live.automation.node_probe import probe_node
    from ..render.metrics import registry_for
    from ..wire.access import ClusterAccess
    from .source import Source

    where = None if once else parse_address(listen, "--listen")
    access = ClusterAccess(bootstrap_server, bootstrap_controller, command_config, controller_command_config)
    # bad options are exit 2 now, not a sample error forever: one probe of the arguments' shape
    access.client_config()
    access.controller_client_config()
    # the cluster, or the controllers a server config names
    Source.of([config] if config else [], access).one(
        neither="nothing to sample: give --bootstrap-controller, --bootstrap-server, or --config"
    )
    if config:
        from ..config.properties import load_properties

        load_properties(config, "server config")
    given = set()
    for opt, text in (("--bootstrap-server", bootstrap_server), ("--bootstrap-controller", bootstrap_controller)):
        if text:
            given |= {str(a) for a in parse_address_list(text, opt)}
    sampler = Sampler(
        # each sample reads the client configuration afresh (a renewed ticket, a rotated truststore)
        lambda budget: probe_quorum(access.renewed(), config, budget, fetch_timeout_ms),
        interval,
        timeout,
        flapping_epochs,
    )

    if once:
        from prometheus_client.exposition import generate_latest

        sampler.step()
        printer(ctx).write(generate_latest(registry_for(sampler.snapshot)).decode("utf-8"))
        return

    def allowed(node: str) -> bool:
        if probe_any_address:
            return True
        try:
            a = str(parse_address(node, "node"))
        except InputError:
            return True  # the probe itself says what is wrong with it (400)
        return a in given or a in sampler.known_addresses()

    def probe(node: str, role: str, kind: str):
        return probe_node(
            node,
            role,
            kind,
            access=access.renewed(),
            config=config,
            timeout=min(timeout, 10.0),
            grace_s=grace,
            fetch_timeout_ms=fetch_timeout_ms,
        )

    assert where is not None  # --once returned above
    try:
        httpd = ThreadingHTTPServer(
            (where.host, where.port), make_handler(registry_for(sampler.snapshot), probe, allowed)
        )
    except OSError as e:
        raise InputError(f"cannot listen on {listen}: {e.strerror or e}") from None
    httpd.daemon_threads = True
    stopping = {"code": ExitStatus.OK}

    def on_term(signum, frame):
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    host, port = httpd.server_address[:2]
    printer(ctx).say(f"quorumctl serve: http://{where.host}:{port}/metrics and /probe; sampling every {interval:g} s")
    sampler.start()
    try:
        httpd.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        stopping["code"] = ExitStatus.INTERRUPTED
    finally:
        sampler.stop()
        httpd.server_close()
    raise typer.Exit(stopping["code"])


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
