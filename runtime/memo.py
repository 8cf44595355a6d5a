"""The plan cache of traces and their views: a fixpoint asks a trace for the same slice many
times within an iteration, and building a plan costs py4j calls and a re-analysis of it on
the JVM each time (runtime/trace.py, runtime/views.py)."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import field
from typing import Callable

from pyspark.sql import DataFrame


class Memo:
    """Plans a view has built, by the DataFrames they were built from: a fixpoint asks a
    trace for the same slice many times within an iteration (every operator reading it,
    every term of a join), and building a plan costs py4j calls and a re-analysis of it on
    the JVM each time. Reads return the same DataFrame object while the DataFrames under it
    are the same objects; a trace whose batches change yields new objects, so nothing is
    ever invalidated by hand. The sources are held with the plan, so that their ids cannot
    be reused by other objects while an entry lives; the oldest entries go first."""

    def __init__(self, size: int = 64):
        self.size = size
        self.plans: OrderedDict[tuple, tuple[list, DataFrame | None]] = OrderedDict()

    def get(self, key: tuple, sources: list, build: Callable[[], DataFrame | None]
            ) -> DataFrame | None:
        k = (key, tuple(id(s) for s in sources))
        hit = self.plans.get(k)
        if hit is not None:
            self.plans.move_to_end(k)
            return hit[1]
        out = build()
        self.plans[k] = (sources, out)
        if len(self.plans) > self.size:
            self.plans.popitem(last=False)
        return out


def memo_field() -> Memo:
    """A dataclass field holding a Memo of its own (not compared, not shown)."""
    return field(default_factory=Memo, compare=False, repr=False)
