"""Relation dependency graph, SCCs, stratification checks and stratum order.

Independent of the language (and of Spark): a rule is its head and its body's dependencies
(`RuleDeps`); ddlog/plan/strata.py describes DDlog rules this way."""
from ddlog.strata.graph import AGGREGATE, NEGATIVE, POSITIVE, Dependency, RuleDeps, dependency_graph
from ddlog.strata.stratify import NotStratified, Stratum, stratify, stratum_of

__all__ = ["AGGREGATE", "NEGATIVE", "POSITIVE", "Dependency", "NotStratified", "RuleDeps",
           "Stratum", "dependency_graph", "stratify", "stratum_of"]
