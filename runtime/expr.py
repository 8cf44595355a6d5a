"""Compiles circuit IR expressions (ddlog/plan/exprs.py) to Spark `Column`s.

No Python UDFs: every construct maps to Spark SQL expressions. Built-in functions and group
methods are lowered by their own entries (ddlog/builtins/), through the `SparkLowering`
toolkit below; group methods become higher-order array functions over the group's items.
Semantics: bit<N>/signed<N> wrap, `/` truncates toward zero, `%` has the sign of the dividend,
shifts as DDlog does them (`shift`), `None` is null and sorts first.
"""
from __future__ import annotations

from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ddlog.builtins import CLOSURE_OPS, FUNCTIONS, GROUP_METHODS, Builtin
from ddlog.limits import recursion_room
from ddlog.plan import exprs as ir
from ddlog.types import (TAny, TBool, TFloat, TInt, TMap, TOption, TSet, TString, TStruct, TTuple,
                         TVec, Type, contains_u64, is_u64, is_wide)
from ddlog.runtime import wide
from ddlog.runtime.hashing import xxhash64
from ddlog.runtime.backend import col
from ddlog.runtime.schema import spark_type, to_spark
from ddlog.runtime.wide import bind as let
from ddlog.runtime.wide import long_bits, u64_from_decimal, unsigned_value

Env = dict[str, Column]


def wrap(c: Column, t: Type) -> Column:
    """Reduce an integer column to the range of `t`."""
    if not isinstance(t, TInt) or t.width is None:
        return c
    if t.width >= 64:
        # a Long holds every value of bit<64> and signed<64> as its 64 bits; wider values
        # are wrapped as they are made (runtime/wide.py)
        return c
    m = 1 << t.width
    if t.signed:
        h = m >> 1
        return F.pmod(c + F.lit(h), F.lit(m)) - F.lit(h)
    return F.pmod(c, F.lit(m))


_DEC = "decimal(20,0)"
_LONG_MIN = -(1 << 63)


def order_key(c: Column, t: Type) -> Column:
    """A Column whose Spark order is DDlog's order of `c`'s values: the same column, except
    that each bit<64> inside has its sign bit flipped (so 2^63 and up sort after 2^63 - 1)."""
    if not contains_u64(t):
        return c
    if is_u64(t):
        return c.bitwiseXOR(F.lit(_LONG_MIN))
    if isinstance(t, TOption):
        return order_key(c, t.elem)
    if isinstance(t, TTuple):
        return F.struct(*[order_key(c.getField(f"_{k}"), it).alias(f"_{k}")
                          for k, it in enumerate(t.items)])
    if isinstance(t, (TVec, TSet, TMap)):
        return F.transform(c, lambda x: order_key(x, t.elem))
    if isinstance(t, TStruct):
        def fields(s: Column, ctor) -> Column:
            return F.struct(*[order_key(s.getField(n), ft).alias(n) for n, ft in ctor.fields])
        if not t.is_enum:
            return fields(c, t.ctors[0])
        return F.struct(c.getField("_tag").alias("_tag"),
                        *[fields(c.getField(k.name), k).alias(k.name) for k in t.ctors
                          if k.fields])
    return c


def sort(arr: Column, elem: Type | None) -> Column:
    """An array sorted in DDlog's order of its elements (`elem`: their type)."""
    if elem is None or not contains_u64(elem):
        return F.sort_array(arr)
    keyed = F.transform(arr, lambda x: F.struct(order_key(x, elem).alias("k"), x.alias("v")))
    return F.transform(F.sort_array(keyed), lambda p: p["v"])


def arith(op: str, a: Column, b: Column, t: Type) -> Column:
    """`a + b`, `a - b`, `a * b` in the type `t`: bigint overflow is an error (ANSI mode),
    fixed widths wrap. Where the exact result of two values of the width may leave the Long
    (a sum from 63 bits, a product from 32), ANSI arithmetic would fail: there the Long
    operation is tried and, when it overflows, the result is taken from decimals (same bits
    modulo 2^64, then the type's width)."""
    if is_wide(t):
        f = {"+": wide.add, "-": wide.subtract, "*": wide.multiply}[op]
        return wide.join(f(wide.words(a, t), wide.words(b, t)), t)
    plain = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b}[op]
    if not isinstance(t, TInt) or t.width is None:
        return wrap(plain(), t)
    if t.width <= (31 if op == "*" else 62):
        return wrap(plain(), t)
    tried = {"+": F.try_add, "-": F.try_subtract, "*": F.try_multiply}[op](a, b)
    x, y = a.cast(_DEC), b.cast(_DEC)
    exact = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y}[op]()
    return wrap(F.coalesce(tried, long_bits(exact)), t)


