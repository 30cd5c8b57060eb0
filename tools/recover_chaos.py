#!/usr/bin/env python3
"""Graded chaos runs of `quorumctl recover` on real Kafka (issue 23).

CockroachDB's loss-of-quorum roachtest is the model: each run starts a real
dynamic (KIP-853) cluster of 3 controllers and 1 or 2 brokers from
../shared/kafka, runs a metadata workload through the broker (topic creates,
deletes and config changes, each acknowledgement recorded with what it
changed), and at a seeded random moment kills 2 of the 3 controllers (the
leader among them or not; sometimes while the survivor lags, frozen, so that
the broker is ahead of it) and deletes their data dirs. The survivor and the
brokers are stopped, then docs/recovery.md is followed with quorumctl alone:
`state`, `recover ... --replica <broker dir> --apply`, start the survivor,
start the brokers, `bootstrap format` + `add-controller` for the two lost
controllers.

Each run is graded "recovered", "refused (reason)" (recover refused and wrote
nothing), or "FAILED: why". A recovered run must have: every acknowledged
change that any surviving replica held still present (kafka-topics /
kafka-configs --describe through the broker), no fatal error in the nodes'
logs since the restart, log matching across every replica's files (no two
batches of one epoch at overlapping offsets that differ), a new topic created,
and all three voters back.

    python tools/recover_chaos.py --runs 8 --seed 1 --kafka 4.1 --out results.md

The same code runs one seeded run in CI: tests/kafka/test_kafka_recover_chaos.py.
tests/kafka/test_kafka_recover_safety.py uses its cluster, workload and log-reading
helpers for one test per defect of issue 23.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

KAFKA_DIR = ROOT.parent / "shared" / "kafka"
CLUSTER = KAFKA_DIR / "cluster"
VERSIONS = {"4.1": "4.1.0", "4.3": "4.3.0", "4.4": "4.4.0-SNAPSHOT"}


def kafka_home(version: str) -> Path:
    return KAFKA_DIR / f"kafka_2.13-{VERSIONS.get(version, version)}"


@functools.lru_cache(maxsize=None)
def skip_reason(version: str = "4.1") -> str | None:
    """Why real Kafka `version` cannot run here, or None."""
    home = kafka_home(version)
    if not (home / "bin" / "kafka-run-class.sh").exists():
        return f"{home} is absent (the real Kafka {VERSIONS.get(version, version)} lives in ../shared/kafka)"
    java = shutil.which("java") or (os.environ.get("JAVA_HOME") and str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    if not java or not Path(java).exists():
        return "java is not on PATH (Kafka 4.x needs Java 17+)"
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    m = re.search(r'version "(\d+)', out)
    if not m or int(m.group(1)) < 17:
        return f"Kafka 4.x needs Java 17+, found: {out.splitlines()[0] if out else '?'}"
    return None


# -- quorumctl, as an operator runs it ---------------------------------------------------------


def qc(*args, timeout: float = 120) -> tuple[int, str, str]:
    """`quorumctl ARGS` in a child process (this worktree's code): (exit code, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run(
        [sys.executable, "-m", "quorumctl", *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env
    )
    return p.returncode, p.stdout, p.stderr


def until(what: str, fn, limit_s: float = 90, every: float = 1.0):
    """Retry fn() until it returns a true value; AssertionError after limit_s."""
    end = time.monotonic() + limit_s
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not reached in {limit_s:.0f} s")
        time.sleep(every)


def free_base_port(lo: int = 29500, hi: int = 29990, span: int = 6, start: int | None = None) -> int:
    """A base port P with P+1..P+span free on 127.0.0.1."""
    start = lo if start is None else start
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
    raise RuntimeError(f"no free port range in {lo}-{hi}")


# -- a real cluster -----------------------------------------------------------------------------


# Kafka's line when a broker gives up registering (CI saw it on a loaded machine, and after
# lost_voter_set)
GAVE_UP = "unable to register with the controller quorum"
DIED = re.compile(r"cluster: (\w+) died during startup")  # the script's word for a JVM gone
# A Kafka bug (4.1 to 4.4: KRaftControlRecordStateMachine.truncateNewEntries leaves its next
# offset where it was): a follower that truncates its log below the voters record never reads
# the voter set again. A broker so struck cannot find the controller and gives up
# registering, and the snapshots it writes carry no voter set, so every later start of it
# loads "Starting voters are VoterSet(voters={})" and gives up again. CI saw it in a new
# dynamic quorum whose first leader lost its epoch before the brokers' fetches agreed.
VOTERS_AT = re.compile(r"Latest set of voters is VoterSet\(voters=\{.*? at offset (\d+)")
TRUNCATED_TO = re.compile(r"Truncated to offset (\d+) from Fetch response")


def lost_voter_set(log: str) -> bool:
    """Whether a node's log (of one start) shows its Raft client without the voter set for
    good: it started from its own snapshot with none, or it truncated below the last voters
    record it had read and read none after."""
    snapshot, voters_at, cut = False, None, None
    for line in log.splitlines():
        if "Loading snapshot (" in line:
            snapshot = "[offset=0, epoch=0]" not in line  # not the bootstrap checkpoint
        elif "Starting voters are VoterSet(voters=" in line:
            if snapshot and "VoterSet(voters={})" in line:
                return True
            snapshot = False
        elif m := VOTERS_AT.search(line):
            voters_at, cut = int(m.group(1)), None
        elif (m := TRUNCATED_TO.search(line)) and voters_at is not None and int(m.group(1)) <= voters_at:
            cut = int(m.group(1))
    return cut is not None


def set_aside_replica(data: Path, aside: Path, name: str) -> bool:
    """Move the metadata replica of node `name` (its log dir is `data`) into `aside`, the
    remedy for lost_voter_set: a broker fetches it again from the controllers. False: it
    has none."""
    replica = data / "__cluster_metadata-0"
    if not replica.is_dir():
        return False
    aside.mkdir(exist_ok=True)
    shutil.move(replica, aside / f"{name}-{len(list(aside.iterdir()))}")
    return True


def _failed(args, r: subprocess.CompletedProcess) -> AssertionError:
    return AssertionError(
        f"cluster {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    )


class Kafka:
    """A real KRaft cluster run by ../shared/kafka/cluster in `d`: `controllers` controllers
    (ids 1..N), `brokers` brokers (ids N+1..), a dynamic (KIP-853) or static quorum, of the
    Kafka release `version`. The one wrapper of the script: the chaos runs start it with the
    script's own format (start()); the Kafka tests (tests/support/kafka41.start_cluster) format it
    with quorumctl first and then launch() it."""

    def __init__(
        self,
        d: Path,
        base: int,
        version: str = "4.1",
        brokers: int = 1,
        controllers: int = 3,
        dynamic: bool = True,
        extra_conf: str = "",
        start_timeout: int = 150,
    ):
        self.d, self.base, self.version, self.nb, self.n = Path(d), base, version, brokers, controllers
        self.dynamic = dynamic
        self.extra_conf = extra_conf  # "key=value ..." added to every node's config (CLUSTER_EXTRA_CONF)
        self.start_timeout = start_timeout
        self.home = kafka_home(version)
        self.cluster_id: str | None = None
        self.log_marks: dict[str, int] = {}
        self.dir_ids: dict[int, str] = {}  # controller id -> directory id (a dynamic quorum quorumctl formatted)
        self.formatted: dict[str, str] = {}  # node name -> what `quorumctl bootstrap format` printed
        self.notes: list[str] = []  # what the machine made us start again (launch, start_node)

    # the script
    def env(self, home: Path | None = None) -> dict:
        env = dict(os.environ, KAFKA_HOME=str(home or self.home))
        env.setdefault("KAFKA_HEAP_OPTS", "-Xmx256m -Xms64m")
        # the client compiler and the serial GC, as the lab's nodes: a node's start costs a
        # third less CPU (6.0 s instead of 9.5 s for 1 controller + 1 broker), and the suite's
        # clusters share 2 cores; Kafka's behaviour does not depend on either
        env.setdefault("KAFKA_JVM_PERFORMANCE_OPTS", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
        if self.extra_conf:
            env["CLUSTER_EXTRA_CONF"] = self.extra_conf
        return env

    def run(
        self, *args: str, timeout: float = 200, check: bool = True, home: Path | None = None
    ) -> subprocess.CompletedProcess:
        """The cluster script; `home` starts a node from another release (a rolling upgrade)."""
        r = subprocess.run(
            [str(CLUSTER), str(self.d), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(home),
        )
        if check and r.returncode != 0:
            raise _failed(args, r)
        return r

    def launch(self, *layout: str, start_timeout: int = 150):
        """`cluster start` (with `layout`, the options of a first start that the script formats;
        none when DIR/cluster.env is written). On a starved 2-core machine a node may "die"
        during startup (the script's liveness check can miss a JVM still starting), and a
        broker may lose the voter set to a Kafka bug (lost_voter_set): that is Kafka and the
        machine, not the code under test, so up to two more starts, such a broker without its
        metadata replica (set aside in DIR/aside; it fetches it again from the controllers).
        Any other failure, or a third death, raises with what the dead node logged."""
        for attempt in (1, 2, 3):
            for node in range(1, self.n + self.nb + 1):
                self.mark_log(node)
            try:
                self.run("start", *layout, "--timeout", str(start_timeout), timeout=start_timeout + 250)
                break
            except BaseException as e:
                self.stop()
                died = DIED.search(str(e))
                if not died:
                    raise
                if attempt == 3:
                    raise AssertionError(f"{e}\n{self._dead_node_log(died.group(1))}\n{self._log_files()}") from None
                self.notes.append(f"{died.group(0)}: {self._refetch_if_lost(died.group(1))}started again")
        # a broker struck after it found the controller runs on, but loses it at the next
        # leader change (CI saw forwarded requests time out): killed, refetched, started
        for node in self.brokers:
            if lost_voter_set(self.log_since_mark(node)):
                self.kill(node)
                set_aside_replica(self.data(node), self.d / "aside", self.name(node))
                self.notes.append(f"{self.name(node)} lost the voter set (a Kafka bug): its metadata replica set aside")
                self.start_node(node, check=True)
        self.cluster_id = self.info()["CLUSTER_ID"]

    def _refetch_if_lost(self, name: str) -> str:
        """Set aside the metadata replica of broker `name` if its last start lost the voter
        set; what was done, for the notes."""
        node = int(name[1:])
        if not name.startswith("b") or not lost_voter_set(self.log_since_mark(node)):
            return ""
        if not set_aside_replica(self.data(node), self.d / "aside", name):
            return ""
        return "it had lost the voter set (a Kafka bug): its metadata replica set aside, "

    def _dead_node_log(self, name: str) -> str:
        """The error lines and last lines of node `name`'s log (the script's own tail of it
        does not reach its stderr)."""
        log = self.d / "logs" / f"{name}.log"
        if not log.is_file():
            return "no log of the dead node"
        text = log.read_text(errors="replace")
        return "\n".join(
            [f"--- {log.name}: error lines", *fatal_lines(text)[-5:], "--- last lines", *text.splitlines()[-20:]]
        )

    def _log_files(self) -> str:
        """The logs dir's files with their sizes, and the last lines of each GC log (a JVM
        that died before its first log line may have left one there)."""
        logs = self.d / "logs"
        if not logs.is_dir():
            return f"{logs}: absent"
        files = sorted(logs.iterdir())
        lines = [f"{f.name} {f.stat().st_size} B" for f in files]
        for f in files:
            if f.name.endswith("-gc.log") and f.stat().st_size:
                lines += [f"--- {f.name}:", *f.read_text(errors="replace").splitlines()[-5:]]
        return "\n".join(lines)

    def start(self):
        """Formatted by the script, started, and serving CreateTopics. A port taken between
        choosing the base port and the script's start (another test process's cluster,
        which listens only once formatted: CI saw two runs refused so) means the layout
        wiped and a first start on the next free ports, at most twice."""
        for attempt in (1, 2, 3):
            try:
                self.launch(
                    *(["--dynamic"] if self.dynamic else []),
                    "--controllers",
                    str(self.n),
                    "--brokers",
                    str(self.nb),
                    "--base-port",
                    str(self.base),
                    start_timeout=self.start_timeout,
                )
                break
            except AssertionError as e:
                if attempt == 3 or "is already in use" not in str(e):
                    raise
                self.run("wipe", check=False)
                lo = 31000 if self.base >= 31000 else 29500
                self.base = free_base_port(lo, lo + 990, self.n + self.nb, start=self.base + 10)
        self.serves()

    def serves(self, limit_s: float = 300):
        """Wait until a topic can be created through the brokers. Seen on Kafka 4.3 with two
        brokers on a loaded machine: a broker's forwarding channel stuck on a controller that
        is not the leader for minutes after "Kafka Server started" (CreateTopics times out)."""

        def ok():
            p = self.tool(
                "kafka-topics",
                [
                    "--bootstrap-server",
                    self.bootstrap,
                    "--command-config",
                    self.admin_config(),
                    "--create",
                    "--if-not-exists",
                    "--topic",
                    "ready-check",
                    "--partitions",
                    "1",
                    "--replication-factor",
                    "1",
                ],
                90,
            )
            return p.returncode == 0

        until("the brokers serve CreateTopics", ok, limit_s, every=2)

    def stop(self):
        try:
            self.run("stop", "--timeout", "30", timeout=180, check=False)
        finally:
            self.run("stop", "--timeout", "5", timeout=120, check=False)  # whatever the first left behind

    def discard(self):
        """End a cluster whose files nothing reads again (a fixture's teardown): SIGTERM, then
        SIGKILL after 1 s. A graceful stop waits up to 30 s for a broker whose controllers are
        gone (CI saw 35-45 s teardowns after recover runs), and proves nothing there."""
        self.run("stop", "--timeout", "1", timeout=120, check=False)

    def info(self) -> dict:
        out = self.run("info").stdout
        return {k: v.strip("'\"") for k, v in (ln.split("=", 1) for ln in out.splitlines() if "=" in ln)}

    def kill(self, node: int):
        self.run("kill-node", str(node))

    def freeze(self, node: int):
        self.run("stop-node", str(node))

    def start_node(
        self, node: int, timeout: float = 200, home: Path | None = None, check: bool = False
    ) -> subprocess.CompletedProcess:
        """Start one node (from `home`: a rolling upgrade) and wait up to `timeout` s for it."""
        self.mark_log(node)
        # the script's own limit is 90 s unless told: a loaded machine needs longer, and on
        # its limit the script stops the node again
        args = ("start-node", str(node), "--timeout", str(int(timeout)))
        p = self.run(*args, timeout=timeout + 60, check=False, home=home)
        name, said = self.name(node), p.stdout + p.stderr
        # the script's "died during startup" and then "stopped (pid N)": it stops only a live
        # JVM, so the liveness check missed one still starting (CI saw it with an untouched log)
        alive_after_all = name in DIED.findall(said) and f"{name}: stopped (pid" in said
        if p.returncode != 0 and (alive_after_all or GAVE_UP in self.log_since_mark(node)):
            why = "was said dead while starting" if alive_after_all else "gave up registering with the quorum"
            self.notes.append(f"node {node} {why}: {self._refetch_if_lost(name)}started again")
            self.mark_log(node)
            p = self.run(*args, timeout=timeout + 60, check=False, home=home)
        if check and p.returncode != 0:
            raise _failed(args, p)
        return p

    def start_node_with(self, node: int, settings: dict[str, str], timeout: float = 200) -> bool:
        """Start one node with `settings` changed in its server.properties, as an operator
        does after editing it (the script's start-node writes the file anew). Launched the
        way the script launches (same config path, pid file and logs), so stop, kill-node
        and status still find it. True once it logged "Kafka Server started"."""
        conf = self.conf(node)
        lines = [ln for ln in conf.read_text().splitlines() if ln.split("=", 1)[0] not in settings]
        conf.write_text("\n".join(lines + [f"{k}={v}" for k, v in settings.items()]) + "\n")
        name = self.name(node)
        self.mark_log(node)
        env = self.env()
        env.update(
            LOG_DIR=str(self.d / "logs"),
            EXTRA_ARGS=f"-name {name} -loggc",
            KAFKA_LOG4J_OPTS=f"-Dlog4j2.configurationFile={self.d / 'conf' / (name + '.log4j2.yaml')}",
        )
        (self.d / "run").mkdir(exist_ok=True)
        with open(self.d / "logs" / f"{name}.out", "ab") as out:
            p = subprocess.Popen(
                [str(self.home / "bin" / "kafka-server-start.sh"), str(conf)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        (self.d / "run" / f"{name}.pid").write_text(f"{p.pid}\n")
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if "Kafka Server started" in self.log_since_mark(node):
                return True
            if p.poll() is not None:
                return False
            time.sleep(0.5)
        return False

    # layout
    @property
    def brokers(self) -> list[int]:
        return list(range(self.n + 1, self.n + 1 + self.nb))

    def name(self, node: int) -> str:
        return f"c{node}" if node <= self.n else f"b{node}"

    def addr(self, node: int) -> str:
        return f"127.0.0.1:{self.base + node}"

    @property
    def controllers(self) -> list[str]:
        """The controllers' addresses, 1..N."""
        return [self.addr(i) for i in range(1, self.n + 1)]

    @property
    def broker(self) -> str:
        """The first broker's address."""
        return self.addr(self.n + 1)

    @property
    def bootstrap(self) -> str:
        return ",".join(self.addr(b) for b in self.brokers)

    def data(self, node: int) -> Path:
        return self.d / "data" / self.name(node)

    def conf(self, node: int) -> Path:
        return self.d / "conf" / f"{self.name(node)}.properties"

    def log(self, node: int) -> Path:
        return self.d / "logs" / f"{self.name(node)}.log"

    def mark_log(self, node: int):
        p = self.log(node)
        self.log_marks[self.name(node)] = p.stat().st_size if p.exists() else 0

    def log_since_mark(self, node: int) -> str:
        p = self.log(node)
        if not p.exists():
            return ""
        with open(p, "rb") as f:
            f.seek(self.log_marks.get(self.name(node), 0))
            return f.read().decode("utf-8", "replace")

    # Kafka's own tools
    def tool(self, name: str, args: list[str], timeout: float = 90) -> subprocess.CompletedProcess:
        env = self.env()
        for k in ("JMX_PORT", "KAFKA_DEBUG", "KAFKA_OPTS", "KAFKA_LOG4J_OPTS"):
            env.pop(k, None)
        env.update(
            LOG_DIR=str(self.d / "logs"),
            KAFKA_HEAP_OPTS="-Xmx192m",
            KAFKA_JVM_PERFORMANCE_OPTS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
        )
        try:
            p = subprocess.run(
                [str(self.home / "bin" / f"{name}.sh"), *map(str, args)], capture_output=True, timeout=timeout, env=env
            )
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(
                e.cmd,
                124,
                (e.stdout or b"").decode("utf-8", "replace"),
                (e.stderr or b"").decode("utf-8", "replace") + "\n[timed out]",
            )
        return subprocess.CompletedProcess(
            p.args, p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
        )

    def admin_config(self) -> Path:
        """Client settings for the workload: an acknowledgement or a clear failure within a minute
        (a frozen leader holds the broker's controller channel until controller.socket.timeout.ms, 30 s)."""
        p = self.d / "admin.properties"
        if not p.exists():
            p.write_text("request.timeout.ms=30000\ndefault.api.timeout.ms=60000\n")
        return p

    # the quorum, through quorumctl
    def status(self, node: int | None = None) -> dict | None:
        via = self.addr(node) if node else ",".join(self.controllers)
        try:
            code, out, err = qc(
                "describe", "status", "--bootstrap-controller", via, "-o", "json", "--timeout", "5", timeout=30
            )
        except subprocess.TimeoutExpired:
            return None
        if code != 0:
            return None
        try:
            return json.loads(out)
        except ValueError:
            return None

    def leader(self) -> tuple[int, int]:
        """(leader id, epoch), waiting for one."""
        d = until("a leader", lambda: (lambda s: s if s and s.get("leaderId", -1) > 0 else None)(self.status()), 60)
        return d["leaderId"], d["leaderEpoch"]


# -- reading a replica's files ------------------------------------------------------------------


def partition_dir(log_dir: Path) -> Path:
    return Path(log_dir) / "__cluster_metadata-0"


def batches(log_dir: Path) -> list[dict]:
    """Every batch of the replica's metadata log segments: base/last offset, epoch, CRC, file, position."""
    from quorumctl.records.batch import Batch, BatchReader

    out = []
    p = partition_dir(log_dir)
    for f in sorted(p.glob("*.log")):
        for b in BatchReader(str(f)):
            if isinstance(b, Batch):
                out.append(
                    {
                        "base": b.base_offset,
                        "last": b.last_offset,
                        "epoch": b.leader_epoch,
                        "crc": b.crc,
                        "file": str(f),
                        "pos": b.position,
                    }
                )
    return out


def log_matching_clashes(dirs: dict[str, Path]) -> list[str]:
    """Raft's log matching checked independently of quorumctl's own checker: two
    replicas' batches of the same epoch whose offset ranges overlap must be the
    same batch (same offsets, same CRC)."""
    missing = [f"{k} ({partition_dir(v)})" for k, v in dirs.items() if not partition_dir(v).is_dir()]
    if missing or len(dirs) < 2:
        # nothing to compare is no proof of no clash
        raise AssertionError(f"log matching: no metadata log to compare for {', '.join(missing) or dirs}")
    logs = {k: batches(v) for k, v in dirs.items()}
    names = sorted(logs)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            by_epoch: dict[int, list[dict]] = {}
            for x in logs[b]:
                by_epoch.setdefault(x["epoch"], []).append(x)
            for x in logs[a]:
                for y in by_epoch.get(x["epoch"], ()):
                    if x["last"] < y["base"] or y["last"] < x["base"]:
                        continue
                    if (x["base"], x["last"], x["crc"]) != (y["base"], y["last"], y["crc"]):
                        out.append(
                            f"{a} {x['file']}@{x['pos']} (offsets {x['base']}..{x['last']}, crc {x['crc']}) "
                            f"and {b} {y['file']}@{y['pos']} (offsets {y['base']}..{y['last']}, "
                            f"crc {y['crc']}) differ in epoch {x['epoch']}"
                        )
                        break
                else:
                    continue
                break
    return out


def metadata_records(log_dir: Path) -> list[tuple[int, str, dict]]:
    """(offset, type name, data) of every metadata record in the replica's
    snapshots and segments (snapshots first: what a snapshot covers is not
    in the segments any more)."""
    from quorumctl.errors import InputError
    from quorumctl.records.batch import Batch, BatchReader
    from quorumctl.records.metadata import decode_metadata

    def read(files: list[Path]) -> list[tuple[int, str, dict]]:
        out = []
        for f in files:
            for b in BatchReader(str(f)):
                if isinstance(b, Batch) and not b.is_control:
                    for r in b.records():
                        d = decode_metadata(r.value)
                        if d.data is not None:
                            out.append((r.offset, d.type_name, d.data))
        return out

    p = partition_dir(log_dir)

    def listed() -> list[Path]:
        return sorted(p.glob("*.checkpoint")) + sorted(p.glob("*.log"))

    # a running node's cleaner deletes snapshots and segments while we read: a file
    # that vanished between the listing and its reading means list and read again
    for _ in range(4):
        files = listed()
        try:
            return read(files)
        except InputError:
            if all(f.exists() for f in files):
                raise
    return read(listed())


def held_changes(log_dir: Path) -> dict:
    """What a replica's files hold of the workload: topics created (name -> id),
    topic ids removed, and (topic, retention.ms) values set."""
    created, removed, configs = {}, set(), set()
    for _, t, d in metadata_records(log_dir):
        if t == "TOPIC_RECORD":
            created[d["name"]] = d["topicId"]
        elif t == "REMOVE_TOPIC_RECORD":
            removed.add(d["topicId"])
        elif t == "CONFIG_RECORD" and d.get("resourceType") == 2 and d.get("name") == "retention.ms":
            configs.add((d["resourceName"], d.get("value")))
    return {"created": created, "removed": removed, "configs": configs}


def state_clashes(dirs: list[Path]) -> list[dict]:
    """The log-matching clashes `quorumctl state DIR...` reports (comparison.log_matching,
    present only when there is one). A missing comparison, or one that did not compare every
    dir (each but the winner a follower), is no proof of no clash: an AssertionError."""
    code, out, err = qc("state", *dirs, "-o", "json")
    try:
        cmp = json.loads(out)["comparison"]
        compared = len(cmp["followers"]) + 1
    except (ValueError, KeyError, TypeError):
        cmp, compared = None, 0
    if cmp is None or len(dirs) < 2 or compared != len(dirs):
        raise AssertionError(
            f"quorumctl state {' '.join(map(str, dirs))}: no log-matching comparison of every dir "
            f"(exit {code}): {err.strip()[:500]}"
        )
    return cmp.get("log_matching", [])


def tree_hash(root: Path) -> dict[str, str]:
    """sha256 of every file under root (relative path -> digest); what 'nothing written' is checked with."""
    out = {}
    root = Path(root)
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != ".lock":
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def state_end(log_dir: Path) -> tuple[int, int]:
    """(last epoch, log end offset) of a replica as `quorumctl state` reports it."""
    code, out, err = qc("state", log_dir, "-o", "json")
    r = json.loads(out)["replicas"][0]
    return r.get("last_epoch", -1), r.get("log_end_offset", -1)


# -- the workload -------------------------------------------------------------------------------


@dataclass
class Op:
    n: int
    kind: str  # create | delete | config
    topic: str
    value: str | None = None  # retention.ms for config
    acked: bool | None = None
    error: str = ""
    t0: float = 0.0
    t1: float = 0.0


class Workload:
    """Metadata changes through the broker, one at a time, in a thread; every
    acknowledgement (exit 0 and Kafka's success line) recorded with what it changed."""

    def __init__(self, k: Kafka, rng: random.Random, prefix: str = "w"):
        self.k, self.rng, self.prefix = k, rng, prefix
        self.ops: list[Op] = []
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.live: list[str] = []  # topics whose create was acked and not (yet) deleted
        self.n = 0
        self.acked_count = threading.Semaphore(0)

    def next_op(self) -> Op:
        self.n += 1
        r = self.rng.random()
        if len(self.live) < 2 or r < 0.4:
            return Op(self.n, "create", f"{self.prefix}-t{self.n}")
        if r < 0.85:
            return Op(self.n, "config", self.rng.choice(self.live), str(3_600_000 + self.n))
        return Op(self.n, "delete", self.rng.choice(self.live[:-1]))

    def do(self, op: Op) -> Op:
        k, cfg = self.k, self.k.admin_config()
        op.t0 = time.time()
        if op.kind == "create":
            p = k.tool(
                "kafka-topics",
                [
                    "--bootstrap-server",
                    k.bootstrap,
                    "--command-config",
                    cfg,
                    "--create",
                    "--topic",
                    op.topic,
                    "--partitions",
                    "1",
                    "--replication-factor",
                    "1",
                ],
                90,
            )
            op.acked = p.returncode == 0 and f"Created topic {op.topic}." in p.stdout
        elif op.kind == "delete":
            p = k.tool(
                "kafka-topics",
                ["--bootstrap-server", k.bootstrap, "--command-config", cfg, "--delete", "--topic", op.topic],
                90,
            )
            op.acked = p.returncode == 0 and "Error" not in p.stdout + p.stderr
        else:
            p = k.tool(
                "kafka-configs",
                [
                    "--bootstrap-server",
                    k.bootstrap,
                    "--command-config",
                    cfg,
                    "--alter",
                    "--entity-type",
                    "topics",
                    "--entity-name",
                    op.topic,
                    "--add-config",
                    f"retention.ms={op.value}",
                ],
                90,
            )
            op.acked = p.returncode == 0 and f"Completed updating config for topic {op.topic}." in p.stdout
        op.t1 = time.time()
        if not op.acked:
            lines = (p.stdout + p.stderr).strip().splitlines()
            op.error = next((ln for ln in lines if "Error" in ln or "Exception" in ln), lines[-1] if lines else "")[
                :300
            ]
        else:
            if op.kind == "create":
                self.live.append(op.topic)
            elif op.kind == "delete":
                self.live.remove(op.topic)
        return op

    def run_one(self) -> Op:
        op = self.next_op()
        self.ops.append(op)
        self.do(op)
        if op.acked:
            self.acked_count.release()
        return op

    def _loop(self, limit: int):
        while not self.stop.is_set() and len(self.ops) < limit:
            self.run_one()

    def start(self, limit: int = 1000):
        self.thread = threading.Thread(target=self._loop, args=(limit,), daemon=True)
        self.thread.start()

    def wait_acked(self, n: int, timeout: float = 300) -> bool:
        end = time.monotonic() + timeout
        for _ in range(n):
            if not self.acked_count.acquire(timeout=max(0.0, end - time.monotonic())):
                return False
        return True

    def finish(self, timeout: float = 150):
        self.stop.set()
        if self.thread:
            self.thread.join(timeout)

    def summary(self) -> str:
        return ", ".join(
            f"{o.kind} {o.topic}{'=' + o.value if o.value else ''}:" + ("ack" if o.acked else f"no ({o.error[:80]})")
            for o in self.ops
        )


def expected_state(ops: list[Op], held: list[dict]) -> tuple[list[str], list[str]]:
    """What must hold after recovery: for every acknowledged op that a surviving
    replica's files held, a check (topic present/absent, retention.ms value).
    Returns (checks as text, ops that were acked but held by no surviving replica)."""
    ids = {}
    for h in held:
        ids.update(h["created"])
    checks, not_held = [], []

    def is_held(op: Op) -> bool:
        if op.kind == "create":
            return any(op.topic in h["created"] for h in held)
        if op.kind == "delete":
            return any(ids.get(op.topic) in h["removed"] for h in held)
        return any((op.topic, op.value) in h["configs"] for h in held)

    for op in ops:
        if not op.acked:
            continue
        if not is_held(op):
            not_held.append(f"{op.kind} {op.topic}")
            continue
        checks.append(op)
    return checks, not_held


def observed_state(k: Kafka) -> tuple[set[str], dict[str, str]] | None:
    """Topics (non-internal) and their retention.ms, described through the broker."""
    p = k.tool("kafka-topics", ["--bootstrap-server", k.bootstrap, "--list", "--exclude-internal"], 60)
    if p.returncode != 0:
        return None
    topics = {t.strip() for t in p.stdout.splitlines() if t.strip() and not t.startswith("[")}
    p = k.tool("kafka-configs", ["--bootstrap-server", k.bootstrap, "--describe", "--entity-type", "topics"], 60)
    if p.returncode != 0:
        return None
    configs, cur = {}, None
    for ln in p.stdout.splitlines():
        m = re.match(r"Dynamic configs for topic (\S+) are:", ln)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r"\s+retention\.ms=(\d+)", ln)
        if m and cur:
            configs[cur] = m.group(1)
    return topics, configs


def grade_changes(ops: list[Op], checks: list[Op], seen: tuple[set[str], dict[str, str]]) -> list[str]:
    """Every acknowledged and held change still present: a create's topic exists
    unless a later delete of it was issued; a delete's topic is gone; a config's
    value is the one set or one set by a later op on that topic (acked or not)."""
    topics, configs = seen
    problems = []
    for op in checks:
        later = [o for o in ops if o.n > op.n and o.topic == op.topic]
        if op.kind == "create":
            if op.topic not in topics and not any(o.kind == "delete" for o in later):
                problems.append(f"acknowledged create of {op.topic} lost")
        elif op.kind == "delete":
            if op.topic in topics:
                problems.append(f"acknowledged delete of {op.topic} lost (the topic is back)")
        else:
            if any(o.kind == "delete" for o in later) and op.topic not in topics:
                continue
            ok = {op.value} | {o.value for o in later if o.kind == "config"}
            if configs.get(op.topic) not in ok:
                problems.append(
                    f"acknowledged retention.ms={op.value} of {op.topic} lost (now {configs.get(op.topic)})"
                )
    return problems


FATAL = re.compile(
    r"^\[[^\]]+\] (FATAL|ERROR) .*(truncat|high watermark|Exiting Kafka|halt|fatal|"
    r"Shutting down|Encountered fatal|log matching|corrupt)",
    re.I | re.M,
)


def fatal_lines(text: str) -> list[str]:
    return [m.group(0)[:300] for m in FATAL.finditer(text)]


# -- one graded run -----------------------------------------------------------------------------

SCENARIOS = ("leader-lost", "leader-survives", "lagging-survivor", "premature")
# not in the graded rotation: an operator's mistake the runbook warns against (recover without
# --replica while the brokers are ahead); run with --scenario to see what it does
MISTAKES = ("forgotten-broker",)
# not in the rotation either: two faults of the rotation in one run (the survivor frozen
# while the brokers go ahead of it, then one "lost" voter only frozen when recover first
# runs), so that one run proves what a lagging-survivor and a premature run prove (CI's run)
COMBINED = ("lagging-premature",)


@dataclass
class RunResult:
    run: int
    seed: int
    version: str
    scenario: str
    brokers: int
    survivor: int = 0
    lost: list[int] = field(default_factory=list)
    leader: int = 0
    acked: int = 0
    held: int = 0
    ahead: str = ""  # which replica was most up to date before recovery
    grade: str = ""
    ok: bool = False
    notes: list[str] = field(default_factory=list)
    t_serve: float | None = None  # recover started -> new topic created through the broker
    t_full: float | None = None  # recover started -> three voters with equal end offsets
    t_run: float = 0.0
    graded: bool = True  # False: the cluster never started (ports taken, a starved machine)

    def line(self) -> str:
        ts = "-" if self.t_serve is None else f"{self.t_serve:.0f} s"
        tf = "-" if self.t_full is None else f"{self.t_full:.0f} s"
        return (
            f"run {self.run} seed {self.seed} kafka {self.version} {self.scenario} brokers {self.brokers}: "
            f"survivor {self.survivor} lost {self.lost} (leader was {self.leader}), {self.acked} acked, "
            f"{self.held} held, most up to date {self.ahead or '?'}; {self.grade}; serving {ts}, "
            f"3 voters {tf}; run {self.t_run:.0f} s" + (f"; notes: {'; '.join(self.notes)}" if self.notes else "")
        )


def recover_supports_replica() -> bool:
    code, out, err = qc("recover", "--help")
    return "--replica" in out


def run_once(
    work: Path,
    run: int,
    seed: int,
    version: str,
    scenario: str | None = None,
    brokers: int | None = None,
    log=print,
    base: int | None = None,
) -> RunResult:
    """One graded run in `work` (a fresh directory); the cluster is always stopped.
    `base`: the cluster's base port (default: a free one in 31001-31995, away from the
    29090-29790 the test suites' clusters use on a shared machine)."""
    rng = random.Random(seed)
    scenario = scenario or rng.choice(SCENARIOS)
    brokers = brokers or rng.choice((1, 1, 2))
    res = RunResult(run, seed, version, scenario, brokers)
    t_start = time.monotonic()
    k = Kafka(work / "kc", base or free_base_port(31000, 31990, start=31000 + 10 * rng.randrange(99)), version, brokers)
    try:
        try:
            k.start()
        except Exception as e:  # the machine, not the code under test: not graded
            res.graded = False
            lines = [ln for ln in str(e).splitlines() if "ERROR" in ln or "failed" in ln]
            res.grade = "NOT RUN: the cluster did not start: " + " / ".join(x[:200] for x in lines[:2])
            raise
        _chaos(k, rng, res, log)
    except Exception as e:  # a run that breaks is graded, not raised
        if res.graded:
            res.grade, res.ok = f"FAILED: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}", False
        elif not res.grade:
            res.grade = str(e).splitlines()[0][:400]
    finally:
        k.stop()
        res.notes += k.notes
    if res.survivor:
        _grade_files(k, res)
    res.t_run = time.monotonic() - t_start
    log(res.line())
    return res


def _chaos(k: Kafka, rng: random.Random, res: RunResult, log):
    leader, epoch = k.leader()
    res.leader = leader
    followers = [i for i in (1, 2, 3) if i != leader]
    if res.scenario in ("leader-survives", "forgotten-broker"):
        survivor = leader
    else:
        survivor = rng.choice(followers)
    lost = sorted(i for i in (1, 2, 3) if i != survivor)
    res.survivor, res.lost = survivor, lost
    wl = Workload(k, rng, prefix=f"r{res.run}")
    warm = rng.randint(2, 4)
    wl.start(limit=40)
    if not wl.wait_acked(warm, 240):
        # before any fault: the cluster does not serve (a starved machine); recover was not exercised
        res.graded = False
        raise AssertionError(
            f"NOT RUN: the workload got {warm} acknowledgements in 240 s before any fault ({wl.summary()})"
        )
    if res.scenario in ("lagging-survivor", "forgotten-broker", "lagging-premature"):
        # the survivor freezes; the others go on committing what the broker fetches
        k.freeze(survivor)
        if not wl.wait_acked(rng.randint(2, 4), 240):
            raise AssertionError(f"workload with {survivor} frozen: no progress ({wl.summary()})")
    # a random moment, inside an operation or between two
    time.sleep(rng.uniform(0, 4))
    frozen_lost = None
    if res.scenario in ("premature", "lagging-premature"):
        # the operator's mistake: one 'lost' voter is only frozen when recover runs
        frozen_lost = rng.choice(lost)
        k.freeze(frozen_lost)
        for i in lost:
            if i != frozen_lost:
                k.kill(i)
    else:
        for i in lost:
            k.kill(i)
    wl.finish()
    k.kill(survivor)
    for b in k.brokers:
        k.kill(b)
    res.acked = sum(1 for o in wl.ops if o.acked)
    log(
        f"  run {res.run}: {res.scenario}, leader {leader} epoch {epoch}, survivor {survivor}, lost {lost}; "
        f"workload: {wl.summary()}"
    )

    # what the surviving replicas hold (the files, before anything touches them)
    surviving = {survivor: k.data(survivor), **{b: k.data(b) for b in k.brokers}}
    held = [held_changes(d) for d in surviving.values()]
    checks, not_held = expected_state(wl.ops, held)
    res.held = len(checks)
    ends = {n: state_end(d) for n, d in surviving.items()}
    best = max(ends.values())
    res.ahead = ",".join(str(n) for n, e in ends.items() if e == best) + f" (epoch {best[0]}, end {best[1]})"
    if not_held:
        res.notes.append("acked but held by no surviving replica: " + ", ".join(not_held))

    # follow docs/recovery.md
    sdir = k.data(survivor)
    replicas = [a for b in k.brokers for a in ("--replica", k.data(b))] if recover_supports_replica() else []
    if res.scenario == "forgotten-broker":
        replicas = []
    if frozen_lost is None:
        for i in lost:
            shutil.rmtree(k.data(i))
    code, out, err = qc("state", sdir, *[k.data(b) for b in k.brokers])
    t0 = time.monotonic()
    before = {n: tree_hash(d) for n, d in surviving.items()}
    cmd = ["recover", sdir, *replicas, "--lost-voters", ",".join(map(str, lost)), "--apply", "-o", "json"]
    code, out, err = qc(*cmd, timeout=300)
    if frozen_lost is not None:
        doc = _json(out)
        refused = (doc or {}).get("plan", {}).get("refused")
        changed = [n for n, d in surviving.items() if tree_hash(d) != before[n]]
        if code != 1 or not refused or changed:
            res.grade = (
                f"FAILED: recover with voter {frozen_lost} frozen (alive) was not refused cleanly "
                f"(exit {code}, refused {refused!r}, changed {changed})"
            )
            return
        res.notes.append(f"refused while {frozen_lost} was frozen: {refused}")
        k.kill(frozen_lost)
        for i in lost:
            shutil.rmtree(k.data(i))
        t0 = time.monotonic()
        code, out, err = qc(*cmd, timeout=300)
    doc = _json(out)
    if code == 1 and doc and doc.get("plan", {}).get("refused"):
        changed = [n for n, d in surviving.items() if tree_hash(d) != before[n]]
        res.grade = f"refused ({doc['plan']['refused']})"
        res.ok = not changed
        if changed:
            res.grade += f"; FAILED: files changed {changed}"
        return
    if code != 0:
        raise AssertionError(f"recover exit {code}: {(err or out)[-500:]}")
    if doc and doc.get("plan", {}).get("replicas"):
        res.notes.append(
            "plan: "
            + "; ".join(
                f"{r.get('node_id')} {r.get('action')}" + (f" loses {r['loses']}" if r.get("loses") else "")
                for r in doc["plan"]["replicas"]
            )
        )

    problems = []
    p = k.start_node(survivor)
    if p.returncode != 0:
        raise AssertionError(f"survivor {survivor} did not start: {(p.stderr or p.stdout)[-600:]}")
    until(
        "the survivor leads alone",
        lambda: (lambda d: d if d and d.get("leaderId") == survivor else None)(k.status(survivor)),
        90,
    )
    for b in k.brokers:
        p = k.start_node(b)
        logged = k.log_since_mark(b) if p.returncode != 0 else ""
        if p.returncode != 0 and not re.search(r"^\[[^\]]+\] (ERROR|FATAL) ", logged, re.M):
            # a JVM gone with no error logged (CI saw it once on a loaded machine) says
            # nothing about the recovery: start it once more, as launch() does, and note it
            tail = " / ".join(logged.splitlines()[-3:])
            res.notes.append(f"broker {b} died during startup with no error logged ({tail}): started again")
            p = k.start_node(b)
        if p.returncode != 0:
            logged = k.log_since_mark(b)
            problems.append(
                f"broker {b} did not start: "
                + "; ".join(fatal_lines(logged)[:2] or [(p.stderr or p.stdout)[-300:], *logged.splitlines()[-20:]])
            )
    if problems:
        res.grade = "FAILED: " + "; ".join(problems)
        return
    # the cluster serves: a new topic through the broker
    new = f"r{res.run}-after"
    until(
        "a new topic created",
        lambda: (
            k.tool(
                "kafka-topics",
                [
                    "--bootstrap-server",
                    k.bootstrap,
                    "--create",
                    "--topic",
                    new,
                    "--partitions",
                    "1",
                    "--replication-factor",
                    "1",
                ],
                60,
            ).returncode
            == 0
        ),
        90,
        every=2,
    )
    res.t_serve = time.monotonic() - t0

    # grow back
    addr = k.addr(survivor)
    for i in lost:
        code, out, err = qc(
            "bootstrap", "format", "-c", k.conf(i), "-t", k.cluster_id, "--no-initial-controllers", "--apply"
        )
        if code != 0:
            raise AssertionError(f"bootstrap format {i}: {err or out}")
        p = k.start_node(i)
        if p.returncode != 0:
            raise AssertionError(f"controller {i} did not start: {(p.stderr or p.stdout)[-600:]}")

        def add():
            code, out, err = qc(
                "add-controller", "--bootstrap-controller", addr, "--command-config", k.conf(i), timeout=60
            )
            return out if code == 0 else None

        until(f"add-controller {i} accepted", add, 150, every=2)
        until(
            f"controller {i} is a voter",
            lambda: i in [v["id"] for v in (k.status(survivor) or {}).get("currentVoters", [])],
            60,
        )

    def caught_up():
        code, out, err = qc("describe", "replication", "--bootstrap-controller", addr, "-o", "json", timeout=30)
        if code != 0:
            return None
        rows = [r for r in json.loads(out)["replicas"] if r["status"] in ("Leader", "Follower")]
        ends = {r["nodeId"]: r["logEndOffset"] for r in rows}
        return ends if sorted(ends) == [1, 2, 3] and len(set(ends.values())) == 1 else None

    until("three voters with equal end offsets", caught_up, 120, every=2)
    res.t_full = time.monotonic() - t0

    # grading: acknowledged and held changes, through the broker
    def settled():
        seen = observed_state(k)
        if seen is None or new not in seen[0]:
            return None
        return seen

    seen = until("the broker describes the topics", settled, 90, every=2)
    problems += grade_changes(wl.ops, checks, seen)
    for node in (1, 2, 3, *k.brokers):
        problems += [f"{k.name(node)}: {x}" for x in fatal_lines(k.log_since_mark(node))[:3]]
    st = k.run("status", check=False)
    if st.returncode != 0:
        problems.append("not every node runs: " + st.stdout.strip().replace("\n", "; "))
    if problems:
        res.grade = "FAILED: " + "; ".join(problems)
    else:
        res.grade, res.ok = "recovered", True


def _grade_files(k: Kafka, res: RunResult):
    """After the stop: log matching across every replica's files, verify and state clean."""
    dirs = {k.name(n): k.data(n) for n in (1, 2, 3, *k.brokers) if k.data(n).exists()}
    try:
        problems = [f"log matching: {c}" for c in log_matching_clashes(dirs)]
    except AssertionError as e:  # nothing to compare: a failure, not a pass
        problems = [str(e)]
    for n, d in dirs.items():
        code, out, err = qc("verify", d)
        if code != 0:
            problems.append(f"verify {n}: exit {code}: {(out + err).strip().splitlines()[-1][:200]}")
    try:
        if state_clashes(list(dirs.values())):
            problems.append("state reports a log-matching clash")
    except AssertionError as e:
        problems.append(str(e))
    if problems:
        res.ok = False
        res.grade = ("FAILED: " if not res.grade.startswith("FAILED") else res.grade + "; ") + "; ".join(problems)


def _json(text: str) -> dict | None:
    try:
        return json.loads(text)
    except ValueError:
        return None


# -- the table ----------------------------------------------------------------------------------


def table(results: list[RunResult]) -> str:
    rows = [
        "| run | Kafka | seed | scenario | brokers | leader | survivor | most up to date before | acked / held "
        "| grade | serving after | 3 voters after |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rows.append(
            f"| {r.run} | {r.version} | {r.seed} | {r.scenario} | {r.brokers} | {r.leader} | {r.survivor} | "
            f"{r.ahead} | {r.acked} / {r.held} | {r.grade.replace('|', '/')} | "
            f"{'-' if r.t_serve is None else f'{r.t_serve:.0f} s'} | "
            f"{'-' if r.t_full is None else f'{r.t_full:.0f} s'} |"
        )
    return "\n".join(rows)


def summary(results: list[RunResult]) -> str:
    rows = [
        "| Kafka | runs | graded | recovered | refused | failed | serving after (median, max) | 3 voters after "
        "(median, max) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for v in sorted({r.version for r in results}):
        every = [r for r in results if r.version == v]
        rs = [r for r in every if r.graded]
        rec = [r for r in rs if r.ok and r.grade == "recovered"]
        ref = [r for r in rs if r.ok and r.grade.startswith("refused")]
        fail = [r for r in rs if not r.ok]

        def med(xs):
            xs = sorted(x for x in xs if x is not None)
            return "-" if not xs else f"{xs[len(xs) // 2]:.0f} s, {xs[-1]:.0f} s"

        rows.append(
            f"| {v} | {len(every)} | {len(rs)} | {len(rec)} | {len(ref)} | {len(fail)} | "
            f"{med(r.t_serve for r in rec)} | {med(r.t_full for r in rec)} |"
        )
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=1, help="number of the first run (to repeat one run of a series)")
    ap.add_argument("--kafka", default="4.1", choices=sorted(VERSIONS))
    ap.add_argument(
        "--scenario",
        choices=SCENARIOS + MISTAKES + COMBINED,
        help="every run in this scenario (default: seeded choice)",
    )
    ap.add_argument("--out", help="write the markdown tables here too")
    ap.add_argument("--work", help="keep the runs' directories here (default: a temporary one, deleted)")
    a = ap.parse_args(argv)
    why = skip_reason(a.kafka)
    if why:
        print(f"recover_chaos: {why}", file=sys.stderr)
        return 2
    root = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="recover-chaos-"))
    results = []
    scenarios = list(SCENARIOS)
    try:
        for i in range(a.start - 1, a.start - 1 + a.runs):
            seed = a.seed * 1000 + i
            # every scenario comes round: seeded order, then seeded choices inside a run
            sc = a.scenario or scenarios[(a.seed + i) % len(scenarios)]
            d = root / f"run{i + 1}"
            d.mkdir(parents=True, exist_ok=True)
            r = run_once(d, i + 1, seed, a.kafka, sc, log=lambda s: print(s, flush=True))
            results.append(r)
            if not a.work and r.ok:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        text = table(results) + "\n\n" + summary(results) + "\n"
        print(text)
        if a.out:
            Path(a.out).write_text(text)
    return 0 if all(r.ok for r in results if r.graded) else 1


if __name__ == "__main__":
    sys.exit(main())
