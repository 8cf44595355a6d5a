"""DDlog types <-> Spark types, and DDlog values (ddlog/values) <-> Spark row values: each
mapping is one class (ddlog.types.TypeMapping), with one method per kind of type.

bool→Boolean, string→String, integers up to 64 bits→Long (bigint overflow is an error under
ANSI mode; bit<N>/signed<N> wrap explicitly; a bit<64> holds its 64 bits, so values from 2^63
up are negative Longs), wider bit<N>/signed<N>→Struct(hi: Long, lo: Long) (runtime/wide.py),
float/double→Float/Double, tuples→Struct(_0, _1, ..),
Vec/Set→Array (a Set's array is sorted and without duplicates), Option<T>→T nullable (None is
null), a struct type→Struct of its fields, an enum→Struct(_tag, one nested struct per
constructor that has fields), Group<K,V>→Struct(key, items: Array<V>).

A relation's Z-set frame has its columns named c0..cN (declared names can clash with our own
`_w`/`_i`); users see the declared names.
"""
from __future__ import annotations

import json
from typing import Any

from pyspark.sql import types as T

from ddlog.types import TInt, TOption, TypeMapping, TStruct, Type, is_u64, is_wide
from ddlog.values import AnyValue, Closure, Group, Record, canonical_map, canonical_set
from ddlog.runtime import wide

WEIGHT = "_w"
ITER = "_i"


def col_name(k: int) -> str:
    return f"c{k}"


class SparkTypes(TypeMapping):
    """The Spark type that holds values of a DDlog type."""

    def on_func(self, t):
        # a closure value (ddlog.values.Closure): which closure, its text, what it captured
        return T.StructType([T.StructField("id", T.LongType(), False),
                             T.StructField("text", T.StringType(), False),
                             T.StructField("env", T.StringType(), False),
                             T.StructField("args", T.StringType(), False)])

    def on_bool(self, t):
        return T.BooleanType()

    def on_string(self, t):
        return T.StringType()

    def on_int(self, t):
        if is_wide(t):
            return T.StructType([T.StructField("hi", T.LongType(), True),
                                 T.StructField("lo", T.LongType(), True)])
        return T.LongType()

    def on_float(self, t):
        return T.FloatType() if t.bits == 32 else T.DoubleType()

    def on_tuple(self, t):
        return T.StructType([T.StructField(f"_{k}", self(it), True)
                             for k, it in enumerate(t.items)])

    def on_vec(self, t):
        return T.ArrayType(self(t.elem), True)

    on_set = on_map = on_vec  # a Map: its entries, structs (_0 key, _1 value), sorted by key

    def on_option(self, t):
        return self(t.elem)

    def on_struct(self, t):
        if not t.is_enum:
            return T.StructType([T.StructField(n, self(ft), True)
                                 for n, ft in t.ctors[0].fields])
        fields = [T.StructField("_tag", T.StringType(), False)]
        for c in t.ctors:
            if c.fields:
                fields.append(T.StructField(c.name, T.StructType(
                    [T.StructField(n, self(ft), True) for n, ft in c.fields]), True))
        return T.StructType(fields)

    def on_group(self, t):
        # `weights`: each element's multiplicity (null: each 1)
        return T.StructType([T.StructField("key", self(t.key), True),
                             T.StructField("items", T.ArrayType(self(t.elem), True), True),
                             T.StructField("weights", T.ArrayType(T.LongType(), True), True)])

    def on_any(self, t):
        # the text of the value's type, and the value as Spark's to_json writes `{"v": x}`
        return T.StructType([T.StructField("t", T.StringType(), False),
                             T.StructField("v", T.StringType(), False)])


spark_type = SparkTypes()


def relation_schema(types: tuple[Type, ...] | list[Type], weight: bool = True,
                    names: list[str] | None = None) -> T.StructType:
    fields = [T.StructField(names[k] if names else col_name(k), spark_type(t), True)
              for k, t in enumerate(types)]
    if weight:
        fields.append(T.StructField(WEIGHT, T.LongType(), False))
    return T.StructType(fields)


