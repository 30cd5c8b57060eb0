"""Every command, as a person runs it: each command of the Typer app (walked
recursively, so a new command cannot escape) x each --output value it offers
(and none: the default) x (a pipe, a pseudo-terminal read through a terminal
emulator) x (good input, a missing path, an empty dir, a file of the wrong
kind, an unreachable address), each run as a process of its own. Each run must
exit with the documented code, say an error in one line on stderr, never show a
traceback, and print the documented kind of output.

A run is a child forked from the test process that calls the entry point
(tests/support/forkrun.py: its own fds, a real pipe or pseudo-terminal, no interpreter
start-up); REAL_PROCESS runs, a sample across the command groups, both modes
and every kind of input, are the installed console script itself. The runs are
independent, so they all start at once (a few at a time) when the first test
needs them; each test then checks one run.
"""

from __future__ import annotations

import functools
import json
import os
import re
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

QUORUMCTL = Path(sys.executable).parent / "quorumctl"
pytestmark = pytest.mark.skipif(not QUORUMCTL.exists(), reason=f"no quorumctl console script beside {sys.executable}")

CLUSTER_ID = "xScPa4HuQdHtNJ_0TeOP8g"  # the demo quorum's
DEFAULT = "(default)"  # no --output: what a person types first


@functools.cache
def leaf_commands() -> dict[tuple[str, ...], object]:
    """path -> click command, for every command of the app (groups walked)."""
    from quorumctl.cli.main import root_command

    out = {}

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, path + (name,))
        else:
            out[path] = cmd

    walk(root_command(), ())
    return out


def output_choices(cmd) -> list[str]:
    for p in cmd.params:
        if "--output" in getattr(p, "opts", ()):
            return [DEFAULT, *p.type.choices]
    return [DEFAULT]


def has_table(cmd) -> bool:
    return "table" in output_choices(cmd)


# -- the inputs ------------------------------------------------------------------------


@dataclass
class Places:
    """Paths and addresses the cases point at (made once per session)."""

    root: Path
    quorum: str  # a controller of the simulated demo quorum
    broker: str  # its broker (node 4)
    closed: str  # host:port where nothing listens
    missing: str  # a path that does not exist
    empty: str  # an empty directory
    wrong: str  # a regular file that is no Kafka file
    controller5: str  # server.properties of a formatted controller 5 of the demo cluster
    sim: object = None  # the simulated quorum itself: its log of the requests it got

    def segment(self) -> str:
        return str(self.root / "diverged" / "c1" / "__cluster_metadata-0" / f"{0:020d}.log")


