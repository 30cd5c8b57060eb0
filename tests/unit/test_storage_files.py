"""Small state files: meta.properties (java.util.Properties), quorum-state,
leader-epoch-checkpoint, partition.metadata; real files from Kafka and bad input."""

from __future__ import annotations

import calendar
import glob
import time

import pytest

from quorumctl.errors import InputError
from quorumctl.logdir import statefiles as state_files
from quorumctl.config import properties
from samples import CORPUS, FIXTURES, SHARED

needs_shared = pytest.mark.shared


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(p)


# -- java.util.Properties -----------------------------------------------------------


def test_properties_load_java_rules():
    text = (
        "# comment\n! also a comment\n  key1 = value one  \nkey2:v2\nkey3 v3\n"
        "multi = a\\\n    b\\\n  c\nesc\\ key=\\u0041\\tB\\=\nempty=\n\nlast\\\n"
    )
    p = properties.loads(text)
    assert p == {
        "key1": "value one  ",
        "key2": "v2",
        "key3": "v3",
        "multi": "abc",
        "esc key": "A\tB=",
        "empty": "",
        "last": "",
    }
    assert properties.loads(b"k=\xe9") == {"k": "\xe9"}  # ISO-8859-1, as Properties.load(InputStream)
    with pytest.raises(properties.PropertiesError):
        properties.loads("k=\\u12")


def test_properties_store_order_and_escapes():
    # Kafka's meta.properties order: node.id, directory.id, version, cluster.id (ConcurrentHashMap bins)
    assert properties.java_order(["version", "cluster.id", "node.id", "directory.id"]) == [
        "node.id",
        "directory.id",
        "version",
        "cluster.id",
    ]
    out = properties.dumps({"a b": "x=y:#!", "k": " lead"}, "", 0).decode()
    assert (
        out == "#\n#Thu Jan 01 00:00:00 UTC 1970\na\\ b=x\\=y\\:\\#\\!\nk=\\ lead\n"
        or out == "#\n#Thu Jan 01 00:00:00 UTC 1970\nk=\\ lead\na\\ b=x\\=y\\:\\#\\!\n"
    )
    assert properties.loads(out) == {"a b": "x=y:#!", "k": " lead"}


def _date_of(line: str) -> float | None:
    try:
        return calendar.timegm(time.strptime(line[1:], "%a %b %d %H:%M:%S UTC %Y"))
    except ValueError:
        return None


@needs_shared
def test_meta_properties_rewritten_byte_for_byte():
    """Every real meta.properties Kafka wrote (fixtures + corpus, UTC dates) is what
    quorumctl writes for the same values."""
    paths = glob.glob(str(FIXTURES / "**" / "meta.properties"), recursive=True) + glob.glob(
        str(CORPUS / "**" / "meta.properties"), recursive=True
    )
    checked = 0
    for p in paths:
        raw = open(p, "rb").read()
        lines = raw.decode().split("\n")
        when = _date_of(lines[1])
        if when is None:
            continue
        m = state_files.read_meta_properties(p)
        assert (
            state_files.meta_properties_text(
                m["version"], m.get("cluster.id"), m.get("node.id"), m.get("directory.id"), when
            )
            == raw
        ), p
        checked += 1
    assert checked >= 40


@needs_shared
def test_all_real_state_files_parse():
    n = 0
    for name, reader in (
        ("meta.properties", state_files.read_meta_properties),
        ("quorum-state", state_files.read_quorum_state),
        ("leader-epoch-checkpoint", state_files.read_epoch_checkpoint),
        ("partition.metadata", state_files.read_partition_metadata),
    ):
        for p in glob.glob(str(SHARED / "**" / name), recursive=True):
            reader(p)
            n += 1
    assert n > 3000


@needs_shared
def test_fixture_values():
    d37 = FIXTURES / "kafka-3.7.0-static" / "data" / "c1"
    d39 = FIXTURES / "kafka-3.9.0-dynamic" / "data"
    m = state_files.read_meta_properties(str(d37 / "meta.properties"))
    assert (m["version"], m["node.id"], m["cluster.id"], m["directory.id"]) == (
        1,
        1,
        "XFBpci3ORzK2hz44Gtmrwg",
        "pebDiE3pUq-XJvYeYosFAg",
    )
    assert (
        state_files.kafka_metadata_string(m)
        == "{cluster.id=XFBpci3ORzK2hz44Gtmrwg, directory.id=pebDiE3pUq-XJvYeYosFAg, node.id=1, version=1}"
    )
    q = state_files.read_quorum_state(str(d37 / "__cluster_metadata-0" / "quorum-state"))
    assert q == {
        "clusterId": "",
        "leaderId": 1,
        "leaderEpoch": 20,
        "votedId": -1,
        "appliedOffset": 0,
        "currentVoters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}],
        "data_version": 0,
    }
    assert state_files.quorum_state_voters(q) == [1, 2, 3]
    q1 = state_files.read_quorum_state(str(d39 / "c1" / "__cluster_metadata-0" / "quorum-state"))
    assert q1 == {
        "leaderId": 1,
        "leaderEpoch": 1,
        "votedId": -1,
        "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA",
        "data_version": 1,
    }
    assert state_files.quorum_state_voters(q1) is None
    q2 = state_files.read_quorum_state(str(d39 / "c2" / "__cluster_metadata-0" / "quorum-state"))
    assert q2["data_version"] == 0 and q2["currentVoters"] == []
    cp = str(d37 / "__cluster_metadata-0" / "leader-epoch-checkpoint")
    assert state_files.read_epoch_checkpoint(cp) == [(2, 0), (7, 335), (20, 408)]
    assert state_files.epoch_checkpoint_text([(2, 0), (7, 335), (20, 408)]) == open(cp, "rb").read()
    pm = str(d37 / "__cluster_metadata-0" / "partition.metadata")
    assert state_files.read_partition_metadata(pm) == {"version": 0, "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ"}
    assert state_files.partition_metadata_text("AAAAAAAAAAAAAAAAAAAAAQ") == open(pm, "rb").read()


