"""Lookups by literal keys (runtime/zset.lookup, what narrows a large side by a small delta's
keys) keep exactly the rows whose key is one of the values, for every kind of literal key:
strings SQL text cannot carry as they are, integers at and beyond a long's range, booleans,
null; under either way Spark may read string escapes. The arrangements lookups read: one
read by one task, a large first load arranged by the job that makes its set, a large fold
arranged by the job that merges it, and no arrangement left cached once its batch is merged.
What an imported change meets in the past at later iterations, fetched by key ahead, and
looked up by the inputs' action with the updated rows' keys. A change of a few rows given in
Python made in one stage."""
from __future__ import annotations

import random
from decimal import Decimal

import pytest

from ddlog.runtime.zset import lookup

STRINGS = ["a", "it's", "back\\slash", "\\'", "'", "", "new\nline", "ünï", "`tick`",
           "x' OR 1=1 --", None]
INTS = [0, 1, -1, 7, 2 ** 31, -(2 ** 63) + 1, 2 ** 63 - 1, -(2 ** 63), None]
BIGS = [2 ** 63, -(2 ** 63) - 1, 10 ** 30, 5, None]  # beyond a long: a decimal column
BOOLS = [True, False, None]


@pytest.fixture(scope="module")
def table(spark):
    from pyspark.sql import types as T

    rng = random.Random(7)
    n = max(len(STRINGS), len(INTS), len(BIGS))
    big = [None if v is None else Decimal(v) for v in BIGS]
    rows = [(STRINGS[k % len(STRINGS)], INTS[k % len(INTS)], big[k % len(BIGS)],
             BOOLS[k % len(BOOLS)], k) for k in range(3 * n)]
    rng.shuffle(rows)
    schema = T.StructType([T.StructField("weird col", T.StringType()),
                           T.StructField("n", T.LongType()),
                           T.StructField("big", T.DecimalType(38, 0)),
                           T.StructField("b", T.BooleanType()),
                           T.StructField("id", T.LongType())])
    return spark.createDataFrame(rows, schema), rows


@pytest.mark.parametrize("escaped", ["false", "true"])
def test_lookup_keeps_exactly_the_rows_of_its_keys(spark, table, escaped):
    df, rows = table
    rng = random.Random(escaped)
    before = spark.conf.get("spark.sql.parser.escapedStringLiterals")
    spark.conf.set("spark.sql.parser.escapedStringLiterals", escaped)
    try:
        for pos, (col, domain) in enumerate([("weird col", STRINGS), ("n", INTS),
                                             ("big", BIGS), ("b", BOOLS)]):
            for _ in range(6):
                keys = set(rng.sample(domain, rng.randint(0, len(domain))))
                got = sorted(r["id"] for r in lookup(df, col, keys).collect())
                want = sorted(r[4] for r in rows if r[pos] in keys)
                assert got == want, (col, keys)
    finally:
        spark.conf.set("spark.sql.parser.escapedStringLiterals", before)


def test_lookup_lists_stay_prunable(spark):
    """More than ten keys go as several IN lists of ten: Spark turns a longer list into an
    InSet, which cached and Parquet scans cannot skip batches by."""
    df = spark.range(1000).withColumnRenamed("id", "k")
    keys = set(range(0, 1000, 37))  # 28 keys
    found = lookup(df, "k", keys)
    assert sorted(r["k"] for r in found.collect()) == sorted(keys)
    plan = found._jdf.queryExecution().optimizedPlan().toString()
    assert " IN (" in plan and "INSET" not in plan.upper(), plan


