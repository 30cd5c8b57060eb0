"""Write tests/durations.json, the seconds each test module takes, from a pytest
run's JUnit XML: the order in which tests/conftest.py hands modules to the
workers (the longest first).

    python -m pytest ... --junitxml=/tmp/junit.xml
    python tools/test_durations.py /tmp/junit.xml            # merge into tests/durations.json
    python tools/test_durations.py /tmp/junit.xml --check    # exit 1 when a module moved by >50 % and >30 s

A module's seconds are the sum of its tests' times (setup and teardown included,
so a module-scoped cluster counts once), rounded. Modules the run did not include
keep their seconds; modules that no longer exist are dropped.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
DURATIONS = TESTS / "durations.json"


def module_seconds(junit: Path) -> dict[str, float]:
    """tests-relative module path -> seconds, from <testcase classname="tests.kafka.test_x[.Class]">."""
    out: dict[str, float] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        if parts[:1] != ["tests"]:
            continue
        # the module is the first part named test_*: a class may follow it
        end = next((i for i, p in enumerate(parts) if p.startswith("test_")), None)
        if end is None:
            continue
        key = "/".join(parts[1 : end + 1]) + ".py"
        out[key] = out.get(key, 0.0) + float(case.get("time") or 0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("junit", type=Path)
    ap.add_argument("--check", action="store_true", help="only say which modules moved a lot; write nothing")
    a = ap.parse_args()
    old = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    got = module_seconds(a.junit)
    exists = {p.relative_to(TESTS).as_posix() for p in TESTS.glob("*/test_*.py")}
    new = {k: v for k, v in old.items() if k in exists}
    new.update({k: round(v) for k, v in got.items() if k in exists and v >= 5})  # under 5 s: no need to schedule
    if a.check:
        moved = [k for k in got if abs(got[k] - old.get(k, 0)) > max(30, 0.5 * old.get(k, 0))]
        for k in sorted(moved):
            print(f"{k}: {old.get(k, 0)} s in tests/durations.json, {got[k]:.0f} s in this run")
        return 1 if moved else 0
    DURATIONS.write_text(json.dumps(dict(sorted(new.items(), key=lambda kv: (-kv[1], kv[0]))), indent=1) + "\n")
    print(f"{len(new)} modules in {DURATIONS.relative_to(TESTS.parent)} ({len(got)} measured in this run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