# command path -> input kind -> (arguments, expected exit code); kinds a command
# has no use for are absent (and listed in NOT_APPLICABLE with the reason)
def cases(p: Places) -> dict[tuple[str, ...], dict[str, tuple[list[str], int]]]:
    d = str(p.root / "diverged")
    conn = ["--bootstrap-controller", p.quorum]
    return {
        ("describe", "status"): {
            "good": (conn, 0),
            "unreachable": (["--bootstrap-controller", p.closed], 3),
            "missing": (conn + ["--command-config", p.missing], 2),
            "wrong": (conn + ["--command-config", p.empty], 2),
        },
        ("describe", "replication"): {
            "good": (conn, 0),
            "unreachable": (["--bootstrap-controller", p.closed], 3),
            "missing": (conn + ["--command-config", p.missing], 2),
            "wrong": (conn + ["--command-config", p.empty], 2),
        },
        # health works without a leader, but nothing answering at all is exit 3, as describe status
        ("describe", "health"): {
            "good": (conn + ["--timeout", "3"], 0),
            "unreachable": (["--bootstrap-controller", p.closed, "--timeout", "1"], 3),
            "missing": (["--config", p.missing], 2),
            "wrong": (["--config", p.empty], 2),
        },
        # probe: the node's own answer decides startup; nothing answering is exit 3
        ("probe",): {
            "good": ([p.quorum, "--role", "controller", "--kind", "startup", "--timeout", "3"], 0),
            "unreachable": ([p.closed, "--role", "controller", "--timeout", "1"], 3),
            "missing": ([p.quorum, "--role", "controller", "--log-dir", p.missing], 2),
            "wrong": ([p.quorum, "--role", "controller", "--log-dir", p.empty], 2),
        },
        # wait: nothing answering blocks like any other sample, so it ends at the deadline (1)
        ("wait",): {
            "good": (["leader"] + conn + ["--timeout", "5"], 0),
            "unreachable": (["leader", "--bootstrap-controller", p.closed, "--timeout", "1", "--interval", "0.5"], 1),
            "missing": (["healthy", "--config", p.missing], 2),
            "wrong": (["healthy", "--config", p.empty], 2),
        },
        # serve runs until stopped: only its bad inputs end it (exit 2 before it listens)
        ("serve",): {
            "good": (["--once"] + conn, 0),
            "missing": (["--config", p.missing], 2),
            "wrong": (["--listen", "nowhere"] + conn, 2),
        },
        ("features", "describe"): {
            "good": (conn, 0),
            "unreachable": (["--bootstrap-controller", p.closed], 3),
            "missing": (conn + ["--command-config", p.missing], 2),
            "wrong": (conn + ["--command-config", p.empty], 2),
        },
        # live or offline: a path is a log dir to check against (quorumctl's test data has no
        # registrations and no metadata.version: nothing blocks)
        ("features", "upgrade"): {
            "good": ([f"{d}/c1", "--metadata", "3.7"], 0),
            "unreachable": (["--bootstrap-controller", p.closed, "--metadata", "3.7"], 3),
            "missing": ([p.missing, "--metadata", "3.7"], 2),
            "empty": ([p.empty, "--metadata", "3.7"], 2),
            "wrong": ([p.wrong, "--metadata", "3.7"], 2),
        },
        ("features", "downgrade"): {
            "good": ([f"{d}/c1", "--feature", "group.version=0"], 0),
            "unreachable": (["--bootstrap-controller", p.closed, "--metadata", "3.7"], 3),
            "missing": ([p.missing, "--metadata", "3.7"], 2),
            "empty": ([p.empty, "--metadata", "3.7"], 2),
            "wrong": ([p.wrong, "--metadata", "3.7"], 2),
        },
        ("add-controller",): {
            "good": (conn + ["--command-config", p.controller5, "--dry-run"], 0),
            "unreachable": (["--bootstrap-controller", p.closed, "--command-config", p.controller5, "--dry-run"], 3),
            "missing": (conn + ["--command-config", p.missing], 2),
            "wrong": (conn + ["--command-config", p.empty], 2),
        },
        ("remove-controller",): {
            "good": (conn + ["-i", "3", "-d", "lwoe0T371QW1ZZOn9NBD_A", "--dry-run"], 0),
            "unreachable": (["--bootstrap-controller", p.closed, "-i", "3", "-d", "lwoe0T371QW1ZZOn9NBD_A"], 3),
            "missing": (conn + ["-i", "3", "-d", "lwoe0T371QW1ZZOn9NBD_A", "--command-config", p.missing], 2),
            "wrong": (conn + ["-i", "3", "-d", "lwoe0T371QW1ZZOn9NBD_A", "--command-config", p.empty], 2),
        },
        # the simulated quorum is dynamic (kraft.version 1): the preflight says so (0), upgrade has
        # nothing to do (0), configs prints the plan (0); offline, a path is a controller's log dir
        ("migrate-quorum", "preflight"): {
            "good": (conn, 0),
            "unreachable": (["--bootstrap-controller", p.closed], 3),
            "missing": ([p.missing], 2),
            "empty": ([p.empty], 2),
            "wrong": ([p.wrong], 2),
        },
        ("migrate-quorum", "upgrade"): {
            "good": (conn, 0),
            "unreachable": (["--bootstrap-controller", p.closed], 3),
            "missing": (conn + ["--command-config", p.missing], 2),
            "wrong": (conn + ["--command-config", p.empty], 2),
        },
        ("migrate-quorum", "configs"): {
            "good": (conn, 0),
            "unreachable": (["--bootstrap-controller", p.closed], 3),
            "missing": (conn + ["--command-config", p.missing], 2),
            "wrong": (conn + ["--command-config", p.empty], 2),
        },
        # the simulated quorum finalizes a metadata.version below 4.4-IV2 and 3 is a voter: the
        # dry run's answer is a refusal (exit 1, every reason on stderr), nothing sent
        ("cluster", "unregister-controller"): {
            "good": (conn + ["--id", "3"], 1),
            "unreachable": (["--bootstrap-controller", p.closed, "--id", "3"], 3),
            "missing": (conn + ["--id", "3", "--command-config", p.missing], 2),
            "wrong": (conn + ["--id", "3", "--command-config", p.empty], 2),
        },
        # a healthy quorum: nothing to replace, the preflight refuses (exit 1, on stderr)
        ("replace-controller",): {
            "good": (conn + ["3"], 1),
            "unreachable": (["--bootstrap-controller", p.closed, "3"], 3),
            "missing": (conn + ["3", "--command-config", p.missing], 2),
            "wrong": (conn + ["3", "--command-config", p.empty], 2),
        },
        ("cluster", "clear-registration"): {
            # no controller 7; whether a broker 7 is registered is not known through a controller
            "good": (conn + ["7"], 1),
            "unreachable": (["--bootstrap-controller", p.closed, "7"], 3),
            "missing": (conn + ["7", "--command-config", p.missing], 2),
            "wrong": (conn + ["7", "--command-config", p.empty], 2),
        },
        ("demo",): {"good": ([], 0), "wrong": (["--write-examples", p.wrong], 2)},
        ("dump-log",): {
            "good": ([p.segment()], 0),
            "missing": ([p.missing], 2),
            "empty": ([p.empty], 2),
            "wrong": ([p.wrong], 2),
        },
        ("verify",): {
            "good": ([f"{d}/c1"], 0),
            "missing": ([p.missing], 2),
            "empty": ([p.empty], 2),
            "wrong": ([p.wrong], 2),
        },
        ("state",): {
            "good": ([f"{d}/c1", f"{d}/c2", f"{d}/c3"], 0),
            "missing": ([p.missing], 2),
            "empty": ([p.empty], 2),
            "wrong": ([p.wrong], 2),
        },
        ("truncate",): {
            "good": ([f"{d}/c3", "--reference", f"{d}/c1"], 0),
            "missing": ([p.missing, "--to-offset", "0"], 2),
            "empty": ([p.empty, "--to-offset", "0"], 2),
            "wrong": ([p.wrong, "--to-offset", "0"], 2),
        },
        ("image",): {
            "good": ([f"{d}/c1"], 0),
            "missing": ([p.missing], 2),
            "empty": ([p.empty], 2),
            "wrong": ([p.wrong], 2),
        },
        ("shell",): {
            "good": ([f"{d}/c1", "ls", "/image"], 0),
            "missing": ([p.missing, "ls"], 2),
            "empty": ([p.empty, "ls"], 2),
            "wrong": (["--snapshot", p.wrong, "ls"], 2),
        },
        ("history",): {
            "good": ([f"{d}/c1", "--config-resource", "topic:quorumctl-test"], 0),
            "missing": ([p.missing, "--feature", "metadata.version"], 2),
            "empty": ([p.empty, "--feature", "metadata.version"], 2),
            "wrong": ([p.wrong, "--feature", "metadata.version"], 2),
        },
        ("topics", "describe"): {
            "good": ([str(p.root / "topics")], 0),
            "missing": ([p.missing], 2),
            "empty": ([p.empty], 2),
            "wrong": ([p.wrong], 2),
        },
        ("diff",): {
            "good": ([f"{d}/c1", "--from", "0"], 0),
            "missing": ([p.missing, "--from", "0"], 2),
            "empty": ([p.empty, "--from", "0"], 2),
            "wrong": ([p.wrong, "--from", "0"], 2),
        },
        ("recover",): {
            "good": ([f"{d}/c1", "--lost-voters", "2,3", "--force-lost", "2,3"], 0),
            "missing": ([p.missing, "--lost-voters", "2"], 2),
            "empty": ([p.empty, "--lost-voters", "2"], 2),
            "wrong": ([p.wrong, "--lost-voters", "2"], 2),
        },
        ("voters", "check"): {
            "good": (conn + ["--timeout", "3"], 0),
            "unreachable": (["--bootstrap-controller", p.closed, "--timeout", "1"], 3),
            "missing": ([p.missing], 2),
            "empty": ([p.empty], 2),
            "wrong": ([p.wrong], 2),
        },
        ("voters", "set-endpoints"): {
            "good": (
                [str(p.root / "dynamic" / f"c{n}") for n in (1, 2, 3)]
                + ["--endpoint", "1=CONTROLLER://127.0.0.1:1", "--timeout", "1"],
                0,
            ),
            "missing": ([p.missing, "--endpoint", "1=CONTROLLER://127.0.0.1:1"], 2),
            "empty": ([p.empty, "--endpoint", "1=CONTROLLER://127.0.0.1:1"], 2),
            "wrong": ([p.wrong, "--endpoint", "1=CONTROLLER://127.0.0.1:1"], 2),
        },
        ("doctor",): {
            "good": ([f"{d}/c1"], 0),
            "missing": ([p.missing], 2),
            "empty": ([p.empty], 1),
            "wrong": ([p.wrong], 2),
        },
        ("bundle",): {
            "good": ([f"{d}/c1", "--out", "{out}"], 0),
            "missing": ([p.missing, "--out", "{out}"], 2),
            "wrong": ([p.wrong, "--out", "{out}"], 2),
        },
        ("bootstrap", "random-uuid"): {"good": ([], 0)},
        ("features", "disable"): {
            "good": ([f"{d}/c1", "--feature", "group.version"], 0),
            "unreachable": (["--bootstrap-controller", p.closed, "--feature", "group.version"], 3),
            "missing": ([p.missing, "--feature", "group.version"], 2),
            "empty": ([p.empty, "--feature", "group.version"], 2),
            "wrong": ([p.wrong, "--feature", "group.version"], 2),
        },
        ("cluster", "cluster-id"): {
            "good": (conn, 0),
            "unreachable": (["--bootstrap-controller", p.closed], 3),
            "missing": (conn + ["--command-config", p.missing], 2),
            "wrong": (conn + ["--command-config", p.empty], 2),
        },
        ("cluster", "list-endpoints"): {
            "good": (conn, 0),
            "unreachable": (["--bootstrap-controller", p.closed], 3),
            "missing": (conn + ["--command-config", p.missing], 2),
            "wrong": (conn + ["--command-config", p.empty], 2),
        },
        # the simulated quorum's one broker runs: the answer it gets is the refusal, exit 1
        ("cluster", "unregister"): {
            "good": (["--bootstrap-server", p.broker, "--id", "4"], 1),
            "unreachable": (["--bootstrap-server", p.closed, "--id", "4"], 3),
            "missing": (["--bootstrap-server", p.broker, "--id", "4", "--command-config", p.missing], 2),
            "wrong": (["--bootstrap-server", p.broker, "--id", "4", "--command-config", p.empty], 2),
        },
        # no path to get wrong: "wrong" is a value Kafka does not know
        ("bootstrap", "version-mapping"): {"good": (["-r", "3.9"], 0), "wrong": (["-r", "9.9"], 2)},
        ("bootstrap", "feature-dependencies"): {
            "good": (["-f", "metadata.version=21"], 0),
            "wrong": (["-f", "bogus=1"], 2),
        },
        ("bootstrap", "format"): {
            "good": (["--log-dir", str(p.root / "unformatted"), "--node-id", "1", "-t", CLUSTER_ID], 0),
            "missing": (["-c", p.missing, "-t", CLUSTER_ID], 2),
            "wrong": (["-c", p.empty, "-t", CLUSTER_ID], 2),
        },
        # info's job is to find these (as kafka-storage info): a problem on stdout, exit 1
        ("bootstrap", "info"): {
            "good": (["--log-dir", f"{d}/c1"], 0),
            "missing": (["--log-dir", p.missing], 1),
            "empty": (["--log-dir", p.empty], 1),
            "wrong": (["--log-dir", p.wrong], 1),
        },
        ("spark-export",): {
            "good": (
                [f"{d}/c1", "--out", "{out}", "--master", "local[1]", "--spark-conf", "spark.ui.enabled=false"],
                0,
            ),
            "missing": ([p.missing, "--out", "{out}"], 2),
            "empty": ([p.empty, "--out", "{out}"], 2),
            "wrong": ([p.wrong, "--out", "{out}"], 2),
        },
    }


