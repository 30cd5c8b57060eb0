"""A real MIT Kerberos KDC for tests, with its own realm in a directory:
krb5.conf and kdc.conf written there, the database made by kdb5_util,
principals and keytabs by kadmin.local, and krb5kdc run in the foreground on
a free port of 127.0.0.1 (the distribution's krb5-kdc package)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

TOOLS = ("krb5kdc", "kdb5_util", "kadmin.local", "kinit")


def _where(tool: str) -> str | None:
    return shutil.which(tool) or next((p for p in (f"/usr/sbin/{tool}", f"/sbin/{tool}") if os.path.exists(p)), None)


def _find(tool: str) -> str:
    """The tool's path; only called once missing_tools() found none missing."""
    path = _where(tool)
    if path is None:
        raise FileNotFoundError(f"{tool}: not installed (the MIT Kerberos KDC packages)")
    return path


def missing_tools() -> list[str]:
    return [t for t in TOOLS if _where(t) is None]


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGTERM when the test process dies, even by
    SIGKILL, so a killed test run leaves no KDC or Kafka node behind (Linux)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Kdc:
    __test__ = False

    def __init__(self, directory: Path, realm: str = "QUORUMCTL.TEST"):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.realm = realm
        self.port = _free_port()
        self.krb5_conf = self.dir / "krb5.conf"
        self.kdc_conf = self.dir / "kdc.conf"
        self.proc: subprocess.Popen | None = None

    def env(self, **extra) -> dict:
        env = dict(os.environ, KRB5_CONFIG=str(self.krb5_conf), KRB5_KDC_PROFILE=str(self.kdc_conf))
        env.update(extra)
        return env

    def _run(self, *args: str, stdin: str | None = None):
        r = subprocess.run(
            [_where(args[0]) or args[0], *args[1:]],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=60,
        )
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
        return r

    def start(self) -> "Kdc":
        d = self.dir
        self.krb5_conf.write_text(f"""[libdefaults]
    default_realm = {self.realm}
    dns_lookup_realm = false
    dns_lookup_kdc = false
    dns_canonicalize_hostname = false
    rdns = false
    udp_preference_limit = 1
    ticket_lifetime = 1h
    forwardable = false

[realms]
    {self.realm} = {{
        kdc = 127.0.0.1:{self.port}
    }}

[domain_realm]
    localhost = {self.realm}
    127.0.0.1 = {self.realm}
""")
        self.kdc_conf.write_text(f"""[kdcdefaults]
    kdc_listen = 127.0.0.1:{self.port}
    kdc_tcp_listen = 127.0.0.1:{self.port}

[realms]
    {self.realm} = {{
        database_name = {d}/principal
        key_stash_file = {d}/stash
        acl_file = {d}/kadm5.acl
        kdc_listen = 127.0.0.1:{self.port}
        kdc_tcp_listen = 127.0.0.1:{self.port}
        max_life = 1h
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    }}

[logging]
    kdc = FILE:{d}/kdc.log
""")
        (d / "kadm5.acl").write_text("")
        self._run("kdb5_util", "create", "-s", "-r", self.realm, "-P", "quorumctl-master-key")
        self.proc = subprocess.Popen(
            [_find("krb5kdc"), "-n", "-r", self.realm],
            env=self.env(),
            stdout=open(d / "krb5kdc.out", "wb"),
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,
        )
        end = time.monotonic() + 20
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"krb5kdc exited: {(d / 'krb5kdc.out').read_text()[-2000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.1)
        raise RuntimeError("krb5kdc did not listen within 20 s")

    def add(self, principal: str, keytab: Path | None = None, password: str | None = None) -> str:
        """A principal with a random key (written to `keytab`) or a password."""
        if password is not None:
            self._run("kadmin.local", "-r", self.realm, "-q", f"addprinc -pw {password} {principal}")
        else:
            self._run("kadmin.local", "-r", self.realm, "-q", f"addprinc -randkey {principal}")
        if keytab is not None:
            self._run("kadmin.local", "-r", self.realm, "-q", f"ktadd -k {keytab} {principal}")
        return f"{principal}@{self.realm}" if "@" not in principal else principal

    def kinit(self, principal: str, keytab: Path, cache: Path):
        r = subprocess.run(
            [_find("kinit"), "-k", "-t", str(keytab), "-c", f"FILE:{cache}", principal],
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=60,
        )
        if r.returncode != 0:
            raise RuntimeError(f"kinit failed: {r.stderr.strip()}")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
