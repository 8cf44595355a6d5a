"""Linear operators: select (filter + map + project), flatmap, negate.

For linear f, (f x)[e][i] = f(x[e][i]) and trace(f x) = f(trace x): they apply to double deltas
and to whole traces the same way, row by row, keeping `_i` and `_w` as they are. Each map
takes the rows' new iteration too (`it`, in place of `_i`), so that a view that re-times a
trace (the δ₀ import, the feedback edge) and the map that reads through it are one select,
not two plans (runtime/trace.Mapped).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ddlog.plan.circuit import FlatMap, Negate, Node, Select
from ddlog.plan.exprs import Col
from ddlog.plan.physical import column_sources
from ddlog.runtime.backend import col, select
from ddlog.runtime.expr import compile_expr
from ddlog.runtime.schema import ITER, WEIGHT
from ddlog.runtime.views import Fn


def _extra(df: DataFrame, it: Column | None = None) -> list[str | Column]:
    """The columns a map keeps as they are: `_i` (or `it` as `_i`), then `_w`."""
    keep: list[str | Column] = [c for c in (ITER, WEIGHT) if c in df.columns]
    if it is None:
        return keep
    return [it.alias(ITER), *[c for c in keep if c != ITER]]


def select_fn(node: Select) -> Fn:
    filters = [compile_expr(f) for f in node.filters]
    outputs = [compile_expr(e).alias(n) for n, e in node.outputs]

    def fn(df: DataFrame, it: Column | None = None) -> DataFrame:
        for f in filters:
            df = df.filter(f)
        return select(df, *outputs, *_extra(df, it))
    return fn


def flatmap_fn(node: FlatMap) -> Fn:
    coll = compile_expr(node.expr)
    keep = [n for n in node.columns if n != node.column]

    def fn(df: DataFrame, it: Column | None = None) -> DataFrame:
        # explode yields no row for an empty (or null) collection, as FlatMap must
        return df.select(*keep, F.explode(coll).alias(node.column), *_extra(df, it))
    return fn


def negate_fn(node: Negate) -> Fn:
    def fn(df: DataFrame, it: Column | None = None) -> DataFrame:
        # the columns stay where they are, as re-timing and negating one after the other
        # would leave them
        return df.withColumns({WEIGHT: -col(WEIGHT), **({ITER: it} if it is not None else {})})
    return fn


def linear_fn(node: Node) -> Fn:
    if isinstance(node, Select):
        return select_fn(node)
    if isinstance(node, FlatMap):
        return flatmap_fn(node)
    if isinstance(node, Negate):
        return negate_fn(node)
    raise TypeError(f"{type(node).__name__} is not linear")


def renames(node: Node) -> dict[str, str] | None:
    """For a select that only renames and drops columns (no filter, every output an input
    column): each output column's input column, so that rows held in Python read through it
    as Spark would map them. None for any other linear node."""
    if isinstance(node, Select) and not node.filters and \
            all(isinstance(e, Col) for _, e in node.outputs):
        return column_sources(node)
    return None
