"""Plans built as Catalyst nodes on the JVM in one step, where PySpark's API takes many.

PySpark builds a plan one operator at a time, and Spark analyses every DataFrame as it is
built: a union of n frames is n - 1 unions, each analysing the grown plan again (as a balanced
tree, each frame about log n times). Made here as one node over the frames' analysed plans, it
is analysed once: a union of 40 small aggregates took 126-275 ms as a balanced tree of unions
and 10-20 ms as one node (three rounds in one session).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.classic.dataframe import DataFrame

if TYPE_CHECKING:
    from py4j.java_gateway import JavaObject
    from pyspark.sql import Column


def union_many(dfs: list[DataFrame], by_name: bool = False) -> DataFrame:
    """The union of `dfs` (one at least), in their order, matching columns by position or,
    with `by_name`, by name: one Catalyst `Union` node, as Spark's own `union` makes when it
    flattens a chain of them."""
    if len(dfs) == 1:
        return dfs[0]
    spark = dfs[0].sparkSession
    plans = _seq(spark, [d._jdf.logicalPlan() for d in dfs])
    return _frame(spark, _logical(spark).Union(plans, by_name, False))


def aggregate_where(df: DataFrame, keys: list[str], value: Column, cond: Column
                    ) -> DataFrame:
    """`df.groupBy(*keys).agg(value).filter(cond)` as one plan (an `Aggregate` under a
    `Filter`), analysed once: the API's way analyses the aggregate, then the filter over it.
    `value` is named; `cond` may read it and the keys. (A Z-set's consolidation, the commonest
    plan the engine builds, took 22-36 ms the API's way and 17-20 ms this way.)"""
    spark = df.sparkSession
    jvm = spark._jvm
    logical = _logical(spark)
    attrs = [jvm.org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute.quoted(k)
             for k in keys]
    converted = getattr(jvm.org.apache.spark.sql.classic, "ColumnConversions$").__getattr__(
        "MODULE$")
    agg = logical.Aggregate(_seq(spark, attrs),
                            _seq(spark, [*attrs, converted.expression(value._jc)]),
                            df._jdf.logicalPlan(), jvm.scala.Option.empty())
    return _frame(spark, logical.Filter(converted.expression(cond._jc), agg))


def struct_leaf(spark, rows: JavaObject, schema: JavaObject, column: str,
                one_partition: bool) -> DataFrame:
    """Rows held on the JVM (a list of `Row`s of `schema`) as a local relation, read out of
    their struct column `column` (its fields become the columns) and, with `one_partition`,
    said to be one partition (a `coalesce(1)`): the three steps of a pack's frame as one plan.
    (Made the API's way, a local relation, a select and a coalesce, 9-16 ms a frame; this
    way 6-13 ms.)"""
    jvm = spark._jvm
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


def _logical(spark):
    """Catalyst's package of logical plan nodes."""
    return spark._jvm.org.apache.spark.sql.catalyst.plans.logical


def _seq(spark, items) -> JavaObject:
    """A Scala Seq of `items` (a Python list, or a JVM list)."""
    return spark._jvm.org.apache.spark.api.python.PythonUtils.toSeq(items)


def _frame(spark, plan: JavaObject) -> DataFrame:
    """A DataFrame of a logical plan made on the JVM (analysed here, once)."""
    jdf = spark._jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, plan)
    return DataFrame(jdf, spark)
