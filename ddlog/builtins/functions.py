"""The built-in functions: each is one `Builtin` (ddlog/builtins/base.py) with its signature,
type rule, Spark lowering and Python meaning side by side. Any of them may be called as a
function `f(x, y)` or as a method `x.f(y)`.

Adding a function is adding an entry to FUNCTIONS (and its tests).
"""
from __future__ import annotations

import re

from ddlog.builtins.base import Args, Builtin, fixed
from ddlog.builtins.codecs import CODECS
from ddlog.builtins.floats import FLOATS
from ddlog.builtins.library import LIBRARY
from ddlog.builtins.jsons import JSON
from ddlog.builtins.reflect import REFLECT
from ddlog.builtins.regexes import REGEXES
from ddlog.builtins.urls import URLS
from ddlog.builtins.hashes import HASHES
from ddlog.builtins.nets import NETS
from ddlog.builtins.times import TIMES
from ddlog.builtins.uuids import UUIDS
from ddlog.builtins.maps import MAP_ONLY, ON_MAPS, overload
from ddlog.types import (BOOL, STRING, TInt, TOption, TSet, TVec, Type, is_numeric,
                         is_scalar)
from ddlog.values.ops import LOWER, UPPER, compare, fix_number, render


def _is_collection(t: Type) -> bool:
    return t == STRING or isinstance(t, (TVec, TSet))


# -- type rules ------------------------------------------------------------------------------


def _contains_type(a: Args, hint) -> Type:
    t = a.infer(0)
    a.want(0, _is_collection(t), "string, Vec<T> or Set<T>")
    a.check(1, STRING if t == STRING else t.elem)
    return BOOL


def _option_test_type(a: Args, hint) -> Type:
    a.want(0, isinstance(a.infer(0), TOption), "Option<T>")
    return BOOL


def _unwrap_or_type(a: Args, hint) -> Type:
    if a.flexible(0) and not a.flexible(1):
        # `None.unwrap_or(x)`: the default decides T.
        t = a.infer(1, hint)
        a.check(0, TOption(t))
        return t
    t = a.infer(0, TOption(hint) if hint is not None else None)
    a.want(0, isinstance(t, TOption), "Option<T>")
    return a.check(1, t.elem)


def _to_string_type(a: Args, hint) -> Type:
    a.want(0, is_scalar(a.infer(0)), "bool, an integer, a float or string")
    return STRING


def _hex_type(a: Args, hint) -> Type:
    a.want(0, isinstance(a.infer(0), TInt), "an integer")
    return STRING


def _hex_python(a, ts, t) -> str:
    """Rust's `{:x}`: a negative number as its two's complement in its width (bigint: 64)."""
    width = ts[0].width or 64
    return format(a[0] % (1 << width) if a[0] < 0 else a[0], "x")


def _abs_type(a: Args, hint) -> Type:
    t = a.infer(0, hint if is_numeric(hint) else None)
    a.want(0, is_numeric(t), "an integer or float")
    return t


def _min_max_type(a: Args, hint) -> Type:
    return a.same(hint, is_scalar, "two values of one scalar type")


def _push_type(a: Args, hint) -> Type:
    if a.flexible(0) and not a.flexible(1):
        return a.check(0, TVec(a.infer(1)))  # `[].push(x)`
    t = a.infer(0, hint if isinstance(hint, TVec) else None)
    a.want(0, isinstance(t, TVec), "Vec<T>")
    a.check(1, t.elem)
    return t


def _substr_type(a: Args, hint) -> Type:
    # DDlog's positions are usize; any integer is taken, so `len(s) - 1` (usize) and a bigint
    # column both work, and a literal stays bigint so a negative one clamps to 0.
    a.check(0, STRING)
    for i in (1, 2):
        a.want(i, isinstance(a.infer(i), TInt), "an integer position")
    return STRING


