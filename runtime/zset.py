"""Z-set algebra on Spark DataFrames: a Z-set is the relation's columns plus `_w` (a long
weight); traces add `_i` (the iteration). Sum, negation, consolidation and the join family,
as plans; materialising them is runtime/physical.py's job.

`None` stands for the empty Z-set throughout the runtime: the driver knows when a delta is
empty and skips the work instead of running a Spark job over nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, TypeVar

from pyspark.sql import functions as F
from pyspark.sql.types import (ArrayType, BooleanType, ByteType, DataType, IntegerType,
                               LongType, ShortType, StringType, StructType)

from ddlog.runtime.backend import aggregate_where, col, select, union_many
from ddlog.runtime.schema import ITER, WEIGHT

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

T = TypeVar("T")


def union_all(dfs: list[DataFrame | None]) -> DataFrame | None:
    dfs = [d for d in dfs if d is not None]
    if not dfs:
        return None
    return union_many(dfs, by_name=True)


def consolidate(df: DataFrame | list[DataFrame | None] | None, cols: list[str],
                positive: bool = False) -> DataFrame | None:
    """Sum the weights of equal rows and drop the zeros, or with `positive` all but the rows
    of positive weight (columns: `cols`, then the weight, as the aggregate gives them). A
    list of Z-sets is consolidated as their sum: their union is part of the same plan."""
    if isinstance(df, list):
        df = [d for d in df if d is not None] or None
    if df is None:
        return None
    weight = col(WEIGHT)
    return aggregate_where(df, cols, F.sum(WEIGHT).alias(WEIGHT),
                           weight > 0 if positive else weight != 0)


def consolidate_rows(rows: list[dict], cols: list[str]) -> list[dict]:
    """`consolidate` of rows the driver holds (dicts by column, `cols` then the weight), for
    values whose equality in Python is Spark's (rows_comparable): the weights of equal rows
    summed, zeros dropped, in the order of each row's first occurrence."""
    sums: dict[tuple, list] = {}
    for r in rows:
        key = row_key(r, cols)
        if key in sums:
            sums[key][1] += r[WEIGHT]
        else:
            sums[key] = [r, r[WEIGHT]]
    return [{**{c: r[c] for c in cols}, WEIGHT: w} for r, w in sums.values() if w != 0]


def rows_comparable(schema: StructType) -> bool:
    """Whether Python compares values of these columns as Spark groups them: integers,
    strings and booleans, and structs and arrays of those. Not floating point: Spark groups
    NaN with NaN and -0.0 with 0.0 (Python: NaN is not equal to itself)."""
    return all(_comparable(f.dataType) for f in schema.fields)


def _comparable(t: DataType) -> bool:
    if isinstance(t, StructType):
        return rows_comparable(t)
    if isinstance(t, ArrayType):
        return _comparable(t.elementType)
    return isinstance(t, (LongType, IntegerType, ShortType, ByteType, StringType, BooleanType))


def row_key(row: dict, cols: list[str]) -> tuple:
    """A held row's values of `cols` as one dict key (see _hashable), for values whose
    equality in Python is Spark's (rows_comparable)."""
    return tuple(_hashable(row[c]) for c in cols)


def _hashable(v):
    """A collected Spark value as a dict key: arrays (lists) and structs (Rows) as tuples."""
    return tuple(_hashable(x) for x in v) if isinstance(v, (list, tuple)) else v


def negate(df: DataFrame | None) -> DataFrame | None:
    if df is None:
        return None
    return df.withColumn(WEIGHT, -col(WEIGHT))


def drop_iter(df: DataFrame | None) -> DataFrame | None:
    if df is None or ITER not in df.columns:
        return df
    return df.drop(ITER)


def keys_equal(left: list[str], right: list[str],
               null_safe: list[bool] | None = None) -> Column | None:
    """The join condition `left = right`, column by column. A key that may be null (an
    `Option` column: DDlog's None is Spark's null) compares null-safely, as DDlog's `==` does;
    the others compare with plain `=`, which lets Spark join on the columns themselves (so an
    input partitioned by them, an arrangement, is not shuffled again). `null_safe` says which
    (None: all, the safe default)."""
    cond = None
    for k, (a, b) in enumerate(zip(left, right)):
        safe = null_safe is None or null_safe[k]
        c = col(a).eqNullSafe(col(b)) if safe else col(a) == col(b)
        cond = c if cond is None else cond & c
    return cond


def join(a: DataFrame, b: DataFrame, a_keys: list[str], b_keys: list[str], a_out: list[str],
         b_out: list[str], small: str | None = None,
         null_safe: list[bool] | None = None) -> DataFrame:
    """Z-set join: matching rows pair up, weights multiply. `a_out`/`b_out` are kept (the right
    side's columns are renamed apart first). `small` = 'a' | 'b' hints a broadcast. An
    iteration column `_i` on either side is not kept: the last select leaves out `a`'s, and
    the renaming `b`'s."""
    rb = select(b, *[col(c).alias(f"r__{c}") for c in b.columns if c != ITER])
    if small == "a":
        a = F.broadcast(a)
    elif small == "b":
        rb = F.broadcast(rb)
    if a_keys:
        j = a.join(rb, keys_equal(a_keys, [f"r__{k}" for k in b_keys], null_safe), "inner")
    else:
        j = a.crossJoin(rb)
    return select(j, *[col(c) for c in a_out], *[col(f"r__{c}").alias(c) for c in b_out],
                  (col(WEIGHT) * col(f"r__{WEIGHT}")).alias(WEIGHT))


