"""Reading a bound source as a relation's rows: typed by the relation's declaration, columns
matched by name, every value checked (runtime/io/__init__.py says more)."""
from __future__ import annotations

from ddlog.types import RelationInfo, TBool, TFloat, TInt, TOption, TString, Type
from runtime.errors import describe
from runtime.io.specs import BindingError, Spec
from runtime.schema import col_name, spark_type


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
        if spec.kind == "table":
            df = spark.table(spec.target)
        elif spec.kind == "parquet":
            df = spark.read.parquet(spec.target)
        elif spec.kind == "json":
            from runtime.schema import relation_schema

            schema = relation_schema(info.column_types, weight=False,
                                     names=list(info.column_names))
            df = spark.read.schema(schema).option("mode", "FAILFAST").json(spec.target)
        elif spec.kind == "csv":
            check_csv_columns(info, spec)
            df = spark.read.option("header", True).option("inferSchema", False).csv(spec.target)
        else:
            raise BindingError(f"{spec}: not a tabular source")
        cols = _columns(df, info, spec)
        csv = spec.kind == "csv"
        # raw and typed columns side by side, so one job can check the conversion
        have = [df.select(c).schema[0].dataType for c in cols]
        both = df.select(*[c.alias(f"_raw{k}") for k, c in enumerate(cols)],
                         *[_convert(c, t, csv, h).alias(col_name(k))
                           for k, (c, h, (_, t)) in enumerate(zip(cols, have, info.columns))])
        _check(both, info, spec)
        return both.select(*[col_name(k) for k in range(info.arity)])
    except PySparkException as err:
        raise BindingError(f"cannot read {spec}: {describe(err)}") from None


def _columns(df, info: RelationInfo, spec: Spec) -> list:
    """The source's columns for the relation's, matched by name (ignoring case); extra
    columns are ignored. Never by position: a header `dst,src` or `a,b` mapped by position
    would give wrong answers without a word."""
    names = list(info.column_names)
    lower = {c.lower(): c for c in df.columns}
    missing = [n for n in names if n.lower() not in lower]
    if missing:
        raise BindingError(f"{spec}: relation {info.name} has columns {', '.join(names)}; the "
                           f"source has {', '.join(df.columns) or 'none'} (no column "
                           f"{', '.join(missing)}): sources are matched by column name")
    return [df[lower[n.lower()]] for n in names]


def _convert(c, t: Type, from_text: bool, have=None):
    """A column as the Spark type of `t`. Text is converted with try_cast (a bad value becomes
    null and is reported by _check); other sources cast as Spark does, unless the type is
    already right (a cast cannot make a nullable struct field non-nullable, even when no value
    is null: _check reports nulls)."""
    from pyspark.sql import functions as F

    want = spark_type(t)
    if have is not None and have.simpleString() == want.simpleString():
        return c
    if from_text:
        inner = t.elem if isinstance(t, TOption) else t
        if isinstance(inner, TString):
            return c
        if isinstance(inner, TBool):
            low = F.lower(F.trim(c))
            return F.when(low == "true", F.lit(True)).when(low == "false", F.lit(False))
        return F.trim(c).try_cast(want)
    return c.cast(want)


def _check(both, info: RelationInfo, spec: Spec) -> None:
    """One job: the first few rows that do not fit the relation's types."""
    from pyspark.sql import functions as F

    csv = spec.kind == "csv"
    problems = []
    for k, (name, t) in enumerate(info.columns):
        c, src = F.col(col_name(k)), F.col(f"_raw{k}")
        inner = t.elem if isinstance(t, TOption) else t
        if csv:
            given = src.isNotNull() & (F.trim(src) != "") if isinstance(t, TOption) \
                else src.isNotNull()
            problems.append((given & c.isNull(), f"column {name}: not a {inner}"))
        if not isinstance(t, TOption):
            problems.append((src.isNull(), f"column {name}: missing value"))
        if isinstance(inner, TInt) and inner.width is not None and inner.width < 64:
            lo, hi = ((-(1 << (inner.width - 1)), (1 << (inner.width - 1)) - 1) if inner.signed
                      else (0, (1 << inner.width) - 1))
            problems.append(((c < lo) | (c > hi), f"column {name}: out of range for {inner}"))
        if isinstance(inner, TInt) and inner.width == 64 and not inner.signed:
            problems.append((c < 0, f"column {name}: out of range for {inner}"))
    if not problems:
        return
    why = F.concat_ws("; ", *[F.when(cond, F.lit(msg)) for cond, msg in problems])
    row = F.to_json(F.struct(*[F.col(f"_raw{k}").alias(n)
                               for k, n in enumerate(info.column_names)]))
    rows = (both.select(why.alias("_why"), row.alias("_row"))
            .filter(F.col("_why") != "").limit(3).collect())
    if rows:
        detail = "; ".join(f"{r['_row']}: {r['_why']}" for r in rows)
        raise BindingError(f"{spec}: rows that do not fit {info.name}: {detail}")