def test_a_one_task_lookup_meets_a_small_action_s_local_relation_in_one_partition(spark):
    """config.one_task_lookups: a lookup of an arrangement (hash-partitioned four ways) read
    as one partition keeps the same rows, and a small action joins it with a local relation of
    one partition (as the engine holds small deltas) in one partition. Read as the
    arrangement's partitions, Spark shuffles the local relation to those four, and the join
    runs a task per partition."""
    import re

    from ddlog.runtime.config import Config
    from ddlog.runtime.physical import arrange, driver_sized

    config = Config(arrange_partitions=4)
    df = arrange(spark.range(10_000).selectExpr("id % 1000 AS k", "id AS v"), ["k"], config)[0]
    small = spark.createDataFrame([(3,), (999,)], "k long").coalesce(1)
    keys = {3, 500, 999, 1234}
    try:
        for one_task in (False, True):
            found = lookup(df, "k", keys, one_task)
            assert found.rdd.getNumPartitions() == (1 if one_task else 4)
            assert sorted(r["v"] for r in found.collect()) == \
                [v for v in range(10_000) if v % 1000 in keys]
            with driver_sized(spark, config):
                joined = found.join(small, "k")
                plan = joined._jdf.queryExecution().executedPlan().toString()
                got = sorted(r["v"] for r in joined.collect())
            # the join's own exchanges (the arrangement's, inside its cache, are not planned)
            shuffled = {int(n) for n in re.findall(r", (\d+)\), ENSURE_REQUIREMENTS", plan)}
            assert shuffled == ({1} if one_task else {4}), plan
            assert got == [v for v in range(10_000) if v % 1000 in (3, 999)]
    finally:
        df.unpersist()


def test_a_change_of_a_few_rows_given_in_python_is_made_in_one_stage(spark):
    """The effective change of updates given as Python rows (a `feed`, the API's insert and
    delete) reads the stored relation by their keys and runs each step in one partition:
    its small action shuffles nothing (it ran four stages). The change is the set change the
    updates make: a row inserted that was absent, a row deleted that was present, and
    nothing for a row inserted that was there or a row inserted and deleted again."""
    import os

    from ddlog.api import Program
    from ddlog.types import Update
    from ddlog.runtime.physical import driver_sized
    from tests.support import PROGRAMS

    p = Program.load(os.path.join(PROGRAMS, "reach.dl"), spark)
    p.insert("Edge", [(k, k + 1) for k in range(20)])
    p.insert("Root", [(0,)])
    p.commit()
    ins, dels = [(3, 4), (30, 31), (40, 41)], [(5, 6), (40, 41), (50, 51)]
    updates = [Update(sign, spark.createDataFrame(rows, "c0 long, c1 long"), rows)
               for sign, rows in ((1, ins), (-1, dels))]
    change = p.engine.effective_change("Edge", updates)
    with driver_sized(spark):
        plan = change._jdf.queryExecution().executedPlan().toString()
        got = sorted(tuple(r) for r in change.collect())
    assert "Exchange" not in plan, plan
    assert got == [(5, 6, -1), (30, 31, 1)]


def test_a_large_first_load_is_arranged_by_the_job_that_makes_its_set(spark):
    """A first load larger than config.arrange_rows, into a relation read by key, is arranged
    by the job that makes its set of rows (Engine.arranged_at_once): one shuffle, not a
    checkpoint and a second shuffle at its first read. Whether its size is counted (Python
    rows) or estimated by Spark (a DataFrame), the stored relation and everything derived
    from it stay what the oracle says, through later epochs of inserts and deletes over the
    arranged batch; a load Spark knows nothing of the size of takes the usual way."""
    import os

    from ddlog.api import Program
    from ddlog.runtime.config import Config
    from ddlog.runtime.physical import estimated_rows
    from tests.differential.harness import Differential
    from tests.differential.test_engine_programs import WORKLOADS
    from tests.oracle import evaluate
    from tests.support import PROGRAMS, seed_for

    tc = os.path.join(PROGRAMS, "tc.dl")
    # above 10 rows a load is arranged at once; above 4 it stays on the executors
    config = Config(arrange_rows=10, local_rows=4, recompute_ratio=float("inf"))

    def edge_batch(p):
        """Edge's one stored batch, and whether the job that made its set arranged it (the
        set's aggregate is in the arrangement's cached plan) rather than a read of the
        checkpointed set later."""
        [b] = p.engine.traces["Edge"].batches
        return b, b.arranged and "max_by" in b.df._jdf.queryExecution().executedPlan().toString()

    # counted: 40 Python rows (with duplicates) in the first epoch
    p = Program.load(tc, spark, config=config)
    d = Differential(p, "tc, arranged at once", seed_for("arranged-at-once"))
    d.step([("insert", "Edge", (k % 9, (k * 5) % 7)) for k in range(40)])
    b, at_once = edge_batch(p)
    assert at_once and b.rows == len({(k % 9, (k * 5) % 7) for k in range(40)})
    d.run(WORKLOADS["tc"], epochs=4)

    # estimated: a DataFrame whose size Spark's optimiser estimates (from its 60 rows);
    # inserted twice and one of its rows deleted in the same transaction (the last update
    # of a row decides); Edge and Path against the oracle
    df = spark.range(60).selectExpr("id % 8 AS src", "(id * 3) % 11 AS dst")
    assert estimated_rows(df) > config.arrange_rows
    q = Program.load(tc, spark, config=config)
    q.insert("Edge", df)
    q.insert("Edge", df)
    q.delete("Edge", [(0, 0)])
    q.commit()
    b, at_once = edge_batch(q)
    want = {(k % 8, (k * 3) % 11) for k in range(60)} - {(0, 0)}
    assert at_once and b.rows == len(want)
    expected = evaluate(q.compiled.program, {"Edge": want})
    for rel in ("Edge", "Path"):
        assert {tuple(r) for r in q.relation(rel).collect()} == expected[rel], rel

    # unknown: rows given to createDataFrame (a Python RDD), however many
    unknown = spark.createDataFrame([(k, k + 1) for k in range(30)], "src long, dst long")
    assert estimated_rows(unknown) is None
    u = Program.load(tc, spark, config=config)
    u.insert("Edge", unknown)
    u.commit()
    b, at_once = edge_batch(u)
    assert b.arranged and not at_once and b.rows == 30  # arranged when the fixpoint read it


