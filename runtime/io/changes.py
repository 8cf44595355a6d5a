"""Change files: one file of rows for an input relation, each row an insert or a delete.

A change file holds the relation's columns (matched by name exactly, case included, typed by
its declaration, every value checked: the same reading and ingestion as a source,
runtime/io/sources.py) and optionally an integer column `weight` (`_weight` when the relation
has a column called `weight`): 1 inserts the row, -1 deletes it; without the column, or
without a value in it, a row is an insert. Any other column (a misspelt `wieght`, `Weight`, a
column named twice) is an error naming it: a weight that is not read would turn every delete
into an insert. A row that appears several times in one file is decided by its last
occurrence, as a sequence of inserts and deletes would be.

The file is read by its path as it is (runtime/io/specs.literal: Spark would take `e?.json` as
a pattern). A local file's text must be UTF-8 (Spark would read other bytes as U+FFFD in
silence): checked before Spark reads it, with the line of the first bad byte; so are a local
JSON file's lines (each an object of the relation's keys). CSV may quote newlines and empty
strings (`""` is an empty string, an empty field is no value), as `ddlog query --format csv`
writes them.

A small file (at most config.local_rows rows: a stream's micro-batch is mostly a few) is read
once, by one Spark job, into a local relation on the driver: its checks then run on the driver
without a job, and when it is smaller still (config.driver_rows) its rows come back to Python
with the updates, so that the engine reads the stored relation by their keys and knows the
change is small (a file read lazily is re-read by every check, and the engine, not knowing its
size, checkpoints and counts it first).
"""
from __future__ import annotations

import codecs
import json
import os
from typing import TYPE_CHECKING

from ddlog.types import RelationInfo, Update
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.errors import describe
from ddlog.runtime.io.ingest import frame
from ddlog.runtime.io.sources import read_raw
from ddlog.runtime.io.specs import BindingError, Spec, literal
from ddlog.runtime.physical import local_relation
from ddlog.runtime.schema import col_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CHANGE_KINDS = ("csv", "json", "parquet")


class ChangeFileError(BindingError):
    """A change file that cannot be applied: unreadable, or rows that do not fit."""


def weight_column(info: RelationInfo) -> str:
    return "_weight" if "weight" in info.column_names else "weight"


def read_changes(spark: "SparkSession", kind: str, path: str, info: RelationInfo,
                 config: Config = DEFAULT) -> tuple[Update, Update | None]:
    """A change file of one of CHANGE_KINDS: its inserts (sign 1) and its deletes (sign -1;
    None: the file has no weight column), as updates of frames c0..cN, with their rows in
    Python when the file is small (see above).
    Raises ChangeFileError naming the file, and the rows and columns that do not fit."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    local = path[len("file:"):] if path.startswith("file:") else path
    where = f"change file {local}"
    if ":" in os.path.basename(local):
        raise ChangeFileError(f"{where}: Spark cannot read a file whose name holds ':' (a "
                              f"Hadoop path is a URI); give it a name without one")
    wname = weight_column(info)
    allowed = [*info.column_names, wname]
    if "://" not in path and os.path.isfile(local) and kind in ("csv", "json"):
        _check_text(local, kind, where, info, wname)
    try:
        raw = read_raw(spark, Spec(kind, literal(path)), info, extra=(wname,))
        if kind == "json" and not os.path.isfile(local):
            names = [r[0] for r in spark.read.text(literal(path)).select(
                F.explode(F.json_object_keys("value"))).distinct().collect()]
        else:
            names = raw.columns
        _check_names(names, allowed, where, info, wname)
        weight = wname if wname in raw.columns else None
        keep = ("_ord", "_w") if weight is not None else ()
        if weight is not None:
            given = raw[weight]
            w = F.trim(given).try_cast("bigint") if kind == "csv" else given.try_cast("bigint")
            empty = given.isNull() | (F.trim(given) == "") if kind == "csv" else given.isNull()
            # a row without a weight is an insert; the file's order is kept in _ord
            # (monotonically increasing within one file read)
            raw = raw.withColumn("_w", F.when(empty, F.lit(1)).otherwise(w)) \
                     .withColumn("_ord", F.monotonically_increasing_id())
        held = _held(raw, config)
        if held is not None:
            raw = held[0]
        if weight is not None:
            bad = raw.filter(F.col("_w").isNull() | ~F.col("_w").isin(1, -1)) \
                     .select(F.to_json(F.struct(*[raw[c] for c in raw.columns
                                                  if c not in ("_w", "_ord")]))).limit(3)
            rows = [r[0] for r in bad.collect()]
            if rows:
                raise ChangeFileError(f"{where}: column {weight} must be 1 (insert) or -1 "
                                      f"(delete), in rows {'; '.join(rows)}")
        typed = frame(raw, info, where, ChangeFileError, text=kind == "csv", keep=keep,
                      exact=True)
        # a local relation's rows reach Python without a job (the optimiser evaluates the
        # conversions over the leaf's rows)
        got = typed.collect() if held is not None and held[1] <= config.driver_rows else None
    except (PySparkException, Py4JError) as err:
        raise ChangeFileError(f"cannot read {where}: {describe(err)}") from None
    inserts, deletes = _last_of_each(got, info.arity, weight is not None)
    if weight is None:
        return Update(1, typed, inserts), None
    cols = [col_name(k) for k in range(info.arity)]
    last = typed.groupBy(*cols).agg(F.max_by("_w", "_ord").alias("_w")) if cols else \
        typed.agg(F.max_by("_w", "_ord").alias("_w"))
    return (Update(1, last.filter(F.col("_w") == 1).select(*cols), inserts),
            Update(-1, last.filter(F.col("_w") == -1).select(*cols), deletes))


def _check_names(names: list[str], allowed: list[str], where: str, info: RelationInfo,
                 wname: str) -> None:
    """A change file's columns (CSV's header, JSON's keys) are the relation's and its weight,
    named exactly."""
    unknown = [n for n in names if n not in allowed]
    if not unknown:
        return
    hint = ""
    near = [a for n in unknown for a in allowed if a.lower() == n.strip().lower()]
    if near:
        hint = f" (did you mean {near[0]}? names match exactly, case and spaces included)"
    raise ChangeFileError(f"{where}: unknown column {', '.join(repr(n) for n in unknown)}: a "
                          f"change file of {info.name} has the columns "
                          f"{', '.join(info.column_names)} and optionally {wname} (1 inserts, "
                          f"-1 deletes){hint}")


# a change file's text is checked this many bytes at a time
_CHUNK = 1 << 20


def _check_text(path: str, kind: str, where: str, info: RelationInfo, wname: str) -> None:
    """A local change file's text: UTF-8 throughout (the line of the first bad byte is
    named); a CSV header without a column named twice; each JSON line an object whose keys
    are the relation's and whose weight, if any, is 1 or -1."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, pending, first = 1, "", None
    with open(path, "rb") as f:
        while True:
            chunk = f.read(_CHUNK)
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as err:
                at = line + pending.count("\n") + err.object[:err.start].count(b"\n")
                raise ChangeFileError(f"{where}:{at}: not UTF-8 text (byte "
                                      f"0x{err.object[err.start]:02x}); save the file as "
                                      f"UTF-8") from None
            pending += text
            *lines, pending = pending.split("\n")
            for got in lines:
                if first is None and kind == "csv":
                    first = got
                    _check_header(got, where)
                elif kind == "json":
                    _check_json_line(got, line, where, info, wname)
                line += 1
            if not chunk:
                break
    if pending and kind == "json":
        _check_json_line(pending, line, where, info, wname)
    elif pending and first is None and kind == "csv":
        _check_header(pending, where)


