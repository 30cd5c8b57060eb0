"""Which core does the hot loops: the compiled one (`quorumctl._core`, Rust, built
from rust/ when the machine had cargo at install time) or the pure-Python path.

The pure path is complete: every command runs without the compiled core, and
`QUORUMCTL_PURE=1` forces it. The choice is made once, at import; `NAME` is what
`quorumctl --version` reports.
"""

from __future__ import annotations

import os
from types import ModuleType


def _load() -> ModuleType | None:
    if os.environ.get("QUORUMCTL_PURE", "") not in ("", "0"):
        return None
    try:
        from . import _core  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _core


core: ModuleType | None = _load()
NAME = "rust" if core is not None else "python"
