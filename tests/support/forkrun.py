"""Run `quorumctl ARGS` as a process of its own without starting an interpreter:
the test process forks and the child calls the entry point, as the console
script would, with fds 0-2 of its own (stdout a pipe or a pseudo-terminal,
stderr a pipe), fresh `sys.std*` over them and the environment a shell would
give it. What a child does cannot touch the test process (exit codes, signals,
rlimits, file descriptors, a crash), and a run costs the command's own work,
not the ~0.4 CPU-s of an interpreter importing Typer and Rich.

The children are forked from a server process (started once, at the first run)
that imported the package and nothing else: forking the test process itself,
with pytest and every test module in it (~250 MB), cost ~20 ms of system CPU a
run in page tables alone, more than most commands take.

What it does not show is the console script itself (its import of the
package, the interpreter's start-up): the CLI matrix keeps a sample of runs of
the installed script for that (tests/cli/test_cli_matrix.py, REAL_PROCESS)."""

from __future__ import annotations

import atexit
import fcntl
import functools
import io
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Client, Listener


@dataclass
class Forked:
    code: int  # the exit status; -N when killed by signal N
    out: bytes  # everything written to stdout (pipe or terminal)
    err: bytes
    cpu: float = 0.0  # CPU seconds the child used


@functools.cache
def _warm() -> None:
    """Import what a command imports lazily and build the command tree and each command's
    branch of it, once in the server: each child then starts with them, as copy-on-write
    pages."""
    import importlib
    import pkgutil

    import quorumctl
    from quorumctl.cli.main import command_for, root_command

    for m in pkgutil.walk_packages(quorumctl.__path__, "quorumctl."):
        if not (m.name.endswith(".__main__") or m.name.startswith("quorumctl.spark.")):
            importlib.import_module(m.name)
    root_command()
    for name in root_command().commands:  # main() runs a command on its branch of the tree
        command_for([name])


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _child(args, out_fd: int, err_fd: int, env: dict, tty: bool, memory: int | None, cpu: int | None, cwd: str) -> None:
    """In the child: never returns."""
    code = 70
    try:
        os.setsid()
        os.chdir(cwd)
        os.dup2(os.open(os.devnull, os.O_RDONLY) if not tty else out_fd, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.closerange(3, 256)
        os.environ.clear()
        os.environ.update(env)
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGALRM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as the interpreter sets it
        # the streams a fresh interpreter would make (the test's are pytest's captures)
        sys.stdin = io.TextIOWrapper(
            io.FileIO(0, "r", closefd=False), encoding=sys.__stdin__.encoding, errors=sys.__stdin__.errors
        )
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False),
            encoding=sys.__stdout__.encoding,
            errors=sys.__stdout__.errors,
            line_buffering=tty,
            write_through=False,
        )
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False),
            encoding=sys.__stderr__.encoding,
            errors=sys.__stderr__.errors,
            line_buffering=True,
        )
        sys.argv = ["quorumctl", *map(str, args)]
        if memory is not None:  # the command's own growth, over what the test process already maps
            limit = _vm_bytes() + memory
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        if cpu is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        from quorumctl.cli.main import main

        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except BrokenPipeError:
                code = 120  # as the interpreter, failing to flush at exit
    except BaseException:  # shown to the test as stderr, as an interpreter would
        import traceback

        try:
            os.write(2, traceback.format_exc().encode())
        except OSError:
            pass
    os._exit(code)


