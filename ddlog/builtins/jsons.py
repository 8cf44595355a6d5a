"""DDlog's `json` library: `to_json_string(x)`, the JSON text serde_json writes for a value,
and `from_json_string(s)`, a value of the type the context asks for read from such text.

The JSON of a type is the one DDlog's generated Rust types derive with serde:

- bool, integers (all widths), strings (and `istring`, extern types): JSON's own; a float as
  Rust's ryu writes it (`299792458.0`, `1e30`), `null` for NaN and the infinities;
- a tuple, a Vec, a Set: an array; a Map: an object (integer keys as their digits);
- `Option<T>`: `null` or the value; a type of one constructor: an object of its fields; a
  type of several: `{"C": {fields}}`, or `"C"` for a constructor without fields (Result's
  are `{"Ok":{"res":..}}` and `{"Err":{"err":..}}`).

Reading is serde's: every field that is not an Option must be there, fields it does not know
are skipped, a number must fit the integer type it is read as (integers of more than 38
digits, which Spark's VARIANT holds as floating point numbers, are read as such: u128's
values from 10^38 up cannot be read). Its errors are serde's texts
without the place (`missing field `b``, `invalid type: string, expected u32`, `unknown
variant `X`, expected one of `A`, `B``), where serde adds "at line L column C".

On Spark, writing is string concatenation over the value's Columns, reading goes through
Spark's VARIANT (`try_parse_json`), whose values keep JSON's kinds (`schema_of_variant`).
The Python meaning is the `json` module's parse and a writer of its own.
"""
from __future__ import annotations

import decimal
import json
import math
from typing import Any

from ddlog.builtins.base import Args, Builtin, result_column
from ddlog.types import (STRING, TAny, TBool, TFloat, TFunc, TGroup, TInt, TMap, TOption,
                         TSet, TString, TStruct, TTuple, TVec, Type, is_u64, is_wide,
                         result_type)
from ddlog.values import Record, canonical_map, canonical_set, rust_float
from ddlog.values.ops import render, round_float


def _local(name: str) -> str:
    return name.rsplit("::", 1)[-1]


def _unsupported(t: Type) -> str | None:
    """Why values of `t` have no JSON here, or None."""
    if isinstance(t, (TAny, TFunc, TGroup)):
        return f"{t} has none"
    if isinstance(t, TMap) and not isinstance(t.key, (TString, TInt)):
        return f"the keys of {t} are {t.key} (JSON's are strings or integers)"
    parts: list[Type] = []
    if isinstance(t, (TVec, TSet, TOption)):
        parts = [t.elem]
    elif isinstance(t, TMap):
        parts = [t.key, t.value]
    elif isinstance(t, TTuple):
        parts = list(t.items)
    elif isinstance(t, TStruct):
        parts = [ft for c in t.ctors for _, ft in c.fields]
    return next((why for p in parts if (why := _unsupported(p))), None)


def _to_json_type(a: Args, hint) -> Type:
    t = a.infer(0)
    why = _unsupported(t)
    if why:
        a.fail(f"expects a value that has a JSON form; {why}", 0)
    return result_type(STRING, STRING)


def _from_json_type(a: Args, hint) -> Type:
    a.check(0, STRING)
    ok = isinstance(hint, TStruct) and hint.name == "Result" and len(hint.args) == 2 \
        and hint.args[1] == STRING
    if not ok:
        a.fail("needs its type from the context: a Result<T, string> (a column, or "
               "`from_json_string(s): Result<T, string>`)")
    why = _unsupported(hint.args[0])
    if why:
        a.fail(f"reads a value that has a JSON form; {why}")
    return hint


# -- writing ----------------------------------------------------------------------------------

