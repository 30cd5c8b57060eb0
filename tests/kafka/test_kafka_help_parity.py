"""Every option of Kafka 4.3's kafka-metadata-quorum, kafka-topics, kafka-features,
kafka-cluster, kafka-storage and kafka-metadata-shell, as their --help lists it
(each subcommand's help too), is either taken by the quorumctl command it maps
to, or refused by it with one line that says why and what to use
(cli/kafka_compat.REFUSED), never click's bare "No such option".

Also the offline rows of docs/kafka-command-lines.md: Kafka's own command lines,
copied from its docs, run with the tool name replaced (the live rows run in
test_kafka_live.py against a real cluster).
"""

from __future__ import annotations

import re
import shlex
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from command_lines import doc_rows
from kafka41 import home_of, kafka_tool, needs_kafka

pytestmark = needs_kafka

# (Kafka tool, its subcommand or None) -> the quorumctl commands it maps to. The options a
# tool's own help lists before its subcommands must be taken by every one of them.
MAP = {
    ("kafka-metadata-quorum", None): [
        ("describe", "status"),
        ("describe", "replication"),
        ("add-controller",),
        ("remove-controller",),
    ],
    ("kafka-metadata-quorum", "describe"): [("describe", "status"), ("describe", "replication")],
    ("kafka-metadata-quorum", "add-controller"): [("add-controller",)],
    ("kafka-metadata-quorum", "remove-controller"): [("remove-controller",)],
    ("kafka-topics", None): [("topics", "describe")],
    ("kafka-features", None): [
        ("features", "describe"),
        ("features", "upgrade"),
        ("features", "downgrade"),
        ("features", "disable"),
    ],
    **{("kafka-features", s): [("features", s)] for s in ("describe", "upgrade", "downgrade", "disable")},
    # kafka-features' catalogue commands are kafka-storage's: quorumctl has them once, under bootstrap
    **{("kafka-features", s): [("bootstrap", s)] for s in ("version-mapping", "feature-dependencies")},
    ("kafka-cluster", None): [("cluster", "cluster-id"), ("cluster", "list-endpoints"), ("cluster", "unregister")],
    **{("kafka-cluster", s): [("cluster", s)] for s in ("cluster-id", "unregister", "list-endpoints")},
    ("kafka-storage", None): [("bootstrap", "info")],
    **{
        ("kafka-storage", s): [("bootstrap", s)]
        for s in ("info", "format", "random-uuid", "version-mapping", "feature-dependencies")
    },
    ("kafka-metadata-shell", None): [("image",)],
}
# Kafka options quorumctl takes under the same name with another meaning, and why that is right
OTHER_MEANING = {
    ("kafka-topics", "--config"): "kafka-topics refuses --config with --describe (it sets a created topic's "
    "config); topics describe's -c/--config is the server.properties of its "
    "offline form",
}
OPTION = re.compile(r"(?:^|[\s,\[{(])(--[a-z][a-z0-9-]*)")


def kafka_help(tool: str, sub: str | None, tmp: Path, release: str = "4.3") -> str:
    p = kafka_tool(tool, [*([sub] if sub else []), "--help"], tmp, home=home_of(release))
    text = p.stdout + p.stderr
    assert "--help" in text, (tool, sub, text[-2000:])
    return text


