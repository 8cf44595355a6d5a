"""What the type checker hands to every later stage: a typed, resolved program.

After `ddlog.check.rules.check_program(ast_program)`:
- every `Expr`/`Pattern` node in `rules` has its `ty` set (a `ddlog.types.Type`);
- calls of user functions are inlined (their bodies substituted, with fresh copies of the
  nodes), so the only `Call`s left are built-ins (see ddlog/builtins.py) and group methods;
- named atom arguments `R(.x = e)` are turned into positional ones, `_` filling the rest;
- chained group methods are already split by the parser (see `ast.BodyGroupBy`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ddlog.syntax import ast
from ddlog.errors import Span
from ddlog.types import Type


@dataclass(frozen=True)
class RelationInfo:
    name: str
    role: str  # 'input' | 'output' | 'internal'
    columns: tuple[tuple[str, Type], ...]
    span: Span

    @property
    def arity(self) -> int:
        return len(self.columns)

    @property
    def column_types(self) -> tuple[Type, ...]:
        return tuple(t for _, t in self.columns)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.columns)


@dataclass
class CheckedProgram:
    ast: ast.Program
    relations: dict[str, RelationInfo]  # in declaration order
    types: dict[str, Type]  # typedef name -> resolved type
    rules: list[ast.Rule]  # typed, functions inlined, atoms positional

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
