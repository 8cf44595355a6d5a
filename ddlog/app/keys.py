"""What an input relation's primary key means for updates, as DDlog defines it (`primary key
(x) e`): an `insert` of a record whose key is taken is refused, `insert_or_update` replaces
it, `modify R k <- v` changes the record with key k and `delete_key R k` deletes it. Keys
are computed on Spark, as every expression is. The transaction's updates so far count
(`keyed_rows`), and so do rows held in Python for a .dat file bound as a source
(`replay_*`, ddlog/app/dat.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ddlog.app.transaction import CLEAR, Transaction
from ddlog.errors import UpdateError
from ddlog.syntax import ast
from ddlog.syntax import commands as C
from ddlog.types import RelationInfo, TCtor, TStruct
from ddlog.values import Record, format_record, format_value, sort_key
from ddlog.values.literals import mutated, value_of

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from ddlog.app.database import Database


class PrimaryKeys:
    """The key semantics of `db`'s input relations (Database.keys)."""

    def __init__(self, db: "Database"):
        self.db = db

    def by_key(self, txn: Transaction, cmd: "C.Modify | C.DeleteKey", file: str,
               source: str | None) -> None:
        """`modify R k <- v;` / `delete_key R k;`: the record of R whose primary key is k
        (as the transaction has it so far) is replaced by itself changed by v, or deleted."""
        info, key, k = self._key_of(cmd, file, source)
        old, new = self._rekeyed(cmd, info, key, self.keyed_rows(txn, info, key, k), file,
                                 source)
        txn.delete(info.name, old)
        if new is not None:
            txn.insert(info.name, new)

    def replay_by_key(self, rows: set[tuple], cmd: "C.Modify | C.DeleteKey", file: str,
                      source: str | None) -> None:
        """`by_key` on rows held in Python (a .dat file bound as a source)."""
        info, key, k = self._key_of(cmd, file, source)
        found = self._with_key(self.db.rows_frame(info, list(rows)), info, key, k) if rows else []
        old, new = self._rekeyed(cmd, info, key, found, file, source)
        rows.discard(old)
        if new is not None:
            rows.add(new)

    def replay_insert(self, rows: set[tuple], row: tuple, cmd: C.Update, file: str,
                      source: str | None) -> None:
        """An `insert` / `insert_or_update` on rows held in Python (a .dat file bound as a
        source)."""
        if self.keyed(cmd, source):
            info = self.db.relations[cmd.atom.relation]
            key = self.db.program.keys[info.name]
            found = self._with_key(self.db.rows_frame(info, list(rows)), info, key,
                                   self.key_value(info, row)) if rows else []
            rows.difference_update(self.replaced(found, cmd, source))
        rows.add(row)

    def keyed(self, cmd: C.Update, source: str | None) -> bool:
        """Whether an insert goes into a relation with a primary key (`insert_or_update`
        must)."""
        name = cmd.atom.relation
        if cmd.kind == "insert_or_update" and name not in self.db.program.keys:
            raise UpdateError(f"insert_or_update: relation '{name}' has no primary key "
                              "(declared with it: `primary key (x) x.field`)", cmd.span, source)
        return name in self.db.program.keys

    def replaced(self, found: list[tuple], cmd: C.Update, source: str | None) -> list[tuple]:
        """The records an insert into a relation with a primary key replaces, given those
        with its key: an `insert` is refused if there is one (DDlog's rule), an
        `insert_or_update` replaces it."""
        if cmd.kind == "insert" and found:
            info = self.db.relations[cmd.atom.relation]
            key = self.db.program.keys[info.name]
            k = self.key_value(info, found[0])
            old = format_record(info.record, info.columns, found[0])
            raise UpdateError(f"insert: relation '{info.name}' already has a record with key "
                              f"{format_value(k, key.ty)}: {old} (`modify` or "
                              "`insert_or_update` changes it)", cmd.span, source)
        return found

    def _key_column(self, info: RelationInfo) -> "tuple[list[str], Column]":
        """The primary key of `info`'s records as a Column over the columns named by the
        first list (check_keys' variables)."""
        from ddlog.check.rules import key_columns
        from ddlog.plan.exprs import lower, var_col
        from ddlog.runtime.expr import compile_expr

        _ = self.db.spark  # started first: Columns need a session
        names = [var_col(c) for c in key_columns(info.arity)]
        return names, compile_expr(lower(self.db.program.keys[info.name]))

    def key_value(self, info: RelationInfo, row: tuple) -> Any:
        """The primary key of `row`, computed on Spark (as every expression is)."""
        from ddlog.runtime.expr import value
        from ddlog.runtime.schema import from_spark

        names, key = self._key_column(info)
        cols = [value(v, t).alias(n) for v, t, n in zip(row, info.column_types, names)]
        one = self.db.spark.range(1).select(*cols).select(key.alias("k"))
        return from_spark(one.collect()[0]["k"], self.db.program.keys[info.name].ty)

    def _key_of(self, cmd: "C.Modify | C.DeleteKey", file: str,
                source: str | None) -> tuple[RelationInfo, ast.Expr, Any]:
        verb = "modify" if isinstance(cmd, C.Modify) else "delete_key"
        info = self.db.input_relation(cmd.relation, cmd.span, source, verb)
        key = self.db.program.keys.get(info.name)
        if key is None:
            raise UpdateError(f"{verb}: relation '{info.name}' has no primary key (declared "
                              "with it: `primary key (x) x.field`)", cmd.span, source)
        return info, key, value_of(cmd.key, key.ty, file, source)

    def _rekeyed(self, cmd: "C.Modify | C.DeleteKey", info: RelationInfo, key: ast.Expr,
                 found: list[tuple], file: str, source: str | None
                 ) -> tuple[tuple, tuple | None]:
        """The record the key finds, and what replaces it (None: nothing)."""
        if len(found) != 1:
            verb = "modify" if isinstance(cmd, C.Modify) else "delete_key"
            what = "no record" if not found else f"{len(found)} records"
            k = value_of(cmd.key, key.ty, file, source)
            raise UpdateError(f"{verb}: relation '{info.name}' has {what} with key "
                              f"{format_value(k, key.ty)}", cmd.key.span, source)
        if isinstance(cmd, C.DeleteKey):
            return found[0], None
        t = TStruct(info.record, (TCtor(info.record, info.columns),))
        return found[0], mutated(Record(info.record, found[0]), cmd.value, t, file,
                                 source).values

    def keyed_rows(self, txn: Transaction, info: RelationInfo, key: ast.Expr,
                   k: Any) -> list[tuple]:
        """The rows of input relation `info` whose primary key is `k`: the committed ones
        (found on Spark by the key) with the transaction's updates so far applied."""
        steps = txn.steps.get(info.name, [])
        cleared = any(step is CLEAR for step in steps)
        if cleared:
            steps = steps[len(steps) - steps[::-1].index(CLEAR):]
        rows = set() if cleared else set(self._with_key(self.db.value_frame(info.name), info,
                                                        key, k))
        before = set(rows)
        for step in steps:
            changes = step.items() if isinstance(step, dict) else \
                [(r, step.sign) for r in self.db.rows(info.name, step.df)]
            for row, sign in changes:
                (rows.add if sign > 0 else rows.discard)(row)
        if rows - before:  # rows the transaction added: which of them have the key?
            rows = set(self._with_key(self.db.rows_frame(info, list(rows)), info, key, k))
        return sorted(rows, key=sort_key)

    def _with_key(self, df: "DataFrame", info: RelationInfo, key: ast.Expr,
                  k: Any) -> list[tuple]:
        from pyspark.sql import functions as F

        from ddlog.runtime.expr import value

        names, column = self._key_column(info)
        df = df.select(*[F.col(f"c{i}").alias(n) for i, n in enumerate(names)])
        df = df.where(column.eqNullSafe(value(k, key.ty)))
        return self.db.rows(info.name, df.select(*[F.col(n).alias(f"c{i}")
                                                for i, n in enumerate(names)]))
