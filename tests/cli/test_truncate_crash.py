"""A truncation interrupted at every step (an injected failure, and a killed
process) leaves the partition directory wholly old or wholly new, and
`verify` clean either way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from quorumctl.ops import fsutil
from quorumctl.testing.synth import B, Layout, write_replica
from logfiles import tree


def scenario(root):
    common = [B(1, 3), B(1, 3), B(2, 3)]
    write_replica(str(root / "l"), common + [B(4, 3)] * 6, node_id=1, layout=Layout(segment_starts=(4,)))
    write_replica(
        str(root / "f"),
        common + [B(3, 3, tag="x")] * 6,
        node_id=2,
        layout=Layout(segment_starts=(4,), producer_snapshots=(9, 18), index_interval=100),
        snapshots=[(3, 1), (12, 3)],
    )


ARGS = ["--reference", "{l}", "--apply", "--force"]


def args_for(root):
    return ["truncate", str(root / "f")] + [a.format(l=root / "l") for a in ARGS]


@pytest.fixture(scope="module")
def states(cli, tmp_path_factory):
    """The old and the new partition directory, and the steps of a clean run."""
    root = tmp_path_factory.mktemp("pristine")
    scenario(root)
    old = tree(root / "f" / "__cluster_metadata-0")
    work = tmp_path_factory.mktemp("clean")
    shutil.copytree(root, work, dirs_exist_ok=True)
    fsutil.set_fault_hook(lambda n, name: None)
    try:
        code, out, err = cli(*args_for(work))
        steps = fsutil.steps_taken()
    finally:
        fsutil.set_fault_hook(None)
    assert code == 0, err
    new = tree(work / "f" / "__cluster_metadata-0")
    assert old != new and len(steps) >= 6
    return root, old, new, steps


def check_old_or_new(verify_clean, root, old, new):
    now = tree(root / "f" / "__cluster_metadata-0")
    assert now in (old, new)
    # nothing stray in the log dir itself (a broker would take a directory for a partition)
    assert sorted(os.listdir(root / "f")) == [".lock", "__cluster_metadata-0", "meta.properties"]
    verify_clean(root / "f")
    return "old" if now == old else "new"


def test_injected_failure_at_every_step(verify_clean, cli, states, tmp_path):
    root, old, new, steps = states
    seen = []
    for k in range(1, len(steps) + 1):
        work = tmp_path / f"s{k}"
        shutil.copytree(root, work)

        def hook(n, name, k=k):
            if n == k:
                raise OSError(5, f"injected failure at step {k}: {name}")

        fsutil.set_fault_hook(hook)
        try:
            code, out, err = cli(*args_for(work))
        finally:
            fsutil.set_fault_hook(None)
        assert code != 0 and "injected failure" in err
        seen.append(check_old_or_new(verify_clean, work, old, new))
    # the swap is the one step that moves the directory from old to new
    assert seen[0] == "old" and "new" in seen
    assert seen == sorted(seen, key=["old", "new"].index)


def test_killed_at_every_step(verify_clean, states, tmp_path):
    root, old, new, steps = states
    seen = []
    for k in range(1, len(steps) + 1):
        work = tmp_path / f"k{k}"
        shutil.copytree(root, work)
        env = dict(os.environ, **{fsutil.CRASH_ENV: str(k)})
        p = subprocess.run(
            [sys.executable, "-m", "quorumctl", *args_for(work)], env=env, capture_output=True, text=True
        )
        assert p.returncode == fsutil.CRASH_EXIT, p.stderr
        seen.append(check_old_or_new(verify_clean, work, old, new))
    assert seen[0] == "old" and seen[-1] == "new"


def test_an_unfinished_run_is_reported(cli, states, tmp_path):
    root, old, new, steps = states
    work = tmp_path / "w"
    shutil.copytree(root, work)
    env = dict(os.environ, **{fsutil.CRASH_ENV: "3"})
    p = subprocess.run([sys.executable, "-m", "quorumctl", *args_for(work)], env=env, capture_output=True)
    assert p.returncode == fsutil.CRASH_EXIT
    code, out, err = cli("truncate", "-o", "text", work / "f", "--to-offset", "15")
    assert code == 0 and "note: an earlier truncation did not finish: " in out
    assert str(work / "f.quorumctl-backup") in out
