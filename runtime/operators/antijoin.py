"""Antijoin `a ▷ b = a - semijoin(a, b)`, with b a set (the compiler puts a Distinct of the
projected negated relation in front of it).

The semijoin is a join that keeps a's columns, so it is bilinear and uses the nested join
formula (join.py); the subtraction is linear. In a recursive stratum `b` always comes from a
lower stratum (stratification forbids negation through a cycle), so b changes only at
iteration 0 of an epoch.
"""
from __future__ import annotations

from pyspark.sql import DataFrame

from ddlog.plan.circuit import AntiJoin
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.operators.base import Context, KeysOf, Operator, Probe, Step
from ddlog.runtime.operators.join import JoinOp, join_null_safe, join_ready
from ddlog.runtime.schema import ITER, WEIGHT
from ddlog.runtime.trace import INF
from ddlog.runtime.views import TraceView
from ddlog.runtime.zset import negate, union_all


class AntiJoinOp(Operator):
    def __init__(self, a: TraceView, b: TraceView, a_keys: list[str], b_keys: list[str],
                 a_cols: list[str], config: Config = DEFAULT,
                 null_safe: list[bool] | None = None, ready: tuple[bool, bool] = (False, False)):
        self.a = a
        self.a_cols = a_cols  # the left side may carry computed key columns: drop them
        self.semi = JoinOp(a, b, a_keys, b_keys, a_cols, [], config, null_safe, ready)

    @classmethod
    def build(cls, node: AntiJoin, ctx: Context) -> "AntiJoinOp":
        return cls(ctx.views[node.left], ctx.views[node.right], node.left_keys,
                   node.right_keys, list(node.columns), ctx.config, join_null_safe(node, ctx),
                   join_ready(node, ctx))

    def step(self, i: int) -> Step | None:
        a_i = self.a.cur(i, i)
        if a_i is not None:
            a_i = a_i.select(*self.a_cols, WEIGHT)
        out = union_all([a_i, negate(self.semi.delta(i))])
        return None if out is None else Step(out, self.a.cur_rows(i, i) + 1)

    def whole(self) -> DataFrame | None:
        """The epoch's whole output trace (JoinOp.whole): a's minus its semijoin's."""
        a = self.a.cur(0, INF)
        if a is not None:
            a = a.select(*self.a_cols, ITER, WEIGHT)
        semi = self.semi.whole()
        return union_all([a, None if semi is None else negate(semi)])

    def probes(self, i: int) -> list[Probe]:
        return self.semi.probes(i)

    def prefetch(self, keys_of: KeysOf) -> list[Probe]:
        return self.semi.prefetch(keys_of)

    def horizon(self, i: int) -> list:
        return self.semi.horizon(i)

    def end_epoch(self) -> None:
        self.semi.end_epoch()