# A kind a command has no case of is not run: "unreachable" for the commands that
# read no cluster; "missing"/"empty"/"wrong" for those that read no path, or
# where an empty dir is valid input (bootstrap format, demo --write-examples).
KINDS = ("good", "missing", "empty", "wrong", "unreachable")

# spark-export's good input starts a JVM (~15 s of CPU): two runs, json in a
# pipe and the table on a terminal; its text (one summary line) is the README's
# spark-export example, which tests/cli/test_doc_examples.py runs
SPARK_RUNS = {("pipe", "json"), ("pty", DEFAULT)}


def params():
    table = cases(Places(*(Path("/"),) + ("",) * 7))  # which kinds each command has
    out = []
    for path, cmd in leaf_commands().items():
        for kind in KINDS:
            if kind not in table.get(path, {}):
                continue
            for mode in ("pipe", "pty"):
                for output in output_choices(cmd):
                    if path == ("spark-export",) and kind == "good" and (mode, output) not in SPARK_RUNS:
                        continue
                    jvm = path == ("spark-export",) and kind == "good"
                    out.append(
                        pytest.param(
                            path,
                            kind,
                            mode,
                            output,
                            marks=[pytest.mark.spark] if jvm else [],
                            id=f"{' '.join(path)}-{kind}-{mode}-{output.strip('()')}",
                        )
                    )
    return out


