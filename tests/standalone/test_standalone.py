"""The standalone executables (tools/build_standalone.py, docs/standalone.md) where
operators run them: a root file system with no Python, read-only, /tmp mounted
noexec, no HOME, no locale, as a uid with no passwd entry (as OpenShift runs pods).

.ci/stages/standalone builds both executables from the checkout and hands them over
in QUORUMCTL_STANDALONE_DIR, with two root file systems: QUORUMCTL_STANDALONE_ROOTFS,
Debian 12 minbase from debootstrap (glibc, no Python), and QUORUMCTL_MUSL_ROOTFS, only
Debian's musl package unpacked (the musl loader and libc, nothing else: no glibc).
Each run is entered with bubblewrap under setpriv as uid 123456, in the host's
network namespace (the live commands reach the real cluster on 127.0.0.1).

A real Kafka 4.3 cluster (1 controller, 1 broker, topics created through it):
- live: `describe status` equals 4.3's kafka-metadata-quorum --status, `describe
  health` gives the pip-installed CLI's verdict;
- once stopped, on its log dirs: dump-log, verify, state, image and doctor print what
  the pip-installed CLI prints, byte for byte and with its exit code, and `truncate
  --apply` on a copy of the broker's metadata log leaves the same files as the
  pip-installed CLI on another copy.
The glibc executable in the musl root file system fails to start (no ELF interpreter):
the musl runs prove something.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kafka41 import KAFKA43_HOME, kafka_tool, mask_status, start_cluster

pytestmark = [pytest.mark.standalone, pytest.mark.root]

UID = 123456  # no passwd entry in either root file system, as a uid OpenShift assigns
PIP_CLI = str(Path(sys.executable).parent / "quorumctl")
# (root file system, executable): the glibc build on Debian, the static build on Debian and on musl
VARIANTS = [("debian", "quorumctl"), ("debian", "quorumctl-static"), ("musl", "quorumctl-static")]
IDS = [f"{exe}-on-{fs}" for fs, exe in VARIANTS]


def exe_dir() -> Path:
    return Path(os.environ["QUORUMCTL_STANDALONE_DIR"])


def rootfs(kind: str) -> Path:
    return Path(os.environ["QUORUMCTL_STANDALONE_ROOTFS" if kind == "debian" else "QUORUMCTL_MUSL_ROOTFS"])


@pytest.fixture(scope="module")
def area():
    """A directory every uid can reach (pytest's tmp_path is root's alone), with `tmp`,
    a tmpfs mounted noexec (the sandboxes' /tmp), `exec`, writable and exec-able (their
    TMPDIR), and `data` (mounted at /mnt)."""
    d = Path(tempfile.mkdtemp(prefix="quorumctl-standalone-", dir="/var/tmp"))
    d.chmod(0o755)
    for sub in ("tmp", "exec", "data"):
        (d / sub).mkdir()
        (d / sub).chmod(0o1777)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "noexec,nosuid,nodev,mode=1777", "tmpfs", str(d / "tmp")], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d / "tmp")], check=False)
        shutil.rmtree(d, ignore_errors=True)


def sandbox(area: Path, fs: str, cmd: list[str], tmpdir: bool = True, cwd: str = "/mnt") -> subprocess.CompletedProcess:
    """`cmd` in root file system `fs` (read-only), as uid UID with no passwd entry,
    /tmp noexec, an empty environment but PATH (and TMPDIR=/srv, exec-able, unless
    `tmpdir` is false), the executables at /opt, area/data at /mnt."""
    argv = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups"]
    argv += ["bwrap", "--ro-bind", str(rootfs(fs)), "/", "--unshare-pid", "--proc", "/proc", "--dev", "/dev"]
    argv += ["--bind", str(area / "tmp"), "/tmp", "--bind", str(area / "exec"), "/srv"]
    argv += ["--ro-bind", str(exe_dir()), "/opt", "--bind", str(area / "data"), "/mnt"]
    argv += ["--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]
    if tmpdir:
        argv += ["--setenv", "TMPDIR", "/srv"]
    argv += ["--chdir", cwd, "--", *cmd]
    return subprocess.run(argv, capture_output=True, timeout=300)


def standalone(area: Path, fs: str, exe: str, *args: str, cwd: str = "/mnt") -> subprocess.CompletedProcess:
    return sandbox(area, fs, [f"/opt/{exe}", *args], cwd=cwd)


def pip_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The pip-installed console script, in the same bare environment (no HOME, no LANG)."""
    env = {"PATH": "/usr/bin:/bin"}
    return subprocess.run([PIP_CLI, *args], capture_output=True, timeout=300, cwd=cwd, env=env)


AGO = re.compile(rb"\d+(?:\.\d+)? (?:ms|s|min|h|d) ago")


