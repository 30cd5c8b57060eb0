"""Every writing command fed its mistyped inputs on one real Kafka 4.3 cluster (a dynamic
quorum of three controllers, one broker): each is refused (exit 2 for bad input, 1 for a
refusal; never a traceback), or accepted and harmless, dry run and --apply alike. Judged
apart from quorumctl's report: for the live commands Kafka's own tools show the same state
before and after and every node still runs; the offline commands leave every file of the
stopped node's log dirs as it was, and Kafka starts the node again cleanly with the same
voters. `voters set-endpoints` is fed its own in test_kafka_input_refusals.py (a quorum of
controllers only). docs/mistyped-input.md lists every input with its test."""

from __future__ import annotations

import json
import os
import re
import signal
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
from kafka41 import start_cluster

import recover_chaos as rc

pytestmark = pytest.mark.kafka("4.3")

CONTROLLERS = (1, 2, 3)
BROKER = 4
NODES = (*CONTROLLERS, BROKER)


@pytest.fixture(scope="module")
def k(cli, tmp_path_factory):
    k = start_cluster(cli, tmp_path_factory, "mistyped", dynamic=True, version="4.3", brokers=1)
    try:
        yield k
    finally:
        k.discard()


def kafka_state(k) -> dict:
    """The cluster as Kafka's own tools describe it, less what moves on its own (the high
    watermark, lags, the features' epoch, who leads): the voters with their directory ids and
    endpoints, the observers, the feature levels, the controllers' and brokers' registrations
    (fenced or not). And every node of the cluster script runs."""
    via = ",".join(k.controllers)
    calls = {
        "status": ("kafka-metadata-quorum", ["--bootstrap-controller", via, "describe", "--status"]),
        "features": ("kafka-features", ["--bootstrap-controller", via, "describe"]),
        "controllers": ("kafka-cluster", ["list-endpoints", "--bootstrap-controller", via]),
        "brokers": ("kafka-cluster", ["list-endpoints", "--bootstrap-server", k.bootstrap]),
    }
    with ThreadPoolExecutor(len(calls)) as pool:
        ran = {name: pool.submit(k.tool, tool, args, 150) for name, (tool, args) in calls.items()}
    out = {}
    for name, f in ran.items():
        p = f.result()
        assert p.returncode == 0, (name, p.stdout, p.stderr[-2000:])
        out[name] = p.stdout
    status = dict(re.findall(r"^(\w+):\s+(.*)$", out["status"], re.M))
    state = {
        "cluster id": status["ClusterId"],
        "voters": sorted(
            (v["id"], v["directoryId"], tuple(v["endpoints"])) for v in json.loads(status["CurrentVoters"])
        ),
        "observers": sorted((o["id"], o["directoryId"]) for o in json.loads(status["CurrentObservers"])),
        "features": re.sub(r"\s+Epoch: \d+", "", out["features"]),
        "controllers": out["controllers"],
        "brokers": out["brokers"],
    }
    running = k.run("status", check=False)
    assert running.returncode == 0, running.stdout + running.stderr  # exit 3 unless every node runs
    return state


def feed(cli, cases, *, applies=("--apply",)):
    """Run every (args, exit code, reason) of `cases` once as given and once with each
    option of `applies` added (--apply; --dry-run for the commands that act by default):
    exit 2 is one line on stderr, nothing on stdout; exit 1 names the reason on stdout or
    in one line on stderr; never a traceback or an internal error."""
    for args, code, why in cases:
        for extra in ((), *((a,) for a in applies)):
            cut = args.index("--") if "--" in args else len(args)  # options before a "--"
            got, out, err = cli(*args[:cut], *extra, *args[cut:])
            what = (args, extra, got, out[-1500:], err)
            assert got == code, what
            assert "Traceback" not in out + err and "internal error" not in err, what
            assert err == "" or (err.startswith("quorumctl: error: ") and err.count("\n") == 1), what
            if code == 2:
                assert out == "" and why in err, what
            else:
                assert why in out + err, what


