"""Failure cases of `describe`: each ends with ONE line on stderr naming
host:port and the cause, and the documented exit code (3 cluster
unreachable/misbehaving, 2 usage error such as the wrong kind of endpoint)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from quorumctl.wire import messages
from quorumctl.testing.sim import SimulatedCluster, closed_port, replica


def make_cluster(profile="3.9", leader=1, **kw) -> SimulatedCluster:
    now = 1795305697138
    c = SimulatedCluster(
        "rTcAzcTXQpG_6c1zYns8Xw",
        leader_id=leader,
        leader_epoch=4,
        high_watermark=84,
        voters=[replica(i, 84, now - 10 * i, now - 10 * i, None) for i in (1, 2, 3)],
        observers=[replica(4, 84, now - 5, now - 5)],
        **kw,
    )
    c.add_nodes(profile=profile)
    return c


def one_line_error(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("quorumctl: error: "), err
    assert "Traceback" not in err
    return err[len("quorumctl: error: ") : -1]


def test_port_closed(cli):
    port = closed_port()
    code, out, err = cli("describe", "status", "--bootstrap-server", f"127.0.0.1:{port}", "--timeout", "3")
    assert code == 3 and out == ""
    assert (
        one_line_error(err) == f"cannot connect to 127.0.0.1:{port}: connection refused (nothing listens on that port)"
    )


def test_host_that_accepts_and_never_answers(cli):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)  # the kernel completes the handshake; nobody ever reads
    try:
        port = s.getsockname()[1]
        code, out, err = cli(
            "describe", "replication", "--bootstrap-controller", f"127.0.0.1:{port}", "--timeout", "0.8"
        )
    finally:
        s.close()
    assert code == 3
    assert re.fullmatch(rf"127\.0\.0\.1:{port} did not answer ApiVersions within 0\.\d s", one_line_error(err))


@pytest.mark.parametrize("api", [messages.API_VERSIONS, messages.DESCRIBE_QUORUM])
def test_server_closes_mid_response(cli, api):
    with make_cluster() as c:
        b = c.brokers()[0]
        b.set_fault("truncate", api)
        code, _, err = cli("describe", "status", "--bootstrap-server", b.address, "--timeout", "3")
    name = messages.api_name(api)
    assert code == 3
    assert re.fullmatch(
        rf"{re.escape(b.address)} closed the connection in the middle of the {name} response "
        rf"\(\d+ of \d+ bytes\)",
        one_line_error(err),
    )


def test_garbage_body(cli):
    with make_cluster() as c:
        b = c.brokers()[0]
        b.set_fault("garbage", messages.DESCRIBE_QUORUM)
        code, _, err = cli("describe", "replication", "--bootstrap-server", b.address)
    assert code == 3
    assert one_line_error(err).startswith(f"{b.address} sent a DescribeQuorum v2 answer that does not decode: ")


def test_garbage_bytes_not_a_frame(cli):
    with make_cluster() as c:
        b = c.brokers()[0]
        b.set_fault("noise")  # an HTTP answer to our ApiVersions
        code, _, err = cli("describe", "status", "--bootstrap-server", b.address)
    assert code == 3
    # "HTTP" read as a big-endian int32 size
    assert one_line_error(err) == (
        f"{b.address} sent an ApiVersions response claiming {0x48545450} bytes "
        "(limit 64 MiB, minimum 4): not a Kafka listener, or a TLS/PLAINTEXT mismatch"
    )


def test_response_claiming_2gb(cli):
    with make_cluster() as c:
        b = c.brokers()[0]
        b.set_fault("huge", messages.DESCRIBE_QUORUM)
        code, _, err = cli("describe", "status", "--bootstrap-server", b.address, "--timeout", "3")
    assert code == 3
    assert one_line_error(err) == (
        f"{b.address} sent a DescribeQuorum response claiming 2147483647 bytes "
        "(limit 64 MiB, minimum 4): not a Kafka listener, or a TLS/PLAINTEXT mismatch"
    )


def test_old_server_without_describe_quorum(cli):
    with make_cluster(profile="2.7") as c:
        b = c.brokers()[0]
        code, _, err = cli("describe", "status", "--bootstrap-server", b.address)
    assert code == 3
    assert one_line_error(err) == (
        f"{b.address} does not support DescribeQuorum (API 55): not a KRaft cluster, or Kafka older than 2.8"
    )
    # the cluster id came from Metadata (no DescribeCluster before 2.8)
    assert (4, messages.METADATA, 9) in c.requests


def test_bootstrap_controller_pointed_at_a_broker(cli):
    with make_cluster() as c:
        b = c.brokers()[0]
        code, _, err = cli("describe", "status", "--bootstrap-controller", b.address)
    assert code == 2
    assert one_line_error(err) == f"{b.address} is a broker, not a controller: use --bootstrap-server {b.address}"


def test_bootstrap_server_pointed_at_a_controller(cli):
    with make_cluster() as c:
        a = c.node_by_id(1).address
        code, _, err = cli("describe", "replication", "--bootstrap-server", a)
    assert code == 2
    assert one_line_error(err) == (
        f"{a} is a KRaft controller, not a broker (it does not serve Metadata): use --bootstrap-controller {a}"
    )


def test_mismatched_endpoint_type_answer_is_understood(cli):
    # a broker that (unlike Kafka's) omits Metadata from ApiVersions still says MISMATCHED_ENDPOINT_TYPE
    with make_cluster() as c:
        b = c.brokers()[0]
        del b.apis[messages.METADATA]
        b.role = "broker"
        code, _, err = cli("describe", "status", "--bootstrap-controller", b.address)
    assert code == 2 and "is a broker, not a controller" in one_line_error(err)


def test_not_leader_with_hint_is_followed(cli):
    # controller 1 has a stale view (names 3); 3 is not the leader but names 2
    with make_cluster(leader=2) as c:
        c.node_by_id(1).leader_view = 3
        c.node_by_id(3).not_leader_hint = True
        code, out, err = cli(
            "describe",
            "status",
            "--bootstrap-controller",
            c.node_by_id(1).address,
            "--output",
            "json",
            "--timeout",
            "5",
        )
    assert (code, err) == (0, "")
    import json

    doc = json.loads(out)
    assert doc["leaderId"] == 2 and doc["source"] == c.node_by_id(2).address
    dq = [(n, v) for n, k, v in c.requests if k == messages.DESCRIBE_QUORUM]
    assert dq == [(3, 2), (2, 2)]  # straight from the hint, no rediscovery


def test_not_leader_without_hint_retries_then_fails(cli):
    with make_cluster(leader=2) as c:
        c.node_by_id(1).leader_view = 3  # stale forever, and 3 gives no hint (as Kafka 3.9)
        code, _, err = cli("describe", "status", "--bootstrap-controller", c.node_by_id(1).address, "--timeout", "1")
        tries = sum(1 for n, k, v in c.requests if k == messages.DESCRIBE_QUORUM)
    assert code == 3
    msg = one_line_error(err)
    assert re.fullmatch(
        rf"DescribeQuorum: gave up after [01]\.\d s: {re.escape(c.node_by_id(3).address)} answered "
        r"DescribeQuorum with NOT_LEADER_OR_FOLLOWER: For requests intended only for the leader.*",
        msg,
    )
    assert tries >= 3  # backoff 100, 200, 400 ms... within 1 s


def test_not_leader_without_hint_recovers_when_the_view_does(cli):
    with make_cluster(leader=2) as c:
        c.node_by_id(1).leader_view = 3
        t = threading.Timer(0.25, lambda: setattr(c.node_by_id(1), "leader_view", None))
        t.start()
        try:
            code, out, err = cli(
                "describe", "status", "--bootstrap-controller", c.node_by_id(1).address, "--timeout", "5"
            )
        finally:
            t.cancel()
    assert (code, err) == (0, "")
    assert "LeaderId:               2\n" in out


def test_a_killed_leader_is_followed_to_its_successor(cli):
    # the active controller dies (its port refuses) and the others elect a
    # new one a second later: the request waits for it, as Kafka's admin
    # client does, instead of giving up after three quick refusals (a CI run
    # of remove-controller against real Kafka failed that way)
    with make_cluster(leader=2) as c:
        c.node_by_id(2).stop()
        t = threading.Timer(1.2, lambda: c.set_leader(3))
        t.start()
        try:
            code, out, err = cli(
                "describe", "status", "--bootstrap-controller", c.node_by_id(1).address, "--timeout", "6"
            )
        finally:
            t.cancel()
    assert (code, err) == (0, "")
    assert "LeaderId:               3\n" in out


def test_a_dead_leader_that_stays_dead_fails_at_the_deadline(cli):
    with make_cluster(leader=2) as c:
        c.node_by_id(2).stop()
        code, _, err = cli("describe", "status", "--bootstrap-controller", c.node_by_id(1).address, "--timeout", "1.5")
        asked = sum(1 for n, k, v in c.requests if k == messages.DESCRIBE_CLUSTER)
    assert code == 3
    assert one_line_error(err) == (
        f"cannot connect to {c.node_by_id(2).address}: connection refused (nothing listens on that port)"
    )
    assert asked >= 4  # it kept asking who leads (backoff 100, 200, 400, 800 ms) until the deadline


@pytest.mark.parametrize("top", [False, True])
def test_unknown_error_code(cli, top):
    with make_cluster() as c:
        b = c.brokers()[0]
        b.set_fault("error", messages.DESCRIBE_QUORUM, (9999, None, top))
        code, _, err = cli("describe", "status", "--bootstrap-server", b.address)
    assert code == 3
    assert one_line_error(err) == f"{b.address} answered DescribeQuorum with an unknown error code 9999"


def test_known_non_retriable_error_with_message(cli):
    with make_cluster() as c:
        b = c.brokers()[0]
        b.set_fault("error", messages.DESCRIBE_QUORUM, (31, "Cluster authorization failed.", True))
        code, _, err = cli("describe", "status", "--bootstrap-server", b.address)
    assert code == 3
    assert one_line_error(err) == (
        f"{b.address} answered DescribeQuorum with CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed."
    )


def test_no_leader_known(cli):
    with make_cluster(leader=-1) as c:
        a = c.node_by_id(2).address
        code, _, err = cli("describe", "status", "--bootstrap-controller", a, "--timeout", "0.7")
    assert code == 3
    assert re.fullmatch(
        rf"DescribeCluster: gave up after 0\.\d s: {re.escape(a)} knows no active controller "
        r"\(ControllerId -1\): the quorum may have no leader; `quorumctl describe health` probes "
        r"every controller",
        one_line_error(err),
    )


def test_no_leader_known_when_the_last_retry_starts_too_late(cli, monkeypatch):
    # a loaded machine oversleeps the backoff past the deadline: the next try
    # finds no time left, and the error must still say why we were retrying
    import time as real_time
    from quorumctl.wire import client

    oversleep = type(
        "T",
        (),
        {"monotonic": staticmethod(real_time.monotonic), "sleep": staticmethod(lambda s: real_time.sleep(s + 1.0))},
    )
    monkeypatch.setattr(client, "time", oversleep)
    with make_cluster(leader=-1) as c:
        a = c.node_by_id(2).address
        code, _, err = cli("describe", "status", "--bootstrap-controller", a, "--timeout", "0.7")
    assert code == 3
    assert re.fullmatch(
        rf"DescribeCluster: gave up after 1\.\d s: {re.escape(a)} knows no active controller "
        r"\(ControllerId -1\): the quorum may have no leader; `quorumctl describe health` probes "
        r"every controller",
        one_line_error(err),
    )


def test_broker_forwarding_to_a_silent_leader(cli):
    with make_cluster() as c:
        c.silence(1)
        b = c.brokers()[0]
        code, _, err = cli("describe", "replication", "--bootstrap-server", b.address, "--timeout", "0.8")
    assert code == 3
    assert re.fullmatch(
        rf"{re.escape(b.address)} did not answer DescribeQuorum within 0\.\d+ s \(the broker "
        r"forwards DescribeQuorum to the active controller: the quorum may have no leader; "
        r"`quorumctl describe health` probes every controller\)",
        one_line_error(err),
    )


def test_failover_to_the_next_bootstrap_server(cli):
    port = closed_port()
    with make_cluster() as c:
        code, out, err = cli("describe", "status", "--bootstrap-server", f"127.0.0.1:{port},{c.brokers()[0].address}")
    assert (code, err) == (0, "") and "LeaderId:               1\n" in out


def test_no_bootstrap_server_reachable(cli):
    p1, p2 = closed_port(), closed_port()
    code, _, err = cli("describe", "status", "--bootstrap-controller", f"127.0.0.1:{p1},127.0.0.1:{p2}")
    assert code == 3
    assert one_line_error(err) == (
        f"could not reach any bootstrap server: cannot connect to 127.0.0.1:{p1}: "
        f"connection refused (nothing listens on that port); cannot connect to "
        f"127.0.0.1:{p2}: connection refused (nothing listens on that port)"
    )


def test_unresolvable_host(cli):
    code, _, err = cli("describe", "status", "--bootstrap-server", "no-such-host.invalid:9092")
    assert code == 3
    assert one_line_error(err).startswith("cannot resolve host 'no-such-host.invalid': ")


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--bootstrap-server", "a:1", "--bootstrap-controller", "b:2"],
            "--bootstrap-server and --bootstrap-controller cannot be used together",
        ),
        ([], "one of --bootstrap-server or --bootstrap-controller is required"),
        (["--bootstrap-server", "localhost"], "invalid --bootstrap-server 'localhost': expected host:port"),
        (
            ["--bootstrap-server", "::1:9092"],
            "invalid --bootstrap-server '::1:9092': write IPv6 addresses as [host]:port",
        ),
        (["--bootstrap-server", "h:99999"], "invalid --bootstrap-server 'h:99999': port 99999 is out of range"),
        (
            ["--bootstrap-server", "h:1", "--command-config", "/nonexistent/admin.properties"],
            "command config /nonexistent/admin.properties does not exist",
        ),
        (["--bootstrap-server", "h:1", "--timeout", "0"], "--timeout must be positive, not 0"),
    ],
)
def test_usage_errors(cli, args, message):
    code, out, err = cli("describe", "status", *args)
    assert (code, out) == (2, "")
    assert one_line_error(err) == message


def test_describe_quorum_v0_server(cli):
    """A server that only speaks DescribeQuorum v0: no timestamps, no directory ids."""
    import json

    with make_cluster(profile="3.0", leader=2) as c:
        a = c.brokers()[0].address
        code, out, err = cli("describe", "status", "--bootstrap-server", a)
        assert (code, err) == (0, "")
        assert out == (
            "ClusterId:              rTcAzcTXQpG_6c1zYns8Xw\nLeaderId:               2\n"
            "LeaderEpoch:            4\nHighWatermark:          84\nMaxFollowerLag:         0\n"
            "MaxFollowerLagTimeMs:   -1\n"
            'CurrentVoters:          [{"id": 1}, {"id": 2}, '
            '{"id": 3}]\n'
            'CurrentObservers:       [{"id": 4}]\n'
        )
        out = cli("describe", "replication", "--bootstrap-server", a, code=0).out
        assert out.splitlines()[1].split("\t") == [
            "2     ",
            "AAAAAAAAAAAAAAAAAAAAAA",
            "84          ",
            "0  ",
            "-1                ",
            "-1                   ",
            "Leader  ",
            "",
        ]
        out = cli("describe", "replication", "--bootstrap-server", a, "-o", "json", code=0).out
        doc = json.loads(out)
        assert doc["describeQuorumVersion"] == 0
        assert [(r["nodeId"], r["status"], r["lastFetchTimestamp"]) for r in doc["replicas"]] == [
            (2, "Leader", None),
            (1, "Follower", None),
            (3, "Follower", None),
            (4, "Observer", None),
        ]
        out = cli("describe", "status", "--bootstrap-server", a, "-o", "json", code=0).out
        assert json.loads(out)["maxFollowerLagTimeMs"] is None
    assert {(k, v) for n, k, v in c.requests if k == messages.DESCRIBE_QUORUM} == {(55, 0)}


def test_entry_point_in_a_subprocess():
    """The installed console script: real process, real exit code, no traceback."""
    exe = shutil.which("quorumctl", path=str(Path(sys.executable).parent))
    assert exe, "the quorumctl entry point is installed next to the test interpreter"
    port = closed_port()
    p = subprocess.run(
        [exe, "describe", "status", "--bootstrap-server", f"127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 3 and p.stdout == ""
    assert (
        p.stderr
        == f"quorumctl: error: cannot connect to 127.0.0.1:{port}: connection refused (nothing listens on that port)\n"
    )
    with make_cluster() as c:
        p = subprocess.run(
            [exe, "describe", "replication", "--bootstrap-controller", c.node_by_id(3).address],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "COLUMNS": "200"},
        )
    assert p.returncode == 0 and p.stderr == ""
    assert [line.split("\t")[0].strip() for line in p.stdout.splitlines()] == ["NodeId", "1", "2", "3", "4"]


def test_cluster_id_from_metadata_when_describe_cluster_is_missing(cli):
    with make_cluster(profile="3.0") as c:
        b = c.brokers()[0]
        del b.apis[messages.DESCRIBE_CLUSTER]
        code, out, err = cli("describe", "status", "--bootstrap-server", b.address)
    assert (code, err) == (0, "")
    assert out.startswith("ClusterId:              rTcAzcTXQpG_6c1zYns8Xw\n")
    assert [(k, v) for n, k, v in c.requests if k in (messages.METADATA, messages.DESCRIBE_CLUSTER)] == [
        (messages.METADATA, 11)
    ]


def test_bootstrap_controller_before_kip_919(cli):
    with make_cluster(profile="3.0") as c:
        a = c.node_by_id(1).address
        code, out, err = cli("describe", "status", "--bootstrap-controller", a)
    assert code == 3
    assert one_line_error(err) == (
        f"{a} does not support DescribeCluster v1 (Kafka 3.7+ controllers do): use --bootstrap-server with a broker"
    )


def test_a_hung_first_bootstrap_address_does_not_starve_the_next(cli):
    # A controller whose JVM hangs accepts connections and never answers: with
    # two addresses each gets half of the --timeout, so the second still answers.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    try:
        with make_cluster() as c:
            code, out, err = cli(
                "describe",
                "status",
                "--bootstrap-controller",
                f"127.0.0.1:{s.getsockname()[1]},{c.controllers()[0].address}",
                "--timeout",
                "2",
            )
    finally:
        s.close()
    assert (code, err) == (0, "") and "LeaderId:               1\n" in out
