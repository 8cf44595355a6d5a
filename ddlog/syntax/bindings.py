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
