"""`recover` on the lab of real hosts (tests/support/lab.py; issues 32 and 33): the voters
declared lost are only partitioned from the operator's bastion, still running and
electing a leader among themselves. Whether the operator's packets to them are
dropped (a timeout) or answered by a TCP reset (exactly "nothing listens" from
the bastion), `recover` refuses and writes nothing: the broker, which still
reaches them, forwards DescribeQuorum to their leader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lab import lab_fixture, until

import recover_chaos as rc

lab = lab_fixture("4.3", dynamic=True)
pytestmark = [pytest.mark.kafka("4.3"), pytest.mark.root]


@pytest.mark.parametrize("reject", [False, True], ids=["dropped", "reset"])
def test_recover_refuses_lost_voters_only_cut_off_from_the_operator(lab, reject):
    if lab.alive(1):
        lab.kill(1)  # the survivor is stopped, as recover needs; 2 and 3 keep a majority
    leader, epoch = until(
        "2 and 3 lead",
        lambda: (lambda s: (s["leaderId"], s["leaderEpoch"]) if s and s.get("leaderId") in (2, 3) else None)(
            lab.status()
        ),
        90,
    )
    before = rc.tree_hash(lab.data(1))
    backup = Path(str(lab.data(1)) + ".quorumctl-backup")
    cut = lab.operator_blocked(["c2", "c3"], reject=reject)
    try:
        code, out, err = lab.quorumctl(
            "recover", lab.data(1), "--lost-voters", "2,3", "--replica", lab.data(4), "--timeout", "3", "--apply"
        )
        assert code == 1 and err == "", (code, out, err)
        lines = out.splitlines()
        # from the bastion the lost voters look gone (reset) or unknown (dropped) ...
        state = "silent (connection refused)" if reject else "unknown (no TCP answer within"
        assert any(ln.startswith(f"  probe: voter 2 at c2:9093: {state}") for ln in lines), out
        # ... but the broker sees their leader, and says so
        asked = [ln for ln in lines if ln.startswith("  asked: broker 4 at b4:9092: ")]
        assert asked and asked[0].startswith(f"  asked: broker 4 at b4:9092: sees leader {leader} in epoch "), out
        refused = [ln for ln in lines if ln.startswith("  refused: ")]
        assert refused, out
        if reject:  # nothing else stands in the way: the broker's word refuses it
            assert refused[0].startswith(f"  refused: broker 4 at b4:9092 sees leader {leader} in epoch "), out
        assert rc.tree_hash(lab.data(1)) == before and not backup.exists(), "recover wrote while refusing"
        code, out, err = lab.quorumctl(
            "recover", lab.data(1), "--lost-voters", "2,3", "--replica", lab.data(4), "--timeout", "3", "-o", "json"
        )
        (w,) = [w for w in json.loads(out)["plan"]["witnesses"] if w["who"] == "broker 4"]
        assert (w["state"], w["leader_id"]) == ("leader", leader) and w["leader_epoch"] >= epoch, w
    finally:
        lab.heal(cut)
