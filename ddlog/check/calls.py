"""Typing a call of a built-in function or group method: the entry's type rule
(ddlog/builtins/) does the work through `CallArgs`, which types the call's arguments in place
with the expression checker and words every message with the function and its signature.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Callable, NoReturn

from ddlog.builtins import Builtin, lookup
from ddlog.check.scope import Scope, error, flexible, mismatch
from ddlog.errors import TypeCheckError
from ddlog.syntax import ast
from ddlog.types import TFunc, TGroup, Type, is_wide

if TYPE_CHECKING:
    from ddlog.check.exprs import ExprChecker


class CallArgs:
    """One call being typed (receiver first in `args`); implements ddlog.builtins.Args."""

    def __init__(self, ck: "ExprChecker", call: ast.Call, sc: Scope, builtin: Builtin):
        self.ck, self.call, self.sc, self.sig = ck, call, sc, builtin.signature
        self.wide_integers = builtin.wide_integers
        self.spans = [a.span for a in call.args]  # original spans, before any inlining

    def count(self) -> int:
        return len(self.call.args)

    def argname(self, i: int) -> str:
        if self.call.method:
            return "the receiver" if i == 0 else f"argument {i}"
        return f"argument {i + 1}"

    def arity(self, n: int | tuple[int, ...]) -> None:
        """Require `n` arguments (receiver included), or one of the counts `n`."""
        ns = n if isinstance(n, tuple) else (n,)
        found = len(self.call.args)
        if found in ns:
            return
        f = self.call.func
        if self.call.method:
            counts = " or ".join(str(k - 1) for k in ns)
            msg = (f"method '{f}' expects {counts} argument{'' if ns == (2,) else 's'} after "
                   f"the receiver, found {found - 1}")
        else:
            counts = " or ".join(str(k) for k in ns)
            msg = (f"function '{f}' expects {counts} argument{'' if ns == (1,) else 's'}, "
                   f"found {found}")
        raise error(f"{msg}: {self.sig}", self.call.span)

    def infer(self, i: int, hint: Type | None = None) -> Type:
        if self.call.args[i].ty is None:
            self.call.args[i] = self.ck.infer(self.call.args[i], self.sc, hint)
        return self.call.args[i].ty

    def check(self, i: int, t: Type) -> Type:
        what = f"{self.argname(i)} of '{self.call.func}'"
        self.call.args[i] = self.ck.check(self.call.args[i], self.sc, t, what)
        return t

    def want(self, i: int, ok: bool, desc: str) -> None:
        t = self.call.args[i].ty
        if not ok:
            raise error(f"function '{self.call.func}' expects {desc} as {self.argname(i)}, "
                        f"found {t}: {self.sig}", self.spans[i])
        self._narrow(t, desc, self.spans[i])

    def _narrow(self, t: Type, desc: str, span) -> None:
        """Built-ins that compute with integers take them up to 64 bits wide, except those
        whose lowering knows the two-word form of wider ones (Builtin.wide_integers)."""
        if "integer" in desc and is_wide(t) and not self.wide_integers:
            raise error(f"function '{self.call.func}' takes integers of up to 64 bits here, "
                        f"found {t}: {self.sig}", span)

    def flexible(self, i: int) -> bool:
        return flexible(self.call.args[i], self.sc.flex)

    def same(self, hint: Type | None, ok: Callable[[Type], bool], desc: str) -> Type:
        def validate(t: Type, span) -> None:
            if not ok(t):
                raise error(f"function '{self.call.func}' expects {desc}, found {t}: "
                            f"{self.sig}", span)
            self._narrow(t, desc, span)
        what = f"arguments of '{self.call.func}'"
        self.call.args[:] = self.ck.infer_same([(a, self.sc) for a in self.call.args], hint,
                                               validate, what)
        return self.call.args[0].ty

    def lambda_body(self, i: int, *params: Type, hint: Type | None = None,
                    changes: int | None = None) -> Type:
        lam = self.call.args[i]
        if isinstance(lam, ast.Var) and lam.name not in self.sc.vars \
                and self.ck.is_function(lam.name, len(params)):
            # a function's name passed as a closure: `v.filter(is_even)`, `sort_by(to_string)`
            names = [self.ck.inliner.fresh(f"a{k}") for k in range(len(params))]
            call = ast.Call(lam.name, [ast.Var(n, lam.span) for n in names], lam.span)
            lam = self.call.args[i] = ast.Lambda(names, call, lam.span)
        elif isinstance(lam, ast.Var) and isinstance(self.sc.vars.get(lam.name), TFunc):
            # a closure held by a variable: `v.map(f)` calls it on each element
            names = [self.ck.inliner.fresh(f"a{k}") for k in range(len(params))]
            call = ast.Call(lam.name, [ast.Var(n, lam.span) for n in names], lam.span)
            lam = self.call.args[i] = ast.Lambda(names, call, lam.span)
        n = len(params)
        shape = "|x| ..." if n == 1 else "|" + ", ".join("abc"[:n]) + "| ..."
        if not isinstance(lam, ast.Lambda):
            raise error(f"function '{self.call.func}' expects a closure `{shape}` as "
                        f"{self.argname(i)}: {self.sig}", lam.span)
        if len(lam.params) != n:
            raise error(f"function '{self.call.func}' expects a closure of {n} parameter"
                        f"{'' if n == 1 else 's'} (`{shape}`) as {self.argname(i)}, found "
                        f"{len(lam.params)}: {self.sig}", lam.span)
        self._changes(lam, changes)
        for name, ann, t in zip(lam.params, lam.annotations or [None] * n, params):
            if ann is not None and self.ck.resolve(ann) != t:
                raise mismatch(t, self.ck.resolve(ann), ann.span,
                               f"parameter '{name}' of the closure")
        sc = self.sc.extend(dict(zip(lam.params, params)))
        if lam.result is not None:
            lam.body = self.ck.check(lam.body, sc, self.ck.resolve(lam.result),
                                     "result of the closure")
        else:
            lam.body = self.ck.infer(lam.body, sc, hint)
        lam.ty = TFunc(tuple(params), lam.body.ty)
        return lam.body.ty

    def lambda_arity(self, i: int) -> int | None:
        lam = self.call.args[i]
        return len(lam.params) if isinstance(lam, ast.Lambda) else None

    def _changes(self, lam: ast.Lambda, changes: int | None) -> None:
        """A closure changes its parameter (`|k, v| v.x = e`) exactly where the function
        wants its parameter number `changes` changed (DDlog's `mut` parameter)."""
        want = lam.params[changes] if changes is not None else None
        if lam.changes == want:
            return
        if want is None:
            raise error(f"function '{self.call.func}' expects a closure that gives a value, "
                        f"found one changing its parameter '{lam.changes}' (only a `mut` "
                        f"parameter can be changed): {self.sig}", lam.span)
        raise error(f"function '{self.call.func}' expects a closure changing its parameter "
                    f"'{want}' (`|{', '.join(lam.params)}| {want}.f = e`): {self.sig}",
                    lam.span)

    def fail(self, message: str, i: int | None = None) -> NoReturn:
        span = self.call.span
        if i is not None:
            arg = self.call.args[i]
            span = arg.body.span if isinstance(arg, ast.Lambda) else self.spans[i]
        if not message.startswith("function"):
            message = f"function '{self.call.func}' {message}"
        raise error(f"{message}: {self.sig}", span)


def type_call(ck: "ExprChecker", call: ast.Call, sc: Scope, builtin: Builtin,
              hint: Type | None) -> Type:
    """The result type of a call of `builtin`, its arguments typed in place. When the call
    fails where an argument's untyped literals defaulted to bigint and another integer type
    was wanted (`[1, 2].fold(|a, x| a + x, 0)` for an s64), the call is typed again with
    those literals of that type."""
    pristine = copy.deepcopy(call.args)
    try:
        return _type_call(ck, call, sc, builtin, hint)
    except TypeCheckError as err:
        for i, arg in enumerate(pristine):
            if isinstance(arg, ast.Lambda) or not flexible(arg, sc.flex):
                continue
            retyped = ck.defaulted(arg, sc, err)
            if retyped is None:
                continue
            call.args = copy.deepcopy(pristine)
            call.args[i] = ck.check(call.args[i], sc, retyped)
            return _type_call(ck, call, sc, builtin, hint)
        raise


def _type_call(ck: "ExprChecker", call: ast.Call, sc: Scope, builtin: Builtin,
               hint: Type | None) -> Type:
    a = CallArgs(ck, call, sc, builtin)
    a.arity(builtin.arity)
    if builtin.group:
        a.want(0, isinstance(a.infer(0), TGroup), "a Group (bound by group_by)")
    result = builtin.type_rule(a, hint)
    for i in builtin.constants:
        # a function's parameter stands for the argument of each call: check_constants looks
        # at that once the function is inlined
        if constant(call.args[i]) is None and not isinstance(call.args[i], ast.Var):
            raise _not_constant(call, i)
    return result


def check_constants(rules: list[ast.Rule]) -> None:
    """Every argument a built-in reads when the program is compiled is a constant, now that
    the functions are inlined into the rules."""
    for rule in rules:
        for call in rule.find(ast.Call):
            b = lookup(call.func, len(call.args))
            for i in b.constants if b is not None else ():
                if constant(call.args[i]) is None:
                    raise _not_constant(call, i)


def _not_constant(call: ast.Call, i: int) -> TypeCheckError:
    return error(f"function '{call.func}' reads argument {i + 1} when the program is compiled: "
                 "it must be a constant (a literal, or a function that gives one)",
                 call.args[i].span)


def constant(e: ast.Expr) -> ast.Lit | None:
    """The literal an argument is, seen through type ascriptions and inlined functions."""
    while True:
        if isinstance(e, ast.Lit):
            return e
        if isinstance(e, ast.Ascribe):
            e = e.expr
        elif isinstance(e, ast.Let) and e.var not in {n.name for n in e.body.walk()
                                                       if isinstance(n, ast.Var)}:
            e = e.body
        else:
            return None
