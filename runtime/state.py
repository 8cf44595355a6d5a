"""Durable state (DESIGN 6): a directory that holds everything needed to continue after the
process ends.

    DIR/
      .ddlog-state      the mark of a state directory, written before anything else
      manifest.json     the committed epoch: program hash, epoch number, the Parquet batches
                        of every trace (with each file's size), the bound sources and sinks,
                        and a checksum of all that. Replaced at each commit by an atomic
                        rename: whoever reads it sees one epoch or the next.
      program.dl        the text of the program the state belongs to
      journal           every batch directory this state has written and not yet removed,
                        recorded before the directory is written
      data/<batch>/     one Parquet directory per trace batch, written before the manifest
                        that names it and never modified afterwards
      .writer.lock      flock'ed by the one process that may commit
      .readers.lock     flock'ed (shared) by readers; garbage is only removed without them

A commit writes its new batches beside the old ones and then replaces the manifest, so a crash
at any point leaves the previous manifest, and every file it names, intact. Batches that the
journal records and the manifest does not name (an unfinished commit's, or batches merged away
by compaction) are garbage; the writer removes them after a commit, when no reader holds the
readers' lock. Nothing else is ever removed: a directory becomes a state only when it is new or
empty, and a file the journal does not record is not ours.

Damage is found, not read: opening a state checks the manifest's checksum and that every batch
file it names is there with its recorded size (Hadoop's checksum files beside the Parquet files
catch a changed byte when Spark reads it; runtime/errors.py turns that into a message).

The traces are the engine's (`Engine.all_traces()`, named deterministically from the program
text) plus the output relations' value spines (ddlog/database.py); a state is re-opened by
compiling the stored program and re-attaching each trace's batches.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import time
import uuid
from dataclasses import asdict, dataclass, field

from ddlog.errors import DDlogError
from runtime.trace import Batch, Trace
from runtime.zset import Frame

FORMAT = 2
MARK = ".ddlog-state"
MANIFEST = "manifest.json"
PROGRAM = "program.dl"
JOURNAL = "journal"
DATA = "data"
LOCKS = (".writer.lock", ".readers.lock")
# what new_batch_path makes; the only paths garbage collection may remove
_BATCH = re.compile(r"data/e[0-9]{6}-[0-9a-f]{12}")
# what _atomic_write leaves behind when a process dies between writing and renaming
_TEMP = re.compile(r"\.(manifest\.json|program\.dl|journal)\.tmp-[0-9]+")


class StateError(DDlogError):
    """A state directory that cannot be used: missing, busy, damaged, or another program's."""


def program_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------
# The manifest


@dataclass
class BatchEntry:
    path: str  # relative to the state directory
    lo: int
    hi: int
    rows: int
    files: dict[str, int] = field(default_factory=dict)  # file name -> size in bytes


@dataclass
class TraceEntry:
    schema: str  # the batches' Spark schema, as JSON (read back without touching the files)
    iters: list[int]
    batches: list[BatchEntry]