# -- running ---------------------------------------------------------------------------

# Runs of the installed console script (the rest are forked: tests/support/forkrun.py): each
# command group, both modes, every kind of input, each output, once at least.
REAL_PROCESS = {
    (("describe", "status"), "good", "pty", DEFAULT),
    (("describe", "status"), "unreachable", "pipe", "json"),
    (("dump-log",), "good", "pipe", DEFAULT),
    (("dump-log",), "missing", "pty", "text"),
    (("state",), "good", "pty", "table"),
    (("verify",), "empty", "pipe", "json"),
    (("image",), "wrong", "pty", DEFAULT),
    (("bootstrap", "info"), "good", "pipe", "text"),
    (("features", "describe"), "good", "pty", "json"),
    (("topics", "describe"), "good", "pipe", "table"),
}


@dataclass
class Run:
    argv: list[str]
    code: int
    stdout: str  # pipe: stdout; pty: the raw bytes the terminal got, decoded
    stderr: str
    screen: str | None  # pty: what the terminal shows at the end
    cpu: float = 0.0  # CPU seconds of a forked run, and wall seconds: not asserted, for
    wall: float = 0.0  # finding what makes the matrix slow


def closed_port() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"127.0.0.1:{port}"


@pytest.fixture(scope="session")
def places(tmp_path_factory):
    from quorumctl.testing.examples import write_examples
    from quorumctl.testing.scenarios import DEMO_CLUSTER_ID, demo_cluster

    root = tmp_path_factory.mktemp("matrix")
    write_examples(str(root))
    (root / "empty").mkdir()
    (root / "README").write_text("not a Kafka file\n")
    _topic_log(root / "topics" / "__cluster_metadata-0")
    c5 = root / "c5"
    (c5 / "data").mkdir(parents=True)
    (c5 / "data" / "meta.properties").write_text(
        f"node.id=5\ndirectory.id=Ft5irZuen_hAwkaw5_cxsg\nversion=1\ncluster.id={DEMO_CLUSTER_ID}\n"
    )
    (c5 / "server.properties").write_text(
        f"process.roles=controller\nnode.id=5\ncontroller.listener.names=CONTROLLER\n"
        f"listeners=CONTROLLER://:19095\nlog.dirs={c5 / 'data'}\n"
    )
    _dynamic_copies(root / "diverged" / "c1", root / "dynamic")
    cluster = demo_cluster()
    yield Places(
        root=root,
        quorum=cluster.node_by_id(1).address,
        broker=cluster.node_by_id(4).address,
        closed=closed_port(),
        missing=str(root / "no" / "such" / "path"),
        empty=str(root / "empty"),
        wrong=str(root / "README"),
        controller5=str(c5 / "server.properties"),
        sim=cluster,
    )
    cluster.stop()


