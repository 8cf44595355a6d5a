"""Constant expressions -> Python values of a known type (as ddlog/values/__init__.py
represents them).

Used for the records of the command language and data files: `insert R(1, "a", Some{5})`.
The parser already folded `-5` into a negative literal; width literals (`8'hff`) must match the
column type exactly; an integer literal is accepted for a float column. Every mismatch is a
DDlogError naming the expected type and pointing at the value, e.g. `expected bigint, found
string "a"`.
"""
from __future__ import annotations

import dataclasses
import json
import math
import struct
from typing import Any

from ddlog.errors import DDlogError, Span
from ddlog.syntax import ast
from ddlog.types import (RelationInfo, TCtor, TFloat, TInt, TMap, TOption, TSet, TString, TStruct,
                         Type, TypeMapping)
from ddlog.values import Record, canonical_map, canonical_set

# Spark stores bigint as a 64-bit long (runtime/schema.py), so a bigint constant must fit in one.
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def value_of(expr: ast.Expr, ty: Type, file: str = "<input>", source: str | None = None) -> Any:
    """The value of the constant expression `expr` as a value of type `ty`."""
    return _Converter(file, source).convert(expr, ty)


def mutated(old: Any, expr: ast.Expr, ty: Type, file: str = "<input>",
            source: str | None = None) -> Any:
    """`old` changed by the record `expr` of a `modify` command, as DDlog changes it: a
    constructor of old's one changes the fields it gives (recursively), a Map `[(k, v), ..]`
    changes the keys it gives (`(k, ())` removes k, a new key takes v), a Set `[x, ..]` has
    each element it gives toggled (the symmetric difference), anything else is the new
    value."""
    return _Converter(file, source).mutate(old, expr, ty)


def row_of(atom: ast.Atom, rel: RelationInfo, file: str = "<input>",
           source: str | None = None) -> tuple:
    """The row an update's record denotes: `R(1, "a")` (positional, every column) or
    `R(.b = "a", .a = 1)` (named, every column exactly once, any order)."""
    conv = _Converter(file, source)
    if atom.relation != rel.name:
        raise conv.error(f"expected a record of {rel.name}, found {atom.relation}", atom.span)
    if atom.whole is not None:  # `R[e]`: the record as a value of R's type
        t = rel.value_type or TStruct(rel.record, (TCtor(rel.record, rel.columns),))
        value = conv.convert(atom.whole, t)
        return (value,) if rel.shape == "value" else tuple(
            value.values if isinstance(value, Record) else value)
    if atom.names is None:
        if len(atom.args) != rel.arity:
            raise conv.error(f"relation {rel.name} has {rel.arity} column(s), found "
                             f"{len(atom.args)} value(s)", atom.span)
        return tuple(conv.convert(e, t) for e, t in zip(atom.args, rel.column_types))
    given = dict(zip(atom.names, atom.args))
    for name, e in given.items():
        if name not in rel.column_names:
            raise conv.error(f"relation {rel.name} has no column '{name}'", e.span)
    missing = [n for n in rel.column_names if n not in given]
    if missing:
        raise conv.error(f"missing column(s) of {rel.name}: {', '.join(missing)}", atom.span)
    return tuple(conv.convert(given[n], t) for n, t in rel.columns)


