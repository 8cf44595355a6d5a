"""The one façade over the engine: a compiled program, its engine and SparkSession, and
optionally its durable state and bound sinks. Every surface runs on it: the CLI commands and
the shell (through the factories below) and the Python API (ddlog/app/api.py, a thin layer).

    db = Database.for_program("programs/tc.dl", state_dir="st")   # the shell
    db = Database.create("programs/tc.dl", "st")                  # ddlog run
    db = Database.open("st")                                      # feed, refresh (writer)
    db = Database.open("st", writer=False)                        # query, sql (reader)
    db = Database(compiled, spark=session)                        # the Python API

`ddlog stream` commits through the same `commit` (one epoch per micro-batch, its batch id
stored with the epoch: `stream`), and `ddlog serve` keeps one Database open (`keep_open`) and
runs the feed/query/sql/shell commands of its clients on it.

Nothing here starts Spark until it is needed: opening a state, checking its program and
validating updates are plain Python, so a command that fails on bad input fails in a fraction of
a second and leaves the state untouched. The engine (and the SparkSession) are created on the
first commit or read, and a durable state's traces are re-attached from its batch files then.

Durable commits (runtime/state): the engine folds the epoch into its traces through a
`Persister` (each new batch written as Parquet, or as JSON lines when small), and the manifest
is replaced last. If anything fails after the engine started folding, the in-memory engine is
dropped and re-read from the last manifest.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from ddlog.app.keys import PrimaryKeys
from ddlog.app.transaction import Transaction
from ddlog.errors import EvaluationError, Span, UpdateError
from ddlog.plan import CompiledProgram, load_text
from ddlog.check.program import INSPECTED
from ddlog.syntax import ast
from ddlog.syntax import commands as C
from ddlog.syntax.source import read_text
from ddlog.types import RelationInfo, Update
from ddlog.values import dump_key
from ddlog.values.literals import row_of
from ddlog.runtime.config import DEFAULT, Config, with_knobs
from ddlog.runtime.state import Manifest, StateDir, StateError, program_hash

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["Database", "SparkOptions", "Transaction", "UpdateError"]


@dataclass
class SparkOptions:
    master: str | None = None
    conf: dict[str, str] = field(default_factory=dict)
    log_level: str | None = None  # Spark's log level (--verbose: warn); default off
    show_start: bool = False  # say on stderr that Spark is starting (a person is watching)
    short_lived: bool = False  # one short command: start the JVM for that (quick_jit)
    # the engine's knobs a command was given (`--conf ddlog.NAME=VALUE`: runtime/config.Config)
    knobs: dict[str, str] = field(default_factory=dict)
    remote: str | None = None  # a Spark Connect server (--remote sc://HOST:PORT)


def _short_lived(config: Config, manifest: Manifest | None) -> Config:
    """The engine's settings for a command that exits after an epoch or a few: it reads its
    stored batches from their files rather than arranging them in memory first
    (Config.arrange_stored). Over a large state its small actions then read many rows of
    those files to find a few keys, which compiled expressions do several times faster than
    interpreted ones, so they are compiled there (Config.interpret_small)."""
    config = replace(config, arrange_stored=False)
    large = manifest is not None and any(
        b.rows > config.arrange_rows for t in manifest.traces.values() for b in t.batches)
    return replace(config, interpret_small=False) if large else config


class Database:
    def __init__(self, compiled: CompiledProgram, state: StateDir | None = None,
                 manifest: Manifest | None = None, options: SparkOptions | None = None,
                 writer: bool = True, spark=None, config: Config = DEFAULT):
        self.compiled = compiled
        self.program = compiled.program
        self.text, self.file = self.program.source, self.program.file
        self.state = state
        self.manifest = manifest
        self.options = options or SparkOptions()
        self.writer = writer
        self.config = with_knobs(self.options.knobs, config) if self.options.knobs else config
        self.inputs: dict[str, str] = dict(manifest.inputs) if manifest else {}
        self.outputs: dict[str, str] = dict(manifest.outputs) if manifest else {}
        # `ddlog stream`'s sources and last committed micro-batch, stored with each epoch
        self.stream: dict = dict(manifest.stream) if manifest else {}
        # where imported modules were looked for after the program's directory (`-L`)
        self.libraries: list[str] = list(manifest.libraries) if manifest else []
        self._session = spark  # the caller's session (the API's), else made on first use
        self._spark = None  # the engine's own session of the same SparkContext
        self._engine = None
        self.keep_open = False  # `ddlog serve` owns it: the commands it runs do not close it
        self.keys = PrimaryKeys(self)  # what the input relations' primary keys mean

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def for_program(cls, program_path: str, state_dir: str | None = None,
                    options: SparkOptions | None = None,
                    libraries: tuple[str, ...] = (),
                    distinct_internal: bool = False) -> "Database":
        """The shell: a program file, with a state directory that is created on the first
        commit or must hold a state of this very program. The program is checked before the
        directory is touched. `libraries`: where its imports are looked for after its own
        directory. `distinct_internal`: every internal relation made distinct (DDlog's
        `--output-internal-relations`: ddlog/plan/compile.py)."""
        db = cls._of_file(program_path, options, libraries, distinct_internal)
        if state_dir is not None:
            db._claim(StateDir(state_dir), existing=True)
        return db

    @classmethod
    def create(cls, program_path: str, state_dir: str, options: SparkOptions | None = None,
               libraries: tuple[str, ...] = ()) -> "Database":
        """`ddlog run`: a new state (refused if the directory already holds one)."""
        db = cls._of_file(program_path, options, libraries)
        db._claim(StateDir(state_dir), existing=False)
        return db

    @classmethod
    def _of_file(cls, program_path: str, options: SparkOptions | None,
                 libraries: tuple[str, ...], distinct_internal: bool = False) -> "Database":
        roots = [os.path.abspath(d) for d in libraries]
        db = cls(load_text(read_text(program_path), program_path, tuple(roots),
                           distinct_internal), options=options)
        db.libraries = roots
        return db

    def _check_counted(self, state: StateDir, manifest: Manifest) -> None:
        """The state's traces hold the multiplicities of the relations this program counts,
        and sets elsewhere (a state written by a ddlog that made every relation distinct
        cannot be read by one that keeps some counted, nor the other way)."""
        stored, now = sorted(manifest.counted), sorted(self.compiled.counted)
        if stored == now:
            return
        how = ("was built with every internal relation distinct (by a shell with "
               "--output-internal-relations, or by an earlier ddlog)"
               if not stored else f"counts the internal relations {', '.join(stored)}")
        raise StateError(f"state {state.path} {how}, and the program run now counts "
                         f"{', '.join(now) or 'none'}: its stored values cannot be read so; "
                         f"run it as the state was built, or build a new state")

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
                state.check_program(manifest, self.text, self.file, self.module_hashes())
                self._check_counted(state, manifest)
                state.verify(manifest)
        except BaseException:
            state.abandon()
            state.release()
            raise
        self.state, self.manifest = state, manifest
        if manifest is not None:
            self.inputs, self.outputs = dict(manifest.inputs), dict(manifest.outputs)
            self.stream = dict(manifest.stream)

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
            # a state that counts no relation was built with every relation distinct (or
            # needs none counted): it is read so
            db = cls(load_text(text, manifest.program_file, tuple(manifest.libraries),
                               not manifest.counted), state, manifest, options, writer)
            state.check_modules(manifest, db.module_hashes())
            db._check_counted(state, manifest)
            return db
        except BaseException:
            state.release()
            raise

    def close(self, failed: bool = False) -> None:
        """Release the state. `failed`: the command is ending with an error, so a state
        directory it created and never committed to is removed again."""
        if self.state is not None and not self.keep_open:
            if self._spark is not None:
                from ddlog.runtime import backend

                self.state.drop_checkpoints(backend.of(self._spark).checkpoint_dir(self._spark))
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
    def internal_names(self) -> list[str]:
        return sorted(name for name, info in self.relations.items()
                      if info.role not in ("input", "output") and not name.startswith(INSPECTED))

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
            raise UpdateError(f"cannot {verb} relation '{name}': it is an {info.role} "
                              f"relation, not an input relation; only input relations take "
                              f"updates", span, source)
        return info

    # -- updates -----------------------------------------------------------------------------

    def row(self, atom: ast.Atom, verb: str, file: str, source: str | None) -> tuple:
        """The row an `insert`/`delete` record denotes, checked against the relation."""
        info = self.input_relation(atom.relation, atom.span, source, verb)
        return row_of(atom, info, file, source)

    def apply(self, txn: Transaction, cmd: C.Command, file: str, source: str | None) -> None:
        """Add an `insert`, `delete` or `clear` command to a transaction (validated)."""
        if isinstance(cmd, C.Update):
            row = self.row(cmd.atom, cmd.kind, file, source)
            name = cmd.atom.relation
            if cmd.kind != "delete" and self.keys.keyed(cmd, source):
                keys = self.keys
                found = keys.keyed_rows(txn, self.relations[name], self.program.keys[name],
                                        keys.key_value(self.relations[name], row))
                for old in keys.replaced(found, cmd, source):
                    txn.delete(name, old)
            (txn.delete if cmd.kind == "delete" else txn.insert)(
                name, row, counted=self.relations[name].weighted)
        elif isinstance(cmd, C.Clear):
            self.input_relation(cmd.relation, cmd.span, source, "clear")
            txn.clear(cmd.relation)
        elif isinstance(cmd, (C.Modify, C.DeleteKey)):
            self.keys.by_key(txn, cmd, file, source)
        else:  # pragma: no cover - callers dispatch
            raise TypeError(cmd)

    def ingest(self, name: str, rows: Any, verb: str = "update") -> Update:
        """Rows given in Python (tuples, dicts) or a DataFrame, for input relation `name`,
        checked (runtime/io/ingest.py), as an update of the relation's frame (columns c0..cN,
        its sign still 0)."""
        from pyspark.sql import DataFrame

        from ddlog.runtime.io.ingest import frame
        from ddlog.runtime.spark import adopt

        info = self.input_relation(name, verb=verb)
        if isinstance(rows, DataFrame):
            rows = adopt(self.spark, rows)  # planned under the engine's settings
            return Update(0, frame(rows, info, "DataFrame", UpdateError, by_position=True))
        return self.rows_update(info, 0, rows)

    def rows_update(self, info: RelationInfo, sign: int, rows: Any) -> Update:
        """Rows given in Python, checked, as an update that keeps them: the engine then reads
        the stored relation by them instead of scanning it."""
        from ddlog.runtime.io.ingest import spark_frame, spark_rows

        data = spark_rows(info, rows, UpdateError)
        return Update(sign, spark_frame(self.spark, info, data, self.config), data)

    def rows_frame(self, info: RelationInfo, rows: list[tuple]) -> "DataFrame":
        """Rows already checked (records of the command language) as the relation's frame."""
        from ddlog.runtime.io.ingest import rows_frame

        return rows_frame(self.spark, info, rows, UpdateError, self.config)

    # -- Spark and the engine ------------------------------------------------------------------

    def needs_catalog(self) -> bool:
        """Whether a bound source or sink is a catalog table: then the session gets the Hive
        catalog (a Derby metastore beside the warehouse), which keeps tables across processes."""
        return any(s.startswith("table:") for s in [*self.inputs.values(),
                                                    *self.outputs.values()])

    @property
    def session(self):
        """The caller's SparkSession: the one given to the Python API, else the active one,
        else one made with ddlog's defaults (a command's). Left as it was found: the engine
        runs on a session of its own (`spark`)."""
        if self._session is None:  # a command's: its process is ddlog's
            from ddlog.runtime.spark import get_session, quiet_query_context_logs

            conf = dict(self.options.conf)
            if self.needs_catalog():
                conf.setdefault("spark.sql.catalogImplementation", "hive")
            if self.options.show_start:
                sys.stderr.write("ddlog: starting Spark ...\r")
                sys.stderr.flush()
            try:
                self._session = get_session(self.options.master, conf,
                                            level=self.options.log_level,
                                            quick_jit=self.options.short_lived,
                                            remote=self.options.remote)
            finally:
                if self.options.show_start:
                    sys.stderr.write("\r\033[K")  # the line goes once Spark is up
                    sys.stderr.flush()
            quiet_query_context_logs()
        return self._session

    @property
    def spark(self):
        """The engine's SparkSession: a new session of the caller's SparkContext, with the
        caller's SQL settings and the engine's own (runtime/spark.engine_session). The SQL
        settings the engine changes around its actions change there only."""
        if self._spark is None:
            from ddlog.runtime.spark import engine_session, wait_for_executors

            wait_for_executors(self.session, self.config.executor_wait)
            self._spark = engine_session(self.session)
            if self.state is not None:
                from ddlog.runtime.spark import reliable_checkpoints

                reliable_checkpoints(self._spark, self.state.checkpoint_dir())
        return self._spark

    @property
    def engine(self):
        if self._engine is None:
            from ddlog.runtime.engine import Engine
            from ddlog.runtime.state import attach

            config = self.config
            if self.options.short_lived:
                config = _short_lived(config, self.manifest)
            engine = Engine(self.compiled, self.spark, config,
                            keep_values=self.state is not None)
            if self.manifest is not None:
                attach(engine.all_traces(), self.manifest, self.state, self.spark)
                engine.epoch = self.manifest.epoch
                engine.remember_costs(self.manifest.costs)
            self._engine = engine
        return self._engine

    @property
    def last_commit(self):
        """runtime/stats.EpochStats of the last commit of this process, or None."""
        return self._engine.last_stats if self._engine is not None else None

    @property
    def epoch(self) -> int:
        if self._engine is not None:
            return self._engine.epoch
        return self.manifest.epoch if self.manifest is not None else 0

    # -- reading -----------------------------------------------------------------------------

    def value_frame(self, name: str) -> "DataFrame":
        """The committed value of a relation: columns c0..cN."""
        if self.writer or self._engine is not None:
            return self.engine.value(name)
        # A reader never builds the engine: it reads the one trace it needs (an output's value
        # spine, or the relation's own trace).
        from ddlog.runtime.engine import read_value

        return read_value(self.spark, self.relations[name], self.manifest, self.state,
                          self.config)

    def named(self, name: str, df: "DataFrame") -> "DataFrame":
        """A frame with columns c0..cN (and maybe a weight) under the declared names."""
        from ddlog.runtime.io.ingest import named

        return named(self.relations[name], df)

    def rows(self, name: str, df=None, limit: int | None = None) -> list[tuple]:
        """The relation's rows as DDlog values, sorted as `dump` prints them."""
        from ddlog.runtime.schema import from_spark

        info = self.relations[name]
        df = self.value_frame(name) if df is None else df
        if limit is not None:
            df = df.orderBy(*df.columns).limit(limit) if info.arity else df.limit(limit)
        out = [tuple(from_spark(r[k], t) for k, t in enumerate(info.column_types))
               for r in df.collect()]
        return sorted(out, key=lambda row: dump_key(row, info.column_types))

    def change_rows(self, changes: dict) -> dict[str, list[tuple[tuple, int]]]:
        """Collected changes (commit's result): name -> [(row, weight)] sorted by row; only
        relations that really changed."""
        from ddlog.runtime.schema import from_spark

        out = {}
        for name in sorted(changes):
            info = self.relations[name]
            rows = [(tuple(from_spark(r[k], t) for k, t in enumerate(info.column_types)),
                     int(r[info.arity])) for r in changes[name].collect()]
            rows = [(r, w) for r, w in rows if w != 0]
            if rows:
                out[name] = sorted(rows, key=lambda rw: (dump_key(rw[0], info.column_types),
                                                         rw[1]))
        return out

    # -- committing --------------------------------------------------------------------------

    def commit(self, txn: Transaction, progress=None,
               before_store: "Callable[[dict[str, DataFrame]], None] | None" = None,
               internal: bool = False) -> dict[str, "DataFrame"]:
        """Run one epoch. Returns the change of every output relation (and internal one, if
        `internal`) whose value moved, as a lazy DataFrame with the declared columns and
        `weight` (+1 / -1). In durable mode the
        epoch is on disk when this returns (sinks are rewritten afterwards: write_sinks). A
        failure leaves everything as it was before, and `txn` as it is. `before_store` is
        given the changes before the epoch is committed (a change feed written there is
        written again if the commit does not happen: it is replayed)."""
        from ddlog.runtime.errors import describe, is_damage, unreadable_file
        from ddlog.runtime.state import Persister

        engine = self.engine
        try:
            updates = txn.updates(self)
            if engine.epoch == 0:
                updates = self._with_facts(updates)
            persist = None
            if self.state is not None:
                persist = Persister(self.state, self.spark, engine.epoch + 1)
            # a counted relation shown changes as the set of its records does
            every = engine.commit(updates, persist=persist, progress=progress,
                                  as_sets=self.compiled.counted if internal else frozenset())
            shown = ("output", "internal") if internal else ("output",)
            changes = {r: self.named(r, df) for r, df in every.items()
                       if r in self.relations and self.relations[r].role in shown
                       and not r.startswith(INSPECTED)}
            if before_store is not None:
                before_store(changes)
            if self.state is not None:
                self._store_epoch()
                if progress is not None:
                    progress(f"epoch {engine.epoch} committed to {self.state.path} "
                             f"({len(persist.written)} batches written)")
        except BaseException as err:
            if self.state is not None:
                self._engine = None  # re-read the last committed epoch when next needed
            what = describe(err)
            if what is None:
                raise
            file = unreadable_file(err) if is_damage(err) else None
            if file is not None and self.state is not None and \
                    os.path.realpath(file).startswith(os.path.realpath(self.state.path)
                                                      + os.sep):
                # one of the state's own files: the state is damaged (a user's file that
                # cannot be read is the input's fault, said as such below)
                raise StateError(f"state {self.state.path} is damaged ({what}); the "
                                 f"transaction was not committed") from None
            raise EvaluationError(f"the transaction failed and was rolled back: {what}") \
                from None
        if self.program.inspections:
            from ddlog.app.inspect import run_inspections

            run_inspections(self, every, engine.epoch)
        return changes

    def _with_facts(self, updates: dict[str, list[Update]]) -> dict[str, list[Update]]:
        """The first epoch's updates: the facts of input relations first, then the user's."""
        out = dict(updates)
        for name, rows in self.compiled.program.input_facts.items():
            out[name] = [self.rows_update(self.relations[name], 1, rows), *out.get(name, [])]
        return out

    def _store_epoch(self) -> None:
        from ddlog.runtime.state import snapshot

        if self.manifest is None:
            self.state.write_program(self.text)
        manifest = Manifest(program_hash(self.text), self._program_file(), self._engine.epoch,
                            snapshot(self._engine.all_traces()), dict(self.inputs),
                            dict(self.outputs), stream=dict(self.stream),
                            modules=self.module_hashes(), libraries=list(self.libraries),
                            costs=self._engine.costs(), counted=sorted(self.compiled.counted))
        self.state.write_manifest(manifest)
        self.manifest = manifest
        self.state.collect_garbage(manifest)

    def module_hashes(self) -> dict[str, str]:
        """The user modules the program imports: file, relative to the program's directory
        -> sha256 of the text it was compiled from."""
        home = os.path.dirname(os.path.abspath(self.file))
        return {os.path.relpath(os.path.abspath(f), home): program_hash(text)
                for f, text in self.program.ast.sources.items()}

    def _program_file(self) -> str:
        if self.manifest is not None:
            return self.manifest.program_file
        return os.path.abspath(self.file)

    def write_sinks(self) -> list[str]:
        """Rewrite every bound sink from the committed values; returns the sinks written."""
        from ddlog.runtime.io import parse_spec, write_sink

        done = []
        for name, text in sorted(self.outputs.items()):
            spec = parse_spec(text, sink=True)
            write_sink(spec, self.named(name, self.value_frame(name)), self.relations[name])
            done.append(f"{name} -> {spec}")
        return done
