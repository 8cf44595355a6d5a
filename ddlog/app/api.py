"""The Python API for PySpark users: a thin layer over the Database façade.

    p = Program.load("programs/tc.dl")           # or program text; spark= an existing session
    p.insert("Edge", [(1, 2), (2, 3)])            # tuples, dicts or a Spark DataFrame
    changes = p.commit()                          # {output relation: DataFrame(..., weight)}
    p.relation("Path").show()
    p.delete("Edge", [(1, 2)]); p.rollback()      # drop uncommitted updates

Updates are validated when they are given (relation, role, arity, types, values) and
buffered; commit runs one epoch. A failed commit leaves the program exactly as it was before
it, with the updates still buffered (call rollback() to drop them).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ddlog.app.database import Database
from ddlog.app.transaction import Transaction
from ddlog.errors import UpdateError
from ddlog.plan import CompiledProgram
from ddlog.plan import load as load_program
from ddlog.types import RelationInfo

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ddlog.runtime.config import Config

__all__ = ["Program", "UpdateError"]


class Program:
    def __init__(self, compiled: CompiledProgram, spark=None, max_iterations: int | None = None,
                 config: "Config | None" = None):
        """`config`: the engine's knobs (runtime/config.Config), for those who tune it."""
        from dataclasses import replace

        from ddlog.runtime.config import Config
        from ddlog.runtime.spark import get_session

        config = config or Config()
        if max_iterations is not None:
            config = replace(config, max_iterations=max_iterations)
        self.db = Database(compiled, spark=spark or get_session(), config=config)
        self.pending = Transaction()
        self.progress = None  # a callable taking one line of progress, or None

    @classmethod
    def load(cls, path_or_text: str, spark=None, **options) -> "Program":
        return cls(load_program(path_or_text), spark, **options)

    # -- the façade's parts, for those who need them -------------------------------------

    @property
    def compiled(self) -> CompiledProgram:
        return self.db.compiled

    @property
    def spark(self):
        return self.db.spark

    @property
    def engine(self):
        return self.db.engine

    @property
    def epoch(self) -> int:
        return self.db.epoch

    @property
    def last_commit(self):
        """What the last commit did (runtime/stats.EpochStats: seconds, Spark jobs, iterations
        and rows per stratum), or None before the first."""
        return self.db.last_commit

    # -- relations -----------------------------------------------------------------------

    @property
    def relations(self) -> dict[str, RelationInfo]:
        return self.db.relations

    def info(self, name: str) -> RelationInfo:
        return self.db.relation(name)

    def relation(self, name: str) -> "DataFrame":
        """Current contents of a relation, with its declared column names."""
        self.info(name)
        return self.db.named(name, self.db.value_frame(name))

    # -- updates -------------------------------------------------------------------------

    def insert(self, relation: str, rows) -> None:
        self.pending.add_frame(relation, +1, self.db.ingest(relation, rows, "insert into"))

    def delete(self, relation: str, rows) -> None:
        self.pending.add_frame(relation, -1, self.db.ingest(relation, rows, "delete from"))

    def rollback(self) -> None:
        self.pending = Transaction()

    # -- epochs --------------------------------------------------------------------------

    def commit(self) -> dict[str, "DataFrame"]:
        """Run one epoch; return the change of every output relation that changed, as a
        DataFrame with the declared columns and a `weight` column (+1 / -1)."""
        changes = self.db.commit(self.pending, progress=self.progress)
        self.pending = Transaction()
        return changes
