"""Replay's fast path (image.replay._apply_plain: frames walked inline, hot record
types read from their bytes, tails memoised) gives what the general path gives
(Record objects, every value decoded to a dict, the model's apply functions),
record for record: the image, where it is, the records counted, unknown records
and problems in order. Checked on every metadata log dir of ../shared (corpus
and reference fixtures), with bytes flipped inside CRC-valid batches
(hypothesis), and for history, whose observer sees only the records that may
concern its entity."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from quorumctl.errors import InputError
from quorumctl.image import replay as replay_mod
from quorumctl.image.history import Entity, history
from quorumctl.image.replay import Point, replay
from quorumctl.image.view import flatten, provenance

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CORPUS = SHARED / "corpus"
FIXTURES = SHARED / "reference" / "fixtures"
CHURN = SHARED / "perf" / "churn-controller-1.log.gz"

needs_shared = pytest.mark.shared


def _state(rp) -> tuple:
    img = rp.image
    return flatten(img), provenance(img), rp.end_reason, rp.batches


def _both(monkeypatch, fn):
    """fn() with the fast path, then with every batch sent down the general path."""
    fast = fn()
    with monkeypatch.context() as m:
        m.setattr(replay_mod, "_apply_plain", lambda *a, **k: None)
        slow = fn()
    return fast, slow


def _metadata_dirs() -> list[Path]:
    return sorted(
        p
        for root in (CORPUS, FIXTURES)
        for p in root.rglob("__cluster_metadata-0")
        if p.is_dir() and any(q.suffix == ".log" for q in p.iterdir())
    )


@needs_shared
def test_fast_path_equals_general_path_on_every_real_log(monkeypatch):
    dirs = _metadata_dirs()
    assert len(dirs) >= 29
    compared = 0
    for d in dirs:
        for point in (Point(),):
            try:
                fast, slow = _both(monkeypatch, lambda: _state(replay([str(d)], point, use_snapshots=False)))
            except InputError as e:  # a dir replay refuses is refused by both paths
                with monkeypatch.context() as m:
                    m.setattr(replay_mod, "_apply_plain", lambda *a, **k: None)
                    with pytest.raises(type(e)):
                        replay([str(d)], point, use_snapshots=False)
                continue
            assert fast == slow, (d, point)
            compared += 1
    assert compared >= 25


@needs_shared
def test_fast_path_equals_general_path_on_garbage_in_valid_batches(tmp_path, monkeypatch):
    """Bytes flipped inside records (each batch's CRC recomputed, so the decoders see
    them): the same problems, unknown records, counts and image on both paths."""
    from hypothesis import HealthCheck, given, settings

    from hostile import garbage_in_batches

    write, flips = garbage_in_batches(
        FIXTURES / "kafka-3.7.0-static" / "data" / "c1" / "__cluster_metadata-0" / "00000000000000000000.log"
    )

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(flips)
    def check(flips):
        d = write(tmp_path / "fuzz", flips)
        fast, slow = _both(monkeypatch, lambda: _state(replay([str(d)])))
        assert fast == slow

    check()


@pytest.mark.shared("perf/churn-controller-1.log.gz")
# topic:compacted: a config resource the churn log holds (topic:demo has none: history now
# refuses a never-existing entity, exit 1, instead of reporting 0 records)
@pytest.mark.parametrize("entity", [Entity("topic", "demo", 0), Entity("config", "topic:compacted")])
def test_history_fast_path_equals_general_path(tmp_path, monkeypatch, entity):
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(gzip.decompress(CHURN.read_bytes()))
    fast, slow = _both(monkeypatch, lambda: history([str(d)], entity))
    assert fast == slow
    assert fast["entries"] and fast["existsAtEnd"]


def test_short_and_odd_values_take_the_general_path(tmp_path, monkeypatch):
    """Values too short for their ids, empty, null, with an unknown version or frame,
    a TopicRecord with a tagged field, at the end of a batch and inside it: each is
    decoded and reported by the general path, with the same result."""
    from quorumctl.records import metadata as md
    from quorumctl.records.batch import encode_batch

    tid = "WTRHkgRrTX2dlTr_lrq9Ag"
    topic = md.encode_metadata("TopicRecord", 0, {"name": "t", "topicId": tid})
    part = md.encode_metadata(
        "PartitionRecord",
        1,
        {
            "partitionId": 0,
            "topicId": tid,
            "replicas": [1],
            "isr": [1],
            "removingReplicas": [],
            "addingReplicas": [],
            "leader": 1,
            "leaderEpoch": 0,
            "partitionEpoch": 0,
            "directories": ["AAAAAAAAAAAAAAAAAAAAAA"],
        },
    )
    change = md.encode_metadata("PartitionChangeRecord", 0, {"partitionId": 0, "topicId": tid, "leader": 2})
    odd = [
        b"",
        b"\x01",
        b"\x01\x03",
        b"\x01\x03\x01",
        part[:22],
        part[:23],
        part[:24],
        b"\x02" + part[1:],
        part[:2] + b"\x07" + part[3:],
        part + b"\x00",
        topic[:-1] + b"\x01\x05\x00",
        change[:2] + b"\x05" + change[3:],
        b"\x01\x09\x00" + bytes(16),
    ]
    batches = [
        encode_batch([(None, topic), (None, part), (None, v), (None, change)], base_offset=4 * i)
        for i, v in enumerate(odd)
    ]
    batches += [encode_batch([(None, part), (None, v)], base_offset=4 * len(odd) + 2 * i) for i, v in enumerate(odd)]
    batches.append(encode_batch([(None, None), (None, change)], base_offset=6 * len(odd)))
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    fast, slow = _both(monkeypatch, lambda: _state(replay([str(d)])))
    assert fast == slow
    assert fast[1]["problemCount"] > 0 and fast[1]["unknownRecords"]
