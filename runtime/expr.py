"""Compiles typed expressions (ddlog/ast.py, ddlog/circuit.Col) to Spark `Column`s.

No Python UDFs: every construct maps to Spark SQL expressions, including the group methods,
which become higher-order array functions (transform/filter/aggregate) over the group's items.
Semantics follow ddlog/builtins.py: bit<N>/signed<N> wrap, `/` truncates toward zero, `%` has
the sign of the dividend, `None` is null and sorts first.
"""
from __future__ import annotations

from typing import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ddlog.syntax import ast
from ddlog.plan.circuit import Col, var_col
from ddlog.limits import recursion_room
from ddlog.types import (TBool, TFloat, TGroup, TInt, TOption, TSet, TString, TStruct, TTuple,
                         Type)
from runtime.schema import spark_type

Env = dict[str, Column]


def wrap(c: Column, t: Type) -> Column:
    """Reduce an integer column to the range of `t`."""
    if not isinstance(t, TInt) or t.width is None or t.width >= 64:
        return c
    m = 1 << t.width
    if t.signed:
        h = m >> 1
        return F.pmod(c + F.lit(h), F.lit(m)) - F.lit(h)
    return F.pmod(c, F.lit(m))


def lit(value: object, t: Type | None) -> Column:
    if value is None:
        return F.lit(None).cast(spark_type(t))
    if t is not None and not isinstance(t, TOption):
        return F.lit(value).cast(spark_type(t))
    return F.lit(value)


@recursion_room()
def compile_expr(e, env: Env | None = None) -> Column:
    return _Compiler(env or {}).expr(e)


