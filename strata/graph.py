"""The relation dependency graph of a program.

One edge `body relation -> head relation` per relation atom in a rule body, so edges follow the
direction data flows. Each edge records how the head uses the body relation:

- 'positive'  : a plain atom `R(..)` that the rule reads after any `group_by`;
- 'negative'  : `not R(..)` (anywhere in the body);
- 'aggregate' : a positive atom before a `group_by`, i.e. the head sees it only through a group.

Negative and aggregate edges are the ones that may not lie on a cycle (stratified semantics).
The graph is a networkx MultiDiGraph: one relation can feed a head through several atoms or rules,
and each of them must be reported separately.

This package knows nothing of the language: the caller describes each rule by its head and its
body's dependencies (ddlog/plan/strata.py does it for DDlog rules). Spans are carried along for
the caller's messages and never looked into.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import networkx as nx

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
    rule_span: Any  # where the rule is (opaque here)
    atom_span: Any  # where the atom is


@dataclass(frozen=True)
class RuleDeps:
    """A rule as stratification sees it: its head relation, the dependency of each body atom
    in body order, and the rule itself (opaque: strata hand it back in `Stratum.rules`)."""

    head: str
    deps: tuple[Dependency, ...]
    rule: Any = None


def dependency_graph(relation_names: Iterable[str], rules: Sequence[RuleDeps]) -> nx.MultiDiGraph:
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
        node(rule.head)
        for pos, dep in enumerate(rule.deps):
            node(dep.body)
            g.add_edge(dep.body, dep.head, key=(index, pos), dep=dep)
    return g


def declaration_order(g: nx.MultiDiGraph) -> dict[str, int]:
    return {n: d["order"] for n, d in g.nodes(data=True)}
