"""Stale voter endpoints on the lab of real hosts (tests/support/lab.py; issue 38, KAFKA-20661):
every controller of a dynamic Kafka 4.3 quorum moves to a new name and address at
once, the old names gone. Restarted there, the controllers read the old endpoints
from their voter set and elect no leader (quorumctl and Kafka's logs show it);
`voters check` and `doctor` name every stale endpoint offline and live; `voters set-endpoints`,
run as docs/membership.md says (a dry run, then --apply on the stopped
controllers), brings the quorum back on the new names with the acknowledged topic
and config, and no two replicas hold different batches at one (offset, epoch).
"""

from __future__ import annotations

import json
import re
import shlex

import pytest
from lab import Lab, skip_reason, until

import recover_chaos as rc

pytestmark = [pytest.mark.kafka("4.3"), pytest.mark.root]

CONTROLLERS = (1, 2, 3)
NEW = {f"c{n}": f"k{n}" for n in CONTROLLERS}  # each controller's new name
NEW_BOOTSTRAP = ",".join(f"k{n}:9093" for n in CONTROLLERS)


class MovedLab(Lab):
    """The lab, with the controllers' names in every node's configuration replaced by
    `renamed` (old -> new) once they move."""

    renamed: dict[str, str] = {}

    def _props(self, h) -> str:
        text = super()._props(h)
        for old, new in self.renamed.items():
            text = re.sub(rf"\b{old}:", f"{new}:", text)
        return text


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    reason = skip_reason("4.3")
    if reason:
        pytest.skip(reason)
    lab = MovedLab(tmp_path_factory.mktemp("lab"), "4.3", True, start_timeout=300).start()
    try:
        yield lab
    finally:
        lab.close()


def tool_ok(lab, tool: str, args: list) -> str:
    p = lab.kafka_tool(tool, ["--bootstrap-server", lab.bootstrap, *args], timeout=180)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def start(lab, nodes) -> None:
    hosts = [lab.host(n) for n in nodes]
    for h in hosts:
        lab._launch(h)
    lab._wait_started(hosts, 300)


def check(lab, *args) -> tuple[int, dict, str]:
    code, out, err = lab.quorumctl("voters", "check", *args, "--timeout", "5", "-o", "json", timeout=180)
    assert err == "" and out, (code, out, err)
    return code, json.loads(out), out


def stale(doc: dict) -> dict[int, list[str]]:
    """voter id -> the stale-voter-endpoint messages about it."""
    out: dict[int, list[str]] = {}
    for f in doc["findings"]:
        m = re.match(r"voter (\d+)'s stored endpoint (\S+) is stale: (.*)", f["message"])
        if f["code"] == "stale-voter-endpoint" and m:
            out.setdefault(int(m.group(1)), []).append(f"{m.group(2)}: {m.group(3)}")
    return out


