"""Where dump-log's time goes per record, and so where its floor is.

    python bench/dumplog_floor.py [--log FILE] [--bytes N]

Runs dump-log's hot path (render/dumplog.fast_metadata_lines) over the data batches
of the first N bytes of a real metadata log (default: the 140 MB perf log that
bench_vs_kafka.py builds), held in memory, in one process, and again with parts of
its per-record work taken out, so the differences are the parts' costs:

  full        the path as it is: frame walk, value decoded to Kafka's JSON text, line
  no-decode   the value's text replaced by a constant: frame walk and line
  loop-only   no line either: the frame walk and the loop over its spans
  walk        records.batch.plain_value_spans alone (the frame walk)

The variants are made from the function's own source (a replaced expression must
be found, or the script stops), so they follow the code as it changes. CPU time,
best of --repeat. Multiply by the records of the whole log and divide by the
cores for the wall-time floor of this design.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quorumctl.records.batch import HEADER_SIZE, BatchReader, plain_value_spans
from quorumctl.render import dumplog as rd

DEFAULT_LOG = (
    Path(tempfile.gettempdir()) / "quorumctl-bench" / "real" / "__cluster_metadata-0" / "00000000000000000000.log"
)

DECODE = "body, p = hit[1](data, pos + 3, vend)"
TEXT_LINE = 'app(f"| offset: {base_off + i} {ts_name}'  # the first text line's call, to its closing ")


def variant(src: str, *replacements: tuple[str, str]):
    """fast_metadata_lines with the first occurrence of each `old` replaced (a call
    from `old` to its closing '")' for TEXT_LINE)."""
    for old, new in replacements:
        start = src.find(old)
        if start < 0:
            raise SystemExit(f"dumplog_floor: {old!r} is not in fast_metadata_lines: update this script")
        stop = src.index('")', start) + 2 if old == TEXT_LINE else start + len(old)
        src = src[:start] + new + src[stop:]
    ns = dict(vars(rd))
    exec(compile(src, "<fast_metadata_lines variant>", "exec"), ns)
    return ns["fast_metadata_lines"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log", type=Path, default=DEFAULT_LOG)
    ap.add_argument("--bytes", type=int, default=20_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not args.log.is_file():
        raise SystemExit(f"dumplog_floor: {args.log} is absent (bench/bench_vs_kafka.py --only real builds it)")
    batches = []
    for b in BatchReader(str(args.log), end=args.bytes):
        b.data = bytes(b.data)  # held: the reader's buffer moves on
        if rd.fast_metadata_lines(b, False) is not None:  # control batches take the general path
            batches.append(b)
    records = sum(b.record_count for b in batches)
    src = textwrap.dedent(inspect.getsource(rd.fast_metadata_lines))
    variants = {
        "full": variant(src),
        "no-decode": variant(src, (DECODE, "body, p = '', vend")),
        "loop-only": variant(src, (DECODE, "body, p = '', vend"), (TEXT_LINE, "app(body)")),
        "walk": lambda b, _json: plain_value_spans(bytes(b.data[HEADER_SIZE:]), 0, b.record_count),
    }
    print(
        f"{len(batches)} batches, {records} records of {args.log} (first {args.bytes} bytes); "
        f"load {os.getloadavg()[0]:.1f}"
    )
    per = {}
    for name, fn in variants.items():
        best = float("inf")
        for _ in range(args.repeat):
            t = time.process_time()
            for b in batches:
                if fn(b, False) is None:
                    raise SystemExit(f"dumplog_floor: batch at {b.base_offset} left the fast path")
            best = min(best, time.process_time() - t)
        per[name] = best / records * 1e6
        print(f"| {name} | {best:.3f} s | {per[name]:.2f} µs/record |")
    print(f"| value decode (full - no-decode) | | {per['full'] - per['no-decode']:.2f} µs/record |")
    print(f"| line formatting (no-decode - loop-only) | | {per['no-decode'] - per['loop-only']:.2f} µs/record |")


if __name__ == "__main__":
    main()
