"""The shipped alert rules (docs/alerts/) pass `promtool check rules`, every
`promtool test rules` fixture passes (the series recorded from real Kafka 4.3
incidents by tests/kafka/test_kafka_automation.py, and the hand-written ones), every
alert is proven by some fixture, and docs/metrics.md describes exactly the
metrics `quorumctl serve` exports."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "docs" / "alerts"
RULES = ALERTS / "kraft-quorum.rules.yml"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="no promtool on PATH (Debian's `prometheus` package)")
RECORDED = ("frozen-follower", "no-leader", "flapping-leader")


def fixtures() -> list[Path]:
    return sorted(p for p in (ALERTS / "tests").glob("*.yml") if not p.name.startswith("."))


@needs_promtool
def test_promtool_checks_the_rules():
    p = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS: 7 rules found" in p.stdout


@needs_promtool
@pytest.mark.parametrize("fixture", fixtures(), ids=lambda p: p.stem)
def test_promtool_fixture_passes(fixture):
    p = subprocess.run(
        [PROMTOOL, "test", "rules", str(fixture)], capture_output=True, text=True, timeout=120, cwd=fixture.parent
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]


def test_every_alert_is_proven_firing_by_a_fixture():
    alerts = {r["alert"] for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]}
    fired = {}
    for f in fixtures():
        for t in yaml.safe_load(f.read_text())["tests"]:
            for a in t["alert_rule_test"]:
                if a["exp_alerts"]:
                    fired.setdefault(a["alertname"], set()).add(f.stem)
    assert set(fired) == alerts, alerts - set(fired)
    # the three incidents are recorded from real runs, with the alerts they must fire
    assert {f.stem for f in fixtures()} >= set(RECORDED)
    assert fired["KRaftQuorumNoLeader"] == fired["KRaftQuorumStalled"] == {"no-leader"}
    assert fired["KRaftQuorumFlapping"] == {"flapping-leader"}
    assert fired["KRaftQuorumCanLoseNoVoters"] == fired["KRaftQuorumVoterBehind"] == {"frozen-follower"}
    for name in RECORDED:
        assert (
            (ALERTS / "tests" / f"{name}.yml")
            .read_text()
            .startswith("# Recorded by tests/kafka/test_kafka_automation.py from a real Kafka 4.3 quorum")
        )


def test_metrics_doc_names_every_exported_metric():
    from quorumctl.domain.quorum_metrics import ObserverRow, Snapshot, VoterRow
    from quorumctl.render.metrics import families

    s = Snapshot(
        at=1.0,
        up=True,
        verdict="healthy",
        has_leader=True,
        leader_id=1,
        leader_epoch=3,
        high_watermark=10,
        high_watermark_age_seconds=0.5,
        voters=3,
        caught_up=3,
        majority=2,
        can_lose=1,
        voter_rows=[VoterRow(1, True, 0, 0.0, 0.0, True)],
        observer_rows=[ObserverRow(4, 0, 0.1)],
    )
    exported = set()
    for fam in families(s):
        exported.add(fam.name + ("_total" if fam.type == "counter" else ""))
    documented = set(re.findall(r"^\| `(kraft_quorum_\w+)` \|", (ROOT / "docs" / "metrics.md").read_text(), re.M))
    assert exported == documented, (exported - documented, documented - exported)
    rules_use = set(re.findall(r"kraft_quorum_\w+", RULES.read_text()))
    assert rules_use <= exported, rules_use - exported
