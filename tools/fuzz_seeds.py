"""Build the seed corpora of the compiled core's fuzz targets (rust/fuzz) from the
real-data corpus in ../shared/corpus, at run time (the seeds are not committed):
`frame_walk` and `verify_walk` get runs of real batches, `record_decoder` real
record values.

    python tools/fuzz_seeds.py rust/fuzz/seeds [--max 3000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quorumctl.records.batch import Batch, BatchReader  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"


def batch_files() -> list[Path]:
    cat = json.loads((CORPUS / "CATALOG.json").read_text())
    kinds = ("snapshot", "bootstrap.checkpoint", "metadata-log")
    return sorted(CORPUS / f["local"] for repo in cat.values() for f in repo["files"] if f["kind"] in kinds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--max", type=int, default=3000, help="seeds per target at most")
    args = ap.parse_args()
    walks, values = args.out / "frame_walk", args.out / "record_decoder"
    walks.mkdir(parents=True, exist_ok=True)
    values.mkdir(parents=True, exist_ok=True)
    seen: set[bytes] = set()
    n_walk = n_value = 0

    def put(d: Path, data: bytes) -> bool:
        h = hashlib.sha1(data).digest()
        if h in seen:
            return False
        seen.add(h)
        (d / h.hex()).write_bytes(data)
        return True

    for path in batch_files():
        run: list[bytes] = []
        for b in BatchReader(str(path)):
            if not isinstance(b, Batch) or b.size > 64 << 10:
                continue
            run.append(bytes(b.data))
            if len(run) == 3 and n_walk < args.max:
                n_walk += put(walks, b"".join(run))
                run = []
            if n_value < args.max:
                try:
                    records = b.records()
                except Exception:
                    continue
                for r in records[:4]:
                    if r.value is not None:
                        n_value += put(values, bytes(r.value))
        if run and n_walk < args.max:
            n_walk += put(walks, b"".join(run))
    shutil.copytree(walks, args.out / "verify_walk", dirs_exist_ok=True)  # the same files, walked by verify
    print(f"{n_walk} frame_walk and verify_walk seeds, {n_value} record_decoder seeds in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
