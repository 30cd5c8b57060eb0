"""The lab's network (tests/support/lab.py) does what its docstring promises, shown with
plain TCP listeners in place of Kafka (no Java, a few seconds): names per
host, cuts both ways, one way, one link, the operator's connections reset or
dropped, names moved or gone, addresses moved with the cuts following, and
nothing left behind (a crashed run's namespaces tidied by the next)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab import OPERATOR, Lab, _netns_names, skip_reason, tidy_leftovers

pytestmark = pytest.mark.root

# every connection: "ok <who answered>", "refused" (a reset), "timeout" (silence), "unresolved"
CLIENT = r"""
import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        s = socket.create_connection((host, int(port)), 1.0)
        s.settimeout(1.0)
        print("ok", s.recv(64).decode().strip())
    except ConnectionRefusedError:
        print("refused")
    except socket.gaierror:
        print("unresolved")
    except (TimeoutError, socket.timeout):
        print("timeout")
"""
SERVER = r"""
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[2])))
s.listen(16)
while True:
    c, _ = s.accept()
    c.sendall(sys.argv[1].encode() + b"\n")
    c.close()
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    reason = skip_reason(None)
    if reason:
        pytest.skip(reason)
    lab = Lab(tmp_path_factory.mktemp("labnet")).start(kafka=False)
    try:
        for h in lab.hosts.values():
            if h.port:
                lab.spawn(h.name, [sys.executable, "-c", SERVER, h.name, h.port], subprocess.DEVNULL)
        assert reach(lab, OPERATOR, "c1", "c2", "c3", "b4", wait=True) == ["ok c1", "ok c2", "ok c3", "ok b4"]
        yield lab
    finally:
        lab.close()


def reach(lab, frm, *to, wait=False) -> list[str]:
    """What `frm` gets connecting to each of `to` by name."""
    targets = [f"{t}:{lab.host(t).port}" for t in to]
    for _ in range(40 if wait else 1):  # wait: the listeners are starting
        out = lab.run(frm, [sys.executable, "-c", CLIENT, *targets], timeout=60).stdout.split("\n")[:-1]
        if not wait or all(x.startswith("ok") for x in out):
            break
        time.sleep(0.25)
    return out


def test_names_are_per_host(lab):
    assert reach(lab, "c1", "c2", "c3", "b4") == ["ok c2", "ok c3", "ok b4"]
    lab.resolve("c2", None, seen_by=[OPERATOR])
    try:
        assert reach(lab, OPERATOR, "c2", "c3") == ["unresolved", "ok c3"]
        assert reach(lab, "c1", "c2") == ["ok c2"]  # c1's hosts file still has it
        lab.resolve("c2", lab.host("c3").ip)  # c2 now means c3's address, everywhere
        assert reach(lab, OPERATOR, "c2") == reach(lab, "b4", "c2") == ["ok c3"]
        lab.resolve("c2", None)
        timer = lab.resolve_later("c2", 4.0)  # back to its own address, late
        assert reach(lab, OPERATOR, "c2") == ["unresolved"]  # (a run takes well under 4 s, even loaded)
        timer.join(30)
        assert reach(lab, OPERATOR, "c2") == ["ok c2"]
    finally:
        lab.resolve("c2")
    assert Path(f"/etc/netns/{lab.ns(OPERATOR)}/hosts").read_text().count(f"{lab.host('c2').ip}\tc2\n") == 1


def test_a_host_cut_off_both_ways(lab):
    h = lab.cut("c2")
    try:
        assert reach(lab, OPERATOR, "c1", "c2") == ["ok c1", "timeout"]
        assert reach(lab, "c1", "c2", "c3") == ["timeout", "ok c3"]
        assert reach(lab, "c2", "c1", "b4") == ["timeout", "timeout"]
    finally:
        lab.heal(h)
    assert reach(lab, "c1", "c2") == ["ok c2"]


