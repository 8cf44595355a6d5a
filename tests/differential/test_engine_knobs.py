"""The engine's shortcuts give exactly what the full computation gives: example programs against
the oracle after every epoch of seeded random insertions and deletions, under knobs that force
each way of evaluating an epoch (runtime/config.Config):

- `recompute`: every epoch of a stratum that has a past is evaluated from scratch and its
  traces rebuilt (the cost-based fallback, here taken whatever the change's size), and the
  epochs after it go on incrementally from the rebuilt traces;
- `pruned`: every stored batch is arranged by its key and every read that can be narrowed by
  the small side's keys is (lookups by literal keys, narrowed histories and joins), every
  delta materialised so that its keys are known;
- `abandoned`: every incremental run of a recursive stratum is abandoned after its first
  iteration (as when it overruns its time budget) and the stratum recomputed (and no give-up
  is remembered, so that every epoch tries incrementally first);
- `full`: nothing is narrowed, arranged or recomputed: every read scans the whole trace;
- `waves`: every operator's delta is materialised by an action of its own, never planned
  into its readers' (the default does that for the joins of a first evaluation of a
  recursive stratum, recording their traces afterwards as one join over the epoch,
  JoinOp.whole; for the joins of an incremental epoch of a recursive stratum whose past is
  small, whose distincts then scan that past; and for every operator of a small
  non-recursive stratum), so that both ways stay checked; and small results are read as
  the local relations they are, shuffled like any input (the default reads them as one
  partition, so that plans over them need no shuffle: physical.materialize_many).

Under all but `recompute` and `abandoned`, an incremental run goes on whatever it costs (the
fallback never gives up on it). The default knobs mix these by size; the other differential
tests run them.
"""
from __future__ import annotations

import os
import time
from dataclasses import replace

import pytest

from ddlog.runtime.config import Config
from tests.differential.harness import INCREMENTAL, Differential, ValueGen, Workload
from tests.differential.test_engine_programs import WORKLOADS
from tests.differential.test_lineage import CHAIN  # reachability alone
from tests.support import PROGRAMS, seed_for

