"""How the runtime reaches Spark: one interface, two backends (docs/design.md, Backends).

- `classic` (runtime/backend/classic.py): a session whose JVM runs in this process. Plans are
  built as Catalyst nodes through py4j where PySpark's API would take many round trips and
  re-analyse a growing plan at every step; results are collected on the JVM into local
  relations; checkpoints are RDD leaves without the cut plan's statistics.
- `connect` (runtime/backend/connect.py): a Spark Connect session (`sc://...`), reached by
  PySpark's public DataFrame API only.

The backend is the session's: `of(spark)` (or `of(df)`) picks it by the session's class, so a
caller never chooses. Operators, traces and strata import from here, never py4j or a
backend module (tests/unit/test_layers.py checks it). A backend module defines:

    NAME                                   "classic" | "connect"
    col(name), remembered(key, make)       Columns by name, and expressions built once
    select(df, *cols)                      a projection
    union_many(dfs, by_name, columns)      a union of many frames, each projected first
    aggregate_where(dfs, keys, value, cond)  groupBy(keys).agg(value).filter(cond)
    collect_local(df) -> (leaf, n, rows)   rows collected behind a local-relation leaf
    rows_leaf(leaf, rows, a, b, column, one_partition)
                                           rows a..b of such a leaf, as a leaf of their own
    local_rows(leaf, rows, columns)        such a leaf's rows (of `columns`, or all) as
                                           Python Rows, without a Spark job
    json_frame(spark, schema, text)        JSON lines as a local relation
    checkpoint_leaf(df)                    rows cut from their lineage, kept by Spark
    estimated_rows(df)                     the optimiser's row estimate, or None
    is_local(spark), checkpoint_dir(spark), executors(spark)
    adopt(spark, df)                       a frame of another session, as one of `spark`'s
    is_set(spark, key)                     a setting the user set (not Spark's default)
    tagging(spark, tag, label)             tag the jobs started inside
    counts_jobs(spark), COUNTS_LATER, jobs_tagged(spark, tags)
                                           whether jobs can be counted, whether all at the
                                           epoch's end, and each tag's count
    plan(df)                               Spark plans `df` now, if the backend lets it
                                           (then True): the action finds it planned
    parsed_plan(spark, query)              a SQL query's parsed plan (`ddlog sql`'s check)

PySpark itself picks Connect or classic Columns process-wide (`F.col` makes Connect Columns
once a Connect session exists in the process): a process runs the engine on sessions of one
kind.
"""
from __future__ import annotations

from types import ModuleType
from typing import Callable, Hashable

from pyspark.sql import Column, DataFrame
from pyspark.sql.utils import is_remote


def of(spark_or_df) -> ModuleType:
    """The backend of a session or of a DataFrame's session."""
    spark = getattr(spark_or_df, "sparkSession", spark_or_df)
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        from ddlog.runtime.backend import connect
        return connect
    from ddlog.runtime.backend import classic
    return classic


def is_connect(spark_or_df) -> bool:
    return of(spark_or_df).NAME == "connect"


def _process() -> ModuleType:
    """The backend of Columns made without a session: PySpark's own choice, process-wide."""
    if is_remote():
        from ddlog.runtime.backend import connect
        return connect
    from ddlog.runtime.backend import classic
    return classic


# The operations the operators use on every iteration, dispatched on their argument.

def col(name: str) -> Column:
    """`F.col(name)`, made once per JVM on the classic backend."""
    return _process().col(name)


def remembered(key: Hashable, make: Callable[[], Column]) -> Column:
    """The Column `make()` gives, for a Column that depends on nothing but `key`: made once
    per JVM on the classic backend (each function, operator and alias of a Column is a py4j
    round trip there). A column's name is its own key; other keys are tuples."""
    return _process().remembered(key, make)


def select(df: DataFrame, *cols: str | Column) -> DataFrame:
    """`df.select(*cols)`."""
    return of(df).select(df, *cols)


def union_many(dfs: list[DataFrame], by_name: bool = False,
               columns: list[list[Column]] | None = None) -> DataFrame:
    """The union of `dfs` (one at least), in their order, matching columns by position or,
    with `by_name`, by name. `columns`, one list per frame of named columns: each frame is
    first projected onto its list."""
    return of(dfs[0]).union_many(dfs, by_name, columns)


def aggregate_where(dfs: DataFrame | list[DataFrame], keys: list[str], value: Column,
                    cond: Column) -> DataFrame:
    """`df.groupBy(*keys).agg(value).filter(cond)`; a list of frames is their union by name.
    `value` is named; `cond` may read it and the keys."""
    first = dfs[0] if isinstance(dfs, list) else dfs
    return of(first).aggregate_where(dfs, keys, value, cond)
