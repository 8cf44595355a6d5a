"""What the type checker hands to every later stage: a typed, resolved program.

After `ddlog.check.rules.check_program(ast_program)`:
- every `Expr`/`Pattern` node in `rules` has its `ty` set (a `ddlog.types.Type`);
- calls of user functions are inlined (their bodies substituted, with fresh copies of the
  nodes), so the only `Call`s left are built-ins (see ddlog/builtins/) and group methods;
- named atom arguments `R(.x = e)` are turned into positional ones, `_` filling the rest;
- chained group methods are already split by the parser (see `BodyGroupBy` in ddlog/syntax/ast.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ddlog.syntax.ast import Expr, Program, Rule
from ddlog.types import RelationInfo, Type


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