def _dynamic_copies(src: Path, dst: Path) -> None:
    """Three voters' log dirs of a dynamic quorum: copies of one replica, each with its
    own node id and directory id, and a VotersRecord naming them appended in its last
    epoch (what voters set-endpoints needs)."""
    import shutil

    from quorumctl import ids
    from quorumctl.raft.replica import load_replica
    from quorumctl.records import metadata as md
    from quorumctl.records.batch import encode_batch

    r = load_replica(str(src))
    dirs = {n: ids.random_uuid() for n in (1, 2, 3)}
    voters = [
        {
            "voterId": n,
            "voterDirectoryId": d,
            "endpoints": [{"name": "CONTROLLER", "host": "127.0.0.1", "port": int(closed_port().rsplit(":", 1)[1])}],
            "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1},
        }
        for n, d in dirs.items()
    ]
    batch = encode_batch(
        [md.encode_control(md.KRAFT_VOTERS, {"version": 0, "voters": voters})],
        base_offset=r.log_end,
        leader_epoch=r.last_epoch,
        base_timestamp=1_700_000_000_000,
        control=True,
    )
    last = sorted((src / "__cluster_metadata-0").glob("*.log"))[-1].name
    for n, d in dirs.items():
        shutil.copytree(src, dst / f"c{n}")
        meta = dst / f"c{n}" / "meta.properties"
        meta.write_text(
            re.sub(r"directory.id=.*", f"directory.id={d}", re.sub(r"node.id=\d+", f"node.id={n}", meta.read_text()))
        )
        with open(dst / f"c{n}" / "__cluster_metadata-0" / last, "ab") as f:
            f.write(batch)


