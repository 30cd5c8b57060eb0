"""`quorumctl --completions SHELL` and `--man` (quorumctl/cli/share.py): the files of
completions/ and man/, as the standalone executable prints them from inside itself
(tests/standalone/test_standalone.py) and a source checkout from beside the package."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completions_print_the_committed_script(cli, shell):
    r = cli("--completions", shell, code=0)
    assert r.out == (ROOT / "completions" / f"quorumctl.{shell}").read_text(encoding="utf-8")
    assert r.err == ""


def test_man_prints_the_committed_page(cli):
    r = cli("--man", code=0)
    assert r.out == (ROOT / "man" / "quorumctl.1").read_text(encoding="utf-8")


def test_an_unknown_shell_is_one_line(cli):
    r = cli("--completions", "tcsh", code=2)
    assert r.out == ""
    assert r.err == "quorumctl: error: --completions: no script for 'tcsh'; one of bash, zsh, fish\n"


def test_without_the_files_it_says_so(cli, monkeypatch):
    import quorumctl.cli.share as share

    monkeypatch.setattr(share, "share_dir", lambda: None)
    r = cli("--man", code=2)
    assert r.err == (
        "quorumctl: error: this installation has no man/quorumctl.1: "
        "it ships in the source tree and in the standalone executable\n"
    )