class _Converter:
    def __init__(self, file: str, source: str | None):
        self.file = file
        self.source = source

    def error(self, message: str, span: Span) -> DDlogError:
        return DDlogError(message, span, self.source)

    def mismatch(self, expr: ast.Expr, ty: Type) -> DDlogError:
        return self.error(f"expected {ty}, found {self.describe(expr)}", expr.span)

    def describe(self, e: ast.Expr) -> str:
        """What the user wrote, for messages: a category and the text."""
        text = self.text(e)
        if isinstance(e, ast.Lit):
            if e.width is not None and e.kind == "float":
                kind = {32: "float", 64: "double"}.get(e.width, "float") + " literal"
            elif e.width is not None:
                kind = f"{'signed' if e.signed else 'bit'}<{e.width}> literal"
            else:
                kind = {"int": "integer", "float": "float", "bool": "bool",
                        "string": "string"}[e.kind]
        elif isinstance(e, ast.Interp):
            kind = "interpolated string"
        elif isinstance(e, ast.TupleLit):
            kind = "tuple"
        elif isinstance(e, ast.VecLit):
            kind = "vector"
        elif isinstance(e, ast.StructLit):
            kind = "constructor"
        elif isinstance(e, ast.Var):
            kind = "variable"
        elif isinstance(e, ast.Wildcard):
            return "'_'"
        else:
            kind = "expression"
        return f"{kind} {text}" if text else kind

    def text(self, e: ast.Expr) -> str:
        """The source text of `e` (shortened), or a rendering when the source is unknown."""
        s = e.span
        if self.source is not None and s.line > 0:
            lines = self.source.split("\n")
            if s.end_line <= len(lines):
                if s.line == s.end_line:
                    t = lines[s.line - 1][s.col - 1:s.end_col - 1]
                else:
                    t = "\n".join([lines[s.line - 1][s.col - 1:],
                                   *lines[s.line:s.end_line - 1],
                                   lines[s.end_line - 1][:s.end_col - 1]])
                return t if len(t) <= 40 else t[:37] + "..."
        if isinstance(e, ast.Lit):
            if e.kind == "string":
                return '"' + str(e.value) + '"'
            if e.kind == "bool":
                return "true" if e.value else "false"
            return str(e.value)
        if isinstance(e, (ast.Var, ast.StructLit)):
            return getattr(e, "name", None) or getattr(e, "ctor")
        return ""

    # -- conversion --

    def mutate(self, old: Any, e: ast.Expr, ty: Type) -> Any:
        if isinstance(ty, TStruct) and isinstance(e, ast.StructLit) \
                and isinstance(old, Record) and old.ctor == e.ctor:
            ctor = ty.ctor(e.ctor)
            if all(n is None for n, _ in e.fields):
                if len(e.fields) != len(ctor.fields):
                    raise self.error(f"constructor {ctor.name} has {len(ctor.fields)} "
                                     f"field(s), found {len(e.fields)}", e.span)
                given = {n: x for (_, x), (n, _) in zip(e.fields, ctor.fields)}
            else:
                given = dict(e.fields)
            for n, x in given.items():
                if ctor.field_type(n) is None:
                    raise self.error(f"constructor {ctor.name} has no field '{n}'", x.span)
            return Record(old.ctor, tuple(
                self.mutate(v, given[n], t) if n in given else v
                for v, (n, t) in zip(old.values, ctor.fields)))
        if isinstance(ty, TMap) and isinstance(e, ast.VecLit):
            entries = dict(old)
            for item in e.items:
                if not isinstance(item, ast.TupleLit) or len(item.items) != 2:
                    raise self.error(f"expected an entry (key, value) of {ty}, found "
                                     f"{self.describe(item)}", item.span)
                k = self.convert(item.items[0], ty.key)
                v = item.items[1]
                if isinstance(v, ast.TupleLit) and not v.items:
                    entries.pop(k, None)  # `(k, ())`: the key goes
                elif k in entries:
                    entries[k] = self.mutate(entries[k], v, ty.value)
                else:
                    entries[k] = self.convert(v, ty.value)
            return canonical_map(entries.items())
        if isinstance(ty, TSet) and isinstance(e, ast.VecLit):
            return canonical_set(set(old) ^ set(self.convert(e, ty)))
        return self.convert(e, ty)

    def convert(self, e: ast.Expr, ty: Type) -> Any:
        if isinstance(e, ast.UnOp) and e.op == "-" and isinstance(e.operand, ast.Lit) \
                and e.operand.kind in ("int", "float"):
            # normally folded by the parser; accept an AST built by other means
            e = ast.Lit(-e.operand.value, e.operand.kind, e.span, e.operand.width,
                        e.operand.signed)
        if isinstance(e, ast.Lit) and e.kind == "json":
            try:
                data = json.loads(e.value)
            except ValueError as err:
                raise self.error(f"this @json value is not JSON: {err}", e.span) from None
            return _JSON(ty, data, self, e)
        value = _CONSTANT(ty, e, self)
        if value is _NO:
            raise self.mismatch(e, ty)
        return value

    def integer(self, e: ast.Lit, ty: TInt) -> int:
        v = e.value
        if e.width is not None and (e.width != ty.width or e.signed != ty.signed):
            raise self.mismatch(e, ty)
        if ty.width is None:
            lo, hi = _LONG_MIN, _LONG_MAX
        elif ty.signed:
            lo, hi = -(1 << (ty.width - 1)), (1 << (ty.width - 1)) - 1
        else:
            lo, hi = 0, (1 << ty.width) - 1
        if not lo <= v <= hi:
            raise self.error(f"{v} is out of range for {ty} ({lo} to {hi})", e.span)
        return v

    def floating(self, e: ast.Lit, ty: TFloat) -> float:
        v = float(e.value)
        if ty.bits == 32 and math.isfinite(v):
            # round to the nearest float32, as Spark's FloatType stores it
            try:
                v = struct.unpack("f", struct.pack("f", v))[0]
            except OverflowError:
                v = math.inf
            if math.isinf(v):
                raise self.error(f"{self.text(e) or e.value} is out of range for float", e.span)
        return v

    def option(self, e: ast.StructLit, ty: TOption) -> Any:
        if e.ctor.startswith("ddlog_std::"):  # as DDlog prints them
            e = dataclasses.replace(e, ctor=e.ctor[len("ddlog_std::"):])
        if e.ctor == "None" and not e.fields:
            return None
        if e.ctor == "Some" and len(e.fields) == 1 and e.fields[0][0] in (None, "x"):
            return self.convert(e.fields[0][1], ty.elem)
        if e.ctor in ("Some", "None"):
            raise self.error(f"expected {ty}: write Some{{v}} or None", e.span)
        raise self.mismatch(e, ty)

    def record(self, e: ast.StructLit, ty: TStruct) -> Record:
        ctor = ty.ctor(e.ctor)
        if ctor is None:
            raise self.error(f"expected {ty}, found constructor {e.ctor} (the constructors of "
                             f"{ty} are {', '.join(c.name for c in ty.ctors)})", e.span)
        names = [n for n, _ in e.fields]
        if all(n is None for n in names):
            if len(e.fields) != len(ctor.fields):
                raise self.error(f"constructor {ctor.name} has {len(ctor.fields)} field(s), "
                                 f"found {len(e.fields)}", e.span)
            return Record(ctor.name, tuple(self.convert(x, t) for (_, x), (_, t)
                                           in zip(e.fields, ctor.fields)))
        given = dict(e.fields)
        for n, x in e.fields:
            if ctor.field_type(n) is None:
                raise self.error(f"constructor {ctor.name} has no field '{n}'", x.span)
        missing = [n for n, _ in ctor.fields if n not in given]
        if missing:
            raise self.error(f"missing field(s) of {ctor.name}: {', '.join(missing)}", e.span)
        return Record(ctor.name, tuple(self.convert(given[n], t) for n, t in ctor.fields))