def test_a_large_fold_is_arranged_by_the_job_that_merges_it(spark):
    """At the epoch's end, the new batches of a trace read by key are merged into one; when
    that batch is larger than config.arrange_rows, the job that merges it also arranges it
    (Trace._merge): the rows are partitioned by the key before the merge's aggregate, so one
    shuffle does both, where a checkpoint now and an arrangement at the first read took two.
    Later epochs read the arranged batch, and merge into it, and still agree with the
    oracle."""
    import os

    from ddlog.api import Program
    from ddlog.runtime.config import Config
    from tests.differential.harness import Differential
    from tests.differential.test_engine_programs import WORKLOADS
    from tests.support import PROGRAMS, seed_for

    # above 10 rows a batch is arranged; above 4 it stays on the executors
    config = Config(arrange_rows=10, local_rows=4, recompute_ratio=float("inf"))
    p = Program.load(os.path.join(PROGRAMS, "tc.dl"), spark, config=config)
    d = Differential(p, "tc, folds arranged", seed_for("fold-arranged"))
    # a chain of 8 nodes: 28 paths, found over 7 iterations (several batches to merge)
    d.step([("insert", "Edge", (k, k + 1)) for k in range(7)])
    path = p.engine.traces["Path"]
    assert path.arrange_by is not None
    [b] = path.batches
    plan = b.df._jdf.queryExecution().executedPlan().toString()
    # arranged by the merge itself, not by a read (the step's check against the oracle
    # reads Path, which would arrange a checkpointed batch: a plan without the aggregate):
    # the merge's aggregate is in the arrangement's cached plan, above its only shuffle
    assert b.arranged and b.rows == 28
    assert "HashAggregate" in plan and plan.count("Exchange hashpartitioning") == 1
    d.run(WORKLOADS["tc"], epochs=4)


def test_no_arrangement_stays_cached_after_its_batch_is_merged(spark, monkeypatch):
    """Every arrangement the engine caches (physical.arrange, through its traces) is released
    once its batch is merged into another or dropped: in long fixpoints, a relation that a
    later recursive stratum imports (its batches of the epoch are arranged when read) merges
    its older iterations' batches every few iterations, and those caches would otherwise
    stay in memory for the session. The results agree with the oracle."""
    import ddlog.runtime.trace as trace_module
    from ddlog.api import Program
    from ddlog.runtime.config import Config
    from tests.differential.harness import Differential
    from tests.support import seed_for

    made = []

    def arrange(df, keys, config):
        out, rows = arrange_(df, keys, config)
        made.append(out)
        return out, rows

    arrange_ = trace_module.arrange
    monkeypatch.setattr(trace_module, "arrange", arrange)
    program = """
        input relation Edge(src: bigint, dst: bigint)
        relation Path(src: bigint, dst: bigint)
        Path(x, y) :- Edge(x, y).
        Path(x, z) :- Path(x, y), Edge(y, z).
        output relation Far(src: bigint, dst: bigint)
        Far(x, y) :- Path(x, y).
        Far(x, z) :- Far(x, y), Path(y, z).
    """
    # batches above 3 rows arranged, above 2 on the executors; merged past 2 an epoch
    config = Config(arrange_rows=3, local_rows=2, max_cur_batches=2,
                    recompute_ratio=float("inf"))
    p = Program.load(program, spark, config=config)
    d = Differential(p, "arrangements released", seed_for("arrangements-released"))
    d.step([("insert", "Edge", (k, k + 1)) for k in range(12)])  # 11 iterations of Path
    d.step([("delete", "Edge", (5, 6)), ("insert", "Edge", (12, 0))])
    traces = p.engine.all_traces().values()
    live = {id(b.df) for t in traces for b in [*t.batches, *t.cur_batches]}
    assert len(made) > len(live)  # merged batches had been arranged
    kept = [df for df in made if id(df) not in live and df.storageLevel.useMemory]
    assert not kept, f"{len(kept)} of {len(made)} arrangements still cached"