def lit(value: object, t: Type | None) -> Column:
    if is_wide(t) and value is not None:
        return wide.literal(value, t)
    if isinstance(t, TInt) and value is not None:
        value = to_spark(value, t)  # a bit<64> from 2^63 up: its bits in a Long
    if value is None:
        return F.lit(None).cast(spark_type(t))
    if t is not None and not isinstance(t, TOption):
        return F.lit(value).cast(spark_type(t))
    return F.lit(value)


def canonical_set(arr: Column, t: Type) -> Column:
    """A Set (of type `t`) from its elements: without duplicates, sorted."""
    return sort(F.array_distinct(arr), t.elem if isinstance(t, TSet) else None)


def canonical_map(arr: Column, t: Type) -> Column:
    """A Map (of type `t`) from its entries (structs _0 key, _1 value) in order: an entry is
    kept unless a later one has its key (the last insert wins), then sorted by key."""
    def later_same_key(e: Column, i: Column) -> Column:
        same = F.transform(arr, lambda f, j: (j > i) & f["_0"].eqNullSafe(e["_0"]))
        return F.exists(same, lambda b: b)
    return sort(F.filter(arr, lambda e, i: ~later_same_key(e, i)),
                t.elem if isinstance(t, TMap) else None)


def compare(a: Column, b: Column, op: str, t: Type | None) -> Column:
    """Ordering comparison; for Options, None sorts before every Some."""
    if t is not None and contains_u64(t):
        a, b = order_key(a, t), order_key(b, t)
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
    if is_u64(t):
        return F.when(c >= 0, c.cast("string")).otherwise(unsigned_value(c).cast("string"))
    if is_wide(t):
        return wide.text(wide.words(c, t), t.signed)
    if isinstance(t, TFloat):
        return float_text(c, t.bits)
    return c.cast("string")


def hex_digits(c: Column, t: TInt) -> Column:
    """Lower-case hexadecimal digits of an integer, a negative one as its two's complement in
    its width (a bigint's: 64 bits), as Rust's `{:x}`."""
    if is_wide(t):
        return wide.hex_digits(wide.words(c, t), t)
    return F.lower(F.hex(wrap(c, TInt(False, t.width)) if t.width and t.width < 64 else c))


def absolute(c: Column, t: Type) -> Column:
    """`abs`: wraps as Rust's does (the smallest signed value stays itself)."""
    if is_u64(t) or (is_wide(t) and not t.signed):
        return c
    if is_wide(t):
        w = wide.words(c, t)
        return F.when(w[0] < 0, wide.join(wide.negate(w), t)).otherwise(c)
    return wrap(F.abs(c), t)


def float_divide(op: str, a: Column, b: Column, t: TFloat) -> Column:
    """`/` and `%` on floats as IEEE (and Rust) define them where Spark's fail or give null: x
    / ±0.0 is an infinity of the two signs, 0 / 0 NaN; x % 0, inf % x and NaN % x are NaN."""
    nan = F.lit(float("nan"))
    if op == "%":
        return F.when((b == 0) | F.isnan(a) | F.isnan(b) | (F.abs(a) == F.lit(float("inf"))),
                      nan).otherwise(a % b).cast(spark_type(t))
    below = F.startswith(b.cast("string"), F.lit("-")) != (a < 0)  # b's sign, -0.0's too
    inf = F.when(below, F.lit(float("-inf"))).otherwise(F.lit(float("inf")))
    return F.when(b != 0, a / b).when((a == 0) | F.isnan(a), nan).otherwise(inf
                                                                           ).cast(spark_type(t))


