"""DDlog types ↔ Spark types, and DDlog values (ddlog/values.py) ↔ Spark row values.

Mapping (DESIGN 5): bool→Boolean, string→String, every integer→Long (bigint overflow is an
error under ANSI mode; bit<N>/signed<N> wrap explicitly), float/double→Float/Double,
tuples→Struct(_0, _1, ..), Vec/Set→Array (a Set's array is sorted and without duplicates),
Option<T>→T nullable (None is null), a struct type→Struct of its fields, an enum→Struct(_tag,
one nested struct per constructor that has fields), Group<K,V>→Struct(key, items: Array<V>).

A relation's Z-set frame has its columns named c0..cN (declared names can clash with our own
`_w`/`_i`); users see the declared names.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import types as T

from ddlog.types import (TBool, TFloat, TGroup, TInt, TOption, TSet, TString, TStruct, TTuple,
                         TVec, Type)
from ddlog.values import Group, Record, canonical_set

WEIGHT = "_w"
ITER = "_i"


def col_name(k: int) -> str:
    return f"c{k}"


def spark_type(t: Type) -> T.DataType:
    if isinstance(t, TBool):
        return T.BooleanType()
    if isinstance(t, TString):
        return T.StringType()
    if isinstance(t, TInt):
        return T.LongType()
    if isinstance(t, TFloat):
        return T.FloatType() if t.bits == 32 else T.DoubleType()
    if isinstance(t, TTuple):
        return T.StructType([T.StructField(f"_{k}", spark_type(it), True)
                             for k, it in enumerate(t.items)])
    if isinstance(t, (TVec, TSet)):
        return T.ArrayType(spark_type(t.elem), True)
    if isinstance(t, TOption):
        return spark_type(t.elem)
    if isinstance(t, TStruct):
        if not t.is_enum:
            return T.StructType([T.StructField(n, spark_type(ft), True)
                                 for n, ft in t.ctors[0].fields])
        fields = [T.StructField("_tag", T.StringType(), False)]
        for c in t.ctors:
            if c.fields:
                fields.append(T.StructField(c.name, T.StructType(
                    [T.StructField(n, spark_type(ft), True) for n, ft in c.fields]), True))
        return T.StructType(fields)
    if isinstance(t, TGroup):
        return T.StructType([T.StructField("key", spark_type(t.key), True),
                             T.StructField("items", T.ArrayType(spark_type(t.elem), True), True)])
    raise TypeError(f"no Spark type for {t}")


def relation_schema(types: tuple[Type, ...] | list[Type], weight: bool = True,
                    names: list[str] | None = None) -> T.StructType:
    fields = [T.StructField(names[k] if names else col_name(k), spark_type(t), True)
              for k, t in enumerate(types)]
    if weight:
        fields.append(T.StructField(WEIGHT, T.LongType(), False))
    return T.StructType(fields)


def to_spark(v: Any, t: Type) -> Any:
    """A DDlog value as PySpark's createDataFrame expects it for `spark_type(t)`."""
    if v is None:
        return None
    if isinstance(t, (TBool, TString, TInt)):
        return v
    if isinstance(t, TFloat):
        return float(v)
    if isinstance(t, TTuple):
        return tuple(to_spark(x, it) for x, it in zip(v, t.items))
    if isinstance(t, TVec):
        return [to_spark(x, t.elem) for x in v]
    if isinstance(t, TSet):
        return [to_spark(x, t.elem) for x in canonical_set(v)]
    if isinstance(t, TOption):
        return to_spark(v, t.elem)
    if isinstance(t, TStruct):
        ctor = t.ctor(v.ctor)
        inner = tuple(to_spark(x, ft) for x, (_, ft) in zip(v.values, ctor.fields))
        if not t.is_enum:
            return inner
        out: list[Any] = [v.ctor]
        for c in t.ctors:
            if c.fields:
                out.append(inner if c.name == v.ctor else None)
        return tuple(out)
    if isinstance(t, TGroup):
        return (to_spark(v.key, t.key), [to_spark(x, t.elem) for x in v.items])
    raise TypeError(f"cannot convert a value of type {t}")


def from_spark(v: Any, t: Type) -> Any:
    """A value read from a Spark Row, in the DDlog representation."""
    if v is None:
        return None
    if isinstance(t, (TBool, TString, TInt)):
        return v
    if isinstance(t, TFloat):
        return float(v)
    if isinstance(t, TTuple):
        return tuple(from_spark(v[k], it) for k, it in enumerate(t.items))
    if isinstance(t, TVec):
        return tuple(from_spark(x, t.elem) for x in v)
    if isinstance(t, TSet):
        return canonical_set(from_spark(x, t.elem) for x in v)
    if isinstance(t, TOption):
        return from_spark(v, t.elem)
    if isinstance(t, TStruct):
        if not t.is_enum:
            c = t.ctors[0]
            return Record(c.name, tuple(from_spark(v[n], ft) for n, ft in c.fields))
        c = t.ctor(v["_tag"])
        inner = v[c.name] if c.fields else None
        return Record(c.name, tuple(from_spark(inner[n], ft) for n, ft in c.fields))
    if isinstance(t, TGroup):
        return Group(from_spark(v["key"], t.key),
                     tuple(from_spark(x, t.elem) for x in v["items"]))
    raise TypeError(f"cannot convert a value of type {t}")


def invalid_value(c, t: Type):
    """A Column that is true where `c` holds no value of DDlog type `t` (a null outside an
    Option, an integer outside bit<N>/signed<N>), or None when every value of the Spark type
    is valid. Used to check DataFrames given as input, whose Spark types fit but whose values
    may not."""
    from pyspark.sql import functions as F

    def any_of(conds):
        conds = [x for x in conds if x is not None]
        if not conds:
            return None
        out = conds[0]
        for x in conds[1:]:
            out = out | x
        return out

    def inner(x, ty: Type, nullable: bool):
        if isinstance(ty, TOption):
            bad = inner(x, ty.elem, True)
            return None if bad is None else (x.isNotNull() & bad)
        null = None if nullable else x.isNull()
        if isinstance(ty, TInt) and ty.width is not None and ty.width < 64:
            lo, hi = (-(1 << (ty.width - 1)), (1 << (ty.width - 1)) - 1) if ty.signed \
                else (0, (1 << ty.width) - 1)
            return any_of([null, x.isNotNull() & ((x < lo) | (x > hi))])
        if isinstance(ty, TTuple):
            parts = [inner(x.getField(f"_{k}"), it, False) for k, it in enumerate(ty.items)]
        elif isinstance(ty, (TVec, TSet)):
            e = inner(F.lit(0), ty.elem, False)  # only to learn whether elements can be bad
            parts = [] if e is None else [
                F.coalesce(F.exists(x, lambda y: F.coalesce(inner(y, ty.elem, False),
                                                             F.lit(False))), F.lit(False))]
        elif isinstance(ty, TStruct) and not ty.is_enum:
            parts = [inner(x.getField(n), ft, False) for n, ft in ty.ctors[0].fields]
        else:
            parts = []
        if parts and not nullable:
            # a null struct is caught by `null`; its fields are null too: look only inside
            # present structs
            inside = any_of(parts)
            return any_of([null, None if inside is None else (x.isNotNull() & inside)])
        return any_of([null] + parts)

    return inner(c, t, False)
