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
| Group<K, V>     | Group(key, (elements sorted by `sort_key`), weights)           |

A relation's row is a tuple of column values.
"""
from __future__ import annotations

import decimal
import json
import math
import re
import struct
from dataclasses import dataclass
from typing import Any

from ddlog.types import STD_TYPES, TInt, TOption, Type, TypeMapping
from ddlog.values.rusthash import hash_order


@dataclass(frozen=True)
class Record:
    """A value of a user type: its constructor name and its field values, in order."""

    ctor: str
    values: tuple


@dataclass(frozen=True)
class AnyValue:
    """A value of DDlog's `Any`: the text of the type it was made from (`to_any`), and the
    value itself. The program's TAny (`known`) gives the type back by its text."""

    type: str
    value: Any


@dataclass(frozen=True)
class Group:
    """A group's key and its elements, one per distinct valuation of the rule's body before
    `group_by`; `weights`, when a valuation may occur more than once (the body reads a
    multiset, a stream or a counted relation: ddlog/plan/compile.py), each element's
    multiplicity, which only a loop `for ((x, w) in g)` sees; None: each 1."""

    key: Any
    items: tuple
    weights: tuple | None = None


@dataclass(frozen=True)
class Closure:
    """A closure made by the program (`|x| x + inc`) as a value: the number of the closure
    expression in the program (`id`), its text, the values it captured (`env`, the JSON
    object `{"_0": .., "_1": ..}` of them, as Spark's `to_json` writes it: closure_env), and
    those values as DDlog prints them (`args`: `()`, `100`, `(1, "a")`)."""

    id: int
    text: str
    env: str
    args: str


def closure_env(values: tuple) -> str:
    """The JSON `env` of a closure capturing `values` (integers, bools, strings, closures),
    written as Spark's `to_json` writes the struct `{_0: .., _1: ..}`."""
    def plain(v: Any) -> Any:
        if isinstance(v, Closure):
            return {"id": v.id, "text": v.text, "env": v.env, "args": v.args}
        return v
    text = json.dumps({f"_{i}": plain(v) for i, v in enumerate(values)},
                      separators=(",", ":"), ensure_ascii=False)
    # Spark's JSON writer spells the other control characters' escapes in upper case
    # (an escape is a backslash not itself escaped: preceded by an even number of them)
    return re.sub(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})",
                  lambda m: m[1] + "\\u00" + m[2].upper(), text)


def closure_captures(c: Closure) -> tuple:
    """The values a closure captured, back from its `env` (closures as Closure values)."""
    def value(v: Any) -> Any:
        if isinstance(v, dict):
            return Closure(v["id"], v["text"], v["env"], v["args"])
        return v
    env = json.loads(c.env)
    return tuple(value(env[f"_{i}"]) for i in range(len(env)))


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
    if isinstance(v, AnyValue):
        return (1, v.type, sort_key(v.value))
    if isinstance(v, Closure):
        return (1, v.id, v.text, v.env, v.args)
    raise TypeError(f"not a DDlog value: {v!r}")


class _DumpKey(TypeMapping):
    """DDlog's order of the values of a type, as `dump` lists them: as sort_key's, but the
    constructors of a user type in their declaration order (DDlog derives its order from
    the declaration, as Rust does) rather than by name."""

    def __call__(self, t: Type, v: Any) -> tuple:
        return (0,) if v is None else (1, super().__call__(t, v))

    def on_bool(self, t, v):
        return v

    on_int = on_float = on_string = on_bool

    def on_tuple(self, t, v):
        return tuple(self(it, x) for it, x in zip(t.items, v))

    def on_vec(self, t, v):
        return tuple(self(t.elem, x) for x in v)

    on_map = on_vec

    def on_set(self, t, v):
        if not t.hashed:
            return self.on_vec(t, v)
        # a HashSet: by size, then element by element in its iteration order
        return (len(v), self.on_vec(t, hash_order(v, t, lambda x: self(t.elem, x))))

    def on_option(self, t, v):
        return self(t.elem, v)

    def on_struct(self, t, v):
        ctor = t.ctor(v.ctor)
        return (t.ctors.index(ctor), tuple(self(ft, x) for (_, ft), x in zip(ctor.fields,
                                                                              v.values)))

    def on_group(self, t, v):
        return (self(t.key, v.key), tuple(self(t.elem, x) for x in v.items))

    def on_func(self, t, v):
        return sort_key(v)

    def on_any(self, t, v):
        return (v.type, self(t.known[v.type], v.value))


_DUMP_KEY = _DumpKey()


def dump_key(row: tuple, types: tuple[Type, ...] | list[Type]) -> tuple:
    """The key that sorts a relation's rows as `dump` prints them."""
    return tuple(_DUMP_KEY(t, v) for t, v in zip(types, row))


def canonical_set(items) -> tuple:
    """The canonical form of a Set: sorted, without duplicates."""
    return tuple(sorted(set(items), key=sort_key))


def canonical_map(entries) -> tuple:
    """The canonical form of a Map from its `(k, v)` entries in order: one entry per key, the
    last one given for it (as inserting them one by one does), sorted by key."""
    last = {k: v for k, v in entries}
    return tuple(sorted(last.items(), key=lambda kv: sort_key(kv[0])))


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