_NO = object()  # the expression is not a constant of the type


class _Constant(TypeMapping):
    """The value a constant expression denotes for a type, or _NO when it is not one."""

    UNSUPPORTED = frozenset({"on_group", "on_func", "on_any"})

    def unsupported(self, t, e, conv):
        raise conv.error(f"values of type {t} cannot be written as constants", e.span)

    def on_bool(self, t, e, conv):
        return e.value if isinstance(e, ast.Lit) and e.kind == "bool" else _NO

    def on_string(self, t, e, conv):
        return e.value if isinstance(e, ast.Lit) and e.kind == "string" else _NO

    def on_int(self, t, e, conv):
        return conv.integer(e, t) if isinstance(e, ast.Lit) and e.kind == "int" else _NO

    def on_float(self, t, e, conv):
        if isinstance(e, ast.Lit) and e.kind in ("int", "float") and (
                e.width is None or e.kind == "float" and e.width == t.bits):
            return conv.floating(e, t)
        return _NO

    def on_tuple(self, t, e, conv):
        if not isinstance(e, ast.TupleLit):
            return _NO
        if len(e.items) != len(t.items):
            raise conv.error(f"expected {t}, found a tuple of {len(e.items)} element(s)",
                             e.span)
        return tuple(conv.convert(x, it) for x, it in zip(e.items, t.items))

    def on_vec(self, t, e, conv):
        if not isinstance(e, ast.VecLit):
            return _NO
        return tuple(conv.convert(x, t.elem) for x in e.items)

    def on_set(self, t, e, conv):
        if not isinstance(e, ast.VecLit):
            return _NO
        return canonical_set(conv.convert(x, t.elem) for x in e.items)

    def on_map(self, t, e, conv):
        # `[(k, v), ...]` as DDlog's command files write a Map (a program may also write
        # `[k -> v, ...]`, which the parser turns into the same)
        if not isinstance(e, ast.VecLit):
            return _NO
        return canonical_map(conv.convert(x, t.elem) for x in e.items)

    def on_option(self, t, e, conv):
        return conv.option(e, t) if isinstance(e, ast.StructLit) else _NO

    def on_struct(self, t, e, conv):
        return conv.record(e, t) if isinstance(e, ast.StructLit) else _NO


