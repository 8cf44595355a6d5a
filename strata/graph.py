"""The relation dependency graph of a program.

One edge `body relation -> head relation` per relation atom in a rule body, so edges follow the
direction data flows. Each edge records how the head uses the body relation:

- 'positive'  : a plain atom `R(..)` that the rule reads after any `group_by`;
- 'negative'  : `not R(..)` (anywhere in the body);
- 'aggregate' : a positive atom before a `BodyGroupBy`, i.e. the head sees it only through a group.

Negative and aggregate edges are the ones that may not lie on a cycle (stratified semantics).
The graph is a networkx MultiDiGraph: one relation can feed a head through several atoms or rules,
and each of them must be reported separately.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import networkx as nx

from ddlog.syntax import ast
from ddlog.errors import Span

POSITIVE = "positive"
NEGATIVE = "negative"
AGGREGATE = "aggregate"


@dataclass(frozen=True)
class Dependency:
    """One body atom's edge: `head` depends on `body` through rule number `rule_index`."""

    body: str
    head: str
    kind: str  # POSITIVE | NEGATIVE | AGGREGATE
    rule_index: int  # position of the rule in the rule list given to `dependency_graph`
    rule_span: Span
    atom_span: Span


def rule_dependencies(rule: ast.Rule, rule_index: int) -> list[Dependency]:
    """The edges contributed by one rule, in body order."""
    # Every atom before the last group_by is only seen through a group (a group_by ends the
    # valuation, so an atom before an earlier group_by is also before the last one).
    last_group = max((i for i, item in enumerate(rule.body) if isinstance(item, ast.BodyGroupBy)),
                     default=-1)
    deps: list[Dependency] = []
    for i, item in enumerate(rule.body):
        if not isinstance(item, ast.BodyAtom):
            continue
        if item.negated:
            kind = NEGATIVE
        elif i < last_group:
            kind = AGGREGATE
        else:
            kind = POSITIVE
        deps.append(Dependency(item.atom.relation, rule.head.relation, kind, rule_index,
                               rule.span, item.span))
    return deps


def dependency_graph(relation_names: Iterable[str], rules: list[ast.Rule]) -> nx.MultiDiGraph:
    """Nodes are relations (attribute `order`: declaration position; relations that only occur
    in rules come after the declared ones, in order of first occurrence). Edges carry `dep`, the
    `Dependency`, keyed by (rule index, body position) so the graph is deterministic."""
    g = nx.MultiDiGraph()

    def node(name: str) -> None:
        if name not in g:
            g.add_node(name, order=g.number_of_nodes())

    for name in relation_names:
        node(name)
    for index, rule in enumerate(rules):
        node(rule.head.relation)
        for pos, dep in enumerate(rule_dependencies(rule, index)):
            node(dep.body)
            g.add_edge(dep.body, dep.head, key=(index, pos), dep=dep)
    return g


def declaration_order(g: nx.MultiDiGraph) -> dict[str, int]:
    return {n: d["order"] for n, d in g.nodes(data=True)}