def _topic_log(pdir: Path) -> None:
    """A metadata log with one topic (the diverged replicas hold none, and topics describe
    prints nothing for a cluster without topics, as kafka-topics does)."""
    from quorumctl.records import metadata as md
    from quorumctl.records.batch import encode_batch

    tid = "AAAAAAAAAAAAAAAAAAAAAQ"
    recs = [
        ("TopicRecord", 0, {"name": "orders", "topicId": tid}),
        (
            "PartitionRecord",
            0,
            {
                "partitionId": 0,
                "topicId": tid,
                "replicas": [1],
                "isr": [1],
                "removingReplicas": [],
                "addingReplicas": [],
                "leader": 1,
                "leaderEpoch": 0,
                "partitionEpoch": 0,
            },
        ),
    ]
    pdir.mkdir(parents=True)
    (pdir / f"{0:020d}.log").write_bytes(
        encode_batch(
            [(None, md.encode_metadata(k, v, x)) for k, v, x in recs],
            base_offset=0,
            leader_epoch=1,
            base_timestamp=1000,
        )
    )


def _run_one(argv: list[str], mode: str, timeout: float, real: bool) -> Run:
    t0 = time.monotonic()
    run = _run(argv, mode, timeout) if real else _fork(argv, mode, timeout)
    run.wall = time.monotonic() - t0
    return run


def _fork(argv: list[str], mode: str, timeout: float) -> Run:
    import forkrun
    import pyte
    from pty_screen import screen_text

    r = forkrun.run(argv[1:], tty=mode == "pty", cols=200, rows=100, timeout=timeout)
    out, err = r.out.decode("utf-8", "replace"), r.err.decode("utf-8", "replace")
    if mode == "pipe":
        return Run(argv, r.code, out, err, None, r.cpu)
    screen = pyte.Screen(200, 100)
    pyte.ByteStream(screen).feed(r.out)
    return Run(argv, r.code, out, err, screen_text(screen), r.cpu)


def _run(argv: list[str], mode: str, timeout: float) -> Run:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if mode == "pipe":
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
        return Run(argv, r.returncode, r.stdout, r.stderr, None)
    from pty_screen import PtyRun

    pr = PtyRun(argv, cols=200, rows=100, env=env)
    code, err = pr.finish(timeout)
    return Run(argv, code, pr.raw.decode("utf-8", "replace"), err, pr.text())


@pytest.fixture(scope="session")
def runs(request, places, tmp_path_factory):
    """Every matrix run the session selected, started together (6 at a time)."""
    table = cases(places)
    wanted = {}
    for item in request.session.items:
        cs = getattr(item, "callspec", None)
        if item.module.__name__ != __name__ or cs is None or "kind" not in cs.params:
            continue
        path, kind, mode, output = (cs.params[k] for k in ("path", "kind", "mode", "output"))
        args, _code = table[path][kind]
        out_dir = str(tmp_path_factory.mktemp("out") / "export")
        args = [a.replace("{out}", out_dir) for a in args]
        argv = [str(QUORUMCTL), *path, *args] + ([] if output == DEFAULT else ["--output", output])
        # spark-export's good runs start a JVM: the real script, not a fork of the test process
        real = (path, kind, mode, output) in REAL_PROCESS or path == ("spark-export",) and kind == "good"
        wanted[(path, kind, mode, output)] = (argv, mode, 300 if path == ("spark-export",) else 120, real)
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {key: pool.submit(_run_one, *spec) for key, spec in wanted.items()}
        return {key: f.result() for key, f in futures.items()}


# -- the checks ------------------------------------------------------------------------

BOX = set("─│┌┐└┘├┤┬┴┼━┃┏┓┗┛╭╮╰╯═║")
ESC = "\x1b["


def looks_like_table(text: str) -> bool:
    """Box-drawing characters, or at least two rows of aligned columns."""
    if BOX & set(text):
        return True
    return sum(1 for line in text.splitlines() if re.search(r"\S  +\S", line)) >= 2


def check_output(run: Run, kind_of_output: str, mode: str):
    body = run.screen if mode == "pty" else run.stdout
    assert body.strip(), f"no output on stdout: {run.argv}"
    if kind_of_output == "json":
        for line in run.stdout.replace("\r\n", "\n").splitlines():
            if line.strip():
                json.loads(line)
    elif kind_of_output == "table":
        assert looks_like_table(body), body
        if mode == "pty":
            assert ESC in run.stdout, "a table on a terminal is styled"
    else:
        assert ESC not in run.stdout, f"text with escape sequences: {run.stdout[:300]!r}"
        assert not (BOX & set(body)), body


