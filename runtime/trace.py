"""Traces: the state of nested streams (time = (epoch, fixpoint iteration); docs/design.md,
Z-sets, streams and traces).

A stored `Trace` keeps a stream's double deltas keyed by iteration: `past` (summed over all
finished epochs, one Z-set per iteration) and `cur` (the running epoch). Both are spines of
batches, DataFrames with columns + `_i` + `_w`, so that folding an epoch in appends a batch
instead of rewriting the whole past; batches of similar size are merged (a log-structured
merge), which keeps the number of batches logarithmic and the plans small.

Views give the trace of a stream without storing it (runtime/views.py); plans built from a
trace's batches are cached (runtime/memo.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ddlog.runtime.backend import col
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.memo import Memo, memo_field
from ddlog.runtime.physical import Frame, arrange, held_many, materialize, partitioned_by
from ddlog.runtime.schema import ITER, WEIGHT
from ddlog.runtime.zset import consolidate, consolidate_rows, literal_keys, rows_comparable, union_all

INF = 1 << 30  # an iteration beyond any (a slice's open end)

# Durable state's writer of a batch (runtime/state.Persister): given a plan, or a materialised
# Frame (whose rows it may take from the driver), it returns the batch as stored.
Persist = Callable[[DataFrame | Frame], Optional[Frame]]


@dataclass
class Batch:
    df: DataFrame  # columns + _i + _w
    lo: int  # lowest iteration present
    hi: int  # highest iteration present
    rows: int
    lazy: bool = False  # a plan, not yet materialised (end_epoch folds it with the others)
    estimated: bool = False  # ... whose `rows` is an operator's estimate, not a count
    arranged: bool = False  # partitioned and sorted by the trace's arrangement key, cached
    path: str | None = None  # where durable state stored it (runtime/state/), if it did
    files: dict[str, int] | None = None  # ... and the files it wrote there, with their sizes
    # its rows in Python, when small (physical.Frame.values), with their weights (and their
    # iterations, but for a batch of one iteration): read for keys, and summed by the
    # epoch's end and by merges (Trace.fold_rows); after a merge whose result was not read
    # back, the merged batches' rows, unsummed (their keys a superset of the batch's: rows
    # may have cancelled)
    values: list[dict] | None = None


def _keys(batches: list[Batch], lo: int, hi: int, col: str) -> set | None:
    out: set = set()
    for b in batches:
        if b.hi < lo or b.lo > hi:
            continue
        keys = None if b.values is None else literal_keys(r[col] for r in b.values)
        if keys is None:
            return None
        out |= keys
    return out


def _select(batches: list[Batch], lo: int, hi: int, memo: Memo,
            read: Callable[[Batch], DataFrame] = lambda b: b.df) -> DataFrame | None:
    dfs = [read(b) for b in batches if not (b.hi < lo or b.lo > hi)]
    # a slice's plan depends on which batches it covers whole, not on lo/hi themselves
    cut = tuple((max(lo, b.lo), min(hi, b.hi)) if b.lo < lo or b.hi > hi else None
                for b in batches if not (b.hi < lo or b.lo > hi))

    def build() -> DataFrame | None:
        parts = []
        for df, c in zip(dfs, cut):
            if c is not None:
                df = df.filter((col(ITER) >= c[0]) & (col(ITER) <= c[1]))
            parts.append(df)
        return union_all(parts)
    return memo.get(cut, dfs, build)


def _rows(batches: list[Batch], lo: int, hi: int) -> int:
    return sum(b.rows for b in batches if not (b.hi < lo or b.lo > hi))


def _values(batches: list[Batch], lo: int, hi: int) -> list[dict] | None:
    """The rows (columns + _i + _w) of the batches' iterations lo..hi, when the driver holds
    every batch's rows (unsummed, maybe: the same Z-set); else None."""
    out: list[dict] = []
    for b in batches:
        if b.hi < lo or b.lo > hi:
            continue
        rows = _held_rows(b)
        if rows is None:
            return None
        out += [r for r in rows if lo <= r[ITER] <= hi]
    return out


