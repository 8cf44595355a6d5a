"""What the type checker hands to every later stage: a typed, resolved program.

After `ddlog.check.rules.check_program(ast_program)`:
- every `Expr`/`Pattern` node in `rules` has its `ty` set (a `ddlog.types.Type`);
- calls of user functions are inlined (their bodies substituted, with fresh copies of the
  nodes), so the only `Call`s left are built-ins (see ddlog/builtins/) and group methods;
- named atom arguments `R(.x = e)` are turned into positional ones, `_` filling the rest;
- chained group methods are already split by the parser (see `BodyGroupBy` in ddlog/syntax/ast.py);
- each `Inspect` is gone from its rule: an internal multiset relation holds the rule's
  valuations at that point (a rule of its own, the body before the Inspect), and an
  `Inspection` says what to call on each of its changes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ddlog.errors import Span
from ddlog.syntax.ast import Call, Expr, Program, Rule
from ddlog.types import RelationInfo, Type

# the internal relations of the Inspects are named this, and a number
INSPECTED = "__inspect"


@dataclass
class Inspection:
    """An `Inspect f(args)`: each change of `relation` (the valuations of the rule at that
    point, one column per variable bound there) calls `call` (typed; ddlog/builtins/
    inspect.py lists the functions) with ddlog_timestamp and ddlog_weight bound too."""

    relation: str
    call: Call
    span: Span


@dataclass
class CheckedProgram:
    ast: Program
    relations: dict[str, RelationInfo]  # in declaration order
    types: dict[str, Type]  # typedef name -> resolved type
    rules: list[Rule]  # typed, functions inlined, atoms positional
    # input relation -> its primary key over its columns (ddlog.check.rules.check_keys)
    keys: dict[str, Expr] = field(default_factory=dict)
    # input relation -> the rows of its facts (`R(1, "a").`), inserted by the first epoch
    input_facts: dict[str, list[tuple]] = field(default_factory=dict)
    inspections: list[Inspection] = field(default_factory=list)

    @property
    def file(self) -> str:
        return self.ast.file

    @property
    def source(self) -> str:
        return self.ast.source

    def inputs(self) -> list[RelationInfo]:
        return [r for r in self.relations.values() if r.role == "input"]

    def outputs(self) -> list[RelationInfo]:
        return [r for r in self.relations.values() if r.role == "output"]