class ToSpark(TypeMapping):
    """A DDlog value as PySpark's createDataFrame expects it for the type's Spark type:
    `to_spark(v, t)`."""

    def __call__(self, t: Type, v: Any) -> Any:
        return None if v is None else super().__call__(t, v)

    def on_bool(self, t, v):
        return v

    on_string = on_bool

    def on_int(self, t, v):
        if is_wide(t):
            return wide.stored(v, t)
        # a bit<64> from 2^63 up is stored as its bits, a negative Long (ddlog.types.is_u64)
        return v - (1 << 64) if is_u64(t) and v >= 1 << 63 else v

    def on_func(self, t, v):
        return (v.id, v.text, v.env, v.args)

    def on_float(self, t, v):
        return float(v)

    def on_tuple(self, t, v):
        return tuple(self(it, x) for x, it in zip(v, t.items))

    def on_vec(self, t, v):
        return [self(t.elem, x) for x in v]

    def on_set(self, t, v):
        return [self(t.elem, x) for x in canonical_set(v)]

    def on_map(self, t, v):
        return [self(t.elem, x) for x in canonical_map(v)]

    def on_option(self, t, v):
        return self(t.elem, v)

    def on_struct(self, t, v):
        ctor = t.ctor(v.ctor)
        inner = tuple(self(ft, x) for x, (_, ft) in zip(v.values, ctor.fields))
        if not t.is_enum:
            return inner
        out: list[Any] = [v.ctor]
        for c in t.ctors:
            if c.fields:
                out.append(inner if c.name == v.ctor else None)
        return tuple(out)

    def on_group(self, t, v):
        return (self(t.key, v.key), [self(t.elem, x) for x in v.items],
                None if v.weights is None else list(v.weights))

    def on_any(self, t, v):
        # (a float may be written otherwise than Spark's to_json writes it: two Any of one
        # double, one given as input and one made by to_any, may then differ)
        inner = _SPARK_JSON(t.known[v.type], v.value)
        return (v.type, json.dumps({"v": inner}, separators=(",", ":"), ensure_ascii=False))


class _SparkJson(ToSpark):
    """A DDlog value as Spark's to_json writes its Spark form: as ToSpark's, but structs,
    tuples and closures as objects of their fields by name."""

    def on_func(self, t, v):
        return {"id": v.id, "text": v.text, "env": v.env, "args": v.args}

    def on_int(self, t, v):
        out = super().on_int(t, v)
        return dict(zip(("hi", "lo"), out)) if is_wide(t) else out

    def on_tuple(self, t, v):
        return {f"_{k}": self(it, x) for k, (x, it) in enumerate(zip(v, t.items))}

    def on_struct(self, t, v):
        ctor = t.ctor(v.ctor)
        inner = {n: self(ft, x) for x, (n, ft) in zip(v.values, ctor.fields)}
        if not t.is_enum:
            return inner
        # (a constructor without fields has no struct of its own in the Spark form)
        return {"_tag": v.ctor, v.ctor: inner} if ctor.fields else {"_tag": v.ctor}

    def on_group(self, t, v):
        return {"key": self(t.key, v.key), "items": [self(t.elem, x) for x in v.items],
                "weights": None if v.weights is None else list(v.weights)}

    def on_any(self, t, v):
        return dict(zip(("t", "v"), super().on_any(t, v)))


class _JsonRow(dict):
    """A JSON object read back from Spark's to_json, indexed as a Row: by field name, and a
    tuple's elements (`_0`, `_1`, ...) by position; to_json leaves null fields out."""

    def __getitem__(self, k):
        return self.get(f"_{k}" if isinstance(k, int) else k)


class FromSpark(TypeMapping):
    """A value read from a Spark Row, in the DDlog representation: `from_spark(v, t)`."""

    def __call__(self, t: Type, v: Any) -> Any:
        return None if v is None else super().__call__(t, v)

    def on_bool(self, t, v):
        return v

    on_string = on_bool

    def on_int(self, t, v):
        if is_wide(t):
            return wide.value_of(v["hi"], v["lo"], t)
        return v + (1 << 64) if is_u64(t) and v < 0 else v

    def on_func(self, t, v):
        return Closure(v["id"], v["text"], v["env"], v["args"])

    def on_float(self, t, v):
        return float(v)

    def on_tuple(self, t, v):
        return tuple(self(it, v[k]) for k, it in enumerate(t.items))

    def on_vec(self, t, v):
        return tuple(self(t.elem, x) for x in v)

    def on_set(self, t, v):
        return canonical_set(self(t.elem, x) for x in v)

    def on_map(self, t, v):
        return canonical_map(self(t.elem, x) for x in v)

    def on_option(self, t, v):
        return self(t.elem, v)

    def on_struct(self, t, v):
        if not t.is_enum:
            c = t.ctors[0]
            return Record(c.name, tuple(self(ft, v[n]) for n, ft in c.fields))
        c = t.ctor(v["_tag"])
        inner = v[c.name] if c.fields else None
        return Record(c.name, tuple(self(ft, inner[n]) for n, ft in c.fields))

    def on_group(self, t, v):
        weights = v["weights"]
        return Group(self(t.key, v["key"]), tuple(self(t.elem, x) for x in v["items"]),
                     None if weights is None else tuple(weights))

    def on_any(self, t, v):
        held = t.known[v["t"]]
        return AnyValue(v["t"], self(held, json.loads(v["v"], object_hook=_JsonRow)["v"]))


