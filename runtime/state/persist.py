"""Traces <-> files: writing an epoch's batches (Parquet, or JSON lines when small),
listing them in a manifest, and giving a re-opened state's traces their batches back."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ddlog.runtime.state.layout import MANIFEST, StateDir, StateError
from ddlog.runtime.state.manifest import BatchEntry, Manifest, TraceEntry
from ddlog.runtime.trace import Batch, Trace
from ddlog.runtime.physical import Frame, json_frame, json_lines, own_settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# A small batch is one file of JSON lines named by the SHA-256 of its bytes: Spark's checksum
# files guard a Parquet batch's bytes, this name guards these (the manifest's checksum guards
# the name).
INLINE = re.compile(r"part-([0-9a-f]{64})\.json")


@dataclass
class StoredFrame(Frame):
    """A batch as written by `Persister`: read back from its files."""

    path: str = ""
    files: dict[str, int] = field(default_factory=dict)


class Persister:
    """The `persist` callback of `Engine.commit` / `Trace.end_epoch` in durable mode: writes a
    folded batch under the state directory and returns it read back from there (so the
    batch's lineage is the file, not the epoch's computation). Traces call it from several
    threads at once (engine.end_epoch).

    A batch whose rows the driver holds (a materialised Frame with `values`: at most
    config.driver_rows) is written by the driver as one file of JSON lines, and read back
    as a local relation: no Spark job either way. A small epoch's batches are mostly such,
    and each Parquet write is a job of its own, much of it the Hadoop committer's file
    renames, and a later command's first read of Parquet starts its readers: on a cold JVM
    a one-row `ddlog feed` would spend most of its time writing one-row Parquet files.
    Larger batches,
    and plans, are written as Parquet."""

    def __init__(self, state: StateDir, spark, epoch: int):
        self.state = state
        self.spark = spark
        self.epoch = epoch
        self.written: list[str] = []
        self._journal = threading.Lock()  # the journal and `written`, one thread at a time

    def __call__(self, data: DataFrame | Frame) -> Frame | None:
        """Write a batch: a plan, or a materialised Frame (None or no rows: nothing)."""
        if isinstance(data, Frame):
            if data.values is not None:
                return self._write_json(data) if data.values else None
            data = data.df
        return self._write_parquet(data)

    def _new_batch(self) -> tuple[str, str]:
        with self._journal:
            rel = self.state.new_batch_path(self.epoch)
            self.written.append(rel)
        return rel, self.state.file(rel)

    def _write_json(self, fr: Frame) -> Frame:
        schema = fr.df.schema
        names = schema.names
        data = json_lines(schema, [tuple(row[n] for n in names) for row in fr.values]
                          ).encode("utf-8")
        name = f"part-{hashlib.sha256(data).hexdigest()}.json"
        rel, path = self._new_batch()
        os.makedirs(path)
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return StoredFrame(json_frame(self.spark, schema, data.decode("utf-8")),
                           len(fr.values), local=True, values=fr.values, path=rel,
                           files={name: len(data)})

    def _write_parquet(self, df: DataFrame) -> Frame | None:
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        rel, path = self._new_batch()
        # One job writes the batch and counts its rows (the count rides along as a metric).
        obs = Observation()
        with own_settings(self.spark):  # a merge's shuffle, as the session would plan it
            df.observe(obs, F.count(F.lit(1)).alias("rows")).write.parquet(path)
        rows = int(obs.get["rows"])
        if rows == 0:
            shutil.rmtree(path, ignore_errors=True)
            return None
        files = {e.name: e.stat().st_size for e in os.scandir(path)}
        return StoredFrame(self.spark.read.schema(df.schema).parquet(path), rows, path=rel,
                           files=files)


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
        t.batches = [Batch(_read(b, schema, name, state, spark), b.lo, b.hi, b.rows,
                           path=b.path, files=dict(b.files)) for b in entry.batches]
        t.iters = set(entry.iters)


def _read(b: BatchEntry, schema, trace: str, state: StateDir, spark) -> DataFrame:
    """A stored batch as a DataFrame: Parquet read lazily, JSON lines read now and checked
    against the checksum in their file's name."""
    inline = [m for m in map(INLINE.fullmatch, b.files) if m]
    if not inline:
        return spark.read.schema(schema).parquet(state.file(b.path))
    file = os.path.join(b.path, inline[0].group(0))
    try:
        with open(state.file(file), "rb") as f:
            data = f.read()
    except OSError as err:
        raise StateError(f"state {state.path} is damaged: batch {b.path} of trace {trace} "
                         f"cannot be read ({err.strerror})") from None
    if hashlib.sha256(data).hexdigest() != inline[0].group(1) or len(b.files) != 1:
        raise StateError(f"state {state.path} is damaged: batch {b.path} of trace {trace}: "
                         f"{file} does not match its checksum")
    return json_frame(spark, schema, data.decode("utf-8"))
