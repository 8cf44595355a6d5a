"""One stateful operator per module, each with its nested-incremental form (DESIGN 4.2-4.3).

Linear operators (select, flatmap, union, negate) need no state: `linear.py` turns them into
functions over Z-set frames, applied to deltas and to traces alike."""
from __future__ import annotations


from dataclasses import dataclass
from typing import Callable

from pyspark.sql import DataFrame

from runtime.zset import Frame


@dataclass
class Step:
    """A stateful operator's work for one iteration, still lazy: the stratum materialises the
    `df` of every operator of a wave with one Spark action (zset.materialize_many).

    `out` is the operator's output delta as a plan; `est` estimates its rows.
    `df` is what gets materialised (the output itself, unless the operator stores more with
    it, counted per value of column `tag`); `settle` turns the materialised frame into the
    output delta and updates the operator's state."""

    out: DataFrame
    est: int
    df: DataFrame | None = None
    tag: str | None = None
    settle: Callable[[Frame | None], Frame | None] | None = None

    @property
    def materialised(self) -> DataFrame:
        return self.out if self.df is None else self.df
