"""Running the real Apache Kafka 4.1.0 and 4.3.0 in ../shared/kafka from tests:
their tools (kafka-dump-log, kafka-metadata-quorum, kafka-storage) and the
`cluster` script. `home=` picks the release (4.1.0 unless said otherwise);
`cluster_fixture` runs a module once per release (both by default).

Nothing is copied into the repository: tests that need Kafka skip, saying why,
when ../shared/kafka or Java 17+ is absent.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from quorumctl.logdir.statefiles import read_meta_properties
from samples import SHARED

import recover_chaos  # tools/recover_chaos.py, on pytest's pythonpath: its skip_reason and free_base_port serve these tests too

KAFKA_DIR = SHARED / "kafka"
KAFKA_HOME = KAFKA_DIR / "kafka_2.13-4.1.0"
KAFKA43_HOME = KAFKA_DIR / "kafka_2.13-4.3.0"
KAFKA44_HOME = KAFKA_DIR / "kafka_2.13-4.4.0-SNAPSHOT"  # the 4.4 branch (87943b2f), unreleased
HOMES = {"4.1": KAFKA_HOME, "4.3": KAFKA43_HOME, "4.4": KAFKA44_HOME}
# the metadata.version a test cluster of each release is formatted with: the
# release's own newest (quorumctl's default may be newer than an older release runs)
RELEASE_VERSION = {"4.1": "4.1-IV1", "4.3": "4.3-IV0", "4.4": "4.3-IV0"}  # 4.4's newest production level is 4.3-IV0
FEATURE_LEVEL = {"4.1": 27, "4.3": 30, "4.4": 30}  # their metadata.version levels


def skip_reason(home: Path = KAFKA_HOME) -> str | None:
    """Why the real Kafka in `home` cannot run here (absent, or no Java 17+), or
    None: tools/recover_chaos.skip_reason, for the version `home` is named after."""
    full = home.name.removeprefix("kafka_2.13-")  # "4.3.0", "4.4.0-SNAPSHOT"
    short = next((k for k, v in recover_chaos.VERSIONS.items() if v == full), full)
    return recover_chaos.skip_reason(short)


REASON = skip_reason()


def home_of(release: str) -> Path:
    """The Kafka home of a release ("4.1", "4.3"); skips, saying why, when it cannot run."""
    home = HOMES[release]
    if (reason := skip_reason(home)) is not None:
        pytest.skip(reason)
    return home


needs_kafka = pytest.mark.kafka("4.1")  # tests/conftest.py skips it, saying why, when 4.1 cannot run


def tool_env(tmp: Path) -> dict:
    env = dict(os.environ)
    for k in ("JMX_PORT", "KAFKA_DEBUG", "KAFKA_OPTS", "KAFKA_LOG4J_OPTS"):
        env.pop(k, None)
    # the tools' log4j would otherwise write under KAFKA_HOME; keep JVM start cheap on a small CI box
    env.update(
        LOG_DIR=str(tmp),
        KAFKA_HEAP_OPTS="-Xmx256m",
        KAFKA_JVM_PERFORMANCE_OPTS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
    )
    return env


def kafka_tool(
    tool: str,
    args: list[str],
    tmp: Path,
    timeout: float = 180,
    cwd=None,
    home: Path = KAFKA_HOME,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess:
    """Run bin/<tool>.sh of `home` (4.1 by default) with args (and `stdin`); returns the
    completed process, its streams decoded as UTF-8 with line ends untouched (payloads may hold a CR)."""
    p = subprocess.run(
        [str(home / "bin" / f"{tool}.sh"), *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        env=tool_env(tmp),
        cwd=cwd,
    )
    p.stdout, p.stderr = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    return p


# Our own harness (not Kafka's code): runs kafka-storage's entry point, StorageTool.execute,
# once per stdin line (arguments TAB-separated) in one JVM, so a table of cases costs one
# JVM start instead of one each. Per run: "@@rc N", what the tool printed, "@@err", the
# message kafka-storage's main would print on stderr (TerseFailure, FormatterException), "@@end".
STORAGE_RUNS_JAVA = """\
import java.io.*;
import java.nio.charset.StandardCharsets;

