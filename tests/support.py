"""Small helpers every test tier shares."""
from __future__ import annotations

import os
import zlib


def seed_for(name: str) -> int:
    """A fixed seed per test (so runs repeat), unless DDLOG_TEST_SEED overrides it."""
    env = os.environ.get("DDLOG_TEST_SEED")
    return int(env) if env else zlib.crc32(name.encode()) % 100_000


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository
PROGRAMS = os.path.join(ROOT, "programs")
