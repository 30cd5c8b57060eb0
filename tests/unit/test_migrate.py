"""ops.migrate's judgement (the preflight, the config plan, the verification after a
roll) on facts written out here, and the offline preflight on log dirs that
`bootstrap format` wrote. The live steps on real Kafka: tests/kafka/test_kafka_migrate.py."""

from __future__ import annotations

import pytest

from quorumctl.errors import ExitStatus
from quorumctl.ops.migrate import (
    Facts,
    MigrateRefused,
    NodeFacts,
    config_plan,
    parse_voters,
    preflight,
    connection_args,
    verify_roll,
)

VOTERS = "1@c1:9093,2@c2:9093,3@c3:9093"
R43 = {"kraft.version": (0, 1), "metadata.version": (7, 31)}
R40 = {"kraft.version": (0, 1), "metadata.version": (7, 25)}


def static(**over) -> Facts:
    nodes = [
        NodeFacts(
            i, "controller", f"c{i}:9093", voter=True, supported=dict(R43), voters_conf=VOTERS, conf_source="running"
        )
        for i in (1, 2, 3)
    ]
    nodes.append(NodeFacts(4, "broker", "b4:9092", supported=dict(R43), voters_conf=VOTERS, conf_source="running"))
    f = Facts(
        "live", "c1:9093", 0, 30, 2, parse_voters(VOTERS, "t"), nodes, "kraft.version can be upgraded to 1.", True
    )
    for k, v in over.items():
        setattr(f, k, v)
    return f


def problems(report: dict) -> list[tuple[str, int | None]]:
    return [(c.name, c.node) for c in report["checks"] if c.status == "problem"]


def test_a_static_quorum_on_43_is_ready():
    r = preflight(static())
    assert (r["verdict"], problems(r), r["first"]) == ("ready", [], None)
    # a command that runs as printed: the voters' endpoints when the caller names no address
    assert r["next"] == "quorumctl migrate-quorum upgrade --bootstrap-controller c1:9093,c2:9093,c3:9093 --apply"
    via = connection_args(
        static(), ["--bootstrap-controller", "c2:9093"], ["--command-config", "/etc/kafka/admin client.properties"]
    )
    assert preflight(static(), via)["next"] == (
        "quorumctl migrate-quorum upgrade --bootstrap-controller c2:9093 "
        "--command-config '/etc/kafka/admin client.properties' --apply"
    )
    # a metadata.version too old for kraft.version 1: the fix is the features upgrade, as a full line
    old = preflight(static(metadata_version=20), via)
    assert old["first"] == (
        "quorumctl features upgrade --metadata 3.9-IV0 --bootstrap-controller c2:9093 "
        "--command-config '/etc/kafka/admin client.properties' --apply"
    )
    ids = [c for c in r["checks"] if c.name == "directory id"]
    assert [c.status for c in ids] == ["ok"] * 3 and "Kafka's verdict" in ids[0].detail


def test_a_40_controller_blocks_and_is_named_first():
    f = static(metadata_version=20)
    f.node(2).supported = dict(R40)
    r = preflight(f)
    assert r["verdict"] == "blocked"
    assert problems(r) == [("software", 2), ("metadata.version", None)]
    assert r["first"] == "roll controller 2 to Kafka 4.1 or newer first"
    assert "supports metadata.version up to 4.0-IV3" in next(c.detail for c in r["checks"] if c.node == 2)


def test_kafkas_refusal_blocks_and_directory_ids_become_the_suspects():
    r = preflight(static(verdict="Can not upgrade kraft.version to 1. Directory id must be known", verdict_ok=False))
    assert r["verdict"] == "blocked"
    assert problems(r) == [("kafka verdict", None)]
    assert {c.status for c in r["checks"] if c.name == "directory id"} == {"unknown"}


def test_a_node_with_other_voters_blocks():
    f = static()
    f.node(4).voters_conf = "1@c1:9093,2@c2:9093"
    r = preflight(f)
    assert problems(r) == [("config", 4)]
    assert r["first"] == "make controller.quorum.voters the same on every node first"


def test_a_dynamic_quorum_goes_to_the_config_step():
    r = preflight(static(kraft_version=1))
    assert r["verdict"] == "dynamic" and r["next"].startswith("quorumctl migrate-quorum configs")


def test_configs_are_refused_before_the_upgrade():
    with pytest.raises(MigrateRefused) as e:
        config_plan(static())
    assert e.value.exit_code == ExitStatus.PROBLEMS
    assert str(e.value).startswith("kraft.version is 0: run `quorumctl migrate-quorum upgrade --apply` first.")


