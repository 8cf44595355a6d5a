"""Sources and sinks: where bound input relations come from and output relations go (DESIGN 7).

    SOURCE  table:NAME | parquet:PATH | csv:PATH | json:PATH | dat:PATH (or any PATH.dat)
    SINK    table:NAME | parquet:PATH | csv:PATH | json:PATH

A source is read as a set of rows typed by the relation's columns: columns are matched by the
declared names (ignoring case; extra columns are ignored); CSV (with a header row) is read
as text and converted, JSON lines and Parquet/tables must have castable types. One Spark job
checks what the types cannot: no nulls outside `Option` columns, values that fit `bit<N>` /
`signed<N>`, text that converts. A `.dat` file of DDlog commands is read by ddlog/database.py
(it needs the literal reader), so `read_source` does not take one.

A sink is rewritten as a whole after each commit, with the relation's declared column names.
Paths are made absolute when bound, so a state can be refreshed from any directory.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ddlog.check.program import RelationInfo
from ddlog.errors import DDlogError
from ddlog.types import TBool, TFloat, TInt, TOption, TString, Type
from runtime.schema import col_name, spark_type

SOURCE_KINDS = ("table", "parquet", "csv", "json", "dat")
SINK_KINDS = ("table", "parquet", "csv", "json")


class BindingError(DDlogError):
    """A SOURCE/SINK that cannot be used (bad spec, unreadable data, wrong types)."""


@dataclass(frozen=True)
class Spec:
    kind: str  # one of SOURCE_KINDS / SINK_KINDS
    target: str  # a table name, or an absolute path

    def __str__(self) -> str:
        return f"{self.kind}:{self.target}"


def parse_spec(text: str, sink: bool = False) -> Spec:
    kinds = SINK_KINDS if sink else SOURCE_KINDS
    what = "SINK" if sink else "SOURCE"
    kind, sep, target = text.partition(":")
    if not sep or kind not in kinds:
        ext = os.path.splitext(text)[1].lstrip(".").lower()
        if ext in kinds and ext != "table":
            kind, target = ext, text
        else:
            raise BindingError(f"bad {what} '{text}': expected one of "
                               f"{', '.join(k + ':' + ('NAME' if k == 'table' else 'PATH') for k in kinds)}"
                               f"{'' if sink else ', or a .dat file'}")
    if not target:
        raise BindingError(f"bad {what} '{text}': nothing after '{kind}:'")
    if kind != "table":
        target = os.path.abspath(target)
    return Spec(kind, target)


def parse_binding(text: str, sink: bool = False) -> tuple[str | None, Spec]:
    """`R=SPEC` -> (R, spec). A bare `FILE.dat` source binds every input relation that no other
    binding names (relation None)."""
    name, sep, rest = text.partition("=")
    if sep and name and name[0].isalpha() and name.replace("_", "a").isalnum():
        return name, parse_spec(rest, sink)
    if sink or not text.lower().endswith(".dat"):
        flag, what = ("--output", "SINK") if sink else ("--input", "SOURCE")
        raise BindingError(f"bad {flag} '{text}': expected RELATION={what}"
                           f"{'' if sink else ' or a FILE.dat'}")
    return None, parse_spec(text, sink)


# ---------------------------------------------------------------------------------------------
# Sources


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
        raise BindingError(f"cannot read {spec}: {_first_line(err)}") from None


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


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


# ---------------------------------------------------------------------------------------------
# Sinks


_SPARK_OUTPUT = re.compile(r"\.?(part-.*|_SUCCESS.*|_committed_.*|_started_.*)")


def check_sink_path(spec: Spec) -> None:
    """A path sink is rewritten whole after each commit (Spark deletes what is there): so it
    must be new, or a directory that holds only what an earlier write of a sink left (part
    files, _SUCCESS, their checksums). Anything else there is the user's, and is kept."""
    if spec.kind == "table" or not os.path.exists(spec.target):
        return
    if not os.path.isdir(spec.target):
        raise BindingError(f"{spec}: the path is a file; a sink is a directory that ddlog "
                           f"rewrites after every commit, so give a new path")
    foreign = sorted(e for e in os.listdir(spec.target) if not _SPARK_OUTPUT.fullmatch(e))
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise BindingError(f"{spec}: the directory holds files that are not a sink's output "
                           f"({shown}); a sink is rewritten after every commit, so give a new "
                           f"path")


def write_sink(spec: Spec, df, info: RelationInfo) -> None:
    """Replace the sink's contents with `df` (the relation's value, declared column names)."""
    from pyspark.errors import PySparkException

    check_sink_path(spec)
    try:
        w = df.write.mode("overwrite")
        if spec.kind == "table":
            w.saveAsTable(spec.target)
        elif spec.kind == "parquet":
            w.parquet(spec.target)
        elif spec.kind == "csv":
            check_csv_columns(info, spec)
            w.option("header", True).csv(spec.target)
        elif spec.kind == "json":
            w.json(spec.target)
        else:
            raise BindingError(f"{spec}: not a sink")
    except PySparkException as err:
        raise BindingError(f"cannot write {spec}: {_first_line(err)}") from None
