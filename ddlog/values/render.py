"""Printing relations and changes: DDlog's text format, CSV and JSON lines.

    dump R;               R{.src = 1, .dst = 2}                  (one record per line, sorted)
    dump;                 R:  records  (empty line)              (each output relation by name)
    commit dump_changes;  R:  R{.src = 1, .dst = 2}: +1          (each relation that changed)

JSON lines: one object per record, `{"src": 1, "dst": 2}`; a change adds the relation and the
weight: `{"relation": "R", "weight": 1, "record": {...}}`. Values map as: tuples and Vec/Set to
arrays, Option to the value or null, structs to objects (an enum's constructor under "_tag").
CSV: a header of the declared column names; scalars as they are, other values in DDlog's text
form.
"""
from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Iterable

from ddlog.types import RelationInfo
from ddlog.types import TFloat, TOption, TString, Type, TypeMapping
from ddlog.values import format_record, format_value, show_closure

FORMATS = ("text", "csv", "json")

Changes = dict[str, list[tuple[tuple, int]]]


def record(info: RelationInfo, row: tuple) -> str:
    if info.value_type is not None:  # a relation of tuples or of other values
        return format_value(row if info.shape == "tuple" else row[0], info.value_type)
    return format_record(info.record, info.columns, row)


def dump_lines(info: RelationInfo, rows: Iterable[tuple]) -> list[str]:
    """`dump R;`: a record per line; a multiset's or a stream's records (given once per unit
    of multiplicity, sorted) once each, with their multiplicity when it is not 1."""
    if not info.weighted:
        return [record(info, r) for r in rows]
    counted: list[list] = []
    for r in rows:
        if counted and counted[-1][0] == r:
            counted[-1][1] += 1
        else:
            counted.append([r, 1])
    return [record(info, r) + (f" {n:+d}" if n != 1 else "") for r, n in counted]


def change_lines(relations: dict[str, RelationInfo], changes: Changes) -> list[str]:
    """`commit dump_changes;` / `ddlog feed`: DDlog's format."""
    out = []
    for name in sorted(changes):
        out.append(f"{name}:")
        out.extend(f"{record(relations[name], r)}: {w:+d}" for r, w in changes[name])
    return out


def change_json_lines(relations: dict[str, RelationInfo], changes: Changes) -> list[str]:
    out = []
    for name in sorted(changes):
        info = relations[name]
        for r, w in changes[name]:
            out.append(json.dumps({"relation": name, "weight": w,
                                   "record": json_record(info, r)}))
    return out


# ---------------------------------------------------------------------------------------------
# JSON


class _Json(TypeMapping):
    """A value as JSON: tuples and Vec/Set as arrays, Option as the value or null, structs as
    objects (an enum's constructor under "_tag"), floats that JSON cannot hold as text."""

    def __call__(self, t: Type, v: Any) -> Any:
        return None if v is None else super().__call__(t, v)

    def on_func(self, t, v):
        return show_closure(v)

    def on_bool(self, t, v):
        return v

    on_string = on_int = on_bool

    def on_float(self, t, v):
        return v if math.isfinite(v) else str(v)  # JSON has no inf / nan

    def on_tuple(self, t, v):
        return [self(it, x) for x, it in zip(v, t.items)]

    def on_vec(self, t, v):
        return [self(t.elem, x) for x in v]

    on_set = on_map = on_vec  # a Map as its [key, value] entries: keys need not be strings

    def on_option(self, t, v):
        return self(t.elem, v)

    def on_struct(self, t, v):
        ctor = t.ctor(v.ctor)
        obj = {"_tag": v.ctor} if t.is_enum else {}
        obj.update({n: self(ft, x) for (n, ft), x in zip(ctor.fields, v.values)})
        return obj

    def on_group(self, t, v):
        return {"key": self(t.key, v.key), "items": [self(t.elem, x) for x in v.items]}

    def on_any(self, t, v):
        return {"type": v.type, "value": self(t.known[v.type], v.value)}


_JSON = _Json()


def json_value(v: Any, t: Type) -> Any:
    return _JSON(t, v)


def json_record(info: RelationInfo, row: tuple) -> dict:
    return {n: json_value(v, t) for (n, t), v in zip(info.columns, row)}


# ---------------------------------------------------------------------------------------------
# CSV


def csv_cell(v: Any, t: Type) -> str:
    """A value as one CSV cell: scalars as DDlog writes them (a string as it is, None as an
    empty cell), anything else in DDlog's text form."""
    if v is None:
        return ""
    if isinstance(t, TOption):
        return csv_cell(v, t.elem)
    if isinstance(t, TString):
        return v
    if isinstance(t, TFloat):
        return repr(float(v))  # what Spark's CSV reader reads back (`2.0`, `nan`, `inf`)
    return format_value(v, t)


def csv_text(info: RelationInfo, rows: Iterable[tuple]) -> str:
    """A relation's rows as CSV with a header, read back as they were (by a source or a
    change file): a cell is quoted when it holds a comma, a quote or a line break, and an
    empty string is `""`, so that it is not read as no value (an empty cell: an Option's
    None)."""
    lines = [",".join(_csv_field(n) for n in info.column_names)]
    for r in rows:
        lines.append(",".join("" if v is None else _csv_field(csv_cell(v, t))
                              for v, t in zip(r, info.column_types)))
    return "".join(line + "\n" for line in lines)


def _csv_field(text: str) -> str:
    if text == "" or any(c in text for c in ',"\n\r') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


def relation_text(info: RelationInfo, rows: list[tuple], fmt: str) -> str:
    """`ddlog query`: a relation's rows in one of FORMATS."""
    if fmt == "csv":
        return csv_text(info, rows)
    if fmt == "json":
        lines = [json.dumps(json_record(info, r)) for r in rows]
    else:
        lines = dump_lines(info, rows)
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------------------------------
# SQL results (plain Spark rows)


def _plain(v: Any) -> Any:
    """A Spark value as JSON-friendly Python (a Spark Row, a struct, is known by asDict)."""
    if hasattr(v, "asDict"):
        return {k: _plain(x) for k, x in v.asDict().items()}
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def _cell(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (str, int, float)):
        return str(v)
    return json.dumps(_plain(v))


def table_text(columns: list[str], rows: list, fmt: str) -> str:
    """`ddlog sql`: a result set as an aligned table, CSV or JSON lines."""
    if fmt == "json":
        return "".join(json.dumps({c: _plain(r[k]) for k, c in enumerate(columns)}) + "\n"
                       for r in rows)
    cells = [[_cell(r[k]) for k in range(len(columns))] for r in rows]
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        w.writerows([["" if r[k] is None else c for k, c in enumerate(row)]
                     for r, row in zip(rows, cells)])
        return buf.getvalue()
    widths = [max([len(c)] + [len(row[k]) for row in cells]) for k, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines) + "\n"
