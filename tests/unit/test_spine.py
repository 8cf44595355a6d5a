"""runtime.trace._tiered: which of a trace's batches a merge takes (its past when `compact`
folds it, its running epoch's older iterations when a long fixpoint records more than
max_cur_batches), without a JVM: only the batches' row counts matter."""
from __future__ import annotations

from ddlog.runtime.trace import Batch, _tiered


def batches(*rows: int) -> list[Batch]:
    return [Batch(None, k, k, n) for k, n in enumerate(rows)]


def test_a_batch_that_outweighs_the_newer_ones_twice_over_is_kept():
    # the middle of a fixpoint: one large iteration, then smaller ones
    assert _tiered(batches(100, 10, 5, 3, 2)) == 1
    assert _tiered(batches(1000, 300, 10, 5, 3, 2)) == 2


def test_batches_that_do_not_are_merged_with_the_newer_ones():
    assert _tiered(batches(10, 20, 40)) == 0  # a fixpoint's growing first iterations
    assert _tiered(batches(30, 10, 5, 3, 2)) == 0


def test_at_least_two_batches_are_merged():
    assert _tiered(batches(1000, 100, 1)) == 1
    assert _tiered(batches(1000, 1)) == 0
    assert _tiered(batches(7)) == 0


def merged_rows(sizes: list[int], start, most: int = 8) -> int:
    """The rows a trace's merges rewrite over a fixpoint whose iterations record `sizes` rows,
    merging older iterations from `start` on as Trace.record does past `most` batches."""
    spine: list[int] = []
    rewritten = 0
    for n in sizes:
        spine.append(n)
        if len(spine) > most:
            older, newest = spine[:-2], spine[-2:]
            j = start(older)
            rewritten += sum(older[j:])
            spine = older[:j] + [sum(older[j:])] + newest
    return rewritten


def test_a_long_fixpoints_large_middle_is_not_merged_again_and_again():
    # deltas that grow, peak and trail off over many small iterations
    sizes = [5, 40, 300, 2000, 9000, 20000, 15000, 8000, 3000, 900, 200, 50, 10, 2] + [1] * 20
    tiered = merged_rows(sizes, lambda older: _tiered(batches(*older)))
    everything = merged_rows(sizes, lambda older: 0)  # all older iterations, every time
    assert 0 < tiered * 5 < everything
