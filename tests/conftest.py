"""Shared fixtures, and the tiers (DESIGN 8):

    tests/unit/          no JVM; seconds (`make test-fast`)
    tests/differential/  the engine against tests/oracle, one SparkSession per test process
                         (`make test` runs a pytest-xdist worker per core, a file to each)
    tests/e2e/           the command line, state directories, crashes (subprocesses)

Tests under differential/ and e2e/ get the marker `spark`; `-m "not spark"` leaves the unit
tier. Tests marked `slow` take a minute or more each.
"""
from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

_SPARK_TIERS = ("differential", "e2e")


def pytest_collection_modifyitems(config, items):
    for item in items:
        parts = os.path.relpath(str(item.path), os.path.join(ROOT, "tests")).split(os.sep)
        if parts[0] in _SPARK_TIERS:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark():
    from runtime.spark import get_session

    session = get_session(master="local[2]", conf={"spark.sql.shuffle.partitions": "2",
                                                   "spark.default.parallelism": "2"})
    yield session
    session.stop()
