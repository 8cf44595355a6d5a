"""The differential tests through Spark Connect: a Connect server on loopback (the pyspark
wheel's `sbin/start-connect-server.sh`, bench/connect_server.py) and, in a pytest of their own
whose `spark` fixture is a session of that server (tests/conftest.py, DDLOG_TEST_REMOTE), the
differential tests of every example program and the targeted recursion, mutual recursion,
negation and aggregate programs, every epoch compared with the oracle. A pytest of their own:
a process makes Connect or classic Columns, not both.
"""
from __future__ import annotations

import os
import subprocess
import sys

from tests.e2e.cli_support import ROOT

# The Spark tiers' tests that run through Connect: every example program and the targeted
# programs of recursion and negation, against the oracle. The example programs hold mutual
# recursion (evenodd, pointsto) and aggregates (groups, bom); the targeted programs of those
# two, the tier's longest, run on the classic session only, since through Connect they would
# check the same kinds of Columns a second time.
THROUGH_CONNECT = [
    "tests/differential/test_engine_programs.py::test_program_against_oracle",
    *[f"tests/differential/test_engine_targeted.py::test_targeted_against_oracle[{name}]"
      for name in ("recursion", "negation")],
]


def test_differential_tests_through_connect(connect_server):
    env = dict(os.environ, DDLOG_TEST_REMOTE=connect_server.url)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", *THROUGH_CONNECT], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=3600)
    summary = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-3000:]
    assert " passed" in summary and "skipped" not in summary and "deselected" not in summary, \
        summary


