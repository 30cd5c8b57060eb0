"""A lab of real hosts for real-Kafka tests (issue 33): every Kafka node in its own
Linux network namespace, with its own address on a shared bridge and host names
that resolve through that namespace's own hosts file, so a test can cut links,
firewall the operator, move names and addresses, as happens between real hosts.

    lab = Lab(tmp_dir).start()          # Kafka 4.3: controllers c1..c3, broker b4; dynamic quorum
    try:
        lab.quorumctl("describe", "health", "--bootstrap-controller", lab.controllers)
    finally:
        lab.close()

(`lab_fixture()` makes the module-scoped fixture: one lab per module, always closed.)

Hosts. `c1`, `c2`, `c3` (controllers, node ids 1-3, `CONTROLLER://cN:9093`), `b4`
(the broker, id 4, `PLAINTEXT://b4:9092`) and `op`, the operator's bastion: a
namespace of its own on the same bridge, with no Kafka in it, where
`lab.quorumctl(...)` and `lab.kafka_tool(...)` run by default (`host="c1"` runs
them on a node's host instead). Every host is one namespace `qlab<pid>-<host>`
with one interface, `eth0`, on the subnet 10.33.0.0/24 (c1 .1 .. b4 .4, op .100)
of a bridge that lives in a namespace of its own (`qlab<pid>-sw`): nothing is
added to the machine's own network, and two labs never share a link. The nodes
listen on 0.0.0.0 and advertise their names; voters, bootstrap lists and
every address the tests give are names (`lab.controllers` is
"c1:9093,c2:9093,c3:9093", `lab.bootstrap` "b4:9092"). The JVMs cache a name
for 1 s (`-Dsun.net.inetaddr.ttl=1`), so a changed name is seen at once.
`lab.run(host, argv)` and `lab.spawn(host, argv, stdout)` run anything on a
host; `lab.leader()` is (leader id, epoch) as the operator sees it;
`lab.conf(n)`, `lab.data(n)`, `lab.log(n)` are a node's files.

Names. Each host reads its own hosts file (`/etc/netns/<ns>/hosts`, which
`ip netns exec` mounts over /etc/hosts) and a resolv.conf naming no reachable
server, so a name not in the file fails at once (no DNS wait).
    lab.resolve("c2", "10.33.0.50")               # c2 now means .50, for everyone
    lab.resolve("c2", None, seen_by=["op"])       # the operator can no longer resolve c2
    lab.resolve("c2")                             # back to c2's own address
A name absent now and present later is "resolves late": call resolve() again
when the time comes (or `resolve_later(name, seconds)`).

Network faults. A cut is a set of iptables rules in the hosts' namespaces
(the rule set is written again from `lab.cuts` on every change, so a cut
follows a host that moves). Every cut returns a handle for `heal(handle)`;
`heal()` undoes them all.
    lab.cut("c2")                         # c2 cut off from every other host, the operator too, both ways
    lab.cut("c1", ["c2", "c3"])           # only the links c1-c2 and c1-c3 (c1 still reaches b4, op)
    lab.cut("c1", "c2", oneway=True)      # c1 can no longer open connections to c2 (and the ones it
                                          # had go silent); c2 still connects to c1
    lab.cut(OPERATOR, "c2", oneway=True, reject=True)
                                          # the operator's connections to c2 are answered by a TCP
                                          # reset (iptables REJECT --reject-with tcp-reset), which
                                          # looks exactly like "nothing listens" from op
    lab.cut(OPERATOR, "c2", oneway=True)  # the operator's packets to c2 are dropped (a timeout)
    lab.operator_blocked(["c2", "c3"], reject=True)   # the same for several nodes, one handle
    lab.block_requests("b4", ["c1", "c2", "c3"], 63)  # b4's BrokerHeartbeat requests dropped, its
                                          # metadata fetches (api key 1) still answered
Without `oneway` a cut drops every packet between the two hosts (with
`reject=True`: TCP answered by resets both ways). A one-way cut works on
connections, as TCP sees a firewall: dropping packets of one direction only
would stall both directions of every connection anyway.

"Nodes X, Y alive and electing among themselves while the operator cannot reach
them": `lab.operator_blocked(["c2", "c3"], reject=...)`: c2 and c3 keep their
links to each other and to c1 and b4, so they run, vote and elect as before;
only the operator's own connections to them fail (reset or silence). What the
broker and c1 see of them is unchanged: a check that asks them (a broker
forwards DescribeQuorum to the leader) still finds them alive. For `recover`
on a survivor: `lab.kill(1)`, then `lab.quorumctl("recover", lab.data(1), ...)`
(namespaces separate networks only: every host sees the same files, so the
operator on `op` works on c1's log dir as on c1's own host; `host="c1"` runs
it in c1's network instead, where `lab.cut("c1", ["c2", "c3"], oneway=True,
reject=True)` is the same firewall seen from there).

Nodes. `freeze(n)` (SIGSTOP), `thaw(n)`, `kill(n)` (SIGKILL), `start_node(n)`
(and wait for "Kafka Server started"); `start_node(n, new_directory=True)`
wipes the node's log dir and formats it again (a replaced disk: a new
directory id, joining as an observer in a dynamic quorum); `move(n, ip)` gives
a host a new address (and, unless names=False, every host's name for it):
with `kill`, `move` and `start_node`, a node restarts on a new address. Node
names and ids are interchangeable (`"c2"` or `2`).

Clean-up. `close()` kills every process started in the lab's namespaces (the
JVMs first), deletes the namespaces (with them the veth pairs, the bridge and
the iptables rules) and their /etc/netns directories; it runs at interpreter
exit too. The JVMs also die with the test process (PR_SET_PDEATHSIG). A lab
left by a process that no longer exists (a crashed or killed run) is tidied
when the next lab starts (`tidy_leftovers`).

Needs root, `ip` (iproute2) and `iptables`; `skip_reason()` says what is
missing (the tests skip with it; under CI=true a skip fails). Kafka 4.3 and
Java 17+ as for the other real-Kafka tests.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import recover_chaos  # tools/ is on pytest's pythonpath (Kafka homes, skip_reason, until)
from kafka41 import RELEASE_VERSION, tool_env

ROOT = Path(__file__).resolve().parents[2]

OPERATOR = "op"
SUBNET = "10.33.0"
OPERATOR_IP = f"{SUBNET}.100"
CONTROLLER_PORT, BROKER_PORT = 9093, 9092
NS_PREFIX = "qlab"
until = recover_chaos.until


def _missing_tools() -> list[str]:
    return [t for t in ("ip", "iptables", "iptables-restore") if shutil.which(t) is None]


def skip_reason(version: str | None = "4.3") -> str | None:
    """Why the lab cannot run here, or None (version None: a lab without Kafka)."""
    if os.geteuid() != 0:
        return "the lab needs root (network namespaces, veth links, iptables)"
    missing = _missing_tools()
    if missing:
        return f"the lab needs {', '.join(missing)} (Debian: iproute2, iptables; .ci/run installs them)"
    return _netns_works() or (None if version is None else recover_chaos.skip_reason(version))


@functools.lru_cache(maxsize=None)
def _netns_works() -> str | None:
    """None when a network namespace with iptables rules can be made here (a container
    without CAP_SYS_ADMIN / CAP_NET_ADMIN cannot), else why not."""
    ns = f"{NS_PREFIX}{os.getpid()}-probe"
    try:
        for argv in (
            ["ip", "netns", "add", ns],
            ["ip", "netns", "exec", ns, "iptables", "-A", "INPUT", "-j", "ACCEPT"],
        ):
            p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            if p.returncode != 0:
                return f"the lab cannot make network namespaces here: {' '.join(argv)}: {p.stderr.strip()}"
        return None
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


@dataclass
class Host:
    name: str
    ip: str
    node_id: int | None = None  # None: the operator
    role: str | None = None  # controller | broker | None
    proc: subprocess.Popen | None = None
    dir_id: str | None = None  # the directory id it was formatted with

    @property
    def port(self) -> int | None:
        return {"controller": CONTROLLER_PORT, "broker": BROKER_PORT}.get(self.role)

    @property
    def addr(self) -> str:
        """host:port by name (what Kafka advertises)."""
        return f"{self.name}:{self.port}"


@dataclass(frozen=True)
class Cut:
    a: str
    b: str
    oneway: bool
    reject: bool
    api_key: int | None = None  # only a's requests of this Kafka API to b's listener


@dataclass
class CutHandle:
    cuts: list[Cut] = field(default_factory=list)


def _die_with_parent():  # in the child, before exec: SIGKILL when the test process dies
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _sh(*argv, check: bool = True, input: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, input=input, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"lab: {' '.join(map(str, argv))} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def _netns_names() -> list[str]:
    p = _sh("ip", "netns", "list", check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def _delete_namespace(ns: str) -> None:
    """Kill what runs in `ns`, delete it and its /etc/netns directory."""
    for _ in range(3):
        pids = [int(x) for x in _sh("ip", "netns", "pids", ns, check=False).stdout.split() if x.isdigit()]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.3)
    _sh("ip", "netns", "del", ns, check=False)
    shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)


def tidy_leftovers() -> list[str]:
    """Delete the namespaces (and what runs in them) of labs whose process is gone:
    a run that crashed or was killed before its clean-up. Returns their names."""
    gone = []
    for ns in _netns_names():
        m = re.fullmatch(rf"{NS_PREFIX}(\d+)-\w+", ns)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            _delete_namespace(ns)
            gone.append(ns)
    if Path("/etc/netns").is_dir():
        for d in Path("/etc/netns").iterdir():
            m = re.fullmatch(rf"{NS_PREFIX}(\d+)-\w+", d.name)
            if m and not Path(f"/proc/{m.group(1)}").exists():
                shutil.rmtree(d, ignore_errors=True)
    return gone


class Lab:
    """A Kafka cluster of `controllers` controllers (c1..) and `brokers` brokers
    (b<N+1>..), each host in its own network namespace; see the module docstring."""

    _count = 0

    def __init__(
        self,
        d: Path,
        version: str = "4.3",
        dynamic: bool = True,
        controllers: int = 3,
        brokers: int = 1,
        start_timeout: float = 180,
    ):
        Lab._count += 1
        self.d = Path(d)
        self.version, self.dynamic, self.start_timeout = version, dynamic, start_timeout
        self.home = recover_chaos.kafka_home(version)
        # one prefix per lab: a second lab in the same process gets its own namespaces
        self.prefix = f"{NS_PREFIX}{os.getpid()}-" + ("" if Lab._count == 1 else f"l{Lab._count}")
        self.hosts: dict[str, Host] = {}
        for i in range(1, controllers + 1):
            self.hosts[f"c{i}"] = Host(f"c{i}", f"{SUBNET}.{i}", i, "controller")
        for i in range(controllers + 1, controllers + brokers + 1):
            self.hosts[f"b{i}"] = Host(f"b{i}", f"{SUBNET}.{i}", i, "broker")
        self.hosts[OPERATOR] = Host(OPERATOR, OPERATOR_IP)
        self.cuts: list[Cut] = []
        # viewer -> name -> address it resolves to (None: the name does not resolve)
        self.names: dict[str, dict[str, str | None]] = {}
        self.cluster_id: str | None = None
        self.spawned: list[subprocess.Popen] = []
        self._timers: list[threading.Timer] = []
        self._log_marks: dict[str, int] = {}
        # host name -> extra lines for its server.properties, from its next (re)start on
        self.extra_props: dict[str, list[str]] = {}
        self._up = False
        self._closed = False

    # -- layout -----------------------------------------------------------------------------
    def ns(self, host: str) -> str:
        return self.prefix + ("sw" if host == "sw" else self.host(host).name)

    def host(self, h) -> Host:
        """A host by name (`c2`, `op`) or node id (2)."""
        if isinstance(h, Host):
            return h
        if isinstance(h, int) or str(h).isdigit():
            for x in self.hosts.values():
                if x.node_id == int(h):
                    return x
        elif h in self.hosts:
            return self.hosts[h]
        raise KeyError(f"no host {h!r} in the lab (hosts: {', '.join(self.hosts)})")

    @property
    def controller_hosts(self) -> list[Host]:
        return [h for h in self.hosts.values() if h.role == "controller"]

    @property
    def broker_hosts(self) -> list[Host]:
        return [h for h in self.hosts.values() if h.role == "broker"]

    @property
    def controllers(self) -> str:
        """The controllers by name: "c1:9093,c2:9093,c3:9093"."""
        return ",".join(h.addr for h in self.controller_hosts)

    @property
    def bootstrap(self) -> str:
        """The brokers by name: "b4:9092"."""
        return ",".join(h.addr for h in self.broker_hosts)

    def conf(self, node) -> Path:
        return self.d / "conf" / f"{self.host(node).name}.properties"

    def data(self, node) -> Path:
        return self.d / "data" / self.host(node).name

    def log(self, node) -> Path:
        return self.d / "logs" / f"{self.host(node).name}.log"

    # -- the network ------------------------------------------------------------------------
    def _net_up(self) -> None:
        tidy_leftovers()
        sw = self.ns("sw")
        _sh("ip", "netns", "add", sw)
        _sh("ip", "-n", sw, "link", "add", "name", "br0", "type", "bridge")
        _sh("ip", "-n", sw, "link", "set", "br0", "up")
        for h in self.hosts.values():
            ns = self.ns(h.name)
            _sh("ip", "netns", "add", ns)
            _sh(
                "ip",
                "-n",
                sw,
                "link",
                "add",
                "name",
                f"v-{h.name}",
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                ns,
            )
            _sh("ip", "-n", sw, "link", "set", f"v-{h.name}", "master", "br0", "up")
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
            _sh("ip", "-n", ns, "addr", "add", f"{h.ip}/24", "dev", "eth0")
            _sh("ip", "-n", ns, "link", "set", "eth0", "up")
            etc = Path("/etc/netns") / ns
            etc.mkdir(parents=True, exist_ok=True)
            # no reachable name server: a name missing from the hosts file fails at once
            (etc / "resolv.conf").write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
        for viewer in self.hosts:
            self.names[viewer] = {h.name: h.ip for h in self.hosts.values()}
            self._write_hosts(viewer)
        self._apply_cuts()

    def _write_hosts(self, viewer: str) -> None:
        lines = [f"127.0.0.1\tlocalhost {os.uname().nodename}", "::1\tlocalhost ip6-localhost"]
        lines += [f"{ip}\t{name}" for name, ip in sorted(self.names[viewer].items()) if ip]
        # written in place, in one write: a running process's /etc/hosts is a bind mount of this inode
        fd = os.open(Path("/etc/netns") / self.ns(viewer) / "hosts", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            data = ("\n".join(lines) + "\n").encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
        finally:
            os.close(fd)

    def resolve(self, name: str, ip: str | None = "", seen_by=None) -> None:
        """Make `name` resolve to `ip` (None: not at all; "" (default): the host's
        own address) in the hosts files of `seen_by` (default: every host)."""
        if ip == "":
            ip = self.host(name).ip
        for viewer in [self.host(v).name for v in seen_by] if seen_by else list(self.names):
            self.names[viewer][name] = ip
            self._write_hosts(viewer)

    def resolve_later(self, name: str, seconds: float, ip: str | None = "", seen_by=None) -> threading.Timer:
        """resolve(name, ip, seen_by) after `seconds` (a name that resolves late)."""
        t = threading.Timer(seconds, self.resolve, (name, ip, seen_by))
        t.daemon = True
        self._timers.append(t)
        t.start()
        return t

    def move(self, host, ip: str, names: bool = True) -> None:
        """Give `host` the address `ip` (its name follows in every hosts file unless
        names=False); cuts follow it. A running JVM keeps listening (on 0.0.0.0)."""
        h = self.host(host)
        old, h.ip = h.ip, ip
        ns = self.ns(h.name)
        # the old one first: deleting a primary address deletes its secondaries too
        _sh("ip", "-n", ns, "addr", "del", f"{old}/24", "dev", "eth0")
        _sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", "eth0")
        if names:
            self.resolve(h.name, ip)
        self._apply_cuts()

    def spare_ip(self) -> str:
        """An address on the lab's subnet that no host has."""
        used = {h.ip for h in self.hosts.values()}
        return next(f"{SUBNET}.{i}" for i in range(50, 250) if f"{SUBNET}.{i}" not in used)

    # -- cuts -------------------------------------------------------------------------------
    def cut(self, a, b=None, *, oneway: bool = False, reject: bool = False) -> CutHandle:
        """Cut `a` off from `b` (a host or a list of hosts; None: every other host,
        the operator included). Both ways by default; `oneway`: `a` can no longer
        open connections to `b` (those it has go silent), `b` still can to `a`.
        `reject`: TCP is answered by a reset instead of silence."""
        a = self.host(a).name
        others = (
            [x for x in self.hosts if x != a]
            if b is None
            else [self.host(x).name for x in ([b] if isinstance(b, (str, int, Host)) else b)]
        )
        handle = CutHandle([Cut(a, x, oneway, reject) for x in others])
        self.cuts += handle.cuts
        self._apply_cuts()
        return handle

    def operator_blocked(self, nodes, reject: bool = False) -> CutHandle:
        """The operator's connections to `nodes` reset (reject=True) or dropped; the
        nodes keep every other link (they run and elect as before)."""
        return self.cut(OPERATOR, nodes, oneway=True, reject=reject)

    def block_requests(self, a, b, api_key: int) -> CutHandle:
        """`a`'s requests of one Kafka API (its api key: 1 Fetch, 63 BrokerHeartbeat, ...) to
        `b`'s listener dropped, every other request on every link untouched: the packet whose
        TCP payload starts with a request header of that key (`iptables -m u32`) is dropped, so
        that connection stalls and each new one sent again stalls too."""
        a = self.host(a).name
        bs = [self.host(x).name for x in ([b] if isinstance(b, (str, int, Host)) else b)]
        handle = CutHandle([Cut(a, x, True, False, api_key) for x in bs])
        self.cuts += handle.cuts
        self._apply_cuts()
        return handle

    def heal(self, handle: CutHandle | None = None) -> None:
        """Undo one cut (its handle) or every cut."""
        if handle is None:
            self.cuts = []
        else:
            self.cuts = [c for c in self.cuts if c not in handle.cuts]
        self._apply_cuts()

    def _rules(self) -> dict[str, list[str]]:
        rules: dict[str, list[str]] = {h: [] for h in self.hosts}
        # a reset must reach the host it answers: REJECT never matches a reset itself
        tcp_no_rst = "-p tcp ! --tcp-flags RST RST"
        for c in self.cuts:
            a, b = self.hosts[c.a], self.hosts[c.b]
            if c.api_key is not None:  # the u32 path: IP header length, TCP header length, then the
                # payload's bytes 4-5 (after the request's size): the request header's api key
                match = f'-m u32 --u32 "0>>22&0x3C@12>>26&0x3C@4>>16={c.api_key:#x}"'
                rules[a.name].append(f"-A OUTPUT -d {b.ip}/32 -p tcp --dport {b.port} {match} -j DROP")
                continue
            if not c.oneway:
                if c.reject:  # each side answers the other's TCP with a reset
                    rules[a.name].append(f"-A INPUT -s {b.ip}/32 {tcp_no_rst} -j REJECT --reject-with tcp-reset")
                    rules[b.name].append(f"-A INPUT -s {a.ip}/32 {tcp_no_rst} -j REJECT --reject-with tcp-reset")
                else:
                    rules[a.name].append(f"-A INPUT -s {b.ip}/32 -j DROP")
                    rules[a.name].append(f"-A OUTPUT -d {b.ip}/32 -j DROP")
                continue
            # one way: a's connections to b's listener (b's own connections to a keep working)
            if b.port is None:
                raise ValueError(f"a one-way cut towards {b.name}: it listens on nothing")
            if c.reject:
                rules[b.name].append(
                    f"-A INPUT -s {a.ip}/32 -p tcp --dport {b.port} ! --tcp-flags RST RST "
                    "-j REJECT --reject-with tcp-reset"
                )
            else:
                rules[b.name].append(f"-A INPUT -s {a.ip}/32 -p tcp --dport {b.port} -j DROP")
        return rules

    def _apply_cuts(self) -> None:
        for h, rules in self._rules().items():
            text = (
                "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
                + "".join(r + "\n" for r in rules)
                + "COMMIT\n"
            )
            _sh("ip", "netns", "exec", self.ns(h), "iptables-restore", input=text)

    # -- running things in a host ----------------------------------------------------------
    def argv(self, host, argv: list) -> list[str]:
        return ["ip", "netns", "exec", self.ns(host), *map(str, argv)]

    def run(self, host, argv: list, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
        """`argv` on `host` (its namespace and hosts file); text streams; never raises on
        a timeout (exit 124, "[timed out]" on stderr)."""
        try:
            return subprocess.run(self.argv(host, argv), capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as e:

            def s(x):
                return x.decode("utf-8", "replace") if isinstance(x, bytes) else (x or "")

            return subprocess.CompletedProcess(e.cmd, 124, s(e.stdout), s(e.stderr) + "\n[timed out]")

    def spawn(self, host, argv: list, stdout, stderr=subprocess.DEVNULL, env: dict | None = None) -> subprocess.Popen:
        """Start `argv` on `host` in the background; the lab kills it on close()."""
        p = subprocess.Popen(
            self.argv(host, argv),
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            env=env,
            preexec_fn=_die_with_parent,
        )
        self.spawned.append(p)
        return p

    def quorumctl_argv(self, *args) -> list[str]:
        return [sys.executable, "-m", "quorumctl", *map(str, args)]

    def quorumctl_env(self) -> dict:
        return dict(os.environ, PYTHONPATH=str(ROOT))

    def quorumctl(self, *args, host=OPERATOR, timeout: float = 120) -> tuple[int, str, str]:
        """`quorumctl ARGS` (this tree's code) on `host`: (exit code, stdout, stderr)."""
        p = self.run(host, self.quorumctl_argv(*args), timeout, self.quorumctl_env())
        return p.returncode, p.stdout, p.stderr

    def kafka_tool(self, tool: str, args: list, host=OPERATOR, timeout: float = 120) -> subprocess.CompletedProcess:
        """Kafka's bin/<tool>.sh (of the lab's release) on `host`, with the other tests' tool settings."""
        return self.run(host, [self.home / "bin" / f"{tool}.sh", *args], timeout, tool_env(self.d / "logs"))

    # -- the Kafka nodes --------------------------------------------------------------------
    def _props(self, h: Host) -> str:
        if self.dynamic:
            quorum = f"controller.quorum.bootstrap.servers={self.controllers}"
        else:
            quorum = "controller.quorum.voters=" + ",".join(f"{c.node_id}@{c.addr}" for c in self.controller_hosts)
        lines = [
            f"node.id={h.node_id}",
            quorum,
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            f"log.dirs={self.data(h.name)}",
            "num.network.threads=2",
            "num.io.threads=2",
            "background.threads=2",
            "num.recovery.threads.per.data.dir=1",
        ]
        if h.role == "controller":
            lines += [
                "process.roles=controller",
                f"listeners=CONTROLLER://0.0.0.0:{h.port}",
                f"advertised.listeners=CONTROLLER://{h.addr}",
            ]
        else:
            lines += [
                "process.roles=broker",
                f"listeners=PLAINTEXT://0.0.0.0:{h.port}",
                f"advertised.listeners=PLAINTEXT://{h.addr}",
                "inter.broker.listener.name=PLAINTEXT",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=4",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "transaction.state.log.num.partitions=4",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                "log.cleaner.threads=1",
                "log.cleaner.dedupe.buffer.size=16777216",
            ]
        lines += self.extra_props.get(h.name, [])
        return "\n".join(lines) + "\n"

    def raft_timeouts(self, node) -> tuple[int, int]:
        """(controller.quorum.fetch.timeout.ms, controller.quorum.election.timeout.ms) as the
        node's server.properties sets them (Kafka's defaults, 2000 and 1000, when it does not)."""
        props = dict(
            line.split("=", 1) for line in self.conf(node).read_text().splitlines() if "=" in line and line[0] != "#"
        )
        return (
            int(props.get("controller.quorum.fetch.timeout.ms", 2000)),
            int(props.get("controller.quorum.election.timeout.ms", 1000)),
        )

    def _log4j(self, h: Host) -> Path:
        p = self.d / "conf" / f"{h.name}.log4j2.yaml"
        p.write_text(
            "Configuration:\n  Appenders:\n    File:\n      name: FILE\n"
            f'      fileName: "{self.log(h.name)}"\n      append: true\n'
            '      PatternLayout:\n        pattern: "[%d] %p %m (%c)%n"\n'
            "  Loggers:\n    Root:\n      level: INFO\n      AppenderRef:\n        - ref: FILE\n"
            "    Logger:\n      - name: kafka.request.logger\n        level: WARN\n"
        )
        return p

    def _qc_local(self, *args) -> str:
        """quorumctl in this process (offline commands: ids, formatting)."""
        from quorumctl.cli.main import run_captured

        code, out, err = run_captured(tuple(map(str, args)))
        if code != 0:
            raise RuntimeError(f"lab: quorumctl {' '.join(map(str, args))} failed ({code}): {err.strip()}")
        return out

    def _format(self, h: Host, join: bool = False) -> None:
        """Format the node's log dir with quorumctl (as tests/support/kafka41.start_cluster does);
        `join`: a controller that joins an existing dynamic quorum (--no-initial-controllers)."""
        conf = self.conf(h.name)
        conf.write_text(self._props(h))
        extra: list[str] = []
        if self.dynamic:
            if h.role == "controller" and not join:
                extra = [
                    "--initial-controllers",
                    ",".join(f"{c.node_id}@{c.addr}:{c.dir_id}" for c in self.controller_hosts),
                ]
            else:
                extra = ["--no-initial-controllers"]
        self._qc_local(
            "bootstrap",
            "format",
            "-c",
            conf,
            "-t",
            self.cluster_id,
            *extra,
            "--release-version",
            RELEASE_VERSION[self.version],
            "--apply",
        )
        for line in (self.data(h.name) / "meta.properties").read_text().splitlines():
            if line.startswith("directory.id="):
                h.dir_id = line.split("=", 1)[1]

    def _launch(self, h: Host) -> None:
        (self.d / "logs").mkdir(parents=True, exist_ok=True)
        self.conf(h.name).write_text(self._props(h))
        log = self.log(h.name)
        self._log_marks[h.name] = log.stat().st_size if log.exists() else 0
        env = {k: v for k, v in os.environ.items() if k not in ("JMX_PORT", "KAFKA_DEBUG")}
        env.update(
            KAFKA_HEAP_OPTS="-Xmx256m -Xms64m",
            KAFKA_JMX_OPTS=" ",
            LOG_DIR=str(self.d / "logs"),
            KAFKA_LOG4J_OPTS=f"-Dlog4j2.configurationFile={self._log4j(h)}",
            KAFKA_JVM_PERFORMANCE_OPTS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
            # names change in the lab: the JVM looks them up again after 1 s
            KAFKA_OPTS="-Dsun.net.inetaddr.ttl=1 -Dsun.net.inetaddr.negative.ttl=1",
        )
        out = open(self.d / "logs" / f"{h.name}.out", "ab")
        # ip netns exec, kafka-server-start.sh and kafka-run-class.sh exec: the pid is the JVM's
        h.proc = subprocess.Popen(
            self.argv(h.name, [self.home / "bin" / "kafka-server-start.sh", self.conf(h.name)]),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        out.close()

    def log_since_start(self, node) -> str:
        p = self.log(node)
        if not p.exists():
            return ""
        with open(p, "rb") as f:
            f.seek(self._log_marks.get(self.host(node).name, 0))
            return f.read().decode("utf-8", "replace")

    def _wait_started(self, hosts: list[Host], limit_s: float) -> None:
        """Until each of `hosts` logged "Kafka Server started". A broker that lost the voter
        set to Kafka's bug (recover_chaos.lost_voter_set) starts once more without its
        metadata replica (set aside in DIR/aside), as recover_chaos's clusters do."""
        end = time.monotonic() + limit_s
        pending = list(hosts)
        again: set[str] = set()
        while pending:
            for h in list(pending):
                if (
                    h.proc.poll() is not None
                    and h.role == "broker"
                    and h.name not in again
                    and recover_chaos.lost_voter_set(self.log_since_start(h.name))
                    and recover_chaos.set_aside_replica(self.data(h.name), self.d / "aside", h.name)
                ):
                    again.add(h.name)
                    self._launch(h)
                if h.proc.poll() is not None:
                    raise RuntimeError(
                        f"lab: {h.name} exited ({h.proc.returncode}) while starting:\n" + self.tail(h.name)
                    )
                if "Kafka Server started" in self.log_since_start(h.name):
                    pending.remove(h)
            if pending and time.monotonic() > end:
                raise RuntimeError(
                    f"lab: {', '.join(h.name for h in pending)} not started in {limit_s:.0f} s:\n"
                    + "\n".join(self.tail(h.name) for h in pending)
                )
            time.sleep(0.3)

    def tail(self, node, lines: int = 25) -> str:
        h = self.host(node)
        parts = []
        for p in (self.log(h.name), self.d / "logs" / f"{h.name}.out"):
            if p.exists():
                parts.append(f"--- {p.name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(parts)

    def start(self, kafka: bool = True) -> "Lab":
        """The network, formatted nodes, every node started, a leader elected
        (`kafka=False`: the hosts and their network only)."""
        atexit.register(self.close)
        try:
            self._net_up()
            if not kafka:
                return self
            for sub in ("conf", "data", "logs"):
                (self.d / sub).mkdir(parents=True, exist_ok=True)
            self.cluster_id = self._qc_local("bootstrap", "random-uuid").strip()
            for h in self.controller_hosts:
                h.dir_id = self._qc_local("bootstrap", "random-uuid").strip() if self.dynamic else None
            for h in self.controller_hosts + self.broker_hosts:
                self._format(h)
            for h in self.controller_hosts + self.broker_hosts:
                self._launch(h)
            self._wait_started(self.controller_hosts + self.broker_hosts, self.start_timeout)
            self.leader(self.start_timeout)
            self._up = True
            return self
        except BaseException:
            self.close()
            raise

    def status(self, host=OPERATOR, via: str | None = None) -> dict | None:
        """`describe status` as JSON from `host` (through the controllers by name), or None."""
        code, out, err = self.quorumctl(
            "describe",
            "status",
            "--bootstrap-controller",
            via or self.controllers,
            "-o",
            "json",
            "--timeout",
            "3",
            host=host,
            timeout=60,
        )
        if code != 0:
            return None
        try:
            return json.loads(out)
        except ValueError:
            return None

    def leader(self, limit_s: float = 60, host=OPERATOR) -> tuple[int, int]:
        """(leader id, epoch), waiting for one."""
        d = until(
            "a leader",
            lambda: (lambda s: s if s and (s.get("leaderId") or -1) > 0 else None)(self.status(host)),
            limit_s,
        )
        return d["leaderId"], d["leaderEpoch"]

    def alive(self, node) -> bool:
        h = self.host(node)
        return h.proc is not None and h.proc.poll() is None

    def freeze(self, node) -> None:
        os.kill(self.host(node).proc.pid, signal.SIGSTOP)

    def thaw(self, node) -> None:
        os.kill(self.host(node).proc.pid, signal.SIGCONT)

    def kill(self, node) -> None:
        h = self.host(node)
        if self.alive(h):
            h.proc.kill()
        if h.proc is not None:
            h.proc.wait(60)

    def start_node(self, node, new_directory: bool = False, limit_s: float = 150) -> Host:
        """Start a stopped node and wait for "Kafka Server started". `new_directory`:
        its log dir wiped and formatted again first (a new directory id; a
        controller of a dynamic quorum then joins as an observer)."""
        h = self.host(node)
        if self.alive(h):
            raise RuntimeError(f"lab: {h.name} is running")
        if new_directory:
            shutil.rmtree(self.data(h.name), ignore_errors=True)
            self._format(h, join=True)
        self._launch(h)
        self._wait_started([h], limit_s)
        return h

    def restart(self, nodes=None, limit_s: float = 180) -> tuple[int, int]:
        """Kill the nodes (every Kafka node by default) at once, start them all again,
        wait for "Kafka Server started" on each and for a leader: a cold restart, where
        only the files decide what the quorum is. Returns (leader id, epoch)."""
        hosts = [self.host(n) for n in nodes] if nodes is not None else self.controller_hosts + self.broker_hosts
        for h in hosts:
            self.kill(h.name)
        for h in hosts:
            self._launch(h)
        self._wait_started(hosts, limit_s)
        return self.leader(limit_s)

    def kafka_status(self, via: str | None = None) -> dict:
        """DescribeQuorum as Kafka's own `kafka-metadata-quorum describe --status` prints it
        (asked from the operator's host): leaderId, leaderEpoch, highWatermark and the
        (id, directory id) of every voter and observer."""
        p = self.kafka_tool(
            "kafka-metadata-quorum", ["--bootstrap-controller", via or self.controllers, "describe", "--status"]
        )
        if p.returncode != 0:
            raise RuntimeError(f"lab: kafka-metadata-quorum describe --status failed: {p.stderr[-2000:]}")
        fields = dict(line.split(":", 1) for line in p.stdout.splitlines() if ":" in line)
        out: dict = {k: int(fields[k]) for k in ("LeaderId", "LeaderEpoch", "HighWatermark")}
        for key in ("CurrentVoters", "CurrentObservers"):
            out[key] = sorted((v["id"], v.get("directoryId")) for v in json.loads(fields[key]))
        return out

    def close(self) -> None:
        """Stop everything the lab started and delete its namespaces (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for t in self._timers:
            t.cancel()
        for p in self.spawned + [h.proc for h in self.hosts.values() if h.proc is not None]:
            if p.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGCONT)
                    p.kill()
                except ProcessLookupError:
                    pass
        for p in self.spawned + [h.proc for h in self.hosts.values() if h.proc is not None]:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                pass
        for h in list(self.hosts) + ["sw"]:
            _delete_namespace(self.ns(h))
        atexit.unregister(self.close)


def voters_in_files(log_dir: Path) -> list[tuple[int, str]]:
    """(id, directory id) of the voter set a replica's files hold: the last VotersRecord
    of its newest snapshot and of the log segments after it, read record by record
    (independently of quorumctl's replica model). An error when there is none."""
    from quorumctl.records.batch import Batch, BatchReader
    from quorumctl.records.metadata import KRAFT_VOTERS, control_type, decode_control

    from quorumctl.errors import InputError

    part = Path(log_dir) / "__cluster_metadata-0"

    def read() -> dict | None:
        snaps = sorted(part.glob("*.checkpoint"))
        start = int(snaps[-1].name.split("-")[0]) if snaps else 0
        last = None
        for f in snaps[-1:] + sorted(part.glob("*.log")):
            for b in BatchReader(str(f)):
                if not (isinstance(b, Batch) and b.is_control) or (f.suffix == ".log" and b.last_offset < start):
                    continue
                for r in b.records():
                    if control_type(r.key) == KRAFT_VOTERS:
                        d = decode_control(r.key, r.value)
                        assert d.data is not None, (f, r.offset, d.error)
                        last = d.data
        return last

    for attempt in range(4):  # a running node's cleaner may delete a file between listing and reading
        try:
            last = read()
            break
        except (InputError, FileNotFoundError):
            if attempt == 3:
                raise
    if last is None:
        raise AssertionError(f"no VotersRecord in {part}")
    return sorted((v["voterId"], v["voterDirectoryId"]) for v in last["voters"])


def lab_fixture(version: str = "4.3", dynamic: bool = True):
    """A module-scoped `lab` fixture: one lab per module, always closed; skips
    (saying why) where the lab cannot run."""
    import pytest

    @pytest.fixture(scope="module")
    def lab(tmp_path_factory):
        reason = skip_reason(version)
        if reason:
            pytest.skip(reason)
        lab = Lab(tmp_path_factory.mktemp("lab"), version, dynamic).start()
        try:
            yield lab
        finally:
            lab.close()

    return lab
