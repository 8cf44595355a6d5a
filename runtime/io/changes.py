"""Change files: one file of rows for an input relation, each row an insert or a delete.

A change file holds the relation's columns (matched by name, typed by its declaration, every
value checked: the same reading and ingestion as a source, runtime/io/sources.py) and
optionally an integer column `weight` (`_weight` when the relation has a column called
`weight`): 1 inserts the row, -1 deletes it; without the column, or without a value in it, a
row is an insert. A row that appears several times in one file is decided by its last
occurrence, as a sequence of inserts and deletes would be.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ddlog.types import RelationInfo
from runtime.errors import describe
from runtime.io.ingest import frame
from runtime.io.sources import read_raw
from runtime.io.specs import BindingError, Spec
from runtime.schema import col_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CHANGE_KINDS = ("csv", "json", "parquet")


class ChangeFileError(BindingError):
    """A change file that cannot be applied: unreadable, or rows that do not fit."""


def weight_column(info: RelationInfo) -> str:
    return "_weight" if "weight" in info.column_names else "weight"


def read_changes(spark: "SparkSession", kind: str, path: str, info: RelationInfo
                 ) -> tuple["DataFrame", "DataFrame | None"]:
    """A change file of one of CHANGE_KINDS: its inserts and its deletes (None: the file has
    no weight column), as frames c0..cN.
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
            bad = raw.filter(F.col("_w").isNull() | ~F.col("_w").isin(1, -1)) \
                     .select(F.to_json(F.struct(*[raw[c] for c in raw.columns
                                                  if c not in ("_w", "_ord")]))).limit(3)
            rows = [r[0] for r in bad.collect()]
            if rows:
                raise ChangeFileError(f"{where}: column {weight} must be 1 (insert) or -1 "
                                      f"(delete), in rows {'; '.join(rows)}")
        typed = frame(raw, info, where, ChangeFileError, text=kind == "csv", keep=keep)
    except PySparkException as err:
        raise ChangeFileError(f"cannot read {where}: {describe(err)}") from None
    if weight is None:
        return typed, None
    cols = [col_name(k) for k in range(info.arity)]
    last = typed.groupBy(*cols).agg(F.max_by("_w", "_ord").alias("_w")) if cols else \
        typed.agg(F.max_by("_w", "_ord").alias("_w"))
    return (last.filter(F.col("_w") == 1).select(*cols),
            last.filter(F.col("_w") == -1).select(*cols))
