"""Z-set algebra on Spark DataFrames: a Z-set is the relation's columns plus `_w` (a long
weight); traces add `_i` (the iteration). Sum, negation, consolidation and the join family,
as plans; materialising them is runtime/physical.py's job.

`None` stands for the empty Z-set throughout the runtime: the driver knows when a delta is
empty and skips the work instead of running a Spark job over nothing.
"""
from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from runtime.schema import ITER, WEIGHT

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

def union_all(dfs: list[DataFrame | None]) -> DataFrame | None:
    dfs = [d for d in dfs if d is not None]
    if not dfs:
        return None
    return reduce(lambda a, b: a.unionByName(b), dfs)


def consolidate(df: DataFrame | None, cols: list[str]) -> DataFrame | None:
    """Sum the weights of equal rows and drop the zeros."""
    if df is None:
        return None
    return (df.groupBy(*cols).agg(F.sum(WEIGHT).alias(WEIGHT))
            .filter(F.col(WEIGHT) != 0).select(*cols, WEIGHT))


def negate(df: DataFrame | None) -> DataFrame | None:
    if df is None:
        return None
    return df.withColumn(WEIGHT, -F.col(WEIGHT))


def drop_iter(df: DataFrame | None) -> DataFrame | None:
    if df is None or ITER not in df.columns:
        return df
    return df.drop(ITER)


def null_safe_on(left: list[str], right: list[str]) -> Column | None:
    cond = None
    for a, b in zip(left, right):
        c = F.col(a).eqNullSafe(F.col(b))
        cond = c if cond is None else cond & c
    return cond


def join(a: DataFrame, b: DataFrame, a_keys: list[str], b_keys: list[str], a_out: list[str],
         b_out: list[str], small: str | None = None) -> DataFrame:
    """Z-set join: matching rows pair up, weights multiply. `a_out`/`b_out` are kept (the right
    side's columns are renamed apart first). `small` = 'a' | 'b' hints a broadcast."""
    a = drop_iter(a)
    b = drop_iter(b)
    rb = b.select(*[F.col(c).alias(f"r__{c}") for c in b.columns])
    if small == "a":
        a = F.broadcast(a)
    elif small == "b":
        rb = F.broadcast(rb)
    if a_keys:
        j = a.join(rb, null_safe_on(a_keys, [f"r__{k}" for k in b_keys]), "inner")
    else:
        j = a.crossJoin(rb)
    return j.select(*[F.col(c) for c in a_out], *[F.col(f"r__{c}").alias(c) for c in b_out],
                    (F.col(WEIGHT) * F.col(f"r__{WEIGHT}")).alias(WEIGHT))


def semijoin_keys(df: DataFrame, keys_df: DataFrame, cols: list[str]) -> DataFrame:
    """Rows of `df` whose `cols` occur in `keys_df` (which has exactly `cols`; duplicates in it
    do not matter). The key side is usually small, but not always (the history of a large
    change): Spark chooses the broadcast from its statistics, which are exact for the local
    relations small frames are (zset.materialize_many), and AQE corrects it at run time; a
    forced broadcast of a large side fails with "Not enough memory to build and broadcast"."""
    if not cols:
        return df
    rk = keys_df.select(*[F.col(c).alias(f"s__{c}") for c in cols])
    return df.join(rk, null_safe_on(cols, [f"s__{c}" for c in cols]), "left_semi")


def antijoin_keys(df: DataFrame, keys_df: DataFrame, cols: list[str]) -> DataFrame:
    """Rows of `df` whose `cols` do not occur in `keys_df` (broadcast as in semijoin_keys)."""
    rk = keys_df.select(*[F.col(c).alias(f"s__{c}") for c in cols])
    return df.join(rk, null_safe_on(cols, [f"s__{c}" for c in cols]), "left_anti")
