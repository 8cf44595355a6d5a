"""Epochs: the engine that owns every relation's trace and runs the strata in order.

`commit(updates)` turns a transaction's updates into each input's effective change (inputs are
sets: inserting a present row or deleting an absent one changes nothing), runs every stratum
once, and only when all of them succeeded folds the epoch into the traces (`past += cur`). A
failure anywhere drops this epoch's `cur` and leaves the state exactly as it was before.

Besides the traces the strata read, with durable state (`keep_values`) each output relation
keeps its value as a flat spine of batches (no iterations), so that a reader of the state
(`ddlog query`) never sums a nested trace. Every trace has a name
(`all_traces`), which durable state (runtime/state) uses to store and re-attach it; the names
are made here and in runtime/stratum.py only.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from typing import Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ddlog.errors import DDlogError, EvaluationError
from ddlog.plan.compile import CompiledProgram
from ddlog.plan.normalize import UNIT
from ddlog.plan.physical import physical_plan
from ddlog.types import RelationInfo, Update
from ddlog.runtime.backend import col
from ddlog.runtime.schema import ITER, WEIGHT, col_name, relation_schema
from ddlog.runtime.operators import Probe
from ddlog.runtime.stratum import Progress, StratumRuntime, run_together
from ddlog.runtime.trace import INF, Batch, Persist, Trace
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.errors import is_spark_failure
from ddlog.runtime.physical import (Frame, estimated_rows, held_many, local_frame,
                              materialize_many, partitioned_by)
from ddlog.runtime.spark import is_local, side_by_side
from ddlog.runtime.stats import Counted, EpochStats, Recorder, StratumStats
from ddlog.runtime.zset import consolidate, literal_keys, lookup, negate, semijoin_keys, union_all


def relation_trace(name: str) -> str:
    """The name of a relation's own trace (the one its stratum records)."""
    return f"rel_{name}"


def value_trace(name: str) -> str:
    """The name of an output relation's value spine."""
    return f"out_{name}"


