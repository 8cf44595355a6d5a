"""The epoch's end folds a trace's small batches on the driver when it holds their rows
(Trace.fold_rows), and what it makes there is exactly what the end's Spark action makes."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest
from pyspark.sql import Row
from pyspark.sql import types as T

from ddlog.runtime.zset import consolidate_rows, rows_comparable


def test_rows_consolidate_as_spark_groups_them():
    """Equal rows (structs and arrays too) sum their weights, zeros go, the first occurrence
    keeps its place."""
    rows = [{"c0": Row(a=1, b=[1, 2]), "_i": 0, "_w": 1},
            {"c0": Row(a=1, b=[2, 1]), "_i": 0, "_w": 1},
            {"c0": Row(a=1, b=[1, 2]), "_i": 0, "_w": 2},
            {"c0": Row(a=1, b=[1, 2]), "_i": 1, "_w": 1},
            {"c0": Row(a=1, b=[2, 1]), "_i": 0, "_w": -1}]
    assert consolidate_rows(rows, ["c0", "_i"]) == [
        {"c0": Row(a=1, b=[1, 2]), "_i": 0, "_w": 3},
        {"c0": Row(a=1, b=[1, 2]), "_i": 1, "_w": 1}]


@pytest.mark.parametrize("t, comparable", [
    (T.LongType(), True), (T.StringType(), True), (T.BooleanType(), True),
    (T.ArrayType(T.StructType([T.StructField("x", T.LongType())])), True),
    (T.DoubleType(), False), (T.FloatType(), False),
    (T.StructType([T.StructField("x", T.LongType()), T.StructField("v", T.DoubleType())]),
     False),
    (T.ArrayType(T.DoubleType()), False)])
def test_floating_point_rows_are_left_to_spark(t, comparable):
    """Spark groups NaN with NaN and -0.0 with 0.0; Python does not."""
    schema = T.StructType([T.StructField("c0", t), T.StructField("_w", T.LongType())])
    assert rows_comparable(schema) is comparable


@pytest.mark.parametrize("name", ["structs", "numbers"])
def test_folds_made_on_the_driver_are_the_ones_spark_makes(spark, monkeypatch, name):
    """Two engines run the same epochs of a targeted program (structs, enums, arrays and sets
    of integers and strings; doubles, which stay with Spark): one folds on the driver, one
    folds every trace by the end's Spark action. After every epoch the first agrees with the
    oracle, and every trace of the two holds the same rows, iteration by iteration, in
    batches of the same sizes."""
    from ddlog.api import Program
    from ddlog.runtime.trace import Trace
    from tests.differential.harness import INCREMENTAL, Differential, random_epoch
    from tests.differential.test_engine_targeted import TARGETED
    from tests.differential.test_lookup import _nested_state
    from tests.support import seed_for

    made, refused = [], []
    fold_rows = Trace.fold_rows

    def counted(self, batches):
        out = fold_rows(self, batches)
        if self.config.driver_folds:
            (made if out is not None else refused).append(batches[0].df.schema)
        return out

    monkeypatch.setattr(Trace, "fold_rows", counted)
    text, workload = TARGETED[name]
    driver = Program.load(text, spark, config=INCREMENTAL)
    spark_only = Program.load(text, spark, config=replace(INCREMENTAL, driver_folds=False))
    d = Differential(driver, f"{name}, folded on the driver", seed_for(f"folds/{name}"))
    other = Differential(spark_only, f"{name}, folded by Spark", d.seed)
    rng = random.Random(d.seed)
    for kind in ("load", "mixed", "break", "net", "purge", "mixed"):
        updates = random_epoch(rng, kind, d.program, workload, d.inputs)
        d.step(updates)  # checked against the oracle
        other.apply(updates)
        spark_only.commit()
        assert _nested_state(driver) == _nested_state(spark_only), d.context()
        # the same batches, of the same sizes: nothing that cancelled is kept
        assert _batch_rows(driver) == _batch_rows(spark_only), d.context()
    assert made, "no fold was made on the driver"
    if name == "numbers":
        assert any(not rows_comparable(s) for s in refused), "a double column was folded"


def _batch_rows(p) -> dict[str, list[int]]:
    """The row count of every past batch of every trace of a program's engine."""
    return {name: [b.rows for b in t.batches] for name, t in p.engine.all_traces().items()}


