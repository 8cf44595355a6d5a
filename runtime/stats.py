"""What an epoch did: per stratum how it ran (incrementally, recomputed, or not at all since
nothing it reads changed), its fixpoint iterations (each one's rows, seconds and what the
fallback foresaw before it), the rows that came in and went out, the Spark jobs it took and
its seconds; and the same summed for the epoch, with every Spark action it ran.

An epoch's seconds split three ways: the Spark actions' (each materialize_many: Spark plans
the query, where the backend lets it be seen apart, then runs its jobs) and the rest, the
engine building plans and keeping its books in Python. The actions are recorded by
`action(...)`, wherever in the runtime they start, into the epoch that `Recorder.scope` is
recording on this thread (a context variable: the actions start deep inside operators and
traces, and a recorder passed down every call would be in every signature; threads that work
for the epoch run in a copy of its context, runtime/spark.side_by_side).

Spark jobs are counted with job tags: every job the engine starts inside `Recorder.scope(...)`
carries a tag of its own, and the status tracker (on Connect, the server's job listing) lists
the tag's jobs afterwards. A tag is added beside the thread's own (a caller's job group,
description and tags stay, so a caller who cancels their job group cancels the engine's jobs
too).

Inside a scope, on the classic backend, the label is also the Spark call site of the RDDs
and jobs started (what the Spark UI shows for them; the thread's own call site is restored
afterwards). Without one, Spark takes every new RDD's call site from the JVM's stack, a walk of
the stack and a regular expression per frame, a cost every small epoch would pay.

The design: docs/design.md, Measuring an epoch.
"""
from __future__ import annotations

import itertools
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterator

_TAGS = itertools.count()


@dataclass
class ActionStats:
    """One Spark action (materialize_many): whose it was (`scope`: "inputs", "stratum 3",
    "strata 1, 2", "end of epoch"), how many Z-sets it materialised and their rows, its
    seconds and, of those, Spark's planning of its queries (analysis, optimisation, physical
    planning; None where the backend does not show it apart: on Connect the server plans as
    it runs)."""

    scope: str
    frames: int
    rows: int = 0
    seconds: float = 0.0
    planning: float | None = None


@dataclass
class IterationStats:
    """One fixpoint iteration: its number, the rows of its deltas, its seconds and, for an
    incremental run the fallback weighs, what it decided before the iteration (`check`) and
    the seconds the stratum's paces foresaw for the iterations left (`foreseen`; None when
    they could not tell)."""

    iteration: int
    rows: int
    seconds: float
    check: str = ""
    foreseen: float | None = None


@dataclass
class StratumStats:
    stratum: int
    relations: tuple[str, ...]
    # "fresh" (a first evaluation: nothing stored yet) | "incremental" | "recomputed" (the
    # change was too large: evaluated from scratch) | "unchanged" (nothing it reads changed)
    mode: str = "unchanged"
    # why it ran so: the fallback's decisions, with the numbers they compared
    # (runtime/fallback.Decider), e.g. "change of 3 rows <= 0.25 x 40 stored"
    why: str = ""
    iterations: int = 0
    rows_in: int = 0  # rows of the changes the stratum read
    rows_out: int = 0  # rows of the changes it produced (its relations' deltas, summed)
    # the Spark jobs and seconds of the actions it ran in: strata run together (non-recursive
    # ones of one dependency level, ddlog/plan/physical.together) share theirs (the epoch counts
    # them once)
    jobs: int = 0
    seconds: float = 0.0
    # of those, the seconds of its Spark actions, and of Spark's planning in them (None: not
    # seen apart), shared as the jobs are
    spark_seconds: float = 0.0
    planning_seconds: float | None = None
    steps: list[IterationStats] = field(default_factory=list)


class _Actions:
    """The totals of a record's Spark actions (`actions`: an epoch's, or a scope's)."""

    actions: list[ActionStats]

    @property
    def spark_seconds(self) -> float:
        """The seconds of the Spark actions."""
        return sum(a.seconds for a in self.actions)

    @property
    def planning_seconds(self) -> float | None:
        """Of those, Spark's planning; None where the backend does not show it apart."""
        return _planning(self.actions)


