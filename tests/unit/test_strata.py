"""Stratification: dependency edges, SCCs, order, and rejection of negation cycles.

Most cases build rules directly (a line per rule, so spans are easy to check); the last ones go
through the parser and type checker when those are present.
"""
from __future__ import annotations

import pytest

from ddlog.syntax import ast
from ddlog.errors import Span, StratificationError
from ddlog.plan.strata import (AGGREGATE, NEGATIVE, POSITIVE, dependency_graph, stratify_rules,
                               stratum_of)

FILE = "t.dl"


def sp(line: int, col: int = 1, end: int = 30) -> Span:
    return Span(FILE, line, col, line, end)


def atom(rel: str, line: int, *vars: str) -> ast.Atom:
    return ast.Atom(rel, [ast.Var(v, sp(line)) for v in vars or ("x",)], sp(line))


def pos(rel: str):
    return ("pos", rel)


def neg(rel: str):
    return ("neg", rel)


GROUP = ("group", None)


def rule(line: int, head: str, *body) -> ast.Rule:
    """`head(x) :- body...` on source line `line`; GROUP inserts `var g = x.group_by(x)`."""
    items: list[ast.BodyItem] = []
    for what, rel in body:
        if what == "group":
            items.append(ast.BodyGroupBy("g", ast.Var("x", sp(line)), [ast.Var("x", sp(line))],
                                         sp(line)))
        else:
            items.append(ast.BodyAtom(atom(rel, line), what == "neg", sp(line)))
    return ast.Rule(atom(head, line), items, sp(line, 1, 40))


def shape(strata):
    return [(s.relations, s.recursive) for s in strata]


# ---------------------------------------------------------------------------------------------
# the graph


def test_edges_are_marked_positive_negative_and_aggregate():
    r = rule(1, "H", pos("A"), neg("B"), pos("C"), GROUP, pos("D"))
    g = dependency_graph(["A", "B", "C", "D", "H"], [r])
    kinds = {(u, v): d["dep"].kind for u, v, d in g.edges(data=True)}
    assert kinds == {("A", "H"): AGGREGATE, ("B", "H"): NEGATIVE, ("C", "H"): AGGREGATE,
                     ("D", "H"): POSITIVE}
    dep = next(d["dep"] for u, v, d in g.edges(data=True) if u == "B")
    assert dep.rule_span == r.span and dep.rule_index == 0


def test_one_edge_per_atom_even_for_the_same_relation():
    g = dependency_graph(["E", "P"], [rule(1, "P", pos("E"), pos("E")), rule(2, "P", pos("P"))])
    assert g.number_of_edges("E", "P") == 2 and g.has_edge("P", "P")


# ---------------------------------------------------------------------------------------------
# accepted programs


def test_inputs_and_a_linear_recursion():
    rules = [rule(1, "Path", pos("Edge")), rule(2, "Path", pos("Path"), pos("Edge"))]
    strata = stratify_rules(["Edge", "Path"], rules)
    assert shape(strata) == [(("Edge",), False), (("Path",), True)]
    assert [s.index for s in strata] == [0, 1]
    assert strata[0].rules == () and strata[1].rules == tuple(rules)


def test_mutual_recursion_is_one_stratum_in_declaration_order():
    rules = [rule(1, "Odd", pos("Edge")), rule(2, "Even", pos("Odd"), pos("Edge")),
             rule(3, "Odd", pos("Even"), pos("Edge")), rule(4, "Out", pos("Even"))]
    strata = stratify_rules(["Edge", "Even", "Odd", "Out"], rules)
    assert shape(strata) == [(("Edge",), False), (("Even", "Odd"), True), (("Out",), False)]
    assert strata[1].rules == tuple(rules[:3])  # source order, both heads


def test_non_recursive_chain_and_self_loop_only_marks_recursive():
    rules = [rule(1, "B", pos("A")), rule(2, "C", pos("B"))]
    assert all(not s.recursive for s in stratify_rules(["A", "B", "C"], rules))


def test_negation_and_aggregation_of_a_lower_recursive_stratum_are_accepted():
    rules = [rule(1, "Reach", pos("Root")), rule(2, "Reach", pos("Reach"), pos("Edge")),
             rule(3, "Unreach", pos("Node"), neg("Reach")),
             rule(4, "Count", pos("Reach"), GROUP)]
    strata = stratify_rules(["Edge", "Root", "Node", "Reach", "Unreach", "Count"], rules)
    at = stratum_of(strata)
    assert at["Reach"] < at["Unreach"] and at["Reach"] < at["Count"]
    assert [s.relations for s in strata if s.recursive] == [("Reach",)]


def test_aggregate_result_may_feed_a_later_recursion():
    rules = [rule(1, "Tot", pos("E"), GROUP), rule(2, "R", pos("Tot")), rule(3, "R", pos("R"))]
    assert shape(stratify_rules(["E", "Tot", "R"], rules))[-1] == (("R",), True)


def test_atoms_after_group_by_are_positive_and_may_be_recursive():
    # Only what precedes the group_by is aggregated; a later atom is an ordinary join.
    rules = [rule(1, "R", pos("E"), GROUP, pos("R"))]
    assert shape(stratify_rules(["E", "R"], rules)) == [(("E",), False), (("R",), True)]


