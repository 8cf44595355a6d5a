"""Closures as values: `relation R(f: |s64|: s64)`, `R(|x| x + inc) :- I(inc)`,
`O(f(x)) :- R(f), X(x)`.

A closure expression where a value of a function type is wanted is numbered, its body typed
once, and made into `closure#make(id, text, captures..)` (ddlog/builtins/closures.py): the
value keeps which closure it is and the values of the variables it uses from around it. A call
`f(x)` of such a value is written `closure#apply(f, x)` while rules are checked; once they all
are, every closure of the program is known and `expand` replaces each call by the choice among
the closures of f's type:

    if (closure#id(f) == 0) <body 0 with x, and its captures from closure#env(f)>
    else if (closure#id(f) == 1) <body 1 ...> else <body n ...>

so that calling a closure is plain Spark Columns (no UDF), as the rest of the program.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ddlog.check.closure_text import render
from ddlog.check.scope import Scope, error, mismatch
from ddlog.errors import Span
from ddlog.syntax import ast
from ddlog.builtins.prelude import PRELUDE
from ddlog.types import BIGINT, BOOL, STRING, TBool, TFunc, TInt, TString, TTuple, Type, has_vars

if TYPE_CHECKING:
    from ddlog.check.exprs import ExprChecker

APPLY = "closure#apply"


@dataclass
class ClosureDef:
    id: int
    ty: TFunc
    params: list[str]
    body: ast.Expr  # typed
    captures: list[tuple[str, Type]]  # the variables from around it, and their types
    span: Span


class Closures:
    """The closure expressions of the program that are values, in order."""

    def __init__(self) -> None:
        self.defs: list[ClosureDef] = []
        self.called = False  # whether any expression calls a closure held by a variable

    def make(self, ck: "ExprChecker", lam: ast.Lambda, sc: Scope, hint: Type | None) -> ast.Expr:
        """`lam` as a value of type `hint` (or of its written parameter and result types)."""
        if lam.changes is not None:
            raise error("a closure changing its parameter is only an argument of "
                        "`map_in_place`", lam.span)
        written = [ck.resolve(a) if a is not None else None
                   for a in (lam.annotations or [None] * len(lam.params))]
        if isinstance(hint, TFunc):
            if len(hint.params) != len(lam.params):
                raise error(f"expected a closure of {len(hint.params)} parameter"
                            f"{'' if len(hint.params) == 1 else 's'} ({hint}), found "
                            f"{len(lam.params)}", lam.span)
            for name, w, t in zip(lam.params, written, hint.params):
                if w is not None and w != t:
                    raise mismatch(t, w, lam.span, f"parameter '{name}' of the closure")
            params = list(hint.params)
        elif all(w is not None for w in written):
            params = written
        else:
            raise error("a closure used as a value needs the types of its parameters: give "
                        "them (`|x: s64| ..`) or use it where a function type is expected",
                        lam.span)
        inner = sc.extend(dict(zip(lam.params, params)))
        parsed = copy.deepcopy(lam.body)  # checking rewrites the body in place
        if lam.result is not None:
            result = ck.resolve(lam.result)
            body = ck.check(lam.body, inner, result, "result of the closure")
        elif isinstance(hint, TFunc) and not has_vars(hint.result):
            body = ck.check(lam.body, inner, hint.result, "result of the closure")
        else:
            body = ck.infer(lam.body, inner)
        ty = TFunc(tuple(params), body.ty)
        captures = _captures(body, set(lam.params), sc)
        for name, t in captures:
            if not isinstance(t, (TInt, TBool, TString, TFunc)):
                raise error(f"a closure used as a value can capture integers, bools, strings "
                            f"and closures; '{name}' is a {t}", lam.span)
        d = ClosureDef(len(self.defs), ty, list(lam.params), body, captures, lam.span)
        self.defs.append(d)
        # the value prints as DDlog prints it, or as written where that is out of reach
        # (the prelude's functions are library functions, rendered as DDlog renders those)
        own = {n for n, f in ck.decls.functions.items() if f.decl.span.file != PRELUDE}
        text = render(parsed, lam, body, ty, own) or lam.text
        args: list[ast.Expr] = [ast.Lit(d.id, "int", lam.span, ty=BIGINT),
                                ast.Lit(text, "string", lam.span, ty=STRING)]
        args += [ast.Var(n, lam.span, t) for n, t in captures]
        return ast.Call("closure#make", args, lam.span, ty=ty)

    def call(self, fn: ast.Var, args: list[ast.Expr], span: Span, ty: Type) -> ast.Call:
        """A call of the closure that `fn` holds: which one is chosen by `expand`, once every
        closure of the program is known."""
        self.called = True
        return ast.Call(APPLY, [fn, *args], span, ty=ty)

    def expand(self, ck: "ExprChecker", e: ast.Node) -> ast.Node:
        """`e` with every `closure#apply` replaced by the choice among the closures."""
        if not self.called or not any(isinstance(n, ast.Call) and n.func == APPLY
                                      for n in e.walk()):
            return e
        return e.transform(lambda n: self._apply(ck, n, ()))

    def _apply(self, ck: "ExprChecker", n: ast.Node, active: tuple) -> ast.Node:
        if not (isinstance(n, ast.Call) and n.func == APPLY):
            return n
        f, args = n.args[0], n.args[1:]
        ty = f.ty
        if ty in active:
            raise error(f"a closure of type {ty} calls a closure of its own type: not "
                        "supported (it could call itself)", n.span)
        defs = [d for d in self.defs if d.ty == ty]
        if not defs:
            raise error(f"no closure of type {ty} is made in this program, so '{f}' has none "
                        "to call", n.span)
        out: ast.Expr | None = None
        for d in reversed(defs):
            env = ast.Call("closure#env", [copy.deepcopy(f)], n.span,
                           ty=TTuple(tuple(t for _, t in d.captures)))
            captured = [ast.FieldAccess(copy.deepcopy(env), str(k), n.span, ty=t)
                        for k, (_, t) in enumerate(d.captures)]
            body = ck.inliner.inline(d.body, d.params + [c for c, _ in d.captures],
                                     [copy.deepcopy(a) for a in args] + captured)
            body = body.transform(lambda m: self._apply(ck, m, active + (ty,)))
            if out is None:
                out = body
                continue
            which = ast.Call("closure#id", [copy.deepcopy(f)], n.span, ty=BIGINT)
            test = ast.BinOp("==", which, ast.Lit(d.id, "int", n.span, ty=BIGINT), n.span,
                             ty=BOOL)
            out = ast.IfExpr(test, body, out, n.span, ty=n.ty)
        assert out is not None
        return out


def _captures(body: ast.Expr, params: set[str], sc: Scope) -> list[tuple[str, Type]]:
    """The variables of `sc` that `body` reads (not its own parameters), in order."""
    out: dict[str, Type] = {}
    for n in body.walk():
        if isinstance(n, ast.Var) and n.name in sc.vars and n.name not in params:
            out.setdefault(n.name, sc.vars[n.name])
    return list(out.items())