# DDlog's parse_dec_u64 / parse_dec_i64 (Rust's `str::parse`): an optional sign (`+` only for
# the unsigned), ASCII digits, a value the 64-bit Long that stores it holds; else None
_DECIMAL = {False: r"^\+?[0-9]+$", True: r"^[+-]?[0-9]+$"}


def _parse_dec_spark(signed: bool):
    def lower(sx, a, ts, t):
        F = sx.F
        if signed:
            value = a[0].try_cast("long")
        else:  # up to 2^64 - 1, stored as its bits in a Long
            # (38 digits: leading zeros are allowed)
            value = sx.u64_from_decimal(a[0].try_cast("decimal(38,0)"))
        return F.when(a[0].rlike(_DECIMAL[signed]), value)
    return lower


def _parse_dec_python(signed: bool):
    def meaning(a, ts, t):
        if not re.match(_DECIMAL[signed], a[0]):
            return None
        v = int(a[0])
        return v if (-(1 << 63) <= v < 1 << 63 if signed else 0 <= v < 1 << 64) else None
    return meaning


# -- Spark lowerings that need more than one line ---------------------------------------------


def _substr_spark(sx, args, types, ty):
    F = sx.F
    s, lo, hi = args[0], args[1].cast("long"), args[2].cast("long")
    n = F.length(s).cast("long")
    start = F.least(F.greatest(lo, F.lit(0)), n)
    end = F.least(F.greatest(hi, start), n)
    return s.substr((start + 1).cast("int"), (end - start).cast("int"))


def _substr_python(args, types, ty):
    s, start, end = args
    start = min(max(start, 0), len(s))
    end = min(max(end, start), len(s))
    return s[start:end]


def _contains_spark(sx, args, types, ty):
    if types[0] == STRING:
        return args[0].contains(args[1])
    return sx.F.array_contains(args[0], args[1])