def test_order_is_topological_with_ties_by_declaration():
    # Declared in an order that conflicts with the dependencies: C before its inputs.
    rules = [rule(1, "C", pos("B")), rule(2, "B", pos("A")), rule(3, "Z", pos("Y"))]
    strata = stratify_rules(["C", "Z", "Y", "B", "A"], rules)
    names = [s.relations[0] for s in strata]
    assert names.index("A") < names.index("B") < names.index("C")
    assert names.index("Y") < names.index("Z")
    # Ties: among the ready components, the one declared first goes first.
    assert names == ["Y", "Z", "A", "B", "C"]
    assert sorted(stratum_of(strata)) == sorted(["C", "Z", "Y", "B", "A"])


def test_every_relation_in_exactly_one_stratum_and_undeclared_ones_appended():
    rules = [rule(1, "Tmp", pos("A")), rule(2, "Out", pos("Tmp"))]
    strata = stratify_rules(["A", "Out", "Unused"], rules)
    flat = [r for s in strata for r in s.relations]
    assert sorted(flat) == ["A", "Out", "Tmp", "Unused"] and len(flat) == 4


def test_deterministic():
    rules = [rule(i, f"R{i}", pos(f"R{i - 1}")) for i in range(1, 8)]
    names = [f"R{i}" for i in range(8)]
    a, b = stratify_rules(names, rules), stratify_rules(names[::-1], rules)
    assert [s.relations for s in a] == [s.relations for s in b] == [(n,) for n in names]


# ---------------------------------------------------------------------------------------------
# rejected programs


def test_negation_through_a_cycle_names_cycle_and_rule():
    rules = [rule(1, "A", pos("N")), rule(2, "A", pos("N"), neg("B")), rule(3, "B", pos("A"))]
    with pytest.raises(StratificationError) as info:
        stratify_rules(["N", "A", "B"], rules, FILE, "A(x) :- N(x).\nA(x) :- N(x), not B(x).\n")
    err = info.value
    assert err.message == "relation 'A' depends on itself through negation: A -> B -> A"
    assert err.cycle == ("A", "B", "A")
    assert err.span == rules[1].span
    text = err.format()
    assert text.startswith("t.dl:2:1: error:") and "A(x) :- N(x), not B(x)." in text
    assert "^" in text


def test_negation_of_itself():
    rules = [rule(1, "A", pos("N"), neg("A"))]
    with pytest.raises(StratificationError, match=r"'A' depends on itself through negation: A -> A"):
        stratify_rules(["N", "A"], rules)


def test_aggregation_inside_a_cycle_makes_one_recursive_stratum():
    # DDlog allows a group over a relation of its own recursion (only negation closes no
    # cycle): the cycle is one recursive stratum
    rules = [rule(1, "A", pos("E")), rule(2, "B", pos("A")), rule(3, "C", pos("B")),
             rule(4, "A", pos("C"), GROUP)]
    strata = stratify_rules(["E", "A", "B", "C"], rules)
    assert [(s.relations, s.recursive) for s in strata] == [(("E",), False),
                                                             (("A", "B", "C"), True)]


def test_first_offending_rule_is_reported():
    rules = [rule(1, "A", pos("E")), rule(2, "A", pos("A"), GROUP), rule(3, "A", neg("A")),
             rule(4, "A", neg("A"))]
    with pytest.raises(StratificationError) as info:
        stratify_rules(["E", "A"], rules)
    assert "negation" in info.value.message and info.value.span.line == 3


def test_cycle_report_uses_shortest_path():
    # A -not-> B, with B reaching A both directly and through C.
    rules = [rule(1, "A", pos("E"), neg("B")), rule(2, "C", pos("A")), rule(3, "B", pos("C")),
             rule(4, "B", pos("A"))]
    with pytest.raises(StratificationError) as info:
        stratify_rules(["E", "A", "B", "C"], rules)
    assert info.value.cycle == ("A", "B", "A")


# ---------------------------------------------------------------------------------------------
# through the real front end (skipped until the parser and type checker exist)


def _frontend():
    return pytest.importorskip("ddlog.plan")


def test_front_end_strata_of_reachability():
    fe = _frontend().load("""
input relation Edge(a: bigint, b: bigint)
input relation Root(a: bigint)
relation Node(a: bigint)
output relation Reach(a: bigint)
output relation Unreach(a: bigint)
Node(x) :- Edge(x, _).
Node(y) :- Edge(_, y).
Reach(x) :- Root(x).
Reach(y) :- Reach(x), Edge(x, y).
Unreach(x) :- Node(x), not Reach(x).
""")
    assert shape(fe.strata) == [(("Edge",), False), (("Root",), False), (("Node",), False),
                                (("Reach",), True), (("Unreach",), False)]


def test_front_end_rejects_negative_cycle_with_location():
    text = """input relation E(a: bigint)
output relation A(a: bigint)
output relation B(a: bigint)
A(x) :- E(x), not B(x).
B(x) :- A(x).
"""
    with pytest.raises(StratificationError) as info:
        _frontend().load(text)
    assert info.value.cycle == ("A", "B", "A")
    assert (info.value.span.line, info.value.span.col) == (4, 1)
    assert "<input>:4:1" in info.value.format()
