"""Lineage stays bounded: the plans the engine materialises do not grow with the
number of fixpoint iterations, nor with the number of epochs.

Every delta is cut from its lineage by `runtime.physical.checkpoint_leaf` (large) or
`runtime.physical.local_relation` (small); this test records the size of each plan handed to
them and checks that the late ones are no larger than the early ones (up to a constant
factor), on a chain whose reachability needs one iteration per edge, then over many epochs.
A second test checks what checkpoint_leaf's leaf holds."""
from __future__ import annotations

import pytest

import ddlog.runtime.physical as physical

CHAIN = """
input relation Edge(src: bigint, dst: bigint)
input relation Root(node: bigint)
output relation Reach(node: bigint)
Reach(r) :- Root(r).
Reach(y) :- Reach(x), Edge(x, y).
"""


@pytest.fixture
def plan_sizes(monkeypatch):
    sizes: list[int] = []

    def recording(original):
        def cut(df):
            sizes.append(len(df._jdf.queryExecution().logical().toString()))
            return original(df)
        return cut

    for name in ("checkpoint_leaf", "local_relation"):
        monkeypatch.setattr(physical, name, recording(getattr(physical, name)))
    return sizes


def test_plans_do_not_grow_with_iterations_or_epochs(spark, plan_sizes):
    from ddlog.api import Program

    n = 36
    p = Program.load(CHAIN, spark)
    p.insert("Edge", [(k, k + 1) for k in range(n)])
    p.insert("Root", [(0,)])
    p.commit()
    assert p.engine.iterations[max(p.engine.iterations)] >= n  # one iteration per chain link
    assert p.relation("Reach").count() == n + 1
    # the last plan is the epoch's end, which folds every trace's batches of the epoch at once
    # (at most config.max_cur_batches per trace, however many iterations ran)
    first_epoch = list(plan_sizes)[:-1]
    early, late = first_epoch[8:16], first_epoch[-8:]
    assert max(late) <= 1.5 * max(early), (early, late)

    plan_sizes.clear()
    for k in range(n, n + 12):  # extend the chain one edge per epoch
        p.insert("Edge", [(k, k + 1)])
        p.commit()
    assert p.relation("Reach").count() == n + 13
    early, late = plan_sizes[:len(plan_sizes) // 3], plan_sizes[-len(plan_sizes) // 3:]
    assert max(late) <= 1.5 * max(early), (early, late)


def _nested_rows(spark, parts: int):
    """Rows of nested values, NaN, -0.0 and nulls, made on the JVM in `parts` partitions."""
    from pyspark.sql import functions as F

    k = F.col("id")
    return spark.range(0, 40, 1, parts).select(
        k.alias("a"),
        F.when(k % 3 == 0, None).otherwise(F.concat(F.lit("s"), k.cast("string"))).alias("b"),
        F.array(k.cast("double"), F.lit(float("nan")), F.lit(None).cast("double")).alias("c"),
        F.create_map(F.lit("k"), F.lit(-0.0)).alias("d"),
        F.when(k % 4 == 0, None).otherwise(F.struct(k.alias("x"), (k / 7).alias("y"))).alias("e"))


def test_a_checkpoint_leaf_reads_the_rows_spark_made_without_their_lineage_or_estimate(spark):
    """checkpoint_leaf keeps the rows as Spark made them: the leaf's RDD is the checkpointed
    one itself (a leaf over `javaRDD`'s Rows read them through a conversion of each row, an
    RDD of its own above the checkpoint). The values come back exactly; the leaf's size
    estimate is Spark's default, not the cut plan's; its partitions are at most the
    session's shuffle partitions, merged without a shuffle."""
    limit = int(spark.conf.get("spark.sql.shuffle.partitions"))
    src = _nested_rows(spark, limit)
    leaf = physical.checkpoint_leaf(src)
    assert sorted(map(repr, leaf.collect())) == sorted(map(repr, src.collect()))
    rdd = leaf._jdf.logicalPlan().rdd()
    assert rdd.isCheckpointed()  # written by the action above, and read as it is
    assert rdd.getNumPartitions() == limit
    default = (1 << 63) - 1  # spark.sql.defaultSizeInBytes
    assert _estimate(src) != default
    assert _estimate(leaf) == default

    wide = src.union(_nested_rows(spark, limit + 3))
    cut = physical.checkpoint_leaf(wide)
    assert sorted(map(repr, cut.collect())) == sorted(map(repr, wide.collect()))
    merged = cut._jdf.logicalPlan().rdd()
    assert merged.getNumPartitions() == limit
    assert "Exchange" not in cut._jdf.queryExecution().executedPlan().toString()


def _estimate(df) -> int:
    """Catalyst's size estimate of `df`'s plan, in bytes."""
    return int(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())