@dataclass
class Trace:
    """A stored trace. `materializer` turns a folded batch into durable/truncated data."""

    columns: list[str]
    config: Config = DEFAULT
    batches: list[Batch] = field(default_factory=list)
    iters: set[int] = field(default_factory=set)  # iterations present in past (a superset)
    cur_batches: list[Batch] = field(default_factory=list)
    # The columns lookups and joins read this trace by (its arrangement): large past batches
    # are kept partitioned by them and sorted within partitions, cached (physical.arrange).
    arrange_by: tuple[str, ...] | None = None
    # ... and this epoch's large batches too (a relation imported by a recursive stratum:
    # every iteration joins with the whole of it when it is new)
    arrange_cur: bool = False
    # A recomputed epoch's new past (rebuild): end_epoch replaces the batches by these
    rebuilt: list[Batch] | None = None
    memo: Memo = memo_field()

    # -- reading -------------------------------------------------------------------------

    def past(self, lo: int, hi: int) -> DataFrame | None:
        return _select(self.batches, lo, hi, self.memo, self._arranged)

    def cur(self, lo: int, hi: int) -> DataFrame | None:
        if self.arrange_cur:
            return _select(self.cur_batches, lo, hi, self.memo, self._arranged)
        return _select(self.cur_batches, lo, hi, self.memo)

    def cur_rows(self, lo: int, hi: int) -> int:
        return _rows(self.cur_batches, lo, hi)

    def cur_keys(self, lo: int, hi: int, col: str) -> set | None:
        return _keys(self.cur_batches, lo, hi, col)

    def cur_values(self, lo: int, hi: int) -> list[dict] | None:
        return _values(self.cur_batches, lo, hi)

    def source(self, col: str) -> tuple[Trace, str] | None:
        return (self, col) if col in self.columns else None

    def past_rows(self, lo: int = 0, hi: int = INF) -> int:
        return _rows(self.batches, lo, hi)

    def past_iters(self) -> set[int]:
        return self.iters

    def known_rows(self) -> int | None:
        """The rows of past and cur together (at least those of its sum), or None when a
        batch's count is an operator's estimate."""
        batches = [*self.batches, *self.cur_batches]
        if any(b.estimated for b in batches):
            return None
        return sum(b.rows for b in batches)

    def held_rows(self) -> int:
        """The rows of past and cur together, a lazy batch's by its operator's estimate:
        about how many a plan over the whole trace reads."""
        return sum(b.rows for b in [*self.batches, *self.cur_batches])

    def summed(self, include_cur: bool = True) -> DataFrame | None:
        """Σ over iterations of past (and cur): the relation's value as a Z-set (columns +
        _w, consolidated), None when nothing is stored."""
        # grouped by the relation's columns alone, the sum runs over the iterations too
        return consolidate([self.past(0, INF), self.cur(0, INF) if include_cur else None],
                           self.columns)

    def _arranged(self, b: Batch) -> DataFrame:
        """A batch as reads use it: arranged first when it is large (once: batches never
        change), so that a join by the key does not shuffle it and a lookup of a few keys
        reads a few of its cached column batches; a stored batch only when
        config.arrange_stored (else its files are read). Merging batches releases their
        caches (_release)."""
        from_files = b.path is not None and not self.config.arrange_stored
        if not b.arranged and not from_files and self.arranges(b.rows):
            b.df = arrange(b.df, list(self.arrange_by), self.config)[0]
            b.arranged = True
        return b.df

    def arranges(self, rows: int) -> bool:
        """Whether a batch of `rows` rows is kept arranged (reads arrange it first)."""
        return (self.arrange_by is not None and self.config.arrangements
                and rows > self.config.arrange_rows)

    # -- writing -------------------------------------------------------------------------

    def record(self, i: int, frame: Frame | None, lazy: bool = False,
               estimated: bool = False) -> None:
        """This epoch's double delta at iteration i (`lazy`: a plan the epoch's end is to
        materialise; `estimated`: its `rows` only an estimate)."""
        if frame is None:
            return
        self.cur_batches.append(Batch(frame.df.withColumn(ITER, F.lit(i)), i, i, frame.rows,
                                      lazy, estimated, values=frame.values))
        # plans (an inlined operator's deltas) are not merged here: each is read at its own
        # iteration only, and the epoch's end materialises them (see fold_batches)
        if not lazy and len(self.cur_batches) > self.config.max_cur_batches:
            # keep plans small in long fixpoints: fold older iterations into one batch, as
            # `compact` folds the past, so that the large batches of a fixpoint's middle
            # iterations are not merged again every few iterations after them
            older = self.cur_batches[:-2]
            j = _tiered(older)
            kept, old = older[:j], older[j:]
            newest = self.cur_batches[-2:]
            merged = self._merge(old, arranged=self.arrange_cur)
            _release(old)  # the caches of those arranged by reads, or by an earlier merge
            if merged is not None and merged.values is None:
                # merged by Spark, it keeps the merged batches' rows when the driver held
                # them all (merged on the driver, it holds its summed rows already)
                held = [_held_rows(b) for b in old]
                if all(h is not None for h in held):
                    merged.values = [r for h in held for r in h]
            self.cur_batches = kept + ([merged] if merged is not None else []) + newest

    def record_arranged(self, i: int, df: DataFrame) -> int:
        """This epoch's double delta at iteration i, a plan whose rows come already
        partitioned by the trace's arrangement (a large first load: Engine.effective_change),
        recorded arranged by the job that counts it; returns its rows. Recorded as `record`
        does, it would be checkpointed now and arranged at its first read: two shuffles of
        the same rows. A delta of at most config.local_rows rows becomes a local relation
        instead, as `record` would keep it."""
        batch = self._arranged_batch(df.withColumn(ITER, F.lit(i)), i, i)
        if batch is not None:
            self.cur_batches.append(batch)
        return 0 if batch is None else batch.rows

    def _arranged_batch(self, df: DataFrame, lo: int, hi: int) -> Batch | None:
        """`df` (columns + _i + _w of iterations lo..hi, partitioned by the arrangement's key
        or not) arranged by one job that counts it; a result of at most config.local_rows
        rows becomes a local relation instead (a second, small action), as materialising it
        would make it."""
        out, rows = arrange(df, list(self.arrange_by), self.config)
        if rows > self.config.local_rows:
            return Batch(out, lo, hi, rows, arranged=True)
        fr = materialize(out, config=self.config)
        out.unpersist()
        return None if fr is None else Batch(fr.df, lo, hi, fr.rows, values=fr.values)

    def replace_lazy(self, df: DataFrame | None) -> None:
        """This epoch's batches, all plans (recorded lazily), replaced by one plan `df`
        (columns + _i + _w) that holds the same deltas at every iteration: cheaper for the
        epoch's end to materialise than a union of one plan per iteration."""
        old = self.cur_batches
        assert all(b.lazy for b in old)
        self.cur_batches = [] if df is None or not old else [
            Batch(df, min(b.lo for b in old), max(b.hi for b in old),
                  sum(b.rows for b in old), lazy=True,
                  estimated=any(b.estimated for b in old))]

    def merge_plan(self, batches: list[Batch], by_key: bool = False) -> DataFrame | None:
        """The batches' consolidation; `by_key`: their rows partitioned by the arrangement's
        key first, so that the aggregate needs no shuffle of its own and an arrangement of
        its result none either."""
        dfs = [b.df for b in batches]
        if by_key:
            dfs = [partitioned_by(union_all(dfs), list(self.arrange_by), self.config)]
        # the aggregate's columns are its keys, then the weight: columns + _i + _w
        return consolidate(dfs, self.columns + [ITER])

    def _merge(self, batches: list[Batch], persist: Persist | None = None,
               arranged: bool = True) -> Batch | None:
        """The batches merged into one, materialised: on the driver when it holds their rows
        (fold_rows), else by a Spark action (by `persist` in durable mode: a merge of at
        most config.driver_rows rows is materialised first, so that `persist` is given its
        rows, not a plan to run). Without durable state, a large merge of a trace whose
        reads arrange its batches (`arranged`: its past, or this epoch's batches of an
        `arrange_cur` trace) is arranged by the job that merges it: partitioned by the key
        before its aggregate, which then needs no shuffle of its own, and sorted and cached,
        where a checkpoint now and an arrangement at the first read take two shuffles of the
        same rows (and the first small epoch after a run from scratch would spend much of its
        time arranging what that run merged)."""
        if persist is None and arranged and self.arranges(_rows_bound(batches)):
            return self._arranged_batch(self.merge_plan(batches, by_key=True),
                                        min(b.lo for b in batches), max(b.hi for b in batches))
        held = self.fold_rows(batches)
        if held is not None:
            # the driver holds the rows: merged there, as the epoch's end merges small folds
            # (a compaction of a large trace's small newest batches would be a Spark action)
            fr = held_many(batches[0].df.sparkSession, {0: held}, self.config)[0]
            return self._merged(batches, _persisted(persist, fr))
        df = self.merge_plan(batches)
        if df is None:
            return None
        if persist is None:
            return self._merged(batches, materialize(df, config=self.config))
        if _rows_bound(batches) <= self.config.driver_rows:
            return self._merged(batches, _persisted(persist, materialize(df, config=self.config)))
        return self._merged(batches, persist(df))

    @staticmethod
    def _merged(batches: list[Batch], fr: Frame | None) -> Batch | None:
        if fr is None:
            return None
        return Batch(fr.df, min(b.lo for b in batches), max(b.hi for b in batches), fr.rows,
                     path=getattr(fr, "path", None), files=getattr(fr, "files", None),
                     values=fr.values)

    def rebuild(self, new: list[Batch], change: Frame | None) -> None:
        """This epoch recomputed the trace from scratch: `new` is its whole content (as a
        first epoch would have recorded it), `change` = new - past, what readers of this
        epoch's `cur` see (None: an operator's trace, which has no such readers). At the
        epoch's end `new` replaces the past instead of adding to it, so that a recompute
        leaves no cancelled history behind."""
        hi = max((b.hi for b in [*new, *self.batches]), default=0)
        self.cur_batches = [] if change is None else [
            Batch(change.df, 0, hi, change.rows, values=change.values)]
        self.rebuilt = list(new)

    def fold_batches(self) -> list[Batch] | None:
        """The batches the epoch's end merges into one (new_batches), when there are several:
        the engine merges every trace's, on the driver (fold_rows) or by one action
        (merge_plan), and hands each back to `end_epoch`. A small trace is kept as one batch,
        past and cur merged (the epoch's end replaces the past by it, as after a rebuild):
        reading it then is one small leaf, not a union per epoch whose plans grow with every
        join over it. None when there is nothing to merge, or when `end_epoch` merges the
        batches by a job of its own: a large fold of a trace whose reads arrange it is
        arranged by the job that merges it (`_merge`)."""
        if (self.rebuilt is None and self.cur_batches
                and len(self.batches) + len(self.cur_batches) > 1
                and self.past_rows() + self.cur_rows(0, INF) <= self.config.local_rows):
            self.rebuilt = self.batches + self.cur_batches
        batches = self.new_batches()
        if len(batches) < 2 and not any(b.lazy for b in batches):
            return None
        return None if self.arranges(_rows_bound(batches)) else batches

    def fold_rows(self, batches: list[Batch]) -> tuple[StructType, list[dict]] | None:
        """The batches merged on the driver: the schema and rows (columns + _i + _w) that
        merge_plan would give, when the driver holds every batch's rows with their
        iterations (their values: at most config.driver_rows in all) and Python compares the
        columns' values as Spark does (zset.rows_comparable); else None. Merging small
        batches there takes no Spark job (an action over every trace's fold costs far more
        than merging a few hundred rows in Python), and their plan is not built.
        The epoch's end asks it for every trace's fold, `_merge` for its own merges."""
        # a batch holds at least as many values as it counts rows: a merge of more than
        # driver_rows rows is left to Spark before its values are copied
        if not self.config.driver_folds or _rows_bound(batches) > self.config.driver_rows:
            return None
        held = [_held_rows(b) for b in batches]
        if any(h is None for h in held) or sum(map(len, held)) > self.config.driver_rows:
            return None
        fields = {f.name: f for f in batches[0].df.schema.fields}
        schema = StructType([fields[c] for c in (*self.columns, ITER, WEIGHT)])
        if not rows_comparable(schema):
            return None
        return schema, consolidate_rows([r for h in held for r in h], self.columns + [ITER])

    def new_batches(self) -> list[Batch]:
        """What the epoch's end makes of this trace's batches: a rebuilt trace's new content,
        else this epoch's batches."""
        return self.rebuilt if self.rebuilt is not None else self.cur_batches

    def new_rows(self) -> int:
        """At most how many rows new_batches merge into (or about: operators' estimates)."""
        return _rows_bound(self.new_batches())

    def epoch_change(self) -> DataFrame | None:
        """Σ over iterations of this epoch's deltas (not consolidated)."""
        df = self.cur(0, INF)
        return None if df is None else df.drop(ITER)

    def end_epoch(self, persist: Persist | None = None,
                  folded: list[Frame | None] | None = None) -> None:
        """past += cur. A single materialised batch joins the spine as it is (no Spark job);
        several are merged into one, so plans over `past` stay small; `persist` (durable state)
        writes the epoch's batch where it belongs.
        When the spine grows past config.max_past_batches, the newest batches are merged until sizes
        decrease geometrically, which keeps it logarithmic in the number of epochs.
        `folded` = [the merged fold_batches()], when the caller made it."""
        if self.rebuilt is not None:
            self._end_rebuild(persist, folded)
            return
        if self.cur_batches:
            self.iters |= {k for b in self.cur_batches for k in range(b.lo, b.hi + 1)}
            if persist is None and len(self.cur_batches) == 1 and not self.cur_batches[0].lazy:
                self.batches.extend(self.cur_batches)
            elif folded is not None:
                batch = self._merged(self.cur_batches, _persisted(persist, folded[0]))
                if batch is not None:
                    self.batches.append(batch)
                _release(self.cur_batches)
            else:
                batch = self._merge(self.cur_batches, persist)
                if batch is not None:
                    self.batches.append(batch)
                _release(self.cur_batches)
        self.cur_batches = []
        if len(self.batches) > self.config.max_past_batches:
            self.compact(persist)

    def _end_rebuild(self, persist: Persist | None,
                     folded: list[Frame | None] | None) -> None:
        new, old = self.rebuilt or [], self.batches
        self.rebuilt = None
        if persist is None and len(new) == 1 and not new[0].lazy:
            batch: Batch | None = new[0]
        elif folded is not None:
            batch = self._merged(new, _persisted(persist, folded[0]))
        else:
            batch = self._merge(new, persist) if new else None
        _release([b for b in [*old, *self.cur_batches, *new] if b is not batch])
        self.batches = [batch] if batch is not None else []
        self.iters = set() if batch is None else {
            k for b in new for k in range(b.lo, b.hi + 1)}
        self.cur_batches = []

    def compact(self, persist: Persist | None = None) -> None:
        """Merge the batches from `_tiered` on: afterwards every batch is larger than twice
        the newer ones together."""
        j = _tiered(self.batches)
        merged = self._merge(self.batches[j:], persist)
        _release(self.batches[j:])
        self.batches = self.batches[:j] + ([merged] if merged is not None else [])

    def abort_epoch(self) -> None:
        _release(self.cur_batches + (self.rebuilt or []))
        self.cur_batches = []
        self.rebuilt = None