class Engine:
    def __init__(self, compiled: CompiledProgram, spark: SparkSession,
                 config: Config = DEFAULT, keep_values: bool = False):
        if config.one_task_lookups and not is_local(spark):
            # a cluster caches a trace's partitions on several executors: read them there
            config = replace(config, one_task_lookups=False)
        self.compiled = compiled
        self.spark = spark
        self.config = config
        self.epoch = 0
        self.traces: dict[str, Trace] = {
            name: Trace([col_name(k) for k in range(info.arity)], config)
            for name, info in compiled.relations.items()}
        # output relations' values as flat spines, for readers of a durable state
        self.values: dict[str, Trace] = {
            name: Trace([col_name(k) for k in range(info.arity)], config)
            for name, info in compiled.relations.items()
            if keep_values and info.role == "output"}
        # what each epoch runs (ddlog/plan/physical.py): the strata's waves, inlining and
        # arrangements, and the groups of strata run side by side
        self.plan = physical_plan(compiled.circuits)
        self.strata = [StratumRuntime(s.circuit, self.traces, config, s)
                       for s in self.plan.strata]
        self.together = [[self.strata[k] for k in group] for group in self.plan.groups]
        self.iterations: dict[int, int] = {}
        self.last_stats: EpochStats | None = None  # what the last commit did
        # the relations whose trace moved in the last epoch this process committed (None:
        # not known, as for a state read from disk), which says which delays must move now
        self.moved: set[str] | None = None

    # -- reading ---------------------------------------------------------------------------

    def columns(self, rel: str) -> list[str]:
        return self.traces[rel].columns

    def value(self, rel: str, include_cur: bool = False) -> DataFrame:
        """The relation's current contents (columns c0..cN, no weight); a multiset's or a
        stream's record once per unit of its multiplicity (as a bag: SQL's duplicates)."""
        t = self.values.get(rel) or self.traces[rel]
        z = t.summed(include_cur)
        if z is None:
            return self.empty(rel).drop(WEIGHT)
        return bag(z, t.columns) if self.compiled.relations[rel].weighted \
            else z.filter(col(WEIGHT) > 0).select(*t.columns)

    def empty(self, rel: str) -> DataFrame:
        info = self.compiled.relations[rel]
        return local_frame(self.spark, relation_schema(info.column_types), [])

    # -- inputs ----------------------------------------------------------------------------

    def weighted_change(self, rel: str, updates: list[Update]) -> DataFrame | None:
        """A multiset's change is its updates, each insert +1 and each delete -1 (a delete of
        an absent record makes its multiplicity negative, as in DDlog); a stream's is also
        minus what it held: its records last only one transaction."""
        info = self.compiled.relations[rel]
        cols = self.columns(rel)
        parts = [u.df.select(*cols, F.lit(u.sign).cast("long").alias(WEIGHT)) for u in updates]
        if info.kind == "stream" and self.traces[rel].past_rows():
            parts.append(negate(self.traces[rel].summed(include_cur=False)))
        return consolidate(parts, cols)

    def time_changes(self, updates: dict[str, list[Update]]) -> dict[str, DataFrame | None]:
        """The changes that time makes without updates: a stream not updated loses what it
        held; `R-1` becomes what R was at the end of the last epoch (`R-2` what R-1 was), which
        it is already when R did not move then."""
        plans: dict[str, DataFrame | None] = {}
        for rel, info in self.compiled.relations.items():
            if info.kind == "stream" and info.role == "input" and rel not in updates \
                    and self.traces[rel].past_rows():
                plans[rel] = self.weighted_change(rel, [])
            newer = info.delay_of  # R-k and R-(k-1) have the same columns
            if newer is not None and self.epoch > 0 and (self.moved is None
                                                         or newer in self.moved):
                then = self.traces[newer].summed(include_cur=False)
                held = self.traces[rel].summed(include_cur=False)
                plans[rel] = consolidate([then, negate(held)], self.columns(rel))
        return plans

    def effective_change(self, rel: str, updates: list[Update],
                         keys: tuple[str, ...] | None = None) -> DataFrame | None:
        """Updates (+1 insert / -1 delete, in order) → the set change they make: the last
        update of a row decides whether it is present after the transaction. The stored rows
        are read only where the updates' keys are (a lookup, when the driver holds the
        updated rows, which arrangements answer by key; else a semi-join). `keys`: the rows
        are partitioned by them first, as the trace's arrangement is (arranged_at_once)."""
        if not updates:
            return None
        if self.compiled.relations[rel].weighted:
            return self.weighted_change(rel, updates)
        cols = self.columns(rel)
        seq = union_all([u.df.select(*cols, F.lit(u.sign).alias("_op"), F.lit(k).alias("_seq"))
                         for k, u in enumerate(updates)])
        # A few rows given in Python: each step below runs in one partition, so that its
        # small action is one stage (an aggregate over one partition shuffles nothing)
        few = keys is None and all(u.rows is not None for u in updates) and \
            sum(len(u.rows) for u in updates) <= self.config.local_rows
        if few:
            seq = seq.coalesce(1)
        if keys is not None:
            seq = partitioned_by(seq, list(keys), self.config)
        last = seq.groupBy(*cols).agg(F.max_by("_op", "_seq").alias("_op"))
        t = self.traces[rel]
        past = t.past(0, INF)
        if past is None:
            present = None
        else:
            keys = _first_keys(updates) if cols else None
            if keys is not None and len(keys) <= self.config.lookup_keys:
                # the stored rows of the updates' first values: the ones no update names
                # come out of the sum below with a weight of 0, and a semi-join with the
                # updates would only add a shuffle
                present = lookup(past, cols[0], keys, self.config.one_task_lookups)
            else:
                present = semijoin_keys(past, last.select(*cols), cols)
            present = consolidate(present.drop(ITER), cols).filter(col(WEIGHT) > 0)
        if present is None:
            change = last.filter(col("_op") > 0).select(*cols, F.lit(1).cast("long")
                                                          .alias(WEIGHT))
            return change
        joined = union_all([
            last.select(*cols, col("_op").cast("long").alias("_new"),
                        F.lit(0).cast("long").alias("_old")),
            present.select(*cols, F.lit(0).cast("long").alias("_new"),
                           F.lit(1).cast("long").alias("_old"))])
        if few:
            joined = joined.coalesce(1)
        agg = joined.groupBy(*cols).agg(F.sum("_new").alias("_new"), F.sum("_old").alias("_old"))
        w = (F.when(col("_new") > 0, 1).otherwise(0) - col("_old")).cast("long")
        # rows only in `present` have _new = 0: keep them as they are
        w = F.when(col("_new") == 0, F.lit(0).cast("long")).otherwise(w)
        return agg.select(*cols, w.alias(WEIGHT)).filter(col(WEIGHT) != 0)

    def arranged_at_once(self, rel: str, updates: list[Update]) -> tuple[str, ...] | None:
        """The key by which `rel`'s change is arranged by the job that makes it, or None. So
        it is when the relation's trace is arranged (a join, distinct or group reads it by
        key), holds nothing yet (a first load: the change is the set of the rows inserted)
        and more rows come than the trace would arrange at its first read anyway
        (config.arrange_rows; counted, or estimated by Spark for a DataFrame of unknown
        size; an estimate Spark does not have counts as few). The set's aggregate then runs
        over rows already partitioned by the key: one shuffle makes the set and the
        arrangement, where checkpointing the set and arranging it at its first read took
        two, each reading every row."""
        t = self.traces[rel]
        keys = t.arrange_by
        if (keys is None or t.batches or t.cur_batches or self.compiled.relations[rel].weighted
                or not set(keys) <= set(self.columns(rel))):
            return None
        rows = 0
        for u in updates:
            n = len(u.rows) if u.rows is not None else estimated_rows(u.df)
            rows += n or 0
        return keys if t.arranges(rows) else None

    # -- epochs ----------------------------------------------------------------------------

    def commit(self, updates: dict[str, list[Update]],
               persist: Persist | None = None,
               progress: Progress | None = None,
               as_sets: frozenset[str] = frozenset()) -> dict[str, DataFrame]:
        """Run one epoch. Returns the change (columns c0..cN, _w; lazy) of every relation whose
        trace moved this epoch; a recursive relation's change may still net out to nothing.
        `as_sets`: counted relations whose change is given as the change of the set of their
        records (support_changes), not of their multiplicities."""
        stats = EpochStats(self.epoch + 1)
        recorder = Recorder(self.spark)
        stats.jobs_counted = recorder.counts
        scopes: list[tuple[Counted, list[StratumStats]]] = []  # their jobs are known at the end
        started = time.perf_counter()
        try:
            with recorder.scope("inputs") as counted:
                arranged = {rel: keys for rel, ups in updates.items()
                            if (keys := self.arranged_at_once(rel, ups)) is not None}
                for rel, keys in arranged.items():
                    stats.rows_in += self.traces[rel].record_arranged(
                        0, self.effective_change(rel, updates[rel], keys))
                plans = {rel: self.effective_change(rel, ups) for rel, ups in updates.items()
                         if rel not in arranged}
                timed = self.time_changes(updates)
                plans.update(timed)
                if self.epoch == 0 and UNIT in self.traces:
                    plans[UNIT] = self.spark.range(1).select(
                        F.lit(1).cast("long").alias(WEIGHT))
                # the size of an update given as a DataFrame is unknown (expect_large=None:
                # it may be large); updates given in Python rows are small when they are few
                known = [u.rows for ups in updates.values() for u in ups]
                small = (all(r is not None for r in known)
                         and sum(map(len, known)) <= self.config.local_rows
                         and not any(self.traces[r].past_rows() > self.config.local_rows
                                     for r in plans if r not in updates))
                # what the strata's joins will meet, looked up by the same action
                made = {rel for rel in updates if rel in plans and rel not in timed}
                probes = self._prefetch(updates, made) if small else {}
                frames = materialize_many({**plans, **{k: p.df for k, p in probes.items()}},
                                          expect_large=False if small else None,
                                          config=self.config)
                for key, probe in probes.items():
                    probe.answer(frames.pop(key))
                for rel, frame in frames.items():
                    self.traces[rel].record(0, frame)
                    stats.rows_in += frame.rows if frame is not None else 0
            scopes.append((counted, []))
            for group in self.together:
                label = "strata " if len(group) > 1 else "stratum "
                with recorder.scope(label + ", ".join(str(s.circuit.stratum)
                                                      for s in group)) as counted, \
                        internal_errors(group):
                    done = run_together([s.epoch(progress) for s in group], self.config)
                scopes.append((counted, done))
                for s, st in zip(group, done):
                    st.seconds = counted.seconds
                    st.spark_seconds = counted.spark_seconds
                    st.planning_seconds = counted.planning_seconds
                    stats.strata.append(st)
                    self.iterations[s.circuit.stratum] = st.iterations
            stats.strata.sort(key=lambda st: st.stratum)
            # Lazy: the epoch's batches are materialised, so reading them later is cheap and
            # stays valid after they are folded into `past`.
            changes: dict[str, DataFrame] = {}
            for rel, t in self.traces.items():
                ch = t.epoch_change()
                if ch is not None:
                    changes[rel] = consolidate(ch, t.columns)
            for rel, spine in self.values.items():
                if rel in changes:  # folded (materialised) with every trace at the epoch's end
                    rows = sum(b.rows for b in self.traces[rel].cur_batches)
                    spine.record(0, Frame(changes[rel], rows), lazy=True)
        except BaseException:
            self.abort()
            raise
        self.moved = set(changes)
        changes.update(self.streams_now(changes))
        changes.update(self.support_changes(changes, as_sets))
        stats.rows_out = sum(b.rows for rel, info in self.compiled.relations.items()
                             if info.role == "output" for b in self.traces[rel].cur_batches)
        with recorder.scope("end of epoch") as counted:
            self.end_epoch(persist)
        scopes.append((counted, []))
        self.epoch += 1
        recorder.settle()
        stats.seconds = time.perf_counter() - started
        for counted, strata in scopes:
            stats.jobs += counted.jobs
            for st in strata:
                st.jobs = counted.jobs
        stats.actions = recorder.actions
        self.last_stats = stats
        return changes

    def _prefetch(self, updates: dict[str, list[Update]], made: set[str]
                  ) -> dict[tuple[str, int], Probe]:
        """The strata's lookups for the inputs' action (StratumRuntime.prefetch), by the
        values of the rows the updates name, for the relations in `made` whose every update
        holds its rows: their change is made of those rows alone (not a stream's, which also
        drops what it held)."""
        named = {id(self.traces[rel]): rel for rel in made
                 if self.compiled.relations[rel].kind != "stream"
                 and all(u.rows is not None for u in updates[rel])}

        def keys_of(trace: Trace, column: str) -> set | None:
            rel = named.get(id(trace))
            if rel is None:
                return None
            k = self.columns(rel).index(column)
            return literal_keys(r[k] for u in updates[rel] for r in u.rows)

        asked = [p for s in self.strata for p in s.prefetch(keys_of)]
        return {("prefetch", k): p for k, p in enumerate(asked)}

    def support_changes(self, changes: dict[str, DataFrame], rels: frozenset[str]
                        ) -> dict[str, DataFrame]:
        """What the change of a counted relation's multiplicities makes of the set of its
        records: +1 for a record that appears, -1 for one that goes (as a relation made
        distinct would change). Materialised before the epoch's end folds the batches the
        relation's old value is read from."""
        plans = {}
        for rel in sorted(rels & set(changes)):
            t = self.traces[rel]
            zero = F.lit(0).cast("long")
            parts = [changes[rel].select(*t.columns, col(WEIGHT).alias("_d"), zero.alias("_n"))]
            old = t.summed(include_cur=False)
            if old is not None:
                parts.append(old.select(*t.columns, zero.alias("_d"), col(WEIGHT).alias("_n")))
            # grouped by every column, so that null fields (None) match as equal
            g = union_all(parts).groupBy(*t.columns).agg(
                F.sum("_n").alias("_n"), (F.sum("_n") + F.sum("_d")).alias("_m"),
                F.max(col("_d") != 0).alias("_moved"))
            was, now = col("_n") > 0, col("_m") > 0
            plans[rel] = g.where(col("_moved") & (was != now)).select(
                *t.columns, F.when(now, 1).otherwise(-1).cast("long").alias(WEIGHT))
        frames = materialize_many(plans, expect_large=None, config=self.config)
        return {rel: fr.df if fr is not None else self.empty(rel)
                for rel, fr in frames.items()}

    def streams_now(self, changes: dict[str, DataFrame]) -> dict[str, DataFrame]:
        """What a commit reports as an output stream's change: what it holds now (its old records
        disappear without deletions, as DDlog's streams do), materialised before the epoch's
        end folds and rewrites the batches it is read from."""
        plans = {rel: self.traces[rel].summed(include_cur=True)
                 for rel, info in self.compiled.relations.items()
                 if info.kind == "stream" and info.role == "output"
                 and (rel in changes or self.traces[rel].past_rows())}
        frames = materialize_many(plans, expect_large=None, config=self.config)
        return {rel: fr.df if fr is not None else self.empty(rel)
                for rel, fr in frames.items()}

    def end_epoch(self, persist: Persist | None) -> None:
        """past += cur for every trace. Without durable state, the traces' folds (those with
        several batches this epoch) are materialised together, by one Spark action, but
        those whose rows the driver holds, which it merges itself (Trace.fold_rows); a large
        fold of a trace whose reads arrange it is arranged by a job of its own (Trace._merge,
        which its end_epoch runs)."""
        began = time.perf_counter()
        # the strata evaluated from scratch this epoch, by the rows they made: their shares of
        # the folds' time, which their next give-ups will pay for a recompute
        fresh = {id(s): 1 + sum(t.new_rows() for t in s.out_traces.values())
                 for s in self.strata if s.measured is not None}
        if persist is None:
            traces = self.all_traces()
            folds = {name: b for name, t in traces.items() if (b := t.fold_batches()) is not None}
            frames, plans = self._driver_folds(traces, folds)
            rows = sum(traces[name].new_rows() for name in plans)
            # a large estimate may be larger still (a small one that was not is moved to
            # the executors by materialize_many)
            guessed = any(b.estimated for name in plans
                          for b in [*traces[name].cur_batches, *(traces[name].rebuilt or [])])
            large = (None if guessed else True) if rows > self.config.local_rows else False
            reads = sum(traces[name].held_rows() for name in plans)  # what the folds read
            frames.update(materialize_many(plans, expect_large=large, config=self.config,
                                           reads=reads))
            for name, t in traces.items():
                t.end_epoch(None, [frames[name]] if name in folds else None)
        else:
            # The small new batches (config.driver_rows together, by their counts or the
            # operators' estimates) are materialised by one action, which brings their rows to
            # the driver (unless it holds them: _driver_folds): `persist` writes them without a
            # Spark job. Each larger one (and any merge of a spine) is written by a Spark job of
            # its own, most of whose time over small batches is the driver's (planning,
            # scheduling, committing the files): the traces are written side by side.
            traces = self.all_traces()
            small, rows = {}, 0
            for name, t in traces.items():
                bound = t.new_rows()
                if t.new_batches() and rows + bound <= self.config.driver_rows:
                    small[name] = t.new_batches()
                    rows += bound
            frames, small_plans = self._driver_folds(traces, small)
            frames.update(materialize_many(small_plans, expect_large=False, config=self.config))
            side_by_side(self.spark, [partial(t.end_epoch, persist,
                                              [frames[name]] if name in small else None)
                                      for name, t in traces.items()],
                         self.config.persist_threads)
        folds = time.perf_counter() - began
        for s in self.strata:
            s.end_epoch(folds * fresh[id(s)] / sum(fresh.values()) if id(s) in fresh else 0.0)

    def _driver_folds(self, traces: dict[str, Trace], folds: dict[str, list[Batch]]
                      ) -> tuple[dict[str, Frame | None], dict[str, DataFrame]]:
        """The traces' folds (the batches each merges into one): those the driver makes
        itself (the rows it holds, merged: Trace.fold_rows), made, without a Spark job; the
        others as plans (Trace.merge_plan), for one action."""
        held = {name: got for name, batches in folds.items()
                if (got := traces[name].fold_rows(batches)) is not None}
        return (held_many(self.spark, held, self.config),
                {name: traces[name].merge_plan(batches) for name, batches in folds.items()
                 if name not in held})

    def abort(self) -> None:
        for t in [*self.traces.values(), *self.values.values()]:
            t.abort_epoch()
        for s in self.strata:
            s.abort_epoch()

    def costs(self) -> dict[str, dict]:
        """Each stratum's measurements for the cost-based fallback (StratumRuntime.costs), by
        stratum number, for durable state to keep; strata with none are left out."""
        out = {str(s.circuit.stratum): s.costs() for s in self.strata}
        return {k: v for k, v in out.items() if v}

    def remember_costs(self, costs: dict[str, dict]) -> None:
        """Take back what `costs` returned (when a state is opened again)."""
        for s in self.strata:
            s.remember_costs(costs.get(str(s.circuit.stratum), {}))

    def all_traces(self) -> dict[str, Trace]:
        out = {relation_trace(name): t for name, t in self.traces.items()}
        out.update({value_trace(name): t for name, t in self.values.items()})
        for s in self.strata:
            out.update(s.traces())
        return out