@dataclass
class Manifest:
    program_sha256: str
    program_file: str  # where the program was read from when the state was created
    epoch: int
    traces: dict[str, TraceEntry] = field(default_factory=dict)
    # relation -> SOURCE / SINK spec (runtime/io.py); "*" binds a .dat file to every input
    inputs: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    committed_at: float = 0.0
    format: int = FORMAT

    def body(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        body = self.body()
        return json.dumps({**body, "checksum": _checksum(body)}, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Manifest":
        """Raises ValueError naming what is wrong: not JSON, another format, a checksum that
        does not match (the file was edited or damaged), a field of the wrong shape."""
        d = json.loads(text)
        if not isinstance(d, dict):
            raise ValueError("not a JSON object")
        if d.get("format") != FORMAT:
            raise ValueError(f"unknown state format {d.get('format')!r} (this ddlog reads "
                             f"format {FORMAT})")
        checksum = d.pop("checksum", None)
        if checksum != _checksum(d):
            raise ValueError("its checksum does not match its contents (it was edited or "
                             "damaged)")
        m = _Reader(d)
        traces = {}
        for name, t in m.dict("traces").items():
            where = f"traces.{name}"
            t = _Reader(t, where)
            batches = []
            for k, b in enumerate(t.list("batches")):
                b = _Reader(b, f"{where}.batches[{k}]")
                path = b.str("path")
                if not _BATCH.fullmatch(path):
                    raise ValueError(f"{b.where}.path: {path!r} is not a batch of this state")
                files = {f: _Reader.check_int(n, f"{b.where}.files.{f}")
                         for f, n in b.dict("files").items()}
                batches.append(BatchEntry(path, b.int("lo"), b.int("hi"), b.int("rows"), files))
            traces[name] = TraceEntry(t.str("schema"), [_Reader.check_int(i, f"{where}.iters")
                                                        for i in t.list("iters")], batches)
        inputs = {k: _Reader.check_str(v, f"inputs.{k}") for k, v in m.dict("inputs").items()}
        outputs = {k: _Reader.check_str(v, f"outputs.{k}") for k, v in m.dict("outputs").items()}
        committed = d.get("committed_at", 0.0)
        if not isinstance(committed, (int, float)):
            raise ValueError("committed_at: not a number")
        return cls(m.str("program_sha256"), m.str("program_file"), m.int("epoch"), traces,
                   inputs, outputs, float(committed), FORMAT)


def _checksum(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"))
                          .encode("utf-8")).hexdigest()


class _Reader:
    """Typed access to one JSON object of the manifest, with errors that name the field."""

    def __init__(self, d, where: str = ""):
        if not isinstance(d, dict):
            raise ValueError(f"{where or 'the manifest'}: not a JSON object")
        self.d, self.where = d, where

    def _get(self, key: str):
        if key not in self.d:
            raise ValueError(f"{self._name(key)}: missing")
        return self.d[key]

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def str(self, key: str) -> str:
        return self.check_str(self._get(key), self._name(key))

    def int(self, key: str) -> int:
        return self.check_int(self._get(key), self._name(key))

    def list(self, key: str) -> list:
        v = self._get(key)
        if not isinstance(v, list):
            raise ValueError(f"{self._name(key)}: not a list")
        return v

    def dict(self, key: str) -> dict:
        v = self.d.get(key, {})
        if not isinstance(v, dict):
            raise ValueError(f"{self._name(key)}: not a JSON object")
        return v

    @staticmethod
    def check_str(v, name: str) -> str:
        if not isinstance(v, str):
            raise ValueError(f"{name}: not a string")
        return v

    @staticmethod
    def check_int(v, name: str) -> int:
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name}: not a non-negative integer")
        return v


# ---------------------------------------------------------------------------------------------
# The directory


class StateDir:
    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        self._writer_fd: int | None = None
        self._reader_fd: int | None = None
        self.created = False  # whether this process made the directory a state

    def file(self, *parts: str) -> str:
        return os.path.join(self.path, *parts)

    def exists(self) -> bool:
        """Whether a committed state is here."""
        return os.path.isfile(self.file(MANIFEST))

    def is_state(self) -> bool:
        """Whether the directory is a state, committed or still being created."""
        return os.path.isfile(self.file(MARK)) or self.exists()

    def _check_not_file(self) -> None:
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise StateError(f"--state {self.path}: this is a file, not a state directory")

    def claim(self) -> None:
        """Make sure the directory is one this process may write a state into: a state
        already, or new, or empty (then it is marked as a state). A directory of other files
        is refused: ddlog writes (and cleans up) only in directories it owns."""
        self._check_not_file()
        if self.is_state():
            return
        if os.path.isdir(self.path) and os.listdir(self.path):
            raise StateError(f"--state {self.path}: the directory is not empty and holds no "
                             f"ddlog state; give a new or empty directory (ddlog never writes "
                             f"among other files)")
        os.makedirs(self.path, exist_ok=True)
        self._atomic_write(MARK, f"ddlog state directory, format {FORMAT}\n")
        self.created = True

    def read_manifest(self) -> Manifest:
        self._check_not_file()
        try:
            with open(self.file(MANIFEST), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise StateError(f"no state in {self.path}: create one with "
                             f"`ddlog run PROGRAM.dl --state {self.path}`") from None
        except OSError as err:
            raise StateError(f"cannot read {self.file(MANIFEST)}: {err.strerror}") from None
        try:
            return Manifest.from_json(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            raise StateError(f"{self.file(MANIFEST)} is damaged: {err}; the state cannot be "
                             f"used as it is (restore the directory from a copy)") from None

    def read_program(self, manifest: Manifest) -> str:
        try:
            with open(self.file(PROGRAM), "rb") as f:
                data = f.read()
        except OSError as err:
            raise StateError(f"cannot read {self.file(PROGRAM)}: {err.strerror}") from None
        if hashlib.sha256(data).hexdigest() != manifest.program_sha256:
            raise StateError(f"{self.file(PROGRAM)} does not match the hash in its manifest: "
                             f"the state directory was modified by hand or damaged")
        return data.decode("utf-8")

    def check_program(self, manifest: Manifest, text: str, file: str) -> None:
        """Refuse to open a state with another program than the one that built it."""
        if program_hash(text) != manifest.program_sha256:
            raise StateError(
                f"state {self.path} belongs to a different program (built from "
                f"{manifest.program_file}; its text is in {self.file(PROGRAM)}), not {file}: "
                f"use that program, or a new state directory")

    def verify(self, manifest: Manifest) -> None:
        """Every batch file the manifest names is there with its recorded size, and no other
        file is in a batch directory (Spark would read it). Reading the bytes is left to Spark,
        whose checksum files catch a changed byte."""
        for name, t in manifest.traces.items():
            for b in t.batches:
                where = self.file(b.path)
                try:
                    found = {e.name: e.stat().st_size for e in os.scandir(where)}
                except OSError as err:
                    raise StateError(f"state {self.path} is damaged: batch {b.path} of trace "
                                     f"{name} cannot be read ({err.strerror})") from None
                if found != b.files:
                    missing = sorted(set(b.files) - set(found))
                    extra = sorted(set(found) - set(b.files))
                    resized = sorted(f for f in set(found) & set(b.files)
                                     if found[f] != b.files[f])
                    what = "; ".join(part for part in (
                        f"missing {', '.join(missing)}" if missing else "",
                        f"not ours {', '.join(extra)}" if extra else "",
                        f"changed size {', '.join(resized)}" if resized else "") if part)
                    raise StateError(f"state {self.path} is damaged: batch {b.path} of trace "
                                     f"{name}: {what}")

    # -- locks -----------------------------------------------------------------------------

    def lock_writer(self) -> None:
        """Become the one process that may commit (released when the process ends). Claims
        the directory first."""
        self.claim()
        fd = os.open(self.file(".writer.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StateError(f"state {self.path} is in use by another ddlog process") from None
        self._writer_fd = fd

    def lock_reader(self) -> None:
        """Keep the writer from deleting files this process may still read. Taken before the
        manifest is read, so the files it names stay."""
        self._check_not_file()
        if not os.path.isdir(self.path):
            raise StateError(f"no state in {self.path}: the directory does not exist")
        if not self.exists():
            self.read_manifest()  # raises the "no state" error
        fd = os.open(self.file(".readers.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_SH)
        self._reader_fd = fd

    def release(self) -> None:
        for attr in ("_writer_fd", "_reader_fd"):
            fd = getattr(self, attr)
            if fd is not None:
                os.close(fd)  # closing drops the flock
                setattr(self, attr, None)

    # -- writing ---------------------------------------------------------------------------

    def new_batch_path(self, epoch: int) -> str:
        """A fresh relative path for one batch written during `epoch`, recorded in the journal
        before anything is written there (so that garbage collection knows it is ours)."""
        rel = f"{DATA}/e{epoch:06d}-{uuid.uuid4().hex[:12]}"
        with open(self.file(JOURNAL), "a", encoding="utf-8") as f:
            f.write(rel + "\n")
            f.flush()
            os.fsync(f.fileno())
        return rel

    def journal(self) -> list[str]:
        """The batch paths the journal records (lines that are not batch paths are ignored:
        a damaged journal can only make garbage stay, never make a file go)."""
        try:
            with open(self.file(JOURNAL), "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except FileNotFoundError:
            return []
        return [line for line in lines if _BATCH.fullmatch(line)]

    def write_program(self, text: str) -> None:
        self._atomic_write(PROGRAM, text)

    def write_manifest(self, manifest: Manifest) -> None:
        """The commit point: until the rename, readers (and a restart) see the old epoch."""
        manifest.committed_at = time.time()
        self._atomic_write(MANIFEST, manifest.to_json(), failpoint="before-manifest-rename")

    def _atomic_write(self, name: str, text: str, failpoint: str | None = None) -> None:
        tmp = self.file(f".{name}.tmp-{os.getpid()}")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if failpoint is not None:
            _failpoint(failpoint)
        os.replace(tmp, self.file(name))
        dfd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(dfd)  # make the rename itself durable
        finally:
            os.close(dfd)

    def collect_garbage(self, manifest: Manifest) -> int:
        """Remove the batches the journal records and `manifest` (just committed) does not
        name, and this state's leftover temporary files, unless a reader is looking (then the
        next commit tries again). Only the writer calls this, after a commit."""
        fd = os.open(self.file(".readers.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return 0
            live = {b.path for t in manifest.traces.values() for b in t.batches}
            recorded = self.journal()
            removed, kept = 0, []
            for rel in dict.fromkeys(recorded):
                if rel in live:
                    kept.append(rel)
                    continue
                try:
                    if os.path.isdir(self.file(rel)):
                        shutil.rmtree(self.file(rel))
                        removed += 1
                except OSError:
                    kept.append(rel)  # try again next time
            if kept != recorded:
                self._atomic_write(JOURNAL, "".join(r + "\n" for r in kept))
            for entry in os.listdir(self.path):
                if _TEMP.fullmatch(entry):
                    os.remove(self.file(entry))
            return removed
        finally:
            os.close(fd)

    def abandon(self) -> None:
        """Undo `claim` when the directory was made a state by this process and nothing was
        committed to it: remove exactly the files this state wrote, then the directory if that
        leaves it empty."""
        if not self.created or self.exists():
            return
        for rel in self.journal():
            shutil.rmtree(self.file(rel), ignore_errors=True)
        for name in (JOURNAL, PROGRAM, MARK, *LOCKS):
            try:
                os.remove(self.file(name))
            except FileNotFoundError:
                pass
        for d in (self.file(DATA), self.path):
            try:
                os.rmdir(d)
            except OSError:
                pass  # not empty: someone else's files, left alone


def _failpoint(name: str) -> None:
    """Crash tests kill the process at a named point of a commit: DDLOG_FAILPOINT=name."""
    if os.environ.get("DDLOG_FAILPOINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


# ---------------------------------------------------------------------------------------------
# Traces <-> files


@dataclass
class StoredFrame(Frame):
    """A batch as written by `Persister`: read back from its Parquet files."""

    path: str = ""
    files: dict[str, int] = field(default_factory=dict)


class Persister:
    """The `persist` callback of `Engine.commit` / `Trace.end_epoch` in durable mode: writes a
    folded batch as Parquet under the state directory and returns it read back from there (so
    the batch's lineage is the file, not the epoch's computation)."""

    def __init__(self, state: StateDir, spark, epoch: int):
        self.state = state
        self.spark = spark
        self.epoch = epoch
        self.written: list[str] = []

    def __call__(self, df) -> Frame | None:
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        rel = self.state.new_batch_path(self.epoch)
        path = self.state.file(rel)
        # One job writes the batch and counts its rows (the count rides along as a metric).
        obs = Observation()
        df.observe(obs, F.count(F.lit(1)).alias("rows")).write.parquet(path)
        rows = int(obs.get["rows"])
        self.written.append(rel)
        if rows == 0:
            shutil.rmtree(path, ignore_errors=True)
            return None
        files = {e.name: e.stat().st_size for e in os.scandir(path)}
        return StoredFrame(self.spark.read.schema(df.schema).parquet(path), rows, None, rel,
                           files)


def snapshot(traces: dict[str, Trace]) -> dict[str, TraceEntry]:
    """The manifest entries of every non-empty trace. Every past batch must be stored."""
    out = {}
    for name, t in traces.items():
        if not t.batches:
            continue
        missing = [b for b in t.batches if b.path is None]
        if missing:
            raise RuntimeError(f"trace {name} has a batch that was not persisted")
        out[name] = TraceEntry(t.batches[0].df.schema.json(), sorted(t.iters),
                               [BatchEntry(b.path, b.lo, b.hi, b.rows, dict(b.files or {}))
                                for b in t.batches])
    return out


def attach(traces: dict[str, Trace], manifest: Manifest, state: StateDir, spark,
           strict: bool = True) -> None:
    """Give each trace the batches the manifest lists for it (read lazily from Parquet).
    `strict`: `traces` are all of the program's, so the manifest may name no others."""
    from pyspark.sql import types as T

    unknown = sorted(set(manifest.traces) - set(traces))
    if unknown and strict:
        raise StateError(f"state {state.path} does not match the program: it stores traces "
                         f"{', '.join(unknown)} that the program does not have")
    for name, t in traces.items():
        entry = manifest.traces.get(name)
        t.cur_batches = []
        if entry is None:
            t.batches, t.iters = [], set()
            continue
        try:
            schema = T.StructType.fromJson(json.loads(entry.schema))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise StateError(f"{state.file(MANIFEST)} is damaged: the schema of trace {name} "
                             f"is not a Spark schema") from None
        if t.columns and schema.names[:len(t.columns)] != t.columns:
            raise StateError(f"{state.file(MANIFEST)} is damaged: trace {name} has columns "
                             f"{', '.join(schema.names)}, not {', '.join(t.columns)}")
        t.batches = [Batch(spark.read.schema(schema).parquet(state.file(b.path)), b.lo, b.hi,
                           b.rows, b.path, dict(b.files)) for b in entry.batches]
        t.iters = set(entry.iters)
