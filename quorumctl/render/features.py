"""`features describe`: Kafka's kafka-features describe text, byte for byte,
and JSON.

Kafka's tool printed one TAB-separated line per feature up to 4.2; 4.3 pads
the columns instead (KAFKA-19941), whatever release the node runs. The text is
4.3's, the newest tool's; `--kafka-version 4.1` gives 4.1's. Levels print as Kafka's levelToString: metadata.version by name
("UNKNOWN N" for a level the catalogue does not name), others as numbers; a
feature not finalized prints 0, an absent epoch "-".
"""

from __future__ import annotations

from ..versions import MAX_LEVEL_OF, METADATA_VERSION, NAME_OF

# the last metadata.version Kafka 4.1.0's MetadataVersion names (4.2-IV1): its tool
# prints a newer level, such as a 4.3 node's, as "UNKNOWN N"
KAFKA41_LAST_LEVEL = MAX_LEVEL_OF["4.1"]


def level_text(feature: str, level: int, kafka: str = "4.3") -> str:
    """Each release's tool names the levels its MetadataVersion has (4.1: up to 29, 4.3: 31,
    the 4.4 branch: 33); a newer node's level prints as "UNKNOWN N"."""
    if feature == METADATA_VERSION:
        known = NAME_OF.get(level) if level <= MAX_LEVEL_OF[kafka] else None
        return known or f"UNKNOWN {level}"
    return str(level)


def features_text(f, kafka: str = "4.3") -> str:
    epoch = "-" if f.epoch is None else str(f.epoch)
    pad = kafka != "4.1"
    out = []
    for name in sorted(f.supported):
        lo, hi = f.supported[name]
        cells = (
            name,
            level_text(name, lo, kafka),
            level_text(name, hi, kafka),
            level_text(name, f.finalized.get(name, 0), kafka),
        )
        if pad:
            out.append(
                f"Feature: {cells[0]:<40}  SupportedMinVersion: {cells[1]:<15}  "
                f"SupportedMaxVersion: {cells[2]:<15}  FinalizedVersionLevel: {cells[3]:<15}  Epoch: {epoch}\n"
            )
        else:
            out.append(
                f"Feature: {cells[0]}\tSupportedMinVersion: {cells[1]}\tSupportedMaxVersion: {cells[2]}\t"
                f"FinalizedVersionLevel: {cells[3]}\tEpoch: {epoch}\n"
            )
    return "".join(out)


def features_doc(f) -> dict:
    return {
        "features": [
            {
                "name": n,
                "supportedMinVersion": f.supported[n][0],
                "supportedMaxVersion": f.supported[n][1],
                "finalizedVersionLevel": f.finalized.get(n, 0),
                "finalizedVersionName": level_text(n, f.finalized.get(n, 0), "4.4") if n == METADATA_VERSION else None,
            }
            for n in sorted(f.supported)
        ],
        "finalizedFeaturesEpoch": f.epoch,
        "source": f.source,
    }