public class StorageRuns {
    public static void main(String[] a) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8);
            int rc;
            String err = "";
            try {
                rc = kafka.tools.StorageTool.execute(line.split("\\t", -1), ps);
            } catch (Throwable t) {
                rc = 1;
                err = t.getClass().getSimpleName() + ": " + t.getMessage();
            }
            out.print("@@rc " + rc + "\\n" + buf.toString(StandardCharsets.UTF_8) + "@@err\\n" + err + "\\n@@end\\n");
        }
    }
}
"""


def storage_runs(
    runs: list[list[str]], tmp: Path, home: Path = KAFKA_HOME, timeout: float = 300
) -> list[tuple[int, str, str]]:
    """Run kafka-storage of `home` once per argument list, all in one JVM; returns
    (exit code, stdout, error) per run, the error as "ExceptionClass: message"."""
    src = tmp / "StorageRuns.java"
    src.write_text(STORAGE_RUNS_JAVA)
    java = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else "java"
    p = subprocess.run(
        [
            java,
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            f"-Dlog4j2.configurationFile={home / 'config' / 'tools-log4j2.yaml'}",
            "-cp",
            f"{home / 'libs'}/*",
            str(src),
        ],
        input="".join("\t".join(r) + "\n" for r in runs),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=tool_env(tmp),
        cwd=tmp,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    out = []
    for chunk in p.stdout.split("@@end\n")[:-1]:
        head, rest = chunk.split("\n", 1)
        printed, err = rest.split("@@err\n", 1)
        out.append((int(head.removeprefix("@@rc ")), printed, err.removesuffix("\n")))
    assert len(out) == len(runs), p.stdout[-3000:]
    return out


def free_base_port(lo: int = 29500, hi: int = 29790, span: int = 5) -> int:
    """A base port P in [lo, hi) with P+1..P+span all free on 127.0.0.1 (the
    cluster script uses P+1..P+N+M): tools/recover_chaos.py's search, from a
    start that differs per parallel worker; a skip when no range is free."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    start = lo + 20 * (int(re.sub(r"\D", "", worker) or 0) % ((hi - lo) // 20))
    try:
        return recover_chaos.free_base_port(lo, hi, span, start=start)
    except RuntimeError as e:
        pytest.skip(f"{e} for a Kafka cluster")


# A real Kafka cluster run by ../shared/kafka/cluster: tools/recover_chaos.Kafka, the one
# wrapper of the script (the chaos runs and the recover safety tests use it too).
Cluster = recover_chaos.Kafka


def _node_props(c: Cluster, name: str, dynamic: bool) -> str:
    """The keys of the cluster script's node config that formatting reads (the
    script writes the full file again, identical in these keys, when it starts the node)."""
    nid = int(name[1:])
    port = c.base + nid
    if dynamic:
        quorum = "controller.quorum.bootstrap.servers=" + ",".join(c.controllers)
    else:
        quorum = "controller.quorum.voters=" + ",".join(f"{i}@{a}" for i, a in enumerate(c.controllers, 1))
    role = (
        (
            "process.roles=controller\nlisteners=CONTROLLER://127.0.0.1:%d\nadvertised.listeners=CONTROLLER://127.0.0.1:%d"
            % (port, port)
        )
        if name.startswith("c")
        else (
            "process.roles=broker\nlisteners=PLAINTEXT://127.0.0.1:%d\nadvertised.listeners=PLAINTEXT://127.0.0.1:%d"
            % (port, port)
        )
    )
    return (
        f"node.id={nid}\n{quorum}\ncontroller.listener.names=CONTROLLER\n"
        f"listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
        f"log.dirs={c.d / 'data' / name}\n{role}\n"
    )


