"""`bootstrap format --apply` interrupted at every step (an injected failure, and a
killed process) leaves each directory unformatted or completely formatted."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from quorumctl.ops import fsutil
from logfiles import tree

CID = "rTcAzcTXQpG_6c1zYns8Xw"
VOTERS = "1@localhost:19191:DfqkWOlJTZ-abG8pUGocIA,2@localhost:19192:4BuDMaJKttH3vcqDCog2og"
NEW_FILES = {
    "meta.properties",
    "bootstrap.checkpoint",
    os.path.join("__cluster_metadata-0", "00000000000000000000-0000000000.checkpoint"),
}


def prepare(root, kind):
    d = root / "d"
    if kind == "with-lock-only":
        d.mkdir(parents=True)
        (d / ".lock").write_bytes(b"")
    elif kind == "with-other-files":  # e.g. a mount point's lost+found: formatted in place
        (d / "lost+found").mkdir(parents=True)
        (d / "notes.txt").write_text("keep me")
    return d


def args(d):
    return [
        "bootstrap",
        "format",
        "--node-id",
        "1",
        "--log-dir",
        str(d),
        "-t",
        CID,
        "--initial-controllers",
        VOTERS,
        "--apply",
    ]


def classify(verify_clean, d, before):
    """'old' or 'new'; anything else fails the test."""
    if not os.path.exists(d):
        assert before is None
        return "old"
    now = tree(d)
    if "meta.properties" not in now:
        # Kafka and quorumctl treat a directory without meta.properties as unformatted;
        # the files that were there are untouched, and any new file is complete (a
        # leftover .tmp/.part is what Kafka itself leaves and ignores)
        assert {k: v for k, v in now.items() if k in before} == before
        extra = {k for k in set(now) - set(before) if not k.endswith((".tmp", ".part"))}
        assert extra <= NEW_FILES - {"meta.properties"}
        if set(now) != set(before):
            verify_clean(d, temporaries_ok=True)
        return "old"
    assert set(now) == set(before or {}) | NEW_FILES
    verify_clean(d)
    return "new"


def steps_of(cli, tmp_path, kind):
    d = prepare(tmp_path / "probe", kind)
    fsutil.set_fault_hook(lambda n, name: None)
    try:
        code, out, err = cli(*args(d))
        steps = fsutil.steps_taken()
    finally:
        fsutil.set_fault_hook(None)
    assert code == 0, err
    return steps


@pytest.mark.parametrize("kind", ["absent", "with-lock-only", "with-other-files"])
def test_format_interrupted_at_every_step(verify_clean, cli, tmp_path, kind):
    steps = steps_of(cli, tmp_path, kind)
    assert len(steps) >= 2
    seen = []
    for k in range(1, len(steps) + 1):
        for how in ("inject", "kill"):
            root = tmp_path / f"{how}{k}"
            d = prepare(root, kind)
            before = tree(d) if os.path.exists(d) else None
            if how == "inject":

                def hook(n, name, k=k):
                    if n == k:
                        raise OSError(28, f"injected failure at step {k}: {name}")

                fsutil.set_fault_hook(hook)
                try:
                    code, out, err = cli(*args(d))
                finally:
                    fsutil.set_fault_hook(None)
                assert code != 0 and "injected failure" in err
            else:
                env = dict(os.environ, **{fsutil.CRASH_ENV: str(k)})
                p = subprocess.run([sys.executable, "-m", "quorumctl", *args(d)], env=env, capture_output=True)
                assert p.returncode == fsutil.CRASH_EXIT
            state = classify(verify_clean, d, before)
            seen.append(state)
            # a rerun completes the format from either state
            code, out, err = cli(*args(d))
            assert code == 0, err
            assert classify(verify_clean, d, before) == "new"
    assert "old" in seen
    if kind != "with-other-files":
        # the only visible change is one atomic rename or exchange
        assert seen.count("old") == len(seen)
