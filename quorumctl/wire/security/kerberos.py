"""GSSAPI (Kerberos V5, RFC 4752) on the client side, through the system's
Kerberos libraries by the maintained `gssapi` binding (python-gssapi),
imported only when a config asks for GSSAPI.

Who we are, as Krb5LoginModule decides it: with useTicketCache=true the
ticket cache (ticketCache, else the default cache, KRB5CCNAME) is tried first;
with useKeyTab=true the keytab (keyTab) logs `principal` in, its tickets kept
in a private in-memory cache for this process. KRB5_CONFIG names the krb5.conf,
as for every MIT tool.

Whom we talk to, as Kafka's SaslChannelBuilder forms it: the host-based
service `serviceName@host`, where host is the socket's
InetAddress.getHostName(): the name the address was given as, or for an IP
literal its reverse-DNS name (Java resolves it so; 127.0.0.1 is usually
"localhost"), else the literal. Kerberos maps it to service/host@REALM.

The exchange: GSS tokens until the context is established (mutual
authentication), then the server's wrapped security-layer offer, answered
with "no security layer" and our principal as authorization id (Java's
GssKrb5Client does the same).
"""

from __future__ import annotations

from typing import NoReturn

import ipaddress
import itertools
import os
import socket

from ...errors import ClusterError


_caches = itertools.count()


class KerberosError(ClusterError):
    """Kerberos refused us (login, KDC, service ticket): exit 3."""


def server_host(host: str) -> str:
    """The host part of the broker's service principal, as Java's
    InetAddress.getHostName() gives it for the address Kafka connected to."""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    try:
        return socket.gethostbyaddr(host.strip("[]"))[0]
    except OSError:
        return host.strip("[]")


def _gss():
    try:
        import gssapi
    except ImportError:
        raise KerberosError(
            "sasl.mechanism GSSAPI needs the Python 'gssapi' package (pip install gssapi; "
            "it builds against the system's Kerberos, e.g. Debian's libkrb5-dev)"
        ) from None
    return gssapi


def _minor(e) -> str:
    """The most specific line of a GSSError (the Kerberos library's own words)."""
    try:
        msgs = [m for m in (e.get_all_statuses(e.min_code, False) if e.min_code else []) if m]
    except Exception:  # the major message is the fall-back
        msgs = []
    text = msgs[0] if msgs else getattr(e, "gen_message", lambda: str(e))()
    return " ".join(str(text).split()).rstrip(".")


def _who(k) -> str:
    if k.use_keytab and not k.use_ticket_cache:
        return f"sasl.jaas.config keyTab={k.keytab} principal={k.principal}"
    if k.use_keytab:
        return f"sasl.jaas.config (ticket cache, then keyTab={k.keytab} principal={k.principal})"
    return f"sasl.jaas.config useTicketCache ({k.ticket_cache or os.environ.get('KRB5CCNAME') or 'default cache'})"


def _hint(msg: str) -> str:
    m = msg.lower()
    if "preauthentication failed" in m or "password incorrect" in m or "decrypt integrity check" in m:
        return "the keytab's key does not match the KDC's (a wrong or outdated keyTab)"
    if "not found in kerberos database" in m and "client" in m:
        return "the KDC does not know this principal (check principal)"
    if (
        "cannot find kdc" in m
        or "cannot contact any kdc" in m
        or "cannot resolve" in m
        or "realm" in m
        and "unknown" in m
    ):
        return "no KDC answers for the realm (check krb5.conf / KRB5_CONFIG)"
    if "no credentials cache" in m or "no kerberos credentials" in m or "credentials cache file" in m:
        return "no ticket in the cache (run kinit, or set useKeyTab=true with keyTab and principal)"
    if "expired" in m:
        return "the ticket expired (run kinit again)"
    if "keytab" in m:
        return "the keytab cannot be used (check keyTab and principal)"
    return ""