_FUNCTIONS: dict[str, Builtin] = {
    **LIBRARY, **CODECS, **FLOATS, **REFLECT, **REGEXES, **URLS, **UUIDS, **NETS, **HASHES,
    **TIMES, **JSON,
    **{b.name: b for b in [
    Builtin("contains", 2, "contains(string, string) -> bool, contains(Vec<T> | Set<T>, T) -> bool",
            "substring test on strings, membership on Vec and Set",
            _contains_type, _contains_spark, lambda a, ts, t: a[1] in a[0]),
    Builtin("is_some", 1, "is_some(Option<T>) -> bool", "whether the option holds a value",
            _option_test_type, lambda sx, a, ts, t: a[0].isNotNull(),
            lambda a, ts, t: a[0] is not None),
    Builtin("is_none", 1, "is_none(Option<T>) -> bool", "whether the option is None",
            _option_test_type, lambda sx, a, ts, t: a[0].isNull(),
            lambda a, ts, t: a[0] is None),
    Builtin("unwrap_or", 2, "unwrap_or(Option<T>, T) -> T",
            "the value, or the default when None",
            _unwrap_or_type, lambda sx, a, ts, t: sx.F.coalesce(a[0], a[1]),
            lambda a, ts, t: a[1] if a[0] is None else a[0]),
    Builtin("hex", 1, "hex(integer) -> string", "lower-case hexadecimal digits, no prefix",
            _hex_type, lambda sx, a, ts, t: sx.hex(a[0], ts[0]), _hex_python,
            wide_integers=True),
    Builtin("to_string", 1, "to_string(bool | integer | float | string) -> string",
            "the text `\"${x}\"` gives",
            _to_string_type, lambda sx, a, ts, t: sx.to_string(a[0], ts[0]),
            lambda a, ts, t: render(a[0], ts[0]), wide_integers=True),
    *[Builtin(name, 1, signature, meaning, lambda a, hint: a.infer(0, hint),
              lambda sx, a, ts, t: a[0], lambda a, ts, t: a[0])
      for name, signature, meaning in [
          ("ref_new", "ref_new(A) -> Ref<A>", "a reference to the value (Ref<A> is A here)"),
          ("deref", "deref(Ref<A>) -> A", "the value a reference refers to"),
          ("intern", "intern(A) -> Intern<A>", "the value interned (Intern<A> is A here)"),
          ("ival", "ival(Intern<A>) -> A", "the value of an interned one")]],
    Builtin("abs", 1, "abs(N) -> N, N an integer or float type", "absolute value (wraps)",
            _abs_type,
            lambda sx, a, ts, t: sx.abs(a[0], t),
            lambda a, ts, t: fix_number(abs(a[0]), t), wide_integers=True),
    Builtin("min", 2, "min(T, T) -> T, T a scalar type", "the smaller of two values",
            _min_max_type,
            lambda sx, a, ts, t: sx.F.when(sx.compare(a[0], a[1], "<=", ts[0]), a[0])
            .otherwise(a[1]),
            lambda a, ts, t: a[0] if not compare("<", a[1], a[0]) else a[1]),
    Builtin("max", 2, "max(T, T) -> T, T a scalar type", "the larger of two values",
            _min_max_type,
            lambda sx, a, ts, t: sx.F.when(sx.compare(a[0], a[1], ">=", ts[0]), a[0])
            .otherwise(a[1]),
            lambda a, ts, t: a[0] if not compare(">", a[1], a[0]) else a[1]),
    Builtin("starts_with", 2, "starts_with(string, string) -> bool", "prefix test",
            fixed(STRING, STRING, result=BOOL), lambda sx, a, ts, t: a[0].startswith(a[1]),
            lambda a, ts, t: a[0].startswith(a[1])),
    Builtin("ends_with", 2, "ends_with(string, string) -> bool", "suffix test",
            fixed(STRING, STRING, result=BOOL), lambda sx, a, ts, t: a[0].endswith(a[1]),
            lambda a, ts, t: a[0].endswith(a[1])),
    Builtin("to_uppercase", 1, "to_uppercase(string) -> string", "ASCII upper case",
            fixed(STRING, result=STRING), lambda sx, a, ts, t: sx.F.upper(a[0]),
            lambda a, ts, t: a[0].translate(UPPER)),
    Builtin("to_lowercase", 1, "to_lowercase(string) -> string", "ASCII lower case",
            fixed(STRING, result=STRING), lambda sx, a, ts, t: sx.F.lower(a[0]),
            lambda a, ts, t: a[0].translate(LOWER)),
    Builtin("trim", 1, "trim(string) -> string", "without leading and trailing spaces",
            fixed(STRING, result=STRING), lambda sx, a, ts, t: sx.F.trim(a[0]),
            lambda a, ts, t: a[0].strip(" ")),
    Builtin("parse_dec_u64", 1, "parse_dec_u64(string) -> Option<u64>",
            "the decimal number the string is (digits, `+` allowed), or None",
            fixed(STRING, result=TOption(TInt(False, 64))), _parse_dec_spark(False),
            _parse_dec_python(False)),
    Builtin("parse_dec_i64", 1, "parse_dec_i64(string) -> Option<s64>",
            "the decimal number the string is (digits, `+` or `-` allowed), or None",
            fixed(STRING, result=TOption(TInt(True, 64))), _parse_dec_spark(True),
            _parse_dec_python(True)),
    Builtin("substr", 3, "substr(string, integer, integer) -> string",
            "characters [start, end), 0-based, clamped to the string",
            _substr_type, _substr_spark, _substr_python),
    Builtin("push", 2, "push(Vec<T>, T) -> Vec<T>", "the Vec with one element appended",
            _push_type, lambda sx, a, ts, t: sx.F.concat(a[0], sx.F.array(a[1])),
            lambda a, ts, t: a[0] + (a[1],)),
]}}

# the Map functions, and a Map's version of the other collections' functions of one name
FUNCTIONS: dict[str, Builtin] = {**{name: overload(b, ON_MAPS[name]) if name in ON_MAPS else b
                                    for name, b in _FUNCTIONS.items()}, **MAP_ONLY}
