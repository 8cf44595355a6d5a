"""Z-sets as Spark DataFrames: the relation's columns plus `_w` (a long weight); traces add `_i`
(the iteration). Small helpers shared by every operator.

`None` stands for the empty Z-set throughout the runtime: the driver knows when a delta is
empty and skips the work (DESIGN 5) instead of running a Spark job over nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Hashable

from pyspark.sql import Column
from pyspark.sql.classic.dataframe import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from runtime.schema import ITER, WEIGHT

# Below this many rows a delta is broadcast to the other side of a join.
BROADCAST_ROWS = 50_000


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
    """Cut the lineage of one Z-set and count its rows (per `tag` value too); None if empty.
    See materialize_many, of which this is the one-frame case."""
    return materialize_many({0: df}, {0: tag} if tag else None, expect_large)[0]


def materialize_many(dfs: dict[Hashable, DataFrame | None],
                     tags: dict[Hashable, str] | None = None,
                     expect_large: bool | None = False) -> dict[Hashable, Frame | None]:
    """Materialise several Z-sets with one Spark action (the stratum calls it once per wave
    of operators, the engine once for all inputs and once for all end-of-epoch folds): each is
    cut from its lineage and counted, per value of its `tags` column too; empty ones come
    back as None.

    The frames are packed side by side into one DataFrame (a slot column `_t` says whose row
    it is, `_g` carries the row's tag value; each frame has columns of its own, null in the
    other frames' rows), so that Spark runs all their plans as one job, with independent
    stages in parallel, instead of one job after another.

    When the result is expected small, the packed rows are collected on the JVM and become a
    local relation (a plan leaf holding the rows, with exact statistics, that later broadcasts
    and scans read without a Spark job); the rows' tags are counted on the driver. Otherwise
    it is a local checkpoint on the executors (checkpoint_leaf), counted by an aggregate in the
    same action. `expect_large=None` (size unknown, e.g. a user's DataFrame) takes that way
    and then, if the result is small after all, turns it into a local relation (a second,
    cheap action)."""
    tags = tags or {}
    keys = [k for k, d in dfs.items() if d is not None]
    out: dict[Hashable, Frame | None] = {k: None for k in dfs}
    if not keys:
        return out
    parts = []
    layout: list[tuple[str, T.DataType, int]] = []  # packed column, type, slot
    for slot, k in enumerate(keys):
        for j, f in enumerate(dfs[k].schema.fields):
            layout.append((f"f{slot}_{j}", f.dataType, slot))
    for slot, k in enumerate(keys):
        df = dfs[k]
        tag = tags.get(k)
        g = F.col(tag).cast("long") if tag else F.lit(None).cast("long")
        cols = [F.lit(slot).alias("_t"), g.alias("_g")]
        names = df.columns
        for name, dtype, owner in layout:
            if owner == slot:
                j = int(name.split("_", 1)[1])
                cols.append(F.col(names[j]).alias(name))
            else:
                cols.append(F.lit(None).cast(dtype).alias(name))
        parts.append(df.select(*cols))
    packed = reduce(lambda a, b: a.union(b), parts)
    counts: dict[tuple[int, int | None], int] = {}
    if expect_large is not False:
        base = checkpoint_leaf(packed)
        for r in base.groupBy("_t", "_g").count().collect():
            counts[(r[0], r[1])] = r[2]
        if expect_large is None and sum(counts.values()) <= LOCAL_ROWS:
            base, _ = local_relation(base)
    else:
        # small: one task reads it all (a union of many small leaves would otherwise run
        # one task per leaf partition, which is what costs time at this size)
        base, n = local_relation(packed.coalesce(1))
        if n <= LOCAL_ROWS:
            for r in base.select("_t", "_g").collect():  # local rows: no Spark job
                counts[(r[0], r[1])] = counts.get((r[0], r[1]), 0) + 1
        else:
            # larger than expected: a local relation this size would be shipped with every
            # task that reads it (and broadcast whole); move it to the executors instead
            base = checkpoint_leaf(base)
            for r in base.groupBy("_t", "_g").count().collect():
                counts[(r[0], r[1])] = r[2]
    for slot, k in enumerate(keys):
        per_tag = {g: n for (t, g), n in counts.items() if t == slot}
        rows = sum(per_tag.values())
        if not rows:
            continue
        names = dfs[k].columns
        df = base.filter(F.col("_t") == slot).select(
            *[F.col(f"f{slot}_{j}").alias(n) for j, n in enumerate(names)])
        if rows <= LOCAL_ROWS:
            df = df.coalesce(1)
        out[k] = Frame(df, rows, per_tag if k in tags else None)
    return out


def local_relation(df: DataFrame) -> tuple[DataFrame, int]:
    """`df`'s rows collected on the JVM (one action; they never cross to Python) behind a
    local-relation leaf: no lineage, exact statistics, and read without a Spark job. Returns
    it and its row count."""
    spark = df.sparkSession
    jrows = df._jdf.collectAsList()
    local = spark._jsparkSession.createDataFrame(jrows, df._jdf.schema())
    return DataFrame(local, spark), jrows.size()


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