def _shortest(c: Column, bits: int) -> Column:
    """|c|'s fewest significant digits that read back as the same float, as a struct: `d` the
    digits, `p` where the point goes (|c| = 0.d * 10^p), `n` how many digits. `%.Ne` for the
    first N = 0, 1, .. whose text reads back (Java's own text of a double is not always the
    shortest)."""
    kind = "float" if bits == 32 else "double"
    fewest = F.coalesce(*[F.when(F.format_string(f"%.{n}e", c).cast(kind) == c, F.lit(n))
                          for n in range(17 if bits == 64 else 9)])
    sci = F.call_function("format_string", F.concat(F.lit("%."), fewest, F.lit("e")),
                          F.abs(c))  # `1.5e+20`

    def parts(s: Column) -> Column:
        digits = F.replace(F.regexp_extract(s, "^([0-9.]+)", 1), F.lit("."), F.lit(""))
        point = 1 + F.regexp_extract(s, "e[+]?(-?[0-9]+)$", 1).cast("int")  # digits before it
        return F.struct(digits.alias("d"), point.alias("p"), F.length(digits).alias("n"))
    return let(sci, parts)


def _sign(c: Column) -> Column:
    return F.when(F.startswith(c.cast("string"), F.lit("-")), F.lit("-")).otherwise(F.lit(""))


def float_text(c: Column, bits: int = 64) -> Column:
    """A float as Rust displays it (what DDlog's `"${x}"` gives): the fewest significant
    digits that read back as the same float, no exponent, no fractional part when it has
    none, `inf`, `-inf`, `NaN`."""
    def placed(v: Column) -> Column:
        d, p, n = v["d"], v["p"], v["n"]
        return (F.when(p >= n, F.concat(d, F.repeat(F.lit("0"), p - n)))
                .when(p <= 0, F.concat(F.lit("0."), F.repeat(F.lit("0"), -p), d))
                .otherwise(F.concat(F.substring(d, F.lit(1), p), F.lit("."),
                                    F.substring(d, p + 1, n))))

    def bare(t: Column) -> Column:
        return F.when(F.contains(t, F.lit(".")),
                      F.regexp_replace(F.regexp_replace(t, "0+$", ""), "[.]$", "")
                      ).otherwise(t)

    text = let(let(_shortest(c, bits), placed), bare)
    return (F.when(F.isnan(c), F.lit("NaN"))
            .when(c == F.lit(float("inf")), F.lit("inf"))
            .when(c == F.lit(float("-inf")), F.lit("-inf"))
            .otherwise(F.concat(_sign(c), text)))


def float_json(c: Column, bits: int = 64) -> Column:
    """A float as serde_json writes it (Rust's ryu): `299792458.0`, `0.001234`, `1e30`,
    `1.5e-7`; `null` for NaN and the infinities. Plain digits up to 10^16 (10^13 for a
    32-bit float), from 10^-5."""
    most = 16 if bits == 64 else 13

    def placed(v: Column) -> Column:
        d, kk = F.regexp_replace(v["d"], "0+$", ""), v["p"]  # not empty: 0 is apart
        n = F.length(d)
        return (F.when(F.abs(c) == 0, F.lit("0.0"))
                .when((kk >= n) & (kk <= most),
                      F.concat(d, F.repeat(F.lit("0"), kk - n), F.lit(".0")))
                .when((kk > 0) & (kk <= most),
                      F.concat(F.substring(d, F.lit(1), kk), F.lit("."),
                               F.substring(d, kk + 1, n)))
                .when((kk > -5) & (kk <= 0),
                      F.concat(F.lit("0."), F.repeat(F.lit("0"), -kk), d))
                .when(n == 1, F.concat(d, F.lit("e"), (kk - 1).cast("string")))
                .otherwise(F.concat(F.substring(d, F.lit(1), F.lit(1)), F.lit("."),
                                    F.substring(d, F.lit(2), n), F.lit("e"),
                                    (kk - 1).cast("string"))))
    return (F.when(F.isnan(c) | (F.abs(c) == F.lit(float("inf"))), F.lit("null"))
            .otherwise(F.concat(_sign(c), let(_shortest(c, bits), placed))))