_CONSTANT = _Constant()


class _Json(TypeMapping):
    """A value written in JSON (`@json"..."`), as DDlog's serde form has it: objects for
    structs (`{"Ctor": {..}}` for a type of several constructors) and for Maps with string
    keys, arrays for tuples, Vecs, Sets and other Maps (of [key, value] pairs), null for None."""

    UNSUPPORTED = frozenset({"on_group", "on_func", "on_any"})

    def unsupported(self, t, data, conv, e):
        raise conv.error(f"values of type {t} cannot be written as constants", e.span)

    def wrong(self, t, data, conv, e):
        raise conv.error(f"expected {t}, found the JSON value {json.dumps(data)[:40]}", e.span)

    def on_bool(self, t, data, conv, e):
        return data if isinstance(data, bool) else self.wrong(t, data, conv, e)

    def on_string(self, t, data, conv, e):
        return data if isinstance(data, str) else self.wrong(t, data, conv, e)

    def on_int(self, t, data, conv, e):
        if not isinstance(data, int) or isinstance(data, bool):
            self.wrong(t, data, conv, e)
        return conv.integer(ast.Lit(data, "int", e.span), t)

    def on_float(self, t, data, conv, e):
        if not isinstance(data, (int, float)) or isinstance(data, bool):
            self.wrong(t, data, conv, e)
        return conv.floating(ast.Lit(float(data), "float", e.span), t)

    def items(self, t, data, conv, e, n: int | None = None) -> list:
        if not isinstance(data, list) or (n is not None and len(data) != n):
            self.wrong(t, data, conv, e)
        return data

    def on_tuple(self, t, data, conv, e):
        items = self.items(t, data, conv, e, len(t.items))
        return tuple(self(it, x, conv, e) for x, it in zip(items, t.items))

    def on_vec(self, t, data, conv, e):
        return tuple(self(t.elem, x, conv, e) for x in self.items(t, data, conv, e))

    def on_set(self, t, data, conv, e):
        return canonical_set(self(t.elem, x, conv, e) for x in self.items(t, data, conv, e))

    def on_map(self, t, data, conv, e):
        if isinstance(data, dict):  # its keys are JSON strings (numbers as text, as serde's)
            return canonical_map((self.key(t.key, k, conv, e), self(t.value, v, conv, e))
                                 for k, v in data.items())
        return canonical_map(self(t.elem, x, conv, e) for x in self.items(t, data, conv, e))

    def key(self, t, text: str, conv, e):
        if isinstance(t, TString):
            return text
        try:
            return self(t, json.loads(text), conv, e)
        except ValueError:
            return self.wrong(t, text, conv, e)

    def on_option(self, t, data, conv, e):
        return None if data is None else self(t.elem, data, conv, e)

    def on_struct(self, t, data, conv, e):
        ctor = t.ctors[0]
        if len(t.ctors) > 1:  # `{"Ctor": {fields}}`, or `"Ctor"` when it has none
            if isinstance(data, str):
                data = {data: {}}
            if not isinstance(data, dict) or len(data) != 1 or t.ctor(next(iter(data))) is None:
                self.wrong(t, data, conv, e)
            name, data = next(iter(data.items()))
            ctor = t.ctor(name)
        if not isinstance(data, dict):
            self.wrong(t, data, conv, e)
        missing = [n for n, _ in ctor.fields if n not in data]
        if missing:
            raise conv.error(f"missing field(s) of {ctor.name} in the JSON value: "
                             f"{', '.join(missing)}", e.span)
        return Record(ctor.name, tuple(self(ft, data[n], conv, e) for n, ft in ctor.fields))


_JSON = _Json()