def _tiered(batches: list[Batch]) -> int:
    """Where the longest suffix of `batches` (at least two, or the one there is) starts that
    the batch before it does not outweigh twice over: merging it, the spine's sizes decrease
    geometrically, so a row is merged again a logarithmic number of times, not at every
    merge."""
    j = len(batches) - 1
    total = batches[j].rows
    while j > 0 and batches[j - 1].rows <= 2 * total:
        j -= 1
        total += batches[j].rows
    return max(0, min(j, len(batches) - 2))


def _held_rows(b: Batch) -> list[dict] | None:
    """A batch's rows (columns + _i + _w) as the driver holds them, or None when it does not
    hold them all with their iterations (a recorded delta's values lack `_i`: it is lo)."""
    if b.values is None or b.lazy:
        return None
    if not b.values or ITER in b.values[0]:
        return b.values
    return [{**r, ITER: b.lo} for r in b.values] if b.lo == b.hi else None


def _rows_bound(batches: list[Batch]) -> int:
    """How many rows the batches merge into at most (or about: an operator's estimate)."""
    return sum(b.rows for b in batches)


def _persisted(persist: Persist | None, fr: Frame | None) -> Frame | None:
    """A materialised batch, stored by `persist` when there is one."""
    return fr if persist is None or fr is None else persist(fr)


def _release(batches: list[Batch]) -> None:
    """Free the caches of arranged batches that were merged into others (materialised
    already) or dropped."""
    for b in batches:
        if b.arranged:
            b.df.unpersist()
            b.arranged = False