def cast(c: Column, src: Type, dst: Type) -> Column:
    """`x as T` (integers wrap into the target's width)."""
    if is_wide(src) or is_wide(dst):
        return _cast_wide(c, src, dst)
    if is_u64(src) and isinstance(dst, TString):
        return to_string(c, src)
    if is_u64(src) and isinstance(dst, TFloat):
        return F.when(c >= 0, c.cast(spark_type(dst))) \
            .otherwise(unsigned_value(c).cast(spark_type(dst)))
    if is_u64(src) and isinstance(dst, TInt) and (dst.width is None or dst.width > 64):
        # the value is kept, and the Long that stores a bigint or a bit<128> ends at 2^63 - 1
        return F.when(c < 0, F.raise_error(F.lit(
            f"integer overflow: a {src} from 2^63 up does not fit in {dst} (stored in a "
            f"64-bit signed integer)"))).otherwise(c)
    return wrap(c.cast(spark_type(dst)), dst)


def _cast_wide(c: Column, src: Type, dst: Type) -> Column:
    """A cast from or to an integer wider than 64 bits."""
    if not is_wide(src):  # an integer of up to 64 bits, widened
        return wide.join(wide.from_long(c, src.signed and not is_u64(src)), dst)
    w = wide.words(c, src)
    if is_wide(dst):
        return wide.join(w, dst)
    if isinstance(dst, TString):
        return to_string(c, src)
    if isinstance(dst, TFloat):
        return wide.to_double(w, src.signed).cast(spark_type(dst))
    if dst.width is None:
        return wide.to_long(w, src.signed, src)
    return wrap(w[1], dst)  # the low 64 bits, wrapped into a narrower width


def divide(op: str, a: Column, b: Column, t: Type) -> Column:
    """Integer `/` (truncating toward zero, as Rust) and `%` (the sign of the dividend); ANSI
    mode fails on a zero divisor. A bit<64> from 2^63 up divides as its unsigned value."""
    if is_wide(t):
        return wide.divide(op, wide.words(a, t), wide.words(b, t), t)
    if op == "/":
        plain = F.call_function("div", a, b)
    else:
        plain = a % b
    if not is_u64(t):
        return wrap(plain, t)
    ua, ub = unsigned_value(a), unsigned_value(b)
    if op == "/":  # a quotient from 2^63 up only comes from a divisor of 1
        slow = F.when(b == 1, a).otherwise(F.call_function("div", ua, ub))
    else:
        slow = long_bits(ua % ub)
    return F.when((a >= 0) & (b >= 0), plain).otherwise(slow)


def value(v: Any, t: Type) -> Column:
    """A constant of any type (a Python value of ddlog/values) as a Column."""
    if isinstance(t, TOption):
        return lit(None, t) if v is None else value(v, t.elem)
    if isinstance(t, TTuple):
        return F.struct(*[value(x, it).alias(f"_{k}") for k, (x, it) in enumerate(zip(v,
                                                                                       t.items))])
    if isinstance(t, (TVec, TSet, TMap)):  # a Map as its entries (in canonical order already)
        if not v:
            return F.array().cast(spark_type(t))
        return F.array(*[value(x, t.elem) for x in v])
    if isinstance(t, TAny):
        held, text = to_spark(v, t)
        return F.struct(F.lit(held).alias("t"), F.lit(text).alias("v"))
    if isinstance(t, TStruct):
        ctor = t.ctor(v.ctor)
        inner = F.struct(*[value(x, ft).alias(n) for x, (n, ft) in zip(v.values, ctor.fields)])
        if not t.is_enum:
            return inner
        parts = [F.lit(v.ctor).alias("_tag")]
        for c in t.ctors:
            if c.fields:
                part = inner if c.name == v.ctor else \
                    F.lit(None).cast(spark_type(t)[c.name].dataType)
                parts.append(part.alias(c.name))
        return F.struct(*parts)
    return lit(v, t)


class SparkLowering:
    """The toolkit the built-ins' Spark lowerings use (ddlog.builtins.Lowering)."""

    F = F
    lit = staticmethod(lit)
    value = staticmethod(value)
    spark_type = staticmethod(spark_type)
    wrap = staticmethod(wrap)
    arith = staticmethod(arith)
    u64_from_decimal = staticmethod(u64_from_decimal)
    sort = staticmethod(sort)
    order_key = staticmethod(order_key)
    compare = staticmethod(compare)
    to_string = staticmethod(to_string)
    float_json = staticmethod(lambda c, t: float_json(c, t.bits))
    hex = staticmethod(hex_digits)
    int_from_words = staticmethod(lambda hi, lo, t: wide.join((hi, lo), t))
    xxhash64 = staticmethod(xxhash64)
    abs = staticmethod(absolute)
    canonical_set = staticmethod(canonical_set)
    canonical_map = staticmethod(canonical_map)
    let = staticmethod(let)

    def __init__(self, in_closure: bool = False):
        # inside a closure's body, which Spark's higher-order functions evaluate without
        # preparing a nondeterministic expression first (regexes.py)
        self.in_closure = in_closure