def test_every_controller_moved_no_leader_then_set_endpoints_brings_it_back(lab):
    data = [str(lab.data(n)) for n in CONTROLLERS]
    confs = [a for n in CONTROLLERS for a in ("-c", str(lab.conf(n)))]
    # before: an acknowledged topic with a config; voters check is clean, live
    out = tool_ok(
        lab,
        "kafka-topics",
        [
            "--create",
            "--topic",
            "acked",
            "--partitions",
            "1",
            "--replication-factor",
            "1",
            "--config",
            "retention.ms=123456",
        ],
    )
    assert "Created topic acked." in out
    code, doc, _ = check(lab, "--bootstrap-controller", lab.controllers)
    assert code == 0 and doc["findings"] == [], doc
    assert sorted((c["voter_id"], c["endpoint"], c["verdict"]) for c in doc["endpoints"]) == [
        (n, f"CONTROLLER://c{n}:9093", "ok") for n in CONTROLLERS
    ]
    assert [c["addresses"] for c in doc["endpoints"]] == [[f"10.33.0.{n}"] for n in CONTROLLERS]

    # every node stopped; each controller moves to a new address under a new name, the old names gone
    for n in (*CONTROLLERS, 4):
        lab.kill(n)
    for n in CONTROLLERS:
        ip = lab.spare_ip()
        lab.move(f"c{n}", ip, names=False)
        lab.resolve(f"k{n}", ip)
        lab.resolve(f"c{n}", None)
    lab.renamed = NEW
    start(lab, CONTROLLERS)
    # Kafka reads the old endpoints from its voter set and cannot reach any other voter
    for n in CONTROLLERS:
        log = until(
            f"c{n} fails to reach the old names",
            lambda n=n: (
                lambda t: t if re.search(r"Error connecting to node c\d:9093.*\n.*UnknownHostException", t) else None
            )(lab.log_since_start(n)),
            120,
        )
        voters = re.findall(r"Starting voters are (.*)", log)
        assert voters and all(re.search(rf"\bc{i}\b", voters[-1]) for i in CONTROLLERS), voters
    code, out, err = lab.quorumctl("describe", "status", "--bootstrap-controller", NEW_BOOTSTRAP, "--timeout", "10")
    assert code == 3, (code, out, err)
    code, out, err = lab.quorumctl(
        "describe", "health", "--bootstrap-controller", NEW_BOOTSTRAP, "--timeout", "5", "-o", "json"
    )
    health = json.loads(out)
    assert health["verdict"] == "unhealthy" and health["leaderId"] in (None, -1), out
    # every controller answers on its new name, none as a leader
    assert sorted(p["address"] for p in health["probes"] if p["reachable"] and p["kind"] == "controller") == [
        f"k{n}:9093" for n in CONTROLLERS
    ] and not any(p["isLeader"] for p in health["probes"]), out
    for n in CONTROLLERS:
        assert "Completed transition to Leader(" not in lab.log_since_start(n)

    # voters check, live (no leader: the voter set from the log dirs) and offline, names every stale endpoint
    code, doc, _ = check(lab, "--bootstrap-controller", NEW_BOOTSTRAP, *data, *confs)
    assert code == 1
    assert {f["code"] for f in doc["findings"]} >= {
        "live-no-leader",
        "stale-voter-endpoint",
        "bootstrap-server-not-a-voter",
    }, doc["findings"]
    for n in CONTROLLERS:
        msgs = stale(doc)[n]
        assert any(m.startswith(f"CONTROLLER://c{n}:9093: its name c{n} does not resolve") for m in msgs), msgs
        # and the config finding: the node advertises its new name, the voter set holds the old one
        assert any(
            f["message"] == f"node {n} advertises CONTROLLER://k{n}:9093, but the voter set holds "
            f"CONTROLLER://c{n}:9093: the other voters and the brokers reach it at the old address"
            for f in doc["findings"]
        ), doc["findings"]
    fixes = [f["remedy"] for f in doc["findings"] if f["code"] == "stale-voter-endpoint" and "resolve" in f["message"]]
    # one command line for every stale voter, run as printed below (the repair)
    printed = f"quorumctl voters set-endpoints {' '.join(data)} " + " ".join(
        f"--endpoint {n}=CONTROLLER://k{n}:9093" for n in CONTROLLERS
    )
    assert fixes and all(r.endswith(f"`{printed}`") for r in fixes), fixes
    code, doc, _ = check(lab, *data)
    assert code == 1 and sorted(stale(doc)) == list(CONTROLLERS), doc["findings"]
    # doctor, live with no leader: the same stale endpoints and the set-endpoints fix, not a lost majority
    code, out, err = lab.quorumctl(
        "doctor", *data, *confs, "--bootstrap-controller", NEW_BOOTSTRAP, "--timeout", "5", "-o", "json", timeout=180
    )
    doc = json.loads(out)
    codes = {f["code"] for f in doc["findings"]}
    assert (code, err) == (1, "") and "live-no-leader" in codes, (code, err, doc["findings"])
    assert not codes & {"majority-lost", "live-unreachable"}, doc["findings"]
    assert not [f for f in doc["findings"] if "recover" in f["remedy"]], doc["findings"]
    for n in CONTROLLERS:
        assert any(m.startswith(f"CONTROLLER://c{n}:9093: its name c{n} does not resolve") for m in stale(doc)[n])
    assert all(
        f["remedy"].endswith(f"`{printed}`")
        for f in doc["findings"]
        if f["code"] == "stale-voter-endpoint" and f["severity"] == "error"
    ), doc["findings"]

    # the repair, the printed line as printed: refused while the controllers run, then (stopped)
    # a dry run, then --apply
    data, eps = shlex.split(printed)[3 : 3 + len(data)], shlex.split(printed)[3 + len(data) :]

    def files_but_votes():
        # a leaderless quorum keeps electing: each running controller rewrites its own
        # quorum-state (epoch, vote) while we watch; every other file must stay as it is
        return {
            n: {f: h for f, h in rc.tree_hash(lab.data(n)).items() if not f.endswith("/quorum-state")}
            for n in CONTROLLERS
        }

    running = files_but_votes()
    code, out, err = lab.quorumctl("voters", "set-endpoints", *data, *eps, "--timeout", "3", "--apply")
    assert code == 1 and "  refused: voter 1's endpoint k1:9093: answers as a controller" in out, out + err
    assert files_but_votes() == running
    for n in CONTROLLERS:
        lab.kill(n)
    before = {n: rc.tree_hash(lab.data(n)) for n in CONTROLLERS}
    code, out, err = lab.quorumctl("voters", "set-endpoints", *data, *eps, "--timeout", "3")
    assert (code, err) == (0, ""), out + err
    assert "  voter 1 (%s): CONTROLLER://c1:9093 -> CONTROLLER://k1:9093" % lab.host(1).dir_id in out, out
    assert {n: rc.tree_hash(lab.data(n)) for n in CONTROLLERS} == before, "the dry run wrote"
    code, out, err = lab.quorumctl("voters", "set-endpoints", *data, *eps, "--timeout", "3", "--apply", "-o", "json")
    assert (code, err) == (0, ""), out + err
    plan = json.loads(out)["plan"]
    assert sorted(c["node_id"] for c in json.loads(out)["applied"]["changed"]) == list(CONTROLLERS)
    assert [v["endpoints"] for v in plan["voters_after"]] == [[f"CONTROLLER://k{n}:9093"] for n in CONTROLLERS]
    new_epoch = plan["new_epoch"]

    # the quorum comes back on the new names: a leader, in the epoch after the batch's
    start(lab, CONTROLLERS)
    s = until(
        "a leader on the new names",
        lambda: (lambda x: x if x and x.get("leaderId", -1) > 0 else None)(lab.status(via=NEW_BOOTSTRAP)),
        180,
    )
    assert s["leaderEpoch"] > new_epoch
    assert "Completed transition to Leader(" in lab.log_since_start(s["leaderId"])
    start(lab, [4])
    out = tool_ok(lab, "kafka-configs", ["--describe", "--entity-type", "topics", "--entity-name", "acked"])
    assert "retention.ms=123456" in out, out
    out = tool_ok(
        lab, "kafka-topics", ["--create", "--topic", "after-repair", "--partitions", "1", "--replication-factor", "1"]
    )
    assert "Created topic after-repair." in out
    assert {"acked", "after-repair"} <= set(tool_ok(lab, "kafka-topics", ["--list"]).split())
    code, doc, _ = check(lab, "--bootstrap-controller", NEW_BOOTSTRAP, *confs)
    assert code == 0 and doc["findings"] == [], doc["findings"]
    assert [c["endpoint"] for c in doc["endpoints"]] == [f"CONTROLLER://k{n}:9093" for n in CONTROLLERS]

    # stopped: every replica's log is sound and log matching holds, by an independent check and by quorumctl's
    for n in (*CONTROLLERS, 4):
        lab.kill(n)
    dirs = {f"n{n}": lab.data(n) for n in (*CONTROLLERS, 4)}
    assert rc.log_matching_clashes(dirs) == []
    assert rc.state_clashes(list(dirs.values())) == []