def test_the_plan_rolls_followers_then_the_leader_then_brokers():
    plan = config_plan(static(kraft_version=1))
    assert plan["bootstrap"] == "c1:9093,c2:9093,c3:9093"
    assert [(s["node"].kind, s["node"].id) for s in plan["steps"]] == [
        ("controller", 1),
        ("controller", 3),
        ("controller", 2),
        ("broker", 4),
    ]
    assert {(s["remove"], s["add"], s["done"]) for s in plan["steps"]} == {
        (f"controller.quorum.voters={VOTERS}", "controller.quorum.bootstrap.servers=c1:9093,c2:9093,c3:9093", False)
    }


def dynamic_after(rolled: list[int]) -> Facts:
    f = static(kraft_version=1)
    for n in f.nodes:
        if n.kind == "controller":
            n.directory_id = f"dir{n.id}AAAAAAAAAAAAAAAAA"
        if n.id in rolled:
            n.voters_conf, n.bootstrap_conf = None, "c3:9093,c2:9093,c1:9093"
    return f


def test_verify_names_the_next_node_and_then_done():
    v = verify_roll(dynamic_after([1]))
    assert v["ok"] and not v["done"] and (v["next"].kind, v["next"].id) == ("controller", 3)
    v = verify_roll(dynamic_after([1, 2, 3, 4]))
    assert v["ok"] and v["done"] and v["next"] is None


def test_verify_flags_an_observer_controller_and_partial_servers():
    f = dynamic_after([1])
    f.node(3).voter, f.node(3).observer = False, True
    f.node(1).bootstrap_conf = "c1:9093"
    v = verify_roll(f)
    assert not v["ok"]
    bad = [(c.name, c.node, c.detail) for c in v["checks"] if c.status == "problem"]
    assert bad == [
        ("voters", 3, "controller 3 is an observer, not a voter"),
        (
            "config",
            1,
            "controller 1 (running): controller.quorum.bootstrap.servers=c1:9093 does not "
            "list every voter (c1:9093,c2:9093,c3:9093)",
        ),
    ]
    # add-controller's command: the voters' endpoints; its properties, not read here, said in words
    (fix,) = [c.fix for c in v["checks"] if c.node == 3]
    assert fix == (
        "add it: quorumctl add-controller --bootstrap-controller c1:9093,c2:9093,c3:9093 --command-config "
        "followed by controller 3's server.properties (not read here)"
    )
    f.node(3).conf_source = "/etc/kafka/c3 props.properties"  # read from a file: the command is complete
    (fix,) = [c.fix for c in verify_roll(f)["checks"] if c.node == 3 and c.status == "problem"]
    assert fix == (
        "add it: quorumctl add-controller --bootstrap-controller c1:9093,c2:9093,c3:9093 --command-config "
        "'/etc/kafka/c3 props.properties'"
    )


def test_offline_preflight_of_formatted_static_controllers(cli, tmp_path):
    cid = cli("bootstrap", "random-uuid", code=0).out.strip()
    voters = ",".join(f"{i}@localhost:{9090 + i}" for i in (1, 2, 3))
    confs = []
    for i in (1, 2, 3):
        conf = tmp_path / f"c{i}.properties"
        conf.write_text(
            f"node.id={i}\nprocess.roles=controller\ncontroller.quorum.voters={voters}\n"
            f"controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://localhost:{9090 + i}\n"
            f"log.dirs={tmp_path / f'c{i}'}\n"
        )
        cli("bootstrap", "format", "-c", str(conf), "-t", cid, "--release-version", "4.1-IV1", "--apply", code=0)
        confs += ["-c", str(conf)]
    d = cli("migrate-quorum", "preflight", str(tmp_path / "c1"), *confs, "-o", "json", code=0).json()
    assert (d["mode"], d["verdict"], d["kraftVersion"], d["metadataVersionName"]) == ("offline", "ready", 0, "4.1-IV1")
    assert d["voters"] == {str(i): [f"localhost:{9090 + i}"] for i in (1, 2, 3)}
    metas = {n["id"]: n["metaDirectoryId"] for n in d["nodes"]}
    assert all(len(metas[i]) == 22 for i in (1, 2, 3)) and len(set(metas.values())) == 3
    # bootstrap only: no registrations yet, the software is not known offline (not a problem)
    assert {(c["check"], c["status"]) for c in d["checks"]} == {
        ("kraft.version", "ok"),
        ("software", "unknown"),
        ("metadata.version", "ok"),
        ("directory id", "ok"),
        ("config", "ok"),
    }
    # a controller's config naming other voters blocks
    (tmp_path / "c3.properties").write_text((tmp_path / "c3.properties").read_text().replace(",3@localhost:9093", ""))
    r = cli("migrate-quorum", "preflight", str(tmp_path / "c1"), *confs, "-o", "text")
    assert (
        r.code == 1
        and "Verdict: blocked.\nFirst: make controller.quorum.voters the same on every node first\n" in r.out
    ), r.out
