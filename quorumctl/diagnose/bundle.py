"""`bundle`: one archive for support (Redpanda's `rpk debug bundle`; Kafka has
none): doctor, state, verify and describe outputs (json and text), the
configs with every secret redacted, listings of the log dirs with sizes and
checksums, optionally the metadata logs, and a manifest.

The outputs are the commands' own: the caller passes a runner (the CLI runs
each command in process through its entry point), stdout and exit code kept, so the bundle shows exactly what an
operator would have seen. Live calls get --timeout; a part that fails is
recorded in the manifest and the bundle is still written.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import tarfile
import time
from typing import TYPE_CHECKING

from ..errors import InputError
from ..config import properties
from ..config.server import load

if TYPE_CHECKING:
    from ..wire.access import ClusterAccess

REDACTED = "[redacted]"
# key fragments whose values are secrets (passwords, keys, JAAS, SASL and SSL settings, tokens)
SECRET = re.compile(r"password|secret|jaas|sasl\.|ssl\.|\.key$|(^|\.)key\.|token|credential|private", re.I)
CHECKSUM_LIMIT = 256 << 20  # larger files are listed with their size only


def redact_properties(raw: bytes) -> tuple[bytes, list[str]]:
    """The properties re-written key=value (comments dropped: they may hold secrets),
    secret values replaced. Returns the text and the redacted keys."""
    props = properties.loads(raw)
    out, hidden = [], []
    for k in sorted(props):
        v = props[k]
        if SECRET.search(k):
            v = REDACTED
            hidden.append(k)
        out.append(f"{_escape(k)}={_escape(v)}")
    return ("\n".join(out) + "\n").encode("utf-8"), hidden


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def listing(path: str) -> str:
    """Every file under `path`: size, sha256 (files up to CHECKSUM_LIMIT), relative name."""
    lines = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            try:
                st = os.lstat(p)
                if not os.path.isfile(p) or os.path.islink(p):
                    digest = "-" * 64
                elif st.st_size > CHECKSUM_LIMIT:
                    digest = "(not summed: larger than %d bytes)" % CHECKSUM_LIMIT
                else:
                    h = hashlib.sha256()
                    with open(p, "rb") as fh:
                        for chunk in iter(lambda: fh.read(1 << 20), b""):
                            h.update(chunk)
                    digest = h.hexdigest()
                lines.append(f"{st.st_size:>12} {digest} {os.path.relpath(p, path)}")
            except OSError as e:
                lines.append(f"{'?':>12} {'?' * 64} {os.path.relpath(p, path)} ({e.strerror})")
    return "\n".join(lines) + "\n"


class Bundle:
    def __init__(self, run) -> None:
        self.run = run  # args -> (exit code, stdout, stderr): a quorumctl command
        self.members: list[tuple[str, bytes, str]] = []  # name, bytes, what
        self.errors: list[str] = []

    def add(self, name: str, data: bytes | str, what: str) -> None:
        self.members.append((name, data.encode("utf-8") if isinstance(data, str) else data, what))

    def command(self, name: str, args: list[str], what: str) -> None:
        for fmt in ("text", "json"):
            code, out, err = self.run([*args, "-o", fmt])
            self.add(
                f"{name}.{'txt' if fmt == 'text' else 'json'}",
                out + (f"\n[stderr]\n{err}" if err else "") + f"\n[exit {code}]\n",
                f"{what} (-o {fmt})",
            )
            if code == 2 or (code == 3 and fmt == "text"):
                self.errors.append(f"{name}: exit {code}: {err.strip()}")


def build(
    out_path: str,
    configs: list[str],
    log_dirs: list[str],
    access: ClusterAccess,
    include_logs: bool,
    timeout: float,
    run,
) -> dict:
    """`run(args) -> (exit code, stdout, stderr)` runs one quorumctl command (the
    CLI passes its own entry point, so the outputs are the commands' own). The
    live commands connect through `access`'s options (the command config's path
    is recorded, never its content: it holds the client's secrets)."""
    if os.path.lexists(out_path):
        raise InputError(f"{out_path} exists; choose a new name (a bundle is never overwritten)")
    parent = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(parent):
        raise InputError(f"{parent}: no such directory")
    for d in log_dirs:
        if not os.path.exists(d):
            raise InputError(f"{d}: no such file or directory")
        if not os.path.isdir(d):
            raise InputError(f"{d}: not a directory (expected a log dir)")
    cfgs = [load(c) for c in configs]
    b = Bundle(run)
    for i, c in enumerate(cfgs, 1):
        with open(c.path, "rb") as f:
            text, hidden = redact_properties(f.read(1 << 22))
        b.add(
            f"configs/{i:02d}-node{c.node_id}-{os.path.basename(c.path)}",
            text,
            f"{c.path}, secrets redacted ({', '.join(hidden) or 'none found'})",
        )
    dirs: list[str] = []
    for d in [x for c in cfgs for x in c.all_dirs()] + list(log_dirs):
        if os.path.isdir(d) and os.path.abspath(d) not in [os.path.abspath(x) for x in dirs]:
            dirs.append(d)
        elif not os.path.isdir(d):
            b.errors.append(f"{d}: not a directory (skipped)")
    conf_args = [a for c in configs for a in ("-c", c)]
    b.command("doctor", ["doctor", *conf_args, *log_dirs], "quorumctl doctor")
    meta_dirs = [d for d in dirs if os.path.isdir(os.path.join(d, "__cluster_metadata-0"))]
    if meta_dirs:
        b.command("state", ["state", *meta_dirs], "quorumctl state of every metadata log")
        b.command("verify", ["verify", *meta_dirs], "quorumctl verify of every metadata log")
    for i, d in enumerate(dirs, 1):
        b.add(
            f"listings/{i:02d}-{os.path.basename(os.path.normpath(d))}.txt",
            f"# {d}\n" + listing(d),
            f"files of {d}: size, sha256, name",
        )
    via = access.args()
    if via:
        for what in ("status", "replication"):
            b.command(
                f"describe-{what}", ["describe", what, *via, "--timeout", str(timeout)], f"quorumctl describe {what}"
            )
        # health answers without a leader too; the feature levels say what an upgrade needs
        b.command(
            "describe-health", ["describe", "health", *via, "--timeout", str(timeout)], "quorumctl describe health"
        )
        b.command(
            "features-describe",
            ["features", "describe", *via, "--timeout", str(timeout)],
            "quorumctl features describe",
        )
    if include_logs:
        for i, d in enumerate(meta_dirs, 1):
            pdir = os.path.join(d, "__cluster_metadata-0")
            for name in sorted(os.listdir(pdir)):
                p = os.path.join(pdir, name)
                if os.path.isfile(p) and not os.path.islink(p):
                    with open(p, "rb") as fh:
                        b.add(
                            f"logs/{i:02d}-{os.path.basename(os.path.normpath(d))}/__cluster_metadata-0/{name}",
                            fh.read(),
                            f"{p}",
                        )
    manifest = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tool": "quorumctl bundle",
        "inputs": {
            "configs": configs,
            "log_dirs": log_dirs,
            "bootstrap_controller": access.controllers,
            "bootstrap_server": access.servers,
            "include_logs": include_logs,
            "command_config": access.command_config,
        },
        "parts": [
            {"name": n, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "what": w}
            for n, data, w in b.members
        ],
        "errors": b.errors,
    }
    b.add("manifest.json", json.dumps(manifest, indent=1) + "\n", "this list")
    tmp = f"{out_path}.tmp-{os.getpid()}"
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            now = time.time()
            for name, data, _w in b.members:
                info = tarfile.TarInfo(f"quorumctl-bundle/{name}")
                info.size, info.mtime, info.mode = len(data), now, 0o644
                tar.addfile(info, io.BytesIO(data))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.rename(tmp, out_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return {
        "out": out_path,
        "parts": len(b.members),
        "bytes": os.path.getsize(out_path),
        "errors": b.errors,
        "manifest": manifest,
    }
