"""The Python representation of DDlog values, shared by the oracle, the data files, the command
language and the conversion of Spark rows (runtime/ converts to and from this form).

| type            | Python value                                                   |
|-----------------|----------------------------------------------------------------|
| bool            | bool                                                           |
| integers        | int (already wrapped to the type's width)                      |
| float, double   | float                                                          |
| string          | str                                                            |
| tuple           | tuple                                                          |
| Vec<T>          | tuple, in order                                                |
| Set<T>          | tuple, sorted by `sort_key`, no duplicates                     |
| Option<T>       | None, or the inner value                                       |
| user struct/enum| Record(ctor, (field values in declaration order))              |
| Group<K, V>     | Group(key, (elements sorted by `sort_key`))                    |

A relation's row is a tuple of column values.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ddlog.types import (TBool, TFloat, TGroup, TInt, TOption, TSet, TString, TStruct, TTuple,
                         TVec, Type)


@dataclass(frozen=True)
class Record:
    """A value of a user type: its constructor name and its field values, in order."""

    ctor: str
    values: tuple


@dataclass(frozen=True)
class Group:
    key: Any
    items: tuple


def sort_key(v: Any) -> tuple:
    """A total order over values of one type (None first, as DDlog orders `None` before
    `Some`)."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, v)
    if isinstance(v, (int, float)):
        return (1, v)
    if isinstance(v, str):
        return (1, v)
    if isinstance(v, tuple):
        return (1, tuple(sort_key(x) for x in v))
    if isinstance(v, Record):
        return (1, v.ctor, tuple(sort_key(x) for x in v.values))
    if isinstance(v, Group):
        return (1, sort_key(v.key), tuple(sort_key(x) for x in v.items))
    raise TypeError(f"not a DDlog value: {v!r}")


def canonical_set(items) -> tuple:
    """The canonical form of a Set: sorted, without duplicates."""
    return tuple(sorted(set(items), key=sort_key))


def wrap_int(value: int, t: TInt) -> int:
    """Reduce an integer to the range of `t` (bit<N> wraps mod 2^N, signed<N> in two's
    complement); bigint is left alone (Spark stores it as a 64-bit long)."""
    if t.width is None:
        return value
    m = 1 << t.width
    value %= m
    if t.signed and value >= m >> 1:
        value -= m
    return value


def _quote(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{out}"'


def format_value(v: Any, t: Type) -> str:
    """DDlog's text form of a value, as `dump` prints it."""
    if isinstance(t, TBool):
        return "true" if v else "false"
    if isinstance(t, TString):
        return _quote(v)
    if isinstance(t, TInt):
        return str(v)
    if isinstance(t, TFloat):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return repr(float(v))
    if isinstance(t, TTuple):
        return "(" + ", ".join(format_value(x, it) for x, it in zip(v, t.items)) + ")"
    if isinstance(t, (TVec, TSet)):
        return "[" + ", ".join(format_value(x, t.elem) for x in v) + "]"
    if isinstance(t, TOption):
        return "None{}" if v is None else "Some{.x = " + format_value(v, t.elem) + "}"
    if isinstance(t, TStruct):
        ctor = t.ctor(v.ctor)
        inner = ", ".join(f".{name} = {format_value(x, ft)}"
                          for (name, ft), x in zip(ctor.fields, v.values))
        return f"{v.ctor}{{{inner}}}"
    if isinstance(t, TGroup):
        return ("Group{.key = " + format_value(v.key, t.key) + ", .items = ["
                + ", ".join(format_value(x, t.elem) for x in v.items) + "]}")
    raise TypeError(f"cannot format a value of type {t}")


def format_record(relation: str, columns: list[tuple[str, Type]] | tuple, row: tuple) -> str:
    """`R{.a = 1, .b = "x"}`."""
    inner = ", ".join(f".{name} = {format_value(v, t)}" for (name, t), v in zip(columns, row))
    return f"{relation}{{{inner}}}"


def conforms(v: Any, t: Type) -> bool:
    """Whether a Python value is a valid value of type `t` (ranges of bit<N>/signed<N>
    included)."""
    if isinstance(t, TOption):
        return v is None or conforms(v, t.elem)
    if v is None:
        return False
    if isinstance(t, TBool):
        return isinstance(v, bool)
    if isinstance(t, TString):
        return isinstance(v, str)
    if isinstance(t, TInt):
        if not isinstance(v, int) or isinstance(v, bool):
            return False
        if t.width is None:
            return -(1 << 63) <= v < (1 << 63)
        return wrap_int(v, t) == v
    if isinstance(t, TFloat):
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if isinstance(t, TTuple):
        return (isinstance(v, (tuple, list)) and len(v) == len(t.items)
                and all(conforms(x, it) for x, it in zip(v, t.items)))
    if isinstance(t, (TVec, TSet)):
        return isinstance(v, (tuple, list, set, frozenset)) and all(conforms(x, t.elem)
                                                                     for x in v)
    if isinstance(t, TStruct):
        if not isinstance(v, Record):
            return False
        c = t.ctor(v.ctor)
        return (c is not None and len(v.values) == len(c.fields)
                and all(conforms(x, ft) for x, (_, ft) in zip(v.values, c.fields)))
    if isinstance(t, TGroup):
        return isinstance(v, Group)
    return False
