"""Durable epochs in one process: a state directory's traces are written at each epoch's end
by several threads at once (config.persist_threads), as Parquet or, when the driver holds
their rows, as JSON lines, and what they wrote must be the oracle's answer, both in the
running engine and in the state read back from its files.

The command line's tests (tests/e2e) cover the same commits across processes; here the
threads are the subject, on the test session's Spark.
"""
from __future__ import annotations

import math
import random
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from pyspark.sql import types as T

from ddlog.app.database import Database, SparkOptions, Transaction
from ddlog.runtime.config import DEFAULT
from ddlog.runtime import physical
from ddlog.runtime.physical import Frame, json_frame, materialize
from ddlog.runtime.spark import side_by_side
from ddlog.runtime.state import Manifest, Persister, StateDir, StateError, attach, snapshot
from ddlog.runtime.stats import Recorder
from ddlog.runtime.trace import Batch, Trace
from tests.oracle import apply_updates, evaluate

REACH = Path(__file__).resolve().parents[2] / "programs" / "reach.dl"


def test_side_by_side_counts_every_thread_and_waits_for_all(spark):
    """Jobs started by the threads belong to the caller's job group, and their actions to
    the caller's epoch; results keep the calls' order; a failing call raises only once every
    other call has finished."""
    counter = Recorder(spark)
    with counter.scope("threads") as counted:
        got = side_by_side(spark, [lambda k=k: materialize(spark.range(k + 1)).rows
                                   for k in range(3)], threads=3)
    assert got == [1, 2, 3]
    assert counted.jobs >= 3
    assert sorted(a.rows for a in counted.actions) == [1, 2, 3]

    finished = []
    release = threading.Event()

    def slow():
        release.wait(30)
        spark.range(2).count()
        finished.append("slow")

    def failing():
        release.set()
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        side_by_side(spark, [slow, failing], threads=2)
    assert finished == ["slow"]


# the SQL settings the engine sets for its actions (runtime/physical), which a session must
# have back after every epoch
ENGINE_SETTINGS = sorted({*physical._DRIVER_SIZED, *physical._INTERPRETED,
                          *physical._NO_CONSTRAINTS, "spark.sql.shuffle.partitions"})


def _session_settings(spark) -> dict[str, str | None]:
    return {k: spark.conf.get(k, None) for k in ENGINE_SETTINGS}


def test_threads_setting_sql_settings_take_turns(spark):
    """Threads whose actions set SQL settings of their own (physical.spark_settings, as the
    traces' merges at a durable epoch's end do) and threads whose actions need the session's
    own (physical.own_settings, the traces' Parquet writes), at once: each sees, while its
    actions run, the settings it asked for, and the session has its own back at the end.
    (Each thread saving and restoring the session's settings by itself left them as another
    thread had set them.)"""
    before = _session_settings(spark)
    wanted = {"small": {"spark.sql.shuffle.partitions": "1",
                        "spark.sql.adaptive.enabled": "false"},
              "one_job": {"spark.sql.adaptive.enabled": "false",
                          "spark.sql.shuffle.partitions": before["spark.sql.shuffle.partitions"]},
              "own": {k: before[k] for k in ("spark.sql.shuffle.partitions",
                                             "spark.sql.adaptive.enabled")}}
    seen: list[tuple[str, dict]] = []

    block = {"small": lambda: physical.driver_sized(spark, DEFAULT),
             "one_job": lambda: physical.one_job(spark, DEFAULT),
             "own": lambda: physical.own_settings(spark)}

    def worker(k: int):
        kinds = ["small", "own", "one_job"]
        for j in range(6):
            kind = kinds[(k + j) % 3]
            with block[kind]():
                got = {key: spark.conf.get(key, None) for key in wanted[kind]}
                spark.range(k + j + 1).count()
                # read again after the action: another thread's restore in between would show
                got2 = {key: spark.conf.get(key, None) for key in wanted[kind]}
            seen.append((kind, got))
            seen.append((kind, got2))

    side_by_side(spark, [lambda k=k: worker(k) for k in range(4)], threads=4)
    assert len(seen) == 4 * 6 * 2
    for kind, got in seen:
        assert got == wanted[kind], kind
    assert _session_settings(spark) == before