# -- bad input: one line naming the file, the line and what was expected -------------


@pytest.mark.parametrize(
    "body,msg",
    [
        ("version=1\ncluster.id=x\n", "Failed to find node.id"),
        ("version=1\nnode.id=1\n", "cluster.id was not found"),
        ("version=2\nnode.id=1\ncluster.id=x\n", "Unknown meta.properties version number 2"),
        ("version=one\n", "Invalid meta.properties version string 'one'"),
        ("version=1\nnode.id=x1\ncluster.id=x\n", "Unable to read node.id as a base-10 number"),
        ("version=1\nnode.id=1\ncluster.id=x\ndirectory.id=zz\n", "Unable to read directory.id as a Uuid"),
        ("version=1\nnode.id=1\ncluster.id=x\nbad=\\u00\n", ":4: Malformed"),
    ],
)
def test_meta_properties_errors(tmp_path, body, msg):
    p = write(tmp_path, "meta.properties", body)
    with pytest.raises(InputError) as e:
        state_files.read_meta_properties(p)
    assert str(e.value).startswith(p + ":") and msg in str(e.value) and "\n" not in str(e.value)
    if msg.startswith(":"):  # a line-level error: path:N: message, the one wording of file errors
        assert str(e.value).startswith(p + msg)


def test_meta_properties_v0(tmp_path):
    p = write(tmp_path, "meta.properties", "#\n#x\nbroker.id=1001\ncluster.id=abc\nversion=0\n")
    m = state_files.read_meta_properties(p)
    assert (m["version"], m["node.id"], m["cluster.id"]) == (0, 1001, "abc")
    assert state_files.kafka_metadata_string(m) == "{broker.id=1001, cluster.id=abc, version=0}"


@pytest.mark.parametrize(
    "body,msg",
    [
        ("", "File ended prematurely"),
        ("{not json", "invalid JSON at column 2"),
        ("[1]", "expected a JSON object"),
        ('{"leaderId":1}', "does not have data_version field"),
        ('{"data_version":2}', "data_version (2) is not within the min (0) and max (1) supported version"),
        (
            '{"leaderId":1,"leaderEpoch":1,"votedId":-1,"data_version":1}',
            "unable to locate field 'votedDirectoryId', which is mandatory in version 1",
        ),
        (
            '{"leaderId":"1","leaderEpoch":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}',
            "field 'leaderId' must be an int32",
        ),
        (
            '{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[{"x":1}],'
            '"data_version":0}',
            "field 'currentVoters' must be a list",
        ),
    ],
)
def test_quorum_state_errors(tmp_path, body, msg):
    p = write(tmp_path, "quorum-state", body)
    with pytest.raises(InputError) as e:
        state_files.read_quorum_state(p)
    assert str(e.value).startswith(p + ": ") and msg in str(e.value)


def test_epoch_checkpoint_parsing(tmp_path):
    assert state_files.read_epoch_checkpoint(write(tmp_path, "a", "0\n2\n1   0\n3\t10\n")) == [(1, 0), (3, 10)]
    assert state_files.read_epoch_checkpoint(write(tmp_path, "b", "")) == []
    assert state_files.read_epoch_checkpoint(write(tmp_path, "c", "0\n")) == []
    for body, msg in (
        ("1\n0\n", "bad:1: Unrecognised version:1, expected version: 0"),
        ("0\n2\n1 0\n", "Expected [2] entries in checkpoint file, but found only [1]"),
        ("0\n1\n1 0 5\n", "bad:3: Malformed line"),
        ("0\n1\nx 0\n", "bad:3: Malformed line"),
        ("0\nmany\n", "bad:2: expected the entry count"),
        ("zero\n", "bad:1: expected the version number 0"),
    ):
        p = write(tmp_path, "bad", body)
        with pytest.raises(InputError, match=msg.replace("[", r"\[").replace("]", r"\]")):
            state_files.read_epoch_checkpoint(p)


def test_partition_metadata_errors(tmp_path):
    assert state_files.read_partition_metadata(
        write(tmp_path, "pm", "version:   0\ntopic_id:  AAAAAAAAAAAAAAAAAAAAAQ")
    ) == {"version": 0, "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ"}
    for body, msg in (
        ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "Invalid topic ID"),
        ("version: x\n", "pm:1: Malformed"),
        ("version: 0\ntopic: AAAAAAAAAAAAAAAAAAAAAQ", "pm:2: Malformed"),
        ("version: 0\ntopic_id: short1", "pm:2: Input string `short1` decoded as 4 bytes"),
    ):
        with pytest.raises(InputError, match=msg):
            state_files.read_partition_metadata(write(tmp_path, "pm", body))


def test_missing_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        state_files.read_quorum_state(str(tmp_path / "nope"))
    with pytest.raises(InputError, match="is a directory"):
        state_files.read_epoch_checkpoint(str(tmp_path))
