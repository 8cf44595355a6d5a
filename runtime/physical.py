"""The physical layer: turning Z-set plans into materialised leaves (local relations and
checkpoints, made by the session's backend, runtime/backend).

Every delta the engine keeps is cut from its lineage here, so plans never grow with
iterations or epochs: a small result becomes a local relation (its rows collected on the JVM,
behind a plan leaf with exact statistics, read by later plans without a Spark job), a large
one a checkpoint on the executors. Several Z-sets are materialised by one Spark action.

The design: docs/design.md, The Spark mapping.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable, Iterator

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ddlog.runtime import backend, stats
from ddlog.runtime.backend import col, union_many
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.spark import settings_gate

if TYPE_CHECKING:
    from pyspark.sql import Row


# The settings under which a small action runs as ONE Spark job of single-task stages: no
# adaptive execution (it submits every shuffle stage as a job of its own), no automatic
# broadcast (a broadcast of anything but a bare local relation is a job too), one shuffle
# partition and one partition per local relation (a union of many tiny leaves would otherwise
# run a task per leaf partition).
_DRIVER_SIZED = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.leafNodeDefaultParallelism": "1",
    "spark.sql.codegen.wholeStage": "false",
    # Pushing a semi- or anti-join below a union copies the join's other side into every
    # branch; over small unions of small leaves that only multiplies the plan (a distinct's
    # step over a few batches grew to a thousand plan lines)
    "spark.sql.optimizer.excludedRules":
        "org.apache.spark.sql.catalyst.optimizer.PushDownLeftSemiAntiJoin,"
        "org.apache.spark.sql.catalyst.optimizer.PushLeftSemiLeftAntiThroughJoin",
}


@contextmanager
def spark_settings(spark, settings: dict[str, str]) -> Iterator[None]:
    """SQL settings for the actions started inside (Spark reads them when it plans an
    action), restored afterwards. They are the session's: other threads' settings and
    own_settings wait until the block ends (runtime/spark.SettingsGate)."""
    with settings_gate(spark).exclusive():
        conf = spark.conf
        saved = {k: conf.get(k, None) for k in settings}
        for k, v in settings.items():
            conf.set(k, v)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    conf.unset(k)
                else:
                    conf.set(k, v)


def own_settings(spark):
    """Run the actions inside under the session's own SQL settings: not while another thread
    has set some of its own (spark_settings), though beside other threads' own_settings."""
    return settings_gate(spark).shared()


# With config.interpret_small, a small action also interprets its expressions instead of
# compiling them: its rows are few, and generating and compiling its projections and
# predicates (Janino, which looks up every name it meets on the class path) takes a large
# share of the JVM's time in small epochs. Spark's setting for it is an internal one; it only
# chooses between two evaluators of the same expressions.
_INTERPRETED = {"spark.sql.codegen.factoryMode": "NO_CODEGEN"}


# Without config.constraint_propagation, the optimiser does not derive what holds of each
# operator's rows (a join key's `isnotnull`, equalities) to add and prune filters. The
# engine's plans are unions and joins over many small leaves, and those facts were worked
# out again for each of them in every action: PruneFilters took a notable share of the time
# in Catalyst's rules and pruned nothing, and ConvertToLocalRelation a larger one, mostly
# evaluating the inferred `isnotnull` filters over local relations. Off, the first takes
# next to nothing and the second less, and runs from scratch are faster. The facts only
# drop rows an equi-join drops anyway: keys that may be null (an Option's) are compared
# null-safely.
_NO_CONSTRAINTS = {"spark.sql.constraintPropagation.enabled": "false"}


def _optimiser(config: Config) -> dict[str, str]:
    """The optimiser's settings for the engine's actions (see _NO_CONSTRAINTS)."""
    return {} if config.constraint_propagation else _NO_CONSTRAINTS


def driver_sized(spark, config: Config = DEFAULT):
    """Plan and run the actions inside for data a driver holds easily."""
    return spark_settings(spark, {**_DRIVER_SIZED, **_optimiser(config),
                                  **(_INTERPRETED if config.interpret_small else {})})


def one_job(spark, config: Config = DEFAULT, interpret: bool = False):
    """Plan and run the actions inside as one Spark job each: without adaptive execution,
    which runs every shuffle stage as a job of its own (and re-plans between them). The
    engine's joins say themselves where a broadcast pays (hints), so little is lost.
    `interpret`: their plans read few rows (interprets), so their expressions are interpreted,
    not compiled."""
    return spark_settings(spark, {"spark.sql.adaptive.enabled": "false", **_optimiser(config),
                                  **(_INTERPRETED_STAGES if interpret else {})})


