"""A throwaway certificate authority for TLS tests against the simulated
endpoint: a self-signed CA, server certificates for chosen names, client
certificates, written as PEM and PKCS12 files. Needs `cryptography`.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Issued:
    cert_pem: Path
    key_pem: Path
    combined_pem: Path  # key + certificate chain in one file (Kafka's PEM keystore layout)
    p12: Path
    password: str


class TestCA:
    __test__ = False  # not a pytest class

    def __init__(self, directory: Path, name: str = "quorumctl test CA"):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = _dt.datetime.now(_dt.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _dt.timedelta(minutes=5))
            .not_valid_after(now + _dt.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self.key, hashes.SHA256())
        )
        self.slug = name.replace(" ", "-")
        self.ca_pem = self.dir / f"{self.slug}.pem"
        self.ca_pem.write_bytes(self._pem(self.cert))
        self.ca_p12 = self.dir / f"{self.slug}-truststore.p12"
        self._write_truststore_p12(self.ca_p12, "trustpass")

    @staticmethod
    def _pem(cert) -> bytes:
        from cryptography.hazmat.primitives.serialization import Encoding

        return cert.public_bytes(Encoding.PEM)

    def _write_truststore_p12(self, path: Path, password: str):
        from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

        data = pkcs12.serialize_key_and_certificates(
            b"ca", None, None, [self.cert], BestAvailableEncryption(password.encode())
        )
        path.write_bytes(data)

    def issue(
        self,
        name: str,
        dns: Sequence[str] = (),
        ips: Sequence[str] = (),
        client: bool = False,
        password: str = "changeit",
    ) -> Issued:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.serialization import (
            BestAvailableEncryption,
            Encoding,
            NoEncryption,
            PrivateFormat,
            pkcs12,
        )
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        now = _dt.datetime.now(_dt.timezone.utc)
        b = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _dt.timedelta(minutes=5))
            .not_valid_after(now + _dt.timedelta(days=1))
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH]),
                critical=False,
            )
        )
        sans = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        if sans:
            b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = b.sign(self.key, hashes.SHA256())
        stem = self.dir / name.replace(" ", "-")
        cert_pem = stem.with_suffix(".crt.pem")
        key_pem = stem.with_suffix(".key.pem")
        combined = stem.with_suffix(".keystore.pem")
        p12 = stem.with_suffix(".keystore.p12")
        key_bytes = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        cert_pem.write_bytes(self._pem(cert) + self._pem(self.cert))
        key_pem.write_bytes(key_bytes)
        combined.write_bytes(key_bytes + self._pem(cert) + self._pem(self.cert))
        p12.write_bytes(
            pkcs12.serialize_key_and_certificates(
                name.encode(), key, cert, [self.cert], BestAvailableEncryption(password.encode())
            )
        )
        return Issued(cert_pem, key_pem, combined, p12, password)

    def server_context(self, issued: Issued, require_client_cert: bool = False):
        """A server-side SSLContext for a SimNode."""
        import ssl

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(issued.cert_pem), str(issued.key_pem))
        if require_client_cert:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(cafile=str(self.ca_pem))
        return ctx


def keytool_jks_truststore(ca: TestCA, path: Path, password: str) -> Path:
    """A JKS truststore holding `ca`'s certificate, written by Java's keytool."""
    import subprocess

    subprocess.run(
        [
            "keytool",
            "-importcert",
            "-noprompt",
            "-storetype",
            "JKS",
            "-alias",
            "ca",
            "-file",
            str(ca.ca_pem),
            "-keystore",
            str(path),
            "-storepass",
            password,
        ],
        check=True,
        capture_output=True,
    )
    return path


def keytool_jks_keystore(issued: Issued, path: Path, store_password: str, key_password: str) -> Path:
    """A JKS keystore holding `issued`'s key and chain (the key under its own
    password), converted from its PKCS12 file by Java's keytool."""
    import subprocess

    subprocess.run(
        [
            "keytool",
            "-importkeystore",
            "-noprompt",
            "-srckeystore",
            str(issued.p12),
            "-srcstoretype",
            "PKCS12",
            "-srcstorepass",
            issued.password,
            "-srcalias",
            issued.p12.name.split(".")[0],
            "-destalias",
            "key",
            "-destkeystore",
            str(path),
            "-deststoretype",
            "JKS",
            "-deststorepass",
            store_password,
            "-destkeypass",
            key_password,
        ],
        check=True,
        capture_output=True,
    )
    return path
