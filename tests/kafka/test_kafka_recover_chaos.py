"""A seeded run of tools/recover_chaos.py (the graded loss-of-quorum chaos run
of issue 23) on real Kafka 4.3.0 with two brokers, in its `lagging-premature`
scenario: the survivor is frozen while the other two controllers commit what
the brokers fetch (the brokers are ahead of it), and of the two 'lost' voters
one is only frozen when the operator first runs recover (refused, nothing
written; recovered once it is really gone). It must be graded "recovered":
every acknowledged change a surviving replica held still there, no fatal log
line, log matching across all replicas' files, a new topic, three voters back.

One run proves what the lagging-survivor and the premature runs proved apart
(CI ran one of each, on 4.1 and 4.3): Kafka 4.1 meets the same faults in
test_kafka_recover_safety.py (a lost voter that answers; the broker ahead of
the survivor) and the whole runbook, controllers added back, in
test_kafka41_recover.py. The full run (8+ per version) is
`python tools/recover_chaos.py`; its results are in docs/recovery.md.
"""

from __future__ import annotations

import pytest

import recover_chaos as rc  # tools/recover_chaos.py (on pytest's pythonpath)
from kafka41 import free_base_port  # ports apart per xdist worker, as the other Kafka tests


@pytest.mark.kafka("4.3")
@pytest.mark.timeout(1800)  # a cluster, a workload, a recovery and two controllers added back
def test_recover_chaos_run_lagging_survivor_and_premature_recover(tmp_path):
    lines = []
    r = rc.run_once(tmp_path, 1, 43001, "4.3", "lagging-premature", 2, log=lines.append, base=free_base_port(span=5))
    assert r.ok and r.grade == "recovered", "\n".join(lines)
    assert any(n.startswith("refused while ") for n in r.notes), r.notes
    # the lagging half really happened: the brokers, not the survivor, were the most up to date
    ahead = r.ahead.split(" (")[0].split(",")
    assert str(r.survivor) not in ahead and set(ahead) <= {"4", "5"}, r.ahead
    assert r.t_serve is not None and r.t_full is not None
