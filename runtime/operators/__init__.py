"""The stateful operators, one per module, each with its nested-incremental formula in its
docstring; they follow the protocol of runtime/operators/base.py. Linear operators (select,
flatmap, union, negate) need no state: `linear.py` turns them into functions over Z-set frames,
applied to deltas and to traces alike.

`OPERATORS` is the one place that says which operator runs which circuit node.

The design: docs/design.md, The operators' formulas.
"""
from __future__ import annotations

from ddlog.plan.circuit import AntiJoin, Distinct, GroupBy, Join, Node
from ddlog.runtime.operators.antijoin import AntiJoinOp
from ddlog.runtime.operators.base import Context, Operator, Probe, Step
from ddlog.runtime.operators.distinct import DistinctOp
from ddlog.runtime.operators.groupby import GroupByOp
from ddlog.runtime.operators.join import JoinOp

OPERATORS: dict[type[Node], type[Operator]] = {
    Join: JoinOp,
    AntiJoin: AntiJoinOp,
    Distinct: DistinctOp,
    GroupBy: GroupByOp,
}


def build_operator(node: Node, ctx: Context) -> Operator:
    return OPERATORS[type(node)].build(node, ctx)


__all__ = ["OPERATORS", "Context", "Operator", "Probe", "Step", "build_operator"]
