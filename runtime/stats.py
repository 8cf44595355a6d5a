"""What an epoch did: per stratum how it ran (incrementally, recomputed, or not at all since
nothing it reads changed), its fixpoint iterations, the rows that came in and went out, the
Spark jobs it took and its seconds; and the same summed for the epoch.

Spark jobs are counted with job tags: every job the engine starts inside `counting(...)` carries
a tag of its own, and the status tracker lists the tag's jobs afterwards. A tag is added beside
the thread's own (a caller's job group, description and tags stay, so a caller who cancels
their job group cancels the engine's jobs too).

Inside `counting`, on the classic backend, the label is also the Spark call site of the RDDs
and jobs started (what the Spark UI shows for them; the thread's own call site is restored
afterwards). Without one, Spark takes every new RDD's call site from the JVM's stack, a walk of
the stack and a regular expression per frame: 5% of the JVM time that building and running a
small epoch's plans took.
"""
from __future__ import annotations

import itertools
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Iterator

_TAGS = itertools.count()


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
    # ones of one dependency level, runtime/engine._together) share theirs (the epoch counts
    # them once)
    jobs: int = 0
    seconds: float = 0.0


@dataclass
class EpochStats:
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

    def with_net_out(self, rows: int) -> "EpochStats":
        """These stats with `rows`, the rows of the output relations' net change (collected
        by the caller), as rows_out."""
        from dataclasses import replace

        return replace(self, rows_out=rows)

    @property
    def iterations(self) -> int:
        return sum(s.iterations for s in self.strata)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["iterations"] = self.iterations
        return out

    def lines(self) -> list[str]:
        """A human summary, one line for the epoch and one per stratum that ran."""
        jobs = f"{self.jobs} Spark jobs" if self.jobs_counted else "Spark jobs not counted"
        out = [f"epoch {self.epoch}: {self.seconds:.2f}s, {jobs}, "
               f"{self.iterations} iterations, {self.rows_in} input rows changed, "
               f"{self.rows_out} output rows changed"]
        for s in self.strata:
            if s.mode == "unchanged":
                continue
            why = f" ({s.why})" if s.why else ""
            out.append(f"  stratum {s.stratum} ({', '.join(s.relations)}): {s.mode}{why}, "
                       f"{s.iterations} iterations, {s.rows_in} rows in, {s.rows_out} out, "
                       + (f"{s.jobs} jobs, " if self.jobs_counted else "")
                       + f"{s.seconds:.2f}s")
        return out


class JobCounter:
    """Counts the Spark jobs started from this thread while `counting` is active (`counts`:
    whether the session's backend can; a Connect client cannot, and its counts stay 0)."""

    def __init__(self, spark):
        from ddlog.runtime import backend

        self.spark = spark
        self.backend = backend.of(spark)
        self.counts = self.backend.NAME == "classic"

    @contextmanager
    def counting(self, label: str) -> Iterator["Counted"]:
        tag = f"ddlog-{next(_TAGS)}-{time.time_ns()}"
        counted = Counted()
        started = time.perf_counter()
        try:
            with self.backend.tagging(self.spark, tag, label):
                yield counted
        finally:
            counted.seconds = time.perf_counter() - started
            counted.jobs = self.backend.jobs_tagged(self.spark, tag) or 0


@dataclass
class Counted:
    jobs: int = 0
    seconds: float = 0.0
