"""Typing of calls of built-in functions and group methods, per the table in ddlog/builtins.py.

Each typer receives the call (receiver first in `args`), types its arguments in place through
the expression checker and returns the result type. Messages name the function and show its
signature or the expected type of the offending argument.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ddlog.syntax import ast
from ddlog.builtins import FUNCTIONS, GROUP_METHODS
from ddlog.check.scope import Scope, error, flexible
from ddlog.types import (BIGINT, BOOL, STRING, TFunc, TGroup, TOption, TSet, TVec, Type,
                         is_numeric, is_scalar)

if TYPE_CHECKING:
    from ddlog.check.exprs import ExprChecker

SIGNATURES: dict[str, str] = {
    "len": "len(string | Vec<T> | Set<T>) -> bigint",
    "contains": "contains(string, string) -> bool, contains(Vec<T> | Set<T>, T) -> bool",
    "is_some": "is_some(Option<T>) -> bool",
    "is_none": "is_none(Option<T>) -> bool",
    "unwrap_or": "unwrap_or(Option<T>, T) -> T",
    "to_string": "to_string(bool | integer | float | string) -> string",
    "abs": "abs(N) -> N, N an integer or float type",
    "min": "min(T, T) -> T, T a scalar type",
    "max": "max(T, T) -> T, T a scalar type",
    "starts_with": "starts_with(string, string) -> bool",
    "ends_with": "ends_with(string, string) -> bool",
    "to_uppercase": "to_uppercase(string) -> string",
    "to_lowercase": "to_lowercase(string) -> string",
    "trim": "trim(string) -> string",
    "substr": "substr(string, bigint, bigint) -> string",
    "push": "push(Vec<T>, T) -> Vec<T>",
}

GROUP_SIGNATURES: dict[str, str] = {
    "count": "count(Group<K, V>) -> bigint",
    "count_distinct": "count_distinct(Group<K, V>) -> bigint",
    "sum_of": "sum_of(Group<K, V>, |V| N) -> N, N numeric",
    "min": "min(Group<K, V>) -> V",
    "max": "max(Group<K, V>) -> V",
    "arg_min": "arg_min(Group<K, V>, |V| T) -> V",
    "arg_max": "arg_max(Group<K, V>, |V| T) -> V",
    "to_set": "to_set(Group<K, V>) -> Set<V>",
    "to_vec": "to_vec(Group<K, V>) -> Vec<V>",
    "key": "key(Group<K, V>) -> K",
    "first": "first(Group<K, V>) -> V",
}


class _Call:
    """One call being typed: argument access with messages that name the function."""

    def __init__(self, ck: "ExprChecker", call: ast.Call, sc: Scope, sig: str):
        self.ck, self.call, self.sc, self.sig = ck, call, sc, sig
        self.spans = [a.span for a in call.args]  # original spans, before any inlining

    def argname(self, i: int) -> str:
        if self.call.method:
            return "the receiver" if i == 0 else f"argument {i}"
        return f"argument {i + 1}"

    def arity(self, n: int) -> None:
        """Require `n` arguments (receiver included)."""
        found = len(self.call.args)
        if found == n:
            return
        f = self.call.func
        if self.call.method:
            msg = (f"method '{f}' expects {n - 1} argument{'' if n == 2 else 's'} after the "
                   f"receiver, found {found - 1}")
        else:
            msg = f"function '{f}' expects {n} argument{'' if n == 1 else 's'}, found {found}"
        raise error(f"{msg}: {self.sig}", self.call.span)

    def infer(self, i: int, hint: Type | None = None) -> Type:
        self.call.args[i] = self.ck.infer(self.call.args[i], self.sc, hint)
        return self.call.args[i].ty

    def check(self, i: int, t: Type) -> Type:
        what = f"{self.argname(i)} of '{self.call.func}'"
        self.call.args[i] = self.ck.check(self.call.args[i], self.sc, t, what)
        return t

    def want(self, i: int, ok: bool, desc: str) -> None:
        if not ok:
            t = self.call.args[i].ty
            raise error(f"function '{self.call.func}' expects {desc} as {self.argname(i)}, "
                        f"found {t}: {self.sig}", self.spans[i])


def _len(c: _Call, hint) -> Type:
    t = c.infer(0)
    c.want(0, t == STRING or isinstance(t, (TVec, TSet)), "string, Vec<T> or Set<T>")
    return BIGINT


def _contains(c: _Call, hint) -> Type:
    t = c.infer(0)
    c.want(0, t == STRING or isinstance(t, (TVec, TSet)), "string, Vec<T> or Set<T>")
    c.check(1, STRING if t == STRING else t.elem)
    return BOOL


def _option_test(c: _Call, hint) -> Type:
    c.want(0, isinstance(c.infer(0), TOption), "Option<T>")
    return BOOL


def _unwrap_or(c: _Call, hint) -> Type:
    if flexible(c.call.args[0]) and not flexible(c.call.args[1]):
        # `None.unwrap_or(x)`: the default decides T.
        t = c.infer(1, hint)
        c.check(0, TOption(t))
        return t
    t = c.infer(0, TOption(hint) if hint is not None else None)
    c.want(0, isinstance(t, TOption), "Option<T>")
    return c.check(1, t.elem)


def _to_string(c: _Call, hint) -> Type:
    c.want(0, is_scalar(c.infer(0)), "bool, an integer, a float or string")
    return STRING


def _abs(c: _Call, hint) -> Type:
    t = c.infer(0, hint if is_numeric(hint) else None)
    c.want(0, is_numeric(t), "an integer or float")
    return t


def _min_max(c: _Call, hint) -> Type:
    def validate(t: Type, span) -> None:
        if not is_scalar(t):
            raise error(f"function '{c.call.func}' expects two values of one scalar type, "
                        f"found {t}: {c.sig}", span)
    what = f"arguments of '{c.call.func}'"
    c.call.args[:] = c.ck.infer_same([(a, c.sc) for a in c.call.args], hint, validate, what)
    return c.call.args[0].ty


def _fixed(*types: Type, result: Type) -> Callable[[_Call, Type | None], Type]:
    def typer(c: _Call, hint) -> Type:
        for i, t in enumerate(types):
            c.check(i, t)
        return result
    return typer


def _push(c: _Call, hint) -> Type:
    if flexible(c.call.args[0]) and not flexible(c.call.args[1]):
        return c.check(0, TVec(c.infer(1)))  # `[].push(x)`
    t = c.infer(0, hint if isinstance(hint, TVec) else None)
    c.want(0, isinstance(t, TVec), "Vec<T>")
    c.check(1, t.elem)
    return t


_FUNCTION_TYPERS: dict[str, Callable[[_Call, Type | None], Type]] = {
    "len": _len,
    "contains": _contains,
    "is_some": _option_test,
    "is_none": _option_test,
    "unwrap_or": _unwrap_or,
    "to_string": _to_string,
    "abs": _abs,
    "min": _min_max,
    "max": _min_max,
    "starts_with": _fixed(STRING, STRING, result=BOOL),
    "ends_with": _fixed(STRING, STRING, result=BOOL),
    "to_uppercase": _fixed(STRING, result=STRING),
    "to_lowercase": _fixed(STRING, result=STRING),
    "trim": _fixed(STRING, result=STRING),
    "substr": _fixed(STRING, BIGINT, BIGINT, result=STRING),
    "push": _push,
}
assert set(_FUNCTION_TYPERS) == set(FUNCTIONS) == set(SIGNATURES)


def type_builtin(ck: "ExprChecker", call: ast.Call, sc: Scope, hint: Type | None) -> Type:
    c = _Call(ck, call, sc, SIGNATURES[call.func])
    c.arity(FUNCTIONS[call.func][0])
    return _FUNCTION_TYPERS[call.func](c, hint)


def type_group_method(ck: "ExprChecker", call: ast.Call, sc: Scope, hint: Type | None) -> Type:
    name = call.func
    c = _Call(ck, call, sc, GROUP_SIGNATURES[name])
    c.arity(1 + GROUP_METHODS[name])
    g = c.infer(0)
    c.want(0, isinstance(g, TGroup), "a Group (bound by group_by)")
    if name in ("count", "count_distinct"):
        return BIGINT
    if name in ("min", "max", "first"):
        return g.elem
    if name == "to_set":
        return TSet(g.elem)
    if name == "to_vec":
        return TVec(g.elem)
    if name == "key":
        return g.key
    lam = call.args[1]
    if not isinstance(lam, ast.Lambda):
        raise error(f"function '{name}' expects a lambda `|v| ...` as {c.argname(1)}: "
                    f"{c.sig}", lam.span)
    span = lam.body.span
    lam.body = ck.infer(lam.body, sc.extend({lam.param: g.elem}))
    r = lam.body.ty
    if name == "sum_of" and not is_numeric(r):
        raise error(f"function 'sum_of' expects a lambda returning a number, found {r}: "
                    f"{c.sig}", span)
    if isinstance(r, TFunc):
        raise error(f"function '{name}' expects a lambda returning a comparable value", span)
    lam.ty = TFunc(g.elem, r)
    return r if name == "sum_of" else g.elem