def test_a_thread_cannot_change_settings_while_it_runs_under_the_sessions(spark):
    """Asking for settings of one's own inside own_settings would wait for oneself: it raises."""
    with physical.own_settings(spark):
        with pytest.raises(RuntimeError, match="cannot change"):
            with physical.driver_sized(spark, DEFAULT):
                pass
    with physical.driver_sized(spark, DEFAULT):  # the other way round is its own settings
        with physical.own_settings(spark):
            assert spark.conf.get("spark.sql.shuffle.partitions") == "1"


def _commit_checked(db: Database, inputs: dict[str, set], updates: list,
                    where: str) -> tuple[dict[str, set], dict[str, set]]:
    """Commit `updates` to reach.dl's `db` as one transaction and check Reach and Unreachable
    against the oracle; the inputs after them, and the oracle's values."""
    txn = Transaction()
    for kind, rel, row in updates:
        getattr(txn, kind)(rel, row)
    db.commit(txn)
    inputs = apply_updates(inputs, updates)
    want = evaluate(db.program, inputs)
    for rel in ("Reach", "Unreachable"):
        assert set(db.rows(rel)) == want[rel], f"{where}: {rel}"
    return inputs, want


def edge_updates(rng: random.Random, edges: set, n: int) -> list:
    """`n` random updates of reach.dl's edges over 8 nodes: about a third of them deletes of
    edges in `edges` (those stored before the epoch), the others inserts."""
    updates = []
    for _ in range(n):
        known = sorted(edges)
        if known and rng.random() < 0.3:
            updates.append(("delete", "Edge", rng.choice(known)))
        else:
            updates.append(("insert", "Edge", (rng.randrange(8), rng.randrange(8))))
    return updates


@pytest.mark.parametrize("threads,driver_rows", [(1, None), (4, 4)],
                         ids=["one-thread-json", "four-threads-json-and-parquet"])
def test_durable_epochs_against_the_oracle(spark, tmp_path, threads, driver_rows):
    """Random inserts and deletes into reach.dl, committed to a state directory: after every
    epoch the engine's relations are the oracle's, and so are those of the state opened
    again from its files at the end. With the defaults every batch is small enough to be
    written as JSON lines; with driver_rows=4 the larger ones are Parquet, beside them."""
    rng = random.Random(7 + threads)
    state = tmp_path / "state"
    db = Database.for_program(str(REACH), str(state))
    db.config = replace(db.config, persist_threads=threads, max_past_batches=2)
    if driver_rows is not None:
        db.config = replace(db.config, driver_rows=driver_rows)
    inputs: dict[str, set] = {"Edge": set(), "Root": set()}
    updates = [("insert", "Root", (0,))]  # the first epoch's, with its edges
    settings = _session_settings(spark)
    try:
        for epoch in range(6):
            updates += edge_updates(rng, inputs["Edge"], 5)
            inputs, want = _commit_checked(db, inputs, updates, f"epoch {epoch + 1}")
            updates = []
            # the threads that wrote the epoch's batches left the session its own settings
            assert _session_settings(spark) == settings, f"epoch {epoch + 1}"
    finally:
        db.close()
    again = Database.open(str(state))
    try:
        assert again.epoch == 6
        for rel in ("Reach", "Unreachable", "Edge"):
            assert set(again.rows(rel)) == want[rel], f"re-opened: {rel}"
    finally:
        again.close()
    # the state read back held what the parametrisation says it writes
    kinds = {f.suffix for f in (state / "data").rglob("part-*")}
    assert ".json" in kinds
    assert (".parquet" in kinds) == (driver_rows is not None), kinds