def rust_float(v: float, bits: int = 64) -> str:
    """A float as DDlog prints it (Rust's Display): the shortest decimal that reads back as the
    same float (a 32-bit one for `float`), never in exponent form, without a fractional part
    when it has none: `1`, `0.5`, `1.0471976`, `-0`, `NaN`, `inf`."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = repr(float(v))
    if bits == 32:
        single = struct.unpack("f", struct.pack("f", v))[0]
        for digits in range(1, 10):
            text = f"{single:.{digits}g}"
            if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
                break
    out = format(decimal.Decimal(text), "f")
    return out.rstrip("0").rstrip(".") if "." in out else out


class _Format(TypeMapping):
    """DDlog's text form of a value, as `dump` prints it."""

    def on_func(self, t, v):
        return show_closure(v)

    def on_bool(self, t, v):
        return "true" if v else "false"

    def on_string(self, t, v):
        return _quote(v)

    def on_int(self, t, v):
        return str(v)

    def on_float(self, t, v):
        return rust_float(v, t.bits)

    def on_tuple(self, t, v):
        return "(" + ", ".join(self(it, x) for x, it in zip(v, t.items)) + ")"

    def on_vec(self, t, v):
        return "[" + ", ".join(self(t.elem, x) for x in v) + "]"

    def on_set(self, t, v):
        if t.hashed:  # a HashSet prints in its iteration order
            v = hash_order(v, t, lambda x: _DUMP_KEY(t.elem, x))
        return self.on_vec(t, v)

    def on_map(self, t, v):
        return self.on_vec(t, v)  # `[(k, v), ...]`, as DDlog prints a Map

    def on_option(self, t, v):
        # Option is declared in DDlog's module ddlog_std, whose name DDlog prints with it
        return "ddlog_std::None{}" if v is None else "ddlog_std::Some{.x = " + self(t.elem, v) + "}"

    def on_struct(self, t, v):
        ctor = t.ctor(v.ctor)
        inner = ", ".join(f".{name} = {self(ft, x)}" for (name, ft), x in zip(ctor.fields,
                                                                                v.values))
        std = "ddlog_std::" if t.name in STD_TYPES else ""  # DDlog prints its module
        return f"{std}{v.ctor}{{{inner}}}"

    def on_any(self, t, v):
        return self(t.known[v.type], v.value)  # as DDlog prints an Any: its value

    def on_group(self, t, v):
        return ("Group{.key = " + self(t.key, v.key) + ", .items = ["
                + ", ".join(self(t.elem, x) for x in v.items) + "]}")


_FORMAT = _Format()


def format_value(v: Any, t: Type) -> str:
    """DDlog's text form of a value, as `dump` prints it."""
    return _FORMAT(t, v)


def show_closure(c: Closure) -> str:
    """`<closure: |x| x + inc, captured_args: 100>` (DDlog prints its own rendering of the
    closure's code where this prints the program's text)."""
    return f"<closure: {c.text}, captured_args: {c.args}>"


def closure_args(values: tuple, types: tuple) -> str:
    """The captured values as a closure prints them: `()`, `100`, `(1, "a")`."""
    shown = [format_value(v, t) for v, t in zip(values, types)]
    return shown[0] if len(shown) == 1 else "(" + ", ".join(shown) + ")"


def format_record(relation: str, columns: list[tuple[str, Type]] | tuple, row: tuple) -> str:
    """`R{.a = 1, .b = "x"}`."""
    inner = ", ".join(f".{name} = {format_value(v, t)}" for (name, t), v in zip(columns, row))
    return f"{relation}{{{inner}}}"


class _Conforms(TypeMapping):
    """Whether a Python value is a valid value of the type (ranges of bit<N>/signed<N>
    included)."""

    def on_func(self, t, v):
        return isinstance(v, Closure)

    def __call__(self, t: Type, v: Any) -> bool:
        if v is None:
            return isinstance(t, TOption)
        return super().__call__(t, v)

    def on_option(self, t, v):
        return self(t.elem, v)

    def on_bool(self, t, v):
        return isinstance(v, bool)

    def on_string(self, t, v):
        return isinstance(v, str)

    def on_int(self, t, v):
        if not isinstance(v, int) or isinstance(v, bool):
            return False
        if t.width is None:
            return -(1 << 63) <= v < (1 << 63)
        return wrap_int(v, t) == v

    def on_float(self, t, v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def on_tuple(self, t, v):
        return (isinstance(v, (tuple, list)) and len(v) == len(t.items)
                and all(self(it, x) for x, it in zip(v, t.items)))

    def on_vec(self, t, v):
        return isinstance(v, (tuple, list, set, frozenset)) and all(self(t.elem, x) for x in v)

    on_set = on_vec

    def on_map(self, t, v):
        return self.on_vec(t, v) and len({k for k, _ in v}) == len(v)

    def on_struct(self, t, v):
        if not isinstance(v, Record):
            return False
        c = t.ctor(v.ctor)
        return (c is not None and len(v.values) == len(c.fields)
                and all(self(ft, x) for x, (_, ft) in zip(v.values, c.fields)))

    def on_group(self, t, v):
        return isinstance(v, Group)

    def on_any(self, t, v):
        return isinstance(v, AnyValue) and v.type in t.known and self(t.known[v.type], v.value)


_CONFORMS = _Conforms()


def conforms(v: Any, t: Type) -> bool:
    """Whether a Python value is a valid value of type `t` (ranges of bit<N>/signed<N>
    included)."""
    return _CONFORMS(t, v)
