"""Relation dependency graph, SCCs, stratification checks and stratum order (no Spark)."""
from strata.graph import AGGREGATE, NEGATIVE, POSITIVE, Dependency, dependency_graph
from strata.stratify import Stratum, stratify, stratify_rules, stratum_of

__all__ = ["AGGREGATE", "NEGATIVE", "POSITIVE", "Dependency", "Stratum", "dependency_graph",
           "stratify", "stratify_rules", "stratum_of"]