def test_what_an_imported_change_meets_later_is_fetched_by_the_horizon(spark, monkeypatch):
    """An edge inserted or deleted down a reachability chain meets Reach's past only at a
    later iteration: iteration 0 is quiescent, and the horizon's action fetches, by key, the
    join's rows for every later iteration at once (JoinOp._ahead). The steps at those
    iterations read the fetched rows instead of looking the past up again. After every
    epoch, over the chain and over random epochs of inserts and deletes, the results agree
    with the oracle, and every trace, iteration by iteration, is the one the same epochs
    leave without fetching ahead."""
    import os
    from dataclasses import replace

    from ddlog.api import Program
    from ddlog.runtime.operators.antijoin import AntiJoinOp
    from ddlog.runtime.operators.join import JoinOp
    from tests.differential.harness import INCREMENTAL, Differential, random_epoch
    from tests.differential.test_engine_programs import WORKLOADS
    from tests.support import PROGRAMS, seed_for

    used = []
    fetched_ = JoinOp._fetched

    def fetched(self, d, i):
        out = fetched_(self, d, i)
        used.append(out is not None)
        return out

    monkeypatch.setattr(JoinOp, "_fetched", fetched)
    # a past of more than 2 rows is read by the keys of the change that meets it
    config = replace(INCREMENTAL, narrow_rows=2)
    path = os.path.join(PROGRAMS, "reach.dl")
    ahead, plain = (Program.load(path, spark, config=config) for _ in range(2))
    for stratum in plain.engine.strata:  # the other never fetches ahead
        for op in stratum.ops.values():
            op = op.semi if isinstance(op, AntiJoinOp) else op
            if isinstance(op, JoinOp):
                op.y_at_zero = (False, False)
    d = Differential(ahead, "reach, fetched ahead", seed_for("fetched-ahead"))
    other = Differential(plain, "reach, not fetched ahead", d.seed)

    def step(updates):
        d.step(updates)  # checked against the oracle
        other.apply(updates)
        plain.commit()
        assert _nested_state(ahead) == _nested_state(plain), d.context()

    step([("insert", "Root", (0,)), *[("insert", "Edge", (k, k + 1)) for k in range(8)]])
    # meets Reach(2) and Reach(6), found at iterations 2 and 6: rows fetched for two
    # iterations, each read at its own
    step([("insert", "Edge", (2, 40)), ("insert", "Edge", (6, 41))])
    assert any(used), "the join read no rows fetched ahead"
    step([("delete", "Edge", (2, 40)), ("insert", "Edge", (3, 30))])
    rng = random.Random(d.seed)
    for kind in ("mixed", "break", "net", "mixed"):
        step(random_epoch(rng, kind, d.program, WORKLOADS["reach"], d.inputs))


# Reachability over nodes named by an Option<string>: the join's key compares null-safely
# (None reaches None), and the driver's join must too.
OPTION_REACH = """
input relation Link(src: Option<string>, dst: Option<string>)
input relation Start(node: Option<string>)
output relation Reached(node: Option<string>)
Reached(n) :- Start(n).
Reached(y) :- Reached(x), Link(x, y).
"""


