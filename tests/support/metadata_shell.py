"""Kafka's kafka-metadata-shell `tree /image` as data, and quorumctl's `image -o json`
compared with it field by field: features, topics and their partitions, configs, and
the brokers' and controllers' registrations (parsed from their toString, as the shell
prints them: BrokerRegistration(...), ControllerRegistration(...))."""

from __future__ import annotations

import re

ENDPOINT = re.compile(r"Endpoint\(listenerName='([^']*)', securityProtocol=\w+, host='([^']*)', port=(\d+)\)")
SCALAR = re.compile(r"(\w+)=(\[[^\]]*\]|[^,()]*(?:\([^)]*\))?[^,()]*)")


def tree(text: str) -> dict:
    """The shell's tree: `name:` lines nest by two spaces; a line without the colon is a value."""
    root: dict = {}
    stack = [(-1, root)]
    for line in text.splitlines():
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip(" "))
        while stack[-1][0] >= depth:
            stack.pop()
        if line.endswith(":"):
            node: dict = {}
            stack[-1][1][line.strip()[:-1]] = node
            stack.append((depth, node))
        else:
            stack[-1][1][line.strip()] = None
    return root


def value(node: dict) -> str:
    (v,) = node
    return v


def _range(text: str) -> list[int]:
    # VersionRange.toString: "N" (min = max), "N+" (max = Short.MAX_VALUE) or "MIN-MAX"
    if text.endswith("+"):
        return [int(text[:-1]), 32767]
    lo, _, hi = text.partition("-")
    return [int(lo), int(hi or lo)]


def _list(text: str) -> list[str]:
    inner = text.strip()[1:-1]
    return [x for x in inner.split(", ") if x]


def registration(text: str) -> dict:
    """A BrokerRegistration(...) or ControllerRegistration(...) line in image -o json's shape."""
    listeners = sorted(f"{n}://{h}:{p}" for n, h, p in ENDPOINT.findall(text))
    m = re.search(r"supportedFeatures=\{([^}]*)\}", text)
    assert m, text
    features = {k: _range(v) for k, v in (kv.split(": ") for kv in m.group(1).split(", ") if kv)}
    rest = re.sub(r"listeners=\[.*?\], supportedFeatures=\{[^}]*\}", "", text[text.index("(") + 1 : -1])
    f = {k: v.strip() for k, v in SCALAR.findall(rest)}
    out: dict = {"incarnationId": f["incarnationId"], "listeners": listeners, "supportedFeatures": features}
    if text.startswith("ControllerRegistration("):
        out["zkMigrationReady"] = f["zkMigrationReady"] == "true"
        return out
    assert text.startswith("BrokerRegistration("), text
    rack = f["rack"]
    out.update(
        epoch=int(f["epoch"]),
        rack=None if rack == "Optional.empty" else rack.removeprefix("Optional[").removesuffix("]"),
        fenced=f["fenced"] == "true",
        inControlledShutdown=f["inControlledShutdown"] == "true",
        isMigratingZkBroker=f["isMigratingZkBroker"] == "true",
        directories=sorted(_list(f["directories"])),
    )
    if f["cordonedDirectories"] != "null":  # null until the broker says (KIP-1066), as in image -o json
        out["cordonedDirectories"] = _list(f["cordonedDirectories"])
    return out


def assert_image_equals_shell(img: dict, shell: dict) -> None:
    """`img` (image -o json's "image") holds what the shell's `tree /image` holds, field by field."""
    feats = shell["features"]
    assert value(feats["metadataVersion"]) == f"Optional[{img['metadataVersion']}]"
    assert {k.removeprefix("finalized_"): int(value(v)) for k, v in feats.items() if k.startswith("finalized_")} == {
        k: v for k, v in img["features"].items() if k != "metadata.version"
    }
    # topics: names, ids, partitions and their replicas, ISR, leader, ELR, epochs
    by_name = shell.get("topics", {}).get("byName", {})
    assert sorted(by_name) == sorted(img["topics"])
    for name, t in img["topics"].items():
        assert value(by_name[name]["id"]) == t["id"]
        assert sorted(p for p in by_name[name] if p.isdigit()) == sorted(t["partitions"])
        for p, part in t["partitions"].items():
            reg = value(by_name[name][p])
            for field, key in (
                ("replicas", "replicas"),
                ("isr", "isr"),
                ("elr", "eligibleLeaderReplicas"),
                ("lastKnownElr", "lastKnownElr"),
            ):
                assert f"{field}=[{', '.join(map(str, part[key]))}]" in reg, (name, p, field, reg)
            assert f"leader={part['leader']}," in reg, (name, p, reg)
            assert f"leaderEpoch={part['leaderEpoch']}," in reg, (name, p, reg)
            assert f"partitionEpoch={part['partitionEpoch']})" in reg, (name, p, reg)
    # every config: BROKER (the cluster default), BROKER:N, TOPIC:NAME
    configs: dict = {}
    for key, node in shell.get("configs", {}).items():
        kind, _, name = key.partition(":")
        configs.setdefault(kind.lower(), {})[name] = {k: value(v) for k, v in node.items()}
    assert configs == {k: v for k, v in img["configs"].items() if v}
    # the registrations, every field the shell prints
    cluster = shell.get("cluster", {})
    brokers = {int(b): registration(value(n)) for b, n in cluster.get("brokers", {}).items()}
    ours = {int(b): {**r, "directories": sorted(r["directories"])} for b, r in img["brokers"].items()}
    assert brokers == ours
    controllers = {int(c): registration(value(n)) for c, n in cluster.get("controllers", {}).items()}
    assert controllers == {int(c): r for c, r in img["controllers"].items()}


# -- kafka-metadata-shell run once for many commands ------------------------------------------

BANNER = "[ Kafka Metadata Shell ]\n"
PROMPT = ">> "
_LOG_LINE = re.compile(
    r"^(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR) .*|\w{3} \d\d, \d{4} .*|WARNING: .*)$"
)


def batch(run, snapshot: str, commands: list[str], provenance: str | None = None, tries: int = 4) -> list[str]:
    """What kafka-metadata-shell printed for each command, from one JVM: the commands go to
    its interactive mode on standard input (JLine then uses a dumb terminal, one column, and
    writes to stderr: each output follows a `>> ` prompt). `run(args, stdin)` runs the shell
    script and returns the completed process. The shell loads the file in the background
    and may answer before its last batch is published: with `provenance` (what
    /image/provenance must say at the file's end) the run is repeated until it does."""
    script = "".join(c + "\n" for c in ["cat /image/provenance", *commands])
    for _ in range(tries):
        p = run(["--snapshot", snapshot], script.encode())
        err = "".join(line for line in p.stderr.splitlines(keepends=True) if not _LOG_LINE.match(line.rstrip("\n")))
        assert BANNER in err, p.stderr[-3000:]
        parts = err.split(BANNER, 1)[1].split(PROMPT)
        assert parts[0] == "", parts[0]
        outs = parts[1:]
        assert len(outs) == len(commands) + 2, (len(outs), len(commands), outs[-3:])  # + provenance, the last prompt
        assert outs[-1] == "", outs[-1]
        if provenance is None or outs[0] == provenance + "\n":
            return outs[1:-1]
    raise AssertionError(f"the metadata shell never reached {provenance!r}: {outs[0]!r}")
