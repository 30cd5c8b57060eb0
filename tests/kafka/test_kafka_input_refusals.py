"""Mistyped input to the commands that write into a real Kafka 4.3 quorum's log dirs is
refused before anything is written, and what is accepted starts on Kafka: one dynamic
quorum of three controllers (no broker), stopped, fed the mistakes an operator makes, then
moved to new endpoints by the command line `voters check` prints, run as printed. Judged by
Kafka's own kafka-metadata-quorum and the nodes' logs, not by quorumctl's report.
docs/mistyped-input.md lists every input with its test."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from kafka41 import start_cluster

import recover_chaos as rc

pytestmark = pytest.mark.kafka("4.3")

CONTROLLERS = (1, 2, 3)


@pytest.fixture(scope="module")
def quorum(cli, tmp_path_factory):
    k = start_cluster(cli, tmp_path_factory, "input-refusals", dynamic=True, version="4.3", brokers=0)
    try:
        yield k
    finally:
        k.discard()


def kafka_voters(k, via: str) -> tuple[int, dict[int, tuple[str, list[str]]]]:
    """(leader id, voter id -> (directory id, endpoints)) as Kafka's own tool describes the quorum."""
    p = k.tool("kafka-metadata-quorum", ["--bootstrap-controller", via, "describe", "--status"], 120)
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    leader = int(re.search(r"^LeaderId:\s+(-?\d+)$", p.stdout, re.M).group(1))
    line = re.search(r"^CurrentVoters:\s+(\[.*\])$", p.stdout, re.M).group(1)
    return leader, {v["id"]: (v["directoryId"], v["endpoints"]) for v in json.loads(line)}


def test_mistyped_endpoints_are_refused_and_the_printed_fix_starts_on_kafka(cli, quorum):
    k = quorum
    dirs = [str(k.data(n)) for n in CONTROLLERS]
    port = {n: k.base + n for n in CONTROLLERS}
    leader, before = kafka_voters(k, k.addr(1))
    assert leader in CONTROLLERS
    assert {n: eps for n, (_, eps) in before.items()} == {n: [f"CONTROLLER://127.0.0.1:{port[n]}"] for n in CONTROLLERS}
    assert {n: d for n, (d, _) in before.items()} == k.dir_ids
    k.stop()

    # -- mistyped: refused before anything is written, dry run or --apply ------------------------
    files = {n: rc.tree_hash(k.data(n)) for n in CONTROLLERS}
    others = [f"--endpoint {n}=CONTROLLER://localhost:{port[n]}" for n in (1, 3)]
    mistakes = {
        # one letter short of the controllers' listener: every controller would stop on it
        "CONTROLER": (
            [*others, f"--endpoint 2=CONTROLER://localhost:{port[2]}"],
            f"--endpoint 2=CONTROLER://localhost:{port[2]}: CONTROLER is no controller listener (known: "
            "CONTROLLER: the voter set's listeners and the controller.listener.names of the configs given with "
            "-c); did you mean CONTROLLER?",
        ),
        # two voters at one address
        "shared endpoint": (
            [*others, f"--endpoint 2=CONTROLLER://localhost:{port[1]}"],
            f"voters 1 and 2 would both be at localhost:{port[1]}",
        ),
        # a listener the broker side knows (listener.security.protocol.map), not the controllers
        "broker listener": (
            [*others, f"--endpoint 2=PLAINTEXT://localhost:{port[2]}"],
            "PLAINTEXT is no controller listener (known: CONTROLLER",
        ),
        "port": ([*others, "--endpoint 2=CONTROLLER://localhost:0"], "port 0 is not between 1 and 65535"),
        "host": ([*others, f"--endpoint 2=CONTROLLER://local_host!:{port[2]}"], "is not a host name or address"),
        "not a voter": ([*others, f"--endpoint 7=CONTROLLER://localhost:{port[2]}"], "--endpoint names [7]"),
    }
    confs = [a for n in CONTROLLERS for a in ("-c", str(k.conf(n)))]
    for name, (eps, why) in mistakes.items():
        for apply in ([], ["--apply"]):
            code, out, err = cli("voters", "set-endpoints", *dirs, *shlex.split(" ".join(eps)), *confs, *apply)
            assert (code, out) == (2, ""), (name, out, err)
            assert err.startswith("quorumctl: error: ") and why in err and err.count("\n") == 1, (name, err)
    assert {n: rc.tree_hash(k.data(n)) for n in CONTROLLERS} == files
    assert not [p for p in k.data(1).parent.iterdir() if "quorumctl-backup" in p.name]

    # -- accepted: every controller moved to localhost, by the command voters check prints -------
    new = {n: f"localhost:{port[n]}" for n in CONTROLLERS}
    for n in CONTROLLERS:  # the operator's edit: each controller advertises its new name
        conf = k.conf(n).read_text()
        k.conf(n).write_text(conf + f"advertised.listeners=CONTROLLER://{new[n]}\n")
    code, out, err = cli("voters", "check", *dirs, *confs, "--timeout", "3", "-o", "json")
    assert code == 1, out + err
    fixes = {f["remedy"] for f in json.loads(out)["findings"] if f["code"] == "stale-voter-endpoint"}
    printed = f"quorumctl voters set-endpoints {' '.join(dirs)} " + " ".join(
        f"--endpoint {n}=CONTROLLER://{new[n]}" for n in CONTROLLERS
    )
    assert fixes and all(f.endswith(f"`{printed}`") for f in fixes), fixes
    code, out, err = cli(*shlex.split(printed)[1:])  # as printed: a dry run
    assert (code, err) == (0, ""), out + err
    assert {n: rc.tree_hash(k.data(n)) for n in CONTROLLERS} == files
    code, out, err = cli(*shlex.split(printed)[1:], "--apply")
    assert (code, err) == (0, ""), out + err

    # Kafka's word: every controller starts, a leader is elected, the voter set holds the new
    # endpoints with the same directory ids, and no node logs a fatal error
    for n in CONTROLLERS:
        assert k.start_node_with(n, {"advertised.listeners": f"CONTROLLER://{new[n]}"}), k.log_since_mark(n)[-3000:]
    after = rc.until(
        "a leader on the new endpoints",
        lambda: (lambda r: r if r[0] in CONTROLLERS else None)(kafka_voters(k, new[2])),
        120,
        every=2,
    )
    assert after[1] == {n: (k.dir_ids[n], [f"CONTROLLER://{new[n]}"]) for n in CONTROLLERS}
    for n in CONTROLLERS:
        assert not rc.fatal_lines(k.log_since_mark(n)), rc.fatal_lines(k.log_since_mark(n))
        assert "Unknown endpoint" not in k.log_since_mark(n)
    k.stop()
    assert rc.log_matching_clashes({f"c{n}": k.data(n) for n in CONTROLLERS}) == []