def same(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess, what: str) -> None:
    """The same exit code, stdout and stderr, byte for byte but for relative ages
    ("38.4 s ago"), which move between the two runs."""
    ours, theirs = [(p.returncode, AGO.sub(b"N ago", p.stdout), AGO.sub(b"N ago", p.stderr)) for p in (a, b)]
    assert ours == theirs, (
        f"{what}: standalone exit {a.returncode}, pip exit {b.returncode}\n"
        f"--- standalone stderr\n{a.stderr[-2000:]!r}\n--- pip stderr\n{b.stderr[-2000:]!r}"
    )


def tree(d: Path) -> dict[str, str]:
    """Every regular file under d (relative name) and the SHA-256 of its content."""
    return {
        str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*")) if p.is_file()
    }


# -- the executables and the root file systems: what the other tests rest on ---------------


def test_the_root_file_systems_have_no_python_and_musl_has_no_glibc():
    for fs in ("debian", "musl"):
        r = rootfs(fs)
        assert not [p for p in r.rglob("python3*") if p.is_file() or p.is_symlink()], fs
    assert (rootfs("debian") / "usr/lib/x86_64-linux-gnu/libc.so.6").exists()
    musl = rootfs("musl")
    assert (musl / "lib/ld-musl-x86_64.so.1").exists()
    assert not [p for p in musl.rglob("*") if p.name.startswith(("libc.so.6", "ld-linux"))]


@pytest.mark.parametrize("fs", ["debian", "musl"])
def test_the_sandbox_is_read_only_noexec_tmp_and_an_unknown_uid(area, fs):
    """What every run below gets: proven from inside, with the static executable's own
    `python`-free means: it cannot write /, cannot run a copy of itself from /tmp."""
    r = standalone(area, fs, "quorumctl-static", "bootstrap", "random-uuid")
    assert r.returncode == 0 and len(r.stdout.strip()) == 22, r.stderr
    if fs == "debian":  # the shell and coreutils of minbase show the sandbox's limits
        probe = sandbox(
            area,
            fs,
            [
                "sh",
                "-c",
                "exec 2>&1; command -v python3 python || echo no python; id -u; id -un; "
                "echo HOME=${HOME-unset} LANG=${LANG-unset}; touch /x 2>&1; cp /bin/true /tmp/t && /tmp/t; echo rc=$?",
            ],
        )
        out = probe.stdout.decode()
        head = f"no python\n{UID}\nid: cannot find name for user ID {UID}\n{UID}\nHOME=unset LANG=unset\n"
        assert out.startswith(head), out
        assert "Read-only file system" in out, out
        assert "Permission denied" in out and out.endswith("rc=126\n"), out


def test_the_glibc_build_fails_on_musl_and_says_why(area):
    """No /lib64/ld-linux-x86-64.so.2 there: exec fails before any of ours runs."""
    interp = subprocess.run(["readelf", "-l", str(exe_dir() / "quorumctl")], capture_output=True, text=True).stdout
    assert "/lib64/ld-linux-x86-64.so.2" in interp
    assert not (rootfs("musl") / "lib64/ld-linux-x86-64.so.2").exists()
    r = standalone(area, "musl", "quorumctl", "--version")
    assert r.returncode != 0 and r.stdout == b""
    assert r.stderr.decode().strip() == "bwrap: execvp /opt/quorumctl: No such file or directory"


@pytest.mark.parametrize("fs,exe", VARIANTS, ids=IDS)
def test_noexec_tmp_without_tmpdir_is_one_line(area, fs, exe):
    """TMPDIR unset, /tmp noexec: one line, the loader's, as any program unpacked there
    would say it (docs/standalone.md gives the fix: TMPDIR); with TMPDIR it runs."""
    r = sandbox(area, fs, [f"/opt/{exe}", "--version"], tmpdir=False)
    assert r.returncode != 0 and r.stdout == b""
    lines = r.stderr.decode().splitlines()
    assert len(lines) == 1, r.stderr
    if exe == "quorumctl":  # the dynamic loader, on the libraries PyInstaller's loader unpacked
        assert lines[0].endswith(": failed to map segment from shared object"), lines
    else:  # staticx's loader, on the program it unpacked
        assert lines[0].startswith("Failed to execv() /tmp/staticx-") and lines[0].endswith(": Permission denied"), (
            lines
        )
    assert standalone(area, fs, exe, "--version").returncode == 0


