"""What operations mean on Python values (the representation of ddlog/values/__init__.py):
arithmetic in a type's width, division as Rust does it, comparison, and the text `"${x}"`
gives a value. The oracle (tests/oracle) and the built-ins' Python meanings use these.
"""
from __future__ import annotations

import math
import struct
from typing import Any

from ddlog.errors import EvaluationError
from ddlog.types import TBool, TFloat, TInt, TString, Type
from ddlog.values import rust_float, sort_key, wrap_int


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
    floats as Rust displays them (`1`, `0.5`, `inf`), strings as they are."""
    if isinstance(t, TBool):
        return "true" if v else "false"
    if isinstance(t, TInt):
        return str(v)
    if isinstance(t, TFloat):
        return rust_float(v, t.bits)
    if isinstance(t, TString):
        return v
    # Not a scalar: to_string only takes scalars; fall back to the dump format.
    from ddlog.values import format_value
    return format_value(v, t)


UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


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
