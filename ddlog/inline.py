"""Inlining of user function calls, and a generic walk over AST nodes.

A call `f(a1, .., an)` is replaced by a fresh copy of f's checked body in which every use of a
parameter is replaced by a copy of the argument expression (already typed at the call site).
Variables that the body binds itself (match pattern variables, lambda parameters) are renamed
to fresh names `__i<N>_<name>` so they can neither capture a variable of an argument nor clash
with another copy of the same body.
"""
from __future__ import annotations

import copy
import dataclasses
import itertools
from typing import Iterator

from ddlog import ast


def iter_nodes(node) -> Iterator[object]:
    """Every AST node under `node` (itself included), in source order. Descends into lists and
    tuples (constructor fields are `(name, expr)` pairs); skips type syntax."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (list, tuple)):
            stack.extend(reversed(n))
            continue
        if not dataclasses.is_dataclass(n) or isinstance(n, (ast.TypeName, ast.BitsType,
                                                             ast.TupleType)):
            continue
        yield n
        stack.extend(reversed([getattr(n, f.name) for f in dataclasses.fields(n)
                               if f.name not in ("span", "ty")]))


def pattern_vars(p: ast.Pattern) -> list[ast.PVar]:
    return [n for n in iter_nodes(p) if isinstance(n, ast.PVar)]


class Inliner:
    def __init__(self) -> None:
        self._fresh = itertools.count(1)

    def fresh(self, name: str) -> str:
        return f"__i{next(self._fresh)}_{name}"

    def inline(self, body: ast.Expr, params: list[str], args: list[ast.Expr]) -> ast.Expr:
        return self._copy(body, dict(zip(params, args)))

    def _copy(self, e, subst: dict[str, ast.Expr]):
        """Deep copy of `e` with variables replaced per `subst` (name -> replacement)."""
        if isinstance(e, ast.Var):
            if e.name in subst:
                return copy.deepcopy(subst[e.name])
            return copy.deepcopy(e)
        if isinstance(e, ast.MatchArm):
            pattern = copy.deepcopy(e.pattern)
            renamed: dict[str, ast.Expr] = {}
            for v in pattern_vars(pattern):
                old, v.name = v.name, self.fresh(v.name)
                renamed[old] = ast.Var(v.name, v.span, v.ty)
            return ast.MatchArm(pattern, self._copy(e.body, {**subst, **renamed}), e.span)
        if isinstance(e, ast.Lambda):
            new = self.fresh(e.param)
            param_ty = e.ty.param if e.ty is not None else None
            inner = {**subst, e.param: ast.Var(new, e.span, param_ty)}
            return ast.Lambda(new, self._copy(e.body, inner), e.span, e.ty)
        if isinstance(e, list):
            return [self._copy(x, subst) for x in e]
        if isinstance(e, tuple):
            return tuple(self._copy(x, subst) for x in e)
        if dataclasses.is_dataclass(e) and not isinstance(e, type):
            if isinstance(e, (ast.TypeName, ast.BitsType, ast.TupleType)):
                return copy.deepcopy(e)
            changes = {f.name: self._copy(getattr(e, f.name), subst)
                       for f in dataclasses.fields(e) if f.name not in ("span", "ty")}
            # `replace` carries `span` and `ty` over unchanged.
            return dataclasses.replace(e, **changes)
        return e  # str, int, float, bool, None, Span-less leaves

