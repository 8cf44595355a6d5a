"""Views: the trace of a stream that is not stored, read through the traces it is made of
(docs/design.md, Z-sets, streams and traces): a relation imported through δ₀ (`Flat`: its
whole value at iteration 0), the feedback edge (`Shifted`: the distinct's output one
iteration later), a linear operator over another trace (`Mapped`: `trace(f(x)) =
f(trace(x))` for linear f) and a union (`Summed`). A stored `Trace` (runtime/trace.py) and
every view answer the same `TraceView` questions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional, Protocol

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ddlog.runtime.backend import col
from ddlog.runtime.memo import Memo, memo_field
from ddlog.runtime.schema import ITER, WEIGHT
from ddlog.runtime.trace import INF
from ddlog.runtime.zset import union_all

if TYPE_CHECKING:
    from ddlog.runtime.trace import Trace


class TraceView(Protocol):
    def past(self, lo: int, hi: int) -> DataFrame | None: ...
    def cur(self, lo: int, hi: int) -> DataFrame | None: ...
    def cur_rows(self, lo: int, hi: int) -> int: ...
    def past_rows(self, lo: int, hi: int) -> int: ...
    def past_iters(self) -> set[int]: ...

    def cur_keys(self, lo: int, hi: int, col: str) -> set | None:
        """The values of column `col` in cur[lo..hi], when the driver holds them (small
        batches, literal-like values): None when it does not. A superset is allowed (a
        filter may drop rows), since callers only narrow reads by it."""
        ...

    def cur_values(self, lo: int, hi: int) -> list[dict] | None:
        """cur[lo..hi]'s rows (columns + _i + _w, maybe unsummed: the same Z-set) when the
        driver holds them and the view only re-times or renames what it reads; else None."""
        ...

    def source(self, col: str) -> "tuple[Trace, str] | None":
        """The stored trace and its column whose values column `col` carries (through
        re-timings and renames, or a filter: a superset), or None if there is none (a
        computed column, a sum of traces)."""
        ...


# A linear map of a Z-set (runtime/operators/linear.py): the frame, and the rows' new
# iteration to put in place of `_i`, or None to keep theirs.
Fn = Callable[[DataFrame, Optional[Column]], DataFrame]


def _retimed(df: DataFrame, it: Column, fn: Fn | None) -> DataFrame:
    """`df` with iteration `it`, mapped by `fn` if given (in the same select)."""
    return df.withColumn(ITER, it) if fn is None else fn(df, it)


@dataclass
class Flat:
    """A relation imported through δ₀: everything at iteration 0."""

    base: TraceView
    memo: Memo = memo_field()

    def _flat(self, df: DataFrame | None, fn: Fn | None) -> DataFrame | None:
        return None if df is None else self.memo.get(
            (fn,), [df], lambda: _retimed(df, F.lit(0), fn))

    def past(self, lo: int, hi: int, fn: Fn | None = None) -> DataFrame | None:
        """(`fn`: a linear map read through this view, applied in the same select.)"""
        return None if lo > 0 else self._flat(self.base.past(0, INF), fn)

    def cur(self, lo: int, hi: int, fn: Fn | None = None) -> DataFrame | None:
        return None if lo > 0 else self._flat(self.base.cur(0, INF), fn)

    def cur_rows(self, lo: int, hi: int) -> int:
        return 0 if lo > 0 else self.base.cur_rows(0, INF)

    def cur_keys(self, lo: int, hi: int, col: str) -> set | None:
        return set() if lo > 0 else self.base.cur_keys(0, INF, col)

    def cur_values(self, lo: int, hi: int) -> list[dict] | None:
        rows = [] if lo > 0 else self.base.cur_values(0, INF)
        return None if rows is None else [{**r, ITER: 0} for r in rows]

    def source(self, col: str) -> tuple[Trace, str] | None:
        return self.base.source(col)

    def past_rows(self, lo: int, hi: int) -> int:
        return 0 if lo > 0 else self.base.past_rows(0, INF)

    def past_iters(self) -> set[int]:
        return {0} if self.base.past_iters() else set()



@dataclass
class Shifted:
    """The feedback edge z⁻¹: the value at iteration i is the base's at i-1."""

    base: TraceView
    memo: Memo = memo_field()

    def _shift(self, df: DataFrame | None, fn: Fn | None) -> DataFrame | None:
        return None if df is None else self.memo.get(
            (fn,), [df], lambda: _retimed(df, col(ITER) + 1, fn))

    def past(self, lo: int, hi: int, fn: Fn | None = None) -> DataFrame | None:
        """(`fn`: a linear map read through this view, applied in the same select.)"""
        return None if hi < 1 else self._shift(self.base.past(max(lo - 1, 0), hi - 1), fn)

    def cur(self, lo: int, hi: int, fn: Fn | None = None) -> DataFrame | None:
        return None if hi < 1 else self._shift(self.base.cur(max(lo - 1, 0), hi - 1), fn)

    def cur_rows(self, lo: int, hi: int) -> int:
        return 0 if hi < 1 else self.base.cur_rows(max(lo - 1, 0), hi - 1)

    def cur_keys(self, lo: int, hi: int, col: str) -> set | None:
        return set() if hi < 1 else self.base.cur_keys(max(lo - 1, 0), hi - 1, col)

    def cur_values(self, lo: int, hi: int) -> list[dict] | None:
        rows = [] if hi < 1 else self.base.cur_values(max(lo - 1, 0), hi - 1)
        return None if rows is None else [{**r, ITER: r[ITER] + 1} for r in rows]

    def source(self, col: str) -> tuple[Trace, str] | None:
        return self.base.source(col)

    def past_rows(self, lo: int, hi: int) -> int:
        return 0 if hi < 1 else self.base.past_rows(max(lo - 1, 0), hi - 1)

    def past_iters(self) -> set[int]:
        return {i + 1 for i in self.base.past_iters()}