SEEN: dict = {}  # cluster dir -> the state the last test left: the next test's "before"


@pytest.fixture
def unchanged(k):
    """Kafka's state before the test (as the previous test left it, checked then); after
    it, the same state, every node running."""
    before = SEEN.pop(k.d, None) or kafka_state(k)
    assert before["voters"] == sorted(
        (n, k.dir_ids[n], (f"CONTROLLER://127.0.0.1:{k.base + n}",)) for n in CONTROLLERS
    ), before
    assert [o[0] for o in before["observers"]] == [BROKER], before
    yield before
    if k.d not in SEEN:  # an offline test's restart compared it already
        SEEN[k.d] = kafka_state(k)
    assert SEEN[k.d] == before


# -- live commands: Kafka's tools show the same cluster after the mistakes ---------------------


def test_features_upgrade_downgrade_disable(cli, k, unchanged):
    via = ["--bootstrap-controller", ",".join(k.controllers)]
    broker = ["--bootstrap-server", k.bootstrap]
    assert "FinalizedVersionLevel: 4.3-IV0" in unchanged["features"]
    feed(
        cli,
        [
            (
                ["features", "upgrade", *via, "--metadata", "4.9-IV9"],
                2,
                "Unknown metadata.version '4.9-IV9'. Supported metadata.version are: 3.3-IV3, ",
            ),
            (["features", "downgrade", *broker, "--metadata", "4.9-IV9"], 2, "Unknown metadata.version '4.9-IV9'"),
            (
                ["features", "upgrade", *via, "--feature", "group.version"],
                2,
                "Can't parse feature=level string group.version: equals sign not found.",
            ),
            (
                ["features", "upgrade", *broker, "--feature", "group.version=x"],
                2,
                "Can't parse feature=level string group.version=x: unable to parse x as a short.",
            ),
            (
                ["features", "upgrade", *via, "--feature", "group.version=1", "--feature", "group.version=0"],
                2,
                "Feature group.version was specified more than once.",
            ),
            (
                ["features", "downgrade", *via, "--feature", "group.version=0", "--feature", "group.version=0"],
                2,
                "Feature group.version was specified more than once.",
            ),
            # what parses and Kafka refuses: its verdict (UpdateFeatures with validateOnly), nothing sent
            (
                ["features", "upgrade", *via, "--feature", "group.version=5"],
                1,
                "Invalid update version 5 for feature group.version.",
            ),
            (
                ["features", "upgrade", *via, "--metadata", "4.1-IV1"],
                1,
                "Can't downgrade the version of this feature without setting the upgrade type",
            ),
            (
                ["features", "upgrade", *via, "--feature", "no.such.feature=1"],
                1,
                "does not support this feature.",
            ),
            (
                ["features", "downgrade", *via, "--feature", "group.version=3"],
                1,
                "Invalid update version 3 for feature group.version.",
            ),
            (["features", "disable", *via, "--feature", "metadata.version"], 1, "Can not disable metadata.version."),
            (
                ["features", "disable", *via, "--feature", "no.such.feature"],
                1,
                "Feature no.such.feature not found.",
            ),
        ],
    )


