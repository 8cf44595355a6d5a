"""What the cost-based fallback of a recursive stratum measures and decides
(runtime/stratum.StratumRuntime runs it): an incremental run is measured against the
stratum's last evaluation from scratch (`Scratch`), gives up and recomputes when finishing
would cost more than that, at a pace its earlier iterations tell (`Paces`), and a give-up is
remembered for the changes as large that follow (`GaveUp`).

These are plain values and functions of them, kept with the durable state
(runtime/state/manifest.py reads them back).

The design: docs/design.md, The cost model and the fallback.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, ClassVar


@dataclass
class Scratch:
    """A stratum's last evaluation from scratch (a first epoch or a recompute)."""

    seconds: float  # what it took
    rows: int  # the rows its inputs held then
    iterations: int  # the depth of its fixpoint
    # whether it ran in the process's first epoch, on a JVM that had not yet compiled the
    # engine's code paths (a `ddlog run`, a program's initial epoch), and so took longer than
    # it would later in the process (StratumRuntime._budget)
    cold: bool = False
    # the rows of its deltas at each iteration (0, 1, ...): the shape of its fixpoint, which
    # an incremental change's deltas follow at a share of them (Paces.ahead); empty in a
    # state written before it was kept
    deltas: list[int] = field(default_factory=list)

    def seconds_now(self, warm: bool, cold_scratch: float) -> float:
        """What it would take now: its time, or `cold_scratch` of it when it ran cold and the
        process has run the engine's code since (`warm`)."""
        return self.seconds * (cold_scratch if self.cold and warm else 1.0)

    def scale(self, rows: int) -> float:
        """How many times its time a run over `rows` input rows would take: their ratio to
        its rows, never less than once (a run over fewer rows still walks its fixpoint's
        depth)."""
        return max(1.0, rows / max(self.rows, 1))

    def then(self, new: Scratch) -> Scratch:
        """What later runs are measured against once `new` (a recompute) ran after this
        one. A recompute measured warm after a run measured cold replaces it as measured:
        the cold run's discount (config.cold_scratch) is a guess, and how much longer a cold
        run takes than a warm one varies widely. After a warm one it counts no dearer than
        that one over its own rows: a run from scratch gets cheaper as the JVM compiles the
        code it runs, not dearer (the first recompute of a process also runs the traces'
        rebuild for the first time, and is slower than the ones after it). A recompute in a
        process's first epoch (cold itself) replaces it as it is."""
        if new.cold or self.cold:
            return new
        return replace(new, seconds=min(new.seconds, self.seconds * self.scale(new.rows)))

    def left(self, i: int, pace: float) -> float:
        """What the iterations until this evaluation's depth take after iteration i, each at
        `pace`; one iteration at least."""
        return max(self.iterations - i, 1) * pace

    def overrun(self, budget: float, spent: float, i: int, pace: float,
                ahead: float | None = None, margin: float = 1.0) -> bool:
        """Whether an incremental run about to run iteration i gives up and recomputes: the
        iterations left would cost more than the budget (what was spent is spent either way),
        or finishing would cost more than giving up at the budget would have (the budget and
        a recompute: twice the budget).

        What the iterations left cost is `ahead`, when the stratum's paces can tell it
        (Paces.ahead: from this evaluation's deltas, at the share of them the change has
        reached, priced at what its incremental iterations of such sizes took), and never
        less than one more iteration at `pace`; a guess gives up above `margin` times the
        budget (config.guess_margin: a guess that falls short costs more than one that
        overshoots). Otherwise they are the iterations until this evaluation's depth, each at
        `pace` (the run's mean pace so far; the stratum corrects both by how they misjudged
        its earlier runs, Paces.correction): a change whose deltas stay small goes at the pace
        of a small action, which a run from scratch pays for each of its iterations too; one
        that runs deeper than this evaluation counts one iteration left. A run past its
        budget whose end is near finishes: a run given up at its budget a few small
        iterations from its end pays for a whole recompute where finishing costs little
        more than what it has spent."""
        if ahead is None:
            ahead, limit = self.left(i, pace), budget
        else:
            ahead, limit = max(ahead, pace), margin * budget
        return ahead > limit or spent + ahead > 2 * budget


