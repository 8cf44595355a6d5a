"""Plans built as Catalyst nodes on the JVM in one step, where PySpark's API takes many.

PySpark builds a plan one operator at a time, and Spark analyses every DataFrame as it is
built: a union of n frames is n - 1 unions, each analysing the grown plan again (as a balanced
tree, each frame about log n times). Made here as one node over the frames' analysed plans, it
is analysed once: a union of 40 small aggregates took 126-275 ms as a balanced tree of unions
and 10-20 ms as one node (three rounds in one session). Likewise a select here costs fewer
py4j round trips than PySpark's (`select`, `col`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Hashable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.classic.dataframe import DataFrame

from ddlog.runtime.spark import jvm as jvm_of

if TYPE_CHECKING:
    from py4j.java_gateway import JavaObject


def union_many(dfs: list[DataFrame], by_name: bool = False,
               columns: list[list[Column]] | None = None) -> DataFrame:
    """The union of `dfs` (one at least), in their order, matching columns by position or,
    with `by_name`, by name: one Catalyst `Union` node, as Spark's own `union` makes when it
    flattens a chain of them. `columns`, one list per frame of named columns (aliases or
    column references): each frame is first projected onto its list (`df.select(*cols)`),
    in the same plan, analysed with the union."""
    spark = dfs[0].sparkSession
    if len(dfs) == 1 and columns is None:
        return dfs[0]
    return _frame(spark, _union_plan(dfs, by_name, columns))


def aggregate_where(dfs: DataFrame | list[DataFrame], keys: list[str], value: Column,
                    cond: Column) -> DataFrame:
    """`df.groupBy(*keys).agg(value).filter(cond)` as one plan (an `Aggregate` under a
    `Filter`), analysed once: the API's way analyses the aggregate, then the filter over it.
    `value` is named; `cond` may read it and the keys. A list of frames is their union by
    name, in the same plan. (A Z-set's consolidation, the commonest plan the engine builds,
    took 22-36 ms the API's way and 17-20 ms this way.)"""
    frames = dfs if isinstance(dfs, list) else [dfs]
    spark = frames[0].sparkSession
    jvm = jvm_of(spark)
    logical = _logical(spark)
    child = _union_plan(frames, True, None)  # a frame's own plan when it is one
    attrs = [jvm.org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute.quoted(k)
             for k in keys]
    conversions = _conversions(spark)
    agg = logical.Aggregate(_seq(spark, attrs),
                            _seq(spark, [*attrs, conversions.expression(value._jc)]),
                            child, jvm.scala.Option.empty())
    return _frame(spark, logical.Filter(conversions.expression(cond._jc), agg))


def struct_leaf(spark, rows: JavaObject, schema: JavaObject, column: str,
                one_partition: bool) -> DataFrame:
    """Rows held on the JVM (a list of `Row`s of `schema`) as a local relation, read out of
    their struct column `column` (its fields become the columns) and, with `one_partition`,
    said to be one partition (a `coalesce(1)`): the three steps of a pack's frame as one plan.
    (Made the API's way, a local relation, a select and a coalesce, 9-16 ms a frame; this
    way 6-13 ms.)"""
    jvm = jvm_of(spark)
    logical = _logical(spark)
    # fresh attributes for every leaf, as a new DataFrame's would be
    attrs = jvm.org.apache.spark.sql.catalyst.types.DataTypeUtils.toAttributes(schema)
    plan = logical.LocalRelation.fromExternalRows(attrs, _seq(spark, rows))
    star = jvm.org.apache.spark.sql.catalyst.analysis.UnresolvedStar(
        jvm.scala.Some(_seq(spark, [column])))
    plan = logical.Project(_seq(spark, [star]), plan)
    if one_partition:
        plan = logical.Repartition(1, False, plan)
    return _frame(spark, plan)


def _union_plan(dfs: list[DataFrame], by_name: bool,
                columns: list[list[Column]] | None) -> JavaObject:
    """The logical plan of union_many (not yet analysed); of one frame without `columns`,
    its own plan."""
    spark = dfs[0].sparkSession
    plans = [d._jdf.logicalPlan() for d in dfs]
    if columns is not None:
        project = _logical(spark).Project
        conversions = _conversions(spark)
        plans = [project(_seq(spark, [conversions.expression(c._jc) for c in cols]), plan)
                 for cols, plan in zip(columns, plans)]
    if len(plans) == 1:
        return plans[0]
    return _logical(spark).Union(_seq(spark, plans), by_name, False)


def _conversions(spark) -> JavaObject:
    """Spark's converter of a Column to its Catalyst expression (`.expression(jc)`, unresolved
    until its plan is analysed). Reaching it is a py4j round trip: fetched once per plan, not
    once per column (a pack's projections hold a few columns per frame)."""
    classic = jvm_of(spark).org.apache.spark.sql.classic
    return getattr(classic, "ColumnConversions$").__getattr__("MODULE$")


def _logical(spark):
    """Catalyst's package of logical plan nodes."""
    return jvm_of(spark).org.apache.spark.sql.catalyst.plans.logical


def col(name: str) -> Column:
    """`F.col(name)`, made once per JVM (kept by the engine's view of it, runtime/spark.jvm)."""
    return remembered(name, lambda: F.col(name))


def remembered(key: Hashable, make: Callable[[], Column]) -> Column:
    """The Column `make()` gives, made once per JVM as `col` is, for a Column that depends on
    nothing but `key`: an expression over named columns that an operator builds again in
    every iteration (each function, operator and alias of a Column is a py4j round trip).
    A column's name is its own key; other keys are tuples."""
    made = jvm_of().columns
    found = made.get(key)
    if found is None:
        found = made[key] = make()
    return found


def select(df: DataFrame, *cols: str | Column) -> DataFrame:
    """`df.select(*cols)` in fewer py4j round trips: PySpark names each string column by a
    call of its own and hands the columns over one call each (an ArrayList's `add`); here a
    name's column is remembered (`col`) and the list goes over ten at a time (`_seq`). The
    same plan, analysed the same way."""
    spark = df.sparkSession
    jcols = [(col(c) if isinstance(c, str) else c)._jc for c in cols]
    return DataFrame(df._jdf.select(_seq(spark, jcols)), spark)


def _seq(spark, items) -> JavaObject:
    """A Scala Seq of `items` (a Python list of JVM objects or strings, or a JVM list).

    py4j passes a Python list as a new ArrayList with its elements added one round trip each;
    `List.of` takes up to ten in one, so a Seq of a few costs two round trips in all (the
    commonest lists here hold one to three)."""
    jvm = jvm_of(spark)
    if isinstance(items, list):
        chunks = [items[k:k + _LIST_OF] for k in range(0, len(items), _LIST_OF)] or [[]]
        listed = jvm.java.util.List.of(*chunks[0])
        if len(chunks) > 1:
            listed = jvm.java.util.ArrayList(listed)
            for chunk in chunks[1:]:
                listed.addAll(jvm.java.util.List.of(*chunk))
        items = listed
    return jvm.org.apache.spark.api.python.PythonUtils.toSeq(items)


_LIST_OF = 10  # java.util.List.of's overloads take up to ten elements


def _frame(spark, plan: JavaObject) -> DataFrame:
    """A DataFrame of a logical plan made on the JVM (analysed here, once)."""
    jdf = jvm_of(spark).org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, plan)
    return DataFrame(jdf, spark)
