"""diff --timeline (every change inside a window, in log order, transient objects
included) and dump-log --from-time/--to-time on the metadata log (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quorumctl.image.diff import diff
from quorumctl.image.replay import Point

REPO = Path(__file__).resolve().parents[2]
FLINK = REPO.parent / "shared" / "corpus" / "rjmfernandes__flink-on-prem" / "data"

TID = "AAAAAAAAAAAAAAAAAAAAAQ"
T0 = 1_700_000_000_000


def _window_log(tmp_path) -> str:
    """Batches one second apart: before the window, a topic created and deleted and
    metadata.version 27 -> 25 -> 27 inside it, one record after it."""
    from quorumctl.records import metadata as md
    from quorumctl.records.batch import encode_batch

    batches = [
        [("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 27})],  # 0
        [
            ("TopicRecord", 0, {"name": "blip", "topicId": TID}),  # 1
            (
                "PartitionRecord",
                0,
                {
                    "partitionId": 0,
                    "topicId": TID,
                    "replicas": [1],
                    "isr": [1],
                    "removingReplicas": [],
                    "addingReplicas": [],
                    "leader": 1,
                    "leaderEpoch": 0,
                    "partitionEpoch": 0,
                },
            ),
        ],  # 2
        [("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 25})],  # 3
        [("RemoveTopicRecord", 0, {"topicId": TID})],  # 4
        [("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": 27})],  # 5
        [
            ("ConfigRecord", 0, {"resourceType": 4, "resourceName": "", "name": "min.insync.replicas", "value": "2"})
        ],  # 6
    ]
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    data, off = b"", 0
    for i, recs in enumerate(batches):
        values = [(None, md.encode_metadata(k, v, x)) for k, v, x in recs]
        data += encode_batch(values, base_offset=off, leader_epoch=1, base_timestamp=T0 + 1000 * i)
        off += len(recs)
    (d / "00000000000000000000.log").write_bytes(data)
    return str(tmp_path)


def test_timeline_shows_what_the_net_diff_hides(cli, tmp_path):
    d = _window_log(tmp_path)
    code, out, err = cli("diff", d, "--from", str(T0), "--to", str(T0 + 4000), "--timeline", "-o", "text")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("Changes from offset 0 ") and lines[1] == "  nothing changed"
    at = lines.index("Timeline: 6 change(s) by 5 record(s), in log order")
    assert lines[at + 1 :] == [
        'offset 1 epoch 1 2023-11-14T22:13:21.000Z TOPIC_RECORD /topics/blip: created {"id":"AAAAAAAAAAAAAAAAAAAAAQ"}',
        "offset 2 epoch 1 2023-11-14T22:13:21.000Z PARTITION_RECORD /topics/blip/0: created leader 1 leaderEpoch 0 "
        "isr [1] replicas [1] partitionEpoch 0",
        "offset 3 epoch 1 2023-11-14T22:13:22.000Z FEATURE_LEVEL_RECORD /features/metadata.version: 27 -> 25",
        "offset 4 epoch 1 2023-11-14T22:13:23.000Z REMOVE_TOPIC_RECORD /topics/blip: removed (was "
        '{"id":"AAAAAAAAAAAAAAAAAAAAAQ"})',
        "offset 4 epoch 1 2023-11-14T22:13:23.000Z REMOVE_TOPIC_RECORD /topics/blip/0: removed (was leader 1 "
        "leaderEpoch 0 isr [1] replicas [1] partitionEpoch 0)",
        "offset 5 epoch 1 2023-11-14T22:13:24.000Z FEATURE_LEVEL_RECORD /features/metadata.version: 25 -> 27",
        "transient: /topics/blip created at offset 1 (2023-11-14T22:13:21.000Z), removed at offset 4 "
        "(2023-11-14T22:13:23.000Z)",
        "transient: /topics/blip/0 created at offset 2 (2023-11-14T22:13:21.000Z), removed at offset 4 "
        "(2023-11-14T22:13:23.000Z)",
    ]
    code, out, err = cli("diff", d, "--from", "0", "--to", "4", "--timeline", "-o", "json", code=0)
    doc = json.loads(out)
    assert [e["offset"] for e in doc["timeline"]] == [1, 2, 3, 4]
    assert [t["path"] for t in doc["transient"]] == ["/topics/blip", "/topics/blip/0"]
    # without --timeline, the document is what it was
    code, out, err = cli("diff", d, "--from", "0", "--to", "4", "-o", "json", code=0)
    assert "timeline" not in json.loads(out)


@pytest.mark.shared("corpus/rjmfernandes__flink-on-prem/data")
@pytest.mark.parametrize("frm, to", [(2000, 2400), (16800, 17026), (0, 17026)])
def test_timeline_composes_to_the_net_diff_on_a_real_log(frm, to):
    """Folding each path's first before and last after over the timeline gives the net diff."""
    doc = diff([str(FLINK)], Point(offset=frm), Point(offset=to), timeline=True)
    folded: dict[str, list] = {}
    for e in doc["timeline"]:
        assert frm < e["offset"] <= to
        for c in e["changes"]:
            folded.setdefault(c["path"], [c["before"], None])[1] = c["after"]
    net = {p: (a, b) for p, (a, b) in folded.items() if a != b}
    assert net == {c["path"]: (c["before"], c["after"]) for c in doc["changes"]}
    offsets = [e["offset"] for e in doc["timeline"]]
    assert offsets == sorted(offsets)


def _offsets(out: str) -> list[int]:
    import re

    return [int(m) for m in re.findall(r"^\| offset: (\d+) ", out, re.M)]


def test_dump_log_cuts_where_the_record_timestamps_say(cli, tmp_path):
    d = _window_log(tmp_path)
    pdir = f"{d}/__cluster_metadata-0"
    code, out, err = cli(
        "dump-log", pdir, "--deep-iteration", "--from-time", str(T0 + 1000), "--to-time", "2023-11-14T22:13:23Z"
    )
    assert (code, err) == (0, "")
    assert _offsets(out) == [1, 2, 3, 4]  # batches stamped T0+1 s .. T0+3 s (22:13:21-22:13:23)
    code, out, err = cli("dump-log", pdir, "--deep-iteration", "--from-time", str(T0 + 4500), code=0)
    assert _offsets(out) == [6]
    # combined with --offset-start: the narrower of the two; a time past every record: nothing
    code, out, err = cli("dump-log", pdir, "--deep-iteration", "--from-time", str(T0), "--offset-start", "5", code=0)
    assert _offsets(out) == [5, 6]
    code, out, err = cli("dump-log", pdir, "--deep-iteration", "--from-time", str(T0 + 60_000))
    assert (code, _offsets(out)) == (0, [])
    code, out, err = cli("dump-log", pdir, "--to-time", str(T0 + 2000), "--from-time", str(T0 + 3000))
    assert (code, out, err) == (2, "", "quorumctl: error: --to-time is before --from-time\n")


def test_dump_log_time_cut_needs_one_partitions_log(cli, tmp_path):
    a = _window_log(tmp_path / "a") if (tmp_path / "a").mkdir() is None else None
    b = _window_log(tmp_path / "b") if (tmp_path / "b").mkdir() is None else None
    code, out, err = cli("dump-log", f"{a}/__cluster_metadata-0", f"{b}/__cluster_metadata-0", "--from-time", str(T0))
    assert (code, out) == (2, "")
    assert err == (
        "quorumctl: error: --from-time/--to-time cut one partition's log (the metadata log): "
        "the segments are in 2 directories\n"
    )
