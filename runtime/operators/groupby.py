"""GroupBy: `var g = e.group_by(k)` (see ddlog/plan/normalize.py).

A group holds one element per distinct valuation of its input with that key: the value of e;
when the input may hold a valuation more than once (it reads a multiset, a stream or a counted
relation), also each element's multiplicity (`weights`), which a loop `for ((x, w) in g)`
reads and every other group function ignores, as DDlog's.
Incrementally, only the groups whose key occurs in the input delta Δ change: for those keys K,
old groups come from the integrated input A restricted to K, new ones from (A + Δ) restricted to
K; the output delta is `new - old` (a group whose content did not change cancels out).

Inside a recursive stratum (DDlog allows a group over a relation of its own recursion) time is
(epoch e, iteration i), and the group of iteration i is over the input's value at i,
I[e][i] (its deltas summed over epochs <= e and iterations <= i). The output delta is the
double difference

    out[e][i] = G(I[e][i]) - G(I[e-1][i]) - G(I[e][i-1]) + G(I[e-1][i-1])

which is zero for a key that neither this epoch's delta at i touches nor the past changes at i
after this epoch touched it earlier: the groups are computed over those keys only. As with a
recursive distinct, a key this epoch touched can still change where its past has an entry at
a later iteration (`horizon`). A group's old value leaves as the new one comes, so a recursive
relation read through a group can lose records within a fixpoint: its deltas are not
semi-naive insertions (see runtime/stratum.py).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ddlog.plan.circuit import GroupBy
from ddlog.types import BIGINT, TTuple
from ddlog.runtime.backend import aggregate_where, col
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.expr import compile_expr, sort
from ddlog.runtime.operators.base import Context, Operator, Step, narrow
from ddlog.runtime.schema import ITER, WEIGHT
from ddlog.runtime.trace import INF
from ddlog.runtime.views import TraceView
from ddlog.runtime.zset import consolidate, drop_iter, semijoin_keys, union_all


class GroupByOp(Operator):
    def __init__(self, view: TraceView, in_cols: list[str], keys: list[str], elem, column: str,
                 config: Config = DEFAULT, counted: bool = False, nested: bool = False,
                 null_safe: list[bool] | None = None):
        self.view = view
        self.nested = nested
        self.null_safe = null_safe
        self.counted = counted
        self.config = config
        self.in_cols = in_cols
        self.keys = keys
        self.elem = compile_expr(elem)
        self.elem_type = elem.ty
        self.column = column

    @classmethod
    def build(cls, node: GroupBy, ctx: Context) -> "GroupByOp":
        inp = ctx.circuit.node(node.input)
        return cls(ctx.views[node.input], list(inp.columns), node.keys, node.elem, node.column,
                   ctx.config, node.counted, ctx.nested, ctx.null_safe(node.input, node.keys))

    def _key(self) -> Column:
        if len(self.keys) == 1:
            return col(self.keys[0])
        return F.struct(*[col(k).alias(f"_{n}") for n, k in enumerate(self.keys)])

    def _groups(self, z: DataFrame | None, sign: int) -> DataFrame | None:
        if z is None:
            return None
        rows = consolidate(z, self.in_cols, positive=True)  # summed over iterations too
        if self.counted:  # (element, weight) pairs, sorted as tuples: by element first
            pairs = sort(F.collect_list(F.struct(self.elem.alias("_0"), col(WEIGHT).alias("_1"))),
                         TTuple((self.elem_type, BIGINT)))
            items = F.transform(col("__items"), lambda p: p["_0"])
            weights = F.transform(col("__items"), lambda p: p["_1"])
        else:
            pairs = sort(F.collect_list(self.elem), self.elem_type)
            items, weights = col("__items"), F.lit(None).cast("array<bigint>")
        # the aggregate and its filter as one plan (the API's way is three, each analysed)
        g = aggregate_where(rows, self.keys, pairs.alias("__items"),
                            F.size("__items") > 0)  # no keys: a global group of nothing is none
        return g.select(*self.keys,
                        F.struct(self._key().alias("key"), items.alias("items"),
                                 weights.alias("weights")).alias(self.column),
                        F.lit(sign).cast("long").alias(WEIGHT))

    def step(self, i: int) -> Step | None:
        out = self.delta(i)
        return None if out is None else Step(out, 2 * self.view.cur_rows(0, i) + 1)

    def delta(self, i: int) -> DataFrame | None:
        if self.nested:
            return self._nested_delta(i)
        if i > 0:
            return None
        d = drop_iter(self.view.cur(0, 0))
        if d is None:
            return None
        past = drop_iter(self.view.past(0, 0))
        known = self.view.cur_keys(0, 0, self.keys[0]) if self.keys else None
        if past is None or self.view.past_rows(0, 0) <= self.config.narrow_rows:
            old = past  # none, or held by the driver: read whole
        elif known is not None and len(known) <= self.config.lookup_keys:
            # a group Δ does not touch comes out of `new` as it is in `old` and cancels: the
            # lookup by Δ's first key only needs to be a superset
            old = narrow(past, self.keys[0], known, self.config, self.view.past_rows(0, 0))
        else:
            small = self.view.cur_rows(0, 0) <= self.config.broadcast_rows
            old = semijoin_keys(past, d.select(*self.keys), self.keys, small)
        new = union_all([old, d])
        out = union_all([self._groups(new, 1), self._groups(old, -1)])
        return consolidate(out, self.keys + [self.column])

    def _nested_delta(self, i: int) -> DataFrame | None:
        """The module's double difference at iteration i, over the keys it can be non-zero
        for: those of this epoch's delta at i, and those this epoch touched before i whose
        past has an entry at i."""
        v, keys = self.view, self.keys
        now = v.cur(i, i)
        before = v.cur(0, i - 1) if i > 0 else None
        past = v.past(0, INF) if v.past_iters() else None
        cand = [now.select(*keys)] if now is not None else []
        if before is not None and past is not None and i in v.past_iters():
            cand.append(semijoin_keys(past.filter(col(ITER) == i).select(*keys),
                                      before.select(*keys), keys, False, self.null_safe))
        if not cand:
            return None
        touched = union_all(cand)

        def at(df: DataFrame | None, last: int) -> DataFrame | None:
            """df's rows up to iteration `last`, of the candidate keys."""
            if df is None or last < 0:
                return None
            return semijoin_keys(df.filter(col(ITER) <= last), touched, keys, False,
                                 self.null_safe)

        terms = [self._groups(union_all([at(past, i), now, at(before, i)]), 1),
                 self._groups(at(past, i), -1),
                 self._groups(union_all([at(past, i - 1), at(before, i - 1)]), -1),
                 self._groups(at(past, i - 1), 1)]
        return consolidate(terms, self.keys + [self.column])

    def horizon(self, i: int) -> list:
        """The first iteration after i where the past of a key this epoch touched has an
        entry, as a one-row query."""
        v = self.view
        if not self.nested or not any(k > i for k in v.past_iters()):
            return []
        cur = v.cur(0, i)
        if cur is None:
            return []
        later = semijoin_keys(v.past(0, INF).filter(col(ITER) > i), cur.select(*self.keys),
                              self.keys, False, self.null_safe)
        return [later.agg(F.min(ITER))]