@pytest.mark.parametrize("name", ["reach", "tc", "option reach"])
def test_what_an_input_change_meets_later_is_looked_up_by_the_inputs_action(spark, monkeypatch,
                                                                            name):
    """An input's change given in Python: the inputs' action also looks up, by the keys of
    the updated rows, the past that a recursive stratum's join meets at later iterations
    (JoinOp.prefetch), and the driver joins those rows with the change (_joined_ahead), so
    that the stratum's horizon runs no Spark job. Over a chain whose new edges meet the past
    late (reach) and seeded random epochs, after every epoch the program agrees with the
    oracle and every trace, row by row with its iteration and weight, is the one the same
    epochs leave without the lookups; the driver's join was used, and the epochs took no more
    Spark jobs (fewer over reach's chain)."""
    import os
    from dataclasses import replace

    from ddlog.api import Program
    from ddlog.runtime.operators.join import JoinOp
    from tests.differential.harness import INCREMENTAL, Differential, Workload, random_epoch
    from tests.differential.test_engine_programs import WORKLOADS
    from tests.support import PROGRAMS, seed_for

    joined = []
    joined_ahead = JoinOp._joined_ahead

    def counted(self, d, after):
        done = joined_ahead(self, d, after)
        joined.append(done)
        return done

    monkeypatch.setattr(JoinOp, "_joined_ahead", counted)
    # a past of more than 2 rows is read by the keys of the change that meets it
    config = replace(INCREMENTAL, narrow_rows=2)
    text = OPTION_REACH if name == "option reach" else os.path.join(PROGRAMS, f"{name}.dl")
    workload = WORKLOADS.get(name, Workload(initial_for={"Start": 2}))
    looked_up = Program.load(text, spark, config=config)
    plain = Program.load(text, spark, config=replace(config, prefetch=False))
    d = Differential(looked_up, f"{name}, looked up ahead", seed_for(f"prefetch/{name}"))
    other = Differential(plain, f"{name}, not looked up", d.seed)
    jobs = [0, 0]

    def step(updates):
        d.step(updates)  # checked against the oracle
        other.apply(updates)
        plain.commit()
        assert _nested_state(looked_up) == _nested_state(plain), d.context()
        if d.p.epoch > 1:  # the first epoch has no past to look up
            jobs[0] += looked_up.last_commit.jobs
            jobs[1] += plain.last_commit.jobs

    rng = random.Random(d.seed)
    if name == "reach":
        step([("insert", "Root", (0,)), *[("insert", "Edge", (k, k + 1)) for k in range(8)]])
        # their sources were reached at iterations 2 and 6: they meet Reach's past only there
        step([("insert", "Edge", (2, 40)), ("insert", "Edge", (6, 41))])
        step([("delete", "Edge", (2, 40)), ("insert", "Edge", (3, 30))])
    else:
        step(random_epoch(rng, "load", d.program, workload, d.inputs))
    # ('break' finds a cycle with networkx, whose graphs take no None for a node)
    kinds = ("mixed", "net", "mixed", "load", "mixed", "net") if name == "option reach" \
        else ("mixed", "break", "net", "mixed", "load", "mixed")
    for kind in kinds:
        step(random_epoch(rng, kind, d.program, workload, d.inputs))
    assert any(joined), "the driver joined no looked-up rows"
    # a change that moves at iteration 0 asks its way in that iteration's action anyway: only
    # one that meets the past later alone (reach's chain) saves the horizon's job for sure
    more = f"{jobs[0]} Spark jobs with the lookups, {jobs[1]} without"
    assert jobs[0] < jobs[1] if name == "reach" else jobs[0] <= jobs[1], more


def _nested_state(p) -> dict[str, set[tuple]]:
    """Every trace of a program's engine at an epoch's end, its rows with their iterations
    and weights, summed over its batches (arrays as tuples)."""
    from ddlog.runtime.schema import WEIGHT
    from ddlog.runtime.trace import INF
    from ddlog.runtime.zset import consolidate
    from tests.differential.harness import collect_all

    sums = {name: consolidate(df, [c for c in df.columns if c != WEIGHT])
            for name, t in p.engine.all_traces().items() if (df := t.past(0, INF)) is not None}
    rows = collect_all({name: z for name, z in sums.items() if z is not None})
    return {name: {_frozen(r) for r in rows.get(name, [])} for name in p.engine.all_traces()}


def _frozen(v):
    """A collected value with its arrays (lists) as tuples, so that rows can go in a set."""
    return tuple(_frozen(x) for x in v) if isinstance(v, (list, tuple)) else v
