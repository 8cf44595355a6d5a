"""Runs one stratum's circuit for one epoch on Spark (docs/design.md, An epoch).

Non-recursive strata run iteration 0 only. Recursive strata iterate i = 0, 1, ...: at each i
every stateful operator computes its double delta, which is materialised and counted and
recorded in that operator's output trace; linear operators are views over those traces and
cost nothing by themselves. The operators are grouped in waves by their depth within the
iteration (a join feeding a distinct: two waves); a wave is one Spark action
(zset.materialize_many), so an iteration costs as many actions as its circuit is deep, not as
many as it has operators. In a first evaluation (no past: the batch path) the joins that
only feed a relation's distinct are planned into the distinct's action instead, so that an
iteration is one action, as in a hand-written semi-naive loop (`_inlinable`); so they are in
an incremental epoch whose past is small (its distincts scan that past instead of looking it
up by the keys of a delta the driver would have to hold first), and a small non-recursive
stratum is one action in every epoch (`_inline`). Other incremental epochs keep one action
per wave.

Termination: while some relation's Distinct emits a non-empty
delta, go on to i+1. When none does, the stratum is quiescent: nothing more can happen except
where this epoch's changes meet `past` entries at later iterations. Each operator says at which
iteration that happens next (`horizon`); the loop jumps straight there (the iterations in
between are provably empty), and stops when there is none. An iteration cap turns a program
that does not converge into an error naming the stratum.
"""
from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, replace
from typing import Callable, Generator, Hashable

from pyspark.sql import DataFrame

from ddlog.errors import EvaluationError
from ddlog.plan.circuit import (Circuit, Delay, Distinct, FlatMap, GroupBy, Import, Negate,
                                Output, Select, Union_)
from ddlog.plan.physical import StratumPlan, column_sources, stratum_plan
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.fallback import Check, Decider, Decision, GaveUp, Paces, Run, Scratch
from ddlog.runtime.operators import Context, Operator, Probe, build_operator
from ddlog.runtime.operators.base import KeysOf
from ddlog.runtime.operators.linear import linear_fn, renames
from ddlog.runtime.physical import Frame, driver_sized, materialize_many
from ddlog.runtime.schema import ITER
from ddlog.runtime.stats import IterationStats, StratumStats
from ddlog.runtime.trace import INF, Trace
from ddlog.runtime.views import Flat, Mapped, Shifted, Summed, TraceView
from ddlog.runtime.zset import consolidate, negate, union_all

Progress = Callable[[str], None]


@dataclass
class Request:
    """What a stratum's epoch asks for one Spark action: frames to materialise together,
    their tag columns and whether they are expected large (materialize_many's arguments)."""

    plans: dict[Hashable, DataFrame | None]
    tags: dict[Hashable, str]
    large: bool
    reads: int | None = None  # about how many rows the plans read at most (None: not known)


# a stratum's epoch (StratumRuntime.epoch): yields Requests, is sent their frames, returns
# what it did
Epoch = Generator[Request, dict, StratumStats]


def run_together(epochs: list[Epoch], config: Config = DEFAULT) -> list[StratumStats]:
    """Run several strata's epochs, each action of theirs packed with the others' of the
    same round into one Spark action (materialize_many: one job over all their plans). The
    strata must not read each other's relations. Non-recursive strata take one round per
    wave of their operators: wide programs, with many strata side by side, run a few
    actions an epoch instead of one per stratum, and a small action costs mostly Spark's
    fixed price of a job, not its rows."""
    done: list[StratumStats | None] = [None] * len(epochs)
    asked: dict[int, Request] = {}
    for k, e in enumerate(epochs):
        try:
            asked[k] = next(e)
        except StopIteration as stop:
            done[k] = stop.value
    while asked:
        plans = {(k, key): df for k, r in asked.items() for key, df in r.plans.items()}
        tags = {(k, key): t for k, r in asked.items() for key, t in r.tags.items()}
        reads = [r.reads for r in asked.values()]
        frames = materialize_many(plans, tags, config=config,
                                  expect_large=any(r.large for r in asked.values()),
                                  reads=None if None in reads else sum(reads))
        answered, asked = asked, {}
        for k, r in answered.items():
            try:
                asked[k] = epochs[k].send({key: frames[(k, key)] for key in r.plans})
            except StopIteration as stop:
                done[k] = stop.value
    missing = [k for k, st in enumerate(done) if st is None]
    if missing:
        raise RuntimeError(f"{len(missing)} of the strata run together did not finish")
    return done  # type: ignore[return-value]


