"""Inlining of user function calls, and a generic walk over AST nodes.

A call `f(a1, .., an)` is replaced by a fresh copy of f's checked body in which every use of a
parameter is replaced by a copy of the argument expression (already typed at the call site).
Variables that the body binds itself (match pattern variables, lambda parameters) are renamed
to fresh names `__i<N>_<name>` so they can neither capture a variable of an argument nor clash
with another copy of the same body.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Iterator

from ddlog.syntax import ast
from ddlog.limits import MAX_EXPRESSION_NODES, MAX_NESTING
from ddlog.check.scope import error


def iter_nodes(node: ast.Node) -> Iterator[ast.Node]:
    """Every AST node under `node` (itself included), in source order."""
    return node.walk()


@dataclass(frozen=True)
class Size:
    """How big an expression is: its nodes, its depth, and for each variable it reads, how
    often and how deep (what inlining it with an argument in its place will cost)."""

    nodes: int
    depth: int
    uses: dict[str, tuple[int, int]]  # variable -> (occurrences, deepest occurrence)


def measure(e) -> Size:
    """The Size of an expression, computed without recursion."""
    nodes, depth = 0, 0
    uses: dict[str, tuple[int, int]] = {}
    stack = [(e, 1)]
    while stack:
        n, d = stack.pop()
        nodes += 1
        depth = max(depth, d)
        if isinstance(n, ast.Var):
            count, deepest = uses.get(n.name, (0, 0))
            uses[n.name] = (count + 1, max(deepest, d))
        stack.extend((c, d + 1) for c in n.children())
    return Size(nodes, depth, uses)


def pattern_vars(p: ast.Pattern) -> list[ast.PVar]:
    return p.find(ast.PVar)


class Inliner:
    def __init__(self) -> None:
        self._fresh = itertools.count(1)

    def fresh(self, name: str) -> str:
        return f"__i{next(self._fresh)}_{name}"

    def inline(self, body: ast.Expr, params: list[str], args: list[ast.Expr],
               call: ast.Call | None = None, size: Size | None = None) -> ast.Expr:
        """A copy of `body` with the arguments in place of the parameters. With the `call`
        being inlined, first checks that the result stays within the limits on expressions
        (functions that call each other twice per level would otherwise grow
        exponentially); `size` is the body's, when the caller keeps it."""
        if call is not None:
            self.check_size(size or measure(body), params, args, call)
        return self._copy(body, dict(zip(params, args)))

    @staticmethod
    def check_size(body: Size, params: list[str], args: list[ast.Expr], call: ast.Call) -> None:
        nodes, depth = body.nodes, body.depth
        for p, a in zip(params, args):
            count, deepest = body.uses.get(p, (0, 0))
            if count:
                arg = measure(a)
                nodes += count * (arg.nodes - 1)
                depth = max(depth, deepest + arg.depth - 1)
        if nodes > MAX_EXPRESSION_NODES:
            raise error(f"calling '{call.func}' here makes an expression of {nodes} nodes once "
                        f"functions are inlined (the limit is {MAX_EXPRESSION_NODES}): "
                        f"functions that call others several times grow exponentially",
                        call.span)
        if depth > MAX_NESTING:
            raise error(f"calling '{call.func}' here makes an expression nested {depth} levels "
                        f"deep once functions are inlined (the limit is {MAX_NESTING})",
                        call.span)

    def _copy(self, e, subst: dict[str, ast.Expr]):
        """Deep copy of `e` with variables replaced per `subst` (name -> replacement)."""
        if isinstance(e, ast.Var):
            if e.name in subst:
                return self._copy(subst[e.name], {})
            return dataclasses.replace(e)
        if isinstance(e, ast.MatchArm):
            pattern = self._copy(e.pattern, {})
            renamed: dict[str, ast.Expr] = {}
            for v in pattern_vars(pattern):
                old, v.name = v.name, self.fresh(v.name)
                renamed[old] = ast.Var(v.name, v.span, v.ty)
            return ast.MatchArm(pattern, self._copy(e.body, {**subst, **renamed}), e.span)
        if isinstance(e, ast.Lambda):
            new = [self.fresh(p) for p in e.params]
            types = e.ty.params if e.ty is not None else [None] * len(new)
            inner = {**subst, **{p: ast.Var(n, e.span, t)
                                 for p, n, t in zip(e.params, new, types)}}
            return dataclasses.replace(e, params=new, body=self._copy(e.body, inner))
        if isinstance(e, list):
            return [self._copy(x, subst) for x in e]
        if isinstance(e, tuple):
            return tuple(self._copy(x, subst) for x in e)
        if dataclasses.is_dataclass(e) and not isinstance(e, type):
            if isinstance(e, (ast.TypeName, ast.BitsType, ast.TupleType)):
                return e  # type syntax is never modified after parsing
            changes = {f.name: self._copy(getattr(e, f.name), subst)
                       for f in dataclasses.fields(e) if f.name not in ("span", "ty")}
            # `replace` carries `span` and `ty` over unchanged.
            return dataclasses.replace(e, **changes)
        return e  # str, int, float, bool, None, Span-less leaves

