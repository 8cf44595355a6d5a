"""Every decision of the cost-based fallback, taken both ways, gives the oracle's answer
(runtime/fallback.Decider). The fallback decides, for each stratum in each epoch:

- at the epoch's start, whether the change is large enough to evaluate from scratch at once
  (the ratio rule), and whether it is as large as one that cost too much before (a remembered
  give-up, GaveUp);
- before each iteration of an incremental run of a recursive stratum, whether to give it up
  and recompute;
- whether a give-up is remembered, and whether a run that finished cost more than a
  recompute would have (remembered too).

By the clock those are reached only when the timing falls that way; under
`Config(decisions="random:SEED")` each is drawn from a seeded source, so that seeded runs
reach all of them, in every state the stratum can be in when it is asked (its first epoch, an
epoch with no change, a change at its first iteration or later ones, after a give-up, beside
another stratum that recomputes in the same epoch, inputs that are all gone), and every epoch
is compared with tests/oracle. A failure names the program, the decisions' seed and the
epoch (`DDLOG_TEST_SEED` replays the epochs' data). `decisions="rows"` decides by row counts
only: the same epochs take the same paths and Spark jobs in every run.
"""
from __future__ import annotations

import os
import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlog.runtime.config import Config
from tests.differential.harness import Differential, Workload
from tests.differential.test_engine_programs import WORKLOADS
from tests.support import PROGRAMS, seed_for

# recursion with negation after it; a non-linear recursion over several relations; recursion
# beside aggregates. For each, the decisions' seeds: chosen so that, together, they take every
# decision both ways (checked below).
SEEDS = {"reach": (1, 2, 3), "pointsto": (1, 2, 3), "groups": (4, 6, 7)}
# the epochs' kinds: a load, changes of every size, a change of nothing, and every input
# row deleted (a recompute then evaluates nothing) followed by a reload
PLAN = ("load", "mixed", "break", "net", "empty", "mixed", "purge", "purge", "purge",
        "purge", "purge", "purge", "load", "mixed")


def drive(spark, name: str, decisions: str, epochs: int = len(PLAN)) -> Differential:
    from ddlog.api import Program

    p = Program.load(os.path.join(PROGRAMS, f"{name}.dl"), spark,
                     config=Config(decisions=decisions))
    d = Differential(p, f"{name} decisions={decisions}", seed_for(f"decisions/{name}"))
    d.run(WORKLOADS.get(name, Workload()), epochs=epochs, plan=PLAN)
    return d


def taken(ds: list[Differential]) -> Counter:
    """Which way each decision went, over every stratum of every epoch (StratumStats.why)."""
    seen: Counter = Counter()
    for d in ds:
        for epoch in d.stats:
            for s in epoch.strata:
                why = s.why
                seen[("mode", s.mode)] += 1
                if s.mode == "recomputed" and why.startswith("random"):
                    seen["recomputed at the start"] += 1
                if why.startswith("gave up"):
                    seen["gave up"] += 1
                    if int(re.match(r"gave up before iteration (\d+)", why)[1]) > 1:
                        seen["gave up after its first iterations"] += 1
                if "as large as a change that cost more" in why:
                    seen["recomputed as a remembered give-up"] += 1
                if "finished over its budget" in why:
                    seen["finished too dear"] += 1
                if s.mode == "incremental" and s.iterations > 1:
                    seen["incremental to the end"] += 1
    return seen


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_every_decision_both_ways_gives_the_oracles_answer(spark, name):
    ds = [drive(spark, name, f"random:{seed}") for seed in SEEDS[name]]
    seen = taken(ds)
    for way in ("recomputed at the start", "gave up", "gave up after its first iterations",
                "recomputed as a remembered give-up",
                "finished too dear", "incremental to the end", ("mode", "fresh"),
                ("mode", "unchanged")):
        assert seen[way], f"{name}: no decision went '{way}' under seeds {SEEDS[name]}: {seen}"


def test_a_recompute_of_inputs_that_are_all_gone(spark):
    """A stratum recomputed when every row of its inputs has been deleted evaluates nothing
    (it used to stop on an internal assertion), and the next epochs go on from there."""
    from ddlog.api import Program

    p = Program.load(os.path.join(PROGRAMS, "reach.dl"), spark,
                     config=Config(recompute_ratio=0.0))
    d = Differential(p, "reach, everything deleted")
    edges = [(1, 2), (2, 3), (3, 1), (4, 5)]
    d.step([("insert", "Edge", e) for e in edges] + [("insert", "Root", (1,))])
    d.step([("delete", "Edge", e) for e in edges] + [("delete", "Root", (1,))])
    assert {s.mode for s in p.last_commit.strata if s.rows_in} == {"recomputed"}
    d.step([("insert", "Edge", (7, 8)), ("insert", "Root", (7,))])
    d.step([("delete", "Edge", (7, 8))])


def test_rows_decide_the_same_paths_and_jobs_every_run(spark):
    """Under decisions="rows", two runs of the same epochs take the same path in every
    stratum and the same number of Spark jobs, whatever the machine's load: a thread keeps
    the driver busy during the second run."""
    import threading

    def paths(d: Differential) -> list:
        return [[(s.stratum, s.mode, s.iterations, s.jobs) for s in epoch.strata]
                for epoch in d.stats]

    first = drive(spark, "reach", "rows", epochs=8)
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            sum(k * k for k in range(10_000))

    t = threading.Thread(target=busy)
    t.start()
    try:
        second = drive(spark, "reach", "rows", epochs=8)
    finally:
        stop.set()
        t.join()
    assert paths(first) == paths(second)
    assert any("stored" in s.why for e in first.stats for s in e.strata)


@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(name=st.sampled_from(("reach", "tc", "samegen", "groups", "bom")),
       seed=st.integers(min_value=0, max_value=10**6))
def test_drawn_decisions_over_drawn_programs(spark, name, seed):
    """Seeds and programs drawn by hypothesis; the failing example names both."""
    drive(spark, name, f"random:{seed}", epochs=6)


def test_an_internal_inconsistency_is_an_error_naming_the_stratum(spark, monkeypatch):
    """A failed invariant inside a stratum's run (here: the give-up's recompute) is an
    EvaluationError naming the stratum and its last decision, not a traceback, and the
    program is as it was before the commit."""
    from ddlog.api import Program
    from ddlog.errors import EvaluationError
    from ddlog.runtime.fallback import Decision
    from ddlog.runtime.stratum import StratumRuntime

    p = Program.load(os.path.join(PROGRAMS, "reach.dl"), spark,
                     config=Config(decisions="random:1"))
    d = Differential(p, "reach, a broken recompute")
    d.step([("insert", "Edge", (1, 2)), ("insert", "Edge", (2, 3)), ("insert", "Root", (1,))])

    def broken(self, *args, **kwargs):
        raise AssertionError("the recompute's invariant")

    monkeypatch.setattr(StratumRuntime, "_recompute", broken)
    monkeypatch.setattr(StratumRuntime, "_recompute_pays",
                        lambda self, imports, rows: Decision(True, "forced by the test"))
    p.insert("Edge", [(3, 4)])
    with pytest.raises(EvaluationError, match=r"internal error in stratum \d+ \(\w+.*"
                                              r"last decision: recompute: forced by the test.*"
                                              r"AssertionError: the recompute's invariant"):
        p.commit()
    monkeypatch.undo()
    d.check_relations()  # as before the failed commit
    p.rollback()
    d.step([("insert", "Edge", (3, 4))])
