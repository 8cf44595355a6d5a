"""Semantic types of the dialect (what the type checker computes; resolved, no aliases left).

These are plain frozen dataclasses, so they hash and compare structurally. What a type means
to each part of the system is a TypeMapping (below): the Spark mapping lives in
runtime/schema.py, the Python value representation in ddlog/values/. The relations' schemas
(RelationInfo) are here too, as every layer reads them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from ddlog.errors import Span


class Type:
    """Base class of semantic types."""


@dataclass(frozen=True)
class TBool(Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class TString(Type):
    """`string`; with a `name`, an `extern type` of that name: a type of its own (nominal, as
    DDlog's), whose values are their text, as DDlog writes and reads them (`time::Time` is
    "10:11:12.000000000"), and whose `default()` is `default`."""

    name: str | None = None
    default: str = ""

    def __str__(self) -> str:
        return self.name or "string"


@dataclass(frozen=True)
class TInt(Type):
    """Integers. `width=None` is `bigint` (unbounded in DDlog; a 64-bit long on Spark, where
    overflow is an error). `bit<N>` is unsigned and wraps modulo 2^N; `signed<N>` wraps in
    two's complement. `u8`..`u64`, `s8`..`s64` and `usize` (= bit<64>) are aliases."""

    signed: bool = True
    width: int | None = None

    def __str__(self) -> str:
        if self.width is None:
            return "bigint"
        return f"{'signed' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True)
class TFloat(Type):
    bits: int = 64  # 32 = float, 64 = double

    def __str__(self) -> str:
        return "float" if self.bits == 32 else "double"


@dataclass(frozen=True)
class TTuple(Type):
    items: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


@dataclass(frozen=True)
class TVec(Type):
    elem: Type

    def __str__(self) -> str:
        return f"Vec<{self.elem}>"


@dataclass(frozen=True)
class TSet(Type):
    """`Set<T>`, DDlog's ordered set; also hashset's `HashSet<T>` (`hashed`), which is a Set
    in every way but the order it prints its elements in (ddlog/values/rusthash.py), so that
    the two compare equal as types."""

    elem: Type
    hashed: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return f"Set<{self.elem}>"


@dataclass(frozen=True)
class TMap(Type):
    """`Map<K, V>`, DDlog's ordered map. A value is its entries `(k, v)`, sorted by key, one per
    key: on Spark an array of (key, value) structs, since Spark cannot compare, group or
    deduplicate its MapType columns, and equal maps must be equal values in a relation."""

    key: Type
    value: Type

    @property
    def elem(self) -> TTuple:
        """The type of an entry."""
        return TTuple((self.key, self.value))

    def __str__(self) -> str:
        return f"Map<{self.key}, {self.value}>"


@dataclass(frozen=True)
class TOption(Type):
    """`Option<T>`: constructors `Some{x: T}` and `None`. Values are `None` or the inner value."""

    elem: Type

    def __str__(self) -> str:
        return f"Option<{self.elem}>"


@dataclass(frozen=True)
class TCtor:
    """One constructor of a user type: `P{x: bigint, y: string}`."""

    name: str
    fields: tuple[tuple[str, Type], ...]

    def field_type(self, name: str) -> Type | None:
        return dict(self.fields).get(name)


@dataclass(frozen=True)
class TStruct(Type):
    """A user type declared with constructors: a struct (one constructor) or an enum (several).

    Two TStruct are the same type when they have the same name and type arguments (types are
    nominal). A generic typedef (`typedef Result<'V, 'E> = Ok{res: 'V} | Err{err: 'E}`) is
    one TStruct per use (`Result<u8, string>`: `args` are the types its variables stand for,
    and the constructors' fields are of those); with type variables as `args` it is the
    template its constructors are checked against."""

    name: str
    ctors: tuple[TCtor, ...]
    args: tuple[Type, ...] = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TStruct) and other.name == self.name and other.args == self.args

    def __hash__(self) -> int:
        return hash(("struct", self.name, self.args))

    def __str__(self) -> str:
        if self.args:
            return f"{self.name}<{', '.join(map(str, self.args))}>"
        return self.name

    def ctor(self, name: str) -> TCtor | None:
        for c in self.ctors:
            if c.name == name:
                return c
        return None

    @property
    def is_enum(self) -> bool:
        return len(self.ctors) > 1


@dataclass(frozen=True)
class TGroup(Type):
    """`Group<K, V>`: what `group_by` binds. Only usable through its methods and in heads."""

    key: Type
    elem: Type

    def __str__(self) -> str:
        return f"Group<{self.key}, {self.elem}>"


@dataclass(frozen=True)
class TFunc(Type):
    """The type of a closure `|a, b| e`: `|A, B|: R` (a built-in's closure argument, or a value
    ddlog/check/closures.py makes)."""

    params: tuple[Type, ...]
    result: Type

    def __str__(self) -> str:
        return f"function({', '.join(map(str, self.params))}): {self.result}"


