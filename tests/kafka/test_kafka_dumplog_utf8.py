"""Keys, payloads and header keys that are not UTF-8 print as the real
kafka-dump-log prints them, byte for byte, with Kafka 4.1.0 (DumpLogSegments in
Scala, core) and 4.3.0 (the Java rewrite in tools): both print a key or payload
with StringDecoder and a header key with RecordHeader.key(), i.e. Java's
`new String(bytes, UTF_8)`, whose replacement of malformed input differs from
Python's errors="replace" (quorumctl/records/javatext.py says how).

One topic segment, written with encode_batch, holds records of every class of
invalid_utf8.py (overlong, encoded surrogates, above U+10FFFF, stray
continuation bytes, cut short at the end and in the middle, random) as key,
inside the payload and inside a header key; each release's
`kafka-dump-log --files X --deep-iteration --print-data-log` and
`quorumctl dump-log` with the same options must print the same stdout. Skips,
saying why, without Java 17+ or ../shared/kafka.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from invalid_utf8 import NAMED, in_context, random_strings, truncations
from kafka41 import KAFKA43_HOME, KAFKA_HOME, tool_env
from quorumctl.records.batch import encode_batch
from quorumctl.records.javatext import java_utf8

RELEASES = [
    pytest.param(
        home, id=home.name.rsplit("-", 1)[-1], marks=pytest.mark.kafka(home.name.rsplit("-", 1)[-1].rsplit(".", 1)[0])
    )
    for home in (KAFKA_HOME, KAFKA43_HOME)
]
OPTIONS = ["--deep-iteration", "--print-data-log"]


def records() -> list[tuple]:
    """(key, value, headers): each case as the key, inside the value and inside a header key."""
    cases = in_context(NAMED + truncations()) + random_strings(300, seed=41)
    recs = [(b, b"<" + b + b">", [(b"h-" + b, b"x"), (b"", None)]) for b in cases]
    return recs + [(None, b"\xed\xa0\x80", ()), (b"", b"", [(b"\xed\xbf\xbf", None)])]


@pytest.fixture(scope="module")
def segment(tmp_path_factory) -> Path:
    """A topic segment (not a metadata log: --print-data-log prints the raw bytes)."""
    recs = records()
    d = tmp_path_factory.mktemp("utf8") / "payloads-0"
    d.mkdir()
    path = d / "00000000000000000000.log"
    with open(path, "wb") as f:
        for base in range(0, len(recs), 100):
            f.write(encode_batch(recs[base : base + 100], base_offset=base, base_timestamp=1_795_000_000_000 + base))
    return path


def kafka_dump_log(home: Path, path: Path, tmp: Path) -> bytes:
    env = tool_env(tmp)
    # the JVM's stdout in UTF-8 whatever the locale (as quorumctl's below), so bytes compare
    env["KAFKA_OPTS"] = "-Dfile.encoding=UTF-8 -Dsun.stdout.encoding=UTF-8"
    p = subprocess.run(
        [str(home / "bin" / "kafka-dump-log.sh"), "--files", str(path), *OPTIONS],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    return p.stdout


def quorumctl_dump_log(path: Path) -> bytes:
    p = subprocess.run(
        [sys.executable, "-m", "quorumctl", "dump-log", "--files", str(path), *OPTIONS],
        capture_output=True,
        env={**os.environ, "PYTHONUTF8": "1"},
        timeout=300,
    )
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    return p.stdout


@pytest.fixture(scope="module")
def ours(segment) -> bytes:
    return quorumctl_dump_log(segment)


def first_difference(a: bytes, b: bytes) -> str:
    for i, (x, y) in enumerate(zip(a.split(b"\n"), b.split(b"\n"))):
        if x != y:
            return f"line {i + 1}:\n kafka: {x[:300]!r}\n ours:  {y[:300]!r}"
    return f"lengths differ: kafka {len(a)} bytes, ours {len(b)}"


@pytest.mark.parametrize("home", RELEASES)
def test_invalid_utf8_prints_as_kafka_dump_log(home, segment, ours, tmp_path):
    kafka = kafka_dump_log(home, segment, tmp_path)
    assert kafka == ours, first_difference(kafka, ours)
    # not vacuous: every record was printed, and Python's own rule would have printed other text
    recs = records()
    assert ours.count(b"| offset: ") == len(recs)
    texts = [t for k, v, hs in recs for t in (k, v, *(h[0] for h in hs)) if t is not None]
    java = sum(java_utf8(t).count("\ufffd") for t in texts)
    python = sum(t.decode("utf-8", "replace").count("\ufffd") for t in texts)
    assert ours.count("\ufffd".encode()) == java != python
