"""A direct Python evaluator of typed DDlog expressions, for the oracle.

It walks the typed AST (every node's `ty` is set by the type checker) and computes the value in
the representation of ddlog/values.py, with the meaning of operators, built-ins and group methods
given in ddlog/builtins.py. It is written for clarity, not speed: one `if` per node kind.
"""
from __future__ import annotations

import math
import struct
from typing import Any, Callable, Mapping

from ddlog.syntax import ast
from ddlog.errors import EvaluationError
from ddlog.types import TBool, TFloat, TGroup, TInt, TOption, TSet, TString, TStruct, TTuple, Type
from ddlog.values import Group, Record, canonical_set, sort_key, wrap_int

Env = Mapping[str, Any]


# ---------------------------------------------------------------------------------------------
# Numbers


def round_float(x: float, t: TFloat) -> float:
    """`float` (32 bits) values are rounded to single precision after every operation, as
    Spark's FloatType would store them; `double` is Python's float."""
    if t.bits == 64 or math.isnan(x) or math.isinf(x):
        return float(x)
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:  # too large for single precision: IEEE rounds to infinity
        return math.copysign(math.inf, x)


def fix_number(x: Any, t: Type) -> Any:
    """Bring the result of an arithmetic operation into the range of its type."""
    if isinstance(t, TInt):
        return wrap_int(int(x), t)
    if isinstance(t, TFloat):
        return round_float(float(x), t)
    return x


def int_div(a: int, b: int, span) -> int:
    """Integer division truncating toward zero (Rust), not flooring (Python)."""
    if b == 0:
        raise EvaluationError("division by zero", span)
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int_rem(a: int, b: int, span) -> int:
    """Remainder with the sign of the dividend (Rust): a == b * (a / b) + a % b."""
    return a - b * int_div(a, b, span)


def float_div(a: float, b: float) -> float:
    """IEEE division: x / 0.0 is +-inf, 0/0 is NaN (Python would raise)."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def float_rem(a: float, b: float) -> float:
    """IEEE/Rust `%` on floats: the sign of the dividend (math.fmod), NaN for x % 0."""
    if b == 0.0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
        return math.nan
    return math.fmod(a, b)


# ---------------------------------------------------------------------------------------------
# Text


def render(v: Any, t: Type) -> str:
    """How `"${x}"` and `to_string` render a scalar: bool as true/false, integers in decimal,
    floats like Python's repr, strings as they are."""
    if isinstance(t, TBool):
        return "true" if v else "false"
    if isinstance(t, TInt):
        return str(v)
    if isinstance(t, TFloat):
        return repr(float(v))
    if isinstance(t, TString):
        return v
    # Not a scalar: builtins.py only defines scalars; fall back to the dump format.
    from ddlog.values import format_value
    return format_value(v, t)


_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# ---------------------------------------------------------------------------------------------
# Comparison


def compare(op: str, a: Any, b: Any) -> bool:
    """`== != < <= > >=` on two values of one type. Scalars compare as Python does (so NaN is
    unordered, as in IEEE); other values by `values.sort_key`."""
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    scalar = isinstance(a, (bool, int, float, str)) and isinstance(b, (bool, int, float, str))
    x, y = (a, b) if scalar else (sort_key(a), sort_key(b))
    if op == "<":
        return x < y
    if op == "<=":
        return x <= y
    if op == ">":
        return x > y
    if op == ">=":
        return x >= y
    raise EvaluationError(f"unknown comparison {op}")


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
    if isinstance(e, ast.TupleLit):
        return tuple(evaluate(x, env) for x in e.items)
    if isinstance(e, ast.VecLit):
        items = [evaluate(x, env) for x in e.items]
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
        raise EvaluationError("a lambda is only allowed as a group method argument", e.span)
    raise EvaluationError(f"cannot evaluate {type(e).__name__}", getattr(e, "span", None))


