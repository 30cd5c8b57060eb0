"""Real Spark daemons for the tests, started from PySpark's own distribution on
127.0.0.1: a standalone cluster (a Master and Workers, each its own JVM started
with `spark-class`, each Worker launching its own executor JVM and Python
workers) and a Spark Connect server (`sbin/start-connect-server.sh`).

Every daemon runs niced in its own process group, so a test can kill one
Worker with everything it started (executor, Python workers), as a lost
machine would, and teardown leaves nothing behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


QUORUMCTL = str(BIN / "quorumctl")
# the order that makes two exports' rows comparable
SORT = [
    ("source_file", "ascending"),
    ("batch_position", "ascending"),
    ("record_index", "ascending"),
    ("row_kind", "ascending"),
]


def needs_java():
    """The mark of the modules that start Spark JVMs (tests/conftest.py skips them without Java)."""
    import pytest

    return pytest.mark.spark


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def daemon_env(work: Path) -> dict:
    """The environment of every daemon and of the driver: loopback only, logs
    and scratch space under `work`, the executors' Python is this one (with
    quorumctl, pyarrow, numpy)."""
    return {
        **os.environ,
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(work / "logs"),
        "SPARK_PID_DIR": str(work / "pids"),
        "SPARK_LOCAL_DIRS": str(work / "local"),
        "SPARK_DAEMON_MEMORY": "384m",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }


def _wait_for(path: Path, text: str, proc: subprocess.Popen | None, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.3)
    log = path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"
    raise RuntimeError(f"{text!r} not seen in {path} within {timeout:.0f} s:\n{log}")


class Standalone:
    """A standalone Spark cluster: one Master, `workers` Workers with one core each."""

    def __init__(self, work: Path, workers: int = 2, worker_memory: str = "1g"):
        self.work = work
        self.env = daemon_env(work)
        for d in ("logs", "pids", "local"):
            (work / d).mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}
        self._start(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(free_port()),
            ],
        )
        _wait_for(self.logs["master"], "I have been elected leader", self.procs["master"], 180)
        for i in range(workers):
            self.start_worker(i, worker_memory)
        for i in range(workers):
            self.wait_registered(i)

    def _start(self, name: str, args: list[str]):
        log = self.work / "logs" / f"{name}.out"
        self.logs[name] = log
        with open(log, "wb") as f:
            self.procs[name] = subprocess.Popen(
                ["nice", "-n", "10", str(BIN / "spark-class"), *args],
                stdout=f,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                start_new_session=True,
            )

    def start_worker(self, i: int, memory: str):
        wd = self.work / f"worker{i}"
        wd.mkdir(exist_ok=True)
        self._start(
            f"worker{i}",
            [
                "org.apache.spark.deploy.worker.Worker",
                self.url,
                "--host",
                "127.0.0.1",
                "--cores",
                "1",
                "--memory",
                memory,
                "--webui-port",
                str(free_port()),
                "--work-dir",
                str(wd),
            ],
        )

    def wait_registered(self, i: int):
        _wait_for(self.logs[f"worker{i}"], "Successfully registered with master", self.procs[f"worker{i}"], 180)

    def kill(self, name: str):
        """SIGKILL a daemon and everything it started (its process group): a lost machine."""
        p = self.procs.pop(name)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(30)

    def driver_conf(self) -> list[str]:
        """--spark-conf settings for a small job on this cluster."""
        return [
            "spark.ui.enabled=false",
            "spark.executor.memory=512m",
            "spark.executor.cores=1",
            "spark.driver.host=127.0.0.1",
            "spark.driver.bindAddress=127.0.0.1",
        ]

    def stop(self):
        for name in list(self.procs):
            p = self.procs.pop(name)
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)


class ConnectServer:
    """A Spark Connect server (`sbin/start-connect-server.sh`, local[2]) on a free port.
    The script daemonises; it is stopped with the matching stop script."""

    def __init__(self, work: Path, master: str = "local[2]"):
        self.work = work
        self.env = daemon_env(work)
        for d in ("logs", "pids", "local"):
            (work / d).mkdir(parents=True, exist_ok=True)
        self.env["SPARK_IDENT_STRING"] = f"quorumctl-test-{os.getpid()}"
        self.env["SPARK_NICENESS"] = "10"
        self.env["SPARK_DAEMON_MEMORY"] = "1g"  # the server is a driver: Spark wants 450 MB or more
        self.port = free_port()
        self.url = f"sc://127.0.0.1:{self.port}"
        sbin = spark_home() / "sbin"
        r = subprocess.run(
            [
                "bash",
                str(sbin / "start-connect-server.sh"),
                "--master",
                master,
                "--driver-memory",
                "1g",
                "--conf",
                f"spark.connect.grpc.binding.port={self.port}",
                "--conf",
                "spark.connect.grpc.binding.address=127.0.0.1",
                "--conf",
                "spark.ui.enabled=false",
                "--conf",
                f"spark.pyspark.python={sys.executable}",
            ],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if r.returncode != 0:
            raise RuntimeError(f"start-connect-server.sh failed: {r.stdout}{r.stderr}")
        logs = sorted((work / "logs").glob("*SparkConnectServer*.out"))
        if not logs:
            raise RuntimeError(f"no Connect server log in {work / 'logs'}: {r.stdout}{r.stderr}")
        self.log = logs[-1]
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if 'Exception in thread "main"' in self.log.read_text(errors="replace"):
                    break
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(
            f"Connect server not listening on {self.port}:\n{self.log.read_text(errors='replace')[-3000:]}"
        )

    def stop(self):
        subprocess.run(
            ["bash", str(spark_home() / "sbin" / "stop-connect-server.sh")],
            env=self.env,
            capture_output=True,
            timeout=120,
        )


def which_submit() -> str | None:
    return shutil.which("spark-submit", path=str(BIN))