@dataclass
class Mapped:
    """A linear operator applied to a trace (it maps each (row, _i, _w) on its own).
    `sources` names, for each output column that is an input column unchanged (or renamed),
    that input column: keys of those are read through. `renames`: the same, when the
    operator does nothing else (no filter, no computed column): rows are read through."""

    base: TraceView
    fn: Fn
    sources: dict[str, str] = field(default_factory=dict)
    renames: dict[str, str] | None = None
    memo: Memo = memo_field()

    def _map(self, df: DataFrame | None) -> DataFrame | None:
        return None if df is None else self.memo.get((), [df], lambda: self.fn(df, None))

    def past(self, lo: int, hi: int) -> DataFrame | None:
        if isinstance(self.base, (Flat, Shifted)):  # re-timed and mapped by one select
            return self.base.past(lo, hi, self.fn)
        return self._map(self.base.past(lo, hi))

    def cur(self, lo: int, hi: int) -> DataFrame | None:
        if isinstance(self.base, (Flat, Shifted)):
            return self.base.cur(lo, hi, self.fn)
        return self._map(self.base.cur(lo, hi))

    def cur_rows(self, lo: int, hi: int) -> int:
        return self.base.cur_rows(lo, hi)

    def cur_keys(self, lo: int, hi: int, col: str) -> set | None:
        src = self.sources.get(col)
        return None if src is None else self.base.cur_keys(lo, hi, src)

    def cur_values(self, lo: int, hi: int) -> list[dict] | None:
        rows = None if self.renames is None else self.base.cur_values(lo, hi)
        if rows is None:
            return None
        return [{**{out: r[src] for out, src in self.renames.items()},
                 ITER: r[ITER], WEIGHT: r[WEIGHT]} for r in rows]

    def source(self, col: str) -> tuple[Trace, str] | None:
        src = self.sources.get(col)
        return None if src is None else self.base.source(src)

    def past_rows(self, lo: int, hi: int) -> int:
        return self.base.past_rows(lo, hi)

    def past_iters(self) -> set[int]:
        return self.base.past_iters()


@dataclass
class Summed:
    """The sum of several traces (a Union)."""

    parts: list[TraceView]
    memo: Memo = memo_field()

    def _sum(self, dfs: list[DataFrame | None]) -> DataFrame | None:
        return self.memo.get((), dfs, lambda: union_all(dfs))

    def past(self, lo: int, hi: int) -> DataFrame | None:
        return self._sum([p.past(lo, hi) for p in self.parts])

    def cur(self, lo: int, hi: int) -> DataFrame | None:
        return self._sum([p.cur(lo, hi) for p in self.parts])

    def cur_rows(self, lo: int, hi: int) -> int:
        return sum(p.cur_rows(lo, hi) for p in self.parts)

    def cur_keys(self, lo: int, hi: int, col: str) -> set | None:
        out: set = set()
        for p in self.parts:
            keys = p.cur_keys(lo, hi, col)
            if keys is None:
                return None
            out |= keys
        return out

    def cur_values(self, lo: int, hi: int) -> list[dict] | None:
        out: list[dict] = []
        for p in self.parts:
            rows = p.cur_values(lo, hi)
            if rows is None:
                return None
            out += rows
        return out

    def source(self, col: str) -> tuple[Trace, str] | None:
        return None  # its parts may read different traces

    def past_rows(self, lo: int, hi: int) -> int:
        return sum(p.past_rows(lo, hi) for p in self.parts)

    def past_iters(self) -> set[int]:
        out: set[int] = set()
        for p in self.parts:
            out |= p.past_iters()
        return out


def at_zero(view: TraceView) -> bool:
    """Whether a view changes at iteration 0 only: a relation imported through δ₀, or linear
    maps and sums of such. Its change in an epoch is whole once iteration 0 is."""
    if isinstance(view, Flat):
        return True
    if isinstance(view, Mapped):
        return at_zero(view.base)
    if isinstance(view, Summed):
        return all(at_zero(p) for p in view.parts)
    return False
