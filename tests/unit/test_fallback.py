"""When an incremental run of a recursive stratum gives up and recomputes
(runtime.fallback.Scratch.overrun): as soon as the iterations left until the last evaluation
from scratch's depth, at its current pace, would overrun its budget, or finishing would cost
more than twice it; never while small deltas keep the pace of a run from scratch; and how
long a give-up is remembered (runtime.fallback.GaveUp). (That a recompute gives what the
incremental run would have: tests/differential/test_engine_knobs.py.)"""
from __future__ import annotations

import math

import pytest

from runtime.fallback import GaveUp, Paces, Scratch

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


# Paces: the deltas of reachability's run from scratch over 100k edges (10 roots), by
# iteration, and what incremental iterations took there by the rows of their deltas (the
# medians of bench/README's probe of 100- to 1,000-edge epochs)
REACH = Scratch(seconds=4.8, rows=100_000, iterations=16,
                deltas=[10, 25, 80, 245, 676, 1867, 4696, 8920, 9292, 4317, 989, 166, 30, 5, 3, 1])
SEEN = [(2, 0.2), (10, 0.4), (40, 0.5), (130, 0.65), (300, 0.9), (700, 1.05), (3000, 1.2)]


def paces(seen=SEEN) -> Paces:
    p = Paces()
    for rows, seconds in seen:
        p.add(rows, seconds)
    return p


def test_paces_fit_the_seconds_an_iteration_by_the_log_of_its_rows():
    a, b = paces([(0, 5.0), (9, 1.0), (99, 2.0), (999, 3.0)]).fit()  # the horizon's left out
    assert a == pytest.approx(1.0 - b * math.log(10)) and b == pytest.approx(1 / math.log(10))
    assert paces(SEEN[:2]).fit() is None  # too few seen
    assert paces([(5, 1.0)] * 4).fit() == (1.0, 0.0)  # one size: its mean
    # more rows never make an iteration cheaper, whatever the noise says
    assert paces([(2, 1.0), (50, 0.3), (900, 0.2)]).fit()[1] == 0.0
    many = paces([(1, 9.0)] * 10 + [(5, 1.0)] * Paces.keep)  # only the last `keep` count
    assert many.fit() == (1.0, 0.0)


def test_a_change_that_spreads_gives_up_at_its_first_iterations():
    # a 1,000-edge insert: its first deltas 2 rows at iteration 1 (a twelfth of the run
    # from scratch's), 0.2 s an iteration; incrementally it took 17.4 s in all
    ahead = paces().ahead(REACH, 1, 2)
    assert ahead > REACH.seconds
    assert REACH.overrun(REACH.seconds, spent=0.3, i=2, pace=0.2, ahead=ahead)
    # the last pace alone said 14 iterations at 0.2 s: go on
    assert not REACH.overrun(REACH.seconds, spent=0.3, i=2, pace=0.2)


def test_a_change_that_stays_small_goes_on():
    # a 10-edge delete whose deltas start at iteration 8 with 6 rows (1.9 s incrementally)
    ahead = paces().ahead(REACH, 8, 6)
    assert ahead < 0.5 * REACH.seconds
    assert not REACH.overrun(REACH.seconds, spent=0.4, i=9, pace=0.2, ahead=ahead)
    # a dear last iteration still counts once
    assert REACH.overrun(REACH.seconds, spent=0.4, i=9, pace=5.0, ahead=ahead)


def test_paces_tell_nothing_without_what_they_need():
    assert paces(SEEN[:2]).ahead(REACH, 1, 2) is None  # no fit yet
    assert paces().ahead(REACH, 1, 0) is None  # nothing moved at the iteration
    assert paces().ahead(REACH, 16, 3) is None  # deeper than the run from scratch
    older = Scratch(seconds=4.8, rows=100_000, iterations=16)  # its deltas not kept
    assert paces().ahead(older, 1, 2) is None
    # past the depth's last delta, one iteration is left: at the fit's price of no rows
    a, _ = paces().fit()
    assert paces().ahead(REACH, 15, 3) == pytest.approx(a)


def test_the_first_guesses_misses_correct_the_next():
    p = paces()
    assert p.biased(None) is None and p.biased(3.0) == 3.0  # no run finished yet
    p.missed(told=4.0, took=8.0)
    p.missed(told=2.0, took=8.0)
    assert p.biased(3.0) == pytest.approx(3.0 * math.sqrt(2 * 4))  # their geometric mean
    p.missed(told=1.0, took=1000.0)  # within 4x either way, whatever one run did
    p.missed(told=1.0, took=1000.0)
    assert p.biased(1.0) == 4.0
    q = paces()
    for _ in range(Paces.keep_runs):
        q.missed(told=2.0, took=1.0)  # guesses too high: shrunk, by half at most
    assert q.biased(3.0) == pytest.approx(1.5)
    q.missed(told=0.0, took=1.0)  # nothing to learn from
    assert len(q.misses) == Paces.keep_runs


def test_a_warm_recompute_is_measured_no_dearer_than_the_warm_run_before_it():
    # the first recompute took 9 s, as it ran the traces' rebuild for the first time
    first = Scratch(seconds=9.0, rows=100_000, iterations=16)
    then = first.then(Scratch(7.0, 100_000, 16, deltas=[1, 2]))
    assert (then.seconds, then.cold, then.deltas) == (7.0, False, [1, 2])
    assert first.then(Scratch(10.0, 100_000, 16)).seconds == 9.0
    # over more rows, the run before scaled to them
    assert first.then(Scratch(12.0, 125_000, 16)).seconds == 11.25
    # after a run measured cold, as measured: the cold run's discount is a guess
    initial = Scratch(seconds=16.0, rows=100_000, iterations=16, cold=True)
    assert initial.then(first) == first
    # a recompute in a process's first epoch (cold itself) replaces it as it is
    cold = Scratch(20.0, 100_000, 16, cold=True)
    assert SCRATCH.then(cold) == cold


def test_a_guess_gives_up_within_its_margin_of_the_budget():
    # the guess: 7 s left against an 8 s budget
    assert not SCRATCH.overrun(BUDGET, spent=1.0, i=3, pace=0.3, ahead=7.0)
    assert SCRATCH.overrun(BUDGET, spent=1.0, i=3, pace=0.3, ahead=7.0, margin=0.8)
    # the margin is the guess's: the last pace's rule spends the whole budget (13 x 0.6 s)
    assert not SCRATCH.overrun(BUDGET, spent=1.0, i=3, pace=0.6, margin=0.8)