def test_a_reopened_state_gives_up_and_recomputes_as_its_writer_would(spark, tmp_path):
    """What the cost-based fallback measured is kept with the state (Manifest.costs), so that
    each process that opens it again measures an incremental run against the evaluation from
    scratch that made the state, guesses its cost from the paces earlier processes saw, and
    after a give-up recomputes a change as large at once.
    Before, a re-opened state had no measurement: its incremental runs never gave up (a
    1,000-edge `ddlog feed` over 100k edges iterated for 25 s where the `ddlog run` that
    made the state took 15 s). Every epoch runs in a Database of its own and is checked
    against the oracle."""
    state = tmp_path / "state"
    inputs: dict[str, set] = {"Edge": set(), "Root": set()}
    opened_with: list[list] = []  # the paces each process found in the state (Paces.seen)

    def epoch(updates: list, **knobs) -> str:
        """One epoch in a Database of its own; how the Reach stratum ran."""
        nonlocal inputs
        db = (Database.open(str(state)) if state.exists()
              else Database.for_program(str(REACH), str(state)))
        db.config = replace(db.config, **knobs)
        try:
            stratum, = [s for s in db.engine.strata if "Reach" in s.circuit.relations]
            opened_with.append(list(stratum.paces.seen))
            inputs, _ = _commit_checked(db, inputs, updates, f"after {updates}")
            mode, = [s.mode for s in db.last_commit.strata if "Reach" in s.relations]
            return mode
        finally:
            db.close()

    # a chain 0 -> 1 -> ... -> 8 from root 0: the stratum's evaluation from scratch
    assert epoch([("insert", "Root", (0,))] +
                 [("insert", "Edge", (k, k + 1)) for k in range(8)]) == "fresh"
    costs = Manifest.from_json((state / "manifest.json").read_text()).costs
    reach, = [k for k, c in costs.items() if c["scratch"]["iterations"] > 8]  # the recursion
    assert set(costs[reach]) == {"scratch"}
    # it ran in its process's first epoch: counted cold (in a process that runs an epoch on
    # it before, at config.cold_scratch of its time: test_engine_knobs)
    assert costs[reach]["scratch"]["cold"] is True
    # the chain grows by 2 nodes, incrementally: two iterations of one row each, after 0 and
    # 1 rows of the run, whose paces the next process finds (Paces.ahead needs
    # Paces.least of them: a `ddlog feed`'s one epoch would never see as many)
    assert epoch([("insert", "Edge", (8, 9)), ("insert", "Edge", (9, 10))],
                 incremental_budget=float("inf")) == "incremental"
    costs = Manifest.from_json((state / "manifest.json").read_text()).costs
    assert [p[:2] for p in costs[reach]["paces"]["seen"]] == [[1, 0], [1, 1]]
    # two edges, far below recompute_ratio: incremental, unless the run overruns its budget,
    # which with incremental_budget=0 it does after its first iteration (a change of one
    # row would not be remembered: GaveUp.least)
    assert epoch([("insert", "Edge", (10, 11)), ("insert", "Edge", (11, 12))],
                 incremental_budget=0.0) == "recomputed"
    assert [tuple(p) for p in costs[reach]["paces"]["seen"]] == opened_with[-1]
    assert set(Manifest.from_json((state / "manifest.json").read_text())
               .costs[reach]) == {"scratch", "gave_up", "paces"}
    # a change as large next to the stored rows (three edges), with no time budget at all:
    # recomputed at once, as the give-up taught the process before
    assert epoch([("insert", "Edge", (k, k + 1)) for k in range(12, 15)],
                 incremental_budget=float("inf")) == "recomputed"
    gave_up = Manifest.from_json((state / "manifest.json").read_text()).costs[reach]["gave_up"]
    assert gave_up["left"] == DEFAULT.recompute_memory - 1  # one of its recomputes used