def json_float(v: float, bits: int) -> str:
    """A float as serde_json writes it (ryu): plain digits from 10^-5 up to 10^16 (10^13 for
    a 32-bit float), else the exponent form `1e30`, `1.5e-7`; `null` when not finite."""
    v = round_float(v, TFloat(bits))
    if math.isnan(v) or math.isinf(v):
        return "null"
    if v == 0:
        return "-0.0" if math.copysign(1, v) < 0 else "0.0"
    text = rust_float(abs(v), bits)  # shortest digits, no exponent
    whole, _, frac = text.partition(".")
    raw = whole + frac
    digits = raw.lstrip("0")
    kk = len(whole) - (len(raw) - len(digits))  # |v| = 0.digits * 10^kk
    d = digits.rstrip("0")
    n, most = len(d), 16 if bits == 64 else 13
    if kk >= n and kk <= most:
        out = d + "0" * (kk - n) + ".0"
    elif 0 < kk <= most:
        out = d[:kk] + "." + d[kk:]
    elif -5 < kk <= 0:
        out = "0." + "0" * -kk + d
    else:
        out = (d if n == 1 else d[0] + "." + d[1:]) + f"e{kk - 1}"
    return ("-" if v < 0 else "") + out


def write(v: Any, t: Type) -> str:
    """serde_json's text of the value `v` of type `t`."""
    if isinstance(t, TOption):
        return "null" if v is None else write(v, t.elem)
    if isinstance(t, (TBool, TInt)):
        return render(v, t)  # as DDlog writes them in text
    if isinstance(t, TFloat):
        return json_float(v, t.bits)
    if isinstance(t, TString):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(t, TTuple):
        return "[" + ",".join(write(x, it) for x, it in zip(v, t.items)) + "]"
    if isinstance(t, (TVec, TSet)):
        return "[" + ",".join(write(x, t.elem) for x in v) + "]"
    if isinstance(t, TMap):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + write(x, t.value)
                              for k, x in v) + "}"
    assert isinstance(t, TStruct)
    ctor = t.ctor(v.ctor)
    body = "{" + ",".join(json.dumps(n) + ":" + write(x, ft)
                          for (n, ft), x in zip(ctor.fields, v.values)) + "}"
    if not t.is_enum:
        return body
    if not ctor.fields:
        return json.dumps(_local(ctor.name))
    return "{" + json.dumps(_local(ctor.name)) + ":" + body + "}"


def _quoted_spark(F, s):
    """A JSON string of the text `s`: `"` and `\\` escaped, and the control characters (as
    \\n, \\t, ... or \\u00XX)."""
    out = F.regexp_replace(F.regexp_replace(s, r"\\", r"\\\\"), '"', '\\\\"')
    for ch, esc in (("\n", "n"), ("\r", "r"), ("\t", "t"), ("\b", "b"), ("\f", "f")):
        out = F.regexp_replace(out, ch, "\\\\" + esc)
    rare = out
    for code in list(range(0, 8)) + [11] + list(range(14, 32)):
        rare = F.regexp_replace(rare, chr(code), f"\\\\u{code:04x}")
    return F.concat(F.lit('"'), F.when(out.rlike("[\\x00-\\x1f]"), rare).otherwise(out),
                    F.lit('"'))


def write_spark(sx, c, t: Type):
    """The Column of serde_json's text of the Column `c` of type `t`."""
    F = sx.F
    if isinstance(t, TOption):
        return F.when(c.isNull(), F.lit("null")).otherwise(write_spark(sx, c, t.elem))
    if isinstance(t, TBool):
        return F.when(c, F.lit("true")).otherwise(F.lit("false"))
    if isinstance(t, TInt):
        return sx.to_string(c, t)
    if isinstance(t, TFloat):
        return sx.float_json(c, t)
    if isinstance(t, TString):
        return _quoted_spark(F, c)
    if isinstance(t, TTuple):
        parts = [write_spark(sx, c.getField(f"_{k}"), it) for k, it in enumerate(t.items)]
        return F.concat(F.lit("["), F.concat_ws(",", *parts), F.lit("]"))
    if isinstance(t, (TVec, TSet)):
        return F.concat(F.lit("["), F.array_join(
            F.transform(c, lambda x: write_spark(sx, x, t.elem)), ","), F.lit("]"))
    if isinstance(t, TMap):
        def entry(e):
            return F.concat(_quoted_spark(F, sx.to_string(e.getField("_0"), t.key)), F.lit(":"),
                            write_spark(sx, e.getField("_1"), t.value))
        return F.concat(F.lit("{"), F.array_join(F.transform(c, entry), ","), F.lit("}"))
    assert isinstance(t, TStruct)

    def body(s, ctor):
        parts = [F.concat(F.lit(json.dumps(n) + ":"), write_spark(sx, s.getField(n), ft))
                 for n, ft in ctor.fields]
        return F.concat(F.lit("{"), F.concat_ws(",", *parts), F.lit("}")) if parts \
            else F.lit("{}")
    if not t.is_enum:
        return body(c, t.ctors[0])
    out = F.lit(None).cast("string")
    for ctor in reversed(t.ctors):
        name = json.dumps(_local(ctor.name))
        text = F.lit(name) if not ctor.fields else F.concat(
            F.lit("{" + name + ":"), body(c.getField(ctor.name), ctor), F.lit("}"))
        out = F.when(c.getField("_tag") == ctor.name, text).otherwise(out)
    return out