def test_add_controller(cli, k, unchanged, tmp_path):
    via = ["--bootstrap-controller", ",".join(k.controllers)]
    conf = k.conf(3).read_text()
    c5 = conf.replace("node.id=3", "node.id=5").replace(f"{k.data(3)}", f"{tmp_path / 'c5'}")
    c5 = c5.replace(f":{k.base + 3}", f":{k.base + 9}")
    files = {
        "misspelled listener": conf.replace(
            "controller.listener.names=CONTROLLER", "controller.listener.names=CONTROLER"
        ),
        "bad id": conf.replace("node.id=3", "node.id=3x"),
        "unformatted": c5,
    }
    for name, text in files.items():
        (tmp_path / f"{name.replace(' ', '-')}.properties").write_text(text)
    cfg = {name: str(tmp_path / f"{name.replace(' ', '-')}.properties") for name in files}
    feed(
        cli,
        [
            # a voter's own config (the operator meant another node): Kafka answers DUPLICATE_VOTER
            (
                ["add-controller", *via, "--command-config", str(k.conf(1))],
                1,
                "DUPLICATE_VOTER",
            ),
            (
                ["add-controller", *via, "--command-config", str(k.conf(BROKER))],
                2,
                "process.roles does not contain 'controller': is this a controller's configuration file?",
            ),
            (
                ["add-controller", *via, "--command-config", cfg["misspelled listener"]],
                2,
                "cannot find listener CONTROLER of controller.listener.names in listeners or advertised.listeners",
            ),
            (["add-controller", *via, "--command-config", cfg["bad id"]], 2, "node.id '3x' is not an integer"),
            (
                ["add-controller", *via, "--command-config", cfg["unformatted"]],
                2,
                f"Unable to read meta.properties from {tmp_path / 'c5'} (is the controller formatted?)",
            ),
            (["add-controller", *via, "--command-config", str(tmp_path / "nope")], 2, "does not exist"),
        ],
        applies=("--dry-run",),
    )
    # the dry run names the refusal itself, before Kafka would
    code, out, err = cli("add-controller", *via, "--command-config", str(k.conf(1)), "--dry-run")
    assert (code, out, err) == (
        1,
        "",
        "quorumctl: error: controller 1 is already a voter (voters 1, 2, 3): the leader would refuse it with "
        "DUPLICATE_VOTER\n",
    )


def test_remove_controller(cli, k, unchanged):
    via = ["--bootstrap-controller", ",".join(k.controllers)]
    d = k.dir_ids
    broker_dir = dict(unchanged["observers"])[BROKER]
    feed(
        cli,
        [
            # an id or a directory id that is not a voter's: the dry run refuses what the leader would
            (["remove-controller", *via, "-i", "7", "-d", d[1]], 1, "VOTER_NOT_FOUND"),
            (["remove-controller", *via, "-i", "1", "-d", d[2]], 1, "VOTER_NOT_FOUND"),
            (["remove-controller", *via, "-i", str(BROKER), "-d", broker_dir], 1, "VOTER_NOT_FOUND"),
            (
                ["remove-controller", *via, "-i", "1", "-d", "notauuid"],
                2,
                "invalid --controller-directory-id 'notauuid': expected a 22-character base64url directory id",
            ),
            (["remove-controller", *via, "-i", "-1", "-d", d[1]], 2, "invalid negative --controller-id: -1"),
        ],
        applies=("--dry-run",),
    )
    code, out, err = cli("remove-controller", *via, "-i", "1", "-d", d[1], "--apply")  # acts unless --dry-run
    assert (code, out, err) == (
        2,
        "",
        "quorumctl: error: --apply goes with --unregister (without it remove-controller acts unless --dry-run, "
        "as Kafka's does)\n",
    )
    # the dry run's own words: every voter named with its directory id
    code, out, err = cli("remove-controller", *via, "-i", "7", "-d", d[1], "--dry-run")
    assert (code, out) == (1, "")
    assert err.startswith(f"quorumctl: error: controller 7 with directory id {d[1]} is not a voter (voters ")
    assert all(f"{n} (directory id {d[n]})" in err for n in CONTROLLERS), err
    assert err.endswith("): the leader would refuse it with VOTER_NOT_FOUND\n"), err


