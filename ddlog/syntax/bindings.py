"""Patterns in a rule's body as the body items the engine has.

`pattern = e` (DDlog's `Some{var x} = e`, and an atom's argument that is a pattern,
`R(.b = Book{.author = a})`) gives one valuation of the pattern's variables when e matches it
and none otherwise:

    var __b = FlatMap(match (e) { pattern -> [(a, b)], _ -> [] }), var a = __b.0, var b = __b.1

and a pattern without variables (`R(_, Some{_})`) is the condition
`match (e) { pattern -> true, _ -> false }`.
"""
from __future__ import annotations

from typing import Callable

from ddlog.errors import Span
from ddlog.syntax import ast


def binding_items(pattern: ast.Pattern, expr: ast.Expr, span: Span,
                  fresh: Callable[[], str]) -> list[ast.BodyItem]:
    """The body items for `pattern = expr`; `fresh()` names a new variable."""
    ps = pattern.span
    names = [v.name for v in pattern.find(ast.PVar)]
    if not names:
        test = ast.MatchExpr(expr, [ast.MatchArm(pattern, ast.Lit(True, "bool", ps), ps),
                                    ast.MatchArm(ast.PWild(ps), ast.Lit(False, "bool", ps), ps)],
                             span)
        return [ast.BodyCond(test, span)]
    values = [ast.Var(n, ps) for n in names]
    one = values[0] if len(values) == 1 else ast.TupleLit(values, ps)
    match = ast.MatchExpr(expr, [ast.MatchArm(pattern, ast.VecLit([one], ps), ps),
                                 ast.MatchArm(ast.PWild(ps), ast.VecLit([], ps), ps)], span)
    if len(names) == 1:
        return [ast.BodyFlatMap(names[0], match, span)]
    tmp = fresh()
    return [ast.BodyFlatMap(tmp, match, span),
            *(ast.BodyAssign(n, ast.FieldAccess(ast.Var(tmp, ps), str(i), ps), span)
              for i, n in enumerate(names))]


def matching_items(shape: ast.Expr, value: ast.Expr, span: Span, bound: set[str] | None,
                   fresh: Callable[[], str]) -> list[ast.BodyItem]:
    """The body items for `shape = value`, `shape` a pattern written as an expression (an
    atom's argument `Book{.author = a}`, `(192, 168, _, _) = e`, `(_, var b) = e`): `_`,
    literals, tuples and constructors match; `var x` binds x; a variable not in `bound`
    binds (and joins it: a second one is compared), where `bound` is None none does; any
    other part is compared with the value there."""
    compared: list[tuple[str, ast.Expr]] = []

    def pattern(e: ast.Expr) -> ast.Pattern:
        if isinstance(e, ast.Wildcard):
            return ast.PWild(e.span)
        if isinstance(e, ast.VarDecl):
            return ast.PVar(e.name, e.span)
        if isinstance(e, ast.Var) and bound is not None and e.name not in bound:
            bound.add(e.name)
            return ast.PVar(e.name, e.span)
        if isinstance(e, ast.Lit) and e.kind != "json":
            return ast.PLit(e, e.span)
        if isinstance(e, ast.StructLit):
            return ast.PCtor(e.ctor, [(n, pattern(x)) for n, x in e.fields], e.span)
        if isinstance(e, ast.TupleLit):
            return ast.PTuple([pattern(x) for x in e.items], e.span)
        var = fresh()
        compared.append((var, e))
        return ast.PVar(var, e.span)
    items = binding_items(pattern(shape), value, span, fresh)
    return items + [ast.BodyCond(ast.BinOp("==", ast.Var(v, e.span), e, e.span), e.span)
                    for v, e in compared]