def _to_json_python(args, types, ty):
    return Record("Ok", (write(args[0], types[0]),))


def _to_json_spark(sx, args, types, ty):
    F = sx.F
    return result_column(sx, F.lit(True), write_spark(sx, args[0], types[0]),
                         F.lit(None).cast("string"), ty)


# -- reading ----------------------------------------------------------------------------------

class _Bad(Exception):
    pass


def _expected(t: Type) -> str:
    """What serde says it expected, for a value of type `t`."""
    if isinstance(t, TOption):
        return _expected(t.elem)
    if isinstance(t, TBool):
        return "a boolean"
    if isinstance(t, TInt):  # the Rust type that holds it
        if t.width is None:
            return "bigint"
        width = next(w for w in (8, 16, 32, 64, 128) if t.width <= w)
        return ("i" if t.signed else "u") + str(width)
    if isinstance(t, TFloat):
        return f"f{t.bits}"
    if isinstance(t, TString):
        return "a string"
    if isinstance(t, TTuple):
        return f"a tuple of size {len(t.items)}"
    if isinstance(t, (TVec, TSet)):
        return "a sequence"
    if isinstance(t, TMap):
        return "a map"
    assert isinstance(t, TStruct)
    return ("enum " if t.is_enum else "struct ") + _local(t.name)