# an action's stages and expressions interpreted (one_job): no code generated for them
_INTERPRETED_STAGES = {"spark.sql.codegen.wholeStage": "false", **_INTERPRETED}


def interprets(config: Config, reads: int | None) -> bool:
    """Whether an action whose plans read at most `reads` rows (None: not known) interprets
    its expressions whatever the size of its result (config.interpret_rows)."""
    return config.interpret_small and reads is not None and reads <= config.interpret_rows


@dataclass
class Frame:
    """A materialised Z-set (its lineage cut) and its row count, known on the driver.
    `tags` counts rows per value of the tag column, when one was asked for; `local` says the
    rows are held by the driver (a local relation: reading them, or a projection or filter of
    them, takes no Spark job). `values`, when the frame is small enough (config.driver_rows),
    are its rows in Python, column -> value: what later lookups take their keys from without
    asking Spark."""

    df: DataFrame
    rows: int
    tags: dict | None = None
    local: bool = False
    values: list[dict] | None = None


def materialize(df: DataFrame | None, tag: str | None = None, expect_large: bool = False,
                config: Config = DEFAULT) -> Frame | None:
    """Cut the lineage of one Z-set and count its rows (per `tag` value too); None if empty.
    See materialize_many, of which this is the one-frame case."""
    return materialize_many({0: df}, {0: tag} if tag else None, expect_large, config)[0]


def materialize_many(dfs: dict[Hashable, DataFrame | None],
                     tags: dict[Hashable, str] | None = None,
                     expect_large: bool | None = False,
                     config: Config = DEFAULT,
                     reads: int | None = None) -> dict[Hashable, Frame | None]:
    """Materialise several Z-sets with one Spark action (the stratum calls it once per wave
    of operators, the engine once for all inputs and once for all end-of-epoch folds): each is
    cut from its lineage and counted, per value of its `tags` column too; empty ones come
    back as None.

    The frames are packed side by side into one DataFrame: a slot column `_t` says whose row
    it is, `_g` carries the row's tag value, and each frame's row is a struct column, its own
    or shared with the frames of the same columns (null in the other frames' rows), so that
    Spark runs all their plans as one job.

    When the result is expected small, the action runs `driver_sized` (one job) and the
    packed rows are collected on the JVM into local relations, one per frame (plan leaves
    holding the rows, with exact statistics, that later plans read without a Spark job); the
    rows' tags are counted on the driver. Otherwise it is a local checkpoint on the executors
    (checkpoint_leaf), counted by an aggregate in the same action. `expect_large=None` (size
    unknown, e.g. a user's DataFrame) takes that way and then, if the result is small after
    all, turns it into a local relation (a second, cheap action). A large result's small
    frames (at most local_rows rows together) get a local relation of their own, by one more
    action, so that reading them later does not scan the large frames packed beside them.
    `reads`: about how many rows the plans read at most, when known; few (`interprets`), the
    action interprets its expressions however large its result."""
    tags = tags or {}
    keys = [k for k, d in dfs.items() if d is not None]
    out: dict[Hashable, Frame | None] = {k: None for k in dfs}
    if not keys:
        return out
    with stats.action(len(keys)) as done:
        _materialize(dfs, tags, expect_large, config, reads, keys, out, done)
        done.rows = sum(fr.rows for fr in out.values() if fr is not None)
    return out


