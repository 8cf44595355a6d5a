"""The physical layer: turning Z-set plans into materialised leaves, and the Spark-internal
means it takes (the JVM side of a DataFrame, RDD checkpoints, local relations).

Every delta the engine keeps is cut from its lineage here, so plans never grow with
iterations or epochs: a small result becomes a local relation (its rows collected on the JVM,
behind a plan leaf with exact statistics, read by later plans without a Spark job), a large
one a checkpoint on the executors. Several Z-sets are materialised by one Spark action.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Hashable

from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.classic.dataframe import DataFrame

from runtime.config import DEFAULT, Config


@dataclass
class Frame:
    """A materialised Z-set (its lineage cut) and its row count, known on the driver.
    `tags` counts rows per value of the tag column, when one was asked for."""

    df: DataFrame
    rows: int
    tags: dict | None = None


def materialize(df: DataFrame | None, tag: str | None = None, expect_large: bool = False,
                config: Config = DEFAULT) -> Frame | None:
    """Cut the lineage of one Z-set and count its rows (per `tag` value too); None if empty.
    See materialize_many, of which this is the one-frame case."""
    return materialize_many({0: df}, {0: tag} if tag else None, expect_large, config)[0]


def materialize_many(dfs: dict[Hashable, DataFrame | None],
                     tags: dict[Hashable, str] | None = None,
                     expect_large: bool | None = False,
                     config: Config = DEFAULT) -> dict[Hashable, Frame | None]:
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
        if expect_large is None and sum(counts.values()) <= config.local_rows:
            base, _ = local_relation(base)
    else:
        # small: one task reads it all (a union of many small leaves would otherwise run
        # one task per leaf partition, which is what costs time at this size)
        base, n = local_relation(packed.coalesce(1))
        if n <= config.local_rows:
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
        if rows <= config.local_rows:
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