def test_replace_controller(cli, k, unchanged):
    via = ["--bootstrap-controller", ",".join(k.controllers)]
    feed(
        cli,
        [
            (
                ["replace-controller", "7", *via],
                1,
                "refusing to replace controller 7: controller 7 is not a voter (voters 1, 2, 3) and does not fetch "
                "as an observer: nothing to replace",
            ),
            # a controller whose disk was not replaced (no observer under a new directory id)
            (
                ["replace-controller", "3", *via],
                1,
                f"controller 3 is a voter (directory id {k.dir_ids[3]}) and no observer with id 3 fetches under "
                "another directory id: nothing to replace",
            ),
            (
                ["replace-controller", "3", *via, "--endpoint", "CONTROLER://127.0.0.1:1"],
                1,
                "no observer with id 3 fetches under another directory id: nothing to replace",
            ),
            (
                ["replace-controller", "3", *via, "--endpoint", "CONTROLLER:/x"],
                2,
                "invalid --endpoint 'CONTROLLER:/x': expected NAME://HOST:PORT, e.g. CONTROLLER://c3:9093",
            ),
            # the broker's id: it fetches as an observer, but it is no controller
            (
                ["replace-controller", str(BROKER), *via, "--endpoint", f"CONTROLLER://{k.broker}"],
                1,
                f"refusing to replace controller {BROKER}: {k.broker} (CONTROLLER://{k.broker}) answers as a "
                "broker of cluster",
            ),
            (
                ["replace-controller", str(BROKER), *via],
                2,
                f"controller {BROKER}'s endpoints are not in the voter set any more: give them with --endpoint",
            ),
        ],
    )


def test_cluster_unregister(cli, k, unchanged):
    broker = ["--bootstrap-server", k.bootstrap]
    feed(
        cli,
        [
            (
                ["cluster", "unregister", *broker, "--id", str(BROKER)],
                1,
                f"Refused: broker {BROKER} is registered and unfenced at {k.broker}: it is running and heartbeating",
            ),
            (
                ["cluster", "unregister", *broker, "--id", "1"],
                1,
                f"Refused: broker 1 is not registered (registered: {BROKER})",
            ),
            (
                ["cluster", "unregister", *broker, "--id", "9"],
                1,
                f"Refused: broker 9 is not registered (registered: {BROKER})",
            ),
            (["cluster", "unregister", *broker, "--id", "x"], 2, "Invalid value for '--id' / '-i'"),
        ],
    )


def test_cluster_unregister_controller(cli, k, unchanged):
    via = ["--bootstrap-controller", ",".join(k.controllers)]
    feed(
        cli,
        [
            (
                ["cluster", "unregister-controller", *via, "--id", "2"],
                1,
                "refusing to unregister controller 2: metadata.version is 4.3-IV0 (30)",
            ),
            (
                ["cluster", "unregister-controller", *via, "--id", "9"],
                1,
                "controller 9 is not registered (registered controllers: 1, 2, 3)",
            ),
        ],
    )


def test_cluster_clear_registration(cli, k, unchanged):
    via = ["--bootstrap-controller", ",".join(k.controllers)]
    broker = ["--bootstrap-server", k.bootstrap]
    feed(
        cli,
        [
            (["cluster", "clear-registration", *via, "--", "-1"], 2, "invalid negative node id: -1"),
            (
                ["cluster", "clear-registration", "1", *via],
                1,
                "node 1 is a voter (voters 1, 2, 3): not a ghost; remove it from the voters first",
            ),
            (
                ["cluster", "clear-registration", str(BROKER), *via],
                1,
                f"node {BROKER} fetches from the leader now (an observer in DescribeQuorum: a running broker): not a "
                "ghost; stop it first",
            ),
            (
                ["cluster", "clear-registration", str(BROKER), *broker],
                1,
                f"refusing to clear broker {BROKER}'s registration: broker {BROKER} is registered and unfenced",
            ),
        ],
    )
    # an id nobody has, asked through the controllers: not known (exit 1), never "nothing to
    # clear" on a guess; its --apply asks the active controller, whose answer says so
    code, out, err = cli("cluster", "clear-registration", "9", *via)
    assert (code, err) == (1, ""), out + err
    assert out.endswith(
        "node 9 is no registered controller; whether it is a registered broker is not known from the "
        "controllers: run the step above, or this command with --bootstrap-server\n"
    ), out
    for how in (via, broker):
        code, out, err = cli("cluster", "clear-registration", "9", *how, "--apply")
        assert (code, err) == (0, ""), out + err
        assert out.endswith("node 9 is not a registered broker: nothing to clear\n"), out
    code, out, err = cli("cluster", "clear-registration", "9", *broker)  # a dry run through a broker
    assert (code, err) == (0, ""), out + err
    assert "node 9 is not a registered broker" in out, out


