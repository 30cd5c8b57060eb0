"""Running the real Apache Kafka 4.1.0 in ../shared/kafka from tests: its tools
(kafka-dump-log, kafka-metadata-quorum, kafka-storage) and its `cluster` script.

Nothing is copied into the repository: tests that need Kafka skip, saying why,
when ../shared/kafka or Java 17+ is absent.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from samples import SHARED

KAFKA_DIR = SHARED / "kafka"
KAFKA_HOME = KAFKA_DIR / "kafka_2.13-4.1.0"
KAFKA43_HOME = KAFKA_DIR / "kafka_2.13-4.3.0"
CLUSTER = KAFKA_DIR / "cluster"


def _java_problem() -> str | None:
    java = shutil.which("java") or (os.environ.get("JAVA_HOME") and str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    if not java or not Path(java).exists():
        return "java is not on PATH (Kafka 4.1 needs Java 17+)"
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    m = re.search(r'version "(\d+)', out)
    if not m or int(m.group(1)) < 17:
        return f"Kafka 4.1 needs Java 17+, found: {out.splitlines()[0] if out else '?'}"
    return None


def skip_reason(home: Path = KAFKA_HOME) -> str | None:
    if not (home / "bin" / "kafka-run-class.sh").exists():
        return f"{home} is absent (the real Kafka {home.name.rsplit('-', 1)[-1]} lives in ../shared/kafka)"
    return _java_problem()


REASON = skip_reason()
needs_kafka = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def tool_env(tmp: Path) -> dict:
    env = dict(os.environ)
    for k in ("JMX_PORT", "KAFKA_DEBUG", "KAFKA_OPTS", "KAFKA_LOG4J_OPTS"):
        env.pop(k, None)
    # the tools' log4j would otherwise write under KAFKA_HOME; keep JVM start cheap on a small CI box
    env.update(LOG_DIR=str(tmp), KAFKA_HEAP_OPTS="-Xmx256m", KAFKA_JVM_PERFORMANCE_OPTS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
    return env


def kafka_tool(tool: str, args: list[str], tmp: Path, timeout: float = 180, cwd=None,
               home: Path = KAFKA_HOME) -> subprocess.CompletedProcess:
    """Run bin/<tool>.sh with args; returns the completed process, its streams
    decoded as UTF-8 with line ends untouched (payloads may hold a CR)."""
    p = subprocess.run([str(home / "bin" / f"{tool}.sh"), *args], capture_output=True,
                       timeout=timeout, env=tool_env(tmp), cwd=cwd)
    p.stdout, p.stderr = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    return p


def free_base_port(lo: int = 29500, hi: int = 29790, span: int = 5) -> int:
    """A base port P in [lo, hi) with P+1..P+span all free on 127.0.0.1 (the
    cluster script uses P+1..P+N+M). Parallel workers start at different offsets."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    start = lo + 20 * (int(re.sub(r"\D", "", worker) or 0) % ((hi - lo) // 20))
    for base in list(range(start, hi, 10)) + list(range(lo, start, 10)):
        ok = True
        for p in range(base + 1, base + span + 1):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    pytest.skip(f"no free port range in {lo}-{hi} for a Kafka cluster")


