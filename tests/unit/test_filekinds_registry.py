"""The file-kind registry (logdir/filekinds.py): every kind dump-log and verify read
has a handler for each of them, and a kind added without one is named."""

from __future__ import annotations

import pytest

from quorumctl.dump import log  # noqa: F401  (registers dump-log's handlers)
from quorumctl.logdir import filekinds
from quorumctl.ops import verify  # noqa: F401  (registers verify's handlers)


def test_every_kind_has_every_handler():
    assert filekinds.missing_handlers() == [] and filekinds.missing_parts() == []
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


def test_a_kind_without_all_its_parts_is_named(monkeypatch):
    """A kind is four parts: a name kind_of() knows, a place in ORDER, a dump handler
    and a verify handler (each reading the file with its reader); each one left out is named."""
    monkeypatch.setattr(filekinds, "ORDER", [*filekinds.ORDER, "new-kind"])
    assert filekinds.missing_parts() == [("name", "new-kind"), ("dump", "new-kind"), ("verify", "new-kind")]
    monkeypatch.setitem(filekinds._BY_SUFFIX, "newsuffix", "new-kind")
    assert filekinds.kind_of("00000000000000000000.newsuffix") == "new-kind"
    assert filekinds.missing_parts() == [("dump", "new-kind"), ("verify", "new-kind")]
    monkeypatch.setitem(filekinds._HANDLERS, ("dump", "new-kind"), lambda path, kind, job: None)
    monkeypatch.setitem(filekinds._HANDLERS, ("verify", "new-kind"), lambda path: None)
    assert filekinds.missing_parts() == []
    # named, with its handlers, but not in ORDER: dump-log and verify would never read it
    monkeypatch.setattr(filekinds, "ORDER", [k for k in filekinds.ORDER if k != "new-kind"])
    assert filekinds.missing_parts() == [("order", "new-kind")]