def test_migrate_quorum_upgrade(cli, k, unchanged, tmp_path):
    via = ["--bootstrap-controller", ",".join(k.controllers)]
    nameless = tmp_path / "no-id.properties"  # a config whose node.id line was lost in an edit
    nameless.write_text("".join(ln + "\n" for ln in k.conf(3).read_text().splitlines() if "node.id" not in ln))
    feed(
        cli,
        [
            (["migrate-quorum", "upgrade", *via, "-c", str(nameless)], 2, f"{nameless}: node.id is not set"),
            (
                ["migrate-quorum", "upgrade", *via, "-c", str(k.d / "nope.properties")],
                2,
                "nope.properties: no such file",
            ),
            (["migrate-quorum", "upgrade", "--bootstrap-server", k.bootstrap, "--timeout", "x"], 2, "--timeout"),
        ],
    )
    # already dynamic (kraft.version 1): a second upgrade, a broker's config given, changes nothing
    for extra in ((), ("--apply",)):
        code, out, err = cli("migrate-quorum", "upgrade", *via, "-c", str(k.conf(BROKER)), *extra)
        assert (code, err) == (0, ""), out + err
        assert "kraft.version is 1 already: nothing to upgrade." in out, out


# -- offline commands: no file changes, and Kafka starts the node again cleanly ----------------


def restarts_cleanly(k, nodes, before: dict) -> None:
    """Kafka starts `nodes` again on the dirs the mistakes were fed to: each logs "Kafka Server
    started", the quorum lists the same voters with the same directory ids, each node is
    caught up with the leader, and no node logs an ERROR or FATAL line since its restart."""
    if len(nodes) == 1:  # the script's start-node: up, and the quorum has a leader
        (n,) = nodes
        p = k.start_node(n, timeout=240)
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:], k.log_since_mark(n)[-3000:])
    else:  # the whole cluster: its nodes together (a lone controller elects no leader)
        for n in nodes:
            k.mark_log(n)
        k.launch(start_timeout=240)

    def caught_up():
        p = k.tool(
            "kafka-metadata-quorum",
            ["--bootstrap-controller", ",".join(k.controllers), "describe", "--replication"],
            150,
        )
        if p.returncode != 0:
            return None
        rows = [line.split() for line in p.stdout.splitlines()[1:]]
        ends = {int(r[0]): int(r[2]) for r in rows}
        leader_end = max(ends.values(), default=-1)
        return rows if set(nodes) <= set(ends) and all(ends[n] >= leader_end - 5 for n in nodes) else None

    rc.until(f"nodes {list(nodes)} caught up with the leader", caught_up, 240, every=3)
    seen: dict = {}

    def settled() -> bool:  # a restarted broker is fenced until its first heartbeat after catching up
        seen["state"] = kafka_state(k)
        return seen["state"] == before

    try:
        rc.until("the state Kafka showed before", settled, 120, every=3)
    except AssertionError:
        assert seen["state"] == before
    SEEN[k.d] = seen["state"]
    for n in nodes:
        assert not errors(k.log_since_mark(n)), errors(k.log_since_mark(n))[:3]


