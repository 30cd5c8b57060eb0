"""`voters check`, `voters set-endpoints` (its refusals, its backup) and doctor's
stale-endpoint findings (offline, and live with no leader) without Kafka: on copies
of the Kafka 3.9 dynamic fixture (voters 1-3 at localhost:19191-19193, where
nothing listens here) and the simulated quorum. The real thing, every controller
moved to new names on the lab of real hosts: tests/lab/test_kafka_lab_voters.py."""

from __future__ import annotations

import json
import shlex
import shutil
import socket

import pytest
from logfiles import tree
from samples import FIXTURES

from quorumctl.records import metadata as md
from quorumctl.records.batch import BatchReader

DYN = FIXTURES / "kafka-3.9.0-dynamic" / "data"
CLUSTER = "rTcAzcTXQpG_6c1zYns8Xw"
DIRS = {1: "DfqkWOlJTZ-abG8pUGocIA", 2: "4BuDMaJKttH3vcqDCog2og", 3: "eAmx4J3YZ63RPobrVgXBAw"}
NEW = [
    "-e",
    "1=CONTROLLER://k1.invalid:9093",
    "-e",
    "2=CONTROLLER://k2.invalid:9093",
    "-e",
    "3=CONTROLLER://k3.invalid:9093",
]

pytestmark = pytest.mark.shared("reference/fixtures")


@pytest.fixture
def dyn(tmp_path):
    for n in ("c1", "c2", "c3", "b4"):
        shutil.copytree(DYN / n, tmp_path / n)
    return tmp_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def voters_records(seg) -> list[tuple[int, int, list]]:
    """(offset, epoch, voters) of every VotersRecord in a segment."""
    out = []
    with BatchReader(str(seg)) as r:
        for b in r:
            if not b.is_control:
                continue
            for rec in b.iter_records():
                d = md.decode_control(rec.key, rec.value)
                if d.type_name == "KRAFT_VOTERS":
                    out.append((rec.offset, b.leader_epoch, d.data["voters"]))
    return out


@pytest.mark.parametrize(
    "spec, why",
    [
        ("1=CONTROLLER//k1:9093", "expected ID=LISTENER://HOST:PORT"),
        ("CONTROLLER://k1:9093", "expected ID=LISTENER://HOST:PORT"),
        ("1=CONTROLLER://k1:99999", "port 99999 is not between 1 and 65535"),
    ],
)
def test_bad_endpoint_is_one_line_exit_2(cli, dyn, spec, why):
    before = tree(dyn)
    code, out, err = cli("voters", "set-endpoints", dyn / "c1", dyn / "c2", dyn / "c3", "-e", spec)
    assert (code, out) == (2, "")
    assert err == f"quorumctl: error: --endpoint {spec!r}: {why}" + (
        " (e.g. 1=CONTROLLER://c1.new.example:9093)\n" if why.startswith("expected") else "\n"
    )
    assert tree(dyn) == before


FATAL = (
    "Kafka's controllers would stop on it (IllegalStateException \"Unknown endpoint for voter id {vid} for "
    'listener name {name}") and elect no leader'
)


@pytest.mark.parametrize("apply", [[], ["--apply"]])
@pytest.mark.parametrize(
    "specs, configs, why",
    [
        # a misspelled listener: known neither to the voter set nor to a config given
        (
            ["2=CONTROLER://k2:9093"],
            False,
            "--endpoint 2=CONTROLER://k2:9093: CONTROLER is no controller listener (known: CONTROLLER: the voter "
            "set's listeners and the controller.listener.names of the configs given with -c); did you mean "
            "CONTROLLER? a listener renamed needs the controllers' new server.properties with -c",
        ),
        # a new name the configs know, but voters 1 and 3 keep only CONTROLLER, which is what controller 2 uses
        (
            ["2=CTRL://k2:9093"],
            True,
            "voter 2 would have no CONTROLLER endpoint (the first of {conf1}'s controller.listener.names; its "
            "endpoints: CTRL://k2:9093): " + FATAL.format(vid=2, name="CONTROLLER"),
        ),
        # two voters at one address
        (
            ["1=CONTROLLER://k1:9093", "2=CONTROLLER://k1:9093"],
            False,
            "voters 1 and 2 would both be at k1:9093: one process listens on one address, so Kafka would send "
            "voter 2's requests to voter 1 (or the reverse); give each voter its own endpoint",
        ),
        # a new endpoint equal to another voter's stored one
        (
            ["1=CONTROLLER://localhost:19192"],
            False,
            "voters 1 and 2 would both be at localhost:19192: one process listens on one address, so Kafka would "
            "send voter 2's requests to voter 1 (or the reverse); give each voter its own endpoint",
        ),
        # one voter, two listeners on one port
        (
            ["1=CONTROLLER://k1:9093", "1=CTRL://k1:9093"],
            True,
            "voter 1 would have two listeners at k1:9093: one port serves one listener",
        ),
        # not a host name
        (
            ["1=CONTROLLER://k1*:9093"],
            False,
            "--endpoint '1=CONTROLLER://k1*:9093': 'k1*' is not a host name or address (letters, digits, '.', "
            "'-', '_')",
        ),
    ],
)
def test_endpoints_kafka_would_refuse_are_refused_before_anything_is_written(cli, dyn, specs, configs, why, apply):
    """Dry run and --apply alike: exit 2, one line, no file changed (not even a backup dir)."""
    confs = []
    if configs:
        for n in (1, 2, 3):
            c = dyn / f"c{n}.properties"
            c.write_text(
                f"node.id={n}\nprocess.roles=controller\ncontroller.listener.names=CONTROLLER,CTRL\n"
                f"listeners=CONTROLLER://:1919{n},CTRL://:1929{n}\nlog.dirs={dyn / f'c{n}'}\n"
            )
            confs += ["-c", str(c)]
    before = tree(dyn)
    eps = [x for s in specs for x in ("-e", s)]
    code, out, err = cli("voters", "set-endpoints", *[dyn / f"c{n}" for n in (1, 2, 3)], *eps, *confs, *apply)
    assert (code, out) == (2, ""), out + err
    assert err == "quorumctl: error: " + why.format(conf1=dyn / "c1.properties") + "\n"
    assert tree(dyn) == before
    assert sorted(p.name for p in dyn.iterdir()) == sorted(
        ["b4", "c1", "c2", "c3"] + [f"c{n}.properties" for n in (1, 2, 3) if configs]
    )


