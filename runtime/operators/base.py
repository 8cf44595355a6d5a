"""The protocol of the stateful operators, and what they are built from.

A stratum (runtime/stratum.py) holds one operator per stateful node of its circuit (join,
antijoin, distinct, group_by); linear nodes need no operator, they are views over traces
(runtime/trace.py). For each fixpoint iteration the stratum asks every operator for its
`Step` (the plan of its output delta, still lazy), materialises a wave of steps with one Spark
action, and hands each operator its materialised frame back (`Step.settle`). `horizon` tells
the stratum where this epoch's changes can still meet the past; `end_epoch` and `abort_epoch`
drop an operator's per-epoch state when the epoch commits or fails.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from runtime.config import Config
from runtime.physical import Frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ddlog.plan.circuit import Circuit, Node
    from runtime.trace import TraceView


@dataclass
class Step:
    """An operator's work for one iteration, still lazy: the stratum materialises the `df` of
    every operator of a wave with one Spark action (runtime/physical.materialize_many).

    `out` is the operator's output delta as a plan; `est` estimates its rows.
    `df` is what gets materialised (the output itself, unless the operator stores more with
    it, counted per value of column `tag`); `settle` turns the materialised frame into the
    output delta and updates the operator's state."""

    out: "DataFrame"
    est: int
    df: "DataFrame | None" = None
    tag: str | None = None
    settle: Callable[[Frame | None], Frame | None] | None = None

    @property
    def materialised(self) -> "DataFrame":
        return self.out if self.df is None else self.df


@dataclass
class Context:
    """What an operator is built from: the trace view of every node of its circuit (its
    inputs' among them), the circuit, and the engine's knobs."""

    views: "dict[int, TraceView]"
    circuit: "Circuit"
    config: Config

    @property
    def nested(self) -> bool:
        """Whether time is (epoch, iteration): the stratum is recursive."""
        return self.circuit.recursive


class Operator:
    """A stateful operator. Subclasses implement `build` and `step`; the lifecycle hooks do
    nothing unless an operator keeps state across the iterations of an epoch."""

    @classmethod
    def build(cls, node: "Node", ctx: Context) -> "Operator":
        raise NotImplementedError

    def step(self, i: int) -> Step | None:
        """This epoch's output delta at iteration i (None: nothing, no Spark job)."""
        raise NotImplementedError

    def horizon(self, i: int) -> "list[int | DataFrame]":
        """After a quiescent iteration i: the next iterations where this epoch's changes meet
        the past, as numbers or as one-row queries the stratum runs together."""
        return []

    def end_epoch(self) -> None:
        """The epoch committed: drop what was kept for its iterations."""

    def abort_epoch(self) -> None:
        """The epoch failed: forget it as if it never ran."""
        self.end_epoch()
