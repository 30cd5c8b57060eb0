"""rust/src/generated.rs is what tools/generate_core.py makes from the Python
schema declarations today: the compiled core's record decoders have one source
of truth (like completions/ and man/, a stale committed file fails here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_rust_decoders_match_the_schemas():
    p = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "generate_core.py"), "--check"], capture_output=True, text=True
    )
    assert (p.returncode, p.stderr) == (0, "")


def test_every_metadata_record_version_has_a_rust_decoder_but_doubles():
    from quorumctl.records.metadata_schemas import METADATA_RECORDS

    text = (ROOT / "rust" / "src" / "generated.rs").read_text()
    for key, msg in METADATA_RECORDS.items():
        doubles = any(f.type.endswith("float64") for f in msg.fields)
        for v in msg.versions:
            assert (f"        ({key}, {v}) => m{key}_v{v}(r, out)," in text) != doubles, (msg.name, v)
