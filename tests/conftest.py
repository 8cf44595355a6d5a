"""Shared fixtures, and the tiers:

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

# The files that take longest, longest first (by their summed test time on two workers).
# `--dist loadfile` hands files out in this order to whichever worker is free (pytest_configure
# keeps pytest-xdist from reordering them): in xdist's own order, files of most tests first,
# the files of one or two long tests (Connect's, the cluster's, the wheel's) run last, one
# worker alone.
_LONGEST_FIRST = [
    "differential/test_engine_targeted.py",
    "differential/test_engine_knobs.py",
    "differential/test_connect.py",
    "differential/test_engine_programs.py",
    "e2e/test_hostile_cli.py",
    "e2e/test_stream.py",
    "e2e/test_shell.py",
    "differential/test_decisions.py",
    "e2e/test_state_safety.py",
    "differential/test_lookup.py",
    "e2e/test_state_cli.py",
    "e2e/test_cluster.py",
    "e2e/test_user_session.py",
    "e2e/test_connect.py",
    "e2e/test_readme.py",
    "e2e/test_serve.py",
    "differential/test_folds.py",
    "differential/test_durable.py",
    "e2e/test_wheel.py",
    "e2e/test_class_archive.py",
    "e2e/test_state_crash.py",
]


def _under_tests(item) -> str:
    """The item's file, relative to tests/, with `/` between its parts."""
    return os.path.relpath(str(item.path), os.path.join(ROOT, "tests")).replace(os.sep, "/")


def pytest_configure(config):
    # pytest-xdist sorts `--dist loadfile`'s files by their number of tests unless told not to
    # (`--no-loadscope-reorder`); said here, every way of running the suite keeps the order
    # above, not only the Makefile's
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    rank = {path: k for k, path in enumerate(_LONGEST_FIRST)}
    # stable: the other files, and the tests within each file, keep their order
    items.sort(key=lambda item: rank.get(_under_tests(item), len(rank)))
    for item in items:
        if _under_tests(item).split("/")[0] in _SPARK_TIERS:
            item.add_marker(pytest.mark.spark)


# A Spark Connect server to run the Spark tiers through (sc://HOST:PORT, or local[N] for one
# PySpark starts in the test process): tests/differential/test_connect.py sets it for a
# pytest of its own, since a process makes Connect or classic Columns, not both.
REMOTE = os.environ.get("DDLOG_TEST_REMOTE")


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """A Spark Connect server on loopback for a test file (bench/connect_server.py), with
    its web UI on, so that clients can count its jobs."""
    from bench.connect_server import ConnectServer, free_port

    s = ConnectServer(tmp_path_factory.mktemp("connect"),
                      conf={"spark.sql.shuffle.partitions": "2",
                            "spark.default.parallelism": "2",
                            "spark.ui.enabled": "true", "spark.ui.port": str(free_port())})
    try:
        s.start()
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="session")
def spark():
    from ddlog.runtime.spark import get_session

    if REMOTE:
        from ddlog.runtime import backend

        session = get_session(remote=REMOTE, conf={"spark.sql.shuffle.partitions": "2"})
        assert backend.is_connect(session), "DDLOG_TEST_REMOTE gave a classic session"
    else:
        session = get_session(master="local[2]", conf={"spark.sql.shuffle.partitions": "2",
                                                       "spark.default.parallelism": "2"})
    yield session
    session.stop()