def _kind(x: Any) -> str:
    """The kind of a parsed JSON value, as serde names it."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, int):  # Spark's VARIANT holds integers of up to 38 digits
        return "integer" if abs(x) < 10 ** 38 else "floating point"
    if isinstance(x, decimal.Decimal):
        # a number with a point or an exponent; as Spark's VARIANT, one without a fraction
        # and of more digits than a Long holds is an integer
        whole = x == x.to_integral_value() and x.is_finite() and 10 ** 18 <= abs(x) < 10 ** 38
        return "integer" if whole and "e" not in str(x).lower() else "floating point"
    if isinstance(x, float):
        return "floating point"
    if isinstance(x, str):
        return "string"
    return "sequence" if isinstance(x, list) else "map"


def _int_range(t: TInt) -> tuple[int, int]:
    if t.width is None:
        return -(1 << 63), (1 << 63) - 1
    if t.signed:
        return -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    return 0, (1 << t.width) - 1


def _invalid(x: Any, t: Type) -> _Bad:
    return _Bad(f"invalid type: {_kind(x)}, expected {_expected(t)}")


def read(x: Any, t: Type) -> Any:
    """The value of type `t` a parsed JSON value stands for; raises _Bad with serde's text."""
    if isinstance(t, TOption):
        return None if x is None else read(x, t.elem)
    if isinstance(t, TBool):
        if not isinstance(x, bool):
            raise _invalid(x, t)
        return x
    if isinstance(t, TInt):
        if _kind(x) != "integer":
            raise _invalid(x, t)
        x = int(x)
        lo, hi = _int_range(t)
        if not lo <= x <= hi:
            raise _Bad(f"invalid value: integer `{x}`, expected {_expected(t)}")
        return x
    if isinstance(t, TFloat):
        if _kind(x) not in ("integer", "floating point"):
            raise _invalid(x, t)
        return round_float(float(x), t)
    if isinstance(t, TString):
        if not isinstance(x, str):
            raise _invalid(x, t)
        return x
    if isinstance(t, TTuple):
        if not isinstance(x, list):
            raise _invalid(x, t)
        if len(x) != len(t.items):
            raise _Bad(f"invalid length {len(x)}, expected {_expected(t)}")
        return tuple(read(v, it) for v, it in zip(x, t.items))
    if isinstance(t, (TVec, TSet)):
        if not isinstance(x, list):
            raise _invalid(x, t)
        items = tuple(read(v, t.elem) for v in x)
        return canonical_set(items) if isinstance(t, TSet) else items
    if isinstance(t, TMap):
        if not isinstance(x, dict):
            raise _invalid(x, t)
        # errors in key order, as Spark's VARIANT keeps an object's keys
        return canonical_map([(_key(k, t.key), read(v, t.value)) for k, v in sorted(x.items())])
    assert isinstance(t, TStruct)
    if not t.is_enum:
        return _fields(x, t.ctors[0], t)
    names = {_local(c.name): c for c in t.ctors}
    if isinstance(x, str):  # a constructor without fields
        if x not in names:
            raise _Bad(_unknown_variant(x, t))
        if names[x].fields:
            raise _invalid(x, t)
        return Record(names[x].name, ())
    if not isinstance(x, dict) or len(x) != 1:
        raise _invalid(x, t)
    (name, inner), = x.items()
    if name not in names:
        raise _Bad(_unknown_variant(name, t))
    ctor = names[name]
    if not ctor.fields:
        if inner is not None:
            raise _invalid(inner, t)
        return Record(ctor.name, ())
    return _fields(inner, ctor, t)


def _unknown_variant(name: str, t: TStruct) -> str:
    known = ", ".join(f"`{_local(c.name)}`" for c in t.ctors)
    return f"unknown variant `{name}`, expected one of {known}"


def _fields(x: Any, ctor, t: TStruct) -> Record:
    if not isinstance(x, dict):
        raise _invalid(x, t)
    values = []
    for n, ft in ctor.fields:
        if n in x:
            values.append(read(x[n], ft))
        elif isinstance(ft, TOption):
            values.append(None)
        else:
            values.append(_MISSING)
    for (n, _), v in zip(ctor.fields, values):
        if v is _MISSING:
            raise _Bad(f"missing field `{n}`")
    return Record(ctor.name, tuple(values))


_MISSING = object()


def _key(k: str, t: Type) -> Any:
    if isinstance(t, TString):
        return k
    assert isinstance(t, TInt)
    lo, hi = _int_range(t)
    if not (k.lstrip("-").isdigit() and k.isascii()) or not lo <= int(k) <= hi:
        raise _Bad(f"invalid value: map key `{k}`, expected {_expected(t)}")
    return int(k)


def _from_json_python(args, types, ty):
    try:
        data = json.loads(args[0], parse_constant=_raise, object_pairs_hook=_object,
                          parse_float=decimal.Decimal)
    except (ValueError, _Bad):
        return Record("Err", ("invalid JSON",))
    try:
        return Record("Ok", (read(data, ty.args[0]),))
    except _Bad as e:
        return Record("Err", (str(e),))


def _raise(c):
    raise _Bad(c)  # NaN and Infinity are not JSON


def _object(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) < len(pairs):
        raise _Bad("duplicate key")  # Spark's VARIANT refuses such a text
    return out


# -- reading on Spark -------------------------------------------------------------------------

