"""When an incremental run of a recursive stratum gives up and recomputes
(runtime.fallback.Scratch.overrun): as soon as the iterations left until the last evaluation
from scratch's depth, at its current pace, would overrun its budget, or finishing would cost
more than twice it; never while small deltas keep the pace of a run from scratch; and how
long a give-up is remembered (runtime.fallback.GaveUp). (That a recompute gives what the
incremental run would have: tests/differential/test_engine_knobs.py.)"""
from __future__ import annotations

import math

import pytest

from ddlog.runtime.fallback import Check, Decider, GaveUp, Paces, Run, Scratch

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
# iteration, and incremental iterations seen there: (rows, rows of the run before, seconds),
# from bench/paces.py's epochs run to their end (a 10-edge delete, a 100-edge insert, the
# start of a 1,000-edge insert)
REACH = Scratch(seconds=4.8, rows=100_000, iterations=16,
                deltas=[10, 25, 81, 244, 665, 1842, 4659, 8963, 9420, 4244, 991, 167, 31, 5, 1])
SEEN = [(6, 0, 0.2), (23, 6, 0.5), (38, 29, 0.4), (24, 67, 0.4), (3, 91, 0.3),
        (2, 0, 0.2), (6, 2, 0.4), (18, 8, 0.4), (80, 26, 0.6), (219, 106, 0.8),
        (409, 325, 0.9), (483, 734, 0.9), (284, 1217, 0.9), (73, 1501, 0.8),
        (2, 0, 0.3), (8, 2, 0.4), (20, 10, 1.0), (64, 30, 1.5), (218, 94, 2.0)]


def paces(seen=SEEN) -> Paces:
    p = Paces()
    for rows, before, seconds in seen:
        p.add(rows, before, seconds)
    return p


def model(rows: int, before: int) -> float:
    return 0.1 + 0.2 * math.log1p(rows) + 0.05 * math.log1p(before)


MODELLED = [(r, b, model(r, b)) for r in (1, 10, 100, 1000) for b in (0, 50, 5000)]


def test_paces_fit_the_seconds_an_iteration_by_the_logs_of_its_rows_and_its_runs():
    a, b, c = paces(MODELLED + [(0, 9, 5.0)]).fit()
    assert (a, b, c) == pytest.approx((0.1, 0.2, 0.05))  # the horizon's (no rows) left out
    assert paces(SEEN[:Paces.least - 1]).fit() is None  # too few seen
    assert paces([(5, 0, 1.0)] * 6).fit() == pytest.approx((1.0, 0.0, 0.0))  # one size
    # more rows never make an iteration cheaper, whatever the noise says: that term goes
    a, b, c = paces([(r, 0, 2.0 - 0.1 * math.log1p(r)) for r in (1, 10, 100, 1000)] * 2).fit()
    assert b == 0.0 and c == 0.0 and a == pytest.approx(2.0 - 0.1 * 2.7, abs=0.2)
    many = paces([(1, 0, 9.0)] * 10 + [(5, 0, 1.0)] * Paces.keep)  # only the last `keep`
    assert many.fit() == pytest.approx((1.0, 0.0, 0.0))


def test_a_change_that_spreads_gives_up_at_its_first_iterations():
    # a 1,000-edge insert: its first deltas 2 rows at iteration 1 (a twelfth of the run
    # from scratch's), 0.3 s; run to its end it took 18.6 s
    ahead = paces().ahead(REACH, 1, 2, 0)
    assert ahead > REACH.seconds
    assert REACH.overrun(REACH.seconds, spent=0.3, i=2, pace=0.3, ahead=ahead)
    # the last pace alone said 14 iterations at 0.3 s: go on
    assert not REACH.overrun(REACH.seconds, spent=0.3, i=2, pace=0.3)


def test_a_change_that_stays_small_goes_on():
    # a 10-edge delete whose deltas start at iteration 8 with 6 rows (2.4 s in all)
    ahead = paces().ahead(REACH, 8, 6, 0)
    assert ahead < 0.5 * REACH.seconds
    assert not REACH.overrun(REACH.seconds, spent=0.4, i=9, pace=0.2, ahead=ahead)
    # a dear last iteration still counts once
    assert REACH.overrun(REACH.seconds, spent=0.4, i=9, pace=5.0, ahead=ahead)


