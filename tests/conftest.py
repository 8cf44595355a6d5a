"""Shared fixtures: one SparkSession for the whole test run (DESIGN 8)."""
from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture(scope="session")
def spark():
    from runtime.spark import get_session

    session = get_session(master="local[2]", conf={"spark.sql.shuffle.partitions": "2",
                                                   "spark.default.parallelism": "2"})
    yield session
    session.stop()