def semijoin_keys(df: DataFrame, keys_df: DataFrame, cols: list[str],
                  broadcast: bool = False, null_safe: list[bool] | None = None) -> DataFrame:
    """Rows of `df` whose `cols` occur in `keys_df` (which has exactly `cols`; duplicates in it
    do not matter). `broadcast`: the key side is small (the caller knows its size), so it is
    broadcast and `df` is read once, without a shuffle; a local key side is broadcast
    without a Spark job of its own. Otherwise Spark chooses from its statistics (exact for
    local relations) and AQE corrects it at run time; a forced broadcast of a large side
    fails with "Not enough memory to build and broadcast"."""
    if not cols:
        return df
    rk = select(keys_df, *[col(c).alias(f"s__{c}") for c in cols])
    if broadcast:
        rk = F.broadcast(rk)
    return df.join(rk, keys_equal(cols, [f"s__{c}" for c in cols], null_safe), "left_semi")


def antijoin_keys(df: DataFrame, keys_df: DataFrame, cols: list[str],
                  broadcast: bool = False, null_safe: list[bool] | None = None) -> DataFrame:
    """Rows of `df` whose `cols` do not occur in `keys_df` (broadcast as in semijoin_keys)."""
    rk = select(keys_df, *[col(c).alias(f"s__{c}") for c in cols])
    if broadcast:
        rk = F.broadcast(rk)
    return df.join(rk, keys_equal(cols, [f"s__{c}" for c in cols], null_safe), "left_anti")


# Spark keeps an IN list of at most this many literals an `In` (longer ones become `InSet`,
# which cached and Parquet scans cannot prune by); a longer list is split into ORed chunks.
_IN_CHUNK = 10


# What a key held in Python may be to become a literal of a lookup: values whose equality in
# Python is Spark's (not floats: NaN and -0.0 compare otherwise; not nested values).
_LITERALS = (bool, int, str)


def literal_keys(values: Iterable) -> set | None:
    """`values` as a set of lookup literals, or None if one of them cannot be one."""
    out = set()
    for v in values:
        if v is not None and not isinstance(v, _LITERALS):
            return None
        out.add(v)
    return out


def lookup(df: DataFrame, col: str, values: set | list, one_task: bool = False) -> DataFrame:
    """Rows of `df` whose `col` is one of `values` (literals the driver holds; None matches
    null, as the null-safe key comparison does). They become literal IN lists, which a scan
    of a key-sorted cache or key-sorted Parquet answers by skipping every batch or row group
    whose range holds none of them: the cost follows the number of keys, not the size of
    `df`. Callers use it to narrow a large side before the exact join, so a superset of the
    keys is as good as the keys.

    The condition goes to Spark as SQL text, one py4j call: built from Columns, every
    literal costs two (its `lit` and its place in a Java list), and a lookup of 256 keys
    took ~540 (a 100-edge reachability epoch at 100k edges made 4,400 such calls). A value
    SQL text cannot carry exactly (see _sql_literal) goes as a Column literal instead.
    `one_task`: the rows found are read as one partition (config.one_task_lookups)."""
    vals = sorted((v for v in values if v is not None), key=repr)
    as_text = [(v, _sql_literal(v)) for v in vals]
    texts = [t for _, t in as_text if t is not None]
    others = [v for v, t in as_text if t is None]
    name = "`" + col.replace("`", "``") + "`"
    conds = [F.expr(_any_text([f"{name} IN ({', '.join(texts[k:k + _IN_CHUNK])})"
                               for k in range(0, len(texts), _IN_CHUNK)]))] if texts else []
    conds += [F.col(col).isin(others[k:k + _IN_CHUNK])
              for k in range(0, len(others), _IN_CHUNK)]
    if len(vals) < len(values):
        conds.append(F.col(col).isNull())
    found = df.filter(_any(conds) if conds else F.lit(False))
    return found.coalesce(1) if one_task else found


# the largest integer that reads back from SQL text as an integer literal of the same value
# (a larger one reads as a decimal, or past 38 digits as a double, unless marked `BD`)
_SQL_LONG = 2 ** 63 - 1


def _sql_literal(v: bool | int | str) -> str | None:
    """`v` as Spark SQL literal text, or None when the text would not read back as exactly
    `v` whatever the session's settings: a string holding a quote or a backslash (whose
    escaping depends on spark.sql.parser.escapedStringLiterals), an integer of more digits
    than a decimal holds."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        if -_SQL_LONG <= v <= _SQL_LONG:
            return str(v)
        return f"{v}BD" if len(str(abs(v))) <= 38 else None
    if "'" in v or "\\" in v:
        return None
    return f"'{v}'"


def _any_text(conds: list[str]) -> str:
    """_any for SQL text: the OR of `conds`, as a balanced tree of parentheses."""
    return balanced(conds, lambda a, b: f"({a}) OR ({b})")


def _any(conds: list[Column]) -> Column:
    """The OR of `conds` as a balanced tree (a chain of thousands would overflow the JVM's
    stack when Spark plans it)."""
    return balanced(conds, lambda a, b: a | b)


def balanced(items: list[T], pair: Callable[[T, T], T]) -> T:
    """`items` combined by `pair` as a balanced binary tree."""
    while len(items) > 1:
        items = [pair(items[k], items[k + 1]) if k + 1 < len(items) else items[k]
                 for k in range(0, len(items), 2)]
    return items[0]
