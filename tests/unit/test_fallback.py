"""When an incremental run of a recursive stratum gives up and recomputes
(runtime.stratum.Scratch.overrun): as soon as the iterations left until the last evaluation
from scratch's depth, at its current pace, would overrun its budget, or finishing would cost
more than twice it; never while small deltas keep the pace of a run from scratch; and how
long a give-up is remembered (runtime.stratum.GaveUp). (That a recompute gives what the
incremental run would have: tests/differential/test_engine_knobs.py.)"""
from __future__ import annotations

from runtime.stratum import GaveUp, Scratch

# a run from scratch of 16 iterations took 8 s: 0.5 s an iteration; the budget is that 8 s
SCRATCH = Scratch(seconds=8.0, rows=100_000, iterations=16)
BUDGET = 8.0


def test_a_spent_budget_gives_up_unless_the_end_is_near():
    # past its budget, 8 iterations left at 0.5 s: 4 s ahead, 12.5 s in all, less than the
    # budget spent and a recompute would be (16 s): go on
    assert not SCRATCH.overrun(BUDGET, spent=8.5, i=8, pace=0.5)
    # ... but 16 left at 0.5 s after 8.5 s spent: 16.5 s in all
    assert SCRATCH.overrun(BUDGET, spent=8.5, i=0, pace=0.5)
    # the last iteration of a run that spent its budget finishes
    assert not SCRATCH.overrun(BUDGET, spent=8.1, i=15, pace=0.1)
    # not once it has spent twice its budget
    assert SCRATCH.overrun(BUDGET, spent=16.0, i=15, pace=0.1)


def test_small_deltas_at_the_pace_of_a_scratch_iteration_go_on():
    # from the first iteration on, at the pace of an iteration from scratch
    assert not SCRATCH.overrun(BUDGET, spent=0.5, i=1, pace=0.5)


def test_dear_iterations_with_many_left_give_up_early():
    # 2 s an iteration with 13 iterations left: 26 s ahead, against 8 s for a recompute
    assert SCRATCH.overrun(BUDGET, spent=2.5, i=3, pace=2.0)
    # the same pace two iterations before the depth: 4 s ahead, go on
    assert not SCRATCH.overrun(BUDGET, spent=6.0, i=14, pace=2.0)


def test_beyond_the_depth_one_iteration_is_left():
    assert not SCRATCH.overrun(BUDGET, spent=3.0, i=40, pace=7.9)
    assert SCRATCH.overrun(BUDGET, spent=3.0, i=40, pace=8.1)


def test_budget_zero_gives_up_after_the_first_iteration():
    assert SCRATCH.overrun(0.0, spent=0.01, i=1, pace=0.01)


def test_a_cold_run_counts_at_part_of_its_time_once_the_process_is_warm():
    cold = Scratch(seconds=8.0, rows=100_000, iterations=16, cold=True)
    assert cold.seconds_now(warm=True, cold_scratch=0.5) == 4.0
    assert cold.seconds_now(warm=False, cold_scratch=0.5) == 8.0  # both cold
    assert SCRATCH.seconds_now(warm=True, cold_scratch=0.5) == 8.0  # measured warm


def test_a_give_up_is_remembered_for_changes_as_large():
    # a change of 1,000 rows over 100,000 gave up: 1% of the stored rows
    gave_up = GaveUp(ratio=0.01, left=3)
    assert not gave_up.recompute_at_once(899, 100_000)  # smaller: tried incrementally
    assert gave_up.left == 3
    assert gave_up.recompute_at_once(1_000, 100_000)
    assert gave_up.recompute_at_once(5_000, 200_000)  # 2.5%
    # the same size over the stored rows a few epochs' batches later
    assert gave_up.recompute_at_once(1_000, 100_400)
    # the memory ran out: the next change as large is tried incrementally again
    assert not gave_up.recompute_at_once(1_000, 100_000)


def test_no_memory_tries_every_change():
    assert not GaveUp(ratio=0.0, left=0).recompute_at_once(10**6, 1)