@pytest.fixture(scope="module")
def helps(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("helps")
    with ThreadPoolExecutor(4) as pool:
        futures = {key: pool.submit(kafka_help, key[0], key[1], tmp) for key in MAP}
        return {key: f.result() for key, f in futures.items()}


def command(path):
    from quorumctl.cli.main import root_command

    cmd = root_command()
    parent = None
    for w in path:
        parent, cmd = cmd, cmd.commands[w]
    return parent, cmd


def takes(path, option: str) -> bool:
    parent, cmd = command(path)
    opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    # `describe --status`, `topics --describe`: Kafka's flag is the command itself (cli/main.kafka_order)
    return option in opts or (parent is not None and option[2:] in getattr(parent, "commands", {}))


def unmatched(cli, mapping: dict, helps: dict) -> tuple[int, list[str]]:
    """(options seen, problems): each option a Kafka help lists is taken by the quorumctl commands
    it maps to (all of them for a tool's own options, one for a subcommand's), or refused by them
    with one line that says why, exit 2."""
    seen, problems = 0, []
    for (tool, sub), paths in mapping.items():
        text = helps[(tool, sub)]
        options = sorted(set(OPTION.findall(text)) - {"--help"})
        assert options or (tool, sub) in {
            ("kafka-cluster", None),
            ("kafka-storage", None),
            ("kafka-storage", "random-uuid"),
        }, (tool, sub, text)
        for opt in options:
            seen += 1
            if (tool, opt) in OTHER_MEANING:
                assert all(takes(p, opt) for p in paths)
                continue
            ok = all(takes(p, opt) for p in paths) if sub is None else any(takes(p, opt) for p in paths)
            if ok:
                continue
            for p in paths:
                if takes(p, opt):
                    continue
                code, out, err = cli(*p, opt, "x")
                lines = err.splitlines()
                if not (
                    code == 2
                    and out == ""
                    and len(lines) == 1
                    and lines[0].startswith("quorumctl: error: ")
                    and "No such option" not in err
                    and ("use " in err or "quorumctl" in err[18:])
                ):
                    problems.append(f"{tool} {sub or ''} {opt} -> quorumctl {' '.join(p)}: {code} {err.strip()}")
    return seen, problems


def test_every_kafka_option_is_taken_or_refused_with_a_reason(cli, helps):
    seen, problems = unmatched(cli, MAP, helps)
    assert problems == []
    assert seen > 60  # every help was read (4.3 lists 90 option mentions across these)


# Kafka 4.4's new commands and options (KIP-1312): controller unregistration
MAP44 = {
    ("kafka-cluster", "unregister-controller"): [("cluster", "unregister-controller")],
    ("kafka-metadata-quorum", "remove-controller"): [("remove-controller",)],
}


@pytest.mark.kafka("4.4")
def test_kafka_44_unregistration_options_are_taken(cli, tmp_path):
    """4.4's `kafka-cluster unregister-controller` and `kafka-metadata-quorum remove-controller
    --unregister`: every option their help lists is taken (or refused with a reason), and the
    new ones are taken, not refused."""
    with ThreadPoolExecutor(2) as pool:
        futures = {key: pool.submit(kafka_help, key[0], key[1], tmp_path, "4.4") for key in MAP44}
        helps44 = {key: f.result() for key, f in futures.items()}
    assert "--unregister" in OPTION.findall(helps44[("kafka-metadata-quorum", "remove-controller")])
    seen, problems = unmatched(cli, MAP44, helps44)
    assert problems == []
    assert {o for key in MAP44 for o in OPTION.findall(helps44[key])} - {"--help"} == {
        "--bootstrap-server",
        "--bootstrap-controller",
        "--config",
        "--command-config",
        "--id",
        "--controller-id",
        "--controller-directory-id",
        "--dry-run",
        "--unregister",
    }
    assert seen == 11  # remove-controller's usage line repeats the tool's --bootstrap-server and --bootstrap-controller
    for opt in ("--bootstrap-server", "--bootstrap-controller", "--command-config", "--id"):
        assert takes(("cluster", "unregister-controller"), opt), opt
    for opt in ("--controller-id", "--controller-directory-id", "--dry-run", "--unregister"):
        assert takes(("remove-controller",), opt), opt


def test_refusals_name_the_way(cli):
    code, out, err = cli("topics", "--bootstrap-server", "localhost:9092", "--create", "--topic", "t")
    assert (code, out) == (2, "")
    assert err == (
        "quorumctl: error: quorumctl does not create topics (it reads them: topics describe); "
        "use kafka-topics.sh --create\n"
    )


# -- Kafka's documented command lines, offline rows ------------------------------------------


def test_doc_table_is_kafkas_lines_with_the_tool_replaced():
    """Each quorumctl line is Kafka's with only `bin/kafka-X.sh` replaced."""
    tools = {
        "kafka-metadata-quorum": "quorumctl",
        "kafka-topics": "quorumctl topics",
        "kafka-features": "quorumctl features",
        "kafka-cluster": "quorumctl cluster",
        "kafka-storage": "quorumctl bootstrap",
        "kafka-metadata-shell": "quorumctl image",
    }
    rows = doc_rows("live") + doc_rows("offline") + doc_rows("dynamic")
    assert len(rows) >= 12
    for r in rows:
        tool, _, rest = r["kafka"].removeprefix("bin/").partition(".sh ")
        assert r["quorumctl"] == f"{tools[tool]} {rest}", r


def test_doc_offline_rows_run(cli, tmp_path):
    from samples import SHARED

    snapshots = sorted((SHARED / "reference" / "fixtures").rglob("*.checkpoint"))
    snapshots = [s for s in snapshots if s.parent.name == "__cluster_metadata-0"]
    if not snapshots:
        pytest.skip(f"no snapshot under {SHARED / 'reference' / 'fixtures'}")
    conf = tmp_path / "config" / "server.properties"
    conf.parent.mkdir()
    conf.write_text(
        f"process.roles=controller\nnode.id=1\ncontroller.listener.names=CONTROLLER\n"
        f"listeners=CONTROLLER://localhost:9093\nlog.dirs={tmp_path / 'data'}\n"
    )
    code, uuid, _ = cli("bootstrap", "random-uuid")
    subst = {
        "$KAFKA_CLUSTER_ID": uuid.strip(),
        "config/server.properties": str(conf),
        "metadata_log_dir/__cluster_metadata-0/00000000000000007228-0000000001.checkpoint": str(snapshots[0]),
    }
    for r in doc_rows("offline"):
        line = r["quorumctl"]
        for k, v in subst.items():
            line = line.replace(k, v)
        code, out, err = cli(*shlex.split(line)[1:])
        assert code == r["exit"], (line, out, err)
        assert "Traceback" not in err
