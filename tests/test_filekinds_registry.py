"""The file-kind registry (logdir/filekinds.py): every kind dump-log and verify read
has a handler for each of them, and a kind added without one is named."""

from __future__ import annotations

import pytest

from quorumctl import dumplog  # noqa: F401  (registers dump-log's handlers)
from quorumctl.logdir import filekinds
from quorumctl.ops import verify  # noqa: F401  (registers verify's handlers)


def test_every_kind_has_every_handler():
    assert filekinds.missing_handlers() == []
    for kind in filekinds.ORDER:
        for role in filekinds.ROLES:
            assert callable(filekinds.handler(role, kind))


def test_a_kind_without_its_handlers_is_named(monkeypatch):
    monkeypatch.setattr(filekinds, "ORDER", [*filekinds.ORDER, "new-kind"])
    assert filekinds.missing_handlers() == [("dump", "new-kind"), ("verify", "new-kind")]
    with pytest.raises(LookupError, match="no dump handler for files of kind 'new-kind'"):
        filekinds.handler("dump", "new-kind")
    filekinds.handles("dump", "new-kind")(lambda path, kind, job: None)
    try:
        assert filekinds.missing_handlers() == [("verify", "new-kind")]
    finally:
        del filekinds._HANDLERS["dump", "new-kind"]


def test_registration_is_checked():
    with pytest.raises(ValueError, match="no role"):
        filekinds.handles("print", filekinds.LOG)
    with pytest.raises(ValueError, match="not a kind of ORDER"):
        filekinds.handles("dump", "no-such-kind")(lambda *a: None)
    with pytest.raises(ValueError, match="already"):
        filekinds.handles("dump", filekinds.LOG)(lambda *a: None)
