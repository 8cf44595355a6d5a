"""Distinct, nested and incremental (the "distinct trace" rule of nested DBSP).

For a row x of the input trace at (e, i), with w1 = past[0..i-1][x], w2 = past[i][x],
w3 = cur[0..i-1][x], w = cur[i][x]:

    out[x] = [w1+w2+w3+w > 0] - [w1+w2 > 0] - [w1+w3 > 0] + [w1 > 0]

Only rows with w != 0, or with both w2 != 0 and w3 != 0, can be non-zero. The second kind are
rows touched earlier in this epoch whose past has an entry at iteration i, so the operator
fetches, once per epoch and row, the past history of every row the epoch touches (`hist`, small
when the change is small); the iterations present in it also tell the stratum how far this
epoch can still reach (`horizon`). In a non-recursive stratum (i = 0 only) this is the plain
incremental distinct `[A+Δ > 0] - [A > 0]`.
"""
from __future__ import annotations

from functools import partial

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ddlog.plan.circuit import Distinct
from ddlog.runtime.backend import col, remembered, select
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.operators.base import Context, Operator, Step, narrow
from ddlog.runtime.physical import Frame
from ddlog.runtime.schema import ITER, WEIGHT
from ddlog.runtime.trace import INF
from ddlog.runtime.views import TraceView
from ddlog.runtime.zset import antijoin_keys, consolidate, drop_iter, semijoin_keys, union_all


def _pos(c):
    return F.when(c > 0, F.lit(1)).otherwise(F.lit(0))


# The columns below depend on no data and no iteration: made once per JVM (remembered), not
# in every iteration (1-edge epochs of reachability over 1M edges: 10-19% fewer py4j round
# trips).


def _zero(name: str) -> Column:
    return remembered(("0 as", name), lambda: F.lit(0).cast("long").alias(name))


def _weight(name: str) -> Column:
    return remembered(("_w as", name), lambda: col(WEIGHT).alias(name))


def _sums(names: tuple[str, ...]) -> list[Column]:
    return [remembered(("sum", n), lambda n=n: F.sum(n).alias(n)) for n in names]


_W = ("w1", "w2", "w3", "w")


def _nested_weight() -> Column:
    """The output weight of a row from its w1, w2, w3 and w (the module's formula)."""
    def make() -> Column:
        w1, w2, w3, w = map(col, _W)
        return (_pos(w1 + w2 + w3 + w) - _pos(w1 + w2) - _pos(w1 + w3) + _pos(w1)).cast("long")
    return remembered(("distinct weight",), make)


def _scan_entries() -> Column:
    """Each row of a scan step's sums yields its output (tagged -1), its summary (-2) and its
    next past iteration (>= 0, weight 0): an array of the three exploded, as column `e`."""
    def make() -> Column:
        w3, w = col("w3"), col("w")
        return F.explode(F.array(
            F.struct(F.lit(-1).cast("long").alias(ITER), _nested_weight().alias(WEIGHT)),
            F.struct(F.lit(-2).cast("long").alias(ITER), (w3 + w).alias(WEIGHT)),
            F.struct(F.when(w3 + w != 0, col("n")).alias(ITER),
                     F.lit(0).cast("long").alias(WEIGHT)))).alias("e")
    return remembered(("distinct scan entries",), make)


def _scan_kept() -> Column:
    """The entries a scan step keeps: every next past iteration, and the output's and the
    summary's rows of a weight other than 0."""
    return remembered(("distinct scan kept",), lambda: (
        (col(ITER) >= 0) | ((col(ITER) < 0) & (col(WEIGHT) != 0))))


def _nonzero() -> Column:
    return remembered(("_w != 0",), lambda: col(WEIGHT) != 0)


def _delta_weight() -> Column:
    """`_nested_weight` as the weight column of a delta."""
    return remembered(("distinct weight as", WEIGHT), lambda: _nested_weight().alias(WEIGHT))


def _flat_weight() -> Column:
    """A non-recursive distinct's weight: [w2 + w > 0] - [w2 > 0]."""
    return remembered(("flat distinct weight",), lambda: (
        _pos(col("w2") + col("w")) - _pos(col("w2"))).cast("long").alias(WEIGHT))