class _Compiler:
    def __init__(self, env: Env):
        self.env = env

    def with_env(self, extra: Env) -> "_Compiler":
        return _Compiler({**self.env, **extra})

    def expr(self, e) -> Column:
        method = getattr(self, "e_" + type(e).__name__)
        return method(e)

    # -- leaves ---------------------------------------------------------------------------

    def e_Col(self, e: Col) -> Column:
        return F.col(e.name)

    def e_Var(self, e: ast.Var) -> Column:
        if e.name in self.env:
            return self.env[e.name]
        return F.col(var_col(e.name))

    def e_Lit(self, e: ast.Lit) -> Column:
        return lit(e.value, e.ty)

    def e_Interp(self, e: ast.Interp) -> Column:
        parts = [F.lit(p) if isinstance(p, str) else to_string(self.expr(p), p.ty)
                 for p in e.parts]
        return F.concat(*parts) if parts else F.lit("")

    # -- operators ------------------------------------------------------------------------

    def e_UnOp(self, e: ast.UnOp) -> Column:
        x = self.expr(e.operand)
        if e.op == "not":
            return ~x
        if e.op == "-":
            return wrap(-x, e.ty)
        if e.op == "~":
            return wrap(F.bitwise_not(x), e.ty)
        raise ValueError(e.op)

    def e_BinOp(self, e: ast.BinOp) -> Column:
        a, b = self.expr(e.left), self.expr(e.right)
        op, t = e.op, e.ty
        lt = e.left.ty
        if op == "and":
            return a & b
        if op == "or":
            return a | b
        if op == "==":
            return a.eqNullSafe(b)
        if op == "!=":
            return ~a.eqNullSafe(b)
        if op in ("<", "<=", ">", ">="):
            return compare(a, b, op, lt)
        if op == "++":
            return F.concat(a, b)
        if op == "+":
            return wrap(a + b, t)
        if op == "-":
            return wrap(a - b, t)
        if op == "*":
            return wrap(a * b, t)
        if op == "/":
            if isinstance(t, TFloat):
                return (a / b).cast(spark_type(t))
            # `div` truncates toward zero (Rust semantics); ANSI mode fails on a zero divisor.
            return wrap(F.call_function("div", a, b), t)
        if op == "%":
            if isinstance(t, TFloat):
                return a % b
            return wrap(a % b, t)
        if op == "&":
            return a.bitwiseAND(b)
        if op == "|":
            return a.bitwiseOR(b)
        if op == "^":
            return a.bitwiseXOR(b)
        if op in ("<<", ">>"):
            return shift(op, a, b, t)
        raise ValueError(op)

    def e_IfExpr(self, e: ast.IfExpr) -> Column:
        return F.when(self.expr(e.cond), self.expr(e.then)).otherwise(self.expr(e.other))

    def e_Cast(self, e: ast.Cast) -> Column:
        x = self.expr(e.expr)
        return wrap(x.cast(spark_type(e.ty)), e.ty)

    # -- data -----------------------------------------------------------------------------

    def e_TupleLit(self, e: ast.TupleLit) -> Column:
        return F.struct(*[self.expr(x).alias(f"_{k}") for k, x in enumerate(e.items)])

    def e_VecLit(self, e: ast.VecLit) -> Column:
        t = e.ty
        if not e.items:
            return F.array().cast(spark_type(t))
        arr = F.array(*[self.expr(x) for x in e.items])
        return canonical_set(arr) if isinstance(t, TSet) else arr

    def e_StructLit(self, e: ast.StructLit) -> Column:
        t = e.ty
        if isinstance(t, TOption):
            if e.ctor == "None":
                return lit(None, t.elem)
            return self.expr(e.fields[0][1])
        ctor = t.ctor(e.ctor)
        values = self.ctor_fields(e.fields, [n for n, _ in ctor.fields])
        inner = F.struct(*[values[n].alias(n) for n, _ in ctor.fields]) if ctor.fields else None
        if not t.is_enum:
            return inner
        parts = [F.lit(e.ctor).alias("_tag")]
        for c in t.ctors:
            if not c.fields:
                continue
            if c.name == e.ctor:
                parts.append(inner.alias(c.name))
            else:
                parts.append(F.lit(None).cast(spark_type(t)[c.name].dataType).alias(c.name))
        return F.struct(*parts)

    def ctor_fields(self, fields, names: list[str]) -> dict[str, Column]:
        out: dict[str, Column] = {}
        for k, (name, x) in enumerate(fields):
            out[name if name is not None else names[k]] = self.expr(x)
        return out

    def e_FieldAccess(self, e: ast.FieldAccess) -> Column:
        x = self.expr(e.expr)
        t = e.expr.ty
        if isinstance(t, TTuple):
            return x.getField(f"_{e.name}")
        if isinstance(t, TStruct):
            if not t.is_enum:
                return x.getField(e.name)
            out = None
            for c in t.ctors:
                if c.field_type(e.name) is None:
                    continue
                val = x.getField(c.name).getField(e.name)
                out = F.when(x.getField("_tag") == c.name, val) if out is None \
                    else out.when(x.getField("_tag") == c.name, val)
            return out
        raise TypeError(f"field access on {t}")

    def e_MatchExpr(self, e: ast.MatchExpr) -> Column:
        s = self.expr(e.scrutinee)
        out = None
        for arm in e.arms:
            cond, binds = pattern(arm.pattern, s)
            body = self.with_env(binds).expr(arm.body)
            out = F.when(cond, body) if out is None else out.when(cond, body)
        return out

    def e_Lambda(self, e: ast.Lambda) -> Column:  # pragma: no cover - only via group methods
        raise TypeError("a lambda is only allowed as a group method argument")

    # -- calls ----------------------------------------------------------------------------

    def lam(self, e: ast.Lambda) -> Callable[[Column], Column]:
        return lambda x: self.with_env({e.param: x}).expr(e.body)

    def e_Call(self, e: ast.Call) -> Column:
        if e.args and isinstance(e.args[0].ty, TGroup):
            return self.group_method(e)
        args = [self.expr(a) for a in e.args]
        f, t0 = e.func, e.args[0].ty if e.args else None
        if f == "len":
            return F.length(args[0]).cast("long") if isinstance(t0, TString) \
                else F.size(args[0]).cast("long")
        if f == "contains":
            if isinstance(t0, TString):
                return args[0].contains(args[1])
            return F.array_contains(args[0], args[1])
        if f == "is_some":
            return args[0].isNotNull()
        if f == "is_none":
            return args[0].isNull()
        if f == "unwrap_or":
            return F.coalesce(args[0], args[1])
        if f == "to_string":
            return to_string(args[0], t0)
        if f == "abs":
            return wrap(F.abs(args[0]), e.ty)
        if f == "min":
            return F.when(compare(args[0], args[1], "<=", t0), args[0]).otherwise(args[1])
        if f == "max":
            return F.when(compare(args[0], args[1], ">=", t0), args[0]).otherwise(args[1])
        if f == "starts_with":
            return args[0].startswith(args[1])
        if f == "ends_with":
            return args[0].endswith(args[1])
        if f == "to_uppercase":
            return F.upper(args[0])
        if f == "to_lowercase":
            return F.lower(args[0])
        if f == "trim":
            return F.trim(args[0])
        if f == "substr":
            n = F.length(args[0]).cast("long")
            start = F.least(F.greatest(args[1], F.lit(0)), n)
            end = F.least(F.greatest(args[2], start), n)
            return args[0].substr((start + 1).cast("int"), (end - start).cast("int"))
        if f == "push":
            return F.concat(args[0], F.array(args[1]))
        raise ValueError(f"unknown built-in {f}")

    def group_method(self, e: ast.Call) -> Column:
        g = self.expr(e.args[0])
        items = g.getField("items")
        f = e.func
        if f == "count":
            return F.size(items).cast("long")
        if f == "count_distinct":
            return F.size(F.array_distinct(items)).cast("long")
        if f == "sum_of":
            fn = self.lam(e.args[1])
            zero = lit(0, e.ty)
            return wrap(F.aggregate(F.transform(items, fn), zero, lambda acc, x: acc + x), e.ty)
        if f in ("min", "first"):
            return F.element_at(items, 1)
        if f == "max":
            return F.element_at(items, -1)
        if f in ("arg_min", "arg_max"):
            fn = self.lam(e.args[1])
            best = (F.array_min if f == "arg_min" else F.array_max)(F.transform(items, fn))
            # items are sorted, so the first match is the smallest element among ties
            return F.element_at(F.filter(items, lambda x: fn(x).eqNullSafe(best)), 1)
        if f == "to_set":
            return F.array_distinct(items)
        if f == "to_vec":
            return items
        if f == "key":
            return g.getField("key")
        raise ValueError(f"unknown group method {f}")


