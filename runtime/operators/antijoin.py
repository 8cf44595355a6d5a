"""Antijoin `a ▷ b = a - semijoin(a, b)`, with b a set (the compiler puts a Distinct of the
projected negated relation in front of it).

The semijoin is a join that keeps a's columns, so it is bilinear and uses the nested join
formula (join.py); the subtraction is linear. In a recursive stratum `b` always comes from a
lower stratum (stratification forbids negation through a cycle), so b changes only at
iteration 0 of an epoch.
"""
from __future__ import annotations

from pyspark.sql import DataFrame

from runtime.operators.join import JoinOp
from runtime.trace import TraceView
from runtime.zset import drop_iter, negate, union_all


class AntiJoinOp:
    def __init__(self, a: TraceView, b: TraceView, a_keys: list[str], b_keys: list[str],
                 a_cols: list[str]):
        self.a = a
        self.semi = JoinOp(a, b, a_keys, b_keys, a_cols, [])

    def step(self, i: int) -> DataFrame | None:
        return union_all([drop_iter(self.a.cur(i, i)), negate(self.semi.step(i))])

    def horizon(self, i: int) -> int | None:
        return self.semi.horizon(i)
