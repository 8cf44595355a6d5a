"""A program with its engine and, optionally, its durable state: what every CLI command runs on.

    db = Database.for_program("programs/tc.dl", state_dir="st")   # the shell
    db = Database.create("programs/tc.dl", "st")                  # ddlog run
    db = Database.open("st")                                      # feed, refresh (writer)
    db = Database.open("st", writer=False)                        # query, sql (reader)

Nothing here starts Spark until it is needed: opening a state, checking its program and
validating updates are plain Python, so a command that fails on bad input fails in a fraction of
a second and leaves the state untouched. The engine (and the SparkSession) are created on the
first commit or read, and a durable state's traces are re-attached from its Parquet files then.

Durable commits (runtime/state.py): the engine folds the epoch into its traces through a
`Persister` (each new batch written as Parquet), the output relations' value spines get the
epoch's changes the same way, and the manifest is replaced last. If anything fails after the
engine started folding, the in-memory engine is dropped and re-read from the last manifest.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ddlog.syntax import ast
from ddlog.syntax import commands as C
from ddlog.types import RelationInfo
from ddlog.errors import DDlogError, EvaluationError, Span
from ddlog.plan import load_text
from ddlog.values.literals import row_of
from ddlog.syntax.source import read_text
from ddlog.values import sort_key
from runtime.state import Manifest, StateDir, StateError, program_hash

# ---------------------------------------------------------------------------------------------
# Options and errors


@dataclass
class SparkOptions:
    master: str | None = None
    conf: dict[str, str] = field(default_factory=dict)


class UpdateError(DDlogError):
    """An update the transaction cannot take: unknown relation, not an input, bad record."""


# ---------------------------------------------------------------------------------------------
# Transactions


class _Clear:
    """`clear R;`: every row committed so far goes; updates after it still apply."""


CLEAR = _Clear()


class Transaction:
    """The updates of one open transaction, per relation and in order. Updates of single rows
    are folded as they come (the last update of a row decides, as the engine's set semantics
    would), so a long stream of inserts becomes two DataFrames, not one per row."""

    def __init__(self) -> None:
        self.steps: dict[str, list[Any]] = {}

    def __bool__(self) -> bool:
        return bool(self.steps)

    def insert(self, relation: str, row: tuple) -> None:
        self._rows(relation)[row] = 1

    def delete(self, relation: str, row: tuple) -> None:
        self._rows(relation)[row] = -1

    def clear(self, relation: str) -> None:
        self.steps[relation] = [CLEAR]  # what came before in this transaction is moot

    def add_frame(self, relation: str, sign: int, df) -> None:
        """Rows given as a DataFrame with columns c0..cN (a source, a diff)."""
        self.steps.setdefault(relation, []).append((sign, df))

    def _rows(self, relation: str) -> dict[tuple, int]:
        steps = self.steps.setdefault(relation, [])
        if not steps or not isinstance(steps[-1], dict):
            steps.append({})
        return steps[-1]

    def updates(self, db: "Database") -> dict[str, list[tuple[int, Any]]]:
        """The engine's form: relation -> [(+1 | -1, DataFrame c0..cN), ...] in order."""
        out: dict[str, list[tuple[int, Any]]] = {}
        for rel, steps in self.steps.items():
            info = db.relations[rel]
            ups: list[tuple[int, Any]] = []
            for step in steps:
                if step is CLEAR:
                    ups.append((-1, db.value_frame(rel)))
                elif isinstance(step, dict):
                    for sign in (1, -1):
                        rows = [r for r, s in step.items() if s == sign]
                        if rows:
                            ups.append((sign, db.frame_of_rows(info, rows)))
                else:
                    ups.append(step)
            if ups:
                out[rel] = ups
        return out


# ---------------------------------------------------------------------------------------------
# The database