def _materialize(dfs: dict[Hashable, DataFrame | None], tags: dict[Hashable, str],
                 expect_large: bool | None, config: Config, reads: int | None,
                 keys: list[Hashable], out: dict[Hashable, Frame | None],
                 done: stats.ActionStats) -> None:
    """materialize_many's work, filling in `out`; Spark's planning timed into `done`."""
    spark = dfs[keys[0]].sparkSession
    structs, col_of = _shared_structs([dfs[k].schema for k in keys])
    nulls = [F.lit(None).cast(st).alias(f"s{j}") for j, st in enumerate(structs)]
    selects = []
    for slot, k in enumerate(keys):
        df = dfs[k]
        tag = tags.get(k)
        g = col(tag).cast("long") if tag else F.lit(None).cast("long")
        own = F.struct(*[col(c) for c in df.columns]).alias(f"s{col_of[slot]}")
        selects.append([F.lit(slot).alias("_t"), g.alias("_g"),
                        *[own if j == col_of[slot] else nulls[j] for j in range(len(structs))]])
    # one plan: each frame's select and one Union node over them, in order (_slot_bounds
    # relies on it)
    packed = union_many([dfs[k] for k in keys], columns=selects)
    columns = [dfs[k].columns for k in keys]
    whole: _Local | None = None  # the pack as local relations, when it is small
    if expect_large is False:
        whole = _collect_local(packed, columns, col_of, config, done=done)
        if whole.rows > config.local_rows:
            # larger than expected: a local relation this size would be shipped with every
            # task that reads it (and broadcast whole); move it to the executors instead
            base, counts = _checkpoint_counted(whole.df)
            whole = None
    else:
        with one_job(spark, config, interprets(config, reads)):
            stats.planned(done, lambda: backend.of(packed).plan(packed))
            base, counts = _checkpoint_counted(packed)
        if expect_large is None and sum(counts.values()) <= config.local_rows:
            whole = _collect_local(base, columns, col_of, config, counts)
    if whole is not None:
        counts = whole.counts
    sizes = {slot: sum(n for (t, _), n in counts.items() if t == slot)
             for slot in range(len(keys))}
    # Small frames of a large pack get a local relation of their own (one more action, one
    # scan of the checkpoint): read from the checkpoint, every later read of a 10-row frame
    # would scan the million rows packed beside it (a fixpoint that reads such a frame in
    # every iteration would pay that scan in each).
    small = [slot for slot, n in sizes.items() if 0 < n <= config.local_rows]
    split: _Local | None = None
    if whole is None and small and sum(sizes[s] for s in small) <= config.local_rows:
        split = _collect_local(base.filter(col("_t").isin(small)), columns, col_of, config,
                               {k: n for k, n in counts.items() if k[0] in small})
    for slot, k in enumerate(keys):
        per_tag = {g: n for (t, g), n in counts.items() if t == slot}
        rows = sizes[slot]
        if not rows:
            continue
        held = whole or (split if slot in small else None)
        column = f"s{col_of[slot]}"
        df = (held.frame(slot, column, config.one_partition_locals) if held is not None
              else _slot_rows(base, slot, column))
        out[k] = Frame(df, rows, per_tag if k in tags else None, held is not None,
                       held.values_of(slot) if held is not None else None)


def held_many(spark, rows: dict[Hashable, tuple[T.StructType, list[dict]]],
              config: Config = DEFAULT) -> dict[Hashable, Frame | None]:
    """Z-sets whose rows the driver holds (dicts by column, of each one's schema) as the
    frames materialize_many would make of them when small (local relations, their rows kept
    in Python), without a Spark job: packed as it packs frames, the pack goes to the JVM as
    JSON lines, whose parse the optimiser folds into a local relation (collecting that runs
    no job), and each frame is a leaf over its rows there. Empty ones come back as None."""
    out: dict[Hashable, Frame | None] = {k: None for k in rows}
    keys = [k for k, (_, rs) in rows.items() if rs]
    if not keys:
        return out
    structs, col_of = _shared_structs([rows[k][0] for k in keys])
    pack = T.StructType([T.StructField("_t", T.LongType()), T.StructField("_g", T.LongType()),
                         *[T.StructField(f"s{j}", st) for j, st in enumerate(structs)]])
    lines: list[tuple] = []
    bounds, values, counts = {}, {}, {}
    for slot, k in enumerate(keys):
        schema, rs = rows[k]
        names = [f.name for f in schema.fields]
        start = len(lines)
        for r in rs:
            own = tuple(r[n] for n in names)
            lines.append((slot, None, *[own if j == col_of[slot] else None
                                        for j in range(len(structs))]))
        bounds[slot], values[slot], counts[(slot, None)] = (start, len(lines)), rs, len(rs)
    with driver_sized(spark, config):
        base, n, rows_held = local_relation(local_frame(spark, pack, lines))
    held = _Local(base, n, counts, values, bounds, rows_held)
    for slot, k in enumerate(keys):
        out[k] = Frame(held.frame(slot, f"s{col_of[slot]}", config.one_partition_locals),
                       len(rows[k][1]), None, True, held.values_of(slot))
    return out


