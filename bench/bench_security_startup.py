"""Does reading Kerberos, OAuth and JKS settings cost a plain connection
anything? `quorumctl describe status` with no security settings (and with a
PLAINTEXT --command-config, which goes through the config reader), run by
this tree and by an older tree (default: the merge base with main, the tree
before this work), alternated run by run in one process so both see the same
machine. Prints the medians and their ratio; fails (exit 1) when this tree
is more than 5 % slower.

Both trees run the same way (`python -c` putting the tree first on sys.path,
then the CLI's main), against the simulated quorum on 127.0.0.1.

Usage: python bench/bench_security_startup.py [RUNS] [BASE-COMMIT]   (default 21, merge-base HEAD main)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_describe import measure

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 1.05


def export_tree(commit: str, dest: Path) -> Path:
    """The `quorumctl` package of `commit`, unpacked into `dest` (git archive: read-only)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "quorumctl"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def runner(tree: Path) -> list[str]:
    code = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); sys.argv[0] = 'quorumctl'; "
        "from quorumctl.cli.main import main; main()"
    )
    return [sys.executable, "-c", code]


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    base = (
        sys.argv[2]
        if len(sys.argv) > 2
        else subprocess.run(
            ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    sys.path.insert(0, str(ROOT))
    from quorumctl.testing.scenarios import demo_cluster

    with tempfile.TemporaryDirectory(prefix="quorumctl-bench-") as tmp:
        old = export_tree(base, Path(tmp))
        plain = Path(tmp) / "plaintext.properties"
        plain.write_text("security.protocol=PLAINTEXT\nclient.id=bench\n")
        cluster = demo_cluster()
        try:
            target = cluster.brokers()[0].address
            cases = {
                "no --command-config": ["describe", "status", "--bootstrap-server", target],
                "PLAINTEXT --command-config": [
                    "describe",
                    "status",
                    "--bootstrap-server",
                    target,
                    "--command-config",
                    str(plain),
                ],
            }
            results = {}
            for name, args in cases.items():
                new_w, old_w = [], []
                for _ in range(runs):  # alternate, so load on the machine hits both alike
                    new_w += measure(runner(ROOT) + args, 1, warmup=0)[0]
                    old_w += measure(runner(old) + args, 1, warmup=0)[0]
                results[name] = (statistics.median(new_w), statistics.median(old_w))
        finally:
            cluster.stop()

    print(f"{runs} alternated runs each, against the simulated quorum; base {base[:10]}\n")
    print(f"{'describe status':30} {'this tree s':>12} {'base s':>8} {'ratio':>7}")
    worst = 0.0
    for name, (new, old) in results.items():
        ratio = new / old
        worst = max(worst, ratio)
        print(f"{name:30} {new:12.4f} {old:8.4f} {ratio:7.3f}")
    ok = worst <= TOLERANCE
    print(f"\nnot slower (ratio <= {TOLERANCE}): {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