def _no_next() -> Column:
    """A scan step's next past iteration `n` where a row has none."""
    return remembered(("null as", "n"), lambda: F.lit(None).cast("long").alias("n"))


def _first_next() -> Column:
    return remembered(("min", "n"), lambda: F.min("n").alias("n"))


class DistinctOp(Operator):
    def __init__(self, view: TraceView, cols: list[str], nested: bool = True,
                 config: Config = DEFAULT, null_safe: list[bool] | None = None,
                 own: TraceView | None = None):
        self.view = view
        self.own = own  # the operator's output trace
        self.cols = cols
        self.nested = nested
        self.config = config
        self.null_safe = null_safe
        self.hist: DataFrame | None = None  # past history (cols, _i, _w) of touched rows
        self.hist_iters: set[int] = set()
        self.hist_rows = 0
        self.hist_parts = 0  # the frames `hist` is a union of
        # in a scan epoch, w3 + w summed so far of every row it touched (see _scan_step)
        self.summary: DataFrame | None = None
        self.summary_rows = 0
        self.large = False

    @classmethod
    def build(cls, node: Distinct, ctx: Context) -> "DistinctOp":
        return cls(ctx.views[node.input], list(node.columns), ctx.nested, ctx.config,
                   ctx.null_safe(node.input, list(node.columns)), ctx.views[node.id])

    def step(self, i: int) -> Step | None:
        v, cols = self.view, self.cols
        if not self.nested:
            out = self._flat_delta()
            return None if out is None else Step(out, v.cur_rows(0, 0), settle=self._done)
        if self.fresh and self.own is not None:
            out = self._fresh_delta(i)
            return None if out is None else Step(out, v.cur_rows(i, i), settle=self._done)
        if self.scan:
            return self._scan_step(i)
        d = drop_iter(v.cur(i, i))
        if d is None and i not in self.hist_iters:
            return None
        keys_d = d.select(*cols) if d is not None else None
        added = self._new_history(i, keys_d)
        out = self._delta(i, d, keys_d, union_all([self.hist, added]))
        # One materialisation holds the output (tagged _i = -1) and the history this
        # iteration adds; the history fetched at earlier iterations is held already. Held
        # whole in every iteration's frame, it would make an iteration's action cost the rows
        # the epoch had touched so far, not its delta: a delete's later iterations would run
        # the large path (a checkpoint, several jobs) for deltas of a few rows.
        # Every max_cur_batches parts it is held whole again, as one part, so that the plans
        # reading it do not grow with a long fixpoint's iterations; but only while that keeps
        # the action small. Held whole past local_rows it would be a checkpoint, read by
        # shuffles, where its small parts are local relations: it stays in parts then, up to
        # config.max_history_parts times as many. The added history is about a past entry
        # per row touched for the first time.
        est = 2 * v.cur_rows(i, i) + 1
        whole = self.hist_parts >= self.config.max_cur_batches and (
            est + self.hist_rows <= self.config.local_rows
            or self.hist_parts >= self.config.max_history_parts * self.config.max_cur_batches)
        est += self.hist_rows if whole else 0
        history = union_all([self.hist, added]) if whole else added
        both = union_all([history, out.select(*cols, F.lit(-1).alias(ITER), WEIGHT)])
        return Step(out, est, df=both, tag=ITER, settle=partial(self._settle, whole))

    def _settle(self, whole: bool, fr: Frame | None) -> Frame | None:
        tags = fr.tags if fr is not None else {}
        entries = {k: n for k, n in tags.items() if k >= 0 and n}  # history rows by iteration
        part = fr.df.filter(col(ITER) >= 0) if entries else None
        if whole:
            self.hist, self.hist_parts = part, int(part is not None)
            self.hist_rows, self.hist_iters = sum(entries.values()), set(entries)
        elif part is not None:
            self.hist, self.hist_parts = union_all([self.hist, part]), self.hist_parts + 1
            self.hist_rows += sum(entries.values())
            self.hist_iters |= set(entries)
        return self._output(fr)

    def _output(self, fr: Frame | None) -> Frame | None:
        """The output delta of a frame whose rows are tagged by iteration: -1 for the
        output's rows, k >= 0 for touched rows whose past has an entry at k."""
        cols = self.cols
        tags = fr.tags if fr is not None else {}
        n_out = tags.get(-1, 0)
        if not n_out:
            return self._done(None)
        values = None if fr.values is None else [
            {c: r[c] for c in (*cols, WEIGHT)} for r in fr.values if r[ITER] == -1]
        return self._done(Frame(fr.df.filter(col(ITER) == -1).select(*cols, WEIGHT), n_out,
                                local=fr.local, values=values))

    def _done(self, fr: Frame | None) -> Frame | None:
        self.large = fr is not None and fr.rows > self.config.local_rows
        return fr

    def _scan_step(self, i: int) -> Step | None:
        """The same double delta when the input's deltas are plans over a small past (see
        Operator.scan). The input's deltas are read once each, at their own iteration: the
        operator keeps, for every row this epoch touched, w3 + w summed so far (`summary`,
        materialised with its output), so that earlier iterations' plans never run again.
        One aggregate over the delta, the summary and the whole (small) past gives every
        row's w1, w2, w3 and w; a row this epoch does not touch has w3 = w = 0 and comes out
        as [w1+w2>0] - [w1+w2>0] - [w1>0] + [w1>0] = 0, so nothing needs narrowing. A row
        whose w3 + w is 0 contributes nothing later unless touched again, so the summary
        drops it. The same aggregate gives, for each row of the summary, the next iteration
        after i where its past has an entry (`hist_iters`: where the stratum must come
        back, see horizon)."""
        v, cols = self.view, self.cols
        d = drop_iter(v.cur(i, i))
        if d is None and i not in self.hist_iters:
            return None
        it, w = col(ITER), col(WEIGHT)
        none = _no_next()
        parts = []
        if d is not None:
            parts.append(select(d, *cols, _zero("w1"), _zero("w2"), _zero("w3"), _weight("w"),
                                none))
        if self.summary is not None:
            parts.append(select(self.summary, *cols, _zero("w1"), _zero("w2"), _weight("w3"),
                                _zero("w"), none))
        past = v.past(0, INF)
        if past is not None:
            parts.append(select(
                past, *cols, F.when(it < i, w).otherwise(0).alias("w1"),
                F.when(it == i, w).otherwise(0).alias("w2"), _zero("w3"), _zero("w"),
                F.when(it > i, it).alias("n")))
        s = union_all(parts).groupBy(*cols).agg(
            *_sums(_W), _first_next())
        both = select(s, *cols, _scan_entries())
        both = select(both, *cols, "e.*").filter(_scan_kept())
        return Step(both.filter(col(ITER) == -1).select(*cols, WEIGHT),
                    v.cur_rows(i, i) + self.summary_rows + 1, df=both, tag=ITER,
                    settle=self._scan_settle)

    def _scan_settle(self, fr: Frame | None) -> Frame | None:
        tags = fr.tags if fr is not None else {}
        # the summary's rows' next past iterations, all of them
        self.hist_iters = {k for k, n in tags.items() if k >= 0 and n}
        self.summary_rows = tags.get(-2, 0)
        self.summary = (fr.df.filter(col(ITER) == -2).select(*self.cols, WEIGHT)
                        if fr is not None and self.summary_rows else None)
        return self._output(fr)

    def _new_history(self, i: int, keys_d: DataFrame | None) -> DataFrame | None:
        """The past of rows touched for the first time this epoch at iteration i."""
        v, cols = self.view, self.cols
        if keys_d is None or not v.past_iters():
            return None
        prev = v.cur(0, i - 1) if i > 0 else None
        small = self._hint(v.cur_rows(0, i))
        new = keys_d if prev is None else antijoin_keys(keys_d, prev.select(*cols), cols,
                                                        small, self.null_safe)
        # the past is read by key: only the rows of d's keys
        past = v.past(0, INF)
        if cols:
            past = narrow(past, cols[0], v.cur_keys(i, i, cols[0]), self.config,
                          v.past_rows(0, INF))
        if past is None:  # past_iters() is a superset; the batches may all have cancelled
            return None
        return semijoin_keys(past, new, cols, small, self.null_safe).select(*cols, ITER, WEIGHT)

    def _hint(self, rows: int) -> bool:
        """Whether to broadcast a side of `rows` rows: not when it is a local relation (the
        whole step is one small job then, and a broadcast would be a job of its own)."""
        return self.config.local_rows < rows <= self.config.broadcast_rows

    def _delta(self, i: int, d: DataFrame | None, keys_d: DataFrame | None,
               hist: DataFrame | None) -> DataFrame:
        v, cols = self.view, self.cols
        parts = []
        if d is not None:
            parts.append(select(d, *cols, _zero("w1"), _zero("w2"), _zero("w3"), _weight("w")))
        if hist is not None:
            parts.append(select(
                hist, *cols, F.when(col(ITER) < i, col(WEIGHT)).otherwise(0).alias("w1"),
                F.when(col(ITER) == i, col(WEIGHT)).otherwise(0).alias("w2"),
                _zero("w3"), _zero("w")))
        prev = v.cur(0, i - 1) if i > 0 else None
        if prev is not None:
            if v.cur_rows(i, i) <= self.config.broadcast_rows:
                # candidates: rows of d, and touched rows with a past entry at i
                cand = union_all([keys_d, hist.filter(col(ITER) == i).select(*cols)
                                  if hist is not None else None])
                small = self._hint(v.cur_rows(i, i) + self.hist_rows)
                prev = semijoin_keys(prev, cand, cols, small, self.null_safe)
            parts.append(select(prev, *cols, _zero("w1"), _zero("w2"), _weight("w3"),
                                _zero("w")))
        s = union_all(parts).groupBy(*cols).agg(*_sums(_W))
        return select(s, *cols, _delta_weight()).filter(_nonzero())

    def _fresh_delta(self, i: int) -> DataFrame | None:
        """Semi-naive: with no past and positive weights, w1 = w2 = 0 and w3 > 0 exactly for
        the rows already output, so out = [w3 + w > 0] - [w3 > 0] is the rows of d not
        output before: an anti-join with this operator's own (set-valued, smaller) output so
        far instead of summing its input's history."""
        v, cols = self.view, self.cols
        d = drop_iter(v.cur(i, i))
        if d is None:
            return None
        new = consolidate(d, cols, positive=True).select(
            *cols, F.lit(1).cast("long").alias(WEIGHT))
        before = self.own.cur(0, i - 1) if i > 0 else None
        if before is None:
            return new
        # Spark chooses the join: `before` grows to the whole relation
        return antijoin_keys(new, before.select(*cols), cols, False, self.null_safe)

    def _flat_delta(self) -> DataFrame | None:
        """Iteration 0 of a non-recursive stratum: w1 = w3 = 0, so out = [w2+w > 0] - [w2 > 0]
        with w2 = the integrated input A; only rows of Δ are looked up in A."""
        v, cols = self.view, self.cols
        d = drop_iter(v.cur(0, 0))
        if d is None:
            return None
        parts = [select(d, *cols, _zero("w2"), _weight("w"))]
        keys = v.cur_keys(0, 0, cols[0]) if cols else None
        past = drop_iter(v.past(0, 0))
        if past is not None:
            # Rows of A that Δ does not touch come out as [w2 > 0] - [w2 > 0] = 0, so A only
            # needs cutting down for speed: by Δ's keys when the driver knows them (a lookup),
            # else by a broadcast semijoin when Δ is small.
            rows = v.past_rows(0, 0)
            if rows <= self.config.narrow_rows:
                pass  # the driver holds A: reading it whole costs nothing
            elif keys is not None and len(keys) <= self.config.lookup_keys:
                past = narrow(past, cols[0], keys, self.config, rows)
            elif v.cur_rows(0, 0) <= self.config.broadcast_rows:
                past = semijoin_keys(past, d.select(*cols), cols, True, self.null_safe)
            parts.append(select(past, *cols, _weight("w2"), _zero("w")))
        s = union_all(parts).groupBy(*cols).agg(*_sums(("w2", "w")))
        return select(s, *cols, _flat_weight()).filter(_nonzero())

    def horizon(self, i: int) -> list:
        later = [k for k in self.hist_iters if k > i]
        return [min(later)] if later else []

    def end_epoch(self) -> None:
        self.hist = None
        self.hist_iters = set()
        self.hist_rows = 0
        self.hist_parts = 0
        self.summary = None
        self.summary_rows = 0
