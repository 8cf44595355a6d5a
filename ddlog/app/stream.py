"""`ddlog stream`: the outer time as Spark Structured Streaming micro-batches.

One directory per input relation is watched by Spark's file source; each micro-batch (the
files that arrived since the last one) is one epoch, committed through `foreachBatch`:

    files of the batch --(runtime/io/changes: typed, checked, weights)--> one Transaction
        --> Database.commit --> change feeds (--changes), manifest (with the batch id), sinks

Exactly once. Spark records which files make up batch N in the checkpoint (inside the state
directory, `stream/`) before running it, and marks it done after `foreachBatch` returns; the
epoch's manifest records N in the same atomic rename that commits the epoch. So after a crash
at any point, Spark replays N with the same files, and either the manifest already has N (the
replay is skipped) or it does not (nothing of N was committed, and it is applied now). A change
feed is written into `DIR/epoch=E/` before the manifest: a replay rewrites the same directory.

The stream watches with Spark's `binaryFile` file source and selects only the file names (and
times: the files of a batch apply in the order they were written, then by name), so
the streaming query itself never parses a row: each file is read whole by the batch readers
that `run` uses for its sources, which match columns by name, type them by the declaration and
name the file in every error. A bad file fails its batch before anything is committed, and
the stream stops with that message.

On Spark Connect a `foreachBatch` function runs in a Python process of the server's, away from
the command's engine and state, so there the command watches the directories itself
(`Polled`): it lists them, fixes batch N's files in a log of its own in the state
(`stream/polled/N.json`) before applying them, and replays a logged batch the manifest does not
have, with the same files: the same exactly-once record as Spark's checkpoint gives. A state
remembers which of the two watched it (`db.stream["by"]`), and refuses the other.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ddlog.app.transaction import Transaction
from ddlog.errors import DDlogError
from ddlog.runtime.io import BindingError, Spec, parse_binding
from ddlog.runtime.state import STREAM, StateError, failpoint

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ddlog.app.database import Database

_EPOCH_DIR = re.compile(r"epoch=[0-9]+|_SUCCESS|\..*")
_FOREVER = "36500d"  # a file source's maxFileAge: no file is too old to apply
# beside Spark's streaming checkpoint: which files each batch applied (Applied)
_APPLIED = "ddlog-applied"
# the batches a command that lists the files itself has fixed (Polled), beside it
_POLLED = "polled"


@dataclass(frozen=True)
class Trigger:
    """`available-now` (every file present, then stop) or a processing-time interval."""

    available_now: bool
    interval: str = ""  # e.g. "5 seconds"

    @classmethod
    def parse(cls, text: str) -> "Trigger":
        if text == "available-now":
            return cls(True)
        m = re.fullmatch(r"([0-9]+)(ms|s|m|h)", text.strip())
        if not m or int(m.group(1)) == 0:
            raise DDlogError(f"--trigger {text}: expected available-now or an interval such as "
                             f"500ms, 5s, 1m")
        unit = {"ms": "milliseconds", "s": "seconds", "m": "minutes", "h": "hours"}[m.group(2)]
        return cls(False, f"{int(m.group(1))} {unit}")

    def seconds(self) -> float:
        """The interval in seconds (0 for available-now)."""
        if self.available_now:
            return 0.0
        count, unit = self.interval.split()
        return int(count) * {"milliseconds": 0.001, "seconds": 1, "minutes": 60,
                             "hours": 3600}[unit]


def parse_sources(db: "Database", texts: list[str]) -> dict[str, Spec]:
    """`--source R=FORMAT:DIR`: each an input relation, watched in a directory of change files."""
    from ddlog.runtime.io.changes import CHANGE_KINDS

    out: dict[str, Spec] = {}
    for text in texts:
        rel, spec = _binding(text, "--source")
        db.input_relation(rel, verb="stream into")
        if spec.kind not in CHANGE_KINDS:
            raise BindingError(f"--source {text}: change files are "
                               f"{', '.join(CHANGE_KINDS)} (FORMAT:DIR)")
        if os.path.exists(spec.target) and not os.path.isdir(spec.target):
            raise BindingError(f"--source {text}: {spec.target} is a file; give the directory "
                               f"the change files arrive in")
        if rel in out:
            raise BindingError(f"--source {text}: relation {rel} is bound twice")
        out[rel] = spec
    if not out:
        raise BindingError("ddlog stream needs at least one --source R=FORMAT:DIR")
    return out


def parse_change_feeds(db: "Database", texts: list[str]) -> dict[str, Spec]:
    """`--changes R=FORMAT:DIR`: an output relation whose changes are appended per epoch."""
    from ddlog.runtime.io import check_csv_columns, check_sink_path
    from ddlog.runtime.io.changes import CHANGE_KINDS

    out: dict[str, Spec] = {}
    for text in texts:
        rel, spec = _binding(text, "--changes")
        info = db.relation(rel)
        if info.role != "output":
            raise BindingError(f"--changes {text}: {rel} is an {info.role} relation; only an "
                               f"output relation's changes are fed")
        if spec.kind not in CHANGE_KINDS:
            raise BindingError(f"--changes {text}: a change feed is written as "
                               f"{', '.join(CHANGE_KINDS)} (FORMAT:DIR)")
        if spec.kind == "csv":
            check_csv_columns(info, spec)
        check_sink_path(spec, owned=_EPOCH_DIR, what="a change feed")
        if rel in out:
            raise BindingError(f"--changes {text}: relation {rel} is bound twice")
        out[rel] = spec
    return out


def _binding(text: str, flag: str) -> tuple[str, Spec]:
    try:
        rel, spec = parse_binding(text, sink=True)
    except BindingError:
        raise BindingError(f"bad {flag} '{text}': expected RELATION=FORMAT:DIR") from None
    return rel, spec


class Stream:
    """One streaming query over a state: its sources, change feeds and the stop protocol.

    Stopping (SIGINT/SIGTERM, or the end of `available-now`) never cuts a batch in two: the
    batch running finishes and is committed; a batch that would start after the request fails
    at once, before reading anything, and Spark replays it on the next start."""

    def __init__(self, db: "Database", sources: dict[str, Spec], feeds: dict[str, Spec],
                 report: Callable[[str], None] | None = None):
        self.db, self.sources, self.feeds, self.report = db, sources, feeds, report
        self.error: BaseException | None = None
        self.batches = 0
        self._lock = threading.Condition()
        self._busy = False
        self._stopping = False
        wanted = {rel: str(spec) for rel, spec in sources.items()}
        from ddlog.runtime import backend

        self.by = "client" if backend.is_connect(db.spark) else "spark"
        given = db.stream.get("sources")
        if given is not None and db.stream.get("by", "spark") != self.by:
            raise StateError(
                f"state {db.state.path} was streamed "
                + ("by Spark's file source (a classic session): stream it with one again"
                   if self.by == "client" else
                   "through Spark Connect, which lists the files itself: stream it through "
                   "Connect again (--remote)"))
        if given is not None and given != wanted:
            shown = ", ".join(f"{r}={s}" for r, s in sorted(given.items()))
            raise StateError(f"state {db.state.path} is streamed from {shown}; give the same "
                             f"--source bindings (a different set would re-read or skip "
                             f"files), or use a new state directory")
        log = "offsets" if self.by == "spark" else _POLLED
        if given is not None and not os.path.isdir(db.state.file(STREAM, log)):
            raise StateError(f"state {db.state.path} has committed stream batches up to "
                             f"{db.stream.get('batch')}, but its streaming checkpoint "
                             f"{db.state.file(STREAM)} is missing: without it files would be "
                             f"applied twice or skipped; restore it, or stream into a new state")
        self.wanted = wanted
        self.applied = Applied(db.state.file(STREAM, _APPLIED))

    # -- the query ---------------------------------------------------------------------------

    def start(self, trigger: Trigger):
        from pyspark.sql import functions as F

        from ddlog.runtime.io.specs import literal

        spark = self.db.spark
        frames = []
        for rel, spec in sorted(self.sources.items()):
            os.makedirs(spec.target, exist_ok=True)
            # maxFileAge: Spark's file source skips, in silence, a file dated more than a
            # week before the newest it has seen (one copied with its time kept, `cp -p`,
            # `rsync -t`, an archive's); every file that arrives is a change to apply
            frames.append(spark.readStream.format("binaryFile")
                          .schema("path string, modificationTime timestamp, length bigint, "
                                  "content binary")
                          .option("maxFileAge", _FOREVER)
                          .load(literal(spec.target))
                          .select(F.lit(rel).alias("relation"), "path",
                                  "modificationTime"))
        files = frames[0]
        for f in frames[1:]:
            files = files.unionByName(f)
        writer = (files.writeStream.foreachBatch(self._batch)
                  .option("checkpointLocation", self.db.state.file(STREAM))
                  .queryName("ddlog-stream"))
        writer = (writer.trigger(availableNow=True) if trigger.available_now
                  else writer.trigger(processingTime=trigger.interval))
        return writer.start()

    def run(self, trigger: Trigger) -> None:
        """Run until the files are done (`available-now`) or SIGINT/SIGTERM; raises the error
        that stopped the stream."""
        from pyspark.errors import StreamingQueryException

        if self.by == "client":
            return self._poll(trigger)
        query = self.start(trigger)
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        checked = time.monotonic()
        try:
            while query.isActive:
                if time.monotonic() - checked > _CHECK_EVERY and self.error is None:
                    checked = time.monotonic()
                    self._check_reused(query)
                if self._stopping:
                    with self._lock:
                        while self._busy:
                            self._lock.wait()
                    query.stop()
                    break
                try:
                    query.awaitTermination(0.5)
                except StreamingQueryException:
                    break
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
        if self.error is None:
            self._check_reused(None)
        if self.error is not None and not isinstance(self.error, _Stopped):
            raise self.error
        failed = query.exception()
        if failed is not None and self.error is None and not self._stopping:
            from ddlog.runtime.errors import describe

            raise DDlogError(f"the stream failed: {describe(failed) or failed}")

    def _check_reused(self, query) -> None:
        """Stop with an error if a watched directory holds a file under a name a batch
        applied, with other contents: Spark's file source never reads a name twice, so its
        rows would never be applied, in silence."""
        for rel, spec in sorted(self.sources.items()):
            reused = self.applied.reused(spec.target)
            if reused is not None:
                path, batch = reused
                with self._lock:
                    while self._busy:
                        self._lock.wait()
                    self.error = StreamError(
                        f"change file {path} has the name of a file that batch {batch} "
                        f"applied, but other contents: a name is read once; move the file "
                        f"in under a new name (the stream stopped; nothing of it is applied)")
                if query is not None:
                    query.stop()
                return

    def _on_signal(self, signum, frame) -> None:
        with self._lock:
            self._stopping = True

    # -- watched by this command (Spark Connect) ---------------------------------------------

    def _poll(self, trigger: Trigger) -> None:
        """Apply batches of the files that arrive, listed by this command, until the files are
        done (`available-now`) or SIGINT/SIGTERM; raises the error that stopped it."""
        polled = Polled(self.db.state.file(STREAM, _POLLED), self.sources)
        interval = trigger.seconds()
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            while not self._stopping:
                self._check_reused(None)
                if self.error is not None:
                    break
                batch = polled.next(self.db.stream.get("batch", -1))
                if batch is not None:
                    batch_id, files = batch
                    self._batch(files, batch_id)
                elif trigger.available_now:
                    break
                else:
                    deadline = time.monotonic() + interval
                    while not self._stopping and time.monotonic() < deadline:
                        time.sleep(min(0.25, interval))
        except _Stopped:
            pass
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
        if self.error is not None and not isinstance(self.error, _Stopped):
            raise self.error

    # -- one micro-batch ---------------------------------------------------------------------

    def _batch(self, files: "DataFrame | list[dict]", batch_id: int) -> None:
        with self._lock:
            if self._stopping:
                self.error = _Stopped()
                raise self.error  # not started: Spark replays it next time
            self._busy = True
        try:
            self._apply(files, batch_id)
        except BaseException as err:
            self.error = err
            raise
        finally:
            with self._lock:
                self._busy = False
                self._lock.notify_all()

    def _apply(self, files: "DataFrame | list[dict]", batch_id: int) -> None:
        from ddlog.runtime.io.changes import read_changes

        db = self.db
        if db.stream.get("batch", -1) >= batch_id:
            if self.report:
                self.report(f"batch {batch_id}: already committed (epoch {db.epoch}), skipped")
            return
        started = time.perf_counter()
        # in the order the files were written (then by name): a change feed's epochs, say
        found = sorted((r["modificationTime"], r["path"], r["relation"])
                       for r in (files if isinstance(files, list) else files.collect()))
        paths = [(rel, path) for _, path, rel in found]
        for gone in self.applied.plan(batch_id, [path for _, path in paths]):
            if self.report:
                self.report(f"batch {batch_id}: change file {gone} is gone (moved aside?): "
                            f"its rows are not applied")
        txn = Transaction()
        for rel, path in paths:
            inserts, deletes = read_changes(db.spark, self.sources[rel].kind, path,
                                            db.relations[rel], db.config)
            txn.add_frame(rel, 1, inserts)
            if deletes is not None:
                txn.add_frame(rel, -1, deletes)
        self.applied.record(batch_id, [path for _, path in paths])
        before = dict(db.stream)
        db.stream = {"sources": dict(self.wanted), "batch": batch_id}
        if self.by != "spark":
            db.stream["by"] = self.by
        try:
            changes = db.commit(txn, before_store=self._write_feeds)
        except BaseException:
            db.stream = before
            raise
        failpoint("stream-batch-committed")  # before Spark marks the batch done: a replay
        self.applied.done(batch_id)
        db.write_sinks()
        self.batches += 1
        if self.report:
            done = db.last_commit
            rows_in = done.rows_in if done else 0
            # the net change of the outputs (the engine counts the deltas it made)
            rows_out = sum(df.count() for df in changes.values())
            self.report(f"batch {batch_id} -> epoch {db.epoch}: {len(paths)} file"
                        f"{'s' if len(paths) != 1 else ''}, {rows_in} input rows changed, "
                        f"{rows_out} output rows changed, "
                        f"{time.perf_counter() - started:.2f}s")

    def _write_feeds(self, changes: dict[str, "DataFrame"]) -> None:
        """Each fed relation's changes of the epoch being committed, as DIR/epoch=E (the
        epoch becomes a column when the feed is read back): rewritten whole by a replay."""
        from ddlog.runtime.io import write_sink

        epoch = self.db.epoch  # the engine has moved on to the epoch being committed
        for rel, spec in sorted(self.feeds.items()):
            if rel in changes:
                write_sink(Spec(spec.kind, f"{spec.target}/epoch={epoch}"), changes[rel],
                           self.db.relations[rel])


class _Stopped(Exception):
    """A batch refused because a stop was requested."""


class StreamError(DDlogError):
    """A stream that cannot go on as the files stand."""


# how often a running stream looks for reused names (Stream._check_reused), in seconds
_CHECK_EVERY = 2.0


class Applied:
    """Which change files each batch applied, by path, with what identifies their contents
    (size, modification time, inode) when they were read: one JSON file per batch in
    `directory` (beside Spark's checkpoint, in the state), written before the batch commits
    (a replay writes it again)."""

    def __init__(self, directory: str):
        import json

        self.directory = directory
        self.files: dict[str, tuple[int, tuple]] = {}  # path -> (batch, identity)
        if os.path.isdir(directory):
            for name in sorted(os.listdir(directory)):
                if name.endswith(".json") and name[:-5].isdigit():
                    with open(os.path.join(directory, name), encoding="utf-8") as f:
                        for path, ident in json.load(f).items():
                            self.files[path] = (int(name[:-5]), tuple(ident))

    @staticmethod
    def identity(path: str) -> tuple | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns, st.st_ino)

    def plan(self, batch: int, paths: list[str]) -> list[str]:
        """Note the files batch `batch` is about to apply; those an earlier attempt of it
        read and this one does not (moved aside after it failed: their rows will never be
        applied), to be said."""
        import json

        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        planned = os.path.join(self.directory, f"{batch}.planned")
        now = [_local(p) for p in paths]
        try:
            with open(planned, encoding="utf-8") as f:
                before = json.load(f)
        except (OSError, ValueError):
            before = []
        tmp = planned + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(sorted(set(before) | set(now)), f)
        os.replace(tmp, planned)
        return sorted(set(before) - set(now))

    def record(self, batch: int, paths: list[str]) -> None:
        import json

        got = {}
        for path in paths:
            local = _local(path)
            ident = self.identity(local)
            if ident is not None:
                got[local] = list(ident)
                self.files[local] = (batch, ident)
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        tmp = os.path.join(self.directory, f".{batch}.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(got, f)
        os.replace(tmp, os.path.join(self.directory, f"{batch}.json"))

    def done(self, batch: int) -> None:
        """Batch `batch` is committed: what its attempts planned is moot."""
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(self.directory, f"{batch}.planned"))

    def reused(self, directory: str) -> tuple[str, int] | None:
        """A file in `directory` whose name a batch applied with other contents: (its path,
        that batch)."""
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return None
        for e in entries:
            known = self.files.get(e.path)
            if known is not None and e.is_file() and self.identity(e.path) != known[1]:
                return e.path, known[0]
        return None


class Polled:
    """The batches of a stream whose command lists the watched directories itself: batch N's
    files are fixed in `directory/N.json` (relation, path, modification time) before the batch
    is applied, so that a batch the manifest does not have is replayed with the same files,
    and a file is in one batch only. A file is a regular one directly in a watched directory
    whose name starts with neither `.` nor `_` (as Spark's file source skips them)."""

    def __init__(self, directory: str, sources: dict[str, Spec]):
        import json

        self.directory = directory
        self.sources = sources
        self.batches: dict[int, list[dict]] = {}
        if os.path.isdir(directory):
            for name in os.listdir(directory):
                if name.endswith(".json") and name[:-5].isdigit():
                    with open(os.path.join(directory, name), encoding="utf-8") as f:
                        self.batches[int(name[:-5])] = json.load(f)
        self.taken = {f["path"] for files in self.batches.values() for f in files}

    def next(self, committed: int) -> tuple[int, list[dict]] | None:
        """The next batch to apply after batch `committed`: a logged one not yet committed
        (a replay), else the files that arrived since, logged now; None when there are none."""
        import json

        waiting = sorted(n for n in self.batches if n > committed)
        if waiting:
            return waiting[0], self.batches[waiting[0]]
        files = []
        for rel, spec in sorted(self.sources.items()):
            try:
                entries = list(os.scandir(spec.target))
            except FileNotFoundError:
                continue
            for e in entries:
                if e.name[:1] in "._" or not e.is_file() or e.path in self.taken:
                    continue
                files.append({"relation": rel, "path": e.path,
                              "modificationTime": e.stat().st_mtime_ns})
        if not files:
            return None
        batch = max([committed, *self.batches]) + 1
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        tmp = os.path.join(self.directory, f".{batch}.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(files, f)
        os.replace(tmp, os.path.join(self.directory, f"{batch}.json"))
        self.batches[batch] = files
        self.taken.update(f["path"] for f in files)
        return batch, files


def _local(path: str) -> str:
    """A path Spark lists (`file:/x`, `file:///x`) as the local path it is."""
    return "/" + path[len("file:"):].lstrip("/") if path.startswith("file:") else path


def stderr_report(line: str) -> None:
    print(f"ddlog stream: {line}", file=sys.stderr, flush=True)
