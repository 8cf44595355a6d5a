"""Stratification: split relations into strata evaluated one after another.

A stratum is one strongly connected component of the dependency graph (strata/graph.py). Strata
are ordered topologically so every relation a stratum reads is complete before it runs; ties are
broken by declaration order so the order (and every printout of it) is deterministic. A stratum
is recursive when its component has several relations or a relation that reads itself: those run
as a fixpoint (nested time: see runtime/stratum.py). A `not` edge inside a component has no
stratified meaning and is rejected, naming the cycle and the rule. A `group_by` edge inside one
is allowed, as DDlog allows it: each iteration groups the previous iteration's values, and the
fixpoint is reached when they stop changing (a group's value can replace an earlier one, so such
a recursion need not grow monotonically, nor end: the iteration limit stops it then).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Sequence

import networkx as nx

from ddlog.strata.graph import (NEGATIVE, Dependency, RuleDeps, declaration_order,
                          dependency_graph)


@dataclass(frozen=True)
class Stratum:
    index: int
    relations: tuple[str, ...]  # in declaration order
    recursive: bool
    rules: tuple[Any, ...]  # the rules (RuleDeps.rule) whose head is here, in source order


class NotStratified(Exception):
    """A relation depends on itself through negation: `dependency` is the offending edge (the
    first in rule, then body order), `cycle` the relations around the loop, starting and
    ending at its head, in "depends on" direction."""

    def __init__(self, dependency: Dependency, cycle: tuple[str, ...]):
        super().__init__(f"relation '{dependency.head}' depends on itself through negation: "
                         + " -> ".join(cycle))
        self.dependency = dependency
        self.cycle = cycle


def stratify(relation_names: Sequence[str], rules: Sequence[RuleDeps]) -> list[Stratum]:
    """The strata of the relations (every one in exactly one stratum) under the rules, in
    evaluation order; NotStratified when negation closes a cycle."""
    g = dependency_graph(relation_names, rules)
    order = declaration_order(g)
    cond = nx.condensation(g)  # DAG of SCCs; node attr 'members', graph attr 'mapping'
    _check_cycles(g, cond, order)

    def first_declared(c: int) -> int:
        return min(order[r] for r in cond.nodes[c]["members"])

    by_head: dict[str, list[int]] = {}  # relation -> positions of its rules
    for k, r in enumerate(rules):
        by_head.setdefault(r.head, []).append(k)
    strata: list[Stratum] = []
    for index, c in enumerate(nx.lexicographical_topological_sort(cond, key=first_declared)):
        members = sorted(cond.nodes[c]["members"], key=order.__getitem__)
        recursive = len(members) > 1 or g.has_edge(members[0], members[0])
        own_rules = tuple(rules[k].rule
                          for k in sorted(k for m in members for k in by_head.get(m, ())))
        strata.append(Stratum(index, tuple(members), recursive, own_rules))
    return strata


def _check_cycles(g: nx.MultiDiGraph, cond: nx.DiGraph, order: dict[str, int]) -> None:
    """Raise on the first (in rule, then body order) negative edge inside an SCC."""
    component = cond.graph["mapping"]  # relation -> SCC id
    bad: list[tuple[tuple[int, int], Dependency]] = []
    for u, v, key, dep in g.edges(keys=True, data="dep"):
        if dep.kind == NEGATIVE and component[u] == component[v]:
            bad.append((key, dep))
    if not bad:
        return
    _, dep = min(bad, key=lambda kd: kd[0])
    # The head depends on the body atom's relation; the cycle closes through a data-flow path
    # head -> ... -> body. Printed in "depends on" direction, starting and ending at the head.
    flow = _shortest_path(g, dep.head, dep.body, component, order)
    raise NotStratified(dep, tuple([dep.head] + list(reversed(flow))))


def _shortest_path(g: nx.MultiDiGraph, start: str, goal: str, component: dict[str, int],
                   order: dict[str, int]) -> list[str]:
    """BFS inside one SCC, visiting successors in declaration order (deterministic)."""
    if start == goal:
        return [start]
    scc = component[start]
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        for w in sorted(set(g.successors(u)), key=order.__getitem__):
            if w in parent or component[w] != scc:
                continue
            parent[w] = u
            if w == goal:
                path = [w]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1]
            queue.append(w)
    raise AssertionError(f"{goal} not reachable from {start} inside their SCC")


def stratum_of(strata: list[Stratum]) -> dict[str, int]:
    """Relation name -> index of its stratum."""
    return {r: s.index for s in strata for r in s.relations}