@pytest.mark.parametrize("path, kind, mode, output", params())
def test_command(path, kind, mode, output, runs, places):
    table = cases(places)
    run = runs[(path, kind, mode, output)]
    _args, expected = table[path][kind]
    where = f"{' '.join(run.argv)} ({mode})"
    assert "Traceback" not in run.stderr + run.stdout, where + "\n" + run.stderr
    assert run.code == expected, f"{where}: exit {run.code}, expected {expected}\n{run.stderr}"
    if expected in (2, 3):
        lines = run.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("quorumctl: error: "), f"{where}: stderr {run.stderr!r}"
        assert not (run.screen if mode == "pty" else run.stdout).strip(), f"{where}: output on error"
        return
    if path == ("spark-export",):  # stderr is a pipe in both modes: the start-up line, not a spinner
        assert run.stderr == "quorumctl: starting Spark (master local[1]); the JVM takes a few seconds\n"
    elif path == ("cluster", "unregister-controller"):
        assert (
            run.stderr.startswith("quorumctl: error: refusing to unregister controller 3: ")
            and run.stderr.count("\n") == 1
            and "is a voter" in run.stderr
        ), where
        return
    elif path == ("replace-controller",):
        assert (
            run.stderr.startswith("quorumctl: error: refusing to replace controller 3: ")
            and run.stderr.count("\n") == 1
            and "nothing to replace" in run.stderr
        ), where
        return
    elif path == ("demo",) or path[0] == "bootstrap" and kind != "good":
        pass  # demo: progress notes; info: warnings may go to stderr
    elif path == ("topics", "describe") and (output == "text" or output == DEFAULT and mode == "pipe"):
        # stdout is kafka-topics' lines exactly; the count summary is one line on stderr
        assert run.stderr.count("\n") == 1 and " partition(s) listed of " in run.stderr, where
    else:
        assert run.stderr == "", f"{where}: stderr {run.stderr!r}"
    if output == DEFAULT:
        kind_of_output = "table" if mode == "pty" and has_table(leaf_commands()[path]) else "text"
    else:
        kind_of_output = output
    check_output(run, kind_of_output, mode)


def test_every_command_has_its_cases(places):
    """A new command fails here until its inputs are listed in cases()."""
    table = cases(places)
    assert set(leaf_commands()) == set(table)
    for path, kinds in table.items():
        assert "good" in kinds, path
        assert set(kinds) <= set(KINDS), path
    real = {tuple(p.values) for p in params()} & REAL_PROCESS
    assert real == REAL_PROCESS and {k[1] for k in real} == set(KINDS) and {k[2] for k in real} == {"pipe", "pty"}
    assert {k[3] for k in real} == {DEFAULT, "text", "table", "json"}


def test_every_module_imports():
    """Every module of the package exists and imports (a module imported by name
    and never committed fails here, not in a user's terminal)."""
    import importlib
    import pkgutil

    import quorumctl

    try:
        import pyspark  # noqa: F401

        spark = True
    except ImportError:
        spark = False
    names = [m.name for m in pkgutil.walk_packages(quorumctl.__path__, "quorumctl.")]
    assert "quorumctl.cli.main" in names and "quorumctl.render.output" in names
    failed = {}
    for name in names:
        if name.endswith(".__main__") or (not spark and name.startswith("quorumctl.spark.")):
            continue  # __main__ runs the CLI when imported
        try:
            importlib.import_module(name)
        except Exception as e:
            failed[name] = f"{type(e).__name__}: {e}"
    assert not failed, failed


def _imports(path: Path, package: str) -> set[tuple[str, str | None]]:
    """(module, name or None) for each quorumctl import of a source file, at any
    depth (function bodies too: commands import lazily)."""
    import ast

    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {(a.name, None) for a in node.names if a.name.split(".")[0] == "quorumctl"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                mod = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] == "quorumctl":
                out |= {(mod, a.name) for a in node.names if a.name != "*"}
    return out


def test_every_module_named_in_an_import_exists():
    """Every `import quorumctl.x` / `from .x import y` in the package names a module
    (or a name in one) that exists: a lazily imported module that was never
    committed fails here, not in a user's terminal."""
    import importlib

    import quorumctl

    root = Path(quorumctl.__file__).parent
    missing = {}
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root.parent).with_suffix("")
        package = ".".join(rel.parts[:-1])
        for mod, name in _imports(f, package):
            try:
                m = importlib.import_module(mod)
            except ModuleNotFoundError as e:
                missing[f"{mod}"] = f"{rel}: {e}"
                continue
            if name is None or hasattr(m, name):
                continue
            try:
                importlib.import_module(f"{mod}.{name}")
            except ModuleNotFoundError as e:
                missing[f"{mod}.{name}"] = f"{rel}: {e}"
    assert not missing, missing


