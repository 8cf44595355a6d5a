"""The one way rows enter the engine: Python rows (tuples, lists, dicts) and DataFrames (a
user's, or a bound source's) become a relation's frame, columns c0..cN of its Spark types,
checked the same way whatever they came from.

- Columns are matched by the relation's column names (ignoring case; extra columns are
  ignored). Only a DataFrame handed over in Python may be matched by position, and only when
  none of its columns has a declared name (a `createDataFrame` of tuples, say).
- Types must fit: a column whose Spark type cannot hold the declared type is refused before
  any job runs; text (CSV) is converted, and a value that does not convert is reported.
- Values must fit too, which the Spark type does not say: no null outside an `Option`, no
  integer outside bit<N>/signed<N>, nested in tuples, structs and vectors as well. One Spark
  job finds the first few rows that do not fit, and the error shows them.

Errors are raised with the caller's error class (`error`), so the Python API reports an
UpdateError and a bound source a BindingError, with the same words.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from ddlog.errors import DDlogError
from ddlog.types import (RelationInfo, TBool, TInt, TOption, TString, Type, is_u64, is_wide,
                         unoptioned)
from ddlog.values import conforms
from ddlog.runtime.config import DEFAULT, Config
from ddlog.runtime.physical import local_frame
from ddlog.runtime.schema import col_name, invalid_value, relation_schema, spark_type, to_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ErrorClass = Callable[[str], DDlogError]


# ---------------------------------------------------------------------------------------------
# Python rows


def rows_frame(spark: "SparkSession", info: RelationInfo, rows: Iterable[Any],
               error: ErrorClass, config: Config = DEFAULT) -> "DataFrame":
    """Rows given in Python (tuples or lists in column order, dicts by column name, a bare
    value for a one-column relation), each value checked against its column's type."""
    return spark_frame(spark, info, spark_rows(info, rows, error), config)


def spark_rows(info: RelationInfo, rows: Iterable[Any], error: ErrorClass) -> list[tuple]:
    """Rows given in Python, checked against the column types, as Spark values."""
    data = []
    for row in as_tuples(info, rows, error):
        for (col, t), v in zip(info.columns, row):
            if not conforms(v, t):
                raise error(f"relation '{info.name}' column '{col}': expected {t}, "
                            f"found {v!r}")
        data.append(tuple(to_spark(v, t) for v, (_, t) in zip(row, info.columns)))
    return data


def spark_frame(spark: "SparkSession", info: RelationInfo, data: list[tuple],
                config: Config = DEFAULT) -> "DataFrame":
    """Checked Spark values (spark_rows) as the relation's frame (columns c0..cN): a local
    relation up to config.local_frame_rows rows."""
    schema = relation_schema(info.column_types, weight=False)
    if len(data) <= config.local_frame_rows:
        return local_frame(spark, schema, data)
    return spark.createDataFrame(data, schema)


def as_tuples(info: RelationInfo, rows: Iterable[Any], error: ErrorClass) -> list[tuple]:
    out = []
    for row in rows:
        if isinstance(row, dict):
            extra = set(row) - set(info.column_names)
            missing = [n for n in info.column_names if n not in row]
            if extra or missing:
                raise error(f"relation '{info.name}' has columns "
                            f"{', '.join(info.column_names)}; got {', '.join(row)}")
            row = tuple(row[n] for n in info.column_names)
        elif not isinstance(row, (tuple, list)):
            row = (row,)
        row = tuple(row)
        if len(row) != info.arity:
            raise error(f"relation '{info.name}' expects {info.arity} values, "
                        f"found {len(row)}: {row!r}")
        out.append(row)
    return out


# ---------------------------------------------------------------------------------------------
# DataFrames