def test_a_renamed_listener_is_accepted_with_the_controllers_new_configs(cli, dyn):
    """Every voter moved to the listener CTRL, which the configs given name first: planned (a dry run)."""
    for n in (1, 2, 3):
        (dyn / f"c{n}.properties").write_text(
            f"node.id={n}\nprocess.roles=controller\ncontroller.listener.names=CTRL\n"
            f"listeners=CTRL://:1929{n}\nlog.dirs={dyn / f'c{n}'}\n"
        )
    eps = [x for n in (1, 2, 3) for x in ("-e", f"{n}=ctrl://k{n}.invalid:9093")]
    confs = [x for n in (1, 2, 3) for x in ("-c", str(dyn / f"c{n}.properties"))]
    before = tree(dyn)
    code, out, err = cli(
        "voters", "set-endpoints", *[dyn / f"c{n}" for n in (1, 2, 3)], *eps, *confs, "--timeout", "5", "-o", "json"
    )
    assert (code, err) == (0, ""), out + err
    doc = json.loads(out)["plan"]
    assert [v["endpoints"] for v in doc["voters_after"]] == [[f"CTRL://k{n}.invalid:9093"] for n in (1, 2, 3)]
    # without the configs, CTRL is a name nothing knows
    code, out, err = cli("voters", "set-endpoints", *[dyn / f"c{n}" for n in (1, 2, 3)], *eps, "--timeout", "5")
    assert code == 2 and "CTRL is no controller listener (known: CONTROLLER" in err, err
    assert tree(dyn) == before


def test_an_endpoint_for_a_node_that_is_not_a_voter_is_bad_input(cli, dyn):
    code, out, err = cli("voters", "set-endpoints", dyn / "c1", dyn / "c2", dyn / "c3", "-e", "7=CONTROLLER://k7:9093")
    assert (code, err) == (2, "quorumctl: error: --endpoint names [7], which are not voters (voters [1, 2, 3])\n")


def test_a_missing_voter_refuses_and_writes_nothing(cli, dyn):
    before = tree(dyn)
    code, out, err = cli("voters", "set-endpoints", dyn / "c1", dyn / "c2", *NEW, "--timeout", "10", "--apply")
    assert (code, err) == (1, "")
    assert "  refused: voter(s) [3] not given: every voter's log dir must be given" in out, out
    assert tree(dyn) == before


def test_a_broker_dir_is_refused(cli, dyn):
    code, out, err = cli(
        "voters", "set-endpoints", dyn / "c1", dyn / "c2", dyn / "c3", dyn / "b4", *NEW, "--timeout", "10"
    )
    assert code == 1 and "  refused: node(s) [4] are not voters (voters [1, 2, 3])" in out, out


@pytest.fixture
def sim_dyn():
    """The simulated quorum answering as the fixture's cluster."""
    from quorumctl.testing.scenarios import demo_cluster

    c = demo_cluster(start=False)
    c.cluster_id = CLUSTER
    c.start()
    c.advertise_controllers()
    try:
        yield c
    finally:
        c.stop()


def test_a_controller_answering_on_a_new_endpoint_refuses(cli, dyn, sim_dyn):
    addr = sim_dyn.node_by_id(2).address
    before = tree(dyn)
    code, out, err = cli(
        "voters",
        "set-endpoints",
        dyn / "c1",
        dyn / "c2",
        dyn / "c3",
        "-e",
        f"2=CONTROLLER://{addr}",
        "--timeout",
        "2",
        "--apply",
    )
    assert (code, err) == (1, "")
    assert (
        f"  refused: voter 2's endpoint {addr}: answers as a controller following leader 1 of cluster {CLUSTER}: "
        "a controller of this cluster runs there; stop every controller first"
    ) in out, out
    assert tree(dyn) == before


