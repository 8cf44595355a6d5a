"""Small helpers every test tier shares."""
from __future__ import annotations

import json
import os
import zlib


def seed_for(name: str) -> int:
    """A fixed seed per test (so runs repeat), unless DDLOG_TEST_SEED overrides it."""
    env = os.environ.get("DDLOG_TEST_SEED")
    return int(env) if env else zlib.crc32(name.encode()) % 100_000


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository
PROGRAMS = os.path.join(ROOT, "programs")


def resealed(manifest, drop: tuple[str, ...] = (), **fields) -> str:
    """A runtime/state Manifest's JSON with some fields replaced, or dropped, and its checksum
    made to match again: a manifest this ddlog did not write, but whose checksum holds."""
    from ddlog.runtime.state.manifest import _checksum

    body = {k: v for k, v in {**manifest.body(), **fields}.items() if k not in drop}
    return json.dumps({**body, "checksum": _checksum(body)})
