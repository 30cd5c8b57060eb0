"""Two seeded runs of tools/recover_chaos.py (the graded loss-of-quorum chaos run
of issue 23) on real Kafka: 4.1.0 with the survivor lagging (frozen) so the
broker is ahead of it, and 4.3.0 with two brokers and a 'lost' voter that is
only frozen when the operator first runs recover (refused, then recovered
once it is really gone). Each must be graded "recovered": every acknowledged
change a surviving replica held still there, no fatal log line, log matching
across all replicas' files, a new topic, three voters back. The full run
(8+ per version) is `python tools/recover_chaos.py`; its results are in
docs/recovery.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import recover_chaos as rc  # noqa: E402
from kafka41 import free_base_port  # noqa: E402  (ports apart per xdist worker, as the other Kafka tests)


@pytest.mark.parametrize("version,seed,scenario,brokers", [
    pytest.param("4.1", 41001, "lagging-survivor", 1, id="kafka4.1-lagging-survivor",
                 marks=pytest.mark.skipif(rc.skip_reason("4.1") is not None, reason=rc.skip_reason("4.1") or "")),
    pytest.param("4.3", 43001, "premature", 2, id="kafka4.3-premature-2-brokers",
                 marks=pytest.mark.skipif(rc.skip_reason("4.3") is not None, reason=rc.skip_reason("4.3") or "")),
])
@pytest.mark.timeout(1800)   # a cluster, a workload, a recovery and two controllers added back
def test_recover_chaos_run(tmp_path, version, seed, scenario, brokers):
    lines = []
    r = rc.run_once(tmp_path, 1, seed, version, scenario, brokers, log=lines.append,
                  base=free_base_port(span=3 + brokers))
    assert r.ok and r.grade == "recovered", "\n".join(lines)
    if scenario == "premature":
        assert any(n.startswith("refused while ") for n in r.notes), r.notes
    assert r.t_serve is not None and r.t_full is not None