def test_one_link_and_one_way(lab):
    h = lab.cut("c1", ["c2"])
    assert reach(lab, "c1", "c2", "c3") == ["timeout", "ok c3"]
    assert reach(lab, "c2", "c1", "c3") == ["timeout", "ok c3"]
    assert reach(lab, OPERATOR, "c1", "c2") == ["ok c1", "ok c2"]
    lab.heal(h)
    h = lab.cut("c1", "c2", oneway=True)
    assert reach(lab, "c1", "c2") == ["timeout"]
    assert reach(lab, "c2", "c1") == ["ok c1"]  # the other way still opens connections
    lab.heal(h)
    h = lab.cut("c1", "c2", oneway=True, reject=True)
    assert reach(lab, "c1", "c2") == ["refused"]
    assert reach(lab, "c2", "c1") == ["ok c1"]
    lab.heal(h)
    h = lab.cut("c1", "c2", reject=True)
    assert reach(lab, "c1", "c2") == reach(lab, "c2", "c1") == ["refused"]
    lab.heal()
    assert lab.cuts == [] and reach(lab, "c1", "c2") == ["ok c2"]


def test_the_operator_blocked_from_nodes_that_still_reach_each_other(lab):
    h = lab.operator_blocked(["c2", "c3"], reject=True)
    try:
        # a reset: from the operator's seat exactly what "nothing listens" looks like
        assert reach(lab, OPERATOR, "c1", "c2", "c3") == ["ok c1", "refused", "refused"]
        assert reach(lab, "c1", "c2", "c3") == ["ok c2", "ok c3"]
        assert reach(lab, "c2", "c3") == ["ok c3"] and reach(lab, "b4", "c2") == ["ok c2"]
        rules = lab.run("c2", ["iptables", "-S", "INPUT"]).stdout
        assert f"-A INPUT -s {lab.host(OPERATOR).ip}/32 -p tcp -m tcp --dport 9093" in rules
        assert "-j REJECT --reject-with tcp-reset" in rules
    finally:
        lab.heal(h)
    h = lab.operator_blocked(["c2"])
    try:
        assert reach(lab, OPERATOR, "c2") == ["timeout"]
        assert reach(lab, "c1", "c2") == ["ok c2"]
    finally:
        lab.heal(h)


def test_a_moved_host_keeps_its_name_and_its_cuts(lab):
    old = lab.host("c3").ip
    new = lab.spare_ip()
    h = lab.cut(OPERATOR, "c3")
    try:
        lab.move("c3", new)
        assert lab.run(OPERATOR, ["getent", "hosts", "c3"]).stdout.split() == [new, "c3"]
        assert reach(lab, OPERATOR, "c3") == ["timeout"]  # the cut followed it
        assert reach(lab, "c1", "c3") == ["ok c3"]  # the listener on 0.0.0.0 answers there
    finally:
        lab.heal(h)
        lab.move("c3", old)
    assert reach(lab, OPERATOR, "c3") == ["ok c3"]


def test_close_leaves_nothing_and_a_crashed_run_is_tidied(tmp_path):
    if skip_reason(None):
        pytest.skip(skip_reason(None))
    other = Lab(tmp_path / "other").start(kafka=False)
    sleeper = other.spawn("c1", ["sleep", "600"], subprocess.DEVNULL)
    mine = [n for n in _netns_names() if n.startswith(other.prefix)]
    assert len(mine) == 6  # the switch, c1..c3, b4, op
    other.close()
    assert sleeper.poll() is not None
    assert not [n for n in _netns_names() if n.startswith(other.prefix)]
    assert not [d for d in Path("/etc/netns").iterdir() if d.name.startswith(other.prefix)]

    # a lab whose process died without closing it: its namespace, files and processes
    dead = 4_000_000 + 1  # above the kernel's pid_max: never a live process
    ns = f"qlab{dead}-c1"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    Path(f"/etc/netns/{ns}").mkdir(parents=True, exist_ok=True)
    left = subprocess.Popen(["ip", "netns", "exec", ns, "sleep", "600"])
    try:
        deadline = time.monotonic() + 20  # until the process is in the namespace (slow when loaded)
        while not subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.strip():
            assert time.monotonic() < deadline and left.poll() is None, "sleep never entered the namespace"
            time.sleep(0.1)
        assert ns in tidy_leftovers()
        assert left.wait(10) is not None
        assert ns not in _netns_names() and not Path(f"/etc/netns/{ns}").exists()
    finally:
        if left.poll() is None:
            left.kill()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
