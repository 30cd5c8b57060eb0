"""wire.access.ClusterAccess: the connection options of one command line, the client
configuration loaded from there alone."""

import pytest

from quorumctl.errors import InputError
from quorumctl.wire.access import ClusterAccess


def test_the_client_configuration_is_loaded_once_per_run_and_again_when_renewed(tmp_path):
    props = tmp_path / "client.properties"
    props.write_text("client.id=first\nrequest.timeout.ms=1234\n")
    access = ClusterAccess(None, "c1:9093", str(props))
    cfg = access.client_config()
    assert (cfg.client_id, cfg.request_timeout_ms, cfg.source) == ("first", 1234, str(props))
    props.write_text("client.id=second\n")
    assert access.client_config() is cfg  # read once: every step of one command sees the same settings
    assert access.via(None, "c2:9093").client_config() is cfg  # another address, the same configuration
    assert access.renewed().client_config().client_id == "second"  # a loop's next sample reads it again
    assert access.controller_client_config() is None  # the controllers take client_config()


def test_a_bad_file_is_reported_when_the_configuration_is_first_needed(tmp_path):
    access = ClusterAccess("b1:9092", None, str(tmp_path / "missing.properties"))  # building it reads nothing
    with pytest.raises(InputError, match="^command config .*missing.properties does not exist$"):
        access.client_config()
    ctl = tmp_path / "controller.properties"
    ctl.write_text("client.id=controllers\n")
    both = ClusterAccess("b1:9092", None, None, str(ctl))
    assert both.client_config().client_id == "quorumctl"  # no --command-config: the defaults
    assert both.controller_client_config().client_id == "controllers"


def test_connect_takes_exactly_one_kind_of_bootstrap_address():
    with pytest.raises(InputError, match="^--bootstrap-server and --bootstrap-controller cannot be used together$"):
        ClusterAccess("b1:9092", "c1:9093").connect(1.0)
    with pytest.raises(InputError, match="^one of --bootstrap-server or --bootstrap-controller is required$"):
        ClusterAccess(None, "", "ignored.properties").connect(1.0)  # checked before the file is read
    with pytest.raises(InputError, match="--bootstrap-controller"):
        ClusterAccess(None, "no-port").connect(1.0)
    client = ClusterAccess(None, "c1:9093,c2:9093").connect(2.0)
    assert (client.mode, [str(a) for a in client.bootstrap], client.timeout_s) == (
        "controller",
        ["c1:9093", "c2:9093"],
        2.0,
    )
    assert ClusterAccess("b1:9092").connect(None).mode == "server"


def test_the_options_written_back_as_a_command_line():
    assert ClusterAccess("b1:9092", None, "/etc/a b.properties").args() == [
        "--bootstrap-server",
        "b1:9092",
        "--command-config",
        "/etc/a b.properties",
    ]
    assert ClusterAccess("b1:9092", "c1:9093").args() == ["--bootstrap-controller", "c1:9093"]  # controllers first
    assert ClusterAccess(None, None, "x.properties").args() == []  # no address: nothing to run
    assert ClusterAccess(None, None, "x.properties").config_args() == ["--command-config", "x.properties"]
    assert not ClusterAccess(None, "", None).given and ClusterAccess("b1:9092").given