def _kind_spark(F, v):
    """The kind of a VARIANT, as serde names it (null for a missing value)."""
    s = F.schema_of_variant(v)
    return (F.when(s == "VOID", F.lit("null")).when(s == "BOOLEAN", F.lit("boolean"))
            .when(s == "STRING", F.lit("string"))
            # an integer: a Long, or a decimal of more digits (a VARIANT keeps `2.0` as the
            # decimal 2, of one digit: a floating point number)
            .when((s == "BIGINT") | s.rlike("^DECIMAL\\((19|2[0-9]|3[0-8]),0\\)$"),
                  F.lit("integer"))
            .when(s.startswith("ARRAY"), F.lit("sequence"))
            .when(s.startswith("OBJECT"), F.lit("map"))
            .otherwise(F.lit("floating point")))


def read_spark(sx, v, t: Type):
    """A struct Column (e, v) of what reading the VARIANT `v` as a `t` gives: `e` serde's
    text of the first error (null when there is none), `v` the value (meaningful when there
    is no error). `v` is null for a field the object does not have. Whatever is read twice
    (the VARIANT, its kind, the parts' results) is bound once: Spark's expressions are
    trees, and a part repeated at each level of a type would grow them exponentially."""
    F = sx.F
    return sx.let(v, lambda v: sx.let(_kind_spark(F, v), lambda kind: _read(sx, v, kind, t)))


def _ev(F, err, val):
    return F.struct(err.alias("e"), val.alias("v"))


def _read(sx, v, kind, t: Type):
    F = sx.F
    null_text = F.lit(None).cast("string")

    def invalid(k=kind):
        return F.concat(F.lit("invalid type: "), k, F.lit(f", expected {_expected(t)}"))
    if isinstance(t, TOption):
        absent = v.isNull() | F.is_variant_null(v)
        return sx.let(read_spark(sx, v, t.elem), lambda r: _ev(
            F, F.when(absent, null_text).otherwise(r.getField("e")),
            F.when(~absent, r.getField("v"))))
    if isinstance(t, (TBool, TString)):
        want = "boolean" if isinstance(t, TBool) else "string"
        return _ev(F, F.when(kind != want, invalid()),
                   F.try_variant_get(v, "$", want).cast(sx.spark_type(t)))
    if isinstance(t, TInt):
        def with_digits(digits):
            lo, hi = _int_range(t)
            fits = digits >= _dec(F, lo)
            if hi < 10 ** 38:
                fits = fits & (digits <= _dec(F, hi))
            err = (F.when(kind != "integer", invalid())
                   .when(digits.isNull() | ~fits,
                         F.concat(F.lit("invalid value: integer `"),
                                  F.try_variant_get(v, "$", "string"),
                                  F.lit(f"`, expected {_expected(t)}"))))
            return _ev(F, err, _int_value(sx, digits, t))
        return sx.let(F.try_variant_get(v, "$", "decimal(38,0)"), with_digits)
    if isinstance(t, TFloat):
        return _ev(F, F.when((kind != "integer") & (kind != "floating point"), invalid()),
                   F.try_variant_get(v, "$", "double").cast(sx.spark_type(t)))
    if isinstance(t, TTuple):
        def tuple_of(arr):
            parts = F.struct(*[read_spark(sx, F.get(arr, k), it).alias(f"p{k}")
                               for k, it in enumerate(t.items)])
            n = len(t.items)
            shape = F.when(arr.isNull(), invalid()).when(
                F.size(arr) != n, F.concat(F.lit("invalid length "), F.size(arr).cast("string"),
                                           F.lit(f", expected {_expected(t)}")))
            return sx.let(parts, lambda ps: _ev(
                F, F.coalesce(shape, *[ps.getField(f"p{k}").getField("e") for k in range(n)]),
                F.struct(*[ps.getField(f"p{k}").getField("v").alias(f"_{k}")
                           for k in range(n)])))
        return sx.let(F.try_variant_get(v, "$", "array<variant>"), tuple_of)
    if isinstance(t, (TVec, TSet)):
        def vec_of(arr):
            return sx.let(F.transform(arr, lambda x: read_spark(sx, x, t.elem)), lambda items: _ev(
                F, F.when(arr.isNull(), invalid()).otherwise(_first_error(F, items)),
                _set_or_vec(sx, F.transform(items, lambda i: i.getField("v")), t)))
        return sx.let(F.try_variant_get(v, "$", "array<variant>"), vec_of)
    if isinstance(t, TMap):
        def entry(e):
            k_err, k_val = _key_spark(sx, e.getField("key"), t.key)
            return sx.let(read_spark(sx, e.getField("value"), t.value), lambda got: _ev(
                F, F.coalesce(k_err, got.getField("e")),
                F.struct(k_val.alias("_0"), got.getField("v").alias("_1"))))

        def map_of(obj):
            return sx.let(F.transform(F.map_entries(obj), entry), lambda items: _ev(
                F, F.when(obj.isNull(), invalid()).otherwise(_first_error(F, items)),
                sx.canonical_map(F.transform(items, lambda i: i.getField("v")), t)))
        return sx.let(F.try_variant_get(v, "$", "map<string,variant>"), map_of)
    assert isinstance(t, TStruct)
    if not t.is_enum:
        return _fields_spark(sx, v, t.ctors[0], invalid)

    def enum_of(obj):
        name = F.coalesce(F.when(kind == "string", F.try_variant_get(v, "$", "string")),
                          F.when(F.size(obj) == 1, F.try_element_at(F.map_keys(obj), F.lit(1))))
        inner = F.try_element_at(F.map_values(obj), F.lit(1))
        with_fields = [c for c in t.ctors if c.fields]
        reads = F.struct(*[_fields_spark(sx, inner, c, invalid).alias(f"c{k}")
                           for k, c in enumerate(with_fields)]) if with_fields else F.lit(0)

        def finish(name, rs):
            known = ", ".join(f"`{_local(c.name)}`" for c in t.ctors)
            err = F.when(name.isNull(), invalid())
            fields = []
            for ctor in t.ctors:
                here = name == _local(ctor.name)
                if ctor.fields:
                    r = rs.getField(f"c{with_fields.index(ctor)}")
                    err = err.when(here, F.when(kind == "string", invalid())
                                   .otherwise(r.getField("e")))
                    fields.append(F.when(here, r.getField("v")).alias(ctor.name))
                else:
                    err = err.when(here, F.when((kind != "string") & ~F.is_variant_null(inner),
                                                invalid(_kind_spark(F, inner))))
            err = err.otherwise(F.concat(F.lit("unknown variant `"), name,
                                         F.lit(f"`, expected one of {known}")))
            tag = F.lit(t.ctors[0].name)
            for ctor in t.ctors[1:]:
                tag = F.when(name == _local(ctor.name), F.lit(ctor.name)).otherwise(tag)
            return _ev(F, err, F.struct(tag.alias("_tag"), *fields))
        return sx.let(F.struct(name.alias("n"), reads.alias("r")),
                      lambda b: finish(b.getField("n"), b.getField("r")))
    return sx.let(F.try_variant_get(v, "$", "map<string,variant>"), enum_of)


