"""The Python API for PySpark users: a thin layer over the Database façade.

    p = Program.load("programs/tc.dl")           # or program text; spark= your session
    p.insert("Edge", [(1, 2), (2, 3)])            # tuples, dicts or a Spark DataFrame
    changes = p.commit()                          # {output relation: DataFrame(..., weight)}
    p.relation("Path").show()
    p.delete("Edge", [(1, 2)]); p.rollback()      # drop uncommitted updates

Updates are validated when they are given (relation, role, arity, types, values) and
buffered; commit runs one epoch. A failed commit leaves the program exactly as it was before
it, with the updates still buffered (call rollback() to drop them).

The caller's SparkSession is left as it was: the engine plans and runs on a session of its own
(a `newSession()` of the same SparkContext, with the caller's SQL settings and the engine's:
runtime/spark.engine_session), counts its Spark jobs by job tags added beside the caller's job
group, and keeps its JVM look-ups in a view of its own. The DataFrames it returns belong to the
caller's session.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Sequence, Union

from ddlog.app.database import Database
from ddlog.app.transaction import Transaction
from ddlog.errors import UpdateError
from ddlog.plan import CompiledProgram
from ddlog.plan import load as load_program
from ddlog.types import RelationInfo

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ddlog.runtime.config import Config
    from ddlog.runtime.stats import EpochStats

__all__ = ["Program", "UpdateError", "Rows"]

# What insert and delete take: a Spark DataFrame (columns matched by the relation's column
# names, or by position when it has none of them), or Python rows (tuples in column order, or
# dicts by column name).
Rows = Union["DataFrame", Iterable[tuple], Iterable[Mapping[str, Any]]]


class Program:
    """A DDlog program running on Spark: its relations, the updates buffered for the next
    commit, and the engine that keeps its output relations up to date incrementally."""

    def __init__(self, compiled: CompiledProgram, spark: "SparkSession | None" = None,
                 max_iterations: int | None = None, config: "Config | None" = None) -> None:
        """`compiled`: a checked program (ddlog.plan.load). `spark`: the SparkSession to run
        on (default: the active session, else one made with ddlog's local defaults).
        `max_iterations`: a bound on each recursive stratum's fixpoint iterations.
        `config`: the engine's knobs (ddlog.runtime.config.Config), for those who tune it."""
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
    def load(cls, path_or_text: str, spark: "SparkSession | None" = None,
             max_iterations: int | None = None, config: "Config | None" = None,
             libraries: "Sequence[str]" = ()) -> "Program":
        """A program from a `.dl` file's path or from program text (its modules are looked
        for in the file's directory, then in each of `libraries`, as DDlog's `-L`). A
        program that does not parse or type-check raises a DDlogError whose message names
        the file, line and column."""
        return cls(load_program(path_or_text, libraries=tuple(libraries)), spark,
                   max_iterations, config)

    # -- the façade's parts, for those who need them -------------------------------------

    @property
    def compiled(self) -> CompiledProgram:
        return self.db.compiled

    @property
    def spark(self) -> "SparkSession":
        """The caller's session (the one given, or the one found or made at load)."""
        return self.db.session

    @property
    def engine(self):
        return self.db.engine

    @property
    def epoch(self) -> int:
        """The number of epochs committed."""
        return self.db.epoch

    @property
    def last_commit(self) -> "EpochStats | None":
        """What the last commit did (seconds, Spark jobs, iterations and rows per stratum,
        and how each stratum ran), or None before the first."""
        return self.db.last_commit

    # -- relations -----------------------------------------------------------------------

    @property
    def relations(self) -> dict[str, RelationInfo]:
        """Every relation of the program by name: its role, columns and types."""
        return self.db.relations

    def info(self, name: str) -> RelationInfo:
        """One relation's declaration; UpdateError for an unknown name."""
        return self.db.relation(name)

    def relation(self, name: str) -> "DataFrame":
        """The committed contents of a relation, with its declared column names, as a
        DataFrame of the caller's session."""
        self.info(name)
        with self._engine_work():
            return self._yours(self.db.named(name, self.db.value_frame(name)))

    # -- updates -------------------------------------------------------------------------

    def insert(self, relation: str, rows: Rows,
               columns: Mapping[str, str] | None = None) -> None:
        """Buffer rows to insert into an input relation at the next commit. `rows`: tuples
        in column order, dicts by column name, or a DataFrame; `columns` maps the relation's
        column names to a DataFrame's (e.g. `{"node": "id"}` for a GraphFrame's vertices),
        the others matched by name. Rows are checked now (arity, types, values): a bad one
        raises UpdateError naming the relation and column."""
        self._add(relation, rows, columns, +1, "insert into")

    def delete(self, relation: str, rows: Rows,
               columns: Mapping[str, str] | None = None) -> None:
        """Buffer rows to delete from an input relation at the next commit (as insert)."""
        self._add(relation, rows, columns, -1, "delete from")

    def insert_graph(self, graph: Any, vertices: str | None = None, edges: str | None = None,
                     vertex_columns: Mapping[str, str] | None = None,
                     edge_columns: Mapping[str, str] | None = None) -> None:
        """Buffer a graph's vertices and edges (a GraphFrame, or any object with `vertices`
        and `edges` DataFrames) as inserts into the input relations named `vertices` and
        `edges` (either may be left out). The column maps are as insert's `columns`; by
        default a vertex relation with one column takes the graph's `id`, and an edge
        relation's columns are matched by name (a GraphFrame's edges have `src` and `dst`)."""
        self._graph(graph, vertices, edges, vertex_columns, edge_columns, +1)

    def delete_graph(self, graph: Any, vertices: str | None = None, edges: str | None = None,
                     vertex_columns: Mapping[str, str] | None = None,
                     edge_columns: Mapping[str, str] | None = None) -> None:
        """Buffer a graph's vertices and edges as deletions (as insert_graph)."""
        self._graph(graph, vertices, edges, vertex_columns, edge_columns, -1)

    def rollback(self) -> None:
        """Drop every update buffered since the last commit."""
        self.pending = Transaction()

    # -- epochs --------------------------------------------------------------------------

    def commit(self) -> dict[str, "DataFrame"]:
        """Run one epoch over the buffered updates; return the change of every output
        relation that changed, as a DataFrame of the caller's session with the declared
        columns and a `weight` column (+1: the row came, -1: it went). A failed commit raises
        a DDlogError and leaves the program as it was, the updates still buffered."""
        with self._engine_work():
            changes = self.db.commit(self.pending, progress=self.progress)
            self.pending = Transaction()
            return {name: self._yours(df) for name, df in changes.items()}

    # -- inside --------------------------------------------------------------------------

    def _add(self, relation: str, rows: Rows, columns: Mapping[str, str] | None,
             sign: int, verb: str) -> None:
        if columns is not None:
            rows = self._mapped(relation, rows, columns)
        with self._engine_work():
            self.pending.add_frame(relation, sign, self.db.ingest(relation, rows, verb))

    def _mapped(self, relation: str, rows: Rows, columns: Mapping[str, str]) -> "DataFrame":
        """A DataFrame's columns renamed to the relation's by `columns` (relation column ->
        DataFrame column); the relation's other columns keep their names."""
        from pyspark.sql import DataFrame

        info = self.db.input_relation(relation)
        if not isinstance(rows, DataFrame):
            raise UpdateError(f"relation '{relation}': `columns` maps a DataFrame's columns; "
                              f"Python rows are given in column order or by name")
        names = list(info.column_names)
        unknown = [c for c in columns if c not in names]
        if unknown:
            raise UpdateError(f"relation '{relation}' has no column {', '.join(unknown)} "
                              f"(its columns: {', '.join(names)})")
        sources = [columns.get(n, n) for n in names]
        absent = [f"{src} (for {n})" for src, n in zip(sources, names) if src not in rows.columns]
        if absent:
            raise UpdateError(f"relation '{relation}': the DataFrame has no column "
                              f"{', '.join(absent)}; its columns: {', '.join(rows.columns)}")
        return rows.select(*[rows[src].alias(n) for src, n in zip(sources, names)])

    def _graph(self, graph: Any, vertices: str | None, edges: str | None,
               vertex_columns: Mapping[str, str] | None,
               edge_columns: Mapping[str, str] | None, sign: int) -> None:
        for attr in ("vertices", "edges"):
            if not hasattr(graph, attr):
                raise UpdateError(f"a graph has `vertices` and `edges` DataFrames; "
                                  f"{type(graph).__name__} has no `{attr}`")
        if vertices is not None and vertex_columns is None:
            info = self.db.input_relation(vertices)
            if info.arity == 1 and "id" not in info.column_names:
                vertex_columns = {info.column_names[0]: "id"}
        verb = "insert into" if sign > 0 else "delete from"
        # both checked before either is buffered: a bad graph buffers nothing
        staged = []
        if vertices is not None:
            staged.append((vertices, graph.vertices, vertex_columns))
        if edges is not None:
            staged.append((edges, graph.edges, edge_columns))
        frames = []
        with self._engine_work():
            for name, df, cols in staged:
                df = self._mapped(name, df, cols) if cols else df
                frames.append((name, self.db.ingest(name, df, verb)))
        for name, frame in frames:
            self.pending.add_frame(name, sign, frame)

    def _yours(self, df: "DataFrame") -> "DataFrame":
        """An engine frame as a DataFrame of the caller's session."""
        from ddlog.runtime.spark import adopt

        return adopt(self.db.session, df)

    @contextmanager
    def _engine_work(self) -> Iterator[None]:
        """Around the engine's Spark calls: the errors they raise are reported by ddlog
        (as DDlogErrors), not logged by PySpark as well; other threads' are untouched."""
        from ddlog.runtime.spark import quiet_errors

        with quiet_errors():
            yield
