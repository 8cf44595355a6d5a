"""Reading a bound source as a relation's rows: typed by the relation's declaration, columns
matched by name, every value checked (runtime/io/ingest.py, the one ingestion path)."""
from __future__ import annotations

from ddlog.types import (STRING, RelationInfo, TBool, TFloat, TInt, TOption, TString, Type,
                         is_wide, unoptioned)
from ddlog.runtime.errors import describe
from ddlog.runtime.io.ingest import frame
from ddlog.runtime.io.specs import BindingError, Spec


def _scalar(t: Type) -> bool:
    if isinstance(t, TOption):
        return _scalar(t.elem)
    return isinstance(t, (TBool, TString, TInt, TFloat))


def check_csv_columns(info: RelationInfo, spec: Spec) -> None:
    for name, t in info.columns:
        if not _scalar(t):
            raise BindingError(f"{spec}: column '{name}' of {info.name} has type {t}, which CSV "
                               f"cannot hold; use parquet: or json:")


def read_source(spark, spec: Spec, info: RelationInfo):
    """The source's rows as a DataFrame with columns c0..cN of the relation's Spark types
    (not deduplicated). Raises BindingError when the data does not fit the relation."""
    from pyspark.errors import PySparkException

    try:
        return frame(read_raw(spark, spec, info), info, str(spec), BindingError,
                     text=spec.kind == "csv")
    except PySparkException as err:
        raise BindingError(f"cannot read {spec}: {describe(err)}") from None


# what Spark reads a quoted empty cell `""` as, until it is made an empty string again: Spark
# reads it, and an empty cell, both as null unless they are told apart here
_EMPTY = "\u0001"


def read_csv(spark, path: str):
    """CSV with a header, as text, as RFC 4180 and `ddlog query --format csv` write it: a
    quoted cell may hold commas, line breaks and doubled quotes; `""` is an empty string and
    an empty cell no value (null). (multiLine: a file of up to a split's size is read by one
    task either way.)"""
    from pyspark.sql import functions as F

    df = (spark.read.option("header", True).option("inferSchema", False)
          .option("multiLine", True).option("escape", '"').option("emptyValue", _EMPTY)
          .csv(path))
    return df.select(*[F.when(df[c] == _EMPTY, F.lit("")).otherwise(df[c]).alias(c)
                       for c in df.columns])


def read_raw(spark, spec: Spec, info: RelationInfo, extra: tuple[str, ...] = ()):
    """The source as Spark reads it, before its columns are matched to the relation's: CSV as
    text with its header's names, JSON with the relation's schema (and `extra` bigint fields:
    a change file's weight), Parquet and tables as they are."""
    if spec.kind == "table":
        return spark.table(spec.target)
    if spec.kind == "parquet":
        return spark.read.parquet(spec.target)
    if spec.kind == "json":
        from pyspark.sql.types import LongType, StructField

        from ddlog.runtime.schema import relation_schema

        # an integer wider than 64 bits is read as its digits (ingest turns them into words)
        schema = relation_schema([STRING if is_wide(unoptioned(t)) else t
                                  for t in info.column_types],
                                 weight=False, names=list(info.column_names))
        for name in extra:
            schema = schema.add(StructField(name, LongType(), True))
        return spark.read.schema(schema).option("mode", "FAILFAST").json(spec.target)
    if spec.kind == "csv":
        check_csv_columns(info, spec)
        return read_csv(spark, spec.target)
    raise BindingError(f"{spec}: not a tabular source")
