"""The engine's shortcuts give exactly what the full computation gives: example programs against
the oracle after every epoch of seeded random insertions and deletions, under knobs that force
each way of evaluating an epoch (runtime/config.Config):

- `recompute`: every epoch of a stratum that has a past is evaluated from scratch and its
  traces rebuilt (the cost-based fallback, here taken whatever the change's size), and the
  epochs after it go on incrementally from the rebuilt traces;
- `pruned`: every stored batch is arranged by its key and every read that can be narrowed by
  the small side's keys is (lookups by literal keys, narrowed histories and joins);
- `abandoned`: every incremental run of a recursive stratum is abandoned after its first
  iteration (as when it overruns its time budget) and the stratum recomputed;
- `full`: nothing is narrowed, arranged or recomputed: every read scans the whole trace.

The default knobs mix these by size; the other differential tests run them.
"""
from __future__ import annotations

import os

import pytest

from runtime.config import Config
from tests.differential.harness import Differential
from tests.differential.test_engine_programs import WORKLOADS
from tests.support import PROGRAMS, seed_for

KNOBS = {
    "recompute": Config(recompute_ratio=0.0),
    "pruned": Config(recompute_ratio=float("inf"), arrange_rows=0, lookup_keys=1_000,
                     driver_rows=5_000, narrow_rows=0),
    "abandoned": Config(recompute_ratio=float("inf"), incremental_budget=0.0),
    "full": Config(recompute_ratio=float("inf"), arrangements=False, lookup_keys=-1,
                   driver_rows=0),
}

# a linear recursion, and a non-linear one over several relations
PROGRAMS_UNDER_TEST = ("tc", "pointsto")


@pytest.mark.parametrize("knobs", sorted(KNOBS))
@pytest.mark.parametrize("name", PROGRAMS_UNDER_TEST)
def test_program_under_knobs(spark, name, knobs):
    from ddlog.api import Program

    p = Program.load(os.path.join(PROGRAMS, f"{name}.dl"), spark, config=KNOBS[knobs])
    d = Differential(p, f"{name} ({knobs})", seed_for(f"knobs/{name}/{knobs}"))
    d.run(WORKLOADS[name], epochs=8)
    modes = {s.mode for s in p.last_commit.strata}  # the last epoch deletes half the rows
    if knobs == "recompute":
        assert "recomputed" in modes and "incremental" not in modes, modes
    elif knobs == "abandoned":  # recursive strata only: the others run one iteration
        assert "recomputed" in modes, modes