# -- --dry-run: the default of every command that has --apply, said out loud --------------


def apply_commands() -> list[tuple[str, ...]]:
    """Every command that takes --apply (walked from the tree: a new one cannot escape)."""
    return sorted(path for path, cmd in leaf_commands().items() if "--apply" in _flags(cmd))


def _flags(cmd) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}


# remove-controller acts by default, as Kafka's does: its dry run by default is the one
# with --unregister (Kafka 4.4's); the simulated quorum is below 4.4-IV2, so it is refused
DRY_RUN_EXTRA = {("remove-controller",): ["--unregister"]}
# a format draws a new directory id on every run, dry or not (the plan shows the one it
# would write): the one byte range two runs of the same command line cannot share
RANDOM_ID = re.compile(rb'"directory_id":"[A-Za-z0-9_-]{22}"')
# what a dry run must never send (UpdateFeatures only with validateOnly, checked apart)
WRITES = {"AddRaftVoter": 80, "RemoveRaftVoter": 81, "UnregisterBroker": 64, "UnregisterController": 94}


def test_every_command_with_apply_takes_dry_run():
    """--apply means the default is a dry run; --dry-run must say so without changing it."""
    paths = apply_commands()
    assert len(paths) >= 13 and ("bootstrap", "format") in paths and ("truncate",) in paths, paths
    assert [p for p in paths if "--dry-run" not in _flags(leaf_commands()[p])] == []


def _state(root: Path) -> dict[str, tuple]:
    """Every file and directory under root: kind, mode, size, mtime and content hash."""
    import hashlib

    out: dict[str, tuple] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest() if name in files else None
            out[os.path.relpath(path, root)] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


def _sent(sim, since: int) -> list[tuple[int, int, int]]:
    return sorted(sim.requests[since:])


@pytest.mark.parametrize("path", apply_commands(), ids=" ".join)
def test_dry_run_is_the_default_byte_for_byte(path, places):
    """For each command with --apply, on the matrix's good input, in each output: the run
    with --dry-run prints the same bytes (stdout and stderr), exits the same, and leaves
    the same world as the run without it: no file or directory under the test data
    changed (not even its mtime), and the simulated quorum got the same requests, none
    of them a write."""
    import forkrun

    args = cases(places)[path]["good"][0] + DRY_RUN_EXTRA.get(path, [])
    sim = places.sim
    for output in output_choices(leaf_commands()[path]):
        argv = [*path, *args] + ([] if output == DEFAULT else ["--output", output])
        before, n0, u0 = _state(places.root), len(sim.requests), len(sim.update_features_requests)
        default = forkrun.run(argv)
        n1 = len(sim.requests)
        dry = forkrun.run([*argv, "--dry-run"])
        where = " ".join(argv)
        if path == ("bootstrap", "format"):
            assert len(RANDOM_ID.findall(default.out)) == (output == "json"), where
            dry.out, default.out = (RANDOM_ID.sub(b'"directory_id":"-"', r.out) for r in (dry, default))
        assert (dry.code, dry.out, dry.err) == (default.code, default.out, default.err), where
        assert default.out or default.err, where  # each prints its plan or its refusal
        assert "Traceback" not in (default.out + default.err).decode(), where
        assert _state(places.root) == before, where
        assert _sent(sim, n1) == sorted(sim.requests[n0:n1]), where
        assert not {key for _node, key, _v in sim.requests[n0:]} & set(WRITES.values()), where
        assert all(body.get("validateOnly") for _v, body in sim.update_features_requests[u0:]), where


@pytest.mark.parametrize("path", apply_commands(), ids=" ".join)
def test_apply_with_dry_run_is_refused_in_one_line(path, places):
    """--apply --dry-run (either order) is a contradiction: one line, exit 2, before any
    work (nothing sent, nothing written), the same words in every command."""
    import forkrun

    args = cases(places)[path]["good"][0] + DRY_RUN_EXTRA.get(path, [])
    before, n0 = _state(places.root), len(places.sim.requests)
    for both in (["--apply", "--dry-run"], ["--dry-run", "--apply"]):
        r = forkrun.run([*path, *args, *both])
        assert (r.code, r.out, r.err) == (2, b"", b"quorumctl: error: give --apply or --dry-run, not both\n"), both
    assert _state(places.root) == before and places.sim.requests[n0:] == []
