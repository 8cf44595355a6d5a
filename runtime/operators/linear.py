"""Linear operators: select (filter + map + project), flatmap, negate.

For linear f, (f x)[e][i] = f(x[e][i]) and trace(f x) = f(trace x): they apply to double deltas
and to whole traces the same way, row by row, keeping `_i` and `_w` as they are.
"""
from __future__ import annotations

from typing import Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ddlog.plan.circuit import FlatMap, Negate, Node, Select
from ddlog.plan.exprs import Col
from runtime.expr import compile_expr
from runtime.schema import ITER, WEIGHT

Fn = Callable[[DataFrame], DataFrame]


def _extra(df: DataFrame) -> list[str]:
    return [c for c in (ITER, WEIGHT) if c in df.columns]


def select_fn(node: Select) -> Fn:
    filters = [compile_expr(f) for f in node.filters]
    outputs = [compile_expr(e).alias(n) for n, e in node.outputs]

    def fn(df: DataFrame) -> DataFrame:
        for f in filters:
            df = df.filter(f)
        return df.select(*outputs, *_extra(df))
    return fn


def flatmap_fn(node: FlatMap) -> Fn:
    coll = compile_expr(node.expr)
    keep = [n for n in node.columns if n != node.column]

    def fn(df: DataFrame) -> DataFrame:
        # explode yields no row for an empty (or null) collection, as FlatMap must
        return df.select(*keep, F.explode(coll).alias(node.column), *_extra(df))
    return fn


def negate_fn(node: Negate) -> Fn:
    def fn(df: DataFrame) -> DataFrame:
        return df.withColumn(WEIGHT, -F.col(WEIGHT))
    return fn


def linear_fn(node: Node) -> Fn:
    if isinstance(node, Select):
        return select_fn(node)
    if isinstance(node, FlatMap):
        return flatmap_fn(node)
    if isinstance(node, Negate):
        return negate_fn(node)
    raise TypeError(f"{type(node).__name__} is not linear")


def column_sources(node: Node) -> dict[str, str]:
    """For each output column of a linear node that is an input column as it is (kept or
    renamed): that input column. A filter only drops rows, so a key read through it is a
    superset, which is all a lookup needs."""
    if isinstance(node, Select):
        return {n: e.name for n, e in node.outputs if isinstance(e, Col)}
    if isinstance(node, FlatMap):
        return {n: n for n in node.columns if n != node.column}
    if isinstance(node, Negate):
        return {n: n for n in node.columns}
    raise TypeError(f"{type(node).__name__} is not linear")
