"""The circuit IR: what each stratum compiles to, one node per operator, as the DDlog chapter
of the DBSP paper compiles rules (ddlog/plan/compile.py).

A `Circuit` is a list of operator nodes in topological order. Every node produces a Z-set stream;
in a recursive stratum the streams are nested (time = (epoch, iteration)) and carry double
deltas. The IR is plain data; ddlog/plan/compile.py builds it, ddlog/plan/explain.py prints it
and runtime/stratum.py executes it on Spark: it is the one contract between the language and
the runtime.

Columns: a relation's stream has columns c0..cN; a valuation has one column `v_<var>` per bound
variable (plus temporary join-key columns `k<N>`). Expressions are ddlog/plan/exprs.py's, in
which a rule's variable `x` is the column `Col("v_x")`.

Operators and their incremental forms:
- Import (δ₀): a relation of a lower stratum (or an input). Its double delta is the relation's
  epoch change at iteration 0 and nothing after.
- Delay (z⁻¹ on the iteration axis): the feedback edge of a recursive relation: its value at
  (e, i) is that relation's Distinct output at (e, i-1).
- Select, FlatMap, Union, Negate: linear, applied to the delta as it is.
- Join, AntiJoin: bilinear; keep traces of both inputs (4-term nested formula).
- Distinct: keeps the trace of its input (nested distinct formula).
- GroupBy: recomputes the groups whose key changed (in a recursive stratum, by the nested
  formula over the keys this epoch touched).
- Output (∫): the relation's value is the sum over iterations and epochs of its input.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ddlog.plan.exprs import Col, Expr, var_col
from ddlog.types import Type

IRExpr = Expr  # the expressions nodes compute (ddlog/plan/exprs.py)
__all__ = ["Col", "IRExpr", "var_col"]  # and the node classes below


@dataclass
class Node:
    id: int
    schema: tuple[tuple[str, Type], ...]  # output columns

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.schema)

    @property
    def inputs(self) -> tuple[int, ...]:
        return ()

    @property
    def stateful(self) -> bool:
        return False


@dataclass
class Import(Node):
    relation: str = ""


@dataclass
class Delay(Node):
    relation: str = ""


@dataclass
class Select(Node):
    """filter then compute: keep rows where every filter holds, output `outputs`."""

    input: int = -1
    filters: list[IRExpr] = field(default_factory=list)
    outputs: list[tuple[str, IRExpr]] = field(default_factory=list)
    label: str = ""

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)


@dataclass
class FlatMap(Node):
    """Adds column `column`: one row per element of the collection `expr`."""

    input: int = -1
    column: str = ""
    expr: IRExpr | None = None

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)


@dataclass
class Union_(Node):
    sources: list[int] = field(default_factory=list)

    @property
    def inputs(self) -> tuple[int, ...]:
        return tuple(self.sources)


@dataclass
class Negate(Node):
    input: int = -1

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)


@dataclass
class Join(Node):
    """Equi-join (null-safe) on left_keys = right_keys; output = left columns + right_out.
    No keys is a Cartesian product."""

    left: int = -1
    right: int = -1
    left_keys: list[str] = field(default_factory=list)
    right_keys: list[str] = field(default_factory=list)
    right_out: list[str] = field(default_factory=list)

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.left, self.right)

    @property
    def stateful(self) -> bool:
        return True


@dataclass
class AntiJoin(Node):
    """left ▷ right = left - semijoin(left, right); `right` is a set (a Distinct)."""

    left: int = -1
    right: int = -1
    left_keys: list[str] = field(default_factory=list)
    right_keys: list[str] = field(default_factory=list)

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.left, self.right)

    @property
    def stateful(self) -> bool:
        return True


@dataclass
class Distinct(Node):
    input: int = -1

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)

    @property
    def stateful(self) -> bool:
        return True


@dataclass
class GroupBy(Node):
    """Output: the key columns and `column` = Group(key, sorted elements), one row per key.
    A group's elements are `elem` over the distinct valuations of the input with that key;
    `counted` (the rule reads a multiset or a stream): once per unit of each valuation's
    multiplicity, as DDlog's groups weigh their values."""

    input: int = -1
    keys: list[str] = field(default_factory=list)
    elem: IRExpr | None = None
    column: str = ""
    key_type: Type | None = None
    counted: bool = False

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)

    @property
    def stateful(self) -> bool:
        return True


@dataclass
class Output(Node):
    """∫: the relation's value is the integral of this stream (a Distinct, or a GroupBy)."""

    input: int = -1
    relation: str = ""

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)


@dataclass
class Circuit:
    stratum: int
    relations: tuple[str, ...]
    recursive: bool
    nodes: list[Node]
    outputs: dict[str, int]  # relation -> its Output node
    delays: dict[str, int] = field(default_factory=dict)  # relation -> Distinct feeding its Delay

    def node(self, nid: int) -> Node:
        return self.nodes[nid]

    def imports(self) -> set[str]:
        """The relations the circuit reads (through its Import nodes)."""
        return {n.relation for n in self.nodes if isinstance(n, Import)}

    def consumers(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {n.id: [] for n in self.nodes}
        for n in self.nodes:
            for i in n.inputs:
                out[i].append(n.id)
        return out
