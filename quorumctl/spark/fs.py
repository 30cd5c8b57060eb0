"""Where the export's input files live: the local file system, or a URI.

Plain local paths are read with `open`, which needs nothing but the standard
library. URIs (`file://`, `hdfs://`, `viewfs://`, `s3a://`/`s3://`, `gs://`,
`abfs://` ...) are read through `pyarrow.fs`, on
the driver for listing and planning and on the executors for decoding, so no
task ever ships file contents through the JVM: HDFS through libhdfs (the
Hadoop client the cluster nodes already have, with their core-site.xml and
hdfs-site.xml), S3 through the AWS SDK and its default credential chain
(environment, profile, instance or pod role). Hadoop's `s3a://` and `s3n://`
are the same objects as `s3://`.
"""

from __future__ import annotations

import errno
import fnmatch
import glob
import os

from ..errors import InputError
from ..openfile import open_regular

_GLOB_CHARS = "*?["


def is_remote(path: str) -> bool:
    """Whether a path is a URI, read through pyarrow.fs (file:// included, so
    the URI code path is the same for a local test as on a cluster)."""
    return "://" in path


def local_path(path: str) -> str:
    """A local path for a local path or a `file://` URI."""
    if path.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(path).path)
    return path


# Hadoop S3A settings (as `--spark-conf spark.hadoop.fs.s3a.KEY=...` or in
# spark-defaults) that say where S3 is and who we are, and the fs option each becomes.
S3A_CONF = {
    "spark.hadoop.fs.s3a.endpoint": "s3endpoint",
    "spark.hadoop.fs.s3a.endpoint.region": "s3region",
    "spark.hadoop.fs.s3a.path.style.access": "s3pathstyle",
    "spark.hadoop.fs.s3a.access.key": "s3accesskey",
    "spark.hadoop.fs.s3a.secret.key": "s3secretkey",
    "spark.hadoop.fs.s3a.session.token": "s3sessiontoken",
}


def s3_options_from_conf(conf: dict) -> dict:
    """The fs options given by Spark's Hadoop S3A settings in `conf`."""
    return {opt: conf[key] for key, opt in S3A_CONF.items() if conf.get(key)}


def _s3_filesystem(options: dict):
    """pyarrow's S3 client. Endpoint: the `s3endpoint` option (--s3-endpoint,
    spark.hadoop.fs.s3a.endpoint), else AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL
    as the AWS SDKs read them (pyarrow's C++ SDK does not). Credentials: the
    S3A keys when given in Spark's conf, else the SDK's default chain
    (AWS_ACCESS_KEY_ID ..., profile, instance or pod role)."""
    import pyarrow.fs as pafs

    opts = {}
    endpoint = options.get("s3endpoint") or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        if "://" in endpoint:  # pyarrow wants the scheme apart
            opts["scheme"], endpoint = endpoint.split("://", 1)
        opts["endpoint_override"] = endpoint.rstrip("/")
    region = options.get("s3region") or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        opts["region"] = region
    if options.get("s3pathstyle", "").lower() == "true":
        opts["force_virtual_addressing"] = False
    if options.get("s3accesskey") and options.get("s3secretkey"):
        opts["access_key"] = options["s3accesskey"]
        opts["secret_key"] = options["s3secretkey"]
        if options.get("s3sessiontoken"):
            opts["session_token"] = options["s3sessiontoken"]
    return pafs.S3FileSystem(**opts)


def _pyarrow_fs(uri: str, options: dict | None = None):
    """(FileSystem, path inside it) for a remote URI."""
    import pyarrow.fs as pafs

    scheme, rest = uri.split("://", 1)
    if scheme.lower() in ("s3a", "s3n", "s3"):
        return _s3_filesystem(options or {}), rest
    return pafs.FileSystem.from_uri(uri)


def _join_uri(uri: str, inner: str) -> str:
    """The URI of `inner` (a path inside the file system of `uri`)."""
    scheme, rest = uri.split("://", 1)
    if scheme.lower() in ("s3a", "s3n", "s3"):
        return f"{scheme}://{inner}"
    authority = rest.split("/", 1)[0]
    return f"{scheme}://{authority}/{inner.lstrip('/')}"


class Listing:
    """One file found: `path` (as reported: a local absolute path or a URI) and its size."""

    __slots__ = ("path", "size")

    def __init__(self, path: str, size: int):
        self.path = path
        self.size = size

    def __repr__(self):
        return f"Listing({self.path!r}, {self.size})"


def list_files(path: str, options: dict | None = None) -> list[Listing] | None:
    """Every file under `path` (a file, a directory searched recursively, or a
    glob), sorted by path; None when nothing by that name exists."""
    if not is_remote(path):
        p = local_path(path)
        if any(c in p for c in _GLOB_CHARS):
            matches = sorted(glob.glob(p, recursive=True))
            if not matches:
                return None
            out = []
            for m in matches:
                out.extend(list_files(m) or [])
            return out
        if os.path.isdir(p):
            out = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    full = os.path.abspath(os.path.join(root, f))
                    try:
                        out.append(Listing(full, os.path.getsize(full)))
                    except OSError:
                        out.append(Listing(full, -1))  # reported as a file error when read
            return out
        if os.path.exists(p):
            return [Listing(os.path.abspath(p), os.path.getsize(p))]
        return None
    import pyarrow.fs as pafs

    fs, inner = _pyarrow_fs(path, options)
    pattern = None
    if any(c in inner for c in _GLOB_CHARS):
        # list below the last directory without glob characters, then match
        parts = inner.split("/")
        k = next(i for i, part in enumerate(parts) if any(c in part for c in _GLOB_CHARS))
        pattern, inner = inner, "/".join(parts[:k])
    info = fs.get_file_info(inner)
    if info.type == pafs.FileType.NotFound:
        return None
    if info.type == pafs.FileType.File:
        return [Listing(_join_uri(path, inner), info.size)]
    infos = fs.get_file_info(pafs.FileSelector(inner, recursive=True))
    out = [
        Listing(_join_uri(path, i.path), i.size)
        for i in infos
        if i.type == pafs.FileType.File
        and (pattern is None or fnmatch.fnmatchcase(i.path, pattern) or fnmatch.fnmatchcase(i.path, pattern + "/*"))
    ]
    out.sort(key=lambda x: x.path)
    return out if out or pattern is None else None


def open_input(path: str, options: dict | None = None):
    """A binary, seekable file object for a path or URI (caller closes it)."""
    if not is_remote(path):
        try:
            return open_regular(local_path(path))
        except InputError as e:  # callers report OSErrors per file
            raise OSError(errno.EINVAL, str(e)) from None
    fs, inner = _pyarrow_fs(path, options)
    return fs.open_input_file(inner)


def read_small(path: str, limit: int = 1 << 20, options: dict | None = None) -> bytes | None:
    """The first `limit` bytes of a small file, or None if it is absent or unreadable."""
    try:
        with open_input(path, options) as f:
            return f.read(limit)
    except (OSError, ValueError):
        return None


def parent(path: str) -> str:
    """The directory of a path or URI."""
    if is_remote(path):
        head, _, _ = path.rstrip("/").rpartition("/")
        return head
    return os.path.dirname(local_path(path))


def join(directory: str, name: str) -> str:
    return f"{directory}/{name}" if is_remote(directory) else os.path.join(directory, name)


def basename(path: str) -> str:
    return path.rstrip("/").rpartition("/")[2] if is_remote(path) else os.path.basename(path)