def test_iterations_after_many_rows_are_dearer():
    # each iteration left is priced after the rows made before it, the guessed ones too
    p = paces(MODELLED)
    share = 6 / REACH.deltas[8]
    made, expected = 5_006, 0.0
    for d in REACH.deltas[9:]:
        if share * d >= 0.5:  # less than half a row left: the change died out
            expected += model(share * d, made)
            made += share * d
    assert p.ahead(REACH, 8, 6, 5_000) == pytest.approx(expected)
    assert p.ahead(REACH, 8, 6, 5_000) > p.ahead(REACH, 8, 6, 0)


def test_a_guess_leaves_out_the_depths_tail_where_the_change_died_out():
    # 6 rows at iteration 8, a 1,570th of the run from scratch's: at its share, iterations
    # 9 and 10 have 2.7 and 0.6 rows left, the later ones less than half a row
    p = paces(MODELLED)
    assert p.ahead(REACH, 8, 6, 0) == pytest.approx(
        model(6 * 4244 / 9420, 6) + model(6 * 991 / 9420, 6 + 6 * 4244 / 9420))


def test_paces_tell_nothing_without_what_they_need():
    assert paces(SEEN[:2]).ahead(REACH, 1, 2, 0) is None  # no fit yet
    assert paces().ahead(REACH, 1, 0, 0) is None  # nothing moved at the iteration
    assert paces().ahead(REACH, 15, 3, 0) is None  # deeper than the run from scratch
    older = Scratch(seconds=4.8, rows=100_000, iterations=16)  # its deltas not kept
    assert paces().ahead(older, 1, 2, 0) is None
    # past the depth's last delta, one iteration is left: at the fit's price of no rows
    a, _, c = paces().fit()
    assert paces().ahead(REACH, 14, 3, 10) == pytest.approx(a + c * math.log1p(13))


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


def test_a_give_up_at_a_runs_first_iterations_is_not_remembered():
    assert not GaveUp.remembered(spent=0.5, budget=8.0)
    assert GaveUp.remembered(spent=2.0, budget=8.0)
    assert GaveUp.remembered(spent=0.01, budget=0.0)  # a budget of 0: always


def test_a_rules_misses_in_finished_runs_correct_it():
    # a run foresaw 10 s left after 1 s by the depth rule and 20 s by its guess, then 6 s
    # after 3 s by the depth rule only; it finished at 5 s: 4 s and 2 s were left
    p = Paces()
    checks = [Check(spent=1.0, depth=10.0, guess=20.0), Check(spent=3.0, depth=6.0, guess=None)]
    p.learn(checks, total=5.0)
    assert p.misses == {"depth": [pytest.approx(6.0 / 16.0)], "guess": [pytest.approx(0.2)]}
    assert p.correction("depth") == 1.0  # one run tells nothing yet (Paces.known)
    p.learn([Check(spent=1.0, depth=4.0, guess=None)], total=3.0)  # foresaw 4, took 2
    assert p.correction("depth") == pytest.approx((6.0 / 16.0 + 0.5) / 2)  # the median
    assert p.correction("guess") == 1.0
    # within its bounds: a rule is never switched off, nor made to give up every run
    low = Paces(misses={"guess": [0.01] * 3})
    high = Paces(misses={"depth": [100.0] * 3})
    assert low.correction("guess") == Paces.bounds[0]
    assert high.correction("depth") == Paces.bounds[1]
    # only the last runs count
    for _ in range(Paces.runs):
        high.learn([Check(spent=0.0, depth=1.0, guess=None)], total=1.0)
    assert high.misses["depth"] == [1.0] * Paces.runs and high.correction("depth") == 1.0
    # a run that foresaw nothing (no check) teaches nothing
    p.learn([], total=9.0)
    assert len(p.misses["depth"]) == 2