_TO_SPARK, _FROM_SPARK, _SPARK_JSON = ToSpark(), FromSpark(), _SparkJson()


def to_spark(v: Any, t: Type) -> Any:
    return _TO_SPARK(t, v)


def from_spark(v: Any, t: Type) -> Any:
    return _FROM_SPARK(t, v)


class InvalidValue(TypeMapping):
    """A Column that is true where a column holds no value of the DDlog type (a null outside
    an Option, an integer outside bit<N>/signed<N>, also inside tuples, structs and vectors),
    or None when every value of the Spark type is valid: `invalid_value(c, t)`. Used to check
    DataFrames given as input, whose Spark types fit but whose values may not."""

    UNSUPPORTED = frozenset({"on_group"})

    def __call__(self, t: Type, x, nullable: bool = False):
        return super().__call__(t, x, nullable)

    @staticmethod
    def any_of(conds):
        conds = [c for c in conds if c is not None]
        if not conds:
            return None
        out = conds[0]
        for c in conds[1:]:
            out = out | c
        return out

    def _whole(self, x, nullable: bool, parts: list):
        """A null where none may be, or a bad part inside a present value."""
        null = None if nullable else x.isNull()
        inside = self.any_of(parts)
        if inside is not None and not nullable:
            # a null struct is caught by `null`; its fields are null too: look inside present
            # values only
            inside = x.isNotNull() & inside
        return self.any_of([null, inside])

    def on_bool(self, t, x, nullable):
        return self._whole(x, nullable, [])

    on_string = on_float = on_func = on_any = on_bool

    def on_int(self, t: TInt, x, nullable):
        if is_wide(t) and t.width < 128:
            # the upper word holds width - 64 bits (of a signed type, the rest repeat its sign)
            bits = t.width - 64
            first, past = ((-(1 << (bits - 1)), 1 << (bits - 1)) if t.signed
                           else (-(1 << 63), -(1 << 63) + (1 << bits)))
            hi = x.getField("hi")
            return self._whole(x, nullable, [x.isNotNull() & ((hi < first) | (hi >= past))])
        if t.width is None or t.width >= 64:
            return self._whole(x, nullable, [])
        lo, hi = (-(1 << (t.width - 1)), (1 << (t.width - 1)) - 1) if t.signed \
            else (0, (1 << t.width) - 1)
        return self._whole(x, nullable, [x.isNotNull() & ((x < lo) | (x > hi))])

    def on_option(self, t: TOption, x, nullable):
        bad = self(t.elem, x, True)
        return None if bad is None else (x.isNotNull() & bad)

    def on_tuple(self, t, x, nullable):
        return self._whole(x, nullable, [self(it, x.getField(f"_{k}"))
                                         for k, it in enumerate(t.items)])

    def on_vec(self, t, x, nullable):
        from pyspark.sql import functions as F

        if not may_be_invalid(t.elem):
            return self._whole(x, nullable, [])
        bad = F.coalesce(F.exists(x, lambda y: F.coalesce(self(t.elem, y), F.lit(False))),
                         F.lit(False))
        return self._whole(x, nullable, [bad])

    on_set = on_vec

    def on_map(self, t, x, nullable):
        from pyspark.sql import functions as F

        keys = F.transform(x, lambda e: e["_0"])
        twice = x.isNotNull() & (F.size(F.array_distinct(keys)) != F.size(x))  # a key twice
        return self.any_of([self.on_vec(t, x, nullable), twice])

    def on_struct(self, t: TStruct, x, nullable):
        if t.is_enum:
            return self._whole(x, nullable, [])
        return self._whole(x, nullable, [self(ft, x.getField(n))
                                         for n, ft in t.ctors[0].fields])


class _MayBeInvalid(TypeMapping):
    """Whether a value of the type's Spark type can fail to be one of the DDlog type (so that
    a vector's elements are only checked when they can be wrong)."""

    UNSUPPORTED = frozenset({"on_group"})

    def on_bool(self, t):
        return True  # a null

    on_string = on_float = on_int = on_tuple = on_vec = on_set = on_map = on_struct = on_bool
    on_func = on_any = on_bool

    def on_option(self, t):
        return self(t.elem)


_INVALID = InvalidValue()
may_be_invalid = _MayBeInvalid()


def invalid_value(c, t: Type):
    return _INVALID(t, c)
