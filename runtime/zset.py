"""Z-sets as Spark DataFrames: the relation's columns plus `_w` (a long weight); traces add `_i`
(the iteration). Small helpers shared by every operator.

`None` stands for the empty Z-set throughout the runtime: the driver knows when a delta is
empty and skips the work (DESIGN 5) instead of running a Spark job over nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from pyspark.sql import Column
from pyspark.sql.classic.dataframe import DataFrame
from pyspark.sql import functions as F

from runtime.schema import ITER, WEIGHT

# Below this many rows a delta is broadcast to the other side of a join.
BROADCAST_ROWS = 200_000


# Up to this many rows, a delta's rows are brought to the driver by the same action that
# materialises it, which gives the count and the tags without a second job.
LOCAL_ROWS = 5_000


@dataclass
class Frame:
    """A materialised Z-set (its lineage cut) and its row count, known on the driver.
    `tags` counts rows per value of the tag column, when one was asked for."""

    df: DataFrame
    rows: int
    tags: dict | None = None


def materialize(df: DataFrame | None, tag: str | None = None,
                expect_large: bool = False) -> Frame | None:
    """Cut the lineage (a local checkpoint on the executors, see checkpoint_leaf) and count the
    rows, per `tag` value too; None if empty.

    The checkpoint is written by the first action on it, so one action both materialises and
    measures: a collect when the result is expected small (the caller says when its last
    result was large), a count otherwise. (Data re-created from the driver with createDataFrame would be cheaper
    to collect but far dearer to scan: PySpark re-reads it through Python workers.)"""
    if df is None:
        return None
    cp = checkpoint_leaf(df)
    if not expect_large:
        # a plain collect: `limit` would scan partitions in rounds, one job per round
        rows = cp.collect()
        if len(rows) <= LOCAL_ROWS:
            if not rows:
                return None
            tags = None
            if tag is not None:
                tags = {}
                for r in rows:
                    tags[r[tag]] = tags.get(r[tag], 0) + 1
            return Frame(cp, len(rows), tags)
    if tag is None:
        n = cp.count()
        return Frame(cp, n) if n else None
    counts = {r[0]: r[1] for r in cp.groupBy(tag).count().collect()}
    n = sum(counts.values())
    return Frame(cp, n, counts) if n else None


def checkpoint_leaf(df: DataFrame) -> DataFrame:
    """`df`'s rows behind a new plan leaf: a local checkpoint (written by the first action on
    the result), without the plan's lineage *or* its statistics.

    Not `Dataset.localCheckpoint`: that keeps the size estimate of the plan it cuts, Catalyst
    multiplies estimates through joins, and fixpoints join data derived from earlier
    checkpoints with each other, so the estimates' exponents compound until optimising a plan
    takes minutes (measured: epoch 7 of a 4-node transitive closure took 400 s). A leaf made
    from the checkpointed RDD starts from the default estimate every time."""
    spark = df.sparkSession
    jrdd = df._jdf.javaRDD()  # external rows: safe copies, converted on the JVM only
    jrdd.rdd().localCheckpoint()
    return DataFrame(spark._jsparkSession.createDataFrame(jrdd, df._jdf.schema()), spark)


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
    do not matter). The key side is small: broadcast it."""
    if not cols:
        return df
    rk = keys_df.select(*[F.col(c).alias(f"s__{c}") for c in cols])
    return df.join(F.broadcast(rk), null_safe_on(cols, [f"s__{c}" for c in cols]),
                   "left_semi")


def antijoin_keys(df: DataFrame, keys_df: DataFrame, cols: list[str]) -> DataFrame:
    """Rows of `df` whose `cols` do not occur in `keys_df`."""
    rk = keys_df.select(*[F.col(c).alias(f"s__{c}") for c in cols])
    return df.join(F.broadcast(rk), null_safe_on(cols, [f"s__{c}" for c in cols]),
                   "left_anti")