def test_dry_run_then_apply_appends_one_batch_in_a_new_epoch_on_every_voter(cli, dyn, verify_clean):
    import recover_chaos as rc

    dirs = [dyn / f"c{n}" for n in (1, 2, 3)]
    before = tree(dyn)
    code, out, err = cli("voters", "set-endpoints", *dirs, *NEW, "--timeout", "10")
    assert (code, err) == (0, "")
    assert tree(dyn) == before
    lines = out.splitlines()
    assert lines[0] == "Endpoint change for voters [1, 2, 3], dry run"
    assert f"  voter 2 ({DIRS[2]}): CONTROLLER://localhost:19192 -> CONTROLLER://k2.invalid:9093" in lines
    assert (
        "  new epoch: 2 (the highest epoch any voter has seen is 1); the voters then elect a leader in epoch 3"
    ) in lines
    assert lines[-1] == "Run again with --apply to do it (every controller must be stopped)."

    code, out, err = cli("voters", "set-endpoints", *dirs, *NEW, "--timeout", "10", "--apply", "-o", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert [c["node_id"] for c in doc["applied"]["changed"]] == [2, 3, 1]  # the base last
    segs = [d / "__cluster_metadata-0" / "00000000000000000000.log" for d in dirs]
    assert len({s.read_bytes() for s in segs}) == 1  # the same bytes on every voter
    offset, epoch, voters = voters_records(segs[0])[-1]
    assert (offset, epoch) == (315, 2)
    assert [
        (v["voterId"], v["voterDirectoryId"], [(e["name"], e["host"], e["port"]) for e in v["endpoints"]])
        for v in voters
    ] == [(n, DIRS[n], [("CONTROLLER", f"k{n}.invalid", 9093)]) for n in (1, 2, 3)]
    for d in dirs:
        qs = json.loads((d / "__cluster_metadata-0" / "quorum-state").read_text())
        assert (qs["leaderId"], qs["leaderEpoch"], qs["votedId"]) == (-1, 2, -1)
        assert (d / "__cluster_metadata-0" / "leader-epoch-checkpoint").read_text().splitlines()[-1] == "2 315"
        verify_clean(d)
    assert rc.log_matching_clashes({f"c{n}": dyn / f"c{n}" for n in (1, 2, 3)}) == []

    # run again (as after a crash between two voters): nothing left to do, nothing written
    after = tree(dyn)
    code, out, err = cli("voters", "set-endpoints", *dirs, *NEW, "--timeout", "10", "--apply")
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "Nothing to change: every voter's log already holds these endpoints."
    assert tree(dyn) == after


def test_a_run_interrupted_after_one_voter_completes_without_a_second_batch(cli, dyn):
    """One voter changed (as when the run stopped after it), the others not: run again, the
    changed one is the base and the others become copies of it; no second batch."""
    import recover_chaos as rc

    dirs = [dyn / f"c{n}" for n in (1, 2, 3)]
    code, _, _ = cli("voters", "set-endpoints", *dirs, *NEW, "--timeout", "10", "--apply")
    assert code == 0
    for n in (1, 3):  # put 1 and 3 back as they were: only 2 holds the batch
        shutil.rmtree(dyn / f"c{n}")
        shutil.copytree(DYN / f"c{n}", dyn / f"c{n}")
    code, out, err = cli("voters", "set-endpoints", *dirs, *NEW, "--timeout", "10", "--apply", "-o", "json")
    assert (code, err) == (0, "")
    plan = json.loads(out)["plan"]
    assert (plan["base"]["node_id"], plan["append"], plan["new_epoch"]) == (2, False, 2)
    assert sorted(c["node_id"] for c in json.loads(out)["applied"]["changed"]) == [1, 3]
    segs = [d / "__cluster_metadata-0" / "00000000000000000000.log" for d in dirs]
    assert len({s.read_bytes() for s in segs}) == 1
    assert [(o, e) for o, e, _ in voters_records(segs[0])][-1] == (315, 2)
    assert rc.log_matching_clashes({f"c{n}": dyn / f"c{n}" for n in (1, 2, 3)}) == []


def test_check_offline_names_every_stale_endpoint(cli, dyn):
    dirs = [dyn / f"c{n}" for n in (1, 2, 3)]
    assert cli("voters", "set-endpoints", *dirs, *NEW, "--timeout", "10", "--apply").code == 0
    conf = dyn / "c1.properties"
    conf.write_text(
        f"node.id=1\nprocess.roles=controller\ncontroller.listener.names=CONTROLLER\n"
        f"listeners=CONTROLLER://localhost:19191\ncontroller.quorum.bootstrap.servers=localhost:19191\n"
        f"log.dirs={dyn / 'c1'}\n"
    )
    code, out, err = cli("voters", "check", *dirs, "-c", conf, "--timeout", "10", "-o", "json")
    assert (code, err) == (1, "")
    doc = json.loads(out)
    assert [(c["voter_id"], c["endpoint"], c["verdict"]) for c in doc["endpoints"]] == [
        (n, f"CONTROLLER://k{n}.invalid:9093", "unresolvable") for n in (1, 2, 3)
    ]
    by = {}
    for f in doc["findings"]:
        by.setdefault(f["code"], []).append(f)
    stale = [f for f in by["stale-voter-endpoint"] if "is stale" in f["message"]]
    assert [f["message"].split(": its name")[0] for f in stale] == [
        f"voter {n}'s stored endpoint CONTROLLER://k{n}.invalid:9093 is stale" for n in (1, 2, 3)
    ]
    assert stale[0]["remedy"].startswith(
        "while the quorum has a leader: start voter 1 with advertised.listeners=CONTROLLER://localhost:19191"
    )
    # only voter 1's config given: no command to type yet, but what it needs
    assert stale[0]["remedy"].endswith(
        "if no leader can be elected: stop every controller and change the stored endpoints with `quorumctl voters "
        "set-endpoints` (docs/membership.md); the complete command needs the new endpoint of voter(s) 2, 3 (-c its "
        "server.properties): run this check again with them"
    ), stale[0]["remedy"]
    # the config against the voter set: it advertises the old address, bootstraps from no voter
    assert any(
        f["message"] == "node 1 advertises CONTROLLER://localhost:19191, but the voter set holds "
        "CONTROLLER://k1.invalid:9093: the other voters and the brokers reach it at the old address"
        for f in by["stale-voter-endpoint"]
    )
    (b,) = by["bootstrap-server-not-a-voter"]
    assert b["message"] == (
        f"{conf}: controller.quorum.bootstrap.servers names localhost:19191, which no voter's "
        "stored endpoint is: none of its entries is"
    )


def test_check_text_and_bad_input(cli, dyn):
    code, out, err = cli("voters", "check", dyn / "c1", "--timeout", "10")
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[1] == f"voter 1 (directory id {DIRS[1]})"
    assert lines[2].startswith("  CONTROLLER://localhost:19191 -> ") and lines[2].endswith(
        ": nothing answers as a controller"
    )
    assert lines[-1] == "3 finding(s): 3 error(s), 0 warning(s)"
    assert cli("voters", "check").err == (
        "quorumctl: error: give --bootstrap-controller/--bootstrap-server (live), "
        "or the controllers' log dirs or -c server.properties (offline)\n"
    )
    assert cli("voters", "check", dyn / "c1", "--timeout", "0").code == 2


def test_check_live_against_the_simulated_quorum(cli, sim_dyn):
    """Every voter answers on its endpoint as itself: clean; exit 0."""
    code, out, err = cli(
        "voters", "check", "--bootstrap-controller", sim_dyn.node_by_id(1).address, "--timeout", "3", "-o", "json"
    )
    doc = json.loads(out)
    assert (code, err) == (0, ""), doc["findings"]
    assert doc["live"] and doc["cluster_id"] == CLUSTER
    assert {c["verdict"] for c in doc["endpoints"]} == {"ok"} and len(doc["endpoints"]) == 3


def test_an_observer_with_a_voters_id_is_a_replaced_directory():
    from quorumctl.diagnose.live_quorum import observer_findings
    from quorumctl.domain.quorum import Quorum, Replica

    r = lambda i, d: Replica(i, d, 100, 5_000, 5_000)  # noqa: E731
    q = Quorum(
        1, 7, 100, voters=[r(1, "A" * 22), r(2, "B" * 22), r(3, "C" * 22)], observers=[r(2, "N" * 22), r(4, "D" * 22)]
    )
    (f,) = observer_findings(q, "h:1", "h:1")
    assert (f.code, f.node_id) == ("voter-directory-replaced", 2)
    assert f.message == (
        f"controller 2 runs as an observer with directory id {'N' * 22}; the voter set names 2 "
        f"with directory id {'B' * 22} (a replaced disk?): the quorum has 2 voters, one fewer "
        "than believed"
    )
    assert f.remedy.startswith("quorumctl replace-controller 2 --bootstrap-controller h:1 (a dry run;")
    # the removed old directory id, listed by the leader after its last fetch: no finding
    q.observers = [Replica(2, "N" * 22, 90, 5_000 - 15_000, None)]
    assert observer_findings(q, "h:1", "h:1") == []


def test_doctor_live_reports_the_same_endpoint_findings(cli, dyn, sim_dyn):
    """doctor --bootstrap-controller probes the live voter set's endpoints with voters
    check's code: a voter that accepts and never answers is named, with its fix."""
    sim_dyn.silence(3)
    leader = sim_dyn.node_by_id(1).address
    code, out, err = cli("doctor", dyn / "c1", "--bootstrap-controller", leader, "--timeout", "2", "-o", "json")
    assert code == 1, out + err
    (f,) = [f for f in json.loads(out)["findings"] if f["code"] == "stale-voter-endpoint"]
    three = sim_dyn.node_by_id(3).address
    assert f["message"].startswith(
        f"voter 3's stored endpoint CONTROLLER://{three} is stale: nothing answers there as a controller"
    ), f
    assert f["evidence"][0].startswith(f"{three}: accepts: a TCP connection is accepted, but no Kafka answer comes")
    assert f["remedy"].startswith(
        "start voter 3 with advertised.listeners set to its CONTROLLER listener's new host:port (its config not "
        "given here): a running voter"
    ), f["remedy"]


def test_interrupted_at_every_step_each_voter_is_old_or_new_and_a_rerun_converges(cli, dyn, tmp_path):
    """Crashed at every step of --apply (a subprocess killed by the fault hook): each voter's
    partition directory is wholly old or wholly new, and a second run leaves the same bytes
    on every voter, the batch once, and no log-matching clash."""
    import os
    import subprocess
    import sys

    import recover_chaos as rc
    from quorumctl.ops import fsutil

    dirs = [dyn / f"c{n}" for n in (1, 2, 3)]
    argv = [
        "voters",
        "set-endpoints",
        *map(str, dirs),
        *NEW,
        "--timeout",
        "10",
        "--apply",
    ]  # nothing listens: refused at once; 10 s only bounds a loaded machine
    pristine = tmp_path / "pristine"
    for d in dirs:
        shutil.copytree(d, pristine / d.name)
    old = {d.name: tree(d / "__cluster_metadata-0") for d in dirs}

    def reset():
        for d in dirs:
            shutil.rmtree(d)
            shutil.rmtree(str(d) + ".quorumctl-backup", ignore_errors=True)
            shutil.copytree(pristine / d.name, d)

    fsutil.set_fault_hook(lambda n, name: None)
    try:
        assert cli(*argv).code == 0
        steps = fsutil.steps_taken()
    finally:
        fsutil.set_fault_hook(None)
    assert len(steps) >= 9, steps
    for n in range(1, len(steps) + 1):
        reset()
        p = subprocess.run(
            [sys.executable, "-m", "quorumctl", *argv],
            capture_output=True,
            text=True,
            env={**os.environ, "QUORUMCTL_TEST_CRASH_AT_STEP": str(n)},
        )
        assert p.returncode == fsutil.CRASH_EXIT, (n, steps[n - 1], p.stdout, p.stderr)
        for d in dirs:
            now = tree(d / "__cluster_metadata-0")
            changed = [
                o for o, _, _ in voters_records(d / "__cluster_metadata-0" / "00000000000000000000.log") if o == 315
            ]
            assert now == old[d.name] or changed == [315], (n, steps[n - 1], d.name)
        code, out, err = cli(*argv)
        assert code == 0, (n, steps[n - 1], out, err)
        segs = {(d / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes() for d in dirs}
        assert len(segs) == 1, (n, steps[n - 1])
        assert [
            o for o, _, _ in voters_records(dirs[0] / "__cluster_metadata-0" / "00000000000000000000.log") if o >= 315
        ] == [315], (n, steps[n - 1])
        assert rc.log_matching_clashes({d.name: d for d in dirs}) == [], (n, steps[n - 1])


def _confs(dyn, where: dict[int, str]) -> list[str]:
    """-c files for controllers 1-3 advertising `where[n]` (host:port) and bootstrapping from all of them."""
    boot = ",".join(where[n] for n in (1, 2, 3))
    out = []
    for n in (1, 2, 3):
        conf = dyn / f"c{n}.properties"
        conf.write_text(
            f"node.id={n}\nprocess.roles=controller\ncontroller.listener.names=CONTROLLER\n"
            f"listeners=CONTROLLER://{where[n]}\ncontroller.quorum.bootstrap.servers={boot}\nlog.dirs={dyn / f'c{n}'}\n"
        )
        out += ["-c", str(conf)]
    return out


def _moved(cli, dyn) -> list:
    """The fixture's voters stored under names that do not resolve (k1.invalid...), as after a move."""
    dirs = [dyn / f"c{n}" for n in (1, 2, 3)]
    assert cli("voters", "set-endpoints", *dirs, *NEW, "--timeout", "10", "--apply").code == 0
    return dirs


def test_doctor_offline_names_stale_endpoints_from_the_configs(cli, dyn):
    """Offline doctor on moved dirs: each controller's config advertises another endpoint than the
    stored one (warning, with the set-endpoints command line), and bootstraps from no stored endpoint."""
    dirs = _moved(cli, dyn)
    confs = _confs(dyn, {n: f"localhost:1919{n}" for n in (1, 2, 3)})
    code, out, err = cli("doctor", *dirs, *confs, "-o", "json")
    assert (code, err) == (1, "")
    got = json.loads(out)["findings"]
    stale = [f for f in got if f["code"] == "stale-voter-endpoint"]
    assert [(f["severity"], f["message"]) for f in stale] == [
        (
            "warning",
            f"node {n} advertises CONTROLLER://localhost:1919{n}, but the voter set holds "
            f"CONTROLLER://k{n}.invalid:9093: the other voters and the brokers reach it at the old address",
        )
        for n in (1, 2, 3)
    ]
    line = (
        f"quorumctl voters set-endpoints {dirs[0]} {dirs[1]} {dirs[2]} --endpoint 1=CONTROLLER://localhost:19191 "
        "--endpoint 2=CONTROLLER://localhost:19192 --endpoint 3=CONTROLLER://localhost:19193"
    )
    assert stale[0]["remedy"] == (
        "while the quorum has a leader: start voter 1 with advertised.listeners=CONTROLLER://localhost:19191: a "
        "running voter whose endpoint differs updates it itself (UpdateRaftVoter, KIP-853), or fix the name's DNS "
        "record; if no leader can be elected: stop every controller, then change the stored endpoints (a dry "
        f"run; add --apply to write): `{line}`"
    )
    assert all(f"`{line}`" in f["remedy"] for f in stale)  # one command for every stale voter
    # the printed line runs as printed (a dry run), then with --apply: the voter set holds what the configs say
    before = tree(dyn)
    code, out, err = cli(*shlex.split(line)[1:], "--timeout", "5")
    assert (code, err) == (0, ""), out + err
    assert tree(dyn) == before
    assert cli(*shlex.split(line)[1:], "--timeout", "5", "--apply").code == 0
    seg = dirs[0] / "__cluster_metadata-0" / "00000000000000000000.log"
    assert [[(e["name"], e["host"], e["port"]) for e in v["endpoints"]] for v in voters_records(seg)[-1][2]] == [
        [("CONTROLLER", "localhost", 19190 + n)] for n in (1, 2, 3)
    ]
    code, out, err = cli("doctor", *dirs, *confs, "-o", "json")
    assert not [f for f in json.loads(out)["findings"] if f["code"] == "stale-voter-endpoint"], out
    boot = [f for f in got if f["code"] == "bootstrap-server-not-a-voter"]
    assert [f["message"] for f in boot] == [
        f"{dyn / f'c{n}.properties'}: controller.quorum.bootstrap.servers names localhost:19191, localhost:19192, "
        "localhost:19193, which no voter's stored endpoint is: none of its entries is"
        for n in (1, 2, 3)
    ]


@pytest.fixture
def sim_no_leader(sim_dyn):
    """The fixture's cluster running on the simulated quorum with no leader (every controller answers,
    none leads), as every controller moved to its new address does."""
    sim_dyn.set_leader(-1, 5)
    return sim_dyn


def test_doctor_no_leader_every_controller_moved_names_set_endpoints_not_recover(cli, dyn, sim_no_leader):
    """Live, no leader, the stored names gone, the controllers answering on their configured
    (new) endpoints: stale endpoints with the set-endpoints fix; never majority-lost or recover."""
    dirs = _moved(cli, dyn)
    where = {n: sim_no_leader.node_by_id(n).address for n in (1, 2, 3)}
    confs = _confs(dyn, where)
    code, out, err = cli("doctor", *dirs, *confs, "--bootstrap-controller", where[1], "--timeout", "2", "-o", "json")
    assert (code, err) == (1, ""), out + err
    got = json.loads(out)["findings"]
    codes = [f["code"] for f in got]
    assert "majority-lost" not in codes and "live-unreachable" not in codes, got
    assert not [f for f in got if "recover" in f["remedy"]], got
    (nl,) = [f for f in got if f["code"] == "live-no-leader"]
    assert nl["message"].startswith(f"{where[1]}: no answer to DescribeQuorum (")
    assert nl["message"].endswith(
        "): no leader; controllers of this cluster answer, but not on the endpoints the voter set stores"
    )
    stale = [f for f in got if f["code"] == "stale-voter-endpoint" and f["severity"] == "error"]
    assert [f["message"] for f in stale] == [
        f"voter {n}'s stored endpoint CONTROLLER://k{n}.invalid:9093 is stale: its name k{n}.invalid does not "
        "resolve (Name or service not known)"
        for n in (1, 2, 3)
    ]
    assert stale[1]["remedy"] == (
        "no leader can be elected while the voters cannot reach each other: fix the name's DNS record, or stop "
        "every controller, then change the stored endpoints (a dry run; add --apply to write): `quorumctl voters "
        f"set-endpoints {dirs[0]} {dirs[1]} {dirs[2]} "
        + " ".join(f"--endpoint {n}=CONTROLLER://{where[n]}" for n in (1, 2, 3))
        + "`"
    )
    # the evidence: each node answers at its configured endpoint, as a controller of this cluster with no leader
    assert (
        f"{where[2]}: answers as a controller that knows no leader of cluster {CLUSTER} "
        f"({dyn / 'c2.properties'}: node 2 advertises it)"
    ) in stale[1]["evidence"], stale[1]["evidence"]


def test_doctor_no_leader_without_configs_counts_the_controllers_answering_elsewhere(cli, dyn, sim_no_leader):
    """No -c: the bootstrap addresses answer as controllers of this cluster, the stored names do not
    resolve: a majority runs elsewhere, so stale endpoints, not a lost majority. With one
    controller answering, the majority is lost, and its remedy says set-endpoints first."""
    dirs = _moved(cli, dyn)
    addrs = [sim_no_leader.node_by_id(n).address for n in (1, 2, 3)]
    code, out, err = cli("doctor", *dirs, "--bootstrap-controller", ",".join(addrs), "--timeout", "2", "-o", "json")
    assert (code, err) == (1, ""), out + err
    got = json.loads(out)["findings"]
    assert sorted({f["code"] for f in got}) == ["live-no-leader", "stale-voter-endpoint"], got
    stale = [f for f in got if f["code"] == "stale-voter-endpoint"]
    # no config: the new endpoints are not known here, and the remedy says so instead of a command to fill in
    assert [f["remedy"].split("; the complete command needs ")[1] for f in stale] == [
        "the new endpoint of voter(s) 1, 2, 3 (-c its server.properties): run this check again with them"
    ] * 3

    for n in (2, 3):
        sim_no_leader.node_by_id(n).stop()
    code, out, err = cli("doctor", *dirs, "--bootstrap-controller", addrs[0], "--timeout", "2", "-o", "json")
    assert (code, err) == (1, ""), out + err
    got = {f["code"]: f for f in json.loads(out)["findings"]}
    assert sorted(got) == ["live-unreachable", "majority-lost", "stale-voter-endpoint"], got
    assert got["majority-lost"]["message"] == (
        "majority lost: 0 of 3 voters answer (none); the quorum needs 2 to elect a leader, so the metadata log "
        "cannot move"
    )
    assert got["majority-lost"]["remedy"].startswith(
        "first: the stored endpoints of voter(s) 1, 2, 3 are stale (stale-voter-endpoint): if those controllers "
        "still run under other names or addresses, the majority is not lost and the fix is `quorumctl voters "
        "set-endpoints` (docs/membership.md), never recover; otherwise: bring the lost voters back"
    )


# -- set-endpoints: its refusals write nothing; the backup ---------------------------------


def _set_endpoints(cli, dyn, *extra):
    return cli("voters", "set-endpoints", *[dyn / f"c{n}" for n in (1, 2, 3)], *NEW, "--timeout", "5", *extra)


def test_a_broker_that_sees_a_leader_refuses(cli, dyn, sim_dyn, monkeypatch):
    """Broker 4, registered in the log, answers at its address and sees leader 1 (DescribeQuorum
    forwarded): the quorum is alive, so its endpoints are not stale beyond repair. The log's
    registration names localhost:19194; here the broker is the simulated one, at its own port."""
    from quorumctl.ops import voter_endpoints

    broker = sim_dyn.node_by_id(4).address
    host, port = broker.rsplit(":", 1)
    real = voter_endpoints.registrations
    monkeypatch.setattr(voter_endpoints, "registrations", lambda base: ({4: [(host, int(port))]}, real(base)[1]))
    from quorumctl.raft.replica import load_replica

    assert real(load_replica(str(dyn / "c1")))[0] == {4: [("localhost", 19194)]}
    before = tree(dyn)
    code, out, err = _set_endpoints(cli, dyn, "--apply")
    assert (code, err) == (1, "")
    assert (
        f"  refused: broker 4 at {broker} sees leader 1 in epoch 3 (DescribeQuorum, forwarded to the active "
        "controller): the quorum has a leader, so its endpoints are not stale beyond repair: a voter that "
        "restarts with new listeners updates its endpoints itself (UpdateRaftVoter, KIP-853)"
    ) in out.splitlines(), out
    assert tree(dyn) == before


def test_a_held_lock_refuses(cli, dyn):
    """Kafka (any process) holding a voter's .lock: refused, naming the dir and the pid; nothing written."""
    import subprocess
    import sys

    hold = (
        "import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
        "fcntl.lockf(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)\n"
    )
    part = dyn / "c2" / "__cluster_metadata-0"
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(dyn / "c2" / ".lock")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = tree(dyn)
        for extra in ([], ["--apply"]):
            code, out, err = _set_endpoints(cli, dyn, *extra)
            assert (code, err) == (1, ""), out + err
            assert (
                f"  refused: Kafka still runs on {dyn / 'c2'} (pid {holder.pid}): stop every controller first"
            ) in out.splitlines(), out
            assert tree(dyn) == before
    finally:
        holder.kill()
        holder.wait()
    assert part.is_dir()


def test_a_directory_id_that_is_not_the_voters_refuses(cli, dyn):
    meta = dyn / "c2" / "meta.properties"
    meta.write_text(meta.read_text().replace(DIRS[2], "AAAAAAAAAAAAAAAAAAAAAQ"))
    before = tree(dyn)
    code, out, err = _set_endpoints(cli, dyn, "--apply")
    assert (code, err) == (1, "")
    assert (
        f"  refused: {dyn / 'c2'}: directory id AAAAAAAAAAAAAAAAAAAAAQ, but the voter set holds voter 2 with "
        f"{DIRS[2]}: not that voter's disk (a replaced disk is a case for `quorumctl replace-controller 2` once "
        "the quorum has a leader)"
    ) in out.splitlines(), out
    assert tree(dyn) == before


def test_a_log_matching_clash_refuses(cli, dyn):
    """c1 and c3 hold different batches at (315, 1): the logs were changed outside Raft; refused."""
    from quorumctl.records.batch import encode_batch

    import struct

    crcs = {}
    for n, ts in ((1, 1_800_000_000_000), (3, 1_800_000_000_001)):
        raw = encode_batch(
            [(None, md.encode_metadata("NoOpRecord", 0, {}))], base_offset=315, leader_epoch=1, base_timestamp=ts
        )
        crcs[n] = struct.unpack(">I", raw[17:21])[0]
        with open(dyn / f"c{n}" / "__cluster_metadata-0" / "00000000000000000000.log", "ab") as f:
            f.write(raw)
    before = tree(dyn)
    code, out, err = _set_endpoints(cli, dyn, "--apply")
    assert (code, err) == (1, "")
    (line,) = [ln for ln in out.splitlines() if ln.startswith("  refused: ")]
    seg = "__cluster_metadata-0/00000000000000000000.log position 23456 (offsets 315..315, crc"
    assert line == (
        f"  refused: log-matching: offset 315, epoch 1: node 1 {dyn / 'c1'}/{seg} {crcs[1]}) and node 3 "
        f"{dyn / 'c3'}/{seg} {crcs[3]}) are different batches; Raft assumes one entry per (offset, epoch), so "
        "neither replica's Fetch will ever notice; the replicas were changed outside Raft before: repair them "
        "first (`quorumctl state` names the replica to truncate)"
    ), line
    assert tree(dyn) == before


def test_the_backup_holds_what_was_replaced(cli, dyn):
    """--backup-dir: one run per voter there, each with its plan (done) and the files it replaced:
    the base's changed files as they were, every other voter's whole old partition directory. A
    backup dir inside a log dir is refused before anything is written."""
    import hashlib

    def hashes(d):
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir()) if p.is_file()}

    old = {n: hashes(DYN / f"c{n}" / "__cluster_metadata-0") for n in (1, 2, 3)}
    before = tree(dyn)
    code, out, err = _set_endpoints(cli, dyn, "--apply", "--backup-dir", dyn / "c2" / "bk")
    assert (code, out) == (1, "")
    assert err == (
        f"quorumctl: error: the backup dir {dyn / 'c2' / 'bk'} is inside the log dir {dyn / 'c2'}, where a broker "
        "would take it for a partition; choose a directory outside it on the same file system\n"
    )
    assert tree(dyn) == before

    bk = dyn / "bk"
    code, out, err = _set_endpoints(cli, dyn, "--apply", "--backup-dir", bk, "-o", "json")
    assert (code, err) == (0, ""), out + err
    changed = {c["node_id"]: c for c in json.loads(out)["applied"]["changed"]}
    assert sorted(changed) == [1, 2, 3]
    for n, c in changed.items():
        run = c["backup_dir"]
        assert run.startswith(f"{bk}/") and run.endswith("-set-endpoints-__cluster_metadata-0"), run
        plan = json.loads(open(f"{run}/plan.json").read())
        assert plan["status"] == "done" and plan["set_endpoints"]["new_epoch"] == 2
        saved = hashes(bk / run.rsplit("/", 1)[1] / "__cluster_metadata-0")
        if n == 1:  # the base: its three changed files, as they were
            assert sorted(saved) == ["00000000000000000000.log", "leader-epoch-checkpoint", "quorum-state"]
        else:  # replaced by a copy of the base's: the whole old directory
            assert sorted(saved) == sorted(old[n])
        assert saved == {k: old[n][k] for k in saved}
        assert c["backed_up"] == sorted(saved)


