"""tools/test_durations.py: a run's JUnit XML becomes the module order of tests/conftest.py."""

from __future__ import annotations

import json

import test_durations

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.kafka.test_kafka_live" name="test_a" time="100.5"/>
<testcase classname="tests.kafka.test_kafka_live" name="test_b" time="50.25"/>
<testcase classname="tests.cli.test_state.TestGroup" name="test_c" time="7.0"/>
<testcase classname="tests.unit.test_ids" name="test_d" time="0.3"/>
<testcase classname="elsewhere.test_x" name="test_e" time="9"/>
</testsuite></testsuites>
"""


def test_seconds_are_summed_per_module_and_merged(tmp_path, monkeypatch):
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT)
    assert test_durations.module_seconds(junit) == {
        "kafka/test_kafka_live.py": 150.75,
        "cli/test_state.py": 7.0,
        "unit/test_ids.py": 0.3,
    }
    tests = tmp_path / "tests"
    for module in ("kafka/test_kafka_live.py", "cli/test_state.py", "unit/test_ids.py", "spark/test_spark_s3.py"):
        (tests / module).parent.mkdir(parents=True, exist_ok=True)
        (tests / module).write_text("")
    durations = tests / "durations.json"
    durations.write_text(
        json.dumps({"kafka/test_kafka_live.py": 300, "spark/test_spark_s3.py": 50, "kafka/gone.py": 9})
    )
    monkeypatch.setattr(test_durations, "TESTS", tests)
    monkeypatch.setattr(test_durations, "DURATIONS", durations)
    monkeypatch.setattr("sys.argv", ["test_durations.py", str(junit)])
    assert test_durations.main() == 0
    # measured modules updated, unmeasured kept, vanished dropped, under 5 s not scheduled; longest first
    assert list(json.loads(durations.read_text()).items()) == [
        ("kafka/test_kafka_live.py", 151),
        ("spark/test_spark_s3.py", 50),
        ("cli/test_state.py", 7),
    ]
