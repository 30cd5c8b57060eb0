"""Kafka's command lines as operators copy them: the connection options before the
subcommand, `describe --status`, `topics --describe` (cli/main.kafka_order)."""

from __future__ import annotations

import pytest
from quorumctl.cli.main import kafka_order, root_command

ROOT = root_command()


@pytest.mark.parametrize(
    "given, expected",
    [
        ("--bootstrap-server X describe --status", "describe status --bootstrap-server X"),
        (
            "--bootstrap-controller=Y describe --replication --human-readable",
            "describe replication --human-readable --bootstrap-controller=Y",
        ),
        (
            "--command-config f --bootstrap-server X features describe",
            "features describe --command-config f --bootstrap-server X",
        ),
        ("topics --bootstrap-server X --describe --topic t", "topics describe --topic t --bootstrap-server X"),
        ("describe status --debug -o json", "--debug describe status -o json"),
        ("dump-log a --debug -- --debug", "--debug dump-log a -- --debug"),
        ("describe status --bootstrap-server X", "describe status --bootstrap-server X"),  # quorumctl's own order
        ("describe -h", "describe -h"),
        ("topics --bootstrap-server X --topic foo --describe", "topics describe --topic foo --bootstrap-server X"),
    ],
)
def test_kafka_order(given, expected):
    assert kafka_order(given.split(), ROOT) == expected.split()


def test_connection_options_before_the_subcommand_reach_it(cli):
    """The option reaches the command: the address it names is the one refused."""
    code, out, err = cli("--bootstrap-server", "127.0.0.1:1", "describe", "--status", "--timeout", "1")
    assert code == 3 and out == ""
    assert "127.0.0.1:1" in err and "connection refused" in err


def test_an_option_the_command_lacks_is_one_line(cli):
    code, out, err = cli("--bootstrap-server", "127.0.0.1:1", "dump-log", "x.log")
    assert code == 2
    assert err.strip().splitlines() == [
        "quorumctl: error: No such option: --bootstrap-server (see 'quorumctl dump-log -h')"
    ]