@dataclass
class Paces:
    """What a stratum's incremental iterations took by the rows of their deltas and of the
    deltas their run had made before them, and what the iterations left of a run will take
    by them.

    The last pace alone misjudges a change early in its run: its first deltas are a few rows,
    which cost little, and they grow as the change spreads through the fixpoint, as the
    evaluation from scratch's did: going by its last pace, a large change runs on long after
    its cheap first iterations before it gives up, and costs much more than a recompute. An
    iteration also reads what its run made before it (the traces' batches of this epoch, a
    distinct's history): late in a large change's run, an iteration of few rows costs
    several times what one of as few rows costs in a small change's. So
    seconds ≈ a + b log(1 + rows) + c log(1 + rows before), fitted by least squares to the last
    `keep` iterations seen (the epoch's own included, so the first run learns as it goes), b and
    c not below 0."""

    seen: list[tuple[int, int, float]] = field(default_factory=list)  # (rows, before, s)
    # What the rest of each of the last `runs` finished incremental runs took, as a share of
    # what its checks foresaw for it (`learn`), by the way they foresaw it: "depth" (the
    # iterations left to the depth at the run's mean pace, Scratch.left) and "guess"
    # (`ahead`). Both rules misjudge some programs by a factor of their own: over points-to,
    # small changes run a few costly iterations, which both rules foresee as much dearer than
    # they are, so they give them up and recompute at a cost well above finishing's; over
    # reachability the guesses fall well short of large changes. `correction` scales each
    # rule by what it did before.
    misses: dict[str, list[float]] = field(default_factory=dict)
    keep: ClassVar[int] = 64
    runs: ClassVar[int] = 8
    # a correction needs this many runs; it is kept within these bounds of 1, so that a few
    # runs of one kind of change cannot switch a rule off or make it give up every run
    known: ClassVar[int] = 2
    bounds: ClassVar[tuple[float, float]] = (0.25, 4.0)
    # fewer iterations seen than this tell nothing: a fit over the first few, all of one
    # small change, can guess many times what a change then takes
    least: ClassVar[int] = 6

    def add(self, rows: int, before: int, seconds: float) -> None:
        """An incremental iteration whose deltas held `rows` rows, after `before` rows of
        its run's earlier iterations, took `seconds` (one that moved nothing, the horizon's,
        is not one of a change's)."""
        if rows > 0:
            self.seen.append((rows, before, seconds))
            del self.seen[:-self.keep]

    def learn(self, checks: list[Check], total: float) -> None:
        """A finished run took `total` seconds after the `checks` made before its iterations:
        per rule, what the rest took after its checks against what they foresaw."""
        for rule in ("depth", "guess"):
            said = [(c.spent, getattr(c, rule)) for c in checks if getattr(c, rule) is not None]
            foreseen = sum(a for _, a in said)
            if foreseen > 0:
                seen = self.misses.setdefault(rule, [])
                seen.append(sum(max(total - spent, 0.0) for spent, _ in said) / foreseen)
                del seen[:-self.runs]

    def correction(self, rule: str) -> float:
        """What a rule's foresight is multiplied by: the median of its misses (`learn`),
        within `bounds`; 1 before `known` runs finished."""
        seen = sorted(self.misses.get(rule, []))
        if len(seen) < self.known:
            return 1.0
        mid = len(seen) // 2
        median = seen[mid] if len(seen) % 2 else (seen[mid - 1] + seen[mid]) / 2
        return min(max(median, self.bounds[0]), self.bounds[1])

    def fit(self) -> tuple[float, float, float] | None:
        """(a, b, c) of seconds ≈ a + b log(1 + rows) + c log(1 + rows before), by least
        squares over what was seen; a term whose coefficient comes out below 0 is dropped and
        the rest fitted again (an iteration does not get cheaper with more rows: a fit over
        noisy small iterations might say so). None before `least` iterations were seen."""
        if len(self.seen) < self.least:
            return None
        xs = [(math.log1p(r), math.log1p(b)) for r, b, _ in self.seen]
        ys = [t for _, _, t in self.seen]
        for terms in ((0, 1), (0,), (1,)):
            coef = _least_squares([[x[k] for k in terms] for x in xs], ys)
            if coef is not None and all(v >= 0 for v in coef[1:]):
                out = [coef[0], 0.0, 0.0]
                for k, v in zip(terms, coef[1:]):
                    out[1 + k] = v
                return out[0], out[1], out[2]
        return sum(ys) / len(ys), 0.0, 0.0  # neither term helps: the mean

    def ahead(self, scratch: Scratch, i: int, rows: int, before: int) -> float | None:
        """What the iterations after iteration i of an incremental run, whose deltas held
        `rows` rows after `before` rows of its earlier ones, will take: its deltas at the
        share of the evaluation from scratch's they now are (rows / its deltas at i), each
        iteration priced by `fit`; at least one iteration is left. None when that cannot be
        told: no fit yet, the evaluation's deltas not known (a state written before they
        were kept) or empty at i, or no rows at i."""
        fit = self.fit()
        deltas = scratch.deltas
        if fit is None or rows <= 0 or i >= len(deltas) or deltas[i] <= 0:
            return None
        a, b, c = fit
        share, made = rows / deltas[i], before + rows
        # an iteration where less than half a row is left has likely seen the change die
        # out (a small change ends some iterations before the depth): it is not counted, so
        # that a small change's guess is not its depth's tail
        left = [share * d for d in deltas[i + 1:] if share * d >= 0.5] or [0.0]
        total = 0.0
        for r in left:
            total += max(0.0, a + b * math.log1p(r) + c * math.log1p(made))
            made += r
        return total


