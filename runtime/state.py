"""Durable state (DESIGN 6): a directory that holds everything needed to continue after the
process ends.

    DIR/
      manifest.json     the committed epoch: program hash, epoch number, the Parquet batches
                        of every trace, the bound sources and sinks. Replaced at each commit
                        by an atomic rename: whoever reads it sees one epoch or the next.
      program.dl        the text of the program the state belongs to
      data/<batch>/     one Parquet directory per trace batch, written before the manifest
                        that names it and never modified afterwards
      .writer.lock      flock'ed by the one process that may commit
      .readers.lock     flock'ed (shared) by readers; garbage is only removed without them

A commit writes its new batches beside the old ones and then replaces the manifest, so a crash
at any point leaves the previous manifest, and every file it names, intact. Files that no
manifest names (an unfinished commit's, or batches merged away by compaction) are garbage; the
writer removes them when no reader holds the readers' lock.

The traces are the engine's (`Engine.all_traces()`, named deterministically from the program
text) plus the output relations' value spines (ddlog/database.py); a state is re-opened by
compiling the stored program and re-attaching each trace's batches.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import time
import uuid
from dataclasses import asdict, dataclass, field

from ddlog.errors import DDlogError
from runtime.trace import Batch, Trace
from runtime.zset import Frame

FORMAT = 1
MANIFEST = "manifest.json"
PROGRAM = "program.dl"
DATA = "data"


class StateError(DDlogError):
    """A state directory that cannot be used: missing, busy, corrupt, or another program's."""


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

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Manifest":
        d = json.loads(text)
        if d.get("format") != FORMAT:
            raise ValueError(f"unknown state format {d.get('format')!r}")
        traces = {name: TraceEntry(t["schema"], list(t["iters"]),
                                   [BatchEntry(**b) for b in t["batches"]])
                  for name, t in d["traces"].items()}
        return cls(d["program_sha256"], d["program_file"], int(d["epoch"]), traces,
                   dict(d.get("inputs", {})), dict(d.get("outputs", {})),
                   float(d.get("committed_at", 0.0)), d["format"])


# ---------------------------------------------------------------------------------------------
# The directory


class StateDir:
    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        self._writer_fd: int | None = None
        self._reader_fd: int | None = None

    def file(self, *parts: str) -> str:
        return os.path.join(self.path, *parts)

    def exists(self) -> bool:
        return os.path.isfile(self.file(MANIFEST))

    def read_manifest(self) -> Manifest:
        try:
            with open(self.file(MANIFEST), encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            raise StateError(f"no state in {self.path}: create one with "
                             f"`ddlog run PROGRAM.dl --state {self.path}`") from None
        try:
            return Manifest.from_json(text)
        except (ValueError, KeyError, TypeError) as err:
            raise StateError(f"{self.file(MANIFEST)} is not a ddlog state manifest: {err}") \
                from None

    def read_program(self, manifest: Manifest) -> str:
        with open(self.file(PROGRAM), encoding="utf-8") as f:
            text = f.read()
        if program_hash(text) != manifest.program_sha256:
            raise StateError(f"{self.file(PROGRAM)} does not match the hash in its manifest: "
                             f"the state directory was modified by hand")
        return text

    def check_program(self, manifest: Manifest, text: str, file: str) -> None:
        """Refuse to open a state with another program than the one that built it."""
        if program_hash(text) != manifest.program_sha256:
            raise StateError(
                f"state {self.path} belongs to a different program (built from "
                f"{manifest.program_file}; its text is in {self.file(PROGRAM)}), not {file}: "
                f"use that program, or a new state directory")

    # -- locks -----------------------------------------------------------------------------

    def lock_writer(self) -> None:
        """Become the one process that may commit (released when the process ends)."""
        os.makedirs(self.path, exist_ok=True)
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
        if not os.path.isdir(self.path):
            raise StateError(f"no state in {self.path}: the directory does not exist")
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
        """A fresh relative path for one batch written during `epoch`."""
        return os.path.join(DATA, f"e{epoch:06d}-{uuid.uuid4().hex[:12]}")

    def write_program(self, text: str) -> None:
        self._atomic_write(PROGRAM, text)

    def write_manifest(self, manifest: Manifest) -> None:
        """The commit point: until the rename, readers (and a restart) see the old epoch."""
        manifest.committed_at = time.time()
        self._atomic_write(MANIFEST, manifest.to_json(), failpoint="before-manifest-rename")

    def _atomic_write(self, name: str, text: str, failpoint: str | None = None) -> None:
        os.makedirs(self.path, exist_ok=True)
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

    def collect_garbage(self, manifest: Manifest | None) -> int:
        """Remove batches no manifest names and leftover temporary files, unless a reader is
        looking (then the next commit tries again). Only the writer calls this."""
        fd = os.open(self.file(".readers.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return 0
            live = set()
            if manifest is not None:
                live = {os.path.normpath(b.path) for t in manifest.traces.values()
                        for b in t.batches}
            removed = 0
            data = self.file(DATA)
            for entry in os.listdir(data) if os.path.isdir(data) else []:
                rel = os.path.join(DATA, entry)
                if rel not in live:
                    shutil.rmtree(self.file(rel), ignore_errors=True)
                    removed += 1
            for entry in os.listdir(self.path):
                if ".tmp-" in entry and entry.startswith("."):
                    os.remove(self.file(entry))
            return removed
        finally:
            os.close(fd)


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
        return StoredFrame(self.spark.read.schema(df.schema).parquet(path), rows, None, rel)


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
                               [BatchEntry(b.path, b.lo, b.hi, b.rows) for b in t.batches])
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
        schema = T.StructType.fromJson(json.loads(entry.schema))
        t.batches = [Batch(spark.read.schema(schema).parquet(state.file(b.path)), b.lo, b.hi,
                           b.rows, b.path) for b in entry.batches]
        t.iters = set(entry.iters)
