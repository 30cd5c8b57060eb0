"""dump-log text equals what the real kafka-dump-log 4.1 and 4.3 (../shared/kafka)
print, run at test time on the same files: the reference fixtures (Kafka 3.7 and 3.9
clusters) and a deterministic selection of the real-data corpus (Kafka 3.2 to
4.1: per Kafka version and file kind, the smallest file and the largest up to
256 KiB). Byte for byte, stdout and stderr, for each option set, raw
payloads that are not UTF-8 included (`--print-data-log` on topic data:
Java's replacement of malformed input, records/javatext.py). The files are
clean, so none of the documented differences (docs/dump-log.md, about damaged
input) applies.

One JVM per option set dumps all of its files (`--files a,b,...`), so the
module costs a few JVM starts, not one per file.

Not run twice for one fact: where Kafka 4.1 prints what 4.3 prints (the
decoded and the batch-level metadata dumps), only 4.3's tool runs, and
quorumctl's 4.1 form is held equal to its 4.3 form; 4.1's tool runs where
the releases print differently. Kafka 4.3's time-index dump collects every
batch from an entry's position to the segment's end, once per entry
(DumpLogSegments.dumpTimeIndex), so its cost grows with the square of the
segment: 4.3 reads the time indexes of segments up to 1.5 MiB (the two of
2 and 3.6 MB took most of the module's minute and a half), 4.1 reads them all.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path

import pytest

from kafka41 import HOMES, home_of, kafka_tool, needs_kafka
from quorumctl.dump.log import DumpRequest, run
from quorumctl.render.dumplog import Sink
from samples import CORPUS, FIXTURES

pytestmark = needs_kafka

MAX_BYTES = 256 * 1024
F37 = FIXTURES / "kafka-3.7.0-static"
F39 = FIXTURES / "kafka-3.9.0-dynamic" / "data" / "c1" / "__cluster_metadata-0"


def corpus_files(kinds: set[str]) -> list[str]:
    """Per (kind, Kafka version guessed by the catalogue): the smallest non-empty
    file and the largest one up to MAX_BYTES."""
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    groups = defaultdict(list)
    with open(manifest, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            size = int(row["bytes"])
            if row["kind"] in kinds and 0 < size <= MAX_BYTES and "," not in row["local_path"]:
                version = row["kafka_version_guess"].split(" (")[0].split(";")[0]
                groups[(row["kind"], version)].append((size, row["local_path"]))
    out = []
    for key in sorted(groups):
        g = sorted(groups[key])
        out += sorted({g[0][1], g[-1][1]})
    return [str(CORPUS / p) for p in out if (CORPUS / p).exists()]


def fixture_files(*names: str) -> list[str]:
    return [str(p) for p in (F37 / "snap1", F39) if p.is_dir() for p in sorted(p.iterdir()) if p.suffix in names]


METADATA = sorted(
    set(fixture_files(".log", ".checkpoint") + corpus_files({"metadata-log", "snapshot", "bootstrap.checkpoint"}))
)
SEGMENTS = corpus_files({"topic-segment"})
# Kafka reads an index's segment (and a time index's offset index) beside it,
# and throws when one is absent
INDEXES = [
    f
    for f in fixture_files(".index", ".timeindex", ".snapshot") + corpus_files({"index", "timeindex"})
    if f.endswith(".snapshot") or all(Path(f).with_suffix(x).exists() for x in (".log", ".index"))
]

# Kafka 4.3's time-index dump is quadratic in the segment (above): the larger ones are 4.1's alone
BIG_SEGMENT = 3 * 512 * 1024
INDEXES_43 = [
    f for f in INDEXES if not (f.endswith(".timeindex") and Path(f).with_suffix(".log").stat().st_size > BIG_SEGMENT)
]

# (name, Kafka's options, ours, files); a name ending in "-data" prints raw payloads
RUNS = [
    ("metadata-decoded", ["--cluster-metadata-decoder"], {"metadata_decoder": True}, METADATA),
    ("metadata-shallow", [], {}, METADATA),
    (
        "metadata-skip-record-metadata",
        ["--cluster-metadata-decoder", "--skip-record-metadata"],
        {"metadata_decoder": True, "skip_record_metadata": True},
        METADATA[:12],
    ),
    ("segments-deep", ["--deep-iteration"], {"deep": True}, SEGMENTS),
    ("segments-data", ["--print-data-log"], {"print_data": True}, SEGMENTS),
    ("indexes", [], {}, INDEXES),
]
# the runs Kafka 4.1 prints as 4.3 does (test_41_form_is_the_43_form holds ours to that)
SAME_IN_41 = ("metadata-decoded", "metadata-shallow")


def files_of(name: str, release: str) -> list[str]:
    files = next(r for r in RUNS if r[0] == name)[3]
    return INDEXES_43 if (name, release) == ("indexes", "4.3") else files


CASES = [(release, name) for release in HOMES for name, *_ in RUNS if not (release == "4.1" and name in SAME_IN_41)]


@pytest.fixture(scope="module")
def kafka_output(tmp_path_factory, request):
    """name -> (stdout, stderr) of kafka-dump-log of one release, each run once."""
    home = home_of(request.param)
    tmp = tmp_path_factory.mktemp(f"kafka-dumplog-{request.param}")
    cache = {}

    def get(name):
        if name not in cache:
            args = next(r for r in RUNS if r[0] == name)[1]
            files = files_of(name, request.param)
            p = kafka_tool("kafka-dump-log", [*args, "--files", ",".join(files)], tmp, timeout=600, home=home)
            assert p.returncode == 0, p.stderr[-2000:]
            cache[name] = (p.stdout, p.stderr)
        return cache[name]

    get.version = request.param
    return get


def ours(files, kw):
    out, err = io.StringIO(), io.StringIO()
    rc = run(DumpRequest(paths=files, output="text", **kw), Sink(out, err))
    return rc, out.getvalue(), err.getvalue()


def first_difference(a: str, b: str) -> str:
    la, lb = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}:\n kafka: {x[:400]}\n ours:  {y[:400]}"
    return f"lengths differ: kafka {len(la)} lines, ours {len(lb)}"


def test_selection_covers_every_kind():
    # the comparison below is only as good as what it runs on
    assert len(METADATA) >= 30 and len(SEGMENTS) >= 20 and len(INDEXES) >= 20, (
        len(METADATA),
        len(SEGMENTS),
        len(INDEXES),
    )
    # 4.3 reads every index but the time indexes of the few biggest segments
    assert len(INDEXES) - 3 <= len(INDEXES_43) < len(INDEXES), (len(INDEXES), len(INDEXES_43))
    assert {Path(f).suffix for f in INDEXES_43} == {".index", ".timeindex", ".snapshot"}


@pytest.mark.parametrize("kafka_output,name", CASES, indirect=["kafka_output"])
def test_text_equals_kafka(kafka_output, name):
    kw = next(r for r in RUNS if r[0] == name)[2]
    files = files_of(name, kafka_output.version)
    k_out, k_err = kafka_output(name)
    rc, out, err = ours(files, {**kw, "kafka": kafka_output.version})
    assert out.count("\nDumping ") + out.startswith("Dumping ") == len(files)
    assert out == k_out, first_difference(k_out, out)
    assert err == k_err, first_difference(k_err, err)
    assert rc == 0


@pytest.mark.parametrize("name", SAME_IN_41)
def test_41_form_is_the_43_form(name):
    """Where Kafka 4.1 prints what 4.3 prints, `--kafka-version 4.1` prints what the
    default does (compared with 4.3's tool above), on the same files."""
    kw, files = next(r for r in RUNS if r[0] == name)[2:]
    assert ours(files, {**kw, "kafka": "4.1"}) == ours(files, {**kw, "kafka": "4.3"})


@pytest.mark.parametrize("kafka_output", list(HOMES), indirect=True)
def test_release_forms_are_covered(kafka_output):
    # the lines where releases differ are really in what we compared (4.4 prints as 4.3)
    if kafka_output.version in ("4.3", "4.4"):
        _, err = kafka_output("segments-deep")
        assert "  -1 is followed by " in err  # 4.3 checks the first record against -1
        out, _ = kafka_output("metadata-skip-record-metadata")
        assert "\n| payload: {" in out  # 4.1: " payload: {"
        # (4.1 prints the decoded dump alike: test_41_form_is_the_43_form)
        out, _ = kafka_output("metadata-decoded")
        assert ' LeaderChange: {"version":0,"leaderId":' in out
        assert " deleteHorizonMs: OptionalLong.empty position: " in out
        assert "controlType: LEADER_CHANGE" not in out
    else:
        out, _ = kafka_output("metadata-skip-record-metadata")
        assert "\n payload: {" in out
