"""DDlog's `fp` library: the functions of floats (`sqrt_f(float)`) and doubles (`sqrt_d(double)`),
with Rust's meaning where Spark's differs: `ln` of 0 is -inf and of a negative NaN (Spark's
is null), `signum` of 0 is 1 and of -0 is -1 (Spark's is 0), `floor` and `ceil` stay floats
(Spark's give a Long), `round` rounds half away from zero, `x / 0` is infinite. A float's
function is computed in double precision and rounded to a float, as Rust's functions of an
f32 round their exact result. `parse_f`/`parse_d` give a Result with Rust's error texts.

Each is one entry per kind made from one table (`_UNARY`, `_BINARY`): the Spark Column and the
Python meaning of a double, side by side.
"""
from __future__ import annotations

import math
import re
import struct
from typing import Callable

from ddlog.builtins.base import Builtin, fixed, result_column
from ddlog.types import BIGINT, BOOL, DOUBLE, FLOAT, STRING, TInt, TOption, Type, result_type
from ddlog.values import Record

S32 = TInt(True, 32)
_INF = float("inf")
# Rust's float syntax (its `str::parse`): no spaces, no suffix, `inf`, `infinity` and `nan`
# in any case
_FLOAT_TEXT = r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))$"


def _f32(x: float) -> float:
    """x rounded to a 32-bit float."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(_INF, x)


def _ln(x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    return -_INF if x == 0 else math.log(x)


def _py(fn: Callable[[float], float]) -> Callable[[float], float]:
    """fn, with NaN for a domain error and an infinity for an overflow (as Rust's)."""
    def safe(*xs: float) -> float:
        try:
            return fn(*xs)
        except ValueError:
            return math.nan
        except OverflowError:
            return _INF
    return safe


def _trunc(x: float) -> float:
    return x if math.isnan(x) or math.isinf(x) else float(math.trunc(x))


def _round(x: float) -> float:
    """Half away from zero, as Rust's."""
    if math.isnan(x) or math.isinf(x):
        return x
    whole = math.floor(abs(x))
    return math.copysign(whole + 1.0 if abs(x) - whole >= 0.5 else float(whole), x)


# -- Spark: each gets pyspark.sql.functions and Columns of doubles ----------------------------

def _nan(F):
    return F.lit(math.nan).cast("double")


def _integral(F, x, f):
    """floor/ceil kept a double (Spark's are Longs): values from 2^52 up are whole already."""
    return F.when(F.isnan(x) | (F.abs(x) >= 2.0 ** 52), x).otherwise(f(x).cast("double"))


def _ln_spark(F, x, log=None):
    log = log or F.log
    return F.when(F.isnan(x) | (x < 0), _nan(F)).when(x == 0, F.lit(-_INF)).otherwise(log(x))


def _trunc_spark(F, x):
    return F.when(x >= 0, _integral(F, x, F.floor)).otherwise(_integral(F, x, F.ceil))


def _signum_spark(F, x):
    # a zero's sign shows in its text (`-0.0`); Spark's own functions read -0 as 0
    return F.when(F.isnan(x), x).when(x > 0, F.lit(1.0)).when(x < 0, F.lit(-1.0)) \
        .when(x.cast("string").startswith("-"), F.lit(-1.0)).otherwise(F.lit(1.0))


_UNARY: dict[str, tuple[Callable, Callable[[float], float]]] = {
    "floor": (lambda F, x: _integral(F, x, F.floor), _py(lambda x: x if not math.isfinite(x)
                                                          else float(math.floor(x)))),
    "ceil": (lambda F, x: _integral(F, x, F.ceil), _py(lambda x: x if not math.isfinite(x)
                                                        else float(math.ceil(x)))),
    "round": (lambda F, x: F.when(F.isnan(x), x).otherwise(F.round(x, 0)), _round),
    "trunc": (_trunc_spark, _trunc),
    "fract": (lambda F, x: x - _trunc_spark(F, x), lambda x: x - _trunc(x)),
    "abs": (lambda F, x: F.abs(x), abs),
    "signum": (_signum_spark, lambda x: x if math.isnan(x) else math.copysign(1.0, x)),
    "sqrt": (lambda F, x: F.sqrt(x), _py(math.sqrt)),
    "exp": (lambda F, x: F.exp(x), _py(math.exp)),
    "exp2": (lambda F, x: F.pow(F.lit(2.0), x), _py(lambda x: 2.0 ** x)),
    "ln": (_ln_spark, _ln),
    "log2": (lambda F, x: _ln_spark(F, x, F.log2), lambda x: _ln(x) / math.log(2)
             if x <= 0 or math.isnan(x) else math.log2(x)),
    "log10": (lambda F, x: _ln_spark(F, x, F.log10), lambda x: _ln(x)
              if x <= 0 or math.isnan(x) else math.log10(x)),
    "cbrt": (lambda F, x: F.cbrt(x), lambda x: math.copysign(abs(x) ** (1 / 3), x)
             if math.isfinite(x) else x),
    "sin": (lambda F, x: F.sin(x), _py(math.sin)),
    "cos": (lambda F, x: F.cos(x), _py(math.cos)),
    "tan": (lambda F, x: F.tan(x), _py(math.tan)),
    "asin": (lambda F, x: F.asin(x), _py(math.asin)),
    "acos": (lambda F, x: F.acos(x), _py(math.acos)),
    "atan": (lambda F, x: F.atan(x), _py(math.atan)),
    "sinh": (lambda F, x: F.sinh(x), _py(math.sinh)),
    "cosh": (lambda F, x: F.cosh(x), _py(math.cosh)),
    "tanh": (lambda F, x: F.tanh(x), _py(math.tanh)),
    "asinh": (lambda F, x: F.asinh(x), _py(math.asinh)),
    "acosh": (lambda F, x: F.when(x < 1, _nan(F)).otherwise(F.acosh(x)), _py(math.acosh)),
    "atanh": (lambda F, x: F.when(F.abs(x) > 1, _nan(F)).otherwise(F.atanh(x)),
              _py(lambda x: math.copysign(_INF, x) if abs(x) == 1 else math.atanh(x))),
    "recip": (lambda F, x: F.pow(x, F.lit(-1.0)), _py(lambda x: math.copysign(_INF, x)
                                                     if x == 0 else 1 / x)),
    "to_degrees": (lambda F, x: F.degrees(x), math.degrees),
    "to_radians": (lambda F, x: F.radians(x), math.radians),
}


def _r(c):
    """A double Column rounded to a float's precision."""
    return c.cast("float").cast("double")


# Rust computes these of a float in float arithmetic, step by step (each operation rounded to
# a float), where the result differs from the double's rounded
_IN_FLOAT: dict[str, tuple[Callable, Callable[[float], float]]] = {
    "asinh": (lambda F, x: F.signum(x) * F.log(_r(_r(F.sqrt(_r(_r(x * x) + 1))) + F.abs(x))),
              lambda x: math.copysign(math.log(_f32(_f32(math.sqrt(_f32(_f32(x * x) + 1)))
                                                    + abs(x))), x)),
}

_BINARY: dict[str, tuple[Callable, Callable[[float, float], float]]] = {
    "atan2": (lambda F, x, y: F.atan2(x, y), math.atan2),
    "powf": (lambda F, x, y: F.pow(x, y), _py(math.pow)),
    "log": (lambda F, x, y: _ln_spark(F, x) / _ln_spark(F, y), _py(lambda x, y: _ln(x) / _ln(y)
                                                                 if _ln(y) != 0 else
                                                                 math.copysign(_INF, _ln(x)))),
}

_TESTS: dict[str, tuple[Callable, Callable[[float], bool]]] = {
    "is_nan": (lambda F, x: F.isnan(x), math.isnan),
    "is_infinite": (lambda F, x: F.abs(x) == _INF, math.isinf),
    "is_finite": (lambda F, x: ~F.isnan(x) & (F.abs(x) != _INF), math.isfinite),
}


def _spark(fn: Callable, t: Type) -> Callable:
    """The Spark lowering of fn over doubles, for arguments and a result of float type t."""
    def lower(sx, args, types, ty):
        F = sx.F
        out = fn(F, *[a.cast("double") for a in args])
        return out.cast(sx.spark_type(ty)) if ty in (FLOAT, DOUBLE) else out
    return lower


def _python(fn: Callable, t: Type) -> Callable:
    def meaning(args, types, ty):
        out = fn(*[float(a) for a in args])
        return _f32(out) if ty == FLOAT else out
    return meaning


def _parse_python(text: str, t: Type) -> Record:
    if text == "":
        return Record("Err", ("cannot parse float from empty string",))
    if not re.match(_FLOAT_TEXT, text):
        return Record("Err", ("invalid float literal",))
    value = float(text.lower().replace("infinity", "inf"))
    return Record("Ok", (_f32(value) if t == FLOAT else value,))


def _parse_spark(t: Type) -> Callable:
    def lower(sx, args, types, ty):
        F = sx.F
        s = args[0]
        low = F.lower(s)
        ok = F.regexp_like(s, F.lit(_FLOAT_TEXT))
        value = (F.when(low.isin("inf", "+inf", "infinity", "+infinity"), F.lit(_INF))
                 .when(low.isin("-inf", "-infinity"), F.lit(-_INF))
                 .when(low.rlike("^[+-]?nan$"), _nan(F))
                 .otherwise(s.cast("double")))
        err = F.when(s == "", F.lit("cannot parse float from empty string")) \
            .otherwise(F.lit("invalid float literal"))
        return result_column(sx, ok, value.cast(sx.spark_type(t)), err, ty)
    return lower


def _int_from_spark(sx, args, types, ty):
    F = sx.F
    x = args[0].cast("double")
    fits = ~F.isnan(x) & (F.abs(x) < 2.0 ** 63)
    return F.when(fits, x.cast("long"))


def _int_from_python(args, types, ty):
    x = float(args[0])
    return int(x) if math.isfinite(x) and abs(x) < 2.0 ** 63 else None


def _entries() -> list[Builtin]:
    out: list[Builtin] = []
    for suffix, t, name in (("f", FLOAT, "float"), ("d", DOUBLE, "double")):
        for fn, (spark, py) in _UNARY.items():
            if t == FLOAT and fn in _IN_FLOAT:
                spark, py = _IN_FLOAT[fn]
            out.append(Builtin(f"{fn}_{suffix}", 1, f"{fn}_{suffix}({name}) -> {name}",
                               f"Rust's {fn} of a {name} (DDlog's fp)", fixed(t, result=t),
                               _spark(spark, t), _python(py, t)))
        for fn, (spark, py) in _BINARY.items():
            out.append(Builtin(f"{fn}_{suffix}", 2, f"{fn}_{suffix}({name}, {name}) -> {name}",
                               f"Rust's {fn} of {name}s (DDlog's fp)", fixed(t, t, result=t),
                               _spark(spark, t), _python(py, t)))
        for fn, (spark, py) in _TESTS.items():
            out.append(Builtin(f"{fn}_{suffix}", 1, f"{fn}_{suffix}({name}) -> bool",
                               f"whether a {name} is {fn[3:]} (DDlog's fp)",
                               fixed(t, result=BOOL),
                               _spark(spark, t), lambda a, ts, ty, py=py: py(float(a[0]))))
        out += [
            Builtin(f"mul_add_{suffix}", 3, f"mul_add_{suffix}({name}, {name}, {name}) -> {name}",
                    "a * b + c (DDlog's fp)", fixed(t, t, t, result=t),
                    _spark(lambda F, a, b, c: a * b + c, t), _python(lambda a, b, c: a * b + c, t)),
            Builtin(f"powi_{suffix}", 2, f"powi_{suffix}({name}, s32) -> {name}",
                    "the power to an integer (DDlog's fp)", fixed(t, S32, result=t),
                    _spark(lambda F, x, n: F.pow(x, n), t), _python(_py(math.pow), t)),
            Builtin(f"nan_{suffix}", 0, f"nan_{suffix}() -> {name}", "NaN (DDlog's fp)",
                    fixed(result=t), lambda sx, a, ts, ty: sx.F.lit(math.nan).cast(
                        sx.spark_type(ty)), lambda a, ts, ty: math.nan),
            Builtin(f"parse_{suffix}", 1, f"parse_{suffix}(string) -> Result<{name}, string>",
                    "the number a text writes as Rust reads it, or Rust's error (DDlog's fp)",
                    fixed(STRING, result=result_type(t, STRING)), _parse_spark(t),
                    lambda a, ts, ty, t=t: _parse_python(a[0], t)),
            Builtin(f"int_from_{suffix}", 1, f"int_from_{suffix}({name}) -> Option<bigint>",
                    "the whole part, None for NaN, the infinities and beyond bigint's range "
                    "(DDlog's fp)", fixed(t, result=TOption(BIGINT)), _int_from_spark,
                    _int_from_python),
        ]
    return out


FLOATS: dict[str, Builtin] = {b.name: b for b in _entries()}