@pytest.mark.parametrize("fs,exe", VARIANTS, ids=IDS)
def test_version_completions_man_and_spark_export(area, fs, exe):
    pip = pip_cli("--version", cwd=area)
    r = standalone(area, fs, exe, "--version")
    same(r, pip, "--version")
    root = Path(__file__).resolve().parents[2]
    for shell in ("bash", "zsh", "fish"):
        r = standalone(area, fs, exe, "--completions", shell)
        assert r.returncode == 0 and r.stdout == (root / "completions" / f"quorumctl.{shell}").read_bytes(), shell
    r = standalone(area, fs, exe, "--man")
    assert r.returncode == 0 and r.stdout == (root / "man" / "quorumctl.1").read_bytes()
    r = standalone(area, fs, exe, "spark-export", "/mnt", "--out", "/srv/parquet")
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode() == (
        "quorumctl: error: spark-export needs Spark, which the standalone executable leaves out: run it where "
        "quorumctl is pip-installed with its spark extra (pip install 'quorumctl[spark]')\n"
    )


@pytest.mark.parametrize("fs,exe", VARIANTS, ids=IDS)
def test_a_pkcs12_truststore_says_in_one_line_to_give_pem(area, fs, exe):
    """cryptography is left out (start-up time): a PKCS12 (or JKS) store is refused in one
    line, before any byte is sent, naming what works instead."""
    import datetime
    import socket

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    store = pkcs12.serialize_key_and_certificates(
        None, None, None, [cert], serialization.BestAvailableEncryption(b"pw")
    )
    (area / "data" / "trust.p12").write_bytes(store)
    props = "security.protocol=SSL\nssl.truststore.location=trust.p12\nssl.truststore.password=pw\n"
    (area / "data" / "tls.properties").write_text(props + "ssl.truststore.type=PKCS12\n")
    for f in ("trust.p12", "tls.properties"):
        (area / "data" / f).chmod(0o644)
    with socket.create_server(("127.0.0.1", 0)) as listener:  # accepts; the TLS context fails first
        port = listener.getsockname()[1]
        r = standalone(
            area, fs, exe, "describe", "status", "--bootstrap-controller", f"127.0.0.1:{port}",
            "--command-config", "tls.properties", "--timeout", "3",
        )  # fmt: skip
    assert (r.returncode, r.stdout) == (2, b""), r.stderr
    assert r.stderr.decode() == (
        "quorumctl: error: tls.properties: ssl.truststore.location trust.p12 is PKCS12, which needs the "
        "'cryptography' package; the standalone executable leaves it out: give the store as PEM "
        "(ssl.*.type=PEM; docs/standalone.md)\n"
    )


# -- a real Kafka 4.3 cluster -----------------------------------------------------------


@pytest.fixture(scope="module")
def kafka(cli, tmp_path_factory):
    c = start_cluster(cli, tmp_path_factory, "standalone", dynamic=False, controllers=1, version="4.3")
    try:
        for topic in ("orders", "payments", "audit"):
            p = kafka_tool(
                "kafka-topics",
                ["--bootstrap-server", c.broker, "--create", "--topic", topic, "--partitions", "3"],
                c.d,
                home=KAFKA43_HOME,
            )
            assert p.returncode == 0, p.stderr[-2000:]
        yield c
    finally:
        c.discard()


@pytest.mark.kafka("4.3")
@pytest.mark.parametrize("fs,exe", VARIANTS, ids=IDS)
def test_describe_against_a_real_quorum(area, kafka, fs, exe):
    via = ["--bootstrap-controller", kafka.controllers[0]]
    theirs = kafka_tool("kafka-metadata-quorum", [*via, "describe", "--status"], kafka.d, home=KAFKA43_HOME)
    assert theirs.returncode == 0, theirs.stderr[-2000:]
    r = standalone(area, fs, exe, "describe", "status", *via, "-o", "text")
    assert (r.returncode, r.stderr) == (0, b""), r.stderr
    assert mask_status(r.stdout.decode()) == mask_status(theirs.stdout)
    r = standalone(area, fs, exe, "describe", "health", *via, "-o", "json")
    pip = pip_cli("describe", "health", *via, "-o", "json", cwd=area)
    assert r.returncode == pip.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == json.loads(pip.stdout)["verdict"] == "healthy"


@pytest.fixture(scope="module")
def stopped(kafka, area):
    """The cluster stopped; its controller's and broker's log dirs in area/data as c1 and b2."""
    kafka.stop()
    for name in ("c1", "b2"):
        shutil.copytree(kafka.d / "data" / name, area / "data" / name)
    subprocess.run(["chmod", "-R", "a+rX", str(area / "data")], check=True)
    return area / "data"


OFFLINE = [
    ["dump-log", "-o", "text", "c1/__cluster_metadata-0"],
    ["dump-log", "-o", "json", "b2/__cluster_metadata-0"],
    ["verify", "-o", "text", "c1", "b2"],
    ["state", "-o", "text", "c1", "b2"],
    ["state", "-o", "json", "c1", "b2"],
    ["image", "-o", "json", "c1/__cluster_metadata-0"],
    ["image", "-o", "text", "b2/__cluster_metadata-0"],
    ["doctor", "-o", "text", "c1", "b2"],
]