def credentials(cfg):
    """The initiator credentials of a ClientConfig, acquired once and kept on it."""
    got = getattr(cfg, "_gss_creds", None)
    if got is not None:
        return got
    gssapi = _gss()
    k = cfg.kerberos
    name = gssapi.Name(k.principal, gssapi.NameType.kerberos_principal) if k.principal else None
    errors = []
    creds = None
    if k.use_ticket_cache:
        store = {"ccache": k.ticket_cache} if k.ticket_cache else None
        try:
            creds = gssapi.Credentials(usage="initiate", name=name, store=store)
            if creds.lifetime is not None and creds.lifetime <= 0:
                raise KerberosError("the ticket expired")
        except (gssapi.exceptions.GSSError, KerberosError) as e:
            creds = None
            errors.append(_minor(e) if isinstance(e, gssapi.exceptions.GSSError) else str(e))
    if creds is None and k.use_keytab:
        # a private in-memory cache, new for each loaded config
        store = {"client_keytab": k.keytab, "ccache": f"MEMORY:quorumctl-{os.getpid()}-{next(_caches)}"}
        try:
            creds = gssapi.Credentials(usage="initiate", name=name, store=store)
        except gssapi.exceptions.GSSError as e:
            errors.append(_minor(e))
    if creds is None:
        msg = errors[-1] if errors else "no credentials"
        hint = _hint(msg)
        if k.use_keytab and ("no credentials cache" in msg.lower() or "keytab" in msg.lower()):
            # MIT reports a keytab without the principal's key as a missing cache
            msg = f"the keytab holds no key for {k.principal}"
            hint = "check keyTab and principal"
        raise KerberosError(f"Kerberos login with {_who(k)} failed: {msg}" + (f"; {hint}" if hint else ""))
    cfg._gss_creds = creds
    return creds


class GssapiClient:
    """The SASL GSSAPI client for one connection to `host`."""

    def __init__(self, cfg, host: str):
        gssapi = _gss()
        self._gssapi = gssapi
        k = cfg.kerberos
        self.cfg = cfg
        self.target = f"{k.service_name}@{server_host(host)}"
        self.creds = credentials(cfg)
        self.ctx = gssapi.SecurityContext(
            name=gssapi.Name(self.target, gssapi.NameType.hostbased_service),
            creds=self.creds,
            usage="initiate",
            flags=(gssapi.RequirementFlag.mutual_authentication | gssapi.RequirementFlag.integrity),
        )
        self.done = False
        self._layer = False

    def _fail(self, e, when: str) -> NoReturn:
        msg = _minor(e)
        hint = _hint(msg)
        m = msg.lower()
        spn = self.target.replace("@", "/", 1)
        if "server" in m and "not found" in m:
            hint = (
                f"the KDC has no service principal {spn} (check sasl.kerberos.service.name and the broker's host name)"
            )
        elif hint:  # the client's own login failed (the keytab's tickets are got lazily)
            raise KerberosError(f"Kerberos login with {_who(self.cfg.kerberos)} failed: {msg}; {hint}") from None
        raise KerberosError(
            f"Kerberos {when} for {spn} with {_who(self.cfg.kerberos)} failed: {msg}" + (f"; {hint}" if hint else "")
        ) from None

    def first(self) -> bytes:
        try:
            return self.ctx.step() or b""
        except self._gssapi.exceptions.GSSError as e:
            self._fail(e, "service ticket")

    def step(self, server_token: bytes) -> bytes | None:
        G = self._gssapi
        try:
            if not self.ctx.complete:
                out = self.ctx.step(server_token)
                return out or b""
            # the security layer: the server offers (mask, max size); we take none
            offer = self.ctx.unwrap(server_token).message
            if len(offer) != 4 or not offer[0] & 0x01:
                raise KerberosError(
                    f"GSSAPI: the server {self.target} does not offer the no-security-layer option quorumctl needs"
                )
            authz = str(self.ctx.initiator_name).encode("utf-8")
            self.done = True
            return self.ctx.wrap(b"\x01\x00\x00\x00" + authz, False).message
        except G.exceptions.GSSError as e:
            self._fail(e, "authentication")