def run(
    args,
    *,
    tty: bool = False,
    cols: int = 200,
    rows: int = 100,
    env: dict | None = None,
    memory: int | None = None,
    cpu: int | None = None,
    timeout: float = 120,
    keep_out: bool = True,
) -> Forked:
    """`quorumctl ARGS` in a forked child, in the test's working directory and
    environment. tty: stdout (and stdin) a pseudo-terminal of cols x rows,
    TERM=xterm-256color; memory: bytes of address space it may add; cpu: seconds of
    CPU; a run past `timeout` is killed (-9). keep_out=False reads stdout and drops it."""
    env = {
        k: v
        for k, v in (os.environ if env is None else env).items()
        if k not in ("COLUMNS", "LINES", "PYTEST_CURRENT_TEST") and not (tty and k == "NO_COLOR")
    }
    if tty:
        env.setdefault("TERM", "xterm-256color")
    for f in (sys.stdout, sys.stderr):  # nothing buffered in the test may be written twice
        f.flush()
    request = dict(
        args=[str(a) for a in args],
        tty=tty,
        cols=cols,
        rows=rows,
        env=env,
        memory=memory,
        cpu=cpu,
        timeout=timeout,
        keep_out=keep_out,
        cwd=os.getcwd(),
    )
    with _server().connect() as conn:
        conn.send(request)
        return conn.recv()


def _run_here(
    args: list[str],
    tty: bool,
    cols: int,
    rows: int,
    env: dict,
    memory: int | None,
    cpu: int | None,
    timeout: float,
    keep_out: bool,
    cwd: str,
) -> Forked:
    """run(), in the server: fork, feed nothing, read both streams until they close, wait."""
    if tty:
        master, out_w = os.openpty()
        fcntl.ioctl(out_w, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        out_r = master
    else:
        out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        _child(args, out_w, err_w, env, tty, memory, cpu, cwd)
    os.close(out_w)
    os.close(err_w)
    out, err = bytearray(), bytearray()
    open_fds = {out_r, err_r}
    deadline = time.monotonic() + timeout
    killed = False
    try:
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0 and not killed:
                os.kill(pid, signal.SIGKILL)
                killed = True
            ready, _, _ = select.select(list(open_fds), [], [], max(left, 0.1) if not killed else 1)
            for fd in ready:
                try:
                    data = os.read(fd, 1 << 20)
                except OSError:  # EIO: the terminal's last writer is gone
                    data = b""
                if not data:
                    open_fds.discard(fd)
                elif fd == err_r:
                    err += data
                elif keep_out:
                    out += data
    finally:
        os.close(out_r)
        os.close(err_r)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return Forked(code, bytes(out), bytes(err), usage.ru_utime + usage.ru_stime)


# -- the server the children are forked from ---------------------------------------------------


class _Server:
    """`python -c 'import forkrun; forkrun._serve()'` on the test's sys.path: it imports the
    package (_warm), listens on a Unix socket of its own and runs each request (a
    connection: a request dict, then the Forked) in a thread. It ends when its stdin,
    a pipe from the test process, closes (the test process ended, however it did)."""

    def __init__(self) -> None:
        key = os.urandom(16)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import forkrun; forkrun._serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)),
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(key.hex().encode() + b"\n")
        self.proc.stdin.flush()
        address = self.proc.stdout.readline().decode().strip()
        if not address:
            raise RuntimeError(f"forkrun's server did not start (exit {self.proc.wait()})")
        self.address, self.key = address, key
        atexit.register(self.stop)

    def stop(self) -> None:
        """Close its stdin and wait for it (its CPU, and its children's, is the test run's)."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def connect(self):
        return Client(self.address, family="AF_UNIX", authkey=self.key)


_lock = threading.Lock()
_servers: dict[int, _Server] = {}  # by pid: a forked test process starts its own


def _server() -> _Server:
    with _lock:
        s = _servers.get(os.getpid())
        if s is None or s.proc.poll() is not None:
            s = _servers[os.getpid()] = _Server()
        return s


def _serve() -> None:
    import tempfile

    key = bytes.fromhex(sys.stdin.readline().strip())
    _warm()
    where = tempfile.mkdtemp(prefix="forkrun-")
    listener = Listener(os.path.join(where, "socket"), family="AF_UNIX", authkey=key)

    def handle(conn) -> None:
        with conn:
            conn.send(_run_here(**conn.recv()))

    def accept() -> None:
        while True:
            conn = listener.accept()
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdout.write(f"{listener.address}\n")
    sys.stdout.flush()
    sys.stdin.read()  # EOF: the test process is gone
    listener.close()  # removes the socket
    os.rmdir(where)
    os._exit(0)
