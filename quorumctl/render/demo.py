"""`demo --write-examples`' answer: the log dirs written (text and JSON)."""

from __future__ import annotations


def examples_text(written: list[str], root: str) -> str:
    return (
        "".join(f"Wrote {d}\n" for d in written) + f"Run the README's state, truncate and verify examples in {root}.\n"
    )


def examples_doc(written: list[str]) -> dict:
    return {"written": written}