@dataclass
class Check:
    """What an incremental run foresaw before one of its iterations, `spent` seconds in: the
    iterations left to the depth at its mean pace (Scratch.left) and its paces' guess
    (Paces.ahead, None when they could not tell), both before their correction."""

    spent: float
    depth: float
    guess: float | None


def _least_squares(xs: list[list[float]], ys: list[float]) -> list[float] | None:
    """The intercept and coefficients of ys ≈ k0 + k1 x1 + ... by least squares (the
    normal equations, solved by elimination); None when they have no single solution (a
    term that does not vary)."""
    rows = [[1.0, *x] for x in xs]
    n = len(rows[0])
    m = [[sum(r[p] * r[q] for r in rows) for q in range(n)]
         + [sum(r[p] * y for r, y in zip(rows, ys))] for p in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda k: abs(m[k][col]))
        if abs(m[pivot][col]) < 1e-9:
            return None
        m[col], m[pivot] = m[pivot], m[col]
        for k in range(n):
            if k != col:
                f = m[k][col] / m[col][col]
                m[k] = [u - f * v for u, v in zip(m[k], m[col])]
    return [m[k][n] / m[k][k] for k in range(n)]


@dataclass
class GaveUp:
    """The last incremental run of a stratum that cost more than recomputing would have: it
    gave up and recomputed, or it finished over its budget. The size of its change next to
    the stored rows it read (rows in / stored), and how many later changes at least that
    large are still recomputed at once, without an incremental run first. A run that gives
    up has spent its time for nothing, and a stream's epochs bring changes of like size,
    which would likely give up too, each paying for its try and a recompute where a
    recompute at once costs about a run from scratch. It is a bet: of two changes of like
    size one may run incrementally at a fraction of a run from scratch and the next give up,
    so that the ones after it recompute. The memory runs out, so that a stratum whose
    incremental runs got cheaper tries again."""

    ratio: float
    left: int
    # A change of 90% of that size counts as as large: the stored rows it is measured against
    # are counted batch by batch, so they grow with every epoch (deletions too), and the next
    # change of the same size is a little smaller next to them.
    like: ClassVar[float] = 0.9
    # A run that gave up after spending less than this share of its budget is not
    # remembered: it gave up at its first iterations, on its paces' guess (Paces.ahead), and
    # trying the next change costs as little; a wrong guess, remembered, would make every
    # change at least as large recompute at once, the small ones among them too, which run
    # incrementally at a fraction of a run from scratch.
    cheap: ClassVar[float] = 0.25
    # A change of fewer rows than this is not remembered: every change is as large as one
    # row, and what one row sets off varies the most: over points-to, one-row changes run to
    # their ends range from next to nothing to far more than a recompute, and one that gave
    # up, remembered, would make the next ones recompute at once where most would have
    # finished in a small fraction of that.
    least: ClassVar[int] = 2

    @classmethod
    def remembered(cls, spent: float, budget: float) -> bool:
        """Whether a run that gave up after `spent` seconds of its `budget` is remembered."""
        return spent >= cls.cheap * budget

    def recompute_at_once(self, rows_in: int, stored: int) -> bool:
        """Whether a change of `rows_in` rows over `stored` is recomputed without trying;
        uses up one of the recomputes left if so."""
        if self.left <= 0 or rows_in < self.like * self.ratio * stored:
            return False
        self.left -= 1
        return True


@dataclass
class Decision:
    """One decision of the fallback: what it chose and why (the numbers it compared, or the
    draw that chose), as `last_commit` and `feed --stats` show it."""

    chose: bool
    why: str


@dataclass
class Run:
    """What an incremental run of a recursive stratum knows when the fallback asks about it:
    the seconds it spent and its budget (None: no evaluation from scratch to weigh it
    against), the rows its deltas made so far and their budget (the rows the last evaluation
    from scratch made, times config.incremental_budget, scaled to its inputs' size now)."""

    spent: float
    budget: float | None
    made: int
    rows_budget: float | None