LOWERING = SparkLowering()
CLOSURE_LOWERING = SparkLowering(in_closure=True)


def shift(op: str, a: Column, n: Column, t: TInt) -> Column:
    """DDlog's shifts (ddlog/values/ops.py says the same in Python): the amount `n` (a
    bit<32>) is taken modulo the width of `t` rounded up to a power of two; shifting by the
    width or more (up to that power) gives 0, or the sign on a signed `>>`; bigint shifts are
    exact, and a result that leaves the 64 bits a bigint is stored in is an error, as `+` and
    `*` overflow are."""
    if is_wide(t):
        return wide.join(wide.shift(op, wide.words(a, t), n, t), t)
    shl = lambda x, k: F.call_function("shiftleft", x, k.cast("int"))  # noqa: E731
    shr = lambda x, k: F.call_function("shiftright", x, k.cast("int"))  # noqa: E731
    width = t.width
    if width is not None and width <= 64:
        m = n % F.lit((1 << (width - 1).bit_length()))
        if op == ">>":
            sign = shr(a, F.lit(63)) if t.signed else F.lit(0).cast("long")
            if width == 64 and not t.signed:  # the bits of a bit<64>, shifted in zeros
                return F.when(m >= width, sign).otherwise(
                    F.call_function("shiftrightunsigned", a, m.cast("int")))
            return F.when(m >= width, sign).otherwise(shr(a, m))
        shifted = shl(a, m) if width == 64 else wrap(shl(a, m), t)
        out = F.when(m >= width, F.lit(0).cast("long")).otherwise(shifted)
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


@recursion_room()
def compile_expr(e: ir.Expr, env: Env | None = None) -> Column:
    return _Compiler(env or {}).expr(e)


