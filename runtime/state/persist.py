"""Traces <-> files: writing an epoch's batches as Parquet, listing them in a manifest, and
giving a re-opened state's traces their batches back."""
from __future__ import annotations

import json
import os
import shutil
import threading
from dataclasses import dataclass, field

from runtime.state.layout import MANIFEST, StateDir, StateError
from runtime.state.manifest import BatchEntry, Manifest, TraceEntry
from runtime.trace import Batch, Trace
from runtime.physical import Frame

@dataclass
class StoredFrame(Frame):
    """A batch as written by `Persister`: read back from its Parquet files."""

    path: str = ""
    files: dict[str, int] = field(default_factory=dict)


class Persister:
    """The `persist` callback of `Engine.commit` / `Trace.end_epoch` in durable mode: writes a
    folded batch as Parquet under the state directory and returns it read back from there (so
    the batch's lineage is the file, not the epoch's computation). Traces call it from
    several threads at once (engine.end_epoch)."""

    def __init__(self, state: StateDir, spark, epoch: int):
        self.state = state
        self.spark = spark
        self.epoch = epoch
        self.written: list[str] = []
        self._journal = threading.Lock()  # the journal and `written`, one thread at a time

    def __call__(self, df) -> Frame | None:
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        with self._journal:
            rel = self.state.new_batch_path(self.epoch)
        path = self.state.file(rel)
        # One job writes the batch and counts its rows (the count rides along as a metric).
        obs = Observation()
        df.observe(obs, F.count(F.lit(1)).alias("rows")).write.parquet(path)
        rows = int(obs.get["rows"])
        with self._journal:
            self.written.append(rel)
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
        t.batches = [Batch(spark.read.schema(schema).parquet(state.file(b.path)), b.lo, b.hi,
                           b.rows, path=b.path, files=dict(b.files)) for b in entry.batches]
        t.iters = set(entry.iters)