def start_cluster(
    cli,
    tmp_path_factory,
    name: str,
    dynamic: bool,
    controllers: int = 3,
    version: str = "4.1",
    release_version: str | None = None,
    brokers: int = 1,
    start_timeout: int = 150,
    format_args: tuple = (),
    extra_conf: str = "",
    standalone: bool = False,
) -> Cluster:
    """A real cluster of `version` (N controllers, M brokers) whose storage quorumctl formatted:
    the script only formats nodes without meta.properties, so we write its layout file
    (cluster.env) and format every node first; it then starts them as they are.
    A port taken between choosing it and starting (another test process's
    cluster) means a new cluster on other ports, formatted again. `format_args`: more `bootstrap
    format` options (`--kafka-version 4.4`); `extra_conf`: "key=value ..." added to every node's
    config, for format and start (the script's CLUSTER_EXTRA_CONF); `standalone`: a dynamic
    quorum's one controller formatted with --standalone instead of --initial-controllers."""
    for attempt in (1, 2, 3):
        try:
            return _start_cluster(
                cli,
                tmp_path_factory.mktemp(name),
                dynamic,
                controllers,
                version,
                release_version,
                brokers,
                start_timeout,
                format_args,
                extra_conf,
                standalone,
            )
        except AssertionError as e:
            if attempt == 3 or "is already in use" not in str(e):
                raise
    raise AssertionError("unreachable")


def _start_cluster(
    cli,
    d: Path,
    dynamic: bool,
    controllers: int,
    version: str,
    release_version: str | None,
    brokers: int,
    start_timeout: int,
    format_args: tuple = (),
    extra_conf: str = "",
    standalone: bool = False,
) -> Cluster:
    c = Cluster(
        d,
        free_base_port(span=controllers + brokers),
        version,
        brokers=brokers,
        controllers=controllers,
        dynamic=dynamic,
    )
    code, out, err = cli("bootstrap", "random-uuid")
    assert code == 0, err
    cluster_id = out.strip()
    dir_ids = []
    for _ in range(controllers if dynamic and not standalone else 0):
        out = cli("bootstrap", "random-uuid", code=0).out
        dir_ids.append(out.strip())
    (d / "cluster.env").write_text(
        f"MODE={'dynamic' if dynamic else 'static'}\nNC={controllers}\nNB={brokers}\n"
        f"BASE={c.base}\nCLUSTER_ID={cluster_id}\nDIR_IDS='{' '.join(dir_ids)}'\n"
    )
    (d / "conf").mkdir()
    initial = ",".join(f"{i}@{a}:{did}" for i, (a, did) in enumerate(zip(c.controllers, dir_ids), 1))
    c.cluster_id, c.dir_ids, c.formatted = cluster_id, dict(enumerate(dir_ids, 1)), {}
    for n in [c.name(i) for i in range(1, controllers + 1)] + [c.name(b) for b in c.brokers]:
        conf = d / "conf" / f"{n}.properties"
        conf.write_text(_node_props(c, n, dynamic) + "".join(f"{kv}\n" for kv in extra_conf.split()))
        extra = []
        if dynamic and standalone and n.startswith("c"):
            extra = ["--standalone"]
        elif dynamic:
            extra = ["--initial-controllers", initial] if n.startswith("c") else ["--no-initial-controllers"]
        code, out, err = cli(
            "bootstrap",
            "format",
            "-c",
            str(conf),
            "-t",
            cluster_id,
            *extra,
            "--release-version",
            release_version or RELEASE_VERSION[version],
            *format_args,
            "--apply",
        )
        assert code == 0, err
        c.formatted[n] = out
    if standalone:  # the script would otherwise draw directory ids (and a cluster id) of its own
        dir_ids = [
            read_meta_properties(str(c.data(i) / "meta.properties"))["directory.id"] for i in range(1, controllers + 1)
        ]
        (d / "cluster.env").write_text(
            (d / "cluster.env").read_text().replace("DIR_IDS=''", f"DIR_IDS='{' '.join(dir_ids)}'")
        )
    c.extra_conf = extra_conf  # the script's CLUSTER_EXTRA_CONF, at start and at every start-node
    c.launch(start_timeout=start_timeout)
    return c