class Cluster:
    """A real Kafka 4.1 cluster started by ../shared/kafka/cluster in `d`."""

    def __init__(self, d: Path, base: int, controllers: int = 3, home: Path = KAFKA_HOME):
        self.d, self.base, self.n, self.home = d, base, controllers, home
        self.cluster_id: str | None = None
        self.dir_ids: dict[int, str] = {}      # controller id -> directory id (dynamic quorum)
        self.formatted: dict[str, str] = {}    # node name -> what `bootstrap format` printed

    def run(self, *args: str, timeout: float = 150, check: bool = True) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        env.setdefault("KAFKA_HEAP_OPTS", "-Xmx256m -Xms64m")
        env["KAFKA_HOME"] = str(self.home)    # the script's distribution (4.1 unless told)
        r = subprocess.run([str(CLUSTER), str(self.d), *args], capture_output=True, text=True, timeout=timeout, env=env)
        if check and r.returncode != 0:
            raise AssertionError(f"cluster {' '.join(args)} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        return r

    @property
    def controllers(self) -> list[str]:
        return [f"127.0.0.1:{self.base + i}" for i in range(1, self.n + 1)]

    @property
    def broker(self) -> str:
        return f"127.0.0.1:{self.base + self.n + 1}"

    def info(self) -> dict:
        out = self.run("info").stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def stop(self):
        try:
            self.run("stop", "--timeout", "30", timeout=180, check=False)
        finally:
            self.run("stop", "--timeout", "5", timeout=120, check=False)   # whatever the first left behind


def _node_props(c: Cluster, name: str, dynamic: bool) -> str:
    """The keys of the cluster script's node config that formatting reads (the
    script writes the full file again, identical in these keys, when it starts the node)."""
    nid = int(name[1:])
    port = c.base + nid
    if dynamic:
        quorum = "controller.quorum.bootstrap.servers=" + ",".join(c.controllers)
    else:
        quorum = "controller.quorum.voters=" + ",".join(f"{i}@{a}" for i, a in enumerate(c.controllers, 1))
    role = ("process.roles=controller\nlisteners=CONTROLLER://127.0.0.1:%d\nadvertised.listeners=CONTROLLER://127.0.0.1:%d"
            % (port, port)) if name.startswith("c") else \
        ("process.roles=broker\nlisteners=PLAINTEXT://127.0.0.1:%d\nadvertised.listeners=PLAINTEXT://127.0.0.1:%d"
         % (port, port))
    return (f"node.id={nid}\n{quorum}\ncontroller.listener.names=CONTROLLER\n"
            f"listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
            f"log.dirs={c.d / 'data' / name}\n{role}\n")


def start_cluster(cli, tmp_path_factory, name: str, dynamic: bool, controllers: int = 3,
                  home: Path = KAFKA_HOME) -> Cluster:
    """A real 4.1 cluster (N controllers, 1 broker) whose storage quorumctl formatted:
    the script only formats nodes without meta.properties, so we write its layout file
    (cluster.env) and format every node first; it then starts them as they are."""
    d = tmp_path_factory.mktemp(name)
    c = Cluster(d, free_base_port(span=controllers + 1), controllers, home)
    code, out, err = cli("bootstrap", "random-uuid")
    assert code == 0, err
    cluster_id = out.strip()
    dir_ids = []
    for _ in range(controllers if dynamic else 0):
        code, out, err = cli("bootstrap", "random-uuid")
        dir_ids.append(out.strip())
    (d / "cluster.env").write_text(f"MODE={'dynamic' if dynamic else 'static'}\nNC={controllers}\nNB=1\n"
                                   f"BASE={c.base}\nCLUSTER_ID={cluster_id}\nDIR_IDS='{' '.join(dir_ids)}'\n")
    (d / "conf").mkdir()
    initial = ",".join(f"{i}@{a}:{did}" for i, (a, did) in enumerate(zip(c.controllers, dir_ids), 1))
    c.cluster_id, c.dir_ids, c.formatted = cluster_id, dict(enumerate(dir_ids, 1)), {}
    for n in [f"c{i}" for i in range(1, controllers + 1)] + [f"b{controllers + 1}"]:
        conf = d / "conf" / f"{n}.properties"
        conf.write_text(_node_props(c, n, dynamic))
        extra = []
        if dynamic:
            extra = ["--initial-controllers", initial] if n.startswith("c") else ["--no-initial-controllers"]
        code, out, err = cli("bootstrap", "format", "-c", str(conf), "-t", cluster_id, *extra, "--apply")
        assert code == 0, err
        c.formatted[n] = out
    for attempt in (1, 2):
        try:
            c.run("start", "--timeout", "150", timeout=400)
            break
        except BaseException as e:
            c.stop()
            # On a starved machine a broker gives up registering after 60 s and exits
            # ("b4 died during startup"): that is the machine, not the code under test.
            # One more start on the same data; any other failure, or a second one, fails.
            if attempt == 2 or "died during startup" not in str(e):
                raise
    return c


def cluster_fixture(name: str, dynamic: bool):
    """A module-scoped fixture: one cluster for the module, always stopped."""
    @pytest.fixture(scope="module")
    def cluster(cli, tmp_path_factory):
        c = start_cluster(cli, tmp_path_factory, name, dynamic=dynamic)
        try:
            yield c
        finally:
            c.stop()
    return cluster


# -- comparing with kafka-metadata-quorum 4.1 ------------------------------------------------

VOLATILE_STATUS = ("HighWatermark:", "MaxFollowerLag:", "MaxFollowerLagTimeMs:")


def mask_status(text: str) -> str:
    return "\n".join(re.sub(r"-?\d+$", "N", line) if line.startswith(VOLATILE_STATUS) else line
                     for line in text.split("\n"))


def table_rows(text: str) -> list[list[str]]:
    """prettyPrintTable's rows: every line ends with a TAB, cells padded to the column width."""
    lines = text.split("\n")
    assert lines[-1] == "" and all(line.endswith("\t") for line in lines[:-1]), text
    rows = [line.split("\t")[:-1] for line in lines[:-1]]
    widths = [max(len(r[i].rstrip()) for r in rows) for i in range(len(rows[0]))]
    assert all(cell == cell.rstrip().ljust(widths[i]) for r in rows for i, cell in enumerate(r)), text
    return [[c.rstrip() for c in r] for r in rows]


def mask_replication(text: str) -> list[list[str]]:
    rows = table_rows(text)
    # LogEndOffset, Lag, LastFetchTimestamp, LastCaughtUpTimestamp move between two calls
    return [rows[0]] + [[r[0], r[1], "N", "N", re.sub(r"\d+", "N", r[4]), re.sub(r"\d+", "N", r[5]), r[6]]
                        for r in rows[1:]]


def kafka_quorum(tmp_path, via: list[str], *args: str) -> str:
    p = kafka_tool("kafka-metadata-quorum", [*via, "describe", *args], tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def ours(cli, via: list[str], what: str, *args: str) -> str:
    code, out, err = cli("describe", what, *via, "-o", "text", *args)
    assert (code, err) == (0, ""), err
    return out


def until(what: str, fn, limit_s: float = 90):
    """Retry fn() until it returns a true value (a condition, not a timing assertion)."""
    end = time.monotonic() + limit_s
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not reached in {limit_s} s")
        time.sleep(1)