@pytest.mark.kafka("4.3")
@pytest.mark.parametrize("fs,exe", VARIANTS, ids=IDS)
def test_offline_commands_print_what_pip_prints(area, stopped, fs, exe):
    for args in OFFLINE:
        pip = pip_cli(*args, cwd=stopped)
        assert pip.stdout, args
        same(standalone(area, fs, exe, *args), pip, " ".join(args))


@pytest.mark.kafka("4.3")
@pytest.mark.parametrize("fs,exe", VARIANTS, ids=IDS)
def test_truncate_apply_leaves_what_pip_leaves(area, stopped, fs, exe):
    """The broker's metadata log cut to offset 5 on two copies, one by each: the same
    files after, the same backup of what was removed and replaced (its plan.json aside:
    absolute paths and times), the same words said but for where the backup is."""
    runs, trees, backups = {}, {}, {}
    for who in ("pip", "standalone"):
        d = stopped / f"trunc-{who}-{fs}-{exe}"
        d.mkdir()
        shutil.copytree(stopped / "b2", d / "b2")
        subprocess.run(["chown", "-R", f"{UID}:{UID}", str(d)], check=True)
        args = ["truncate", "b2", "--to-offset", "5", "--apply", "--force", "-o", "text"]
        if who == "pip":
            r = pip_cli(*args, cwd=d)
        else:
            r = standalone(area, fs, exe, *args, cwd=f"/mnt/{d.name}")
        saved = re.compile(rb"saved in (\S+)/b2\.quorumctl-backup/\d{8}T\d{6}\.\d{6}Z-__cluster_metadata-0\n")
        assert len(saved.findall(r.stdout)) == 1, r.stdout[-2000:]
        runs[who] = subprocess.CompletedProcess(
            r.args, r.returncode, saved.sub(b"saved in BACKUP\n", r.stdout), r.stderr
        )
        trees[who] = tree(d / "b2")
        (backup,) = (d / "b2.quorumctl-backup").iterdir()
        backups[who] = tree(backup)
        assert backups[who].pop("plan.json")  # what was planned, with absolute paths and times
    same(runs["standalone"], runs["pip"], "truncate --apply")
    assert runs["pip"].returncode == 0, runs["pip"].stderr
    assert trees["standalone"] == trees["pip"]
    assert backups["standalone"] == backups["pip"] and backups["pip"]
    assert trees["pip"] != tree(stopped / "b2")  # it did cut something


def debug_container(area: Path, fs: str, cmd: list[str]) -> subprocess.CompletedProcess:
    """`cmd` as in a `kubectl debug --target` container: a PID namespace whose PID 1 (the
    "Kafka container", here a shell in the host's root) sees the log dirs, and, inside it,
    root file system `fs` (read-only, /tmp noexec) that does not: they are reachable only
    under /proc/1/root. As root, as such containers run (reading another root needs it)."""
    inner = ["bwrap", "--ro-bind", str(rootfs(fs)), "/", "--ro-bind", "/proc", "/proc", "--dev", "/dev"]
    inner += ["--bind", str(area / "tmp"), "/tmp", "--bind", str(area / "exec"), "/srv"]
    inner += ["--ro-bind", str(exe_dir()), "/opt", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]
    inner += ["--setenv", "TMPDIR", "/srv", "--", *cmd]
    return pid_namespace(["/bin/sh", "-c", '"$@"; exit $?', "sh", *inner])


def pid_namespace(cmd: list[str]) -> subprocess.CompletedProcess:
    """`cmd` as PID 1 of a new PID namespace, in the host's root, environment emptied but PATH."""
    argv = ["bwrap", "--bind", "/", "/", "--unshare-pid", "--as-pid-1", "--proc", "/proc", "--dev", "/dev"]
    argv += ["--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--", *cmd]
    return subprocess.run(argv, capture_output=True, timeout=300)


@pytest.mark.kafka("4.3")
@pytest.mark.parametrize("fs,exe", VARIANTS, ids=IDS)
def test_kubectl_debug_proc_1_root_paths(area, stopped, fs, exe):
    c1 = f"/proc/1/root{stopped}/c1"
    check = debug_container(area, fs, ["/bin/ls", str(stopped)]) if fs == "debian" else None
    if check is not None:  # the debug container itself does not see the log dirs
        assert check.returncode != 0 and b"No such file or directory" in check.stderr, check
    for args in (["dump-log", "-o", "text", f"{c1}/__cluster_metadata-0"], ["state", "-o", "text", c1]):
        pip = pid_namespace([PIP_CLI, *args])
        assert pip.returncode == 0 and pip.stdout, pip.stderr
        same(debug_container(area, fs, [f"/opt/{exe}", *args]), pip, " ".join(args))