@dataclass(frozen=True)
class TAny(Type):
    """DDlog's `Any`: a value of any type, made by `to_any(x)` and read back by `from_any(a)`
    (an Option: None when `a` holds a value of another type). A value is the type it came
    from, named by its text, and the value. All TAny are the same type; the one of a program
    carries, in `known`, the types its `to_any` calls take (filled by the checker), by which
    a value is read back from its Spark form and printed."""

    known: dict[str, Type] = field(default_factory=dict, compare=False, repr=False)

    def __str__(self) -> str:
        return "Any"


@dataclass(frozen=True)
class TVar(Type):
    """A type variable `'A` of a generic function's signature. Each call instantiates it (the
    function is checked again with the arguments' types), so no value, column or expression of
    a checked program has this type, and no TypeMapping knows it."""

    name: str

    def __str__(self) -> str:
        return self.name


# The types ddlog_std declares in the dialect (ddlog/builtins/ddlog_std.dl); `dump` prints their
# constructors qualified by the module, as DDlog does.
STD_TYPES = frozenset({"Result"})


def result_type(value: Type, err: Type) -> TStruct:
    """`Result<V, E>`, as ddlog/builtins/ddlog_std.dl declares it (for built-ins returning one)."""
    return TStruct("Result", (TCtor("Ok", (("res", value),)), TCtor("Err", (("err", err),))),
                   (value, err))


def substitute(t: Type, bound: dict[str, Type]) -> Type:
    """`t` with its type variables replaced by their bindings."""
    if isinstance(t, TVar):
        return bound.get(t.name, t)
    if isinstance(t, (TVec, TSet, TOption)):
        return replace(t, elem=substitute(t.elem, bound))  # a HashSet stays one
    if isinstance(t, TGroup):
        return TGroup(substitute(t.key, bound), substitute(t.elem, bound))
    if isinstance(t, TMap):
        return TMap(substitute(t.key, bound), substitute(t.value, bound))
    if isinstance(t, TTuple):
        return TTuple(tuple(substitute(x, bound) for x in t.items))
    if isinstance(t, TFunc):
        return TFunc(tuple(substitute(x, bound) for x in t.params), substitute(t.result, bound))
    if isinstance(t, TStruct) and t.args:
        ctors = tuple(TCtor(c.name, tuple((n, substitute(ft, bound)) for n, ft in c.fields))
                      for c in t.ctors)
        return TStruct(t.name, ctors, tuple(substitute(a, bound) for a in t.args))
    return t


def has_vars(t: Type) -> bool:
    return isinstance(t, TVar) or any(has_vars(x) for x in _parts(t))


def _parts(t: Type) -> tuple[Type, ...]:
    if isinstance(t, (TVec, TSet, TOption)):
        return (t.elem,)
    if isinstance(t, TGroup):
        return (t.key, t.elem)
    if isinstance(t, TMap):
        return (t.key, t.value)
    if isinstance(t, TTuple):
        return t.items
    if isinstance(t, TStruct):
        return t.args
    if isinstance(t, TFunc):
        return (*t.params, t.result)
    return ()


def unify(pattern: Type, actual: Type, bound: dict[str, Type]) -> bool:
    """Whether `actual` is an instance of `pattern`, binding its type variables in `bound`."""
    if isinstance(pattern, TVar):
        if pattern.name in bound:
            return bound[pattern.name] == actual
        bound[pattern.name] = actual
        return True
    if type(pattern) is not type(actual):
        return False
    if isinstance(pattern, TStruct) and pattern.name != actual.name:
        return False
    parts, others = _parts(pattern), _parts(actual)
    if not parts:
        return pattern == actual
    return len(parts) == len(others) and all(unify(p, a, bound) for p, a in zip(parts, others))


BOOL = TBool()
STRING = TString()
BIGINT = TInt()
USIZE = TInt(False, 64)
DOUBLE = TFloat(64)
FLOAT = TFloat(32)

# Built-in type names that take no parameters.
PRIMITIVES: dict[str, Type] = {
    "bool": BOOL,
    "string": STRING,
    "bigint": BIGINT,
    "float": FLOAT,
    "double": DOUBLE,
    "usize": USIZE,
    "isize": TInt(True, 64),
    "istring": STRING,  # DDlog's interned string (module internment): a string here
    **{f"u{n}": TInt(False, n) for n in (8, 16, 32, 64, 128)},
    **{f"s{n}": TInt(True, n) for n in (8, 16, 32, 64, 128)},
}


# ---------------------------------------------------------------------------------------------
# Type mappings