class _Compiler:
    def __init__(self, env: Env, lowering: SparkLowering = LOWERING):
        self.env = env  # values of Refs: lambda parameters, pattern variables
        self.lowering = lowering

    def with_env(self, extra: Env, lowering: SparkLowering | None = None) -> "_Compiler":
        return _Compiler({**self.env, **extra}, lowering or self.lowering)

    def expr(self, e: ir.Expr) -> Column:
        return getattr(self, "e_" + type(e).__name__)(e)

    # -- leaves ---------------------------------------------------------------------------

    def e_Col(self, e: ir.Col) -> Column:
        return col(e.name)

    def e_Ref(self, e: ir.Ref) -> Column:
        return self.env[e.name]

    def e_Const(self, e: ir.Const) -> Column:
        return lit(e.value, e.ty)

    def e_Interp(self, e: ir.Interp) -> Column:
        parts = [F.lit(p) if isinstance(p, str) else
                 self.once([p], lambda x, t=p.ty: to_string(x, t)) for p in e.parts]
        return F.concat(*parts) if parts else F.lit("")

    def once(self, args: list[ir.Expr], body: Callable[..., Column],
             bind_all: bool = False) -> Column:
        """`body` of the arguments' Columns. An integer wider than 64 bits that is computed is
        bound once first: its operators read each operand's words several times, so that
        nested ones would otherwise repeat their operands' whole expressions; with
        `bind_all`, every computed argument is."""
        def bind(k: int, done: list[Column]) -> Column:
            if k == len(args):
                return body(*done)
            x = self.expr(args[k])
            if not (is_wide(args[k].ty) or bind_all) \
                    or isinstance(args[k], (ir.Col, ir.Ref, ir.Const)):
                return bind(k + 1, done + [x])
            return let(x, lambda v: bind(k + 1, done + [v]))
        return bind(0, [])

    # -- operators ------------------------------------------------------------------------

    def e_Unary(self, e: ir.Unary) -> Column:
        return self.once([e.arg], lambda x: self._unary(e, x))

    def _unary(self, e: ir.Unary, x: Column) -> Column:
        if e.op == "not":
            return ~x
        if e.op == "-":
            if is_wide(e.ty):
                return wide.join(wide.negate(wide.words(x, e.ty)), e.ty)
            return arith("-", F.lit(0).cast("long"), x, e.ty) if isinstance(e.ty, TInt) \
                else -x
        if e.op == "~":
            if is_wide(e.ty):
                return wide.join(wide.invert(wide.words(x, e.ty)), e.ty)
            return wrap(F.bitwise_not(x), e.ty)
        raise ValueError(e.op)

    def e_Binary(self, e: ir.Binary) -> Column:
        return self.once([e.left, e.right], lambda a, b: self._binary(e, a, b))

    def _binary(self, e: ir.Binary, a: Column, b: Column) -> Column:
        op, t = e.op, e.ty
        if op == "and":
            return a & b
        if op == "or":
            return a | b
        if op == "==":
            return a.eqNullSafe(b)
        if op == "!=":
            return ~a.eqNullSafe(b)
        if op in ("<", "<=", ">", ">="):
            return compare(a, b, op, e.left.ty)
        if op == "++":
            if is_wide(t):
                shifted = wide.shift("<<", wide.words(cast(a, e.left.ty, t), t),
                                     F.lit(e.right.ty.width), t)
                return wide.join(wide.bitwise("|", shifted,
                                              wide.words(cast(b, e.right.ty, t), t)), t)
            if isinstance(t, TInt):  # bit<N> ++ bit<M>: a's bits above b's
                return wrap(F.shiftleft(a, e.right.ty.width).bitwiseOR(b), t)
            return F.concat(a, b)
        if op in ("+", "-", "*"):
            return arith(op, a, b, t)
        if op in ("/", "%"):
            if isinstance(t, TFloat):
                return float_divide(op, a, b, t)
            return divide(op, a, b, t)
        if op in ("&", "|", "^") and is_wide(t):
            return wide.join(wide.bitwise(op, wide.words(a, t), wide.words(b, t)), t)
        if op == "&":
            return a.bitwiseAND(b)
        if op == "|":
            return a.bitwiseOR(b)
        if op == "^":
            return a.bitwiseXOR(b)
        if op in ("<<", ">>"):
            return shift(op, a, b, t)
        raise ValueError(op)

    def e_If(self, e: ir.If) -> Column:
        return F.when(self.expr(e.cond), self.expr(e.then)).otherwise(self.expr(e.other))

    def e_Cast(self, e: ir.Cast) -> Column:
        return self.once([e.arg], lambda x: cast(x, e.arg.ty, e.ty))

    # -- data -----------------------------------------------------------------------------

    def e_Tuple(self, e: ir.Tuple) -> Column:
        return F.struct(*[self.expr(x).alias(f"_{k}") for k, x in enumerate(e.items)])

    def e_Vec(self, e: ir.Vec) -> Column:
        if not e.items:
            return F.array().cast(spark_type(e.ty))
        arr = F.array(*[self.expr(x) for x in e.items])
        if isinstance(e.ty, TMap):
            return canonical_map(arr, e.ty)
        return canonical_set(arr, e.ty) if isinstance(e.ty, TSet) else arr

    def e_Some(self, e: ir.Some) -> Column:
        return self.expr(e.arg)  # an Option is its value, None is null

    def e_Struct(self, e: ir.Struct) -> Column:
        t: TStruct = e.ty
        ctor = t.ctor(e.ctor)
        inner = (F.struct(*[self.expr(x).alias(n) for x, (n, _) in zip(e.fields, ctor.fields)])
                 if ctor.fields else None)
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

    def e_With(self, e: ir.With) -> Column:
        x, v, t = self.expr(e.arg), self.expr(e.value), e.arg.ty
        if isinstance(t, TTuple):
            return x.withField(f"_{e.name}", v)
        if not t.is_enum:
            return x.withField(e.name, v)
        out = x  # an enum: the field lives in the struct of the value's constructor
        for c in reversed(t.ctors):
            if c.field_type(e.name) is not None:
                out = F.when(x.getField("_tag") == c.name,
                             x.withField(f"{c.name}.{e.name}", v)).otherwise(out)
        return out

    def e_Field(self, e: ir.Field) -> Column:
        x = self.expr(e.arg)
        t = e.arg.ty
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

    def e_Match(self, e: ir.Match) -> Column:
        s = self.expr(e.arg)
        if _cheap(e.arg) or any(_builtin(c).closure_aware
                               for _, body in e.arms for c in body.find(ir.Call)):
            return self._arms(e, s)
        # each arm reads the scrutinee twice or more (its test, its variables): a computed one
        # is bound once rather than copied into every place, which multiplies the work of
        # Spark's analysis and optimisation by the copies
        return let(s, lambda v: self.with_env({}, CLOSURE_LOWERING)._arms(e, v))

    def _arms(self, e: ir.Match, s: Column) -> Column:
        out = None
        for pat, body in e.arms:
            cond, binds = pattern(pat, s)
            value = self.with_env(binds).expr(body)
            out = F.when(cond, value) if out is None else out.when(cond, value)
        return out

    def e_Lambda(self, e: ir.Lambda) -> Callable[..., Column]:
        def body(*xs: Column) -> Column:
            return self.with_env(dict(zip(e.params, xs)), CLOSURE_LOWERING).expr(e.body)
        # Spark's higher-order functions read the arity from the signature: spell it out
        n = len(e.params)
        if n == 1:
            return lambda x: body(x)
        if n == 2:
            return lambda x, y: body(x, y)
        if n == 3:
            return lambda x, y, z: body(x, y, z)
        raise ValueError(f"a closure of {n} parameters")

    # -- calls ----------------------------------------------------------------------------

    def e_Call(self, e: ir.Call) -> Column:
        b = _builtin(e)
        # the arguments the entry reads when the program is compiled are handed over as their
        # Python values (the checker made sure they are constants)
        if not all(isinstance(e.args[i], ir.Const) for i in b.constants):
            raise ValueError(f"{b.name}: an argument it reads as a constant is not one")
        columns = [a for i, a in enumerate(e.args) if i not in b.constants]

        def call(*cols: Column) -> Column:
            it = iter(cols)
            args = [e.args[i].value if i in b.constants else next(it)
                    for i in range(len(e.args))]
            return b.spark(self.lowering, args, [a.ty for a in e.args], e.ty)
        return self.once(columns, call, bind_all=b.reads_arguments_often)