class Database:
    def __init__(self, text: str, file: str, state: StateDir | None = None,
                 manifest: Manifest | None = None, options: SparkOptions | None = None,
                 writer: bool = True):
        self.text, self.file = text, file
        self.compiled = load_text(text, file)
        self.program = self.compiled.program
        self.state = state
        self.manifest = manifest
        self.options = options or SparkOptions()
        self.writer = writer
        self.inputs: dict[str, str] = dict(manifest.inputs) if manifest else {}
        self.outputs: dict[str, str] = dict(manifest.outputs) if manifest else {}
        self._spark = None
        self._engine = None
        self.out_traces: dict = {}

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def for_program(cls, program_path: str, state_dir: str | None = None,
                    options: SparkOptions | None = None) -> "Database":
        """The shell: a program file, with a state directory that is created on the first
        commit or must hold a state of this very program. The program is checked before the
        directory is touched."""
        db = cls(read_text(program_path), program_path, options=options)
        if state_dir is not None:
            db._claim(StateDir(state_dir), existing=True)
        return db

    @classmethod
    def create(cls, program_path: str, state_dir: str,
               options: SparkOptions | None = None) -> "Database":
        """`ddlog run`: a new state (refused if the directory already holds one)."""
        db = cls(read_text(program_path), program_path, options=options)
        db._claim(StateDir(state_dir), existing=False)
        return db

    def _claim(self, state: StateDir, existing: bool) -> None:
        """Become the writer of `state` (a new or empty directory, or a state of this program
        when `existing` is allowed)."""
        state.lock_writer()
        try:
            manifest = None
            if state.exists():
                manifest = state.read_manifest()
                if not existing:
                    raise StateError(f"{state.path} already holds a state (epoch "
                                     f"{manifest.epoch}): change it with `ddlog feed` or "
                                     f"`ddlog refresh`, or remove the directory to start again")
                state.check_program(manifest, self.text, self.file)
                state.verify(manifest)
        except BaseException:
            state.abandon()
            state.release()
            raise
        self.state, self.manifest = state, manifest
        if manifest is not None:
            self.inputs, self.outputs = dict(manifest.inputs), dict(manifest.outputs)

    @classmethod
    def open(cls, state_dir: str, options: SparkOptions | None = None,
             writer: bool = True) -> "Database":
        """An existing state, with the program stored in it."""
        state = StateDir(state_dir)
        if writer:
            if not state.exists():
                state.read_manifest()  # raises the "no state" (or "not a directory") error
            state.lock_writer()
        else:
            state.lock_reader()
        try:
            manifest = state.read_manifest()
            text = state.read_program(manifest)
            state.verify(manifest)
            return cls(text, manifest.program_file, state, manifest, options, writer)
        except BaseException:
            state.release()
            raise

    def close(self, failed: bool = False) -> None:
        """Release the state. `failed`: the command is ending with an error, so a state
        directory it created and never committed to is removed again."""
        if self.state is not None:
            if failed:
                self.state.abandon()
            self.state.release()

    # -- relations ---------------------------------------------------------------------------

    @property
    def relations(self) -> dict[str, RelationInfo]:
        return self.program.relations

    @property
    def output_names(self) -> list[str]:
        return sorted(r.name for r in self.program.outputs())

    @property
    def input_names(self) -> list[str]:
        return sorted(r.name for r in self.program.inputs())

    def relation(self, name: str, span: Span | None = None, source: str | None = None
                 ) -> RelationInfo:
        info = self.relations.get(name)
        if info is None:
            known = ", ".join(sorted(self.relations)) or "none"
            raise UpdateError(f"unknown relation '{name}' (the program's relations: {known})",
                              span, source)
        return info

    def input_relation(self, name: str, span: Span | None = None, source: str | None = None,
                       verb: str = "update") -> RelationInfo:
        info = self.relation(name, span, source)
        if info.role != "input":
            raise UpdateError(f"cannot {verb} relation '{name}': it is an {info.role} relation, "
                              f"only input relations take updates", span, source)
        return info

    def row(self, atom: ast.Atom, verb: str, file: str, source: str | None) -> tuple:
        """The row an `insert`/`delete` record denotes, checked against the relation."""
        info = self.input_relation(atom.relation, atom.span, source, verb)
        return row_of(atom, info, file, source)

    def apply(self, txn: Transaction, cmd: C.Command, file: str, source: str | None) -> None:
        """Add an `insert`, `delete` or `clear` command to a transaction (validated)."""
        if isinstance(cmd, C.Update):
            row = self.row(cmd.atom, cmd.kind, file, source)
            (txn.insert if cmd.kind == "insert" else txn.delete)(cmd.atom.relation, row)
        elif isinstance(cmd, C.Clear):
            self.input_relation(cmd.relation, cmd.span, source, "clear")
            txn.clear(cmd.relation)
        else:  # pragma: no cover - callers dispatch
            raise TypeError(cmd)

    # -- Spark and the engine ------------------------------------------------------------------

    def needs_catalog(self) -> bool:
        """Whether a bound source or sink is a catalog table: then the session gets the Hive
        catalog (a Derby metastore beside the warehouse), which keeps tables across processes."""
        return any(s.startswith("table:") for s in [*self.inputs.values(),
                                                    *self.outputs.values()])

    @property
    def spark(self):
        if self._spark is None:
            from runtime.spark import get_session

            conf = dict(self.options.conf)
            if self.needs_catalog():
                conf.setdefault("spark.sql.catalogImplementation", "hive")
            self._spark = get_session(self.options.master, conf)
            _quiet_query_context_logs()
        return self._spark

    @property
    def engine(self):
        if self._engine is None:
            from runtime.engine import Engine
            from runtime.schema import col_name
            from runtime.state import attach
            from runtime.trace import Trace

            engine = Engine(self.compiled, self.spark)
            self.out_traces = {r.name: Trace([col_name(k) for k in range(r.arity)])
                               for r in self.program.outputs()}
            if self.manifest is not None:
                attach(self._traces(engine), self.manifest, self.state, self.spark)
                engine.epoch = self.manifest.epoch
            self._engine = engine
        return self._engine

    def _traces(self, engine) -> dict:
        traces = engine.all_traces()
        traces.update({f"out_{name}": t for name, t in self.out_traces.items()})
        return traces

    @property
    def epoch(self) -> int:
        if self._engine is not None:
            return self._engine.epoch
        return self.manifest.epoch if self.manifest is not None else 0

    # -- reading -----------------------------------------------------------------------------

    def value_frame(self, name: str):
        """The committed value of a relation: columns c0..cN."""
        if self.writer or self._engine is not None:
            return self.engine.value(name)
        # A reader never builds the engine: it reads the one trace it needs (an output's value
        # spine, or the relation's own trace).
        from runtime.schema import WEIGHT, col_name
        from runtime.state import attach
        from runtime.trace import INF, Trace
        from runtime.zset import consolidate
        from pyspark.sql import functions as F

        info = self.relations[name]
        cols = [col_name(k) for k in range(info.arity)]
        key = f"out_{name}" if info.role == "output" else f"rel_{name}"
        t = Trace(cols)
        attach({key: t}, self.manifest, self.state, self.spark, strict=False)
        df = t.past(0, INF)
        if df is None:
            from runtime.schema import relation_schema

            return self.spark.createDataFrame([], relation_schema(info.column_types,
                                                                  weight=False))
        return consolidate(df.drop("_i"), cols).filter(F.col(WEIGHT) > 0).select(*cols)

    def named(self, name: str, df):
        """A frame with columns c0..cN under the relation's declared column names."""
        info = self.relations[name]
        return df.toDF(*info.column_names) if info.arity else df

    def rows(self, name: str, df=None, limit: int | None = None) -> list[tuple]:
        """The relation's rows as DDlog values, sorted as `dump` prints them."""
        from runtime.schema import from_spark

        info = self.relations[name]
        df = self.value_frame(name) if df is None else df
        if limit is not None:
            df = df.orderBy(*df.columns).limit(limit) if info.arity else df.limit(limit)
        out = [tuple(from_spark(r[k], t) for k, t in enumerate(info.column_types))
               for r in df.collect()]
        return sorted(out, key=sort_key)

    def change_rows(self, changes: dict) -> dict[str, list[tuple[tuple, int]]]:
        """Collected changes of output relations: name -> [(row, weight)] sorted by row; only
        relations that really changed."""
        from runtime.schema import WEIGHT, from_spark

        out = {}
        for name in sorted(changes):
            info = self.relations[name]
            rows = [(tuple(from_spark(r[k], t) for k, t in enumerate(info.column_types)),
                     int(r[WEIGHT])) for r in changes[name].collect()]
            rows = [(r, w) for r, w in rows if w != 0]
            if rows:
                out[name] = sorted(rows, key=lambda rw: (sort_key(rw[0]), rw[1]))
        return out

    def frame_of_rows(self, info: RelationInfo, rows: list[tuple]):
        from runtime.schema import relation_schema, to_spark

        data = [tuple(to_spark(v, t) for v, t in zip(row, info.column_types)) for row in rows]
        return self.spark.createDataFrame(data, relation_schema(info.column_types,
                                                                weight=False))

    # -- committing --------------------------------------------------------------------------

    def commit(self, txn: Transaction, progress=None) -> dict:
        """Run one epoch. Returns the change (lazy DataFrames, columns c0..cN and _w) of every
        output relation whose trace moved. In durable mode the epoch is on disk when this
        returns (sinks are rewritten afterwards: see write_sinks)."""
        from runtime.errors import describe, is_damage
        from runtime.state import Persister

        engine = self.engine
        try:
            updates = txn.updates(self)
            persist = None
            if self.state is not None:
                persist = Persister(self.state, self.spark, engine.epoch + 1)
            changes = engine.commit(updates, persist=persist, progress=progress)
            outs = {r: df for r, df in changes.items()
                    if r in self.relations and self.relations[r].role == "output"}
            if self.state is not None:
                self._store_epoch(outs, persist)
                if progress is not None:
                    progress(f"epoch {engine.epoch} committed to {self.state.path} "
                             f"({len(persist.written)} Parquet batches written)")
        except BaseException as err:
            if self.state is not None:
                self._engine = None  # re-read the last committed epoch when next needed
            what = describe(err)
            if what is None:
                raise
            if is_damage(err) and self.state is not None:
                raise StateError(f"state {self.state.path} is damaged ({what}); the "
                                 f"transaction was not committed") from None
            raise EvaluationError(f"the transaction failed and was rolled back: {what}") \
                from None
        return outs

    def _store_epoch(self, outs: dict, persist) -> None:
        from runtime.state import snapshot
        from runtime.physical import Frame

        for name, df in outs.items():
            self.out_traces[name].record(0, Frame(df, 1))
        for t in self.out_traces.values():
            t.end_epoch(persist)
        if self.manifest is None:
            self.state.write_program(self.text)
        manifest = Manifest(program_hash(self.text), self._program_file(), self._engine.epoch,
                            snapshot(self._traces(self._engine)), dict(self.inputs),
                            dict(self.outputs))
        self.state.write_manifest(manifest)
        self.manifest = manifest
        self.state.collect_garbage(manifest)

    def _program_file(self) -> str:
        if self.manifest is not None:
            return self.manifest.program_file
        return os.path.abspath(self.file)

    def write_sinks(self) -> list[str]:
        """Rewrite every bound sink from the committed values; returns the sinks written."""
        from runtime.io import parse_spec, write_sink

        done = []
        for name, text in sorted(self.outputs.items()):
            spec = parse_spec(text, sink=True)
            write_sink(spec, self.named(name, self.value_frame(name)), self.relations[name])
            done.append(f"{name} -> {spec}")
        return done