class StratumRuntime:
    def __init__(self, circuit: Circuit, relation_traces: dict[str, Trace],
                 config: Config = DEFAULT, plan: StratumPlan | None = None):
        """`plan`: the circuit's physical plan (ddlog/plan/physical.py), made here if not
        given: its waves, the operators it may inline, the arrangements its reads ask for."""
        self.circuit = circuit
        self.plan = plan = plan or stratum_plan(circuit)
        self.relation_traces = relation_traces
        self.config = config
        self.max_iterations = config.max_iterations
        self.views: dict[int, TraceView] = {}
        self.ops: dict[int, Operator] = {}
        self.out_traces: dict[int, Trace] = {}
        self.large = False  # whether the last iteration's deltas were too large to collect
        # the last evaluation from scratch (a first epoch or a recompute): what an
        # incremental run is measured against
        self.scratch: Scratch | None = None
        self.gave_up: GaveUp | None = None  # its last incremental run that cost too much
        self.paces = Paces()  # what its incremental iterations took, by their deltas' rows
        self.decider = Decider(config.decisions)  # by the clock, by rows, or drawn
        self.decided = ""  # the last decision it took, and why (for an internal error)
        # an evaluation from scratch this epoch ran (a first one, or a recompute), which its
        # end (end_epoch) makes `scratch`, with the time its traces' folds took
        self.measured: tuple[Scratch, bool] | None = None  # (it, whether a first one)
        # epochs this process ran so far (each epoch asks every stratum, changed or not):
        # none yet means the JVM has not run the engine's code before (Scratch.cold)
        self.epochs_run = 0
        rel_of_distinct = {d: r for r, d in circuit.delays.items()}
        for node in circuit.nodes:
            if node.stateful:
                rel = rel_of_distinct.get(node.id)
                self.out_traces[node.id] = (relation_traces[rel] if rel is not None
                                            else Trace(list(node.columns), config))
        self.levels = plan.levels
        for node in circuit.nodes:
            self._build(node)
        self.waves = [(list(w.operators), list(w.relations)) for w in plan.waves]
        self.inlinable = set(plan.inlinable)
        # A group inside the recursion retracts its old groups as new ones come: the deltas
        # are not all insertions even from nothing, and no operator may take them as such.
        self.inserts_only = not (circuit.recursive
                                 and any(isinstance(n, GroupBy) for n in circuit.nodes))
        self._arrange()

    def _arrange(self) -> None:
        """Tell each trace that a join, distinct or group reads by key by which columns
        (the plan's arrangements), so that it keeps its large batches arranged by them
        (Trace.arrange_by). A relation's trace read by several strata keeps the first
        stratum's keys."""
        for a in self.plan.arrangements:
            trace = (self.relation_traces[a.holder] if isinstance(a.holder, str)
                     else self.out_traces[a.holder])
            if trace.arrange_by is None:
                trace.arrange_by = a.keys
        for rel in self.plan.arranged_cur:
            self.relation_traces[rel].arrange_cur = True

    def _inline(self, fresh: bool, imports: set[str]) -> set[int]:
        """The operators whose deltas this epoch plans into their readers' action instead of
        materialising them in a wave of their own (`_iteration`).

        In a recursive stratum, `inlinable`: evaluated from nothing (config.inline_fresh),
        and in an incremental epoch when the past its relations' distincts read is small
        (config.inline_rows). An incremental distinct looks its input's past up by the keys
        of its input's delta, which the driver holds only once that delta is materialised;
        planned into the distinct's action, the lookup becomes a scan of that past, which
        costs less than the Spark job a wave of its own takes while the past is small.
        In a non-recursive stratum (a single iteration, so every delta is read once) all but
        the relations' own operators, when what it stores and reads is small
        (config.inline_rows): its readers then scan the small traces the same way."""
        limit = self.config.inline_rows
        if self.circuit.recursive:
            if fresh:
                return self.inlinable if self.config.inline_fresh else set()
            if not self.config.inline_incremental:
                return set()
            scanned = sum(self.views[n.input].past_rows(0, INF) for n in self.circuit.nodes
                          if isinstance(n, Distinct))
            return self.inlinable if scanned <= limit else set()
        stored = self._stored(imports) + sum(t.past_rows() for t in self.out_traces.values())
        if stored > limit:
            return set()
        feeds = set(self.circuit.delays.values())
        return {nid for nid in self.ops if nid not in feeds}

    def _build(self, node) -> None:
        """The trace view of `node`: a view over other traces for a linear node, the trace its
        operator records for a stateful one."""
        v = self.views
        if isinstance(node, Import):
            v[node.id] = Flat(self.relation_traces[node.relation])
        elif isinstance(node, Delay):
            v[node.id] = Shifted(self.relation_traces[node.relation])
        elif isinstance(node, (Select, FlatMap, Negate)):
            v[node.id] = Mapped(v[node.input], linear_fn(node), column_sources(node),
                                renames(node))
        elif isinstance(node, Union_):
            v[node.id] = Summed([v[s] for s in node.sources])
        elif isinstance(node, Output):
            v[node.id] = v[node.input]
        else:
            v[node.id] = self.out_traces[node.id]
            self.ops[node.id] = build_operator(
                node, Context(v, self.circuit, self.config, self.levels))

    def run_epoch(self, progress: Progress | None = None) -> StratumStats:
        """Compute this epoch's deltas of every operator; says what it did."""
        return run_together([self.epoch(progress)], self.config)[0]

    def epoch(self, progress: Progress | None = None) -> Epoch:
        """run_epoch, asking its caller for each action it needs: it yields the plans the
        action is to materialise (a Request) and is sent back their frames, so that a caller
        can run several strata's actions as one (run_together). A recompute, and a recursive
        stratum's horizon queries, run their own actions."""
        c = self.circuit
        name = ", ".join(c.relations)
        stats = StratumStats(c.stratum, tuple(c.relations))
        imports = c.imports()
        cold = not self.epochs_run
        self.epochs_run += 1
        stats.rows_in = sum(self.relation_traces[r].cur_rows(0, INF) for r in imports)
        if not stats.rows_in:
            return stats  # nothing this stratum reads changed: nothing to do
        fresh = self._fresh(imports)
        if not fresh:
            start = self._recompute_pays(imports, stats.rows_in)
            stats.why = start.why
            self.decided = f"{'recompute' if start.chose else 'incremental'}: {start.why}"
            if start.chose:
                return self._recompute(imports, stats, progress, cold)
        stats.mode = "fresh" if fresh else "incremental"
        inline = self._inline(fresh, imports)
        scan = bool(inline) and c.recursive and not fresh
        for op in self.ops.values():
            op.begin_epoch(fresh and self.inserts_only, scan)
        feedback = set(c.delays.values()) if c.recursive else set()
        weighed = c.recursive and not fresh  # an incremental run the fallback may give up
        budget = self._budget(imports) if weighed else None
        rows_budget = self._rows_budget(imports) if weighed else None
        began = time.perf_counter()
        i, steps, pace = 0, 0, 0.0
        # the last iteration run, the rows of its deltas and of the run's before it
        last, rows, before = 0, 0, 0
        deltas: list[int] = []  # a fresh run's, by iteration (Scratch.deltas)
        moving: list[float] = []  # the paces of the run's iterations that moved rows
        checks: list[Check] = []  # what the run foresaw before its iterations
        while True:
            spent = time.perf_counter() - began
            step = IterationStats(i, 0, 0.0)
            if weighed and steps:
                run = Run(spent, budget, before + rows, rows_budget)
                foreseen = len(checks)
                decision = self.decider.give_up(c.stratum, self.epochs_run, i, run,
                                                self._overrun(budget, spent, i, last, rows,
                                                              before, pace, moving, checks))
                step.check = decision.why
                if len(checks) > foreseen:
                    step.foreseen = checks[-1].guess
                if decision.chose:
                    # iterating the change costs more than evaluating from scratch would:
                    # drop what this epoch recorded so far and recompute
                    self._abandon()
                    stats.why = f"gave up before iteration {i}: {decision.why}"
                    self.decided = stats.why
                    if self.decider.remember(c.stratum, self.epochs_run, i, run).chose:
                        self._too_dear(stats, imports)
                    return self._recompute(imports, stats, progress, cold)
            steps += 1
            if steps > self.max_iterations or i > self.max_iterations:
                raise EvaluationError(
                    f"stratum {c.stratum} ({name}) did not reach a fixpoint within "
                    f"{self.max_iterations} iterations")
            started = time.perf_counter()
            sizes, moved = yield from self._iteration(i, feedback, inline)
            pace = time.perf_counter() - started
            last, before, rows = i, before + rows, sum(sizes)
            step.rows, step.seconds = rows, pace
            stats.steps.append(step)
            if fresh:
                deltas += [0] * (i + 1 - len(deltas))
                deltas[i] = rows
            elif c.recursive:
                self.paces.add(rows, before, pace)
                if rows:
                    moving.append(pace)
            if progress is not None:
                progress(f"stratum {c.stratum} ({name}) iteration {i}: "
                         f"delta {rows} rows, {pace:.1f}s")
            if not c.recursive:
                break
            if moved:
                i += 1
                continue
            nxt = self._horizon(i)
            if nxt is None:
                break
            i = nxt
        if weighed:
            took = time.perf_counter() - began
            if checks:
                self.paces.learn(checks, took)
            done = self.decider.too_dear(c.stratum, self.epochs_run,
                                         Run(took, budget, before + rows, rows_budget))
            if done.chose:
                # finished, but a recompute would have cost less
                stats.why = f"{stats.why}; finished over its budget: {done.why}"
                self._too_dear(stats, imports)
        if c.recursive:
            for nid in inline:
                self.out_traces[nid].replace_lazy(self.ops[nid].whole())
        stats.iterations = steps
        stats.rows_out = sum(self.relation_traces[r].cur_rows(0, INF) for r in c.relations)
        if fresh:
            self.measured = (Scratch(time.perf_counter() - began, self._stored(imports), steps,
                                     cold, deltas), True)
        return stats

    def costs(self) -> dict[str, dict]:
        """What the cost-based fallback measured (`scratch`, `gave_up`, `paces`), as plain
        values for durable state to keep: a state opened again by another process measures an
        incremental run against the last evaluation from scratch, guesses its cost from the
        paces seen before, and recomputes at once after a give-up, as the process that
        measured them would. Without them a re-opened state's incremental runs would never
        give up, however much longer than a recompute they ran."""
        out = {}
        if self.scratch is not None:
            out["scratch"] = asdict(self.scratch)
        if self.gave_up is not None:
            out["gave_up"] = asdict(self.gave_up)
        if self.paces.seen or self.paces.misses:
            out["paces"] = {"seen": [list(p) for p in self.paces.seen],
                            "misses": {k: list(v) for k, v in self.paces.misses.items()}}
        return out

    def remember_costs(self, costs: dict[str, dict]) -> None:
        """Take back what `costs` returned (in another process, from durable state). The
        paces come too: a `ddlog feed` runs one epoch in its process, which would otherwise
        never see the iterations its guess needs (Paces.least) and always decide by the
        last pace alone."""
        scratch, gave_up = costs.get("scratch"), costs.get("gave_up")
        self.scratch = Scratch(**scratch) if scratch is not None else None
        self.gave_up = GaveUp(**gave_up) if gave_up is not None else None
        # checked on read (Manifest.costs): kept as the tuples Paces.add makes
        paces = costs.get("paces", {})
        self.paces = Paces([tuple(p) for p in paces.get("seen", [])],
                           {k: list(v) for k, v in paces.get("misses", {}).items()})

    def _stored(self, imports: set[str]) -> int:
        """The rows of the stratum's inputs, stored and changed this epoch."""
        return sum(self.relation_traces[r].past_rows() + self.relation_traces[r].cur_rows(0, INF)
                   for r in imports)

    def _budget(self, imports: set[str]) -> float | None:
        """How long an incremental run may take before recomputing pays: config.
        incremental_budget times the last evaluation from scratch, scaled to the inputs' size
        now (None before there was one: a state written before durable state kept it,
        `costs`). An evaluation that ran cold counts at config.cold_scratch of its time once
        this process has run an epoch (the JVM has compiled the engine's code since); in a
        process's first epoch (a `ddlog feed` on a state a `ddlog run` made) both are cold."""
        if self.scratch is None:
            return None
        seconds = self.scratch.seconds_now(self.epochs_run > 1, self.config.cold_scratch)
        return self.config.incremental_budget * seconds * self.scratch.scale(self._stored(imports))

    def _rows_budget(self, imports: set[str]) -> float | None:
        """How many delta rows an incremental run may make before recomputing pays, by row
        counts only (Config.decisions "rows"): config.incremental_budget times the rows the
        last evaluation from scratch's deltas made, scaled to the inputs' size now (None
        before there was one, or when a state written before they were kept lacks them)."""
        if self.scratch is None or not self.scratch.deltas:
            return None
        made = sum(self.scratch.deltas)
        return self.config.incremental_budget * made * self.scratch.scale(self._stored(imports))

    def _too_dear(self, stats: StratumStats, imports: set[str]) -> None:
        """Remember this epoch's change as one that cost more incrementally than a recompute
        (GaveUp): the next ones as large recompute at once; not a change of one row, which
        tells nothing of the next (GaveUp.least)."""
        if stats.rows_in < GaveUp.least:
            return
        self.gave_up = GaveUp(stats.rows_in / max(self._past(imports), 1),
                              self.config.recompute_memory)

    def _abandon(self) -> None:
        """Forget what this epoch's incremental run recorded so far (the stratum's own
        relations' and operators' changes), as if it had not started."""
        for r in self.circuit.relations:
            self.relation_traces[r].abort_epoch()
        self.abort_epoch()
        self.large = False

    def _fresh(self, imports: set[str]) -> bool:
        """Whether this epoch evaluates the stratum from nothing: no trace it reads or
        writes has a past (so every change is an insertion)."""
        own = [*self.out_traces.values(),
               *(self.relation_traces[r] for r in (*imports, *self.circuit.relations))]
        return not any(t.batches for t in own)

    def _recompute_pays(self, imports: set[str], rows_in: int) -> Decision:
        """Whether this epoch's change is large enough, next to what the stratum reads, that
        evaluating it from scratch costs less than iterating the change through its traces
        (whose every iteration joins the change with the past as well as with itself), or
        than the last incremental run that gave up (GaveUp)."""
        stored = self._past(imports)
        ratio = self.decider.recompute(self.circuit.stratum, self.epochs_run, rows_in, stored,
                                       self.config.recompute_ratio)
        if ratio.chose:
            return ratio
        if self.gave_up is not None and self.gave_up.recompute_at_once(rows_in, stored):
            return Decision(True, f"as large as a change that cost more than a recompute "
                                  f"({self.gave_up.left} more recompute at once)")
        return ratio

    def _overrun(self, budget: float | None, spent: float, i: int, last: int, rows: int,
                 before: int, pace: float, moving: list[float], checks: list[Check]
                 ) -> Callable[[], bool] | None:
        """The clock's verdict on an incremental run about to run iteration i (what its
        paces foresee against its budget: Scratch.overrun), to be asked; what it foresaw is
        kept in `checks` for Paces.learn. None without an evaluation from scratch to weigh
        the run against."""
        scratch = self.scratch
        if budget is None or scratch is None:
            return None
        # the iterations left to the depth go at the mean pace of the run's moving
        # iterations, not the last one's: one slow iteration among quick ones is not the
        # pace of the rest
        mean = sum(moving) / len(moving) if moving else pace
        guess = self.paces.ahead(scratch, last, rows, before)
        checks.append(Check(spent, scratch.left(i, mean), guess))
        # a guess counts no less than one more iteration at the last one's pace
        return lambda: scratch.overrun(
            budget, spent, i, mean * self.paces.correction("depth") if guess is None else pace,
            None if guess is None else guess * self.paces.correction("guess"),
            self.config.guess_margin)

    def _past(self, imports: set[str]) -> int:
        """The rows the stratum's inputs stored before this epoch."""
        return sum(self.relation_traces[r].past_rows() for r in imports)

    def _recompute(self, imports: set[str], stats: StratumStats,
                   progress: Progress | None, cold: bool) -> StratumStats:
        """The cost-based fallback: evaluate the stratum from nothing over its imports' whole
        values (a first epoch, semi-naive, on scratch traces), then rebuild its traces from
        that run: each relation's change this epoch is new - past (what downstream strata
        and readers of `cur` see), and at the epoch's end the new content of every trace, the
        operators' too, replaces its past."""
        began = time.perf_counter()
        c = self.circuit
        values = {r: self.relation_traces[r].summed() for r in imports}
        read = [self.relation_traces[r] for r in imports]
        frames = materialize_many(values, config=self.config, expect_large=self._small(read),
                                  reads=sum(t.held_rows() for t in read))
        scratch: dict[str, Trace] = {}
        for r in [*imports, *c.relations]:
            scratch[r] = Trace(list(self.relation_traces[r].columns), self.config)
        for r in imports:
            scratch[r].record(0, frames[r])
        run = StratumRuntime(c, scratch, self.config, self.plan)
        done = run.run_epoch(progress)
        pairs = [(self.relation_traces[r], scratch[r]) for r in c.relations]
        read = [t for pair in pairs for t in pair]
        changes = materialize_many(
            {k: _rebuilt_change(old, new) for k, (old, new) in enumerate(pairs)},
            config=self.config, expect_large=self._small(read),
            reads=sum(t.held_rows() for t in read))
        for k, (old, new) in enumerate(pairs):
            old.rebuild(new.cur_batches, changes[k])
        # Only a relation's change has readers (later strata, the epoch's changes); an
        # operator's trace is read next by this stratum's next epoch, from its new content.
        for nid, old in self.traces_by_node().items():
            old.rebuild(run.out_traces[nid].cur_batches, None)
        for r in imports:
            scratch[r].abort_epoch()  # frees the scratch copies' caches
        stats.mode = "recomputed"
        stats.iterations = done.iterations
        stats.steps += done.steps
        # what the next recompute will cost: this one's whole time, not its run's alone (and
        # the epoch's end adds its folds'). A run over inputs that are all gone evaluated
        # nothing: no rows, no iterations.
        first = run.measured[0] if run.measured is not None else Scratch(0.0, 0, 0)
        self.measured = (Scratch(time.perf_counter() - began, first.rows, first.iterations,
                                 cold, first.deltas), False)
        stats.rows_out = sum(self.relation_traces[r].cur_rows(0, INF) for r in c.relations)
        return stats

    def _small(self, traces: list[Trace]) -> bool | None:
        """materialize_many's expect_large for results no larger than these traces together:
        False (collected on the driver by one action) when they hold at most local_rows rows,
        else None (checkpointed, and counted, first)."""
        known = [t.known_rows() for t in traces]
        if any(n is None for n in known) or sum(known) > self.config.local_rows:
            return None
        return False

    def _reads(self, est: int) -> int:
        """About how many rows an action of this stratum's epoch reads at most: those of
        every trace it reads or writes (its imports', its relations' and its operators', this
        epoch's batches too; an inlined operator's by its estimate) and `est`, its new
        deltas' estimate."""
        imports = self.circuit.imports()
        traces = {id(t): t for t in [*(self.relation_traces[r] for r in imports),
                                     *(self.relation_traces[r] for r in self.circuit.relations),
                                     *self.out_traces.values()]}
        return est + sum(t.held_rows() for t in traces.values())

    def _iteration(self, i: int, feedback: set[int], inline: set[int]
                   ) -> Generator[Request, dict, tuple[list[int], bool]]:
        """Every operator's double delta at iteration i, one Spark action per wave. The
        operators in `inline` are recorded as plans, read by later waves of the same
        action (see _inline); the epoch's end materialises them with the other folds, as
        one plan over the epoch (see run_epoch). Their
        probes go with the next action that runs."""
        sizes: list[int] = []
        moved, total = False, 0
        carried: list[int] = []  # inlined operators whose probes wait for an action
        for ops, rels in self.waves:
            for nid in ops:
                if nid in inline and (st := self.ops[nid].step(i)) is not None:
                    self.out_traces[nid].record(i, Frame(st.out, st.est), lazy=True,
                                                estimated=True)
            carried += [nid for nid in ops if nid in inline]
            steps = {nid: st for nid in ops
                     if nid not in inline and (st := self.ops[nid].step(i)) is not None}
            # outputs their operators hold already (rows fetched ahead): recorded without an
            # action; their probes, like the inlined operators', wait for the next one
            held = [nid for nid, st in steps.items() if st.frame is not None]
            for nid in held:
                frame = steps.pop(nid).frame
                self.out_traces[nid].record(i, frame)
                sizes.append(frame.rows)
                total += frame.rows
                moved = moved or nid in feedback
            carried += held
            # A relation fed by a linear node (a group relation: the head select over its
            # GroupBy) has no operator recording its trace: its delta is materialised here.
            fed = {rel: df.drop(ITER) for rel in rels
                   if (df := self.views[self.circuit.delays[rel]].cur(i, i)) is not None}
            if not steps and not fed:
                continue  # nothing changes in this wave: no action (and no probes)
            asked = [*carried, *(nid for nid in ops if nid not in inline and nid not in held)]
            carried = []
            probes = {("probe", nid, k): p for nid in asked
                      for k, p in enumerate(self.ops[nid].probes(i))}
            probe_plans, probe_tags, probe_rows = _asked(probes)
            plans = {("op", nid): st.materialised for nid, st in steps.items()}
            plans.update({("rel", rel): df for rel, df in fed.items()})
            plans.update(probe_plans)
            tags = {("op", nid): st.tag for nid, st in steps.items() if st.tag}
            tags.update(probe_tags)
            est = sum(st.est for st in steps.values()) + probe_rows
            large = self.large or est > self.config.local_rows
            frames = yield Request(plans, tags, large, self._reads(est))
            for key, p in probes.items():
                p.answer(frames[key])
            for nid, st in steps.items():
                raw = frames[("op", nid)]
                frame = st.settle(raw) if st.settle is not None else raw
                self.out_traces[nid].record(i, frame)
                if frame is not None:
                    # the delta, not what its frame held besides (a distinct's history, held
                    # whole again every few iterations): the next iteration's size follows it
                    sizes.append(frame.rows)
                    total += frame.rows
                    moved = moved or nid in feedback
            for rel in fed:
                frame = frames[("rel", rel)]
                self.relation_traces[rel].record(i, frame)
                if frame is not None:
                    sizes.append(frame.rows)
                    total += frame.rows
                    moved = moved or self.circuit.recursive  # read back at i + 1
        # probes still carried found no action to go with: the horizon asks instead
        self.large = total > self.config.local_rows
        return sizes, moved

    def _horizon(self, i: int) -> int | None:
        """The next iteration after a quiescent i where this epoch's changes meet `past`
        entries (None: there is none): the operators' queries and probes, run as one Spark
        action. A probe here is counted per iteration (its tag): those are meetings."""
        known: list[int] = []
        queries: list[DataFrame] = []
        probes: list[Probe] = []
        for op in self.ops.values():
            for h in op.horizon(i):
                if isinstance(h, Probe):
                    probes.append(h)
                else:
                    (queries if isinstance(h, DataFrame) else known).append(h)
        if probes:
            plans, tags, est = _asked({("p", k): p for k, p in enumerate(probes)})
            plans.update({("q", k): q for k, q in enumerate(queries)})
            large = self.large or est > self.config.local_rows
            frames = materialize_many(plans, tags, expect_large=large, config=self.config,
                                      reads=self._reads(est))
            for k, p in enumerate(probes):
                fr = frames[("p", k)]
                p.answer(fr)
                known += [j for j, n in (fr.tags or {}).items() if n] if fr is not None else []
            for k in range(len(queries)):
                if (fr := frames[("q", k)]) is not None:
                    rows = fr.values if fr.values is not None else \
                        [r.asDict() for r in fr.df.collect()]
                    known += [h for r in rows if (h := next(iter(r.values()))) is not None]
        elif queries:
            with driver_sized(queries[0].sparkSession, self.config):
                # each query's one column, named alike so that they make one union
                one = union_all([q.toDF("h") for q in queries])
                known += [r[0] for r in one.collect() if r[0] is not None]
        return min(known) if known else None

    def prefetch(self, keys_of: KeysOf) -> list[Probe]:
        """Lookups for the inputs' action (Operator.prefetch), asked of a recursive stratum's
        operators: what its inputs' changes meet at later iterations, known then without a
        job of the horizon's."""
        if not self.circuit.recursive:
            return []  # it runs iteration 0 only: no horizon
        return [p for op in self.ops.values() for p in op.prefetch(keys_of)]

    def traces_by_node(self) -> dict[int, Trace]:
        """The operator-owned traces (relation traces belong to the engine), by node."""
        rels = set(id(t) for t in self.relation_traces.values())
        return {nid: t for nid, t in self.out_traces.items() if id(t) not in rels}

    def traces(self) -> dict[str, Trace]:
        """The operator-owned traces by their stored names."""
        return {f"s{self.circuit.stratum}_n{nid}": t
                for nid, t in self.traces_by_node().items()}

    def end_epoch(self, folds: float = 0.0) -> None:
        """The operators' per-epoch state is dropped (the engine folds the traces). An
        evaluation from scratch this epoch becomes what later runs are measured against, with
        `folds`, the seconds the epoch's end took to fold its traces: a give-up pays them too.
        They can be a large part of a recompute; counted without them, the budgets would be
        too small and the paces' guesses would give up changes cheaper to run to their
        ends."""
        for op in self.ops.values():
            op.end_epoch()
        if self.measured is not None:
            measured, first = self.measured
            measured = replace(measured, seconds=measured.seconds + folds)
            self.scratch = measured if first or self.scratch is None else \
                self.scratch.then(measured)
            self.measured = None

    def abort_epoch(self) -> None:
        self.measured = None
        for t in self.traces().values():
            t.abort_epoch()
        for op in self.ops.values():
            op.abort_epoch()


def _asked(probes: dict[Hashable, Probe]) -> tuple[dict, dict, int]:
    """What probes add to an action: their plans, their tags and their estimated rows."""
    return ({k: p.df for k, p in probes.items()},
            {k: p.tag for k, p in probes.items() if p.tag},
            sum(p.est for p in probes.values()))


def _rebuilt_change(old: Trace, new: Trace) -> DataFrame | None:
    """Per iteration, what a recomputed trace's new content adds to the old: new - past."""
    # columns + _i + _w: the aggregate's keys, then the weight
    return consolidate([new.cur(0, INF), negate(old.past(0, INF))], old.columns + [ITER])


def stderr_progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