def _set_or_vec(sx, arr, t: Type):
    return sx.canonical_set(arr, t) if isinstance(t, TSet) else arr


def _first_error(F, items):
    errors = F.filter(items, lambda i: i.getField("e").isNotNull())
    return F.try_element_at(errors, F.lit(1)).getField("e")


def _fields_spark(sx, v, ctor, invalid):
    """(e, v) of an object read as the fields of `ctor`: the first field's error in the
    constructor's order, then the first missing field."""
    F = sx.F

    def of(obj):
        reads = F.struct(*[read_spark(sx, F.try_element_at(obj, F.lit(n)), ft).alias(n)
                           for n, ft in ctor.fields]) if ctor.fields else F.lit(0)

        def finish(rs):
            missing = [F.when(~F.map_contains_key(obj, F.lit(n)), F.lit(f"missing field `{n}`"))
                       for n, ft in ctor.fields if not isinstance(ft, TOption)]
            err = F.coalesce(F.when(obj.isNull(), invalid()),
                             *[F.when(F.map_contains_key(obj, F.lit(n)),
                                      rs.getField(n).getField("e")) for n, _ in ctor.fields],
                             *missing) if ctor.fields else F.when(obj.isNull(), invalid())
            return _ev(F, err, F.struct(*[rs.getField(n).getField("v").alias(n)
                                          for n, _ in ctor.fields]))
        return sx.let(reads, finish)
    return sx.let(F.try_variant_get(v, "$", "map<string,variant>"), of)


