"""DDlog's `Any`: `to_any(x)` makes a value of any type an Any, `from_any(a)` gives it back as
an Option of the type the context asks for (None when `a` holds a value of another type).

On Spark an Any is a struct of the text of its value's type and the value as Spark's
`to_json` writes it; `from_any` reads it with `from_json` and the asked type's schema. Each
`to_any` tells the program's Any (ddlog.types.TAny) the type it takes, by which a value is
read back and printed on the driver.
"""
from __future__ import annotations

from ddlog.builtins.base import Args, Builtin
from ddlog.types import TAny, TOption, Type
from ddlog.values import AnyValue


def _to_any_type(a: Args, hint) -> Type:
    if not isinstance(hint, TAny):
        a.fail("to_any(x) needs an Any from the context (a column of type Any, or "
               "`to_any(x): Any`)")
    t = a.infer(0)
    hint.known[str(t)] = t
    return hint


def _from_any_type(a: Args, hint) -> Type:
    if not isinstance(hint, TOption):
        a.fail("from_any(a) needs its type from the context: an Option<T> (a column, or "
               "`from_any(a): Option<T>`)")
    a.want(0, isinstance(a.infer(0), TAny), "Any")
    return hint


def _to_any_spark(sx, args, types, ty):
    F = sx.F
    return F.struct(F.lit(str(types[0])).alias("t"),
                    F.to_json(F.struct(args[0].alias("v")),
                              {"ignoreNullFields": "true"}).alias("v"))


def _from_any_spark(sx, args, types, ty):
    F = sx.F
    schema = sx.spark_type(TOption(ty.elem))
    read = F.from_json(args[0].getField("v"), f"struct<v: {schema.simpleString()}>")
    return F.when(args[0].getField("t") == str(ty.elem), read.getField("v"))


REFLECT: dict[str, Builtin] = {b.name: b for b in [
    Builtin("to_any", 1, "to_any(T) -> Any", "the value as an Any", _to_any_type,
            _to_any_spark, lambda a, ts, t: AnyValue(str(ts[0]), a[0])),
    Builtin("from_any", 1, "from_any(Any) -> Option<T>",
            "the value an Any holds, if it is a T (T from the context)", _from_any_type,
            _from_any_spark, lambda a, ts, t: a[0].value if a[0].type == str(t.elem) else None),
]}