def _check_header(header: str, where: str) -> None:
    import csv

    try:
        names = next(csv.reader([header.rstrip("\r").lstrip("\ufeff")]), [])
    except csv.Error as err:
        raise ChangeFileError(f"{where}:1: the header is not a line of CSV ({err})") from None
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ChangeFileError(f"{where}:1: column {', '.join(twice)} appears more than once")


def _check_json_line(text: str, line: int, where: str, info: RelationInfo,
                     wname: str) -> None:
    if not text.strip():
        return
    try:
        obj = json.loads(text)
    except ValueError as err:
        raise ChangeFileError(f"{where}:{line}: not a JSON object ({err.msg})") from None
    if not isinstance(obj, dict):
        raise ChangeFileError(f"{where}:{line}: not a JSON object")
    _check_names(list(obj), [*info.column_names, wname], f"{where}:{line}", info, wname)
    w = obj.get(wname)
    if w is not None and (isinstance(w, bool) or w not in (1, -1)):
        raise ChangeFileError(f"{where}:{line}: {wname} must be 1 (insert) or -1 (delete), "
                              f"found {json.dumps(w)}")


def _held(raw: "DataFrame", config: Config) -> tuple["DataFrame", int] | None:
    """The file's rows collected on the driver into a local relation, and their number (one
    job, which reads at most config.local_rows + 1 of them); None for a larger file, which
    stays a lazy read."""
    df, n, _ = local_relation(raw.limit(config.local_rows + 1))
    return (df, n) if n <= config.local_rows else None


def _last_of_each(got: list | None, arity: int, weighted: bool
                  ) -> tuple[list[tuple] | None, list[tuple] | None]:
    """A file's collected rows (c0..cN, and _w, _ord when it has weights) as its inserted
    and its deleted rows in Python, each row decided by its last occurrence; None when the
    rows were not collected."""
    if got is None:
        return None, None
    if not weighted:
        return [tuple(r[:arity]) for r in got], None
    last: dict = {}
    for r in sorted(got, key=lambda r: r["_ord"]):
        row = tuple(r[:arity])
        last[_hashable(row)] = (row, r["_w"])
    return ([row for row, w in last.values() if w == 1],
            [row for row, w in last.values() if w == -1])


def _hashable(v):
    """A collected Spark value as a dict key (arrays come back as lists, maps as dicts)."""
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple((_hashable(k), _hashable(x)) for k, x in v.items())
    if isinstance(v, bytearray):
        return bytes(v)
    return v
