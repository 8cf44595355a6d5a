"""A direct Python evaluator of typed DDlog expressions, for the oracle.

It walks the typed AST (every node's `ty` is set by the type checker) and computes the value in
the representation of ddlog/values/, with the meaning of operators given in ddlog/values/ops.py
and of built-ins and group methods in ddlog/builtins/. It is written for clarity, not speed: one
`if` per node kind.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from ddlog.builtins import lookup
from ddlog.errors import EvaluationError
from ddlog.syntax import ast
from ddlog.types import TFloat, TGroup, TInt, TMap, TOption, TSet, TString, TStruct, TTuple, Type
from ddlog.values import Record, canonical_map, canonical_set, wrap_int
from ddlog.values.ops import (compare, fix_number, float_div, float_rem, int_div, int_rem, render,
                              round_float, shift)

Env = Mapping[str, Any]


# ---------------------------------------------------------------------------------------------
# The evaluator


def evaluate(e: ast.Expr, env: Env) -> Any:
    """The value of expression `e` with the variables of `env` bound."""
    t = e.ty
    if isinstance(e, ast.Var):
        if e.name not in env:
            raise EvaluationError(f"unbound variable {e.name}", e.span)
        return env[e.name]
    if isinstance(e, ast.Lit):
        return literal(e)
    if isinstance(e, ast.Interp):
        return "".join(p if isinstance(p, str) else render(evaluate(p, env), p.ty)
                       for p in e.parts)
    if isinstance(e, ast.BinOp):
        return binop(e, env)
    if isinstance(e, ast.UnOp):
        x = evaluate(e.operand, env)
        if e.op == "not":
            return not x
        if e.op == "-":
            return fix_number(-x, t)
        if e.op == "~":
            return wrap_int(~x, t)
        raise EvaluationError(f"unknown unary operator {e.op}", e.span)
    if isinstance(e, ast.Call):
        return call(e, env)
    if isinstance(e, ast.FieldAccess):
        return field_access(e, env)
    if isinstance(e, ast.With):
        return with_field(e, env)
    if isinstance(e, ast.TupleLit):
        return tuple(evaluate(x, env) for x in e.items)
    if isinstance(e, ast.VecLit):
        items = [evaluate(x, env) for x in e.items]
        if isinstance(t, TMap):
            return canonical_map(items)
        return canonical_set(items) if isinstance(t, TSet) else tuple(items)
    if isinstance(e, ast.StructLit):
        return construct(e, env)
    if isinstance(e, ast.IfExpr):
        return evaluate(e.then if evaluate(e.cond, env) else e.other, env)
    if isinstance(e, ast.MatchExpr):
        x = evaluate(e.scrutinee, env)
        for arm in e.arms:
            bound = match_pattern(arm.pattern, x, env)
            if bound is not None:
                return evaluate(arm.body, bound)
        raise EvaluationError("no match arm matches the value", e.span)
    if isinstance(e, ast.Cast):
        return cast(evaluate(e.expr, env), e.expr.ty, t, e.span)
    if isinstance(e, ast.Wildcard):
        raise EvaluationError("`_` is not an expression", e.span)
    if isinstance(e, ast.Lambda):
        raise EvaluationError("a closure is only allowed as a built-in's argument", e.span)
    raise EvaluationError(f"cannot evaluate {type(e).__name__}", getattr(e, "span", None))


def literal(e: ast.Lit) -> Any:
    t = e.ty
    if isinstance(t, TInt):
        return wrap_int(int(e.value), t)
    if isinstance(t, TFloat):
        return round_float(float(e.value), t)
    return e.value


def binop(e: ast.BinOp, env: Env) -> Any:
    op, t = e.op, e.ty
    # `and`/`or` short-circuit, so `x != 0 and 10 / x > 1` never divides by zero.
    if op == "and":
        return bool(evaluate(e.left, env)) and bool(evaluate(e.right, env))
    if op == "or":
        return bool(evaluate(e.left, env)) or bool(evaluate(e.right, env))
    a, b = evaluate(e.left, env), evaluate(e.right, env)
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return compare(op, a, b)
    if op == "++":
        if isinstance(t, TInt):  # bit vectors: a's bits above b's
            return fix_number((a << e.right.ty.width) | b, t)
        return a + b  # str + str, or tuple + tuple for Vecs
    if op in ("+", "-", "*"):
        r = a + b if op == "+" else a - b if op == "-" else a * b
        return fix_number(r, t)
    if op == "/":
        if isinstance(t, TFloat):
            return round_float(float_div(a, b), t)
        return wrap_int(int_div(a, b, e.span), t)
    if op == "%":
        if isinstance(t, TFloat):
            return round_float(float_rem(a, b), t)
        return wrap_int(int_rem(a, b, e.span), t)
    if op in ("&", "|", "^"):
        r = a & b if op == "&" else a | b if op == "|" else a ^ b
        return wrap_int(r, t)
    if op in ("<<", ">>"):
        return shift(op, a, b, t)
    raise EvaluationError(f"unknown operator {op}", e.span)


def cast(x: Any, src: Type, dst: Type, span) -> Any:
    """`x as T`: integers wrap into the target width; float -> integer truncates toward zero
    (NaN and infinities are errors here); bool -> integer is 0/1."""
    if isinstance(dst, TInt):
        if isinstance(x, float):
            if math.isnan(x) or math.isinf(x):
                raise EvaluationError(f"cannot cast {x} to {dst}", span)
            x = math.trunc(x)
        return wrap_int(int(x), dst)
    if isinstance(dst, TFloat):
        return round_float(float(x), dst)
    if isinstance(dst, TString):
        return render(x, src)
    return x  # same type (e.g. bool as bool)


def construct(e: ast.StructLit, env: Env) -> Any:
    """A constructor application: Option ctors give the inner value or None; user ctors give a
    Record with the fields in declaration order (named or positional in the source)."""
    t = e.ty
    if isinstance(t, TOption):
        if e.ctor == "None":
            return None
        return evaluate(e.fields[0][1], env)
    if not isinstance(t, TStruct):
        raise EvaluationError(f"constructor {e.ctor} of non-struct type {t}", e.span)
    ctor = t.ctor(e.ctor)
    if ctor is None:
        raise EvaluationError(f"type {t} has no constructor {e.ctor}", e.span)
    if all(name is None for name, _ in e.fields):
        values = [evaluate(x, env) for _, x in e.fields]
    else:
        given = {name: x for name, x in e.fields}
        values = [evaluate(given[name], env) for name, _ in ctor.fields]
    return Record(e.ctor, tuple(values))


def with_field(e: ast.With, env: Env) -> Any:
    x, value, t = evaluate(e.expr, env), evaluate(e.value, env), e.expr.ty
    if isinstance(t, TTuple):
        i = int(e.name)
        return x[:i] + (value,) + x[i + 1:]
    names = [n for n, _ in t.ctor(x.ctor).fields]
    i = names.index(e.name)
    return Record(x.ctor, x.values[:i] + (value,) + x.values[i + 1:])


def field_access(e: ast.FieldAccess, env: Env) -> Any:
    x = evaluate(e.expr, env)
    t = e.expr.ty
    if isinstance(t, TTuple):
        return x[int(e.name)]
    if isinstance(t, TStruct):
        ctor = t.ctor(x.ctor)
        names = [n for n, _ in ctor.fields]
        if e.name not in names:
            raise EvaluationError(f"constructor {x.ctor} has no field {e.name}", e.span)
        return x.values[names.index(e.name)]
    if isinstance(t, TGroup) and e.name == "key":
        return x.key
    raise EvaluationError(f"no field {e.name} in a value of type {t}", e.span)


# ---------------------------------------------------------------------------------------------
# Patterns


def match_pattern(p: ast.Pattern, x: Any, env: Env) -> dict | None:
    """Match value `x` against pattern `p`; the extended environment, or None if no match."""
    if isinstance(p, ast.PWild):
        return dict(env)
    if isinstance(p, ast.PVar):
        return {**env, p.name: x}
    if isinstance(p, ast.PLit):
        lit = p.lit
        if lit.ty is None:
            lit.ty = p.ty
        return dict(env) if literal(lit) == x else None
    if isinstance(p, ast.PTuple):
        out: dict | None = dict(env)
        for sub, v in zip(p.items, x):
            out = match_pattern(sub, v, out)
            if out is None:
                return None
        return out
    if isinstance(p, ast.PCtor):
        t = p.ty
        if isinstance(t, TOption):
            if p.ctor == "None":
                return dict(env) if x is None else None
            if x is None:
                return None
            return match_pattern(p.fields[0][1], x, env) if p.fields else dict(env)
        if not isinstance(t, TStruct):
            raise EvaluationError(f"constructor pattern {p.ctor} on type {t}", p.span)
        if x.ctor != p.ctor:
            return None
        names = [n for n, _ in t.ctor(p.ctor).fields]
        out = dict(env)
        for i, (name, sub) in enumerate(p.fields):
            v = x.values[i if name is None else names.index(name)]
            out = match_pattern(sub, v, out)
            if out is None:
                return None
        return out
    raise EvaluationError(f"unknown pattern {type(p).__name__}", getattr(p, "span", None))


# ---------------------------------------------------------------------------------------------
# Built-in functions and group methods: their Python meaning is in ddlog/builtins/


def call(e: ast.Call, env: Env) -> Any:
    builtin = lookup(e.func, len(e.args))
    if builtin is None:
        raise EvaluationError(f"unknown function {e.func}", e.span)
    args = [lambda_fn(a, env) if isinstance(a, ast.Lambda) else evaluate(a, env)
            for a in e.args]
    return builtin.python(args, [a.ty for a in e.args], e.ty)


def lambda_fn(lam: ast.Lambda, env: Env) -> Callable[..., Any]:
    return lambda *vs: evaluate(lam.body, {**env, **dict(zip(lam.params, vs))})