def errors(log: str) -> list[str]:
    """The ERROR and FATAL entries of a node's log (an entry: its line and the stack trace
    under it), but one: when the whole quorum starts at once, a controller that lost the
    election in between logs ControllerRegistration answered NotControllerException, which
    the registering controller retries with the new leader (Kafka's noise, not a fault)."""
    entries = re.split(r"\n(?=\[\d{4}-\d\d-\d\d )", log)
    return [
        e[:600]
        for e in entries
        if re.match(r"^\[[^\]]+\] (ERROR|FATAL) ", e)
        and not ("apiKey=CONTROLLER_REGISTRATION" in e and "NotControllerException: The active controller" in e)
    ]


def test_truncate(cli, k, unchanged):
    d3 = k.data(3)
    with stopped(k, [3]):
        files = rc.tree_hash(d3)
        alias = k.d / "c3-alias"
        alias.symlink_to(d3)
        ref = "is the same log dir as"
        feed(
            cli,
            [
                (["truncate", str(d3), "--reference", str(d3)], 2, f"{d3} {ref} {d3}"),
                (["truncate", str(d3), "--reference", str(d3 / "__cluster_metadata-0")], 2, ref),
                (["truncate", str(d3), "--reference", str(alias)], 2, ref),
                (["truncate", str(d3), "--reference", str(k.data(1)), "--reference", str(d3)], 2, ref),
                (["truncate", str(d3), "--to-offset", "-5"], 2, "--to-offset must not be negative (got -5)"),
                (
                    ["truncate", str(d3), "--reference", str(k.data(1)), "--to-offset", "5"],
                    2,
                    "give exactly one of --reference OTHER_DIR, --diverging-epoch E --end-offset O, --to-offset O",
                ),
                (["truncate", str(k.d / "data" / "c33"), "--to-offset", "5"], 2, "c33: no such directory"),
            ],
        )
        assert rc.tree_hash(d3) == files
        assert not [p for p in k.d.rglob("*quorumctl-backup*")]
    restarts_cleanly(k, [3], unchanged)


@contextmanager
def stopped(k, nodes):
    """`nodes` stopped for the block; started again (unchecked) when the block fails, so that
    the next test finds the cluster running."""
    for n in nodes:
        stop_node(k, n)
    ok = False
    try:
        yield
        ok = True
    finally:
        if not ok and len(nodes) == 1:
            k.start_node(nodes[0], timeout=240)
        elif not ok:
            k.launch(start_timeout=240)


def stop_node(k, n: int) -> None:
    """Stop one node as an operator does (SIGTERM, then wait until its process is gone)."""
    pid = int((k.d / "run" / f"{k.name(n)}.pid").read_text())
    os.kill(pid, signal.SIGTERM)

    def gone() -> bool:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # ended, not reaped yet
        except FileNotFoundError:
            return True

    rc.until(f"node {n} stopped", gone, 120, every=0.5)


