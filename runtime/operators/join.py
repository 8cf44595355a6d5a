"""Join (bilinear), nested and incremental.

With traces of both inputs — `past` summed over finished epochs, `cur` of this epoch, both keyed
by iteration — the double delta of `a ⋈ b` at (e, i) is

    cur_a[i]      ⋈ (past_b + cur_b)[0..i]
  + cur_a[0..i-1] ⋈ (past_b + cur_b)[i]
  + past_a[i]     ⋈ cur_b[0..i]
  + past_a[0..i-1]⋈ cur_b[i]

When b is imported through δ₀ (only iteration 0) this is `cur_a[i] ⋈ b_now + past_a[i] ⋈ Δb`;
in a non-recursive stratum (i = 0 only) it is the familiar `Δa ⋈ (B + Δb) + A ⋈ Δb`. Terms
whose sides the driver knows to be empty are skipped, never run.

`horizon(i)`: when the stratum is quiescent after iteration i, the next iteration j > i at which
this join can still produce something: `past_a[j] ⋈ cur_b[0..i]` or `past_b[j] ⋈ cur_a[0..i]`.
When that side's change sits at iteration 0 only (b imported through δ₀, as reachability's edges
are), those rows are the whole term `past_a[j] ⋈ cur_b[0..j]` of every later step(j): the
horizon fetches the rows themselves, ahead, and step(j) reads them instead of looking the past
up again. When that change is an input's, given in Python, the inputs' action looks x's past
up by the keys of the updated rows ahead of the stratum (`prefetch`), and the driver joins
those rows with the change itself: the horizon then runs no Spark job of its own.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import partial

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ddlog.plan.circuit import AntiJoin, Join
from ddlog.runtime.backend import col
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.operators.base import Context, KeysOf, Operator, Probe, Step, narrow
from ddlog.runtime.physical import Frame, held_many
from ddlog.runtime.schema import ITER, WEIGHT
from ddlog.runtime.trace import INF
from ddlog.runtime.views import TraceView, at_zero
from ddlog.runtime.zset import join, lookup, row_key, rows_comparable, semijoin_keys, union_all


class JoinOp(Operator):
    def __init__(self, a: TraceView, b: TraceView, a_keys: list[str], b_keys: list[str],
                 a_out: list[str], b_out: list[str], config: Config = DEFAULT,
                 null_safe: list[bool] | None = None, ready: tuple[bool, bool] = (False, False)):
        self.a, self.b = a, b
        self.a_keys, self.b_keys = a_keys, b_keys
        self.a_out, self.b_out = a_out, b_out
        self.config = config
        self.null_safe = null_safe
        # The two ways this epoch's changes meet the past at later iterations: (x, y) =
        # (a, b) is `past_a[j] ⋈ cur_b`, (b, a) is `past_b[j] ⋈ cur_a`. `ready[d]`: y's delta
        # at iteration i is materialised when this join's step(i) runs (y is computed in an
        # earlier wave, or imported), so that step can already probe it.
        self.dirs = ((a, b, a_keys, b_keys), (b, a, b_keys, a_keys))
        self.ready = ready
        self.meets: set[int] = set()  # iterations j where probed changes meet the past
        self.probed = [-1, -1]  # per direction: cur[0..probed] of y is in `meets`
        # per direction: whether y changes at iteration 0 only, so that what it meets in x's
        # past at every later iteration can be fetched at once (_ahead)
        self.y_at_zero = (at_zero(b), at_zero(a))
        # per direction, once fetched: (after, frame) = past_x[j] ⋈ cur_y for every
        # j > after, each row at its j (None: there is none)
        self.ahead: dict[int, tuple[int, Frame | None]] = {}
        self.held: dict[tuple[int, int], Frame] = {}  # (direction, i) -> its rows at i
        # per direction, when the inputs' action looked them up (prefetch): x's past at
        # iterations j > 0 with the keys of y's updated rows (None: there were none)
        self.prefetched: dict[int, Frame | None] = {}

    @classmethod
    def build(cls, node: Join, ctx: Context) -> "JoinOp":
        # the output drops computed key columns of the left side (the node's schema)
        a_out = [c for c in node.columns if c not in node.right_out]
        return cls(ctx.views[node.left], ctx.views[node.right], node.left_keys, node.right_keys,
                   a_out, node.right_out, ctx.config, join_null_safe(node, ctx),
                   join_ready(node, ctx))

    def _keys(self, view: TraceView, lo: int, hi: int) -> set | None:
        """The first key column's values in view.cur[lo..hi], if the driver holds them."""
        if not self.a_keys:
            return None
        return view.cur_keys(lo, hi, self.a_keys[0] if view is self.a else self.b_keys[0])

    def _term(self, cur_side: str, cur: DataFrame | None, cur_lo: int, cur_hi: int,
              other: DataFrame | None, other_rows: int) -> DataFrame | None:
        """cur ⋈ other (in a-b order), where `cur` is this epoch's slice cur_side[lo..hi]
        (small) and `other` (of `other_rows` rows) may hold the past (large): the past is
        first narrowed to the keys of `cur` when the driver knows them; if not, the small side
        is broadcast. When both sides are small, they meet in one shuffle of the same job."""
        if cur is None or other is None:
            return None
        other, small = self._narrowed(cur_side, cur_lo, cur_hi, other, other_rows)
        x, y = (cur, other) if cur_side == "a" else (other, cur)
        return join(x, y, self.a_keys, self.b_keys, self.a_out, self.b_out, small,
                    self.null_safe)

    def _narrowed(self, cur_side: str, cur_lo: int, cur_hi: int, other: DataFrame,
                  other_rows: int) -> tuple[DataFrame, str | None]:
        """`other` narrowed to the keys of cur_side[lo..hi], and which side to broadcast."""
        view, other_col = ((self.a, self.b_keys) if cur_side == "a" else (self.b, self.a_keys))
        if other_rows <= self.config.narrow_rows:
            return other, None
        keys = self._keys(view, cur_lo, cur_hi)
        if keys is not None and len(keys) <= self.config.lookup_keys:
            return narrow(other, other_col[0], keys, self.config, other_rows), None
        if view.cur_rows(cur_lo, cur_hi) <= self.config.broadcast_rows:
            return other, cur_side
        return other, None

    def step(self, i: int) -> Step | None:
        out = self.delta(i)
        if out is None:
            return None
        held = [f for d in (0, 1) if (f := self.held.get((d, i))) is not None]
        if held and out is held[0].df:
            # the whole delta is rows fetched ahead: delta gives the fetched frame itself
            # when its other terms are empty (a union of one frame is that frame)
            return Step(out, held[0].rows, frame=held[0])
        # a guess for broadcast decisions: the changed sides' sizes
        return Step(out, self.a.cur_rows(i, i) + self.b.cur_rows(i, i) + 1)

    def delta(self, i: int) -> DataFrame | None:
        # past_iters() is a superset (an epoch whose batches cancel out still lists its
        # iterations), so a slice of `past` it announces may hold no batch at all
        a, b = self.a, self.b
        a_iters, b_iters = a.past_iters(), b.past_iters()
        b_past_le = b.past(0, i) if any(k <= i for k in b_iters) else None
        terms = [
            # cur_a[i] ⋈ (past_b + cur_b)[0..i]: the past narrowed to cur_a[i]'s keys
            union_all([self._term("a", a.cur(i, i), i, i, b_past_le, b.past_rows(0, i)),
                       self._term("a", a.cur(i, i), i, i, b.cur(0, i), b.cur_rows(0, i))]),
            # cur_a[0..i-1] ⋈ (past_b + cur_b)[i]
            union_all([self._fetched(1, i) if self._has_fetched(1, i) else
                       self._term("a", a.cur(0, i - 1), 0, i - 1,
                                  b.past(i, i) if i in b_iters else None, b.past_rows(i, i)),
                       self._term("a", a.cur(0, i - 1), 0, i - 1, b.cur(i, i),
                                  b.cur_rows(i, i))])
            if i > 0 else None,
            # past_a[i] ⋈ cur_b[0..i]
            self._fetched(0, i) if self._has_fetched(0, i) else
            self._term("b", b.cur(0, i), 0, i, a.past(i, i) if i in a_iters else None,
                       a.past_rows(i, i)),
            # past_a[0..i-1] ⋈ cur_b[i]
            self._term("b", b.cur(i, i), i, i, a.past(0, i - 1), a.past_rows(0, i - 1))
            if i > 0 and any(k < i for k in a_iters) else None,
        ]
        return union_all(terms)

    def whole(self) -> DataFrame | None:
        """The epoch's whole output trace as one plan (what the epoch's end materialises for
        an inlined join, instead of one plan per iteration): summed over i, the four terms
        above pair every row of cur_a (at iteration ia) with every row of past_b + cur_b (at
        ib), and every row of past_a with every row of cur_b, each pair once, at iteration
        max(ia, ib). In an epoch evaluated from nothing only cur_a ⋈ cur_b is left."""
        a, b = self.a, self.b
        a_cur, b_cur = a.cur(0, INF), b.cur(0, INF)
        return union_all([
            self._whole_term("a", a_cur, b_cur, b.cur_rows(0, INF)),
            self._whole_term("a", a_cur, b.past(0, INF), b.past_rows(0, INF)),
            self._whole_term("b", b_cur, a.past(0, INF), a.past_rows(0, INF))])

    def _whole_term(self, cur_side: str, cur: DataFrame | None, other: DataFrame | None,
                    other_rows: int) -> DataFrame | None:
        """cur ⋈ other (in a-b order) over all their iterations, each pair at the later one."""
        if cur is None or other is None:
            return None
        other, small = self._narrowed(cur_side, 0, INF, other, other_rows)
        x, y = (cur, other) if cur_side == "a" else (other, cur)
        out = join(x.withColumnRenamed(ITER, "_ia"), y.withColumnRenamed(ITER, "_ib"),
                   self.a_keys, self.b_keys, [*self.a_out, "_ia"], [*self.b_out, "_ib"],
                   small, self.null_safe)
        return out.select(*self.a_out, *self.b_out, F.greatest("_ia", "_ib").alias(ITER),
                          WEIGHT)

    def _meet(self, d: int, lo: int, hi: int, after: int = -1) -> DataFrame | None:
        """The iterations j > `after` of x's past whose rows meet y.cur[lo..hi] by key, one
        row per j; the past is read by key when the driver knows y's keys (None if it does
        not and `after` < 0: a probe must be cheap, a horizon query may scan)."""
        x, y, xk, yk = self.dirs[d]
        later = x.past(after + 1, INF)
        if later is None:
            return None
        known = y.cur_keys(lo, hi, yk[0]) if yk else None
        rows = x.past_rows(after + 1, INF)
        if rows <= self.config.narrow_rows:
            small = False  # both sides small: one shuffle in the same job
        elif known is not None and len(known) <= self.config.lookup_keys:
            later, small = narrow(later, xk[0], known, self.config, rows), False
        elif after < 0:
            return None
        else:
            small = y.cur_rows(lo, hi) <= self.config.broadcast_rows
        # a key column of x paired twice (a repeated variable) is matched on its first pair:
        # a superset of the meetings, which only costs an iteration that finds nothing
        pairs = dict(reversed(list(zip(xk, yk))))
        keys = y.cur(lo, hi).select(*[col(c).alias(k) for k, c in pairs.items()])
        null_safe = [self.null_safe[xk.index(k)] for k in pairs] if self.null_safe else None
        return (semijoin_keys(later, keys, list(pairs), small, null_safe)
                .select(ITER).distinct())

    def probes(self, i: int) -> list[Probe]:
        """Where the changes of y materialised so far meet x's past, asked with this step's
        wave: the stratum's horizon then usually knows the answer without a Spark job."""
        out = []
        for d, (x, y, _, _) in enumerate(self.dirs):
            lo, hi = self.probed[d] + 1, (i if self.ready[d] else i - 1)
            if hi < lo:
                continue
            if not x.past_iters() or y.cur_rows(lo, hi) == 0:
                self.probed[d] = hi  # nothing of y there (the slices are final): no meeting
                continue
            if lo == 0 and self.y_at_zero[d] and self._joined_ahead(d, hi):
                continue
            q = self._meet(d, lo, hi)
            if q is not None:
                out.append(Probe(q, partial(self._met, d, hi)))
        return out

    def _met(self, d: int, hi: int, frame: Frame | None) -> None:
        if frame is None:
            self.probed[d] = hi
        elif frame.values is not None:  # else: not read into Python; the horizon asks
            self.meets |= {r[ITER] for r in frame.values}
            self.probed[d] = hi

    def horizon(self, i: int) -> list[int | DataFrame | Probe]:
        """After a quiescent iteration i: the next iteration where this epoch's changes meet
        x's past. What the probes found is known; changes not probed yet are asked by
        queries (one row, one column: the iteration or null), or fetched with their rows
        (_ahead), which the stratum runs together in one Spark action."""
        out: list[int | DataFrame | Probe] = [j for j in self.meets if j > i]
        for d, (x, y, _, _) in enumerate(self.dirs):
            lo = self.probed[d] + 1
            if lo > i or not any(k > i for k in x.past_iters()) or y.cur_rows(lo, i) == 0:
                continue
            if lo == 0 and self.y_at_zero[d] and self._joined_ahead(d, i):
                out += [j for j in self.meets if j > i]
                continue
            if lo == 0 and self.y_at_zero[d] and (p := self._ahead(d, i)) is not None:
                out.append(p)
                continue
            q = self._meet(d, lo, i, after=i)
            if q is not None:
                out.append(q.agg(F.min(ITER).alias("h")))
        return out

    def _ahead(self, d: int, after: int) -> Probe | None:
        """y's change (at iteration 0 only, none of it probed yet) joined with x's past at
        every iteration j > `after`, each row at its j, in a-b order: the term
        past_x[j] ⋈ cur_y[0..j] of every later step(j). The horizon's action fetches it, a
        lookup by y's keys as the query of the iterations alone would be, and its
        iterations are the meetings. None when the past is large and y's keys are not known
        or too many (the horizon's query scans then; these rows could be many)."""
        x, y, _, _ = self.dirs[d]
        rows = x.past_rows(after + 1, INF)
        keys = self._keys(y, 0, 0)
        if rows > self.config.narrow_rows and (keys is None
                                               or len(keys) > self.config.lookup_keys):
            return None
        # y's rows sit at iteration 0 and x's at j > 0: each pair lands at j
        df = self._whole_term("b" if d == 0 else "a", y.cur(0, 0), x.past(after + 1, INF),
                              rows)
        if df is None:
            return None
        return Probe(df, partial(self._fetch, d, after), tag=ITER, est=y.cur_rows(0, 0) + 1)

    def prefetch(self, keys_of: KeysOf) -> list[Probe]:
        """Lookups for the inputs' action, before the stratum runs: for each direction whose
        y is imported (it changes at iteration 0 only), x's past at every iteration j > 0
        with the keys of y's updated rows, when the engine knows them (`keys_of`). What the
        change meets later is then known without a Spark job (_joined_ahead). Only a large
        past (read by key, config.narrow_rows) is looked up: over a small one the horizon's
        action is a small join of local relations, and on tiny states the lookups cost
        about what the job saved (`bench/pair.py tiny --b prefetch=false`)."""
        out = []
        for d, (x, y, xk, yk) in enumerate(self.dirs):
            if not (self.config.prefetch and self.y_at_zero[d] and yk
                    and x.past_rows(1, INF) > self.config.narrow_rows):
                continue
            src = y.source(yk[0])
            keys = keys_of(*src) if src is not None else None
            later = x.past(1, INF)
            if keys is None or len(keys) > self.config.lookup_keys or later is None:
                continue
            out.append(Probe(lookup(later, xk[0], keys, self.config.one_task_lookups),
                             partial(self.prefetched.__setitem__, d), est=len(keys) + 1))
        return out

    def _joined_ahead(self, d: int, after: int) -> bool:
        """What _ahead fetches (past_x[j] ⋈ cur_y for every j > `after`), joined by the driver
        from the rows the inputs' action looked up (prefetch) and y's change, when it holds
        both and their keys compare in Python as in Spark (zset.rows_comparable). Says
        whether it did."""
        if d not in self.prefetched:
            return False
        _, y, xk, yk = self.dirs[d]
        looked_up = self.prefetched[d]
        ys = y.cur_values(0, 0)
        if ys is None or (looked_up is not None and looked_up.values is None):
            return False
        xs = [] if looked_up is None else [r for r in looked_up.values if r[ITER] > after]
        frame = None
        if xs:
            x_types = {f.name: f for f in looked_up.df.schema.fields}
            y_types = {f.name: f for f in y.cur(0, 0).schema.fields}
            if not rows_comparable(StructType([*(x_types[k] for k in xk),
                                               *(y_types[k] for k in yk)])):
                return False
            rows = self._joined_rows(d, xs, ys)
            if rows:
                a_types, b_types = (x_types, y_types) if d == 0 else (y_types, x_types)
                schema = StructType([*(a_types[c] for c in self.a_out),
                                     *(b_types[c] for c in self.b_out),
                                     x_types[ITER], x_types[WEIGHT]])
                # a local relation of the rows, as an action would have collected them
                held = held_many(looked_up.df.sparkSession, {0: (schema, rows)},
                                 self.config)[0]
                frame = replace(held, tags=Counter(r[ITER] for r in rows))
        self._fetch(d, after, frame)
        return True

    def _joined_rows(self, d: int, xs: list[dict], ys: list[dict]) -> list[dict]:
        """x's rows joined with y's on the driver, as the join's a-b output rows, each at
        x's iteration with the product of the weights."""
        _, _, xk, yk = self.dirs[d]
        null_safe = self.null_safe or [False] * len(xk)
        by_key: dict[tuple, list[dict]] = {}
        for r in ys:
            by_key.setdefault(row_key(r, yk), []).append(r)
        rows = []
        for r in xs:
            if any(r[k] is None and not safe for k, safe in zip(xk, null_safe)):
                continue  # null meets nothing where the comparison is not null-safe
            for s in by_key.get(row_key(r, xk), ()):
                a, b = (r, s) if d == 0 else (s, r)
                rows.append({**{c: a[c] for c in self.a_out}, **{c: b[c] for c in self.b_out},
                             ITER: r[ITER], WEIGHT: r[WEIGHT] * s[WEIGHT]})
        return rows

    def _fetch(self, d: int, after: int, frame: Frame | None) -> None:
        self.ahead[d] = (after, frame)
        if frame is not None:
            self.meets |= {j for j, n in (frame.tags or {}).items() if n}
        self.probed[d] = after

    def _has_fetched(self, d: int, i: int) -> bool:
        """Whether direction d's term at iteration i was fetched ahead (see _ahead)."""
        return d in self.ahead and i > self.ahead[d][0]

    def _fetched(self, d: int, i: int) -> DataFrame | None:
        """Direction d's term at iteration i, from the rows fetched ahead (a frame of its
        own, `held`, with its rows in Python when the fetched frame had them)."""
        frame = self.ahead[d][1]
        rows = (frame.tags or {}).get(i) if frame is not None else None
        if not rows:
            return None
        if (d, i) not in self.held:
            values = None if frame.values is None else [
                {c: v for c, v in r.items() if c != ITER} for r in frame.values if r[ITER] == i]
            self.held[(d, i)] = Frame(frame.df.filter(col(ITER) == i).drop(ITER), rows,
                                      local=frame.local, values=values)
        return self.held[(d, i)].df

    def end_epoch(self) -> None:
        self.meets = set()
        self.probed = [-1, -1]
        self.ahead = {}
        self.held = {}
        self.prefetched = {}


def join_ready(node: Join | AntiJoin, ctx: Context) -> tuple[bool, bool]:
    """For each direction of JoinOp.dirs: whether y's delta at iteration i is materialised
    before the join's own step(i) (y sits in an earlier wave)."""
    own = ctx.levels.get(node.id, 0)
    return (ctx.levels.get(node.right, own) < own, ctx.levels.get(node.left, own) < own)


def join_null_safe(node: Join | AntiJoin, ctx: Context) -> list[bool]:
    """Which key pairs of a join compare null-safely: those where either side may be null."""
    left = ctx.null_safe(node.left, list(node.left_keys))
    right = ctx.null_safe(node.right, list(node.right_keys))
    return [x or y for x, y in zip(left, right)]