# -- voters check: what answers at a stored endpoint -----------------------------------------


def _forward(listen: tuple[str, int], target: str):
    """A TCP forwarder on `listen` to `target` (host:port): another node answering at that address.
    Returns its listening socket (close it to stop)."""
    import threading

    srv = socket.socket()
    srv.bind(listen)
    srv.listen(16)
    host, port = target.rsplit(":", 1)

    def pipe(a, b):
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            up = socket.create_connection((host, int(port)))
            threading.Thread(target=pipe, args=(c, up), daemon=True).start()
            threading.Thread(target=pipe, args=(up, c), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return srv


def test_check_names_another_cluster_and_a_name_answering_partly(cli, sim_dyn, monkeypatch):
    """The voter set stores: voter 1 under a name with two addresses, one where nothing listens
    (ok: Kafka's clients try each); voter 2 under a name with two addresses, the voter at one,
    another cluster's controller at the other (partly); voter 3 at an address where another
    cluster's controller answers (other). Names resolve through a stand-in resolver; every
    address is probed for real."""
    from quorumctl.diagnose import voters as voters_mod
    from quorumctl.testing.scenarios import DEMO_CLUSTER_ID, demo_cluster
    from quorumctl.testing.sim import node

    other = demo_cluster()  # another cluster, its own id
    p1, p2 = sim_dyn.node_by_id(1).port, sim_dyn.node_by_id(2).port
    q3 = other.node_by_id(3).port
    fwd = _forward(("127.0.0.2", p2), other.node_by_id(2).address)
    names = {"k1.multi": ["127.0.0.1", "127.0.0.3"], "k2.multi": ["127.0.0.1", "127.0.0.2"]}
    real = voters_mod.resolve
    monkeypatch.setattr(voters_mod, "resolve", lambda h, p: (names[h], None) if h in names else real(h, p))
    sim_dyn.nodes = [
        node(1, ("CONTROLLER", "k1.multi", p1)),
        node(2, ("CONTROLLER", "k2.multi", p2)),
        node(3, ("CONTROLLER", "127.0.0.1", q3)),
    ]
    try:
        code, out, err = cli(
            "voters", "check", "--bootstrap-controller", sim_dyn.node_by_id(1).address, "--timeout", "3", "-o", "json"
        )
    finally:
        fwd.close()
        other.stop()
    assert (code, err) == (1, ""), out + err
    doc = json.loads(out)
    got = [(c["voter_id"], c["endpoint"], c["addresses"], c["verdict"]) for c in doc["endpoints"]]
    assert got == [
        (1, f"CONTROLLER://k1.multi:{p1}", ["127.0.0.1", "127.0.0.3"], "ok"),
        (2, f"CONTROLLER://k2.multi:{p2}", ["127.0.0.1", "127.0.0.2"], "partly"),
        (3, f"CONTROLLER://127.0.0.1:{q3}", ["127.0.0.1"], "other"),
    ]
    probes = {(p["address"], p["state"], p["cluster_id"]) for c in doc["endpoints"] for p in c["probes"]}
    assert probes == {
        (f"127.0.0.1:{p1}", "answers", CLUSTER),
        (f"127.0.0.3:{p1}", "silent", None),
        (f"127.0.0.1:{p2}", "answers", CLUSTER),
        (f"127.0.0.2:{p2}", "answers", DEMO_CLUSTER_ID),
        (f"127.0.0.1:{q3}", "answers", DEMO_CLUSTER_ID),
    }
    stale = {f["message"]: f for f in doc["findings"] if f["code"] == "stale-voter-endpoint"}
    assert sorted(stale) == [
        f"voter 2's stored endpoint CONTROLLER://k2.multi:{p2} is stale: another node answers at some of its "
        "addresses, voter 2 at others (k2.multi resolves to 127.0.0.1, 127.0.0.2)",
        f"voter 3's stored endpoint CONTROLLER://127.0.0.1:{q3} is stale: another node answers there (127.0.0.1 "
        "resolves to 127.0.0.1)",
    ]
    three = stale[sorted(stale)[1]]
    assert three["evidence"] == [
        f"127.0.0.1:{q3}: answers: answers as a controller following leader 1 of cluster {DEMO_CLUSTER_ID} (node 3)"
    ]
    assert three["remedy"].startswith(
        "start voter 3 with advertised.listeners set to its CONTROLLER listener's new host:port (its config not "
        "given here): a running voter"
    ), three["remedy"]