def test_bootstrap_format(cli, k, unchanged):
    """`bootstrap format` pointed at a stopped controller's formatted dir by its own config."""
    with stopped(k, [3]):
        files = rc.tree_hash(k.data(3))
        fmt = ["bootstrap", "format", "-c", str(k.conf(3))]
        cid = k.cluster_id
        feed(
            cli,
            [
                (
                    [*fmt, "-N", "-t", "notacluster"],
                    2,
                    "invalid cluster id 'notacluster': Input string `notacluster` decoded as 8 bytes",
                ),
                ([*fmt, "-N", "-t", "AAAAAAAAAAAAAAAAAAAAAA"], 2, "AAAAAAAAAAAAAAAAAAAAAA is a reserved Uuid"),
                ([*fmt, "-N", "-t", cid, "--release-version", "4.9-IV9"], 2, "Unknown metadata.version '4.9-IV9'"),
                (
                    [*fmt, "-N", "-t", cid, "--feature", "group.version=9"],
                    2,
                    "No feature:group.version with feature level 9",
                ),
                (
                    [*fmt, "-N", "-t", cid, "--feature", "group.version"],
                    2,
                    "--feature group.version: expected name=level",
                ),
                ([*fmt, "-N", "-t", cid, "--node-id", "-3"], 2, "You must specify a valid non-negative node ID."),
                (
                    [*fmt, "-t", cid],
                    2,
                    "Because controller.quorum.voters is not set on this controller, you must specify one of the "
                    "following: --standalone, --initial-controllers, or --no-initial-controllers.",
                ),
                (
                    [*fmt, "-t", cid, "--initial-controllers", f"1@{k.addr(1)}:xx"],
                    2,
                    "Failed to parse directory ID in dynamic voter string",
                ),
                # well formed, but the dir is formatted already (its own cluster id, or another's)
                ([*fmt, "-N", "-t", cid], 1, f"Log directory {k.data(3)} is already formatted."),
                (
                    [*fmt, "-N", "-t", "oDTrHZfARSqRcq786tNZUw"],
                    1,
                    f"Invalid cluster.id in: {k.data(3) / 'meta.properties'}. Expected oDTrHZfARSqRcq786tNZUw, but "
                    f"read {cid}",
                ),
            ],
        )
        for extra in ((), ("--apply",)):  # accepted: every dir formatted already, nothing to do
            code, out, err = cli(*fmt, "-N", "-t", cid, "-g", *extra)
            assert (code, out, err) == (0, "All of the log directories are already formatted.\n", ""), out + err
        assert rc.tree_hash(k.data(3)) == files
    restarts_cleanly(k, [3], unchanged)


def test_recover(cli, k, unchanged):
    """`recover` on the whole cluster stopped (every voter silent, so that the input checks,
    not a live voter, refuse), the broker's dir given as --replica as the runbook says."""
    with stopped(k, [BROKER, *CONTROLLERS]):
        dirs = {n: k.data(n) for n in NODES}
        files = {n: rc.tree_hash(d) for n, d in dirs.items()}
        c2, c3, b4 = (str(dirs[n]) for n in (2, 3, BROKER))
        alias = k.d / "c3-again"
        alias.symlink_to(dirs[3])
        twice = "the same log dir was given twice"
        feed(
            cli,
            [
                (["recover", c3, c3, "--lost-voters", "1,2", "--replica", b4], 2, f"{twice} ({c3} twice,"),
                (["recover", c3, "--replica", c3, "--lost-voters", "1,2", "--replica", b4], 2, twice),
                (
                    ["recover", c3, str(alias), "--lost-voters", "1,2", "--replica", b4],
                    2,
                    f"{twice} ({c3} and {alias},",
                ),
                (
                    ["recover", c3, "--lost-voters", "1,2", "--replica", b4, "--survivor", "7"],
                    2,
                    "--survivor 7: not among the controllers' log dirs given (nodes [3])",
                ),
                (
                    ["recover", c3, "--lost-voters", "1,2,7", "--replica", b4],
                    1,
                    "refused: --lost-voters names [7], which are not voters (voters [1, 2, 3])",
                ),
                (
                    ["recover", c3, "--lost-voters", f"1,2,{BROKER}", "--replica", b4],
                    1,
                    f"refused: --lost-voters names [{BROKER}], which are not voters (voters [1, 2, 3])",
                ),
                (
                    ["recover", c3, "--lost-voters", "1", "--replica", b4],
                    1,
                    "refused: voter(s) [2] are neither given (log dir) nor declared lost",
                ),
                (
                    ["recover", c3, c2, "--lost-voters", "1,2", "--replica", b4],
                    1,
                    "refused: --lost-voters names [2], whose log dirs were given",
                ),
                (
                    ["recover", c3, c2, "--lost-voters", "1", "--replica", b4],
                    1,
                    "refused: the quorum still has a majority: 2 of 3 voters ([2, 3]) survive",
                ),
            ],
        )
        assert {n: rc.tree_hash(d) for n, d in dirs.items()} == files
        assert not [p for p in k.d.rglob("*quorumctl-backup*")]
    restarts_cleanly(k, NODES, unchanged)