def bag(z: DataFrame, cols: list[str]) -> DataFrame:
    """A Z-set's records with positive weight, each repeated as many times as its weight."""
    reps = F.explode(F.array_repeat(F.lit(0), col(WEIGHT).cast("int")))
    return z.filter(col(WEIGHT) > 0).select(*cols, reps.alias("_rep")).select(*cols)


def _first_keys(updates: list[Update]) -> set | None:
    """The first column's values of the updated rows, when every update holds its rows."""
    if any(u.rows is None for u in updates):
        return None
    return literal_keys(r[0] for u in updates for r in u.rows)


def read_value(spark: SparkSession, info: RelationInfo, manifest, state,
               config: Config = DEFAULT) -> DataFrame:
    """A relation's committed value read straight from a state's files, without building an
    engine (what a reader such as `ddlog query` needs): the output's value spine, or the
    relation's own trace summed over its iterations."""
    from ddlog.runtime.state import attach

    cols = [col_name(k) for k in range(info.arity)]
    key = value_trace(info.name) if info.role == "output" else relation_trace(info.name)
    t = Trace(cols, config)
    attach({key: t}, manifest, state, spark, strict=False)
    z = t.summed(include_cur=False)
    if z is None:
        return local_frame(spark, relation_schema(info.column_types, weight=False), [])
    return bag(z, cols) if info.weighted else z.filter(col(WEIGHT) > 0).select(*cols)


@contextmanager
def internal_errors(group: list[StratumRuntime]) -> Iterator[None]:
    """An inconsistency inside the engine while it runs strata (a failed invariant, a bug)
    becomes an error naming the strata and the last decision each took, not a traceback:
    the commit is rolled back as for any other error. A program's own errors (DDlogError)
    and Spark's failures pass as they are."""
    try:
        yield
    except Exception as err:
        if isinstance(err, DDlogError) or is_spark_failure(err):
            raise
        where = "; ".join(f"stratum {s.circuit.stratum} ({', '.join(s.circuit.relations)})"
                          f"{f', last decision: {s.decided}' if s.decided else ''}"
                          for s in group)
        raise EvaluationError(f"internal error in {where}: {type(err).__name__}"
                              f"{f': {err}' if str(err) else ''}") from err