def literal(e: ast.Lit) -> Any:
    t = e.ty
    if isinstance(t, TInt):
        return wrap_int(int(e.value), t)
    if isinstance(t, TFloat):
        return round_float(float(e.value), t)
    return e.value


def shift(op: str, a: int, n: int, t: TInt) -> int:
    """DDlog's shifts: the amount (a bit<32>) is taken modulo the width of `t` rounded up to a
    power of two, so shifting a bit<10> by 10 to 15 gives 0 and by 16 does nothing; `>>` is
    arithmetic on signed types; bigint shifts are exact (a multiplication or a floor division
    by 2^n)."""
    if t.width is None:
        return a << n if op == "<<" else a >> n
    n %= 1 << (t.width - 1).bit_length()
    if n >= t.width:
        return 0 if op == "<<" or a >= 0 else -1
    return wrap_int(a << n if op == "<<" else a >> n, t)


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
# Built-in functions and group methods (ddlog/builtins.py)


def call(e: ast.Call, env: Env) -> Any:
    if e.args and isinstance(e.args[0].ty, TGroup):
        return group_method(e, env)
    args = [evaluate(a, env) for a in e.args]
    types = [a.ty for a in e.args]
    f, t = e.func, e.ty
    if f == "len":
        return len(args[0])
    if f == "contains":
        return args[1] in args[0]  # substring for strings, membership for Vec/Set
    if f == "is_some":
        return args[0] is not None
    if f == "is_none":
        return args[0] is None
    if f == "unwrap_or":
        return args[1] if args[0] is None else args[0]
    if f == "to_string":
        return render(args[0], types[0])
    if f == "abs":
        return fix_number(abs(args[0]), t)
    if f == "min":
        return args[0] if not compare("<", args[1], args[0]) else args[1]
    if f == "max":
        return args[0] if not compare(">", args[1], args[0]) else args[1]
    if f == "starts_with":
        return args[0].startswith(args[1])
    if f == "ends_with":
        return args[0].endswith(args[1])
    if f == "to_uppercase":
        return args[0].translate(_UPPER)
    if f == "to_lowercase":
        return args[0].translate(_LOWER)
    if f == "trim":
        return args[0].strip(" ")
    if f == "substr":
        s, start, end = args
        start = min(max(start, 0), len(s))
        end = min(max(end, start), len(s))
        return s[start:end]
    if f == "push":
        return args[0] + (args[1],)
    raise EvaluationError(f"unknown function {f}", e.span)


def lambda_fn(lam: ast.Expr, env: Env) -> Callable[[Any], Any]:
    if not isinstance(lam, ast.Lambda):
        raise EvaluationError("a group method expects a lambda `|v| e`", lam.span)
    return lambda v: evaluate(lam.body, {**env, lam.param: v})


def group_method(e: ast.Call, env: Env) -> Any:
    g: Group = evaluate(e.args[0], env)
    items = g.items  # sorted by sort_key, duplicates kept, never empty
    f, t = e.func, e.ty
    if f == "count":
        return len(items)
    if f == "count_distinct":
        return len(set(items))
    if f == "sum_of":
        fn = lambda_fn(e.args[1], env)
        total = 0.0 if isinstance(t, TFloat) else 0
        for v in items:  # in element order, fixing the width after each addition
            total = fix_number(total + fn(v), t)
        return total
    if f in ("min", "first"):
        return items[0]
    if f == "max":
        return items[-1]
    if f in ("arg_min", "arg_max"):
        fn = lambda_fn(e.args[1], env)
        best = items[0]
        for v in items[1:]:  # items ascend, so keeping the first best breaks ties to smallest
            if compare("<" if f == "arg_min" else ">", fn(v), fn(best)):
                best = v
        return best
    if f == "to_set":
        return canonical_set(items)
    if f == "to_vec":
        return tuple(items)
    if f == "key":
        return g.key
    raise EvaluationError(f"unknown group method {f}", e.span)
