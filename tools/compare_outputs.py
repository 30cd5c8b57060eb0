"""Record, then check, what quorumctl prints on real data: a guard for changes that
must not change behaviour (moving modules, splitting them).

For every log dir of ../shared/corpus and ../shared/reference/fixtures, and the
140 MB perf log (made from ../shared/perf once, kept in --work), it runs the
installed entry point (`python -m quorumctl`) for dump-log (text with the
metadata decoder, JSON), verify, state (text, JSON), image (text, JSON) and,
for the fixtures' three replicas together, state and doctor; and keeps the
SHA-256 of stdout and stderr and the exit status of each.

    python tools/compare_outputs.py --save before.json    # on the old tree
    python tools/compare_outputs.py --check before.json   # on the new one: exit 1 on any difference

The quorumctl run is the one `python -m quorumctl` imports: with PYTHONPATH set to
another tree, that tree's (.ci/stages/compare runs the base commit's so, in CI).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from perfdata import grown_log  # tools/ is on the path of a script run from it

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def log_dirs(root: Path) -> list[Path]:
    """Every dir holding a __cluster_metadata-0 under root (sorted)."""
    return sorted({p.parent for p in root.rglob("__cluster_metadata-0") if p.is_dir()})


def perf_log(work: Path) -> Path:
    """The 140 MB log of ../shared/perf/README.md, made once."""
    return grown_log(work / "perf")


def cases(work: Path) -> list[tuple[str, list[str]]]:
    out = []
    for d in log_dirs(SHARED / "corpus") + log_dirs(SHARED / "reference" / "fixtures"):
        rel = str(d.relative_to(SHARED))
        pdir = str(d / "__cluster_metadata-0")
        out += [
            (f"dump-log text {rel}", ["dump-log", "--cluster-metadata-decoder", "-o", "text", pdir]),
            (f"dump-log json {rel}", ["dump-log", "-o", "json", pdir]),
            (f"verify {rel}", ["verify", "-o", "text", str(d)]),
            (f"state text {rel}", ["state", "-o", "text", str(d)]),
            (f"state json {rel}", ["state", "-o", "json", str(d)]),
            (f"image text {rel}", ["image", "-o", "text", str(d)]),
            (f"image json {rel}", ["image", "-o", "json", str(d)]),
        ]
    for cluster in ("kafka-3.7.0-static", "kafka-3.9.0-dynamic"):
        reps = [str(SHARED / "reference" / "fixtures" / cluster / "data" / c) for c in ("c1", "c2", "c3")]
        out += [
            (f"state {cluster} c1 c2 c3", ["state", "-o", "text", *reps]),
            (f"doctor {cluster} c1 c2 c3", ["doctor", "-o", "text", *reps]),
        ]
    log = perf_log(work)
    out += [
        ("perf dump-log text", ["dump-log", "--cluster-metadata-decoder", "-o", "text", str(log)]),
        ("perf dump-log json", ["dump-log", "-o", "json", str(log)]),
        ("perf verify", ["verify", "-o", "text", str(log.parent)]),
        ("perf image json", ["image", "-o", "json", str(log.parent)]),
    ]
    return out


AGO = re.compile(rb"\d+(\.\d+)? (ms|s|min|h|d) ago")


def digest(argv: list[str]) -> dict:
    """Exit status and SHA-256 of stdout/stderr, streamed (the perf log's dump is GBs);
    `state`'s "(498.2 d ago)" is relative to now, and is hashed as "AGO"."""
    p = subprocess.Popen(
        [sys.executable, "-m", "quorumctl", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=SHARED
    )
    h = hashlib.sha256()
    size = 0
    relative = argv[0] == "state"
    for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
        h.update(AGO.sub(b"AGO", chunk) if relative else chunk)
        size += len(chunk)
    err = p.stderr.read()
    return {
        "exit": p.wait(),
        "stdout": h.hexdigest(),
        "stdout_bytes": size,
        "stderr": hashlib.sha256(err).hexdigest(),
        "stderr_head": err[:300].decode("utf-8", "replace"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", metavar="FILE")
    g.add_argument("--check", metavar="FILE")
    ap.add_argument("--work", default="/tmp/quorumctl-compare", help="where the perf log is made (kept)")
    ap.add_argument("--jobs", type=int, default=1, help="commands run at once")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    todo = cases(work)
    with ThreadPoolExecutor(max(1, a.jobs)) as pool:
        got = dict(zip([name for name, _ in todo], pool.map(digest, [argv for _, argv in todo])))
    if a.save:
        Path(a.save).write_text(json.dumps(got, indent=1, sort_keys=True))
        print(f"{len(got)} outputs recorded in {a.save}")
        return 0
    want = json.loads(Path(a.check).read_text())
    bad = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    for k in bad:
        print(f"DIFFERS: {k}: before {want.get(k)} after {got.get(k)}")
    print(f"{len(got)} outputs compared: " + (f"{len(bad)} differ" if bad else "all byte-identical"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
