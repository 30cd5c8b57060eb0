"""The test helpers' own checks fail when their input is missing: a check that has nothing
to compare must not pass (verify_clean on a dir of temporary files, the chaos helper's
log-matching checks on a dir without a metadata log or a `state` that compared nothing)."""

from __future__ import annotations

import pytest

import recover_chaos as rc
from quorumctl.testing.synth import B, write_replica


def test_verify_clean_fails_on_a_dir_with_nothing_to_verify(verify_clean, tmp_path):
    d = tmp_path / "d"
    (d / "__cluster_metadata-0").mkdir(parents=True)
    (d / "__cluster_metadata-0" / "00000000000000000000.log.part").write_bytes(b"\0" * 10)
    with pytest.raises(pytest.fail.Exception, match="nothing to verify"):
        verify_clean(d)
    verify_clean(d, temporaries_ok=True)  # the state an interrupted write leaves, when the caller expects it
    (d / "__cluster_metadata-0" / "00000000000000000000.log.part").unlink()
    with pytest.raises(pytest.fail.Exception, match="nothing to verify"):
        verify_clean(d, temporaries_ok=True)  # nothing at all is never a pass


def test_log_matching_fails_without_a_metadata_log(tmp_path):
    write_replica(str(tmp_path / "a"), [B(1)] * 3, node_id=1)
    (tmp_path / "b").mkdir()
    with pytest.raises(AssertionError, match="no metadata log to compare"):
        rc.log_matching_clashes({"a": tmp_path / "a", "b": tmp_path / "b"})
    with pytest.raises(AssertionError, match="no metadata log to compare"):
        rc.log_matching_clashes({"a": tmp_path / "a"})
    write_replica(str(tmp_path / "c"), [B(1)] * 3, node_id=2)
    assert rc.log_matching_clashes({"a": tmp_path / "a", "c": tmp_path / "c"}) == []


def test_state_clashes_fails_when_state_compared_nothing(tmp_path):
    write_replica(str(tmp_path / "a"), [B(1)] * 3, node_id=1)
    with pytest.raises(AssertionError, match="no log-matching comparison"):
        rc.state_clashes([tmp_path / "a", tmp_path / "missing"])  # state refuses: no JSON at all
    with pytest.raises(AssertionError, match="no log-matching comparison"):
        rc.state_clashes([tmp_path / "a"])  # one replica: nothing compared
    write_replica(str(tmp_path / "c"), [B(1)] * 3, node_id=2)
    assert rc.state_clashes([tmp_path / "a", tmp_path / "c"]) == []
