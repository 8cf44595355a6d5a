"""runtime.trace.Memo: a view hands out the same plan while the DataFrames under it are the
same objects, and builds a new one as soon as one of them is another object (no JVM: the
sources and plans here are plain Python objects)."""
from __future__ import annotations

from ddlog.runtime.memo import Memo


class Plan:
    """Stands for a DataFrame: only its identity matters to the memo."""


def counting(builds: list):
    def build():
        builds.append(Plan())
        return builds[-1]
    return build


def test_same_sources_same_plan():
    memo, builds = Memo(), []
    a, b = Plan(), Plan()
    first = memo.get(("slice", 0, 3), [a, b], counting(builds))
    assert memo.get(("slice", 0, 3), [a, b], counting(builds)) is first
    assert len(builds) == 1


def test_another_source_object_rebuilds():
    memo, builds = Memo(), []
    a, b = Plan(), Plan()
    first = memo.get((), [a], counting(builds))
    assert memo.get((), [b], counting(builds)) is not first  # a batch replaced by another
    assert memo.get((), [a, b], counting(builds)) is not first  # a batch added
    assert memo.get(("cut", 2), [a], counting(builds)) is not first  # another key
    assert len(builds) == 4


def test_empty_results_are_remembered_too():
    memo, calls = Memo(), []
    assert memo.get((), [None], lambda: calls.append(1)) is None
    assert memo.get((), [None], lambda: calls.append(1)) is None
    assert calls == [1]


def test_oldest_entries_go_first_and_sources_stay_alive():
    memo, builds = Memo(size=2), []
    sources = [Plan() for _ in range(3)]
    plans = [memo.get((), [s], counting(builds)) for s in sources]
    # the first entry was evicted: asking again builds anew; the last two are still held
    assert memo.get((), [sources[2]], counting(builds)) is plans[2]
    assert memo.get((), [sources[0]], counting(builds)) is not plans[0]
    assert len(builds) == 4
    # an entry holds its sources, so no other object can take their ids while it lives
    assert all(entry[0][0] in sources for entry in memo.plans.values())