def shift(op: str, a: Column, n: Column, t: TInt) -> Column:
    """DDlog's shifts (the oracle's `shift` says the same in Python): the amount `n` (a
    bit<32>) is taken modulo the width of `t` rounded up to a power of two; shifting by the
    width or more (up to that power) gives 0, or the sign on a signed `>>`; bigint shifts are
    exact, and a result that leaves the 64 bits a bigint is stored in is an error, as `+` and
    `*` overflow are."""
    shl = lambda x, k: F.call_function("shiftleft", x, k.cast("int"))  # noqa: E731
    shr = lambda x, k: F.call_function("shiftright", x, k.cast("int"))  # noqa: E731
    width = t.width
    if width is not None and width <= 64:
        m = n % F.lit((1 << (width - 1).bit_length()))
        if op == ">>":
            sign = shr(a, F.lit(63)) if t.signed else F.lit(0).cast("long")
            return F.when(m >= width, sign).otherwise(shr(a, m))
        out = F.when(m >= width, F.lit(0).cast("long")).otherwise(wrap(shl(a, m), t))
        if width == 64 and not t.signed:  # a u64 above 2^63 has no Long to live in
            out = F.when(out < 0, F.raise_error(F.lit(
                f"integer overflow: a shift left does not fit in {t} (stored in 64 bits)")))\
                .otherwise(out)
        return out
    # bigint, and bit<N>/signed<N> wider than the Long they are stored in: exact
    if width is not None:
        n = n % F.lit(1 << (width - 1).bit_length())
    if op == ">>":
        return shr(a, F.least(n, F.lit(63)))
    overflow = F.raise_error(F.lit(f"integer overflow: a shift left does not fit in {t} "
                                   f"(stored in 64 bits)"))
    exact = F.try_multiply(a, shl(F.lit(1).cast("long"), F.least(n, F.lit(62))))
    return (F.when(a == 0, F.lit(0).cast("long"))
            .when((n == 63) & (a == -1), F.lit(-(1 << 63)).cast("long"))
            .when((n >= 63) | exact.isNull(), overflow)
            .otherwise(exact))


def canonical_set(arr: Column) -> Column:
    return F.sort_array(F.array_distinct(arr))


def compare(a: Column, b: Column, op: str, t: Type | None) -> Column:
    """Ordering comparison; for Options, None sorts before every Some."""
    plain = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if not isinstance(t, TOption):
        return plain
    if op == "<":
        return F.when(a.isNull(), b.isNotNull()).when(b.isNull(), F.lit(False)).otherwise(plain)
    if op == "<=":
        return F.when(a.isNull(), F.lit(True)).when(b.isNull(), F.lit(False)).otherwise(plain)
    if op == ">":
        return F.when(b.isNull(), a.isNotNull()).when(a.isNull(), F.lit(False)).otherwise(plain)
    return F.when(b.isNull(), F.lit(True)).when(a.isNull(), F.lit(False)).otherwise(plain)


def to_string(c: Column, t: Type) -> Column:
    if isinstance(t, TString):
        return c
    if isinstance(t, TBool):
        return F.when(c, F.lit("true")).otherwise(F.lit("false"))
    return c.cast("string")


def pattern(p: ast.Pattern, s: Column) -> tuple[Column, Env]:
    """The condition under which `s` matches `p`, and the variables it binds."""
    if isinstance(p, ast.PWild):
        return F.lit(True), {}
    if isinstance(p, ast.PVar):
        return F.lit(True), {p.name: s}
    if isinstance(p, ast.PLit):
        return s.eqNullSafe(lit(p.lit.value, p.ty)), {}
    if isinstance(p, ast.PTuple):
        return _all([pattern(q, s.getField(f"_{k}")) for k, q in enumerate(p.items)])
    if isinstance(p, ast.PCtor):
        t = p.ty
        if isinstance(t, TOption):
            if p.ctor == "None":
                return s.isNull(), {}
            cond, binds = pattern(p.fields[0][1], s)
            return s.isNotNull() & cond, binds
        ctor = t.ctor(p.ctor)
        names = [n for n, _ in ctor.fields]
        base = s if not t.is_enum else s.getField(p.ctor)
        parts = [pattern(q, base.getField(n if n is not None else names[k]))
                 for k, (n, q) in enumerate(p.fields)]
        cond, binds = _all(parts)
        if t.is_enum:
            cond = (s.getField("_tag") == F.lit(p.ctor)) & cond
        return cond, binds
    raise TypeError(p)


def _all(parts: list[tuple[Column, Env]]) -> tuple[Column, Env]:
    cond: Column = F.lit(True)
    binds: Env = {}
    for c, b in parts:
        cond = cond & c
        binds.update(b)
    return cond, binds