class TypeMapping:
    """What each kind of type means to one part of the system, in one class: one method per
    kind (`on_int(t, ...)`, `on_vec(t, ...)`, ...), called as `mapping(t, ...)`. A mapping
    lists in `UNSUPPORTED` the kinds that have no meaning for it (their method raises);
    tests/unit/test_types.py checks that every mapping decides about every kind, so a new
    kind of type (Map, say) cannot be forgotten in one of them."""

    UNSUPPORTED: frozenset[str] = frozenset()

    def __call__(self, t: Type, *args, **kwargs):
        method = getattr(self, KIND_METHODS[type(t)], None)
        if method is None:
            return self.unsupported(t, *args, **kwargs)
        return method(t, *args, **kwargs)

    def unsupported(self, t: Type, *args, **kwargs):
        raise TypeError(f"{type(self).__name__}: no meaning for values of type {t}")


KIND_METHODS: dict[type, str] = {
    TBool: "on_bool", TString: "on_string", TInt: "on_int", TFloat: "on_float",
    TTuple: "on_tuple", TVec: "on_vec", TSet: "on_set", TMap: "on_map", TOption: "on_option",
    TStruct: "on_struct", TGroup: "on_group", TFunc: "on_func", TAny: "on_any",
}


def is_u64(t: Type) -> bool:
    """Whether values of `t` are 64-bit unsigned (`bit<64>`, `u64`, `usize`). Spark has no
    unsigned type: they are stored as their bits in a signed Long (values from 2^63 up are
    negative Longs), so ordering, division, `>>`, widening and text treat them apart."""
    return isinstance(t, TInt) and not t.signed and t.width == 64


def unoptioned(t: Type) -> Type:
    """The type inside an Option, or `t` itself (an Option is its value, or null, on Spark)."""
    return t.elem if isinstance(t, TOption) else t


def is_wide(t: Type) -> bool:
    """Whether `t` is bit<N> or signed<N> wider than 64 bits (u128, s128): a Long does not hold
    them, and Spark has no integer that does; they are stored as two Longs (runtime/wide.py)."""
    return isinstance(t, TInt) and t.width is not None and t.width > 64


def contains_u64(t: Type) -> bool:
    """Whether a value of `t` holds a 64-bit unsigned integer somewhere (its order on Spark
    then differs from the Spark type's natural order)."""
    if is_u64(t):
        return True
    if isinstance(t, TStruct):
        return any(contains_u64(ft) for c in t.ctors for _, ft in c.fields)
    return any(contains_u64(x) for x in _parts(t))


def is_numeric(t: Type) -> bool:
    return isinstance(t, (TInt, TFloat))


def is_scalar(t: Type) -> bool:
    return isinstance(t, (TBool, TString, TInt, TFloat))


# ---------------------------------------------------------------------------------------------
# Relations


@dataclass(frozen=True)
class RelationInfo:
    name: str
    role: str  # 'input' | 'output' | 'internal'
    columns: tuple[tuple[str, Type], ...]
    span: Span
    ctor: str | None = None  # `relation R[T]`: T's constructor names its records (else R)
    # 'relation' (a set: every record once), 'multiset' (records with their multiplicities,
    # which may be negative) or 'stream' (a multiset holding only what the current
    # transaction inserted: its old records disappear, without deletions being reported)
    kind: str = "relation"
    # `R-N` in a rule: a relation of no rules whose value is, at each transaction, the value
    # that `delay_of` had at the end of the previous one (R for for R-2, ...)
    delay_of: str | None = None
    # What a record is: 'columns' (a struct R{c1, ..}, of R's or `ctor`'s constructor),
    # 'tuple' (`relation R[(A, B)]`: the tuple of its columns `_0`, `_1`, ..) or 'value'
    # (`relation R[T]` of any other T: the value of its one column `_0`)
    shape: str = "columns"

    @property
    def weighted(self) -> bool:
        """Whether records keep their multiplicities (no distinct)."""
        return self.kind != "relation"

    @property
    def record(self) -> str:
        """The constructor of its records, as `r in R(..)` builds them and `dump` prints."""
        return self.ctor or self.name

    @property
    def arity(self) -> int:
        return len(self.columns)

    @property
    def value_type(self) -> Type | None:
        """A record's type when the relation is of a tuple or other non-struct type."""
        if self.shape == "tuple":
            return TTuple(self.column_types)
        return self.columns[0][1] if self.shape == "value" else None

    @property
    def column_types(self) -> tuple[Type, ...]:
        return tuple(t for _, t in self.columns)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.columns)


class Update(NamedTuple):
    """One update of a relation in a transaction: insert (+1) or delete (-1) the rows of `df`
    (a DataFrame with columns c0..cN). `rows` holds the same rows as Spark values when the
    caller gave them in Python, or a small change file was read into the driver: the engine
    then reads the stored relation by them instead of scanning it."""

    sign: int
    df: Any
    rows: list[tuple] | None = None
