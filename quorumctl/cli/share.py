"""`quorumctl --completions SHELL` and `quorumctl --man`: the shell completion
scripts and the man page, printed, for an operator who has only the executable
(the standalone build carries completions/ and man/ inside it; a source
checkout has them beside the package; a wheel install has neither)."""

import sys
from pathlib import Path

from ..errors import InputError

SHELLS = ("bash", "zsh", "fish")


def share_dir() -> Path | None:
    """Where completions/ and man/ are: inside the standalone executable, or in
    the checkout this package runs from; None when neither has them."""
    bundled = getattr(sys, "_MEIPASS", None)
    if bundled is not None:
        return Path(bundled) / "share"
    checkout = Path(__file__).resolve().parents[2]
    return checkout if (checkout / "man" / "quorumctl.1").is_file() else None


def _read(relative: str) -> str:
    base = share_dir()
    if base is None or not (base / relative).is_file():
        raise InputError(
            f"this installation has no {relative}: it ships in the source tree and in the standalone executable"
        )
    return (base / relative).read_text(encoding="utf-8")


def completions(shell: str) -> str:
    if shell not in SHELLS:
        raise InputError(f"--completions: no script for {shell!r}; one of {', '.join(SHELLS)}")
    return _read(f"completions/quorumctl.{shell}")


def man_page() -> str:
    return _read("man/quorumctl.1")