@pytest.mark.parametrize("short_lived", [True, False], ids=["short-command", "long-process"])
def test_a_short_command_reads_its_stored_batches_from_their_files(spark, tmp_path,
                                                                   monkeypatch, short_lived):
    """A process that runs one epoch and exits (`ddlog feed`: SparkOptions.short_lived) reads
    the batches it attached from their files, by key where it looks them up, instead of
    arranging them in memory at their first read (config.arrange_stored); a process that
    stays arranges them. Each epoch runs in a Database of its own over a state whose batches
    are Parquet (driver_rows) and large enough to be arranged and read by key (arrange_rows,
    narrow_rows); each is checked against the oracle, and the arrangements made are counted."""
    made: list[str] = []  # the stored batches that reads arranged
    arranged = Trace._arranged

    def watched(self, b):
        df = arranged(self, b)
        if b.path is not None and b.arranged:
            made.append(b.path)
        return df

    monkeypatch.setattr(Trace, "_arranged", watched)
    state = tmp_path / "state"
    # every epoch incremental whatever its time (the fallback's recomputes arrange what they
    # make, and whether one runs would depend on the machine's load)
    knobs = dict(driver_rows=4, arrange_rows=4, narrow_rows=2, recompute_ratio=math.inf,
                 incremental_budget=math.inf)
    rng = random.Random(11)
    inputs: dict[str, set] = {"Edge": set(), "Root": set()}
    updates = [("insert", "Root", (0,)), ("insert", "Root", (5,))] + \
        [("insert", "Edge", (rng.randrange(8), rng.randrange(8))) for _ in range(24)]
    db = Database.for_program(str(REACH), str(state))
    db.config = replace(db.config, **knobs)
    try:
        inputs, _ = _commit_checked(db, inputs, updates, "the first epoch")
    finally:
        db.close()
    for epoch in range(4):
        db = Database.open(str(state), SparkOptions(short_lived=short_lived))
        db.config = replace(db.config, **knobs)
        try:
            # over a state of batches "large" for arrange_rows, a short command's small
            # actions compile their expressions: they read many stored rows
            assert db.engine.config.arrange_stored is not short_lived
            assert db.engine.config.interpret_small is not short_lived
            inputs, _ = _commit_checked(db, inputs, edge_updates(rng, inputs["Edge"], 3),
                                        f"epoch {epoch + 2}")
        finally:
            db.close()
    # the same epochs in a process that stays arrange what they read
    assert (not made) == short_lived, made


# every kind of value a relation's column holds (runtime/schema.SparkTypes), nulls included
SCHEMA = T.StructType([
    T.StructField("n", T.LongType()), T.StructField("x", T.DoubleType()),
    T.StructField("f", T.FloatType()), T.StructField("b", T.BooleanType()),
    T.StructField("s", T.StringType()),
    T.StructField("t", T.StructType([T.StructField("_0", T.LongType()),
                                     T.StructField("_1", T.ArrayType(T.StringType()))])),
    T.StructField("v", T.ArrayType(T.StructType([T.StructField("_0", T.LongType()),
                                                 T.StructField("_1", T.DoubleType())]))),
    T.StructField("_i", T.LongType(), False), T.StructField("_w", T.LongType(), False)])
ROWS = [
    (-(1 << 63), float("nan"), 0.1, True, 'quote " backslash \\ newline \n tab \t',
     (1, ["a", None]), [(1, float("inf")), (2, -0.0)], 0, 1),
    ((1 << 63) - 1, float("-inf"), -3.5, False, "ünïcödé ✓ 𝄞", (None, []), [], 3, -2),
    (None, None, None, None, None, None, None, 1, 1),
    (0, 1e-300, 3.4e38, None, "", (7, None), None, 2, 5),
]


