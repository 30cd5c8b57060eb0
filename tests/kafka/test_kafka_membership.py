"""A ghost registration on real Kafka (issue 38, strimzi#11039): a dynamic quorum of 4
controllers on Kafka 4.1 (metadata.version 4.1-IV1) and one broker; controller 4 is
removed with remove-controller and stopped; the others and the broker are rolled to
4.3. Controller 4 stays registered with 4.1's range (7-27), and Kafka refuses the
upgrade to 4.3-IV0 naming it. `cluster clear-registration 4` plans the re-registration
workaround (below 4.4-IV2 nothing else exists); following it step by step (a fresh
config checked with --node-config, kafka-storage format of 4.3 with
--no-initial-controllers, kafka-server-start of 4.3, check, stop), each run shows where
the steps stand, and once it is done `features upgrade --apply` passes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

from kafka41 import KAFKA43_HOME, kafka_tool, needs_kafka, start_cluster, until

pytestmark = [needs_kafka, pytest.mark.kafka("4.3")]


def test_ghost_controller_registration_cleared_by_re_registering(cli, tmp_path_factory, tmp_path):
    c = start_cluster(cli, tmp_path_factory, "ghost", dynamic=True, version="4.1", controllers=4, start_timeout=300)
    ctl = ",".join(c.controllers[:3])
    opt = ["--bootstrap-controller", ctl]
    proc = None
    try:
        # controller 4 leaves the voters and stops; the others and the broker go to 4.3
        code, out, err = cli("remove-controller", *opt, "-i", "4", "-d", c.dir_ids[4])
        assert code == 0, err
        c.kill(4)
        for node in (1, 2, 3, 5):
            c.kill(node)
            c.start_node(node, 240, home=KAFKA43_HOME, check=True)
        until(
            "3 voters answering on 4.3",
            lambda: cli("describe", "health", *opt, "-o", "json", "--timeout", "3").code == 0,
            120,
        )

        code, out, err = cli("features", "upgrade", *opt, "--metadata", "4.3-IV0", "-o", "json")
        assert code == 1, out + err
        doc = json.loads(out)
        assert "Controller 4 only supports versions 7-27" in json.dumps(doc["verdict"]), doc["verdict"]

        # the plan: below 4.4-IV2 the re-registration workaround, nothing done yet
        code, out, err = cli("cluster", "clear-registration", "4", *opt, "--metadata", "4.3-IV0", "-o", "json")
        assert (code, err) == (1, ""), err
        plan = json.loads(out)
        assert (plan["kind"], plan["method"], plan["metadataVersion"], plan["cleared"]) == (
            "controller",
            "re-register",
            "4.1-IV1",
            False,
        )
        assert [s["state"] for s in plan["steps"]] == ["to do"] * 5
        config_text = plan["steps"][0]["what"].split("\n", 1)[1]
        port = c.base + 4
        assert config_text.splitlines()[:7] == [
            "node.id=4",
            "process.roles=controller",
            f"controller.quorum.bootstrap.servers={ctl}",
            "controller.quorum.auto.join.enable=false",
            "controller.listener.names=CONTROLLER",
            f"listeners=CONTROLLER://127.0.0.1:{port}",
            f"advertised.listeners=CONTROLLER://127.0.0.1:{port}",
        ]
        assert plan["steps"][3]["evidence"] == "Kafka still names controller 4: its registration is the old release's"

        # step 1: the config, as printed (a fresh log dir; our listener map added, as the plan says)
        data = tmp_path / "reregister-4"
        conf = tmp_path / "controller-4.properties"
        conf.write_text(
            "\n".join(ln for ln in config_text.splitlines() if not ln.startswith(("#", "log.dirs=")))
            + f"\nlog.dirs={data}\nlistener.security.protocol.map=CONTROLLER:PLAINTEXT\n"
        )
        code, out, err = cli(
            "cluster",
            "clear-registration",
            "4",
            *opt,
            "--metadata",
            "4.3-IV0",
            "--node-config",
            str(conf),
            "-o",
            "json",
        )
        plan = json.loads(out)
        assert code == 1 and [s["state"] for s in plan["steps"]] == ["done", "to do", "to do", "to do", "to do"]
        fmt = plan["steps"][1]["what"]
        assert fmt == (
            f"format a fresh log dir with the new release: bin/kafka-storage.sh format --cluster-id "
            f"{c.cluster_id} --config {conf} --no-initial-controllers"
        )
        # step 2: format with 4.3's kafka-storage, as printed
        k = kafka_tool(
            "kafka-storage",
            ["format", "--cluster-id", c.cluster_id, "--config", str(conf), "--no-initial-controllers"],
            tmp_path,
            home=KAFKA43_HOME,
        )
        assert k.returncode == 0, k.stdout + k.stderr
        # step 3: start it with 4.3's kafka-server-start
        env = dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m -Xms64m", KAFKA_JMX_OPTS=" ", LOG_DIR=str(tmp_path / "logs"))
        env.pop("KAFKA_LOG4J_OPTS", None)
        with open(tmp_path / "c4-rereg.out", "ab") as log:
            proc = subprocess.Popen(
                [str(KAFKA43_HOME / "bin" / "kafka-server-start.sh"), str(conf)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )

        def fixed():
            code, out, _ = cli(
                "cluster",
                "clear-registration",
                "4",
                *opt,
                "--metadata",
                "4.3-IV0",
                "--node-config",
                str(conf),
                "-o",
                "json",
            )
            p = json.loads(out)
            return p if [s["state"] for s in p["steps"]][2:4] == ["running", "done"] else None

        plan = until("controller 4 registered again with 4.3's range", fixed, 240, every=3)
        assert plan["cleared"] is False and plan["steps"][4]["state"] == "to do"
        assert plan["steps"][4]["evidence"] == "DescribeQuorum: observer 4 still fetches"
        status = cli("describe", "status", *opt, "-o", "json").json()
        assert sorted(v["id"] for v in status["currentVoters"]) == [1, 2, 3]

        # step 5: stop it; then the registration blocks nothing, and the upgrade passes
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(120)

        def cleared():
            code, out, _ = cli(
                "cluster",
                "clear-registration",
                "4",
                *opt,
                "--metadata",
                "4.3-IV0",
                "--node-config",
                str(conf),
                "-o",
                "json",
            )
            return (code, json.loads(out)) if code == 0 else None

        code, plan = until("controller 4 stopped", cleared, 60, every=2)
        assert plan["cleared"] is True and [s["state"] for s in plan["steps"]] == ["done"] * 5
        code, out, err = cli("features", "upgrade", *opt, "--metadata", "4.3-IV0", "--apply", "-o", "json")
        assert code == 0, out + err

        def finalized():
            doc = cli("features", "describe", *opt, "-o", "json").json()
            return next(f["finalizedVersionLevel"] for f in doc["features"] if f["name"] == "metadata.version")

        until("metadata.version 4.3-IV0 (30) finalized", lambda: finalized() == 30, 60)
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        c.discard()