def cluster_fixture(name: str, dynamic: bool, versions: tuple[str, ...] = ("4.1", "4.3")):
    """A module-scoped fixture: one cluster per Kafka release, always stopped.
    A test that proves nothing new on the second release narrows it with
    @pytest.mark.parametrize("cluster", ["4.3"], indirect=True)."""

    @pytest.fixture(scope="module", params=versions)
    def cluster(cli, tmp_path_factory, request):
        home_of(request.param)
        c = start_cluster(cli, tmp_path_factory, f"{name}-{request.param}", dynamic=dynamic, version=request.param)
        try:
            yield c
        finally:
            c.discard()

    return cluster


# -- comparing with kafka-metadata-quorum 4.1 ------------------------------------------------

VOLATILE_STATUS = ("HighWatermark:", "MaxFollowerLag:", "MaxFollowerLagTimeMs:")


def mask_status(text: str) -> str:
    return "\n".join(
        re.sub(r"-?\d+$", "N", line) if line.startswith(VOLATILE_STATUS) else line for line in text.split("\n")
    )


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
    return [rows[0]] + [
        [r[0], r[1], "N", "N", re.sub(r"\d+", "N", r[4]), re.sub(r"\d+", "N", r[5]), r[6]] for r in rows[1:]
    ]


def kafka_quorum(tmp_path, via: list[str], *args: str, home: Path = KAFKA_HOME) -> str:
    p = kafka_tool("kafka-metadata-quorum", [*via, "describe", *args], tmp_path, home=home)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def ours(cli, via: list[str], what: str, *args: str) -> str:
    code, out, err = cli("describe", what, *via, "-o", "text", *args)
    assert (code, err) == (0, ""), err
    return out


# retry fn() until it returns a true value (a condition, not a timing assertion)
until = recover_chaos.until


# -- a rolling upgrade, observed step by step (test_kafka_rolling_upgrade*.py) ---------------


def healthy(cli, via: list[str]) -> bool:
    code, out, _ = cli("describe", "health", *via, "-o", "json")
    return code == 0 and json.loads(out)["verdict"] == "healthy"


def features_equal(cli, tmp: Path, via: list[str], release: str = "4.3") -> str:
    """`features describe --kafka-version RELEASE` through `via` equals kafka-features
    describe of that release, byte for byte but the epoch (the offset of the metadata the
    node has applied: it moves between two calls); returns ours."""
    theirs = kafka_tool("kafka-features", [*via, "describe"], tmp, home=HOMES[release])
    assert theirs.returncode == 0, theirs.stderr[-2000:]
    code, out, err = cli("features", "describe", *via, "--kafka-version", release, "-o", "text")
    assert (code, err) == (0, "")
    assert epochless(out) == epochless(theirs.stdout), release
    return out


def epochless(text: str) -> str:
    return re.sub(r"Epoch: \d+$", "Epoch: N", text, flags=re.M)


def feature_line(text: str, feature: str = "metadata.version") -> str:
    """features describe's line of `feature`, its whitespace runs as one space."""
    return re.sub(r"\s+", " ", next(line for line in text.splitlines() if line.startswith(f"Feature: {feature} ")))


def upgrade_check(cli, *args: str) -> tuple[int, dict]:
    """`features upgrade ARGS -o json`: (exit code, its document)."""
    code, out, err = cli("features", "upgrade", *args, "-o", "json")
    assert err == "" and out, (code, out, err)
    return code, json.loads(out)