class Decider:
    """Takes the fallback's decisions for the strata of one engine (`Config.decisions`):

    - at an epoch's start, whether a stratum's change is large enough next to its stored
      rows to evaluate it from scratch at once (`recompute`: the ratio rule;
      a remembered give-up, GaveUp, is checked after it in every mode);
    - before each iteration of an incremental run, whether to give it up and recompute
      (`give_up`);
    - whether such a give-up is remembered for the changes as large that follow
      (`remember`), and whether a run that finished cost more than a recompute would have
      (`too_dear`, remembered the same way).

    "clock" decides by measured seconds (what the run spent against its budget, and what
    its paces foresee: Scratch.overrun); "rows" by row counts only (what the run's deltas
    made against what the last evaluation from scratch made), so that two runs of the same
    epochs take the same paths and Spark jobs on any machine; "random:SEED" draws each
    decision from a source seeded by SEED, the stratum, the engine's epoch and the point of
    decision, so that tests reach every path, reproducibly. Whichever way a decision goes,
    the answer is the same: only its cost differs."""

    # a draw's chance of each choice in "random": to recompute at an epoch's start, to give
    # up before an iteration, to remember a give-up, to count a finished run as too dear
    chances: ClassVar[dict[str, float]] = {"recompute": 0.3, "give up": 0.2,
                                           "remember": 0.5, "too dear": 0.3}

    def __init__(self, mode: str = "clock"):
        kind, _, seed = mode.partition(":")
        if kind not in ("clock", "rows", "random") or (kind == "random") != bool(seed):
            raise ValueError(f"the fallback's decisions are clock, rows or random:SEED, not "
                             f"{mode!r}")
        self.mode, self.kind, self.seed = mode, kind, seed

    def _draw(self, point: str, stratum: int, epoch: int, i: int = 0) -> Decision:
        import random

        # a str seed is hashed by SHA-512: the same draw in every process
        chose = random.Random(f"{self.seed}/{stratum}/{epoch}/{point}/{i}").random() \
            < self.chances[point]
        return Decision(chose, f"{self.mode} drew {'yes' if chose else 'no'}")

    def recompute(self, stratum: int, epoch: int, rows_in: int, stored: int,
                  ratio: float) -> Decision:
        if self.kind == "random":
            return self._draw("recompute", stratum, epoch)
        chose = rows_in > ratio * stored
        sign = ">" if chose else "<="
        return Decision(chose, f"change of {rows_in} rows {sign} {ratio:g} x {stored} stored")

    def give_up(self, stratum: int, epoch: int, i: int, run: Run,
                overrun: Callable[[], bool] | None) -> Decision:
        """`overrun`: the clock's verdict (Scratch.overrun with the run's paces), asked only
        in "clock"; None when there is no evaluation from scratch to weigh the run against."""
        if self.kind == "random":
            return self._draw("give up", stratum, epoch, i)
        if self.kind == "rows":
            if run.rows_budget is None:
                return Decision(False, "no evaluation from scratch to weigh it against")
            chose = run.made > run.rows_budget
            sign = ">" if chose else "<="
            return Decision(chose, f"{run.made} delta rows made {sign} budget "
                                   f"{run.rows_budget:.0f}")
        if overrun is None or run.budget is None:
            return Decision(False, "no evaluation from scratch to weigh it against")
        chose = overrun()
        return Decision(chose, f"{run.spent:.2f}s spent, budget "
                               f"{run.budget:.2f}s, iterations left foreseen "
                               f"{'over' if chose else 'within'} it")

    def remember(self, stratum: int, epoch: int, i: int, run: Run) -> Decision:
        if self.kind == "random":
            return self._draw("remember", stratum, epoch, i)
        if self.kind == "rows":
            chose = run.rows_budget is not None and run.made >= GaveUp.cheap * run.rows_budget
            return Decision(chose, f"{run.made} delta rows made of {run.rows_budget or 0:.0f}")
        chose = run.budget is not None and GaveUp.remembered(run.spent, run.budget)
        return Decision(chose, f"{run.spent:.2f}s spent of {run.budget or 0:.2f}s")

    def too_dear(self, stratum: int, epoch: int, run: Run) -> Decision:
        if self.kind == "random":
            return self._draw("too dear", stratum, epoch)
        if self.kind == "rows":
            chose = run.rows_budget is not None and run.made > run.rows_budget
            return Decision(chose, f"{run.made} delta rows made, budget "
                                   f"{run.rows_budget or 0:.0f}")
        chose = run.budget is not None and run.spent > run.budget
        return Decision(chose, f"took {run.spent:.2f}s, budget {run.budget or 0:.2f}s")