_CHEAP = (ir.Col, ir.Ref, ir.Const, ir.Field, ir.Unary, ir.Binary, ir.Cast, ir.Tuple, ir.Some)


def _cheap(e: ir.Expr) -> bool:
    """Whether `e` is only operators over columns, variables and constants: cheaper to compute
    again than to bind (a Spark lambda is evaluated without generated code)."""
    return all(isinstance(n, _CHEAP) for n in e.walk())


def _builtin(e: ir.Call) -> Builtin:
    return GROUP_METHODS[e.name] if e.group else FUNCTIONS.get(e.name) or CLOSURE_OPS[e.name]


def pattern(p: ir.Pattern, s: Column) -> tuple[Column, Env]:
    """The condition under which `s` matches `p`, and the variables it binds."""
    if isinstance(p, ir.PAny):
        return F.lit(True), {}
    if isinstance(p, ir.PBind):
        return F.lit(True), {p.name: s}
    if isinstance(p, ir.PConst):
        return s.eqNullSafe(lit(p.value, p.ty)), {}
    if isinstance(p, ir.PTuple):
        return _all([pattern(q, s.getField(f"_{k}")) for k, q in enumerate(p.items)])
    if isinstance(p, ir.PNone):
        return s.isNull(), {}
    if isinstance(p, ir.PSome):
        cond, binds = pattern(p.arg, s)
        return s.isNotNull() & cond, binds
    assert isinstance(p, ir.PCtor)
    t: TStruct = p.ty
    names = [n for n, _ in t.ctor(p.ctor).fields]
    base = s if not t.is_enum else s.getField(p.ctor)
    cond, binds = _all([pattern(q, base.getField(n)) for n, q in zip(names, p.fields)])
    if t.is_enum:
        cond = (s.getField("_tag") == F.lit(p.ctor)) & cond
    return cond, binds


def _all(parts: list[tuple[Column, Env]]) -> tuple[Column, Env]:
    cond: Column = F.lit(True)
    binds: Env = {}
    for c, b in parts:
        cond = cond & c
        binds.update(b)
    return cond, binds