def _dec(F, n: int):
    """An integer constant as a decimal(38,0) Column (a Long does not hold them all)."""
    return F.lit(str(n)).cast("decimal(38,0)")


def _int_value(sx, digits, t: TInt):
    """The integer of type `t` whose decimal digits are `digits` (a decimal(38,0))."""
    F = sx.F
    if is_wide(t):
        two64 = _dec(F, 2 ** 64)
        hi = F.floor(digits / two64)
        lo = digits - hi * two64
        return sx.int_from_words(sx.u64_from_decimal(F.pmod(hi, two64).cast("decimal(38,0)")),
                                 sx.u64_from_decimal(lo.cast("decimal(38,0)")), t)
    if is_u64(t):
        return sx.u64_from_decimal(digits)
    return digits.cast("long")


def _key_spark(sx, k, t: Type):
    F = sx.F
    if isinstance(t, TString):
        return F.lit(None).cast("string"), k.cast(sx.spark_type(t))
    lo, hi = _int_range(t)
    digits = F.when(k.rlike("^-?[0-9]+$"), k).cast("decimal(38,0)")
    fits = digits.isNotNull() & (digits >= _dec(F, lo))
    if hi < 10 ** 38:
        fits = fits & (digits <= _dec(F, hi))
    err = F.when(~fits, F.concat(F.lit("invalid value: map key `"), k,
                                 F.lit(f"`, expected {_expected(t)}")))
    return err, _int_value(sx, digits, t)


def _from_json_spark(sx, args, types, ty):
    F = sx.F
    def finish(v):
        def done(got):
            err = F.when(v.isNull(), F.lit("invalid JSON")).otherwise(got.getField("e"))
            return result_column(sx, err.isNull(), got.getField("v"), err, ty)
        return sx.let(read_spark(sx, v, ty.args[0]), done)
    text = args[0]
    return sx.let(F.when(_nothing_after(F, text), F.try_parse_json(text)), finish)


def _nothing_after(F, text):
    """Whether nothing but blanks follows the first JSON value of `text` (Spark's parse
    reads the first value and ignores the rest). With strings made `0`, an array or object
    ends where its brackets first balance; any other value is one token."""
    bare = F.regexp_replace(text, r'"(?:[^"\\]|\\.)*"', "0")

    def step(acc, ch):
        depth = acc.getField("d") + F.when(ch.isin("{", "["), 1).when(ch.isin("}", "]"), -1) \
            .otherwise(0)
        done = acc.getField("done")
        return F.struct(F.when(done, acc.getField("d")).otherwise(depth).alias("d"),
                        (done | (depth == 0) & ch.isin("}", "]")).alias("done"),
                        (acc.getField("bad") | done & ~ch.rlike("^\\s$")).alias("bad"))
    start = F.struct(F.lit(0).alias("d"), F.lit(False).alias("done"), F.lit(False).alias("bad"))
    nested = ~F.aggregate(F.split(bare, ""), start, step).getField("bad")
    return F.when(F.ltrim(bare).rlike("^[\\[{]"), nested).otherwise(
        bare.rlike("^\\s*(-?[0-9][0-9.eE+-]*|true|false|null)\\s*$"))


JSON: dict[str, Builtin] = {b.name: b for b in [
    Builtin("to_json_string", 1, "to_json_string(T) -> Result<string, string>",
            "the JSON text serde_json writes for the value", _to_json_type, _to_json_spark,
            _to_json_python),
    Builtin("from_json_string", 1, "from_json_string(string) -> Result<T, string>",
            "the value of type T (from the context) the JSON text stands for, as serde reads "
            "it; Err with serde's text (without its place) when it is not one",
            _from_json_type, _from_json_spark, _from_json_python),
]}