def _same(a, b) -> bool:
    """Rows equal, NaN equal to NaN and -0.0 told from 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) ==
                                                     math.copysign(1, b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_a_small_batch_is_stored_as_json_that_reads_back_every_value(spark, tmp_path):
    """A batch whose rows the driver holds is written as one JSON-lines file named by its
    checksum and read back, by the writer and by a re-opened state, as exactly its rows; a
    changed byte, or another file beside it, is reported as damage when the state is
    opened. (A mutation check: with the checksum test in persist._read removed, this fails.)"""
    source = spark.createDataFrame(ROWS, SCHEMA)
    got = source.collect()
    values = [r.asDict() for r in got]
    state = StateDir(str(tmp_path / "state"))
    state.claim()
    stored = Persister(state, spark, 1)(Frame(source, len(ROWS), local=True, values=values))
    assert stored.rows == len(ROWS) and stored.values == values
    (name, size), = stored.files.items()
    assert name.startswith("part-") and name.endswith(".json")
    assert size == (tmp_path / "state" / stored.path / name).stat().st_size
    assert _same(stored.df.collect(), got)
    assert json_frame(spark, SCHEMA, "").collect() == []  # no lines, no rows

    trace = Trace(SCHEMA.names[:-2])
    trace.batches = [Batch(stored.df, 0, 3, stored.rows, path=stored.path, files=stored.files)]
    trace.iters = {0, 1, 2, 3}
    manifest = Manifest("0" * 64, "p.dl", 1, snapshot({"T": trace}))
    again = Trace(SCHEMA.names[:-2])
    attach({"T": again}, manifest, state, spark)
    assert _same(again.batches[0].df.collect(), got)
    assert again.batches[0].rows == len(ROWS) and again.iters == {0, 1, 2, 3}

    file = tmp_path / "state" / stored.path / name
    data = bytearray(file.read_bytes())
    data[len(data) // 2] ^= 0x01
    file.write_bytes(bytes(data))
    with pytest.raises(StateError, match=f"batch {stored.path} of trace T: .* does not match "
                                         f"its checksum"):
        attach({"T": Trace(SCHEMA.names[:-2])}, manifest, state, spark)
    data[len(data) // 2] ^= 0x01
    file.write_bytes(bytes(data))
    attach({"T": Trace(SCHEMA.names[:-2])}, manifest, state, spark)  # whole again
    state.verify(manifest)
    (file.parent / "part-00001.json").write_text("{}\n")
    with pytest.raises(StateError, match="not ours part-00001.json"):
        state.verify(manifest)  # what opening a state checks before attaching


WEIGHTS = Path(__file__).resolve().parents[1] / "e2e" / "dialect" / "weights.dl"


def test_a_counted_relation_shown_changes_as_its_set_of_records(spark, tmp_path):
    """weights.dl counts Both's derivations. Shown as an internal relation (what `ddlog serve`
    gives a shell with --output-internal-relations), Both changes as the set of its records:
    the edge back adds a derivation to two records and shows nothing, the loss of both
    derivations of a record shows its deletion. The state lists Both as counted and opens
    again so."""
    db = Database.for_program(str(WEIGHTS), str(tmp_path / "st"))
    assert db.compiled.counted == frozenset({"Both"})

    def commit(*updates) -> dict:
        txn = Transaction()
        for op, row in updates:
            (txn.insert if op == "+" else txn.delete)("E", row)
        return db.change_rows(db.commit(txn, internal=True))

    try:
        first = commit(("+", (1, 2)), ("+", (3, 1)))
        assert first["Both"] == [((1, 2), 1), ((1, 3), 1), ((2, 1), 1), ((3, 1), 1)]
        back = commit(("+", (2, 1)))
        assert "Both" not in back and back["W"] == [
            ((1, 2, 5, 2, 5), -1), ((1, 3, 7, 2, 5), 1), ((2, 1, 1, 1, 1), -1),
            ((2, 2, 2, 1, 1), 1)]
        gone = commit(("-", (1, 2)), ("-", (2, 1)))
        assert gone["Both"] == [((1, 2), -1), ((2, 1), -1)]
    finally:
        db.close()
    again = Database.open(str(tmp_path / "st"))
    try:
        assert again.manifest.counted == ["Both"] and again.compiled.counted == {"Both"}
        assert sorted(tuple(r) for r in again.engine.value("Both").collect()) == [(1, 3),
                                                                                    (3, 1)]
    finally:
        again.close()
