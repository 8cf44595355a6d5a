"""Durable state: a directory that holds everything needed to continue after the
process ends.

    DIR/
      .ddlog-state      the mark of a state directory, written before anything else
      manifest.json     the committed epoch: program hash, epoch number, the batches of
                        every trace (with each file's size), the bound sources and sinks,
                        and a checksum of all that. Replaced at each commit by an atomic
                        rename: whoever reads it sees one epoch or the next.
      program.dl        the text of the program the state belongs to
      journal           every batch directory this state has written and not yet removed,
                        recorded before the directory is written
      data/<batch>/     one directory per trace batch, written before the manifest that
                        names it and never modified afterwards: Parquet files, or for a
                        batch of at most config.driver_rows rows one file of JSON lines
                        named part-<sha256 of its bytes>.json, which the driver writes and
                        reads without a Spark job
      checkpoints/      on a cluster, the RDD checkpoints (lineage cuts) of the process that
                        has the state open, removed when it closes it
      stream/           the Structured Streaming checkpoint of `ddlog stream` (Spark's own
                        offsets and commits; the manifest records the last batch committed)
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
catch a changed byte when Spark reads it, runtime/errors.py turns that into a message; a JSON
batch is checked against the checksum in its name when it is read, as the state is opened).

The traces are the engine's (`Engine.all_traces()`, named deterministically from the program
text) plus the output relations' value spines (ddlog/app/database.py); a state is re-opened by
compiling the stored program and re-attaching each trace's batches.

The design: docs/design.md, Durable state.
"""
from ddlog.runtime.state.layout import (CHECKPOINTS, DATA, JOURNAL, MANIFEST, MARK, PROGRAM, STREAM,
                                  StateDir, StateError, failpoint, program_hash)
from ddlog.runtime.state.manifest import FORMAT, BatchEntry, Manifest, TraceEntry
from ddlog.runtime.state.persist import Persister, StoredFrame, attach, snapshot

__all__ = ["CHECKPOINTS", "DATA", "FORMAT", "JOURNAL", "MANIFEST", "MARK", "PROGRAM", "STREAM",
           "BatchEntry", "Manifest", "Persister", "StateDir", "StateError", "StoredFrame",
           "TraceEntry", "attach", "failpoint", "program_hash", "snapshot"]