def frame(df: "DataFrame", info: RelationInfo, where: str, error: ErrorClass, *,
          text: bool = False, by_position: bool = False, keep: tuple[str, ...] = (),
          exact: bool = False) -> "DataFrame":
    """`df` as the relation's frame. `where` names the data in messages (a source spec, or
    "the DataFrame"); `text`: every column is text to convert (CSV); `by_position`: a frame
    with none of the declared names may give its columns in order; `keep`: columns of `df`
    passed through after c0..cN as they are (a change file's weight); `exact`: names match
    as written, case included (a change file's)."""
    cols, shown = _columns(df, info, where, error, by_position, exact)
    typed = []
    for k, (c, name, (col, t)) in enumerate(zip(cols, shown, info.columns)):
        have = df.schema[name].dataType
        want = spark_type(t)
        if not text and not (_castable(have, want) or _wide_source(have, t)):
            raise error(f"relation '{info.name}' column '{col}': expected {t}, the {where} "
                        f"column '{name}' is {have.simpleString()}")
        typed.append(_convert(c, t, text, have).alias(col_name(k)))
    # raw and typed columns side by side, so one job checks the conversion and the values
    both = df.select(*[c.alias(f"_raw{k}") for k, c in enumerate(cols)], *typed,
                     *[df[k] for k in keep])
    _check_values(both, info, where, error, text)
    return both.select(*[col_name(k) for k in range(info.arity)], *keep)


def _columns(df, info: RelationInfo, where: str, error: ErrorClass,
             by_position: bool, exact: bool = False) -> tuple[list, list[str]]:
    names = list(info.column_names)
    fold = (lambda c: c) if exact else str.lower
    lower = {fold(c): c for c in df.columns}
    missing = [n for n in names if fold(n) not in lower]
    if not missing:
        shown = [lower[fold(n)] for n in names]
        return [df[c] for c in shown], shown
    if by_position and len(df.columns) == info.arity and len(missing) == len(names):
        return [df[c] for c in df.columns], list(df.columns)
    if by_position:
        raise error(f"relation '{info.name}' expects {info.arity} columns "
                    f"({', '.join(names)}), the {where} has {len(df.columns)}: "
                    f"{', '.join(df.columns) or 'none'}")
    raise error(f"{where}: relation {info.name} has columns {', '.join(names)}; the source has "
                f"{', '.join(df.columns) or 'none'} (no column {', '.join(missing)}): sources "
                f"are matched by column name")


def _wide_source(have, t: Type) -> bool:
    """Whether a column of Spark type `have` gives values of an integer type wider than 64
    bits (stored as two Longs, which no source holds): any integer, an integral decimal, or
    the digits as text."""
    from pyspark.sql import types as T

    return is_wide(unoptioned(t)) and (
        isinstance(have, (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.StringType))
        or (isinstance(have, T.DecimalType) and have.scale == 0))


def _castable(have, want) -> bool:
    """Whether values of Spark type `have` cast to `want` without losing what they mean."""
    from pyspark.sql import types as T

    if have == want:
        return True
    ints = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    if isinstance(want, T.LongType):
        return isinstance(have, ints) or (isinstance(have, T.DecimalType) and have.scale == 0)
    if isinstance(want, (T.DoubleType, T.FloatType)):
        return isinstance(have, ints + (T.FloatType, T.DoubleType, T.DecimalType))
    if isinstance(want, T.ArrayType) and isinstance(have, T.ArrayType):
        return _castable(have.elementType, want.elementType)
    if isinstance(want, T.StructType) and isinstance(have, T.StructType):
        return len(want.fields) == len(have.fields) and all(
            _castable(h.dataType, w.dataType) for h, w in zip(have.fields, want.fields))
    return False


