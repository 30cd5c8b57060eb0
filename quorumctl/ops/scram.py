"""SCRAM credentials for `bootstrap format --add-scram` (Kafka's ScramParser and
ScramFormatter): the UserScramCredentialRecord a formatted bootstrap.checkpoint
holds."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from ..versions import FormatError


SCRAM_MECHANISMS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}
SCRAM_MIN_ITERATIONS, SCRAM_MAX_ITERATIONS = 4096, 16384


def _random_salt() -> bytes:
    """ScramFormatter.secureRandomBytes: a 130-bit random number in base 36, as UTF-8."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    while True:
        n, r = divmod(n, 36)
        s = digits[r] + s
        if n == 0:
            break
    return s.encode()


def parse_scram(arg: str, salt_source=_random_salt) -> tuple[int, int, dict]:
    """ScramParser: 'SCRAM-SHA-256=[name=alice,password=alice-secret]' (or
    iterations=, salt= base64, saltedpassword= base64) -> a UserScramCredentialRecord."""
    text = arg.strip()
    mech, eq, conf = text.partition("=")
    if not eq:
        raise FormatError(f"Failed to find equals sign in SCRAM argument '{text}'")
    if mech not in SCRAM_MECHANISMS:
        raise FormatError(f"The add-scram mechanism {mech} is not supported.")
    if not conf.startswith("["):
        raise FormatError("Expected configuration string to start with [")
    if not conf.endswith("]"):
        raise FormatError("Expected configuration string to end with ]")
    comps: dict[str, str] = {}
    for part in conf[1:-1].split(","):
        k, eq2, v = part.partition("=")
        if not eq2:
            raise FormatError(f"No equals sign found in SCRAM component: {part}")
        if len(v) >= 2 and v.startswith('"') and v.endswith('"'):
            v = v[1:-1]
        comps[k] = v
    name = comps.pop("name", None)
    if name is None:
        raise FormatError("You must supply 'name' to add-scram")
    salt = None
    if "salt" in comps:
        s = comps.pop("salt")
        try:
            salt = base64.b64decode(s, validate=True)
        except ValueError:
            raise FormatError(f"Failed to decode given salt: {s}") from None
    iterations = 4096
    if "iterations" in comps:
        it = comps.pop("iterations")
        try:
            iterations = int(it)
        except ValueError:
            raise FormatError(f"Failed to parse iterations count: {it}") from None
    password = comps.pop("password", None)
    salted = comps.pop("saltedpassword", None)
    if password is None:
        if salted is None:
            raise FormatError("You must supply one of 'password' or 'saltedpassword' to add-scram")
        if salt is None:
            raise FormatError("You must supply 'salt' with 'saltedpassword' to add-scram")
        try:
            salted_bytes = base64.b64decode(salted, validate=True)
        except ValueError:
            raise FormatError(f"Failed to decode given saltedPassword: {salted}") from None
    if comps:
        raise FormatError(f"Unknown SCRAM configurations: {', '.join(sorted(comps))}")
    mtype, algo = SCRAM_MECHANISMS[mech]
    if salt is None:
        salt = salt_source()
    if iterations < SCRAM_MIN_ITERATIONS:
        raise FormatError(f"The 'iterations' value must be >= {SCRAM_MIN_ITERATIONS} for add-scram using {mech}")
    if iterations > SCRAM_MAX_ITERATIONS:
        raise FormatError(f"The 'iterations' value must be <= {SCRAM_MAX_ITERATIONS} for add-scram using {mech}")
    if password is not None:
        salted_bytes = hashlib.pbkdf2_hmac(algo, password.encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted_bytes, b"Client Key", algo).digest()
    stored_key = hashlib.new(algo, client_key).digest()
    server_key = hmac.new(salted_bytes, b"Server Key", algo).digest()
    return (
        11,
        0,
        {
            "name": name,
            "mechanism": mtype,
            "salt": salt,
            "storedKey": stored_key,
            "serverKey": server_key,
            "iterations": iterations,
        },
    )
