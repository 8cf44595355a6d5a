"""What the backends read of Spark's printed plans, without a JVM: the Connect backend's row
estimate (the optimiser's statistics as `explain(mode="cost")` prints them) and its reading of
a parsed plan for `ddlog sql`'s check."""
from __future__ import annotations

from ddlog.runtime.backend import connect


class Printed:
    """A DataFrame of which only its cost explanation is asked."""

    def __init__(self, text: str):
        self.text = text

    def _explain_string(self, mode: str) -> str:
        assert mode == "cost"
        return self.text


COST = """== Optimized Logical Plan ==
Filter (c0#1L > 1), Statistics(sizeInBytes=12.0 MiB{rows})
+- Relation [c0#1L] parquet, Statistics(sizeInBytes=24.0 MiB, rowCount=2.00E+6)

== Physical Plan ==
*(1) Filter (c0#1L > 1)
"""


def test_a_row_count_is_read_whole_in_every_notation():
    assert connect.estimated_rows(Printed(COST.format(rows=", rowCount=1.23E+6"))) == 1_230_000
    assert connect.estimated_rows(Printed(COST.format(rows=", rowCount=42"))) == 42
    # the root has no count: not the leaf's below it either (the first statistics are the root's)
    assert connect.estimated_rows(Printed(COST.format(rows=""))) is None


def test_a_parsed_plan_is_read_root_first_and_commands_are_told():
    insert = """== Parsed Logical Plan ==
'InsertIntoStatement 'UnresolvedRelation [t], [], false, false, false
+- 'Project [*]
   +- 'UnresolvedRelation [Reach], [], false

== Analyzed Logical Plan ==
InsertIntoStatement ...
"""
    nodes, text = connect.plan_nodes(insert)
    assert nodes == [("InsertIntoStatement", True), ("Project", False),
                     ("UnresolvedRelation", False)]
    assert "Analyzed" not in text
    select = """== Parsed Logical Plan ==
'Aggregate ['x], ['x, unresolvedalias('count(1))]
+- 'Join Inner
   :- 'UnresolvedRelation [Reach], [], false
   +- 'SubqueryAlias e
      +- 'UnresolvedRelation [Edge], [], false
"""
    nodes, _ = connect.plan_nodes(select)
    assert [n for n, _ in nodes] == ["Aggregate", "Join", "UnresolvedRelation", "SubqueryAlias",
                                     "UnresolvedRelation"]
    assert not any(command for _, command in nodes)
    assert connect.plan_nodes("== Parsed Logical Plan ==\nShowTables\n")[0] == [("ShowTables",
                                                                                  True)]
    assert connect.plan_nodes("nothing")[0] == [("?", True)]
