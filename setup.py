"""The compiled core (rust/, the extension module quorumctl._core) as an optional
extension: built in release mode where cargo is on PATH; where it is not (or the
build fails), the install goes on without it and quorumctl runs on its
pure-Python path. Everything else is in pyproject.toml."""

from setuptools import setup
from setuptools_rust import Binding, RustExtension

setup(
    rust_extensions=[
        RustExtension(
            "quorumctl._core",
            path="rust/Cargo.toml",
            binding=Binding.PyO3,
            py_limited_api="auto",
            features=["python"],
            debug=False,
            optional=True,
        )
    ],
)
