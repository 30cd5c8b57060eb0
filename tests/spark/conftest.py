"""Fixtures of the Spark tests (tests/conftest.py holds what every kind shares)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def spark():
    """A local[2] Spark session for one module (skips without Java)."""
    from quorumctl.spark.session import find_java, start_session

    if find_java() is None:
        pytest.skip("Spark needs Java 17+ (none found on PATH or JAVA_HOME)")
    session = start_session("local[2]", {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()