def test_a_corrected_rule_goes_on_where_it_gave_up():
    # points-to's 1-row changes: 23 iterations left at 2.2 s foresaw 51 s against a 42 s
    # budget, and finished in 25 s; corrected by earlier runs' misses it goes on
    budget, scratch = 42.0, Scratch(seconds=84.0, rows=10_000, iterations=26)
    assert scratch.overrun(budget, spent=2.8, i=3, pace=2.2)
    p = Paces(misses={"depth": [0.3, 0.5, 0.4]})
    assert not scratch.overrun(budget, spent=2.8, i=3, pace=2.2 * p.correction("depth"))
    # a guess of 72 s against a 59 s budget (after a warm recompute), where finishing took
    # 30 s: halved, as it overshot finished runs by half, it goes on
    p = Paces(misses={"guess": [0.5, 0.4, 0.6]})
    assert scratch.overrun(59.0, spent=2.5, i=7, pace=2.0, ahead=72.0, margin=0.8)
    assert not scratch.overrun(59.0, spent=2.5, i=7, pace=2.0,
                               ahead=72.0 * p.correction("guess"), margin=0.8)


# -- who decides: the clock, row counts, or a seeded draw (runtime.fallback.Decider) ----------


def test_decider_modes_are_checked():
    for bad in ("", "clocks", "random", "random:", "rows:3"):
        with pytest.raises(ValueError, match="decisions are clock, rows or random:SEED"):
            Decider(bad)
    from ddlog.runtime.config import Config

    with pytest.raises(ValueError):
        Config(decisions="sometimes")


def test_the_clock_decides_by_seconds_and_says_what_it_compared():
    d = Decider("clock")
    run = Run(spent=3.0, budget=8.0, made=500, rows_budget=100.0)
    gave = d.give_up(1, 4, 2, run, lambda: True)
    assert gave.chose and "3.00s spent, budget 8.00s" in gave.why
    assert not d.give_up(1, 4, 2, run, lambda: False).chose
    # nothing to weigh the run against: it goes on, whatever its rows
    assert not d.give_up(1, 4, 2, Run(3.0, None, 10**9, None), None).chose
    assert d.remember(1, 4, 2, Run(2.0, 8.0, 0, None)).chose  # a quarter of the budget
    assert not d.remember(1, 4, 2, Run(1.9, 8.0, 10**9, 1.0)).chose
    assert d.too_dear(1, 4, Run(8.5, 8.0, 0, None)).chose
    assert not d.too_dear(1, 4, Run(7.5, 8.0, 10**9, 1.0)).chose
    start = d.recompute(1, 4, rows_in=30, stored=100, ratio=0.25)
    assert start.chose and start.why == "change of 30 rows > 0.25 x 100 stored"
    assert not d.recompute(1, 4, rows_in=25, stored=100, ratio=0.25).chose


def test_rows_decide_by_row_counts_whatever_the_seconds():
    d = Decider("rows")

    def never():  # the clock's verdict is not asked
        raise AssertionError("asked the clock")

    assert d.give_up(1, 4, 2, Run(0.0, 8.0, 101, 100.0), never).chose
    assert not d.give_up(1, 4, 2, Run(1e9, 8.0, 100, 100.0), never).chose
    assert not d.give_up(1, 4, 2, Run(1e9, 8.0, 10**9, None), never).chose
    assert d.remember(1, 4, 2, Run(0.0, 8.0, 25, 100.0)).chose
    assert not d.remember(1, 4, 2, Run(1e9, 8.0, 24, 100.0)).chose
    assert d.too_dear(1, 4, Run(0.0, 8.0, 101, 100.0)).chose
    assert not d.too_dear(1, 4, Run(1e9, 8.0, 100, 100.0)).chose


def test_random_draws_are_seeded_by_seed_stratum_epoch_point_and_iteration():
    run = Run(0.0, None, 0, None)

    def draws(seed: str) -> list[bool]:
        d = Decider(f"random:{seed}")
        return ([d.recompute(s, e, 1, 1, 0.25).chose for s in range(5) for e in range(8)]
                + [d.give_up(s, e, i, run, None).chose for s in range(3) for e in range(4)
                   for i in range(1, 6)]
                + [d.remember(s, e, 1, run).chose for s in range(5) for e in range(8)]
                + [d.too_dear(s, e, run).chose for s in range(5) for e in range(8)])

    a, b = draws("7"), draws("7")
    assert a == b  # the same in every process (not Python's salted hash)
    assert a != draws("8")
    assert True in a and False in a
    assert Decider("random:7").give_up(0, 0, 1, run, None).why.startswith("random:7 drew ")
