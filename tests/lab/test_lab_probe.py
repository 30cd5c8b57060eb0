"""`quorumctl probe` in the lab (tests/support/lab.py, issue 33: every Kafka 4.3 node in
its own network namespace, names in per-host hosts files), for the two cases a
single-host cluster cannot make: a controller cut off from its peers is not
ready while the others are, and a controller started while its peers' names do
not resolve is not ready until it attaches. The operator (`op`) probes, as an
exporter or a roll script on another host would."""

from __future__ import annotations

import json
import time

import pytest

_lab = pytest.importorskip("lab", reason="tests/support/lab.py (the network lab, branch `lab`) is not merged yet")
until = _lab.until
lab = _lab.lab_fixture()
pytestmark = [pytest.mark.kafka("4.3"), pytest.mark.root]


def probe(lab, node: int, kind: str = "ready", *args: str) -> tuple[int, dict | str]:
    code, out, err = lab.quorumctl(
        "probe",
        f"c{node}:9093",
        "--role",
        "controller",
        "--kind",
        kind,
        "-o",
        "json",
        "--timeout",
        "3",
        "--bootstrap-controller",
        lab.controllers,
        *args,
        timeout=60,
    )
    return code, (json.loads(out) if out.strip() else err)


def test_a_controller_cut_off_from_its_peers_is_not_ready_the_others_are(lab):
    leader, epoch = lab.leader()
    x = next(i for i in (1, 2, 3) if i != leader)
    others = [i for i in (1, 2, 3) if i != x]
    cut = lab.cut(f"c{x}", [f"c{i}" for i in others] + ["b4"])  # the operator still reaches it
    try:
        until(f"c{x} not ready", lambda: probe(lab, x)[0] == 1, 90)
        code, d = probe(lab, x)
        assert code == 1 and d["own"]["answers"] is True, d
        why = d["reason"].split(" is not ready: ", 1)[1]
        assert why.startswith(("knows no leader", "not caught up", "follows ")), d["reason"]
        for i in others:
            code, d = probe(lab, i)
            assert code == 0, d
    finally:
        lab.heal(cut)
    until(f"c{x} ready again", lambda: probe(lab, x)[0] == 0, 120)


def test_a_controller_whose_peers_do_not_resolve_is_not_ready_until_it_attaches(lab):
    leader, _ = lab.leader()
    x = next(i for i in (1, 2, 3) if i != leader)
    peers = [f"c{i}" for i in (1, 2, 3) if i != x]
    lab.kill(x)
    for p in peers:
        lab.resolve(p, None, seen_by=[f"c{x}"])
    seen = []
    try:
        # Kafka 4.3 logs "Kafka Server started" (start_node returns) although its peers do not resolve;
        # it has not attached to anything: it must not be ready. (start_node from this thread: the lab's
        # JVMs die with the thread that started them.)
        lab.start_node(x, limit_s=300)
        end = time.monotonic() + 30
        while time.monotonic() < end:
            code, d = probe(lab, x)
            seen.append((code, d["reason"] if isinstance(d, dict) else d))
            assert code == 1, seen  # never ready while it cannot reach its peers
            time.sleep(2)
        # live rests on how long it has been detached (the leader's last fetch of it, before the kill):
        # within the grace it holds; past it, a restart is called for (it resolves the names again)
        code, d = probe(lab, x, "live", "--grace", "600")
        seen.append((code, d["reason"]))
        assert code == 0 and d["detachedSeconds"] > 30 and "(grace 600 s)" not in d["reason"], seen
    finally:
        for p in peers:
            lab.resolve(p)
        (lab.d / "late-dns-probes.json").write_text(json.dumps(seen, indent=1))
    until(f"c{x} ready once its peers resolve", lambda: probe(lab, x)[0] == 0, 180)
