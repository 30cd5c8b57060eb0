"""The example log dirs of the README and docs (`diverged/`, `damaged/`,
`crashed/`), written with quorumctl's own writer (`quorumctl.testing.synth`).

The doc tests build their scratch directory with these functions, and
`quorumctl demo --write-examples DIR` writes the same directories for a user,
so every documented example can be reproduced by hand.
"""

from __future__ import annotations

import os
from pathlib import Path

DIVERGED_DIRS = {1: "YKR3IVjF_lRkfLMlwIWgfQ", 2: "EDn7YIUyVLCobQVLL0aFJg", 3: "3zYbqhx62YNyi6JrylftMg"}
EXAMPLE_DIRS = ("diverged", "damaged", "crashed")


def _quorum_state(leader: int, epoch: int) -> dict:
    return {
        "clusterId": "",
        "leaderId": leader,
        "leaderEpoch": epoch,
        "votedId": -1,
        "appliedOffset": 0,
        "currentVoters": [{"voterId": v} for v in (1, 2, 3)],
        "data_version": 0,
    }


def write_diverged(root: Path) -> None:
    """diverged/c1..c3: epoch 1 (offsets 0-9) and epoch 2 (10-29) everywhere, a
    snapshot at 20; c1 led epoch 4 (30-49), c2 followed it to 45; c3 had led
    epoch 3 and wrote 30-39, which the others never fetched."""
    from .synth import B, Layout, write_replica

    prefix = [B(1, 2)] * 5 + [B(2, 2)] * 10
    logs = {1: prefix + [B(4, 2)] * 10, 2: prefix + [B(4, 2)] * 8, 3: prefix + [B(3, 2, tag="x")] * 5}
    for n, batches in logs.items():
        leader, epoch = (3, 3) if n == 3 else (1, 4)
        write_replica(
            str(Path(root) / "diverged" / f"c{n}"),
            batches,
            node_id=n,
            directory_id=DIVERGED_DIRS[n],
            snapshots=[(20, 2)],
            quorum_state=_quorum_state(leader, epoch),
            layout=Layout(segment_starts=(15,)),
        )


def write_incidents(root: Path) -> None:
    """damaged/c2: node 2's replica of `diverged` with one byte flipped in the
    batch at offset 34 (CRC-32C fails); crashed/c2: the same replica with the
    first 60 bytes of its next batch appended, as a crash mid-write leaves it."""
    from .synth import B, Layout, batch_bytes, write_replica

    batches = [B(1, 2)] * 5 + [B(2, 2)] * 10 + [B(4, 2)] * 8
    for name in ("damaged", "crashed"):
        pdir = Path(
            write_replica(
                str(Path(root) / name / "c2"),
                batches,
                node_id=2,
                directory_id=DIVERGED_DIRS[2],
                snapshots=[(20, 2)],
                quorum_state=_quorum_state(1, 4),
                layout=Layout(segment_starts=(15,)),
            )
        )
        seg = pdir / f"{30:020d}.log"
        data = bytearray(seg.read_bytes())
        if name == "damaged":
            size = len(batch_bytes(30, B(4, 2)))
            data[2 * size + 70] ^= 0x01
        else:
            data += batch_bytes(46, B(4, 2))[:60]
        seg.write_bytes(bytes(data))


def write_examples(root: str) -> list[str]:
    """Write diverged/, damaged/ and crashed/ under `root` (created if needed);
    refuses, writing nothing, when any of them is already there."""
    from ..errors import InputError

    if os.path.exists(root) and not os.path.isdir(root):
        raise InputError(f"{root}: exists and is not a directory")
    taken = [d for d in EXAMPLE_DIRS if os.path.lexists(os.path.join(root, d))]
    if taken:
        raise InputError(f"{os.path.join(root, taken[0])}: already exists; give an empty or new directory")
    os.makedirs(root, exist_ok=True)
    write_diverged(Path(root))
    write_incidents(Path(root))
    return [os.path.join(root, d) for d in EXAMPLE_DIRS]