def _quiet_query_context_logs() -> None:
    """PySpark logs every analysis error it raises, with a JVM stack trace, as JSON on stderr;
    we report those errors ourselves, in one line."""
    import logging

    from pyspark.logger import PySparkLogger

    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL + 10)


# ---------------------------------------------------------------------------------------------
# .dat files as sources


def read_dat(db: Database, path: str) -> dict[str, set[tuple]]:
    """The input relations a DDlog command file leaves after replaying it: updates in order,
    transactions honoured (`rollback;` drops the open one), updates outside a transaction
    applied directly (a plain file of facts), `clear R;` empties R."""
    text = read_text(path)
    committed: dict[str, set[tuple]] = {}
    pending: dict[str, set[tuple]] | None = None
    for cmd in C.parse_commands(text, path):
        target = committed if pending is None else pending
        if isinstance(cmd, C.Start):
            if pending is not None:
                raise DDlogError("start: a transaction is already in progress", cmd.span, text)
            pending = {k: set(v) for k, v in committed.items()}
        elif isinstance(cmd, C.Commit):
            if pending is not None:
                committed, pending = pending, None
        elif isinstance(cmd, C.Rollback):
            pending = None
        elif isinstance(cmd, C.Update):
            row = db.row(cmd.atom, cmd.kind, path, text)
            rows = target.setdefault(cmd.atom.relation, set())
            (rows.add if cmd.kind == "insert" else rows.discard)(row)
        elif isinstance(cmd, C.Clear):
            db.input_relation(cmd.relation, cmd.span, text, "clear")
            target[cmd.relation] = set()
        elif isinstance(cmd, C.Exit):
            break
    if pending is not None:
        committed = pending  # a file that forgot its final `commit;`
    return committed
