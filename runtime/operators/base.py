"""The protocol of the stateful operators, and what they are built from.

A stratum (runtime/stratum.py) holds one operator per stateful node of its circuit (join,
antijoin, distinct, group_by); linear nodes need no operator, they are views over traces
(runtime/trace.py). For each fixpoint iteration the stratum asks every operator for its
`Step` (the plan of its output delta, still lazy), materialises a wave of steps with one Spark
action, and hands each operator its materialised frame back (`Step.settle`). `horizon` tells
the stratum where this epoch's changes can still meet the past; `end_epoch` and `abort_epoch`
drop an operator's per-epoch state when the epoch commits or fails. `prefetch` asks for
lookups the inputs' action runs alongside the inputs' changes, before any iteration.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ddlog.types import TOption
from ddlog.runtime.config import Config
from ddlog.runtime.physical import Frame
from ddlog.runtime.zset import lookup

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ddlog.plan.circuit import Circuit, Node
    from ddlog.runtime.trace import Trace
    from ddlog.runtime.views import TraceView


@dataclass
class Step:
    """An operator's work for one iteration, still lazy: the stratum materialises the `df` of
    every operator of a wave with one Spark action (runtime/physical.materialize_many).

    `out` is the operator's output delta as a plan; `est` estimates its rows.
    `df` is what gets materialised (the output itself, unless the operator stores more with
    it, counted per value of column `tag`); `settle` turns the materialised frame into the
    output delta and updates the operator's state. `frame`: the output is materialised
    already (rows the operator fetched earlier): the stratum records it without an action."""

    out: "DataFrame"
    est: int
    df: "DataFrame | None" = None
    tag: str | None = None
    settle: Callable[[Frame | None], Frame | None] | None = None
    frame: Frame | None = None

    @property
    def materialised(self) -> "DataFrame":
        return self.out if self.df is None else self.df


@dataclass
class Probe:
    """A question an operator asks alongside a wave (materialised in the same Spark action,
    so it costs no job of its own) or with the horizon's queries: `df` is a small plan,
    `answer` receives its frame (with its rows in Python, when they are few enough to have
    been read; counted per value of column `tag`, when one is named); `est` estimates its
    rows."""

    df: "DataFrame"
    answer: Callable[[Frame | None], None]
    tag: str | None = None
    est: int = 1


# What the engine knows of an input's change before the inputs' action makes it: the values,
# in a column of a stored trace, of the rows its updates name (a superset of the change's),
# or None when it does not know them (runtime/engine.Engine._prefetch)
KeysOf = Callable[["Trace", str], "set | None"]


@dataclass
class Context:
    """What an operator is built from: the trace view of every node of its circuit (its
    inputs' among them), the circuit, the engine's knobs, and each node's wave (the depth of
    stateful operators above it within an iteration: a node's delta at iteration i is
    materialised before an operator of a higher wave computes its own)."""

    views: "dict[int, TraceView]"
    circuit: "Circuit"
    config: Config
    levels: dict[int, int] = field(default_factory=dict)

    @property
    def nested(self) -> bool:
        """Whether time is (epoch, iteration): the stratum is recursive."""
        return self.circuit.recursive

    def null_safe(self, node_id: int, cols: list[str]) -> list[bool]:
        """For each key column of a node's output: whether it may hold null (DDlog's None of
        an `Option`), so that comparing it must be null-safe."""
        types = dict(self.circuit.node(node_id).schema)
        return [isinstance(types[c], TOption) for c in cols]


def narrow(df: "DataFrame | None", col: str, keys: set | None, config: Config,
           rows: int) -> "DataFrame | None":
    """`df` (a large side: a trace's past, of `rows` rows) cut down to the rows whose `col` is
    among `keys`, the key values of the small side it is about to be joined with, when the
    driver knows them and they are few (a literal lookup, which arrangements answer by key);
    else `df`. A side the driver holds already (config.narrow_rows) is not narrowed: reading it
    costs nothing, and literal lists would only make every plan over it larger. The exact
    join follows either way."""
    if (df is None or keys is None or len(keys) > config.lookup_keys
            or rows <= config.narrow_rows):
        return df
    return lookup(df, col, keys, config.one_task_lookups)


class Operator:
    """A stateful operator. Subclasses implement `build` and `step`; the lifecycle hooks do
    nothing unless an operator keeps state across the iterations of an epoch."""

    # Whether the running epoch evaluates its stratum from nothing (no past anywhere in it,
    # and only insertions): then deltas are plain semi-naive ones, all weights positive,
    # which some operators compute more cheaply (set by begin_epoch).
    fresh = False
    # Whether the running epoch's inputs reach this operator as plans (inlined into its
    # action, see runtime/stratum.py) over a small past: the driver does not know their
    # keys, so the operator reads the past whole instead of by key (set by begin_epoch).
    scan = False

    def begin_epoch(self, fresh: bool, scan: bool = False) -> None:
        """An epoch starts; `fresh`, `scan`: see the attributes."""
        self.fresh = fresh
        self.scan = scan

    @classmethod
    def build(cls, node: "Node", ctx: Context) -> "Operator":
        raise NotImplementedError

    def step(self, i: int) -> Step | None:
        """This epoch's output delta at iteration i (None: nothing, no Spark job)."""
        raise NotImplementedError

    def probes(self, i: int) -> list[Probe]:
        """Questions to ask alongside this operator's step at iteration i (see Probe)."""
        return []

    def prefetch(self, keys_of: KeysOf) -> list[Probe]:
        """Lookups to run with the inputs' action, before the epoch's iterations, given the
        keys of the inputs' updated rows (see JoinOp.prefetch)."""
        return []

    def horizon(self, i: int) -> "list[int | DataFrame | Probe]":
        """After a quiescent iteration i: the next iterations where this epoch's changes meet
        the past, as numbers, as one-row queries, or as probes whose frame is counted per
        iteration (`tag`): the stratum runs the queries and probes together, in one action."""
        return []

    def end_epoch(self) -> None:
        """The epoch committed: drop what was kept for its iterations."""

    def abort_epoch(self) -> None:
        """The epoch failed: forget it as if it never ran."""
        self.end_epoch()
