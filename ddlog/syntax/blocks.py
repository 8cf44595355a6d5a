"""A block's statements as expressions: `{ var y = x; y.1 = 5; y.0.push(7); y }` becomes
`Let(y, x, Let(y, With(y, "1", 5), Let(y, With(y, "0", push(y.0, 7)), y)))`.

DDlog's statements mutate variables; the dialect's values are immutable, so each statement
rebinds the variable it changes:
- `var x = e;` / `var x: T = e;` binds x for the rest of the block;
- `p = e;`, where the path p is a variable followed by fields (`x`, `x.f`, `x.1.g`), rebinds
  the variable to a copy with that field replaced (`With`);
- `p.m(args);` for a mutating method m of DDlog's library (`push`, `retain`, `sort`, ...) is
  `p = p.m(args);`: the dialect defines each of them as a function returning the changed
  collection (ddlog/builtins/).
Any other statement would have no effect, and is an error.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

from ddlog.errors import DDlogError, Span
from ddlog.syntax import ast

Fail = Callable[[str, Span], DDlogError]  # the parser's error, located in its text

# DDlog's methods that change their receiver (`mut` first parameter).
MUTATING = frozenset({
    "push", "push_imm", "retain", "sort", "sort_by", "dedup", "reverse", "append", "resize",
    "truncate", "update_nth", "insert", "remove", "clear", "extend",
})


@dataclass
class VarStmt:
    name: str
    annotation: ast.TypeExpr | None
    value: ast.Expr
    span: Span


@dataclass
class AssignStmt:
    target: ast.Expr
    value: ast.Expr
    span: Span


@dataclass
class ExprStmt:
    expr: ast.Expr
    span: Span


@dataclass
class ForStmt:
    var: str
    iterable: ast.Expr
    body: list["Statement"]
    span: Span


Statement = VarStmt | AssignStmt | ExprStmt | ForStmt


def block(statements: list[Statement], result: ast.Expr, fail: Fail) -> ast.Expr:
    """The expression a block `{ statements; result }` stands for."""
    out = result
    for s in reversed(statements):
        if isinstance(s, VarStmt):
            out = ast.Let(s.name, s.value, out, s.span, annotation=s.annotation)
        elif isinstance(s, AssignStmt):
            out = _assign(s.target, s.value, out, s.span, fail)
        elif isinstance(s, ForStmt):
            out = _loop(s, out, fail)
        else:
            e = s.expr
            if not (isinstance(e, ast.Call) and e.method and e.func in MUTATING):
                raise fail("this statement has no effect: a block's statements are "
                           "`var x = e`, assignments `x = e` / `x.f = e`, and the mutating "
                           "methods (`v.push(x)`, `v.retain(f)`, `v.sort()`, ...)", s.span)
            out = _assign(copy.deepcopy(e.args[0]), e, out, s.span, fail)
    return out


def _loop(s: ForStmt, rest: ast.Expr, fail: Fail) -> ast.Expr:
    """`for (x in v) { body }`: a fold over v whose state is the variables the body changes
    (and declared before the loop): `m = v.fold(|m, x| { body; m }, m)`, or with several,
    a tuple of them taken apart after the loop."""
    changed = [m for m in _assigned(s.body) if m not in _declared(s.body)]
    if not changed:
        raise fail("this loop has no effect: its body changes no variable declared before it",
                   s.span)
    sp = s.span
    if len(changed) == 1:
        state, acc = ast.Var(changed[0], sp), changed[0]
        body = block(s.body, ast.Var(acc, sp), fail)
    else:
        acc = f"__loop{sp.line}_{sp.col}"
        state = ast.TupleLit([ast.Var(m, sp) for m in changed], sp)
        unpack = [VarStmt(m, None, ast.FieldAccess(ast.Var(acc, sp), str(i), sp), sp)
                  for i, m in enumerate(changed)]
        body = block(unpack + s.body, copy.deepcopy(state), fail)
    step = ast.Lambda([acc, s.var], body, sp, annotations=[None, None])
    folded = ast.Call("fold", [s.iterable, step, copy.deepcopy(state)], sp, method=True)
    if len(changed) == 1:
        return ast.Let(changed[0], folded, rest, sp, rebind=True)
    result = f"__loop{sp.line}_{sp.col}_out"
    for i, m in reversed(list(enumerate(changed))):
        rest = ast.Let(m, ast.FieldAccess(ast.Var(result, sp), str(i), sp), rest, sp,
                       rebind=True)
    return ast.Let(result, folded, rest, sp)


def _root(e: ast.Expr) -> str | None:
    while isinstance(e, ast.FieldAccess):
        e = e.expr
    return e.name if isinstance(e, ast.Var) else None


def _assigned(body: list[Statement]) -> list[str]:
    """The variables a loop body changes, in order of first change."""
    out: list[str] = []
    for s in body:
        if isinstance(s, AssignStmt):
            names = [_root(s.target)]
        elif isinstance(s, ExprStmt) and isinstance(s.expr, ast.Call) and s.expr.args:
            names = [_root(s.expr.args[0])]
        elif isinstance(s, ForStmt):
            names = [m for m in _assigned(s.body) if m not in _declared(s.body)]
        else:
            names = []
        out.extend(n for n in names if n is not None and n not in out)
    return out


def _declared(body: list[Statement]) -> set[str]:
    return {s.name for s in body if isinstance(s, VarStmt)}


def _assign(target: ast.Expr, value: ast.Expr, rest: ast.Expr, span: Span,
            fail: Fail) -> ast.Let:
    fields: list[str] = []
    root = target
    while isinstance(root, ast.FieldAccess):
        fields.append(root.name)
        root = root.expr
    if not isinstance(root, ast.Var):
        raise fail("only a variable or its fields (`x`, `x.f`, `x.0.g`) can be assigned",
                   target.span)
    return ast.Let(root.name, _replace(root, fields[::-1], value), rest, span, rebind=True)


def _replace(base: ast.Expr, fields: list[str], value: ast.Expr) -> ast.Expr:
    """`base` with the field at path `fields` replaced by `value`."""
    if not fields:
        return value
    # the checker types nodes in place: each use of `base` gets its own copy
    inner = ast.FieldAccess(copy.deepcopy(base), fields[0], base.span)
    return ast.With(base, fields[0], _replace(inner, fields[1:], value), base.span)
