"""Write tests/support/kafka_schemas.json: the facts of Kafka's own message schemas that
quorumctl's declarations must match (tests/unit/test_schemas_vs_kafka.py compares).

Build-time only. Reads Kafka's JSON schema files straight from git directories
of the Kafka source (never copies them): for each schema quorumctl declares, the
file of that name at the given release, reduced to valid/flexible versions and,
per field (nested structs inline, common structs resolved), its type, versions,
nullable and tagged versions, tag and default.

    python tools/kafka_schema_digest.py \\
        --git /work/.mirror/apache+kafka/repo --ref 3.2.0 --ref 3.9.0-rc3 \\
        --git /work/.mirror/confluentinc+kafka/repo --ref trunk=c274a7348f

(`NAME=COMMIT` labels a commit; each --ref reads from the --git before it.)
With --keep, the releases already in the digest stay and the given ones are
added or replaced (a mirror without the old tags can add a new release):

    python tools/kafka_schema_digest.py --keep \\
        --git /work/.mirror/confluentinc+kafka/repo --ref 4.3.0=a9ce3221
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quorumctl.schemas import declared_messages  # noqa: E402

OUT = ROOT / "tests" / "support" / "kafka_schemas.json"


def _git(gitdir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, text=True, check=True).stdout


def _load(text: str) -> dict:
    """Kafka's schema JSON allows // comments (whole lines or after a value)."""
    lines = []
    for line in text.splitlines():
        cut = [m.start() for m in re.finditer("//", line) if line[: m.start()].count('"') % 2 == 0]
        lines.append(line[: cut[0]] if cut else line)
    text = re.sub(r"/\*.*?\*/", "", "\n".join(lines), flags=re.S)
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # a few files have a trailing comma, which Kafka's parser accepts
        return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))


def _fields(fields: list[dict], common: dict[str, list[dict]]) -> list[dict]:
    out = []
    for f in fields:
        d = {"name": f["name"], "type": f["type"], "versions": f.get("versions", "none")}
        for k in ("nullableVersions", "taggedVersions", "tag", "default"):
            if k in f:
                d[k] = f[k]
        elem = f["type"].removeprefix("[]")
        subs = f.get("fields") or common.get(elem)
        if subs is not None:
            d["fields"] = _fields(subs, common)
        out.append(d)
    return out


def digest(schema: dict) -> dict:
    common = {s["name"]: s["fields"] for s in schema.get("commonStructs", [])}
    return {
        "validVersions": schema["validVersions"],
        "flexibleVersions": schema.get("flexibleVersions", "none"),
        **({"apiKey": schema["apiKey"]} if "apiKey" in schema else {}),
        "fields": _fields(schema["fields"], common),
    }


_SCHEMA_FILES = re.compile(r"^(clients|metadata|raft)/src/main/resources/common/(message|metadata)/[A-Za-z]+\.json$")


def release(gitdir: str, commit: str, names: set[str]) -> dict[str, dict]:
    """name -> digest of each schema in `names` that `commit` has (found by the
    "name" inside the file: ZkMigrationStateRecord lives in ZkMigrationRecord.json)."""
    out = {}
    for p in _git(gitdir, "ls-tree", "-r", "--name-only", commit).splitlines():
        if not _SCHEMA_FILES.search(p):
            continue
        schema = _load(_git(gitdir, "show", f"{commit}:{p}"))
        if schema.get("name") in names:
            out[schema["name"]] = digest(schema)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git", action="append", default=[])
    ap.add_argument("--ref", action="append", default=[])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--keep", action="store_true", help="keep the releases already in --out")
    args = ap.parse_args(argv)
    # pair each --ref with the --git given before it on the command line
    pairs, gitdir, it = [], None, iter(sys.argv[1:] if argv is None else argv)
    for a in it:
        if a == "--out":
            next(it)
        elif a == "--git":
            gitdir = next(it)
        elif a == "--ref":
            label, _, commit = next(it).partition("=")
            pairs.append((label, gitdir, commit or label))
    names = {m.name for m in declared_messages()}
    doc = json.loads(Path(args.out).read_text()) if args.keep and Path(args.out).exists() else {}
    doc.update({label: release(g, commit, names) for label, g, commit in pairs})
    Path(args.out).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"{args.out}: {', '.join(f'{k} ({len(v)} schemas)' for k, v in doc.items())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
