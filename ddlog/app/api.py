"""The Python API for PySpark users.

    p = Program.load("programs/tc.dl")           # or program text; spark= an existing session
    p.insert("Edge", [(1, 2), (2, 3)])            # tuples, dicts or a Spark DataFrame
    changes = p.commit()                          # {output relation: DataFrame(..., weight)}
    p.relation("Path").show()
    p.delete("Edge", [(1, 2)]); p.rollback()      # drop uncommitted updates

Updates are validated when they are given (relation, role, arity, types) and buffered; commit
runs one epoch. A failed commit leaves the program exactly as it was before it, with the
updates still buffered (call rollback() to drop them).
"""
from __future__ import annotations

from typing import Any, Iterable

from ddlog.types import RelationInfo
from ddlog.plan.compile import CompiledProgram
from ddlog.errors import DDlogError
from ddlog.plan import load as load_program
from ddlog.values import conforms


class UpdateError(DDlogError):
    """A malformed update: unknown relation, not an input, wrong arity or type."""


class Program:
    def __init__(self, compiled: CompiledProgram, spark=None, max_iterations: int = 10_000):
        from runtime.config import Config
        from runtime.engine import Engine
        from runtime.spark import get_session

        self.compiled = compiled
        self.spark = spark or get_session()
        self.engine = Engine(compiled, self.spark, Config(max_iterations=max_iterations))
        self.pending: dict[str, list[tuple[int, Any]]] = {}
        self.progress = None

    @classmethod
    def load(cls, path_or_text: str, spark=None, **options) -> "Program":
        return cls(load_program(path_or_text), spark, **options)

    # -- relations ---------------------------------------------------------------------

    @property
    def relations(self) -> dict[str, RelationInfo]:
        return self.compiled.program.relations

    def info(self, name: str) -> RelationInfo:
        if name not in self.relations:
            raise UpdateError(f"unknown relation '{name}'")
        return self.relations[name]

    def relation(self, name: str):
        """Current contents of a relation, with its declared column names."""
        info = self.info(name)
        df = self.engine.value(name)
        return df.toDF(*info.column_names) if info.arity else df

    # -- updates -----------------------------------------------------------------------

    def insert(self, relation: str, rows) -> None:
        self._buffer(relation, +1, rows)

    def delete(self, relation: str, rows) -> None:
        self._buffer(relation, -1, rows)

    def rollback(self) -> None:
        self.pending = {}

    def _buffer(self, relation: str, sign: int, rows) -> None:
        info = self.info(relation)
        if info.role != "input":
            raise UpdateError(f"cannot update relation '{relation}': it is not an input "
                              f"relation")
        df = self.to_frame(info, rows)
        self.pending.setdefault(relation, []).append((sign, df))

    def to_frame(self, info: RelationInfo, rows):
        """Rows (tuples, dicts, or a DataFrame) → a DataFrame with columns c0..cN."""
        from pyspark.sql import DataFrame

        from runtime.schema import relation_schema, to_spark

        if isinstance(rows, DataFrame):
            return self._from_dataframe(info, rows)
        data = []
        for row in _as_tuples(info, rows):
            for (col, t), v in zip(info.columns, row):
                if not conforms(v, t):
                    raise UpdateError(f"relation '{info.name}' column '{col}': expected {t}, "
                                      f"found {v!r}")
            data.append(tuple(to_spark(v, t) for v, (_, t) in zip(row, info.columns)))
        schema = relation_schema(info.column_types, weight=False)
        return self.spark.createDataFrame(data, schema)

    def _from_dataframe(self, info: RelationInfo, df):
        from pyspark.sql import functions as F

        from runtime.schema import col_name, spark_type

        names = list(info.column_names)
        if all(n in df.columns for n in names):
            cols = [df[n] for n in names]
            shown = names
        elif len(df.columns) == info.arity:
            cols = [df[c] for c in df.columns]
            shown = df.columns
        else:
            raise UpdateError(f"relation '{info.name}' expects {info.arity} columns "
                              f"({', '.join(names)}), the DataFrame has {len(df.columns)}: "
                              f"{', '.join(df.columns)}")
        out = []
        for k, (c, shown_name, (col, t)) in enumerate(zip(cols, shown, info.columns)):
            have = df.schema[shown_name].dataType
            want = spark_type(t)
            if not _castable(have, want):
                raise UpdateError(f"relation '{info.name}' column '{col}': expected {t}, the "
                                  f"DataFrame column '{shown_name}' is {have.simpleString()}")
            out.append(c.cast(want).alias(col_name(k)))
        framed = df.select(*out) if out else df.select(F.lit(1)).select()
        self._check_values(info, framed)
        return framed

    @staticmethod
    def _check_values(info: RelationInfo, df) -> None:
        """The Spark types fit, but the values may not (a null outside an Option, an integer
        outside bit<N>): one Spark job counts the bad values of every column."""
        from pyspark.sql import functions as F

        from runtime.schema import col_name, invalid_value

        checks = []
        for k, (col, t) in enumerate(info.columns):
            bad = invalid_value(F.col(col_name(k)), t)
            if bad is not None:
                checks.append((col, t, F.sum(F.when(bad, 1).otherwise(0)).alias(col)))
        if not checks:
            return
        row = df.agg(*[c for _, _, c in checks]).first()
        for col, t, _ in checks:
            if row[col]:
                raise UpdateError(f"relation '{info.name}' column '{col}': expected {t}, "
                                  f"the DataFrame has {row[col]} value(s) that are not")

    # -- epochs ------------------------------------------------------------------------

    def commit(self) -> dict:
        """Run one epoch; return the change of every output relation that changed, as a
        DataFrame with the declared columns and a `weight` column (+1 / -1)."""
        changes = self.engine.commit(self.pending, progress=self.progress)
        self.pending = {}
        out = {}
        for name, df in changes.items():
            info = self.relations.get(name)
            if info is None or info.role != "output":
                continue
            out[name] = self.named_change(info, df)
        return out

    @staticmethod
    def named_change(info: RelationInfo, df):
        weight = "weight" if "weight" not in info.column_names else "_weight"
        return df.toDF(*info.column_names, weight)

    @property
    def epoch(self) -> int:
        return self.engine.epoch


def _as_tuples(info: RelationInfo, rows: Iterable) -> list[tuple]:
    out = []
    for row in rows:
        if isinstance(row, dict):
            extra = set(row) - set(info.column_names)
            missing = [n for n in info.column_names if n not in row]
            if extra or missing:
                raise UpdateError(f"relation '{info.name}' has columns "
                                  f"{', '.join(info.column_names)}; got {', '.join(row)}")
            row = tuple(row[n] for n in info.column_names)
        elif not isinstance(row, (tuple, list)):
            row = (row,)
        row = tuple(row)
        if len(row) != info.arity:
            raise UpdateError(f"relation '{info.name}' expects {info.arity} values, "
                              f"found {len(row)}: {row!r}")
        out.append(row)
    return out


def _castable(have, want) -> bool:
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
