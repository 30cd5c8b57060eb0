"""kafka-storage's texts: version-mapping, feature-dependencies and info, as
Kafka 4.3 prints them."""

from __future__ import annotations

from ..logdir import statefiles as state_files
from ..versions import METADATA_VERSION, NAME_OF


def version_mapping_text(doc: dict) -> str:
    lines = [f"{METADATA_VERSION}={doc[METADATA_VERSION]} ({doc['release']})"]
    lines += [f"{name}={lvl}" for name, lvl in doc["features"].items()]
    return "\n".join(lines) + "\n"


def feature_dependencies_text(deps: list[dict]) -> str:
    lines = []
    for d in deps:
        label = f"{d['feature']}={d['level']}" + (f" ({d['version']})" if "version" in d else "")
        if not d["requires"]:
            lines.append(f"{label} has no dependencies.")
            continue
        lines.append(f"{label} requires:")
        for dep, lvl in d["requires"].items():
            lines.append(f"    {dep}={lvl}" + (f" ({NAME_OF[lvl]})" if dep == METADATA_VERSION else ""))
    return "\n".join(lines) + "\n"


def info_text(doc: dict, dirs_given: int) -> str:
    """StorageTool.infoCommand's output, line for line."""
    if dirs_given == 0:
        return "No directories specified.\n"
    out = []
    if doc["found"]:
        out.append("Found log directory:" if len(doc["found"]) == 1 else "Found log directories:")
        out.extend(f"  {d}" for d in doc["found"])
        out.append("")
    if doc["metadata"] is not None:
        out.append(f"Found metadata: {state_files.kafka_metadata_string(doc['metadata'])}")
        out.append("")
    if doc["problems"]:
        out.append("Found problem:" if len(doc["problems"]) == 1 else "Found problems:")
        out.extend(f"  {p}" for p in doc["problems"])
        out.append("")
    return "\n".join(out) + ("\n" if out else "")
