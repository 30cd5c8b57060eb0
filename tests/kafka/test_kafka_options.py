"""Every option Kafka 4.1's and 4.3's kafka-dump-log and kafka-metadata-quorum
accept (read from the real tools' --help at test time) is either implemented by
quorumctl under the same name, or refused with one line saying why (exit 2)."""

from __future__ import annotations

import concurrent.futures as cf
import re

import pytest

from kafka41 import HOMES, home_of, kafka_tool, needs_kafka
from quorumctl.cli.dumplog import REFUSED

pytestmark = needs_kafka

# kafka-metadata-quorum 4.1 is `[connection options] describe --status|--replication ...`;
# quorumctl has a command per view, each taking the connection options
QUORUM_COMMANDS = {
    "": [
        ("describe", "status"),
        ("describe", "replication"),
        ("describe", "health"),
        ("add-controller",),
        ("remove-controller",),
    ],
    "describe": [("describe", "status"), ("describe", "replication")],
    "add-controller": [("add-controller",)],
    "remove-controller": [("remove-controller",)],
}
# where each of Kafka's describe flags lives in quorumctl
DESCRIBE_FLAG = {
    "--status": ("describe", "status"),
    "--replication": ("describe", "replication"),
    "--human-readable": ("describe", "replication"),
}


def options_in_help(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", text)) - {"--help", "--version"}


@pytest.fixture(scope="module", params=list(HOMES))
def kafka_help(tmp_path_factory, request):
    home = home_of(request.param)
    tmp = tmp_path_factory.mktemp(f"kafka-help-{request.param}")
    runs = {"dump-log": ("kafka-dump-log", ["--help"])}
    runs.update(
        {
            f"quorum {sub}".strip(): (
                "kafka-metadata-quorum",
                ["--bootstrap-controller", "x:1", sub, "--help"] if sub else ["--help"],
            )
            for sub in QUORUM_COMMANDS
        }
    )
    with cf.ThreadPoolExecutor(3) as ex:
        done = dict(zip(runs, ex.map(lambda r: kafka_tool(r[0], r[1], tmp, home=home), runs.values())))
    return {k: p.stdout + p.stderr for k, p in done.items()}


def our_options(*command: str) -> set[str]:
    from quorumctl.cli.main import root_command

    cmd = root_command()
    for name in command:
        cmd = cmd.commands[name]
    return {o for p in cmd.params for o in p.opts + p.secondary_opts if o.startswith("--")}


def test_dump_log_options(cli, kafka_help):
    theirs = options_in_help(kafka_help["dump-log"])
    assert {"--files", "--cluster-metadata-decoder", "--offsets-decoder", "--max-bytes"} <= theirs  # parsed
    ours = our_options("dump-log")
    missing = theirs - ours
    assert not missing, f"kafka-dump-log options neither implemented nor refused: {sorted(missing)}"
    refused = sorted(o for o in theirs if o in REFUSED)
    assert refused == [
        "--key-decoder-class",
        "--offsets-decoder",
        "--remote-log-metadata-decoder",
        "--share-group-state-decoder",
        "--transaction-log-decoder",
        "--value-decoder-class",
    ]
    for opt in refused:
        args = [opt, "kafka.tools.X"] if opt.endswith("-class") else [opt]
        code, out, err = cli("dump-log", *args, "--files", "00000000000000000000.log")
        assert (code, out) == (2, "") and err.count("\n") == 1, (opt, err)
        assert err.startswith(f"quorumctl: error: {opt} (a kafka-dump-log option) is not supported: ")


@pytest.mark.parametrize("sub", list(QUORUM_COMMANDS))
def test_metadata_quorum_options(kafka_help, sub):
    theirs = options_in_help(kafka_help[f"quorum {sub}".strip()])
    assert theirs, kafka_help[f"quorum {sub}".strip()]
    for opt in sorted(theirs):
        homes = [DESCRIBE_FLAG[opt]] if opt in DESCRIBE_FLAG else QUORUM_COMMANDS[sub]
        for home in homes:
            assert opt in our_options(*home), f"kafka-metadata-quorum {sub} {opt}: not on quorumctl {' '.join(home)}"


def test_files_is_comma_separated_as_in_kafka(cli, tmp_path):
    from samples import FIXTURES

    d = FIXTURES / "kafka-3.7.0-static" / "snap1"
    if not d.is_dir():
        pytest.skip("../shared/reference/fixtures is absent")
    code, out, err = cli(
        "dump-log",
        "-o",
        "text",
        "--files",
        f"{d / '00000000000000000000.index'},{d / '00000000000000000000.timeindex'}",
    )
    assert (code, err) == (0, "")
    assert [x for x in out.splitlines() if x.startswith("Dumping ")] == [
        f"Dumping {d / '00000000000000000000.index'}",
        f"Dumping {d / '00000000000000000000.timeindex'}",
    ]
