"""dump-log text equals kafka-dump-log's own 3.x transcripts (reference/samples,
kept as regression data), line for line, once turned into what kafka-dump-log
4.1 prints (LeaderChange decoded), apart from the documented deliberate
differences (docs/dump-log.md). tests/kafka/test_kafka_dumplog.py compares with
the real 4.1 tool run on the same files."""

from __future__ import annotations

import io
import os

import pytest

from quorumctl.dump.log import DumpRequest, run
from quorumctl.render.dumplog import Sink
from samples import FIXTURES, SAMPLES, blocks

pytestmark = pytest.mark.shared("reference")

F37 = FIXTURES / "kafka-3.7.0-static"
F39 = FIXTURES / "kafka-3.9.0-dynamic"

# Where each transcript was taken: the fixture dir its relative paths resolve in.
CWD = {
    "dumplog-3.7.0.txt": F37 / "snap1",
    "dumplog-3.9.0.txt": F39,
    "dumplog-corruption-3.7.0.txt": F37 / "corrupt",
    "dumplog-3.7.0-after-clean-shutdown.txt": F37,
}
# Lines Kafka writes to stderr (the transcripts interleave both streams).
STDERR_PREFIXES = (
    "Non-consecutive",
    "Mismatches in",
    "Found timestamp mismatch",
    "Found out of order",
    "Ignoring unknown file",
    "Exception in thread",
    "\tat ",
    "  ",
    "The following indexed",
)
FLAGS = {
    "--deep-iteration": "deep",
    "--print-data-log": "print_data",
    "--cluster-metadata-decoder": "metadata_decoder",
    "--skip-record-metadata": "skip_record_metadata",
    "--verify-index-only": "verify_index_only",
    "--index-sanity-check": "index_sanity_check",
}


def parse_kafka_args(argv):
    files, kw, i = [], {}, 1
    while i < len(argv):
        a = argv[i]
        if a == "--files":
            files += argv[i + 1].split(",")
            i += 2
            while i < len(argv) and not argv[i].startswith("--"):
                i += 1  # jopt-simple takes one value: Kafka ignores further words
        elif a == "--max-bytes":
            kw["max_bytes"] = int(argv[i + 1])
            i += 2
        else:
            kw[FLAGS[a]] = True
            i += 1
    return files, kw


def cwd_for(name, argv):
    files = parse_kafka_args(argv)[0]
    for f in files:
        if not (CWD[name] / f).exists():  # the snapshot transcripts ran in c1's metadata dir
            return F37 / "data" / "c1" / "__cluster_metadata-0"
    return CWD[name]


def ours(argv, cwd):
    files, kw = parse_kafka_args(argv)
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        # the transcripts are Kafka 3.x's, whose text 4.1 kept where 4.3 changed it
        rc = run(DumpRequest(paths=files, output="text", kafka="4.1", **kw), Sink(out, err))
    finally:
        os.chdir(old)
    # split on newlines only: raw payloads (--print-data-log) hold form feeds and such
    return rc, out.getvalue().split("\n")[:-1], err.getvalue().split("\n")[:-1]


def leader_change_as_kafka3(line: str) -> str:
    # 3.x printed only the type where 4.1 (and we) decode the record
    i = line.find(" LeaderChange: {")
    return line if i < 0 else line[:i] + " controlType: LEADER_CHANGE(2)"


CASES = [
    (name, i, b)
    for name in CWD
    if (SAMPLES / name).exists()
    for i, b in enumerate(blocks(name))
    if "--help" not in b.argv
]


def _covered(b):
    # where Kafka crashed (quorum-state, the preallocated time index) there is nothing to match;
    # a named file of no known kind is exit 2 for us, not Kafka's "Ignoring unknown file" and 0
    return not any(line.startswith(("Exception in thread", "Ignoring unknown file")) for line in b.lines)


@pytest.mark.parametrize(
    "name,i,block", [c for c in CASES if _covered(c[2])], ids=lambda v: v if isinstance(v, (str, int)) else ""
)
def test_matches_kafka_dump_log(name, i, block):
    rc, out, err = ours(block.argv, cwd_for(name, block.argv))
    expected_out = [line for line in block.lines if not line.startswith(STDERR_PREFIXES)]
    assert [leader_change_as_kafka3(line) for line in out] == expected_out
    expected_err = [line for line in block.lines if line.startswith(STDERR_PREFIXES)]
    # Kafka prints the absolute path where it ran; ours is this machine's
    assert [e.replace(str(CWD[name]), "/var/lib/kafka/corrupt") for e in err] == expected_err
    # Kafka exits 0 on corruption; we exit 1 when the dump saw a problem
    problems = (
        any(
            line.startswith(("Found ", "Non-consecutive", "Mismatches")) or "isvalid: false" in line
            for line in block.lines
        )
        or block.exit == 1
    )
    assert rc == (1 if problems else 0)


def test_leader_change_is_decoded():
    rc, out, _ = ours(
        ["x", "--files", "00000000000000000000.log", "--deep-iteration", "--max-bytes", "200"], F37 / "snap1"
    )
    assert rc == 0
    assert out[3] == (
        "| offset: 0 CreateTime: 1795305175621 keySize: 4 valueSize: 34 sequence: -1 headerKeys: [] "
        'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1},{"voterId":2},{"voterId":3}],'
        '"grantingVoters":[{"voterId":1},{"voterId":3}]}'
    )


def test_zero_tail_is_one_line_error_not_a_crash():
    rc, out, err = ours(["x", "--files", "c_zeros/00000000000000000000.log"], F37 / "corrupt")
    assert rc == 1
    assert err == [
        "quorumctl: c_zeros/00000000000000000000.log: position 1156: batch length 0 is smaller than "
        "the minimum record overhead (14)"
    ] or err[0].startswith("quorumctl: c_zeros/00000000000000000000.log: position ")


def test_where_kafka_crashes_we_decode():
    rc, out, err = ours(["x", "--files", "quorum-state"], F37 / "snap1")
    assert (rc, err) == (0, [])
    assert out == [
        "Dumping quorum-state",
        "Quorum state (data_version 0): clusterId:  leaderId: 1 leaderEpoch: 2 votedId: -1 "
        'appliedOffset: 0 currentVoters: [{"voterId":1},{"voterId":2},{"voterId":3}]',
    ]
    rc, out, err = ours(["x", "--files", "00000000000000000000.timeindex", "--index-sanity-check"], F37 / "snap1")
    assert rc == 0
    assert out == ["Dumping 00000000000000000000.timeindex", "00000000000000000000.timeindex passed sanity check."]