@dataclass
class EpochStats(_Actions):
    epoch: int = 0
    seconds: float = 0.0
    jobs: int = 0
    rows_in: int = 0  # rows of the inputs' effective changes
    # rows of the output relations' deltas as the epoch made them: a row that came and went
    # within the epoch counts twice (the command line prints the net change it collects,
    # `with_net_out`)
    rows_out: int = 0
    strata: list[StratumStats] = field(default_factory=list)
    jobs_counted: bool = True  # False where the backend cannot count jobs (Spark Connect)
    actions: list[ActionStats] = field(default_factory=list)

    def with_net_out(self, rows: int) -> "EpochStats":
        """These stats with `rows`, the rows of the output relations' net change (collected
        by the caller), as rows_out."""
        from dataclasses import replace

        return replace(self, rows_out=rows)

    @property
    def iterations(self) -> int:
        return sum(s.iterations for s in self.strata)

    @property
    def building_seconds(self) -> float:
        """The rest of the epoch: building plans and the engine's own bookkeeping."""
        return max(0.0, self.seconds - self.spark_seconds)

    def to_dict(self) -> dict:
        out = asdict(self)
        for name in ("iterations", "spark_seconds", "planning_seconds", "building_seconds"):
            out[name] = getattr(self, name)
        return out

    def lines(self) -> list[str]:
        """A human summary, one line for the epoch and one per stratum that ran."""
        jobs = f"{self.jobs} Spark jobs" if self.jobs_counted else "Spark jobs not counted"
        out = [f"epoch {self.epoch}: {self.seconds:.2f}s, {jobs}, "
               f"{self.iterations} iterations, {self.rows_in} input rows changed, "
               f"{self.rows_out} output rows changed",
               f"  {len(self.actions)} Spark actions "
               f"{_split(self.spark_seconds, self.planning_seconds)}, "
               f"{self.building_seconds:.2f}s building plans"]
        for s in self.strata:
            if s.mode == "unchanged":
                continue
            why = f" ({s.why})" if s.why else ""
            out.append(f"  stratum {s.stratum} ({', '.join(s.relations)}): {s.mode}{why}, "
                       f"{s.iterations} iterations, {s.rows_in} rows in, {s.rows_out} out, "
                       + (f"{s.jobs} jobs, " if self.jobs_counted else "")
                       + f"{s.seconds:.2f}s (Spark actions "
                       + f"{_split(s.spark_seconds, s.planning_seconds)})")
        return out


def _planning(actions: list[ActionStats]) -> float | None:
    seen = [a.planning for a in actions if a.planning is not None]
    return sum(seen) if seen else None


def _split(spark: float, planning: float | None) -> str:
    if planning is None:
        return f"{spark:.2f}s"
    return f"{spark:.2f}s: {planning:.2f}s planning, {spark - planning:.2f}s running"


_RECORDING: ContextVar["Recorder | None"] = ContextVar("ddlog_recording", default=None)


@contextmanager
def action(frames: int) -> Iterator[ActionStats]:
    """Time one Spark action materialising `frames` Z-sets (the caller fills in its rows and
    planning), recorded into the epoch being recorded on this thread, if any."""
    recorder = _RECORDING.get()
    done = ActionStats(recorder.label if recorder is not None else "", frames)
    started = time.perf_counter()
    try:
        yield done
    finally:
        done.seconds = time.perf_counter() - started
        if recorder is not None:
            recorder.actions.append(done)


def planned(done: ActionStats, plan: Callable[[], bool]) -> None:
    """Run `plan` (a backend's `plan`: Spark plans a query before it runs, and says whether
    it could) and count its seconds as `done`'s planning."""
    started = time.perf_counter()
    if plan():
        done.planning = (done.planning or 0.0) + time.perf_counter() - started


class Recorder:
    """Records an epoch's work by scopes (`scope(label)`): the Spark jobs started from this
    thread inside each (`counts`: whether the session's backend can count them; a Connect
    client counts them only where it can read the server's job listing,
    backend.connect.jobs_tagged), its seconds, and the Spark actions started inside
    (`actions`, each with its scope's label)."""

    def __init__(self, spark):
        from ddlog.runtime import backend

        self.spark = spark
        self.backend = backend.of(spark)
        self.counts = self.backend.counts_jobs(spark)
        self.actions: list[ActionStats] = []
        self.label = ""
        self._tagged: list[tuple[str, Counted]] = []

    @contextmanager
    def scope(self, label: str) -> Iterator["Counted"]:
        tag = f"ddlog-{next(_TAGS)}-{time.time_ns()}"
        counted = Counted()
        first = len(self.actions)
        self.label = label
        recording = _RECORDING.set(self)
        started = time.perf_counter()
        try:
            with self.backend.tagging(self.spark, tag, label):
                yield counted
        finally:
            _RECORDING.reset(recording)
            counted.seconds = time.perf_counter() - started
            counted.actions = self.actions[first:]
            self._tagged.append((tag, counted))
            if self.counts and not self.backend.COUNTS_LATER:
                counted.jobs = self.backend.jobs_tagged(self.spark, [tag])[tag]

    def settle(self) -> None:
        """Count the jobs of every scope, where the backend counts them at the end (one look
        at the server's job listing for the whole epoch)."""
        if self.counts and self.backend.COUNTS_LATER:
            found = self.backend.jobs_tagged(self.spark, [tag for tag, _ in self._tagged])
            for tag, counted in self._tagged:
                counted.jobs = found[tag]


@dataclass
class Counted(_Actions):
    """A scope's jobs (filled in when counted: at its end, or at Recorder.settle), seconds
    and Spark actions."""

    jobs: int = 0
    seconds: float = 0.0
    actions: list[ActionStats] = field(default_factory=list)