def _shared_structs(schemas: list[T.StructType]) -> tuple[list[T.StructType], list[int]]:
    """The struct columns of a pack, one per shape (column names and types) of its frames,
    and each frame's column. Frames of one shape share a column: a stratum's wave packs
    mostly deltas and traces of a few shapes, and a pack's plan (each frame's select, their
    union), which Spark analyses on every step of building it, grows with frames times
    columns. The shared struct's fields are nullable: it holds rows of every such frame."""
    structs: list[T.StructType] = []
    column: dict[tuple, int] = {}
    col_of = []
    for schema in schemas:
        shape = tuple((f.name, f.dataType) for f in schema.fields)
        if shape not in column:
            column[shape] = len(structs)
            structs.append(T.StructType([T.StructField(n, t, True) for n, t in shape]))
        col_of.append(column[shape])
    return structs, col_of


# rows per (slot, tag) of a pack
Counts = dict[tuple[int, int | None], int]


@dataclass
class _Local:
    """A pack collected into a local relation (`df`, `rows` rows), with its row counts per
    (slot, tag), its rows in Python per slot when there are at most driver_rows, and where
    each slot's rows are in the collected list, `held` (None when a slot's rows did not come
    together)."""

    df: DataFrame
    rows: int
    counts: Counts
    values: dict[int, list[dict]] | None
    bounds: dict[int, tuple[int, int]] | None
    held: object = None  # the backend's handle on the collected rows (collect_local)

    def frame(self, slot: int, column: str, one_partition: bool) -> DataFrame:
        """A slot's frame: its rows read out of their struct `column`, whose fields are the
        frame's columns. A slot whose rows came together gets a local relation of its own:
        frames read as filters of one shared leaf make a plan that reads two of them read
        that leaf twice, and Spark's analysis then renews one copy's columns and rewrites
        the plan above it at every step of building on it (DeduplicateRelations then takes a
        large share of the analysis time of small epochs). `one_partition`: said to be one
        partition in the plan, so that joins, unions and aggregates over such leaves need no
        shuffle and a small action runs few stages, not one per shuffle."""
        if self.bounds is not None:
            a, b = self.bounds[slot]
            return backend.of(self.df).rows_leaf(self.df, self.held, a, b, column,
                                                 one_partition)
        df = _slot_rows(self.df, slot, column)
        return df.coalesce(1) if one_partition else df

    def values_of(self, slot: int) -> list[dict] | None:
        return None if self.values is None else self.values.get(slot, [])


def _slot_rows(pack: DataFrame, slot: int, column: str) -> DataFrame:
    """A slot's rows of a pack, read out of their struct `column` (its fields are the
    frame's columns, in its order)."""
    return pack.filter(col("_t") == slot).select(f"{column}.*")


def _checkpoint_counted(packed: DataFrame) -> tuple[DataFrame, Counts]:
    """A pack checkpointed on the executors, and its rows counted per (slot, tag) by the
    same action."""
    base = checkpoint_leaf(packed)
    counts = {(r[0], r[1]): r[2] for r in base.groupBy("_t", "_g").count().collect()}
    return base, counts


def _collect_local(packed: DataFrame, columns: list[list[str]], col_of: list[int],
                   config: Config, counts: Counts | None = None,
                   done: stats.ActionStats | None = None) -> _Local:
    """A pack's rows collected into a local relation by one small action (driver_sized).
    Above local_rows only its size is filled in: the caller moves it to the executors.
    `counts`: the pack's counts when an earlier action took them. `done`: the action whose
    planning to time."""
    with driver_sized(packed.sparkSession, config):
        if done is not None:
            stats.planned(done, lambda: backend.of(packed).plan(packed))
        base, n, rows_held = local_relation(packed)
    if n > config.local_rows:
        return _Local(base, n, {}, None, None)
    keep = n <= config.driver_rows
    if counts is not None and not keep:
        # nothing left to read on the driver but each row's slot, for the leaves alone
        return _Local(base, n, counts, None, None)
    # reading local rows takes no Spark job: all of them when the driver keeps their values,
    # else only their slots and tags; one collect serves the counts (unless known), values
    # and leaves
    got = backend.of(base).local_rows(base, rows_held, None if keep else ["_t", "_g"])
    if counts is None:
        counts = {}
        for r in got:
            counts[(r[0], r[1])] = counts.get((r[0], r[1]), 0) + 1
    return _Local(base, n, counts, _values(got, columns, col_of) if keep else None,
                  _slot_bounds([r[0] for r in got]), rows_held)


