"""DDlog rules as stratification sees them (the strata/ package knows no DDlog): each body
atom of a rule is a dependency of its head, positive, negative (`not R(..)`) or through an
aggregate (an atom before a `group_by`); a cycle through a negative one is a
StratificationError located at the rule that closes it (DDlog allows a cycle through an
aggregate)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx

import ddlog.strata as _strata
from ddlog.errors import StratificationError
from ddlog.syntax import ast
from ddlog.strata import AGGREGATE, NEGATIVE, POSITIVE, Dependency, RuleDeps, Stratum, stratum_of

if TYPE_CHECKING:
    from ddlog.check.program import CheckedProgram

__all__ = ["AGGREGATE", "NEGATIVE", "POSITIVE", "Stratum", "dependency_graph", "rule_deps",
           "stratify", "stratify_rules", "stratum_of"]


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


def rule_deps(rules: list[ast.Rule]) -> list[RuleDeps]:
    return [RuleDeps(r.head.relation, tuple(rule_dependencies(r, k)), r)
            for k, r in enumerate(rules)]


def dependency_graph(relation_names: list[str], rules: list[ast.Rule]) -> nx.MultiDiGraph:
    return _strata.dependency_graph(relation_names, rule_deps(rules))


def stratify_rules(relation_names: list[str], rules: list[ast.Rule], file: str = "<input>",
                   source: str | None = None) -> list[Stratum]:
    """The strata of a rule list (each Stratum's `rules` are the ast.Rules of its heads).
    `file` is informational (spans carry their file); `source` is the program text, for the
    offending line in a StratificationError."""
    try:
        return _strata.stratify(relation_names, rule_deps(rules))
    except _strata.NotStratified as err:
        error = StratificationError(str(err), err.dependency.rule_span, source)
        # for programmatic use (tests, tools); the message says the same
        error.cycle = err.cycle
        error.dependency = err.dependency
        raise error from None


def stratify(program: "CheckedProgram") -> list[Stratum]:
    """The strata of a checked program's own rules (as written: the oracle stratifies so;
    the engine's plan stratifies the normalised rules, ddlog/plan/__init__.py)."""
    return stratify_rules(list(program.relations), program.rules, program.file, program.source)