def test_durable_epochs_store_the_folds_made_on_the_driver(spark, tmp_path, monkeypatch):
    """A durable epoch's end writes its small batches from rows the driver holds; merged
    there, they are the ones Spark's action merges. reach.dl in two state directories, the
    second with every fold made by Spark, over the same random epochs: after each, the first
    agrees with the oracle and the two engines' traces hold the same rows in batches of the
    same sizes; opened again from their files, the two states do too."""
    from ddlog.app.database import Database
    from ddlog.runtime.trace import Trace
    from tests.differential.test_durable import REACH, _commit_checked, edge_updates
    from tests.differential.test_lookup import _nested_state

    made = []
    fold_rows = Trace.fold_rows

    def counted(self, batches):
        out = fold_rows(self, batches)
        made.append(out is not None)
        return out

    monkeypatch.setattr(Trace, "fold_rows", counted)
    rng = random.Random(11)
    dbs = [Database.for_program(str(REACH), str(tmp_path / name)) for name in ("a", "b")]
    for db in dbs:
        # no recompute: whether one runs depends on time taken, and a recomputed trace's
        # batches differ from an iterated one's
        db.config = replace(db.config, max_past_batches=2, recompute_ratio=float("inf"),
                            incremental_budget=float("inf"))
    dbs[1].config = replace(dbs[1].config, driver_folds=False)
    inputs: dict[str, set] = {"Edge": set(), "Root": set()}
    updates = [("insert", "Root", (0,))]
    try:
        for epoch in range(5):
            updates += edge_updates(rng, inputs["Edge"], 4)
            where = f"epoch {epoch + 1}"
            _commit_checked(dbs[1], inputs, updates, where)
            inputs, _ = _commit_checked(dbs[0], inputs, updates, where)
            assert _nested_state(dbs[0]) == _nested_state(dbs[1]), where
            assert _batch_rows(dbs[0]) == _batch_rows(dbs[1]), where
            updates = []
    finally:
        for db in dbs:
            db.close()
    assert any(made), "no fold was made on the driver"
    again = [Database.open(str(tmp_path / name)) for name in ("a", "b")]
    try:
        assert _nested_state(again[0]) == _nested_state(again[1])
    finally:
        for db in again:
            db.close()


def test_a_traces_own_merges_made_on_the_driver_are_the_ones_spark_makes(spark, monkeypatch):
    """A trace merges batches of its own too: its past, compacted when it holds more than
    max_past_batches, and a long fixpoint's older iterations (max_cur_batches). Two traces,
    one merging on the driver and one by Spark's action, record the same random deltas (a
    few rows of a string and an integer, some cancelling, over a few iterations an epoch);
    after every epoch they hold the same batches, row for row."""
    from ddlog.runtime import trace
    from ddlog.runtime.config import DEFAULT
    from ddlog.runtime.physical import local_frame, materialize
    from ddlog.runtime.schema import ITER, WEIGHT
    from ddlog.runtime.trace import Trace

    merged = []  # merges made on the driver
    held_many = trace.held_many

    def counted(spark, rows, config):
        merged.append(len(rows))
        return held_many(spark, rows, config)

    monkeypatch.setattr(trace, "held_many", counted)
    config = replace(DEFAULT, max_past_batches=2, max_cur_batches=2)
    cols = ["c0", "c1"]
    traces = [Trace(cols, config), Trace(cols, replace(config, driver_folds=False))]
    schema = T.StructType([T.StructField("c0", T.LongType()), T.StructField("c1", T.StringType()),
                           T.StructField(WEIGHT, T.LongType())])
    rng = random.Random(5)
    for epoch in range(6):
        for i in range(rng.randint(1, 5)):
            rows = [(rng.randint(0, 3), rng.choice("ab"), rng.choice([1, -1, 2]))
                    for _ in range(rng.randint(1, 5))]
            for t in traces:
                t.record(i, materialize(local_frame(spark, schema, rows), config=t.config))
        for t in traces:
            t.end_epoch()
        got = [[sorted(tuple(r) for r in b.df.select(*cols, ITER, WEIGHT).collect())
                for b in t.batches] for t in traces]
        assert got[0] == got[1], f"epoch {epoch}"
    assert len(merged) >= 3, "the trace's merges were not made on the driver"