# Under all but `recompute` and `abandoned`, the harness's INCREMENTAL: left to the fallback's
# budget, a recursive stratum over these tiny inputs (whose run from scratch takes a fraction
# of a second) gave up and was recomputed in most epochs: of its 6-7 runs after the first,
# 0-5 were incremental under these knobs, none under `pruned`.
KNOBS = {
    "recompute": Config(recompute_ratio=0.0),
    "pruned": replace(INCREMENTAL, arrange_rows=0, lookup_keys=1_000, driver_rows=5_000,
                      narrow_rows=0, inline_rows=-1),
    "abandoned": Config(recompute_ratio=float("inf"), incremental_budget=0.0,
                        recompute_memory=0),
    "full": replace(INCREMENTAL, arrangements=False, lookup_keys=-1, driver_rows=0),
    "waves": replace(INCREMENTAL, inline_fresh=False, inline_rows=-1,
                     one_partition_locals=False),
    # results of more than 6 rows live on the executors: most packs of several frames are
    # large, and their small frames are split off into local relations of their own
    "tiny_locals": replace(INCREMENTAL, local_rows=6),
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
    else:  # no epoch after the first recomputed, and the recursion ran incrementally
        later = [s for epoch in d.stats[1:] for s in epoch.strata]
        assert not [s for s in later if s.mode == "recomputed"], later
        assert any(s.mode == "incremental" and s.iterations > 2 for s in later), later


@pytest.mark.parametrize("inline", [True, False])
def test_one_action_per_iteration(spark, inline):
    """Reachability along a chain: every iteration finds one node. With the join planned
    into the distinct's action that is one Spark job per iteration (the iterations' deltas
    are local relations); materialised on its own, two. So it is in the first epoch, and in
    an incremental one that extends the chain (the state is small: its distinct scans the
    past instead of looking it up by keys). The small non-recursive stratum after it (a
    distinct of Reach, an antijoin, a distinct) is one action too, instead of one per
    operator."""
    from ddlog.api import Program

    n = 12
    # the incremental epoch's change is large next to the chain: not recomputed here
    config = Config(inline_fresh=inline, inline_rows=Config.inline_rows if inline else -1,
                    recompute_ratio=float("inf"), incremental_budget=float("inf"))
    p = Program.load(os.path.join(PROGRAMS, "reach.dl"), spark, config=config)
    p.insert("Edge", [(k, k + 1) for k in range(n)])
    p.insert("Root", [(0,)])
    p.commit()
    st = next(s for s in p.last_commit.strata if "Reach" in s.relations)
    assert st.mode == "fresh" and st.iterations == n + 2, st
    unreachable = next(s for s in p.last_commit.strata if "Unreachable" in s.relations)
    if inline:
        assert st.jobs <= st.iterations + 1, st
        assert unreachable.jobs == 1, unreachable
    else:
        assert st.jobs >= 2 * n, st
        assert unreachable.jobs >= 2, unreachable
    assert sorted(r[0] for r in p.relation("Reach").collect()) == list(range(n + 1))
    # an incremental epoch: the chain grows by m nodes, one per iteration
    m = 5
    p.insert("Edge", [(k, k + 1) for k in range(n, n + m)])
    p.commit()
    st = next(s for s in p.last_commit.strata if "Reach" in s.relations)
    assert st.mode == "incremental" and st.iterations >= m, st
    if inline:
        assert st.jobs <= st.iterations + 1, st
    else:
        assert st.jobs >= 2 * m, st
    assert sorted(r[0] for r in p.relation("Reach").collect()) == list(range(n + m + 1))
    # the join's trace, folded from one plan over the epoch (or materialised per
    # iteration), serves the epochs after it
    p.delete("Edge", [(5, 6)])
    p.insert("Edge", [(0, 9)])
    p.commit()
    assert sorted(r[0] for r in p.relation("Reach").collect()) == [
        0, 1, 2, 3, 4, 5, *range(9, n + m + 1)]


WIDE = """
input relation E(a: bigint, b: bigint)
output relation Loop(a: bigint)
output relation Fwd(a: bigint, b: bigint)
output relation Back(b: bigint, a: bigint)
output relation Src(a: bigint)
output relation Dst(b: bigint)
output relation Big(a: bigint, b: bigint)
output relation Two(a: bigint)
Loop(a) :- E(a, a).
Fwd(a, b) :- E(a, b), a < b.
Back(b, a) :- E(a, b), a > b.
Src(a) :- E(a, _).
Dst(b) :- E(_, b).
Big(a, b) :- E(a, b), a + b > 4.
Two(a) :- Fwd(a, b), Back(b, a).
"""
WIDE_WORKLOAD = Workload(values=ValueGen(ints=(0, 1, 2, 3, 4)))


def test_strata_side_by_side_share_actions(spark):
    """Six strata that read only the input (and one that reads two of them) are evaluated
    together, their operators' actions packed into one per round (runtime/stratum.
    run_together): the six report the same jobs, and the epoch runs as few jobs as a single
    small stratum would; the results agree with the oracle epoch after epoch."""
    from ddlog.api import Program

    p = Program.load(WIDE, spark, config=Config(recompute_ratio=float("inf")))
    d = Differential(p, "wide", seed_for("knobs/wide"))
    d.step([("insert", "E", (a, b)) for a in range(4) for b in range(4) if (a + b) % 3])
    for _ in range(3):
        d.run(WIDE_WORKLOAD, epochs=2, plan=("mixed", "net"))
        first = [s for s in p.last_commit.strata if s.relations[0] in
                 ("Loop", "Fwd", "Back", "Src", "Dst", "Big")]
        ran = [s for s in first if s.mode != "unchanged"]
        assert len({(s.jobs, s.seconds) for s in ran}) <= 1, ran  # one group's actions
        assert all(s.jobs <= 2 for s in ran), ran  # one action (and maybe a split)


@pytest.mark.parametrize("propagate", [False, True])
def test_actions_run_with_the_optimisers_settings_of_the_config(spark, monkeypatch, propagate):
    """Every action an epoch runs on the executors plans with constraint propagation as
    Config.constraint_propagation says (off unless asked), and the session's own setting is
    back after the epoch; the results agree with the oracle either way."""
    from ddlog.api import Program

    import ddlog.runtime.physical as physical

    key = "spark.sql.constraintPropagation.enabled"
    seen: list[str] = []
    original = physical._checkpoint_counted

    def recording(packed):
        seen.append(packed.sparkSession.conf.get(key))
        return original(packed)

    monkeypatch.setattr(physical, "_checkpoint_counted", recording)
    before = spark.conf.get(key, "true")
    assert before == "true"  # Spark's default: else the knob's two sides would look alike
    # results of more than 2 rows live on the executors: they are checkpointed
    config = Config(constraint_propagation=propagate, local_rows=2)
    p = Program.load(CHAIN, spark, config=config)
    d = Differential(p, f"reachability (constraint propagation {propagate})")
    d.step([("insert", "Root", (0,))] + [("insert", "Edge", (k, k + 1)) for k in range(6)])
    d.step([("delete", "Edge", (2, 3))])
    assert seen and set(seen) == {before if propagate else "false"}, seen
    assert spark.conf.get(key, "true") == before


@pytest.mark.parametrize("interpret_rows", [Config.interpret_rows, -1])
def test_actions_over_small_strata_interpret_what_they_would_compile(spark, interpret_rows):
    """An action whose results go to the executors (more than local_rows rows), over a
    stratum whose traces hold at most Config.interpret_rows rows, interprets its expressions:
    Spark compiles next to no code for it (CodegenMetrics counts every class compiled in
    this JVM, the local tasks' too); with interpret_rows=-1 it compiles as Spark does by
    default (124-130 classes for these epochs, 1 interpreted). The results agree with the
    oracle either way."""
    from ddlog.api import Program

    metrics = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics
    config = replace(INCREMENTAL, local_rows=2, interpret_rows=interpret_rows)
    p = Program.load(os.path.join(PROGRAMS, "tc.dl"), spark, config=config)
    d = Differential(p, f"tc (interpret_rows={interpret_rows})")
    d.step([("insert", "Edge", (k, k + 1)) for k in range(6)])
    before = metrics.METRIC_COMPILATION_TIME().getCount()
    d.step([("insert", "Edge", (6, 7)), ("insert", "Edge", (7, 8))])
    d.step([("delete", "Edge", (2, 3))])
    compiled = metrics.METRIC_COMPILATION_TIME().getCount() - before
    assert {s.mode for e in d.stats[1:] for s in e.strata} == {"incremental"}, d.stats
    if interpret_rows == -1:
        assert compiled >= 20, compiled
    else:
        assert compiled <= 5, compiled


def test_incremental_epochs_after_a_recompute(spark):
    """A recompute rebuilds the stratum's traces from its run from scratch: its relations'
    with their change (what later strata and the epoch's changes read), its operators'
    with their new content only (nothing reads an operator's change after its stratum).
    The incremental epochs after it read those traces' new pasts, and agree with the
    oracle."""
    from ddlog.api import Program

    config = Config(recompute_ratio=0.5, incremental_budget=float("inf"))
    p = Program.load(os.path.join(PROGRAMS, "tc.dl"), spark, config=config)
    d = Differential(p, "tc (a recompute, then incremental epochs)")
    edges = [(k, k + 1) for k in range(8)] + [(3, 0)]

    def mode() -> str:
        return next(s.mode for s in p.last_commit.strata if "Path" in s.relations)

    d.step([("insert", "Edge", e) for e in edges])
    d.step([("delete", "Edge", e) for e in edges[:4]]
           + [("insert", "Edge", (8, 2)), ("insert", "Edge", (5, 1)), ("insert", "Edge", (7, 9))])
    assert mode() == "recomputed"
    for ups in ([("insert", "Edge", (9, 4))], [("delete", "Edge", (5, 6))],
                [("delete", "Edge", (8, 2)), ("insert", "Edge", (6, 0))]):
        d.step(ups)
        assert mode() == "incremental"


def test_a_cold_run_from_scratch_counts_at_part_of_its_time_once_the_process_ran_an_epoch(
        spark, monkeypatch):
    """A run from scratch in the process's first epoch ran on a JVM that had not compiled
    the engine's code yet: the budgets of later epochs count it at config.cold_scratch of its
    time. A recompute in a later epoch is measured warm and counts whole. Every epoch agrees
    with the oracle."""
    from ddlog.api import Program
    from ddlog.runtime.stratum import StratumRuntime

    seen: list[tuple[bool, float]] = []  # (the scratch ran cold, budget / its time scaled)
    budget = StratumRuntime._budget

    def watched(self, imports):
        got = budget(self, imports)
        if got is not None and "Path" in self.circuit.relations:
            scale = self.scratch.scale(self._stored(imports))
            seen.append((self.scratch.cold, got / (self.scratch.seconds * scale)))
        return got

    monkeypatch.setattr(StratumRuntime, "_budget", watched)
    # a budget no run overruns (the epochs' modes are the ratio's), a cold run at a quarter
    config = Config(recompute_ratio=0.5, incremental_budget=1000.0, cold_scratch=0.25)
    p = Program.load(os.path.join(PROGRAMS, "tc.dl"), spark, config=config)
    d = Differential(p, "tc (a cold run from scratch)")

    def mode() -> str:
        return next(s.mode for s in p.last_commit.strata if "Path" in s.relations)

    d.step([("insert", "Edge", (k, k + 1)) for k in range(8)])
    assert mode() == "fresh" and not seen
    d.step([("insert", "Edge", (8, 9))])
    assert mode() == "incremental" and seen == [(True, pytest.approx(1000.0 * 0.25))]
    d.step([("delete", "Edge", (k, k + 1)) for k in range(6)])  # most of it: recomputed
    assert mode() == "recomputed"
    seen.clear()
    d.step([("insert", "Edge", (0, 1))])
    assert mode() == "incremental" and seen == [(False, pytest.approx(1000.0))]


def test_a_run_from_scratch_is_measured_with_its_traces_folds(spark, monkeypatch):
    """What a run from scratch took, against which later runs are budgeted, counts the
    epoch's end folding its traces (a recompute that a give-up leads to pays for that fold
    too): here a fold slowed by a second. So it does for a recompute, whose measure is taken
    at its epoch's end too. Every epoch agrees with the oracle."""
    from ddlog.api import Program
    from ddlog.runtime.engine import Engine

    folds = Engine._driver_folds

    def slow(self, traces, batches):
        time.sleep(1.0)
        return folds(self, traces, batches)

    monkeypatch.setattr(Engine, "_driver_folds", slow)
    p = Program.load(os.path.join(PROGRAMS, "tc.dl"), spark,
                     config=Config(recompute_ratio=0.0))
    d = Differential(p, "tc (a run from scratch with its folds)")
    stratum = next(s for s in p.engine.strata if "Path" in s.circuit.relations)
    d.step([("insert", "Edge", (k, k + 1)) for k in range(6)])
    ran = next(s for s in p.last_commit.strata if "Path" in s.relations)
    assert ran.mode == "fresh" and stratum.measured is None
    # the only stratum evaluated from scratch: the whole fold is its own
    assert stratum.scratch.seconds >= ran.seconds + 1.0, (stratum.scratch, ran)
    first = stratum.scratch.seconds
    d.step([("delete", "Edge", (2, 3))])
    ran = next(s for s in p.last_commit.strata if "Path" in s.relations)
    assert ran.mode == "recomputed" and stratum.measured is None
    assert stratum.scratch.seconds >= 1.0 and stratum.scratch.seconds != first


def test_a_give_up_is_remembered(spark):
    """After an incremental run gives up (here after its first iteration: a budget of 0), the
    next changes about as large recompute at once, as many as the memory holds; then a
    change as large tries again. Every epoch agrees with the oracle either way."""
    from ddlog.api import Program

    config = Config(recompute_ratio=float("inf"), incremental_budget=0.0, recompute_memory=2)
    p = Program.load(os.path.join(PROGRAMS, "tc.dl"), spark, config=config)
    d = Differential(p, "tc (a give-up remembered)")
    stratum = next(s for s in p.engine.strata if "Path" in s.circuit.relations)

    def step(ups: list, left: int) -> None:
        d.step(ups)
        mode = next(s.mode for s in p.last_commit.strata if "Path" in s.relations)
        assert mode == "recomputed" and stratum.gave_up is not None, mode
        assert stratum.gave_up.left == left, (ups, stratum.gave_up)

    # a binary tree of 40 edges (shallow: few iterations); a change of two is 5% of them (the
    # stored rows, counted batch by batch, grow by each epoch's change: GaveUp.like)
    d.step([("insert", "Edge", (k // 2, k)) for k in range(1, 41)])
    step([("insert", "Edge", (40, 41)), ("insert", "Edge", (40, 42))], 2)  # tried, gave up
    step([("delete", "Edge", (0, 1)), ("delete", "Edge", (2, 5))], 1)  # at once
    step([("insert", "Edge", (42, 3)), ("insert", "Edge", (0, 1))], 0)  # at once
    step([("delete", "Edge", (42, 3)), ("delete", "Edge", (1, 3))], 2)  # tried again
    # smaller: tried, gave up; a change of one row is not remembered (GaveUp.least): the
    # memory is the last two-row change's
    ratio = stratum.gave_up.ratio
    step([("insert", "Edge", (2, 5))], 2)
    assert stratum.gave_up.ratio == ratio


def test_an_incremental_runs_paces_tell_it_to_give_up(spark, monkeypatch):
    """The evaluation from scratch keeps its deltas' rows by iteration (Scratch.deltas), and
    an incremental run its iterations' paces (Paces); before each iteration after the first,
    the run asks them what the iterations left will take (Paces.ahead, of the last iteration
    run, its rows and the rows before it) and gives up when that is more than its budget,
    though the last pace alone would go on; a give-up that cost next to nothing is not
    remembered. Every epoch agrees with the oracle."""
    from ddlog.api import Program
    from ddlog.runtime.fallback import Paces

    asked: list[tuple[int, int]] = []
    dear = [False]  # whether the paces say the rest is dearer than any budget
    ahead = Paces.ahead

    def told(self, scratch, i, rows, before):
        asked.append((i, rows))
        return 1e9 if dear[0] and rows else ahead(self, scratch, i, rows, before)

    monkeypatch.setattr(Paces, "ahead", told)
    # a budget no run overruns by its last pace (the rows are few, the pace is quick)
    config = Config(recompute_ratio=float("inf"), incremental_budget=1000.0,
                    recompute_memory=0)
    p = Program.load(os.path.join(PROGRAMS, "reach.dl"), spark, config=config)
    d = Differential(p, "reach (paces that tell a run to give up)")
    stratum = next(s for s in p.engine.strata if "Reach" in s.circuit.relations)

    def mode() -> str:
        return next(s.mode for s in p.last_commit.strata if "Reach" in s.relations)

    n = 8
    d.step([("insert", "Root", (0,))] + [("insert", "Edge", (k, k + 1)) for k in range(n)])
    assert mode() == "fresh" and not asked
    deltas = stratum.scratch.deltas
    # one delta an iteration, each iteration's rows; the chain reached one node an iteration
    assert len(deltas) == stratum.scratch.iterations and all(deltas[:n + 1]), deltas
    assert not stratum.paces.seen
    # the chain grows by 3 nodes: iteration 0 moves nothing (the change meets the past at
    # iteration n + 1, where the run jumps), then one node an iteration, each asked about
    # after it ran
    d.step([("insert", "Edge", (k, k + 1)) for k in range(n, n + 3)])
    assert mode() == "incremental"
    assert asked[0] == (0, 0) and [a for a in asked if a[1]] == [(9, 1), (10, 1), (11, 1)]
    # the horizon's not seen; each after the rows of the iterations before it
    assert [seen[:2] for seen in stratum.paces.seen] == [(1, 0), (1, 1), (1, 2)]
    # the same change again, the rest told dear: given up after its first iteration that
    # moved, and recomputed
    asked.clear()
    dear[0] = True
    d.step([("insert", "Edge", (k, k + 1)) for k in range(n + 3, n + 6)])
    assert mode() == "recomputed" and asked == [(0, 0), (12, 1)], asked
    # it gave up having spent next to nothing of its budget: not remembered (GaveUp.cheap),
    # so the next change as large tries incrementally
    assert stratum.gave_up is None
    dear[0] = False
    d.step([("insert", "Edge", (k, k + 1)) for k in range(n + 6, n + 9)])
    assert mode() == "incremental"
    # the recompute's deltas are the new evaluation from scratch's: the longer chain's
    assert len(stratum.scratch.deltas) > len(deltas)


def test_a_guess_is_corrected_by_how_it_misjudged_finished_runs(spark, monkeypatch):
    """A finished incremental run keeps, per rule, what the rest of it took against what its
    checks foresaw (Paces.misses); a guess is multiplied by the median of its misses, so that
    one that overshot earlier runs goes on where it alone would give up. Here every run's
    budget is 100 s and its paces' guess 150 s, above the 80 s the guess margin allows:
    uncorrected the change is given up and recomputed; corrected by misses of a quarter it
    finishes incrementally, and learns how far its guess overshot. Every epoch agrees with
    the oracle."""
    from ddlog.api import Program
    from ddlog.runtime.fallback import Paces
    from ddlog.runtime.stratum import StratumRuntime

    monkeypatch.setattr(StratumRuntime, "_budget", lambda self, imports: 100.0)
    monkeypatch.setattr(Paces, "ahead", lambda self, scratch, i, rows, before:
                        150.0 if rows else None)
    config = Config(recompute_ratio=float("inf"), recompute_memory=0)
    p = Program.load(os.path.join(PROGRAMS, "reach.dl"), spark, config=config)
    d = Differential(p, "reach (a guess corrected by its misses)")
    stratum = next(s for s in p.engine.strata if "Reach" in s.circuit.relations)

    def mode() -> str:
        return next(s.mode for s in p.last_commit.strata if "Reach" in s.relations)

    n = 8
    d.step([("insert", "Root", (0,))] + [("insert", "Edge", (k, k + 1)) for k in range(n)])
    assert mode() == "fresh" and stratum.paces.misses == {}
    d.step([("insert", "Edge", (k, k + 1)) for k in range(n, n + 3)])
    assert mode() == "recomputed" and stratum.paces.misses == {}  # given up: nothing learnt
    stratum.paces.misses = {"guess": [0.25] * 3}
    d.step([("insert", "Edge", (k, k + 1)) for k in range(n + 3, n + 6)])
    assert mode() == "incremental"
    # the run finished in far less than the 150 s its checks foresaw: a fourth miss, tiny;
    # the depth rule's (at the run's mean pace) is kept too
    misses = stratum.paces.misses
    assert len(misses["guess"]) == 4 and misses["guess"][-1] < 0.25, misses
    assert len(misses["depth"]) == 1, misses
    # what durable state keeps of them, read back (runtime/state/manifest.py checks them)
    kept = {k: list(v) for k, v in misses.items()}
    stratum.remember_costs(stratum.costs())
    assert stratum.paces.misses == kept


def test_a_run_finished_over_its_budget_is_remembered(spark, monkeypatch):
    """An incremental run that finishes, but over its budget, cost more than a recompute
    would have, as one that gives up does: the next change about as large recomputes at
    once. (Here no run gives up, and every budget is spent: a tiny one.)"""
    from ddlog.api import Program
    from ddlog.runtime.fallback import Scratch

    monkeypatch.setattr(Scratch, "overrun", lambda *args: False)
    config = Config(recompute_ratio=float("inf"), incremental_budget=1e-9, recompute_memory=1)
    p = Program.load(os.path.join(PROGRAMS, "tc.dl"), spark, config=config)
    d = Differential(p, "tc (an over-budget run remembered)")
    stratum = next(s for s in p.engine.strata if "Path" in s.circuit.relations)

    def step(ups: list, mode: str) -> None:
        d.step(ups)
        assert next(s.mode for s in p.last_commit.strata if "Path" in s.relations) == mode
        assert stratum.gave_up is not None

    d.step([("insert", "Edge", (k // 2, k)) for k in range(1, 41)])
    assert stratum.gave_up is None  # a first epoch has no budget
    step([("insert", "Edge", (40, 41)), ("insert", "Edge", (40, 42))], "incremental")
    step([("delete", "Edge", (0, 1)), ("delete", "Edge", (2, 5))], "recomputed")
    step([("insert", "Edge", (0, 1)), ("insert", "Edge", (2, 5))], "incremental")


def test_an_iterations_action_holds_its_delta_not_the_epochs_history(spark, monkeypatch):
    """A distinct fetches, once per epoch, the past of every row the epoch touches (its
    history), which tells later iterations where each row's past has entries. Deleting the
    first edge of a chain touches one more node an iteration: the history grows to the
    chain's length while every delta is one row. An iteration's action materialises its
    delta and the history it adds, with the whole history again only every max_cur_batches
    iterations (so that the plans reading it stay small): over the epoch, a few rows an
    iteration. Materialised whole in every iteration, it was the sum of the history's sizes,
    quadratic in the chain's length, and a large change's iterations past local_rows touched
    rows all ran the large path."""
    from ddlog.api import Program
    from ddlog.runtime.operators.distinct import DistinctOp

    held, history = [], []
    settle = DistinctOp._settle

    def counted(self, *args):
        fr = args[-1]
        held.append(fr.rows if fr is not None else 0)
        out = settle(self, *args)
        history.append(self.hist_rows)
        return out

    monkeypatch.setattr(DistinctOp, "_settle", counted)
    n = 24
    # the distinct reads the past by key (a small past would be scanned whole instead)
    config = Config(inline_incremental=False, recompute_ratio=float("inf"),
                    incremental_budget=float("inf"))
    p = Program.load(os.path.join(PROGRAMS, "reach.dl"), spark, config=config)
    p.insert("Edge", [(k, k + 1) for k in range(n)])
    p.insert("Root", [(0,)])
    p.commit()
    held.clear()
    history.clear()
    p.delete("Edge", [(0, 1)])
    p.commit()
    st = next(s for s in p.last_commit.strata if "Reach" in s.relations)
    assert st.mode == "incremental" and st.iterations >= n, st
    assert max(history) >= n - 1, history  # the history reached the chain's length
    assert sum(held) <= 5 * n, held  # not 1 + 2 + ... + n
    assert [r[0] for r in p.relation("Reach").collect()] == [0]


def test_a_history_too_large_to_hold_whole_stays_in_parts(spark, monkeypatch):
    """Once the rows an epoch touched outgrow local_rows, a distinct's history held whole
    again would take its iteration's action down the large path (a checkpoint, read by
    shuffles afterwards): it stays in parts instead, up to four times max_cur_batches of them.
    And an iteration after one that did take it, whose step is small, takes the small path:
    the stratum judges the next iteration by the last one's deltas, not by the history its
    frames held. The same chain delete as above, with local_rows and max_cur_batches tiny:
    over the epoch, only the iteration that holds the history whole at last is large."""
    from ddlog.api import Program
    from ddlog.runtime import stratum
    from ddlog.runtime.operators.distinct import DistinctOp

    ests, history, actions = [], [], []
    step, materialize_many = DistinctOp.step, stratum.materialize_many

    def stepped(self, i):
        st = step(self, i)
        if st is not None:
            ests.append(st.est)
            history.append(self.hist_rows)
        return st

    def materialized(*args, expect_large=False, **kwargs):
        actions.append(expect_large)
        return materialize_many(*args, expect_large=expect_large, **kwargs)

    monkeypatch.setattr(DistinctOp, "step", stepped)
    monkeypatch.setattr(stratum, "materialize_many", materialized)
    n = 14
    config = Config(inline_incremental=False, recompute_ratio=float("inf"),
                    incremental_budget=float("inf"), local_rows=6, max_cur_batches=2)
    p = Program.load(CHAIN, spark, config=config)
    p.insert("Edge", [(k, k + 1) for k in range(n)])
    p.insert("Root", [(0,)])
    p.commit()
    ests.clear()
    history.clear()
    actions.clear()
    p.delete("Edge", [(0, 1)])
    p.commit()
    assert max(history) > config.local_rows, history  # the history outgrew local_rows
    large = sum(1 for a in actions if a)
    # every large action is one whose own step is estimated large ...
    assert large == sum(1 for e in ests if e > config.local_rows), (actions, ests)
    # ... which only the iteration holding the history whole after 4 * 2 parts is (held
    # whole every 2 parts, as long as the chain is, it was every second iteration's)
    assert large == 1, (actions, ests, history)
    assert [r[0] for r in p.relation("Reach").collect()] == [0]