def _values(rows: list[Row], columns: list[list[str]], col_of: list[int]
            ) -> dict[int, list[dict]]:
    """The collected rows of a packed local relation (reading one takes no Spark job) as
    Python values, per slot."""
    out: dict[int, list[dict]] = {}
    for r in rows:
        slot = r[0]
        out.setdefault(slot, []).append(dict(zip(columns[slot], r[2 + col_of[slot]])))
    return out


def local_relation(df: DataFrame) -> tuple[DataFrame, int, object]:
    """`df`'s rows collected (one action) behind a local-relation leaf: no lineage, exact
    statistics, and read without a Spark job. Returns it, its row count and the backend's
    handle on the rows (for a leaf of some of them)."""
    return backend.of(df).collect_local(df)


def _slot_bounds(slots: list[int]) -> dict[int, tuple[int, int]] | None:
    """Where each slot's rows are in a collected pack (`slots`: each row's slot, in the
    list's order), or None if a slot's rows are not all together (they are when the union's
    output keeps its inputs' order, as it does over small plans)."""
    bounds: dict[int, tuple[int, int]] = {}
    start = 0
    for i in range(1, len(slots) + 1):
        if i == len(slots) or slots[i] != slots[start]:
            if slots[start] in bounds:
                return None
            bounds[slots[start]] = (start, i)
            start = i
    return bounds


def local_frame(spark, schema: T.StructType, rows: list[tuple]) -> DataFrame:
    """Rows given in Python (Spark values, as createDataFrame takes them) as a local relation
    built on the JVM, so that reading them runs no Python worker and no Spark job (the rows of
    a `createDataFrame` stay in a Python RDD, which every plan that reads them runs again).
    They travel as JSON lines (json_lines), one string, and the optimiser folds the parse
    into the leaf."""
    return json_frame(spark, schema, json_lines(schema, rows))


def json_lines(schema: T.StructType, rows: list[tuple]) -> str:
    """Rows (Spark values in Python) as JSON lines, one object per row, that json_frame reads
    back as the same values: what a local relation is built from, and what a small durable
    batch is stored as."""
    return "\n".join(json.dumps(_json_value(r, schema), allow_nan=True) for r in rows)


def json_frame(spark, schema: T.StructType, text: str) -> DataFrame:
    """JSON lines (one object per row, of `schema`) as a local relation: parsed by Spark.
    No text is no rows (not one row of nulls)."""
    return backend.of(spark).json_frame(spark, schema, text)


def _json_value(v, t: T.DataType):
    if v is None:
        return None
    if isinstance(t, T.StructType):
        return {f.name: _json_value(x, f.dataType) for f, x in zip(t.fields, v)}
    if isinstance(t, T.ArrayType):
        return [_json_value(x, t.elementType) for x in v]
    return v


def checkpoint_leaf(df: DataFrame) -> DataFrame:
    """`df`'s rows behind a new plan leaf, cut from its lineage and kept by Spark (a
    checkpoint written by the first action on the result); see the backends."""
    return backend.of(df).checkpoint_leaf(df)


def arrange(df: DataFrame, keys: list[str], config: Config = DEFAULT) -> tuple[DataFrame, int]:
    """`df` hash-partitioned by `keys` (so a join by them does not shuffle it again), sorted by
    them within each partition and cached in small column batches (so a literal lookup of a
    few keys skips every batch whose key range holds none of them): an arrangement, and its
    row count. Built once, by a job of its own. A `df` already hash-partitioned by `keys`
    into config.arrange_partitions (by `partitioned_by`, under an aggregate by columns that
    include them) is not shuffled again: Spark drops a repartition its input already meets."""
    spark = df.sparkSession
    batch = {"spark.sql.inMemoryColumnarStorage.batchSize": str(config.arrange_batch_rows)}
    with one_job(spark, config), spark_settings(spark, batch), stats.action(1) as done:
        out = partitioned_by(df, keys, config).sortWithinPartitions(*keys).cache()
        rows = done.rows = out.count()  # build the cache now, with the batch size set above
    return out, rows


def partitioned_by(df: DataFrame, keys: list[str], config: Config = DEFAULT) -> DataFrame:
    """`df` hash-partitioned by `keys` as arrangements are (config.arrange_partitions)."""
    return df.repartition(config.arrange_partitions, *keys)


def estimated_rows(df: DataFrame) -> int | None:
    """Spark's estimate of `df`'s rows, without running it; None when Spark knows nothing
    (a plan over rows given to `createDataFrame`)."""
    return backend.of(df).estimated_rows(df)
