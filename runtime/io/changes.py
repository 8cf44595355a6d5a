"""Change files: one file of rows for an input relation, each row an insert or a delete.

A change file holds the relation's columns (matched by name, typed by its declaration, every
value checked: the same reading and ingestion as a source, runtime/io/sources.py) and
optionally an integer column `weight` (`_weight` when the relation has a column called
`weight`): 1 inserts the row, -1 deletes it; without the column, or without a value in it, a
row is an insert. A row that appears several times in one file is decided by its last
occurrence, as a sequence of inserts and deletes would be.

A small file (at most config.local_rows rows: a stream's micro-batch is mostly a few) is read
once, by one Spark job, into a local relation on the driver: its checks then run on the driver
without a job, and when it is smaller still (config.driver_rows) its rows come back to Python
with the updates, so that the engine reads the stored relation by their keys and knows the
change is small (a file read lazily is re-read by every check, and the engine, not knowing its
size, checkpoints and counts it first).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ddlog.types import RelationInfo, Update
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.errors import describe
from ddlog.runtime.io.ingest import frame
from ddlog.runtime.io.sources import read_raw
from ddlog.runtime.io.specs import BindingError, Spec
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
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    where = f"change file {path[len('file:'):] if path.startswith('file:') else path}"
    wname = weight_column(info)
    try:
        raw = read_raw(spark, Spec(kind, path), info, extra=(wname,))
        weight = next((c for c in raw.columns if c.lower() == wname), None)
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
        typed = frame(raw, info, where, ChangeFileError, text=kind == "csv", keep=keep)
        # a local relation's rows reach Python without a job (the optimiser evaluates the
        # conversions over the leaf's rows)
        got = typed.collect() if held is not None and held[1] <= config.driver_rows else None
    except PySparkException as err:
        raise ChangeFileError(f"cannot read {where}: {describe(err)}") from None
    inserts, deletes = _last_of_each(got, info.arity, weight is not None)
    if weight is None:
        return Update(1, typed, inserts), None
    cols = [col_name(k) for k in range(info.arity)]
    last = typed.groupBy(*cols).agg(F.max_by("_w", "_ord").alias("_w")) if cols else \
        typed.agg(F.max_by("_w", "_ord").alias("_w"))
    return (Update(1, last.filter(F.col("_w") == 1).select(*cols), inserts),
            Update(-1, last.filter(F.col("_w") == -1).select(*cols), deletes))


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