def _convert(c, t: Type, from_text: bool, have):
    """A column as the Spark type of `t`. Text is converted with try_cast (a bad value becomes
    null and is reported by _check_values); other columns are cast, unless the type is already
    right (a cast cannot make a nullable struct field non-nullable, even when no value is
    null: _check_values reports nulls)."""
    from pyspark.sql import functions as F

    want = spark_type(t)
    if have.simpleString() == want.simpleString():
        return c  # a Long for a bit<64>: its bits (what the engine's own DataFrames hold)
    if is_u64(unoptioned(t)):
        return _u64(F.trim(c) if from_text else c)
    if is_wide(unoptioned(t)):
        # its decimal digits, from text or from any number (null when out of range)
        from ddlog.runtime.wide import from_text as wide_from_text

        return wide_from_text(c.cast("string"), unoptioned(t))
    if from_text:
        inner = unoptioned(t)
        if isinstance(inner, TString):
            return c
        if isinstance(inner, TBool):
            low = F.lower(F.trim(c))
            return F.when(low == "true", F.lit(True)).when(low == "false", F.lit(False))
        return F.trim(c).try_cast(want)
    return c.cast(want)


def _u64(c):
    """A bit<64> from its value (text or a decimal): its bits in a Long, null if the value is
    not one of 0 to 2^64 - 1."""
    from ddlog.runtime.expr import u64_from_decimal

    return u64_from_decimal(c.try_cast("decimal(20,0)"))


def _range(t: TInt) -> tuple[int, int] | None:
    if t.width is None or t.width >= 64:  # any Long: a bit<64> is stored as its bits
        return None
    if t.signed:
        return -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    return 0, (1 << min(t.width, 63)) - 1


def _check_values(both, info: RelationInfo, where: str, error: ErrorClass, text: bool) -> None:
    """One job: the first few rows that do not fit the relation's types, with why."""
    from pyspark.sql import functions as F

    problems = []
    for k, (name, t) in enumerate(info.columns):
        c, raw = F.col(col_name(k)), F.col(f"_raw{k}")
        inner = unoptioned(t)
        if text:
            given = (raw.isNotNull() & (F.trim(raw) != "")) if isinstance(t, TOption) \
                else raw.isNotNull()
            problems.append((given & c.isNull(), f"column {name}: not a {inner}"))
        if not isinstance(t, TOption):
            problems.append((raw.isNull(), f"column {name}: missing value"))
        if not text and is_u64(inner):  # a decimal outside 0 to 2^64 - 1
            problems.append((raw.isNotNull() & c.isNull(),
                             f"column {name}: out of range for {inner}"))
        if not text and is_wide(inner):  # text that is no number, or one outside the type
            problems.append((raw.isNotNull() & c.isNull(), f"column {name}: not a {inner}"))
        if isinstance(inner, TInt) and _range(inner) is not None:
            lo, hi = _range(inner)
            problems.append(((c < lo) | (c > hi), f"column {name}: out of range for {inner}"))
        elif not text:
            bad = invalid_value(c, t)  # what is inside: tuple, struct and vector elements
            if bad is not None:
                problems.append((c.isNotNull() & bad,
                                 f"column {name}: holds a value that is not a {t}"))
    if not problems:
        return
    why = F.concat_ws("; ", *[F.when(cond, F.lit(msg)) for cond, msg in problems])
    row = F.to_json(F.struct(*[F.col(f"_raw{k}").alias(n)
                               for k, n in enumerate(info.column_names)]))
    rows = (both.select(why.alias("_why"), row.alias("_row"))
            .filter(F.col("_why") != "").limit(3).collect())
    if rows:
        detail = "; ".join(f"{r['_row']}: {r['_why']}" for r in rows)
        raise error(f"{where}: rows that do not fit {info.name}: {detail}")


def named(info: RelationInfo, df: "DataFrame") -> "DataFrame":
    """A frame with columns c0..cN (and maybe a weight after them) under the relation's
    declared column names; the weight is called `weight` (`_weight` if a column is named
    so)."""
    names = list(info.column_names)
    if len(df.columns) > info.arity:
        names.append("weight" if "weight" not in names else "_weight")
    return df.toDF(*names) if names else df
