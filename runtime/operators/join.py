"""Join (bilinear), nested and incremental.

With traces of both inputs — `past` summed over finished epochs, `cur` of this epoch, both keyed
by iteration — the double delta of `a ⋈ b` at (e, i) is

    cur_a[i]      ⋈ (past_b + cur_b)[0..i]
  + cur_a[0..i-1] ⋈ (past_b + cur_b)[i]
  + past_a[i]     ⋈ cur_b[0..i]
  + past_a[0..i-1]⋈ cur_b[i]

When b is imported through δ₀ (only iteration 0) this is `cur_a[i] ⋈ b_now + past_a[i] ⋈ Δb`;
in a non-recursive stratum (i = 0 only) it is the familiar `Δa ⋈ (B + Δb) + A ⋈ Δb`. Terms
whose sides the driver knows to be empty are skipped, never run.

`horizon(i)`: when the stratum is quiescent after iteration i, the next iteration j > i at which
this join can still produce something: `past_a[j] ⋈ cur_b[0..i]` or `past_b[j] ⋈ cur_a[0..i]`.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ddlog.plan.circuit import Join
from runtime.config import DEFAULT, Config
from runtime.operators.base import Context, Operator, Step
from runtime.schema import ITER
from runtime.trace import INF, TraceView
from runtime.zset import join, semijoin_keys, union_all


class JoinOp(Operator):
    def __init__(self, a: TraceView, b: TraceView, a_keys: list[str], b_keys: list[str],
                 a_out: list[str], b_out: list[str], config: Config = DEFAULT):
        self.a, self.b = a, b
        self.a_keys, self.b_keys = a_keys, b_keys
        self.a_out, self.b_out = a_out, b_out
        self.config = config

    @classmethod
    def build(cls, node: Join, ctx: Context) -> "JoinOp":
        # the output drops computed key columns of the left side (the node's schema)
        a_out = [c for c in node.columns if c not in node.right_out]
        return cls(ctx.views[node.left], ctx.views[node.right], node.left_keys, node.right_keys,
                   a_out, node.right_out, ctx.config)

    def _j(self, x: DataFrame | None, y: DataFrame | None,
           small: str | None) -> DataFrame | None:
        # past_iters() is a superset (an epoch whose batches cancel out still lists its
        # iterations), so a slice of `past` it announces may hold no batch at all
        if x is None or y is None:
            return None
        return join(x, y, self.a_keys, self.b_keys, self.a_out, self.b_out, small)

    def _small(self, view: TraceView, lo: int, hi: int) -> bool:
        return view.cur_rows(lo, hi) <= self.config.broadcast_rows

    def step(self, i: int) -> Step | None:
        out = self.delta(i)
        if out is None:
            return None
        # a guess for broadcast decisions: the changed sides' sizes
        return Step(out, self.a.cur_rows(i, i) + self.b.cur_rows(i, i) + 1)

    def delta(self, i: int) -> DataFrame | None:
        a, b = self.a, self.b
        a_iters, b_iters = a.past_iters(), b.past_iters()
        terms: list[DataFrame] = []
        a_i = a.cur(i, i)
        if a_i is not None:
            b_all = union_all([b.past(0, i) if any(k <= i for k in b_iters) else None,
                               b.cur(0, i)])
            if b_all is not None:
                terms.append(self._j(a_i, b_all, "a" if self._small(a, i, i) else None))
        b_i = b.cur(i, i)
        b_at_i = union_all([b.past(i, i) if i in b_iters else None, b_i])
        if i > 0 and b_at_i is not None:
            a_lt = a.cur(0, i - 1)
            if a_lt is not None:
                terms.append(self._j(a_lt, b_at_i, "a" if self._small(a, 0, i - 1) else None))
        b_le = b.cur(0, i)
        if b_le is not None and i in a_iters:
            terms.append(self._j(a.past(i, i), b_le, "b" if self._small(b, 0, i) else None))
        if i > 0 and b_i is not None and any(k < i for k in a_iters):
            terms.append(self._j(a.past(0, i - 1), b_i, "b" if self._small(b, i, i) else None))
        return union_all(terms)

    def horizon(self, i: int) -> list[int | DataFrame]:
        """Queries (one row, one column: the iteration or null) that the stratum runs
        together in one Spark action."""
        queries: list[int | DataFrame] = []
        for x, y, xk, yk in ((self.a, self.b, self.a_keys, self.b_keys),
                             (self.b, self.a, self.b_keys, self.a_keys)):
            if not any(k > i for k in x.past_iters()) or y.cur_rows(0, i) == 0:
                continue
            later = x.past(i + 1, INF)
            if later is None:  # past_iters() over-approximated: nothing after i
                continue
            keys = y.cur(0, i).select(*[F.col(c).alias(k) for c, k in zip(yk, xk)])
            queries.append(semijoin_keys(later, keys, xk).agg(F.min(ITER).alias("h")))
        return queries
