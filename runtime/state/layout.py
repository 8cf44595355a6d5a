"""The state directory on disk: marking it, locks, writing files atomically, the journal of
what it wrote, and removing garbage (see runtime/state/__init__.py for the layout)."""
from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import signal
import time
import uuid

from ddlog import environment
from ddlog.errors import DDlogError
from ddlog.runtime.state.manifest import BATCH_PATH, FORMAT, Manifest

MARK = ".ddlog-state"
MANIFEST = "manifest.json"
PROGRAM = "program.dl"
JOURNAL = "journal"
DATA = "data"
STREAM = "stream"  # the Structured Streaming checkpoint of `ddlog stream`
CHECKPOINTS = "checkpoints"  # on a cluster, the RDD checkpoints of the running process
LOCKS = (".writer.lock", ".readers.lock")
# what _atomic_write leaves behind when a process dies between writing and renaming
_TEMP = re.compile(r"\.(manifest\.json|program\.dl|journal)\.tmp-[0-9]+")


class StateError(DDlogError):
    """A state directory that cannot be used: missing, busy, damaged, or another program's."""


def program_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class StateDir:
    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        self._writer_fd: int | None = None
        self._reader_fd: int | None = None
        self.created = False  # whether this process made the directory a state
        self.made = False  # ... and the directory itself (it did not exist before)

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
        self.made = not os.path.isdir(self.path)
        # owner-only: the relations' rows are the user's to share
        os.makedirs(self.path, mode=0o700, exist_ok=True)
        os.chmod(self.path, 0o700)
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

    def check_program(self, manifest: Manifest, text: str, file: str,
                      modules: dict[str, str]) -> None:
        """Refuse to open a state with another program than the one that built it: another
        text, or another text of a module it imports (`modules`: file -> sha256)."""
        if program_hash(text) != manifest.program_sha256:
            raise StateError(
                f"state {self.path} belongs to a different program (built from "
                f"{manifest.program_file}; its text is in {self.file(PROGRAM)}), not {file}: "
                f"use that program, or a new state directory")
        self.check_modules(manifest, modules)

    def check_modules(self, manifest: Manifest, modules: dict[str, str]) -> None:
        """The imported modules are those the state was built with, byte for byte."""
        if modules == manifest.modules:
            return
        changed = sorted(m for m in set(modules) | set(manifest.modules)
                         if modules.get(m) != manifest.modules.get(m))
        what = ", ".join(changed)
        raise StateError(
            f"state {self.path} was built with other contents of the module"
            f"{'' if len(changed) == 1 else 's'} {what} (beside "
            f"{manifest.program_file}): an edited module makes another program; restore "
            f"the module, or build a new state directory")

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
        fd = os.open(self.file(".writer.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StateError(f"state {self.path} is in use by another ddlog process") from None
        self._writer_fd = fd
        self.sweep_checkpoints()

    def lock_reader(self) -> None:
        """Keep the writer from deleting files this process may still read. Taken before the
        manifest is read, so the files it names stay."""
        self._check_not_file()
        if not os.path.isdir(self.path):
            raise StateError(f"no state in {self.path}: the directory does not exist")
        if not self.exists():
            self.read_manifest()  # raises the "no state" error
        fd = os.open(self.file(".readers.lock"), os.O_RDWR | os.O_CREAT, 0o600)
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
        return [line for line in lines if BATCH_PATH.fullmatch(line)]

    def write_program(self, text: str) -> None:
        self._atomic_write(PROGRAM, text)

    def write_manifest(self, manifest: Manifest) -> None:
        """The commit point: until the rename, readers (and a restart) see the old epoch."""
        manifest.committed_at = time.time()
        self._atomic_write(MANIFEST, manifest.to_json(), crash_at="before-manifest-rename")

    def _atomic_write(self, name: str, text: str, crash_at: str | None = None) -> None:
        tmp = self.file(f".{name}.tmp-{os.getpid()}")
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                  encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if crash_at is not None:
            failpoint(crash_at)
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
        fd = os.open(self.file(".readers.lock"), os.O_RDWR | os.O_CREAT, 0o600)
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

    def checkpoint_dir(self) -> str:
        """Where this process writes its RDD checkpoints on a cluster: a directory of its own
        under the state's checkpoints/, named by its pid (sweep_checkpoints removes those of
        processes that are gone)."""
        return self.file(CHECKPOINTS, f"p{os.getpid()}-{uuid.uuid4().hex[:8]}")

    def drop_checkpoints(self, directory: str | None) -> None:
        """Remove the RDD checkpoints this process wrote under this state (Spark makes one
        subdirectory per SparkContext in the checkpoint directory it is given), when it ends:
        they are only lineage cuts, never read again."""
        if not directory:
            return
        path = directory[len("file:"):] if directory.startswith("file:") else directory
        mine = os.path.dirname(os.path.abspath(path))
        if os.path.dirname(mine) == self.file(CHECKPOINTS) and \
                os.path.basename(mine).startswith(f"p{os.getpid()}-"):
            shutil.rmtree(mine, ignore_errors=True)

    def sweep_checkpoints(self) -> None:
        """Remove the checkpoint directories of processes that are gone (killed before they
        removed their own): the writer does, when it takes the state."""
        root = self.file(CHECKPOINTS)
        try:
            entries = os.listdir(root)
        except OSError:
            return
        for name in entries:
            m = re.fullmatch(r"p([0-9]+)-[0-9a-f]+", name)
            if m is None or _alive(int(m[1])):
                continue
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)

    def abandon(self) -> None:
        """Undo `claim` when the directory was made a state by this process and nothing was
        committed to it: remove exactly the files this state wrote, then the directory if this
        process made it and that leaves it empty (an empty directory the user gave stays)."""
        if not self.created or self.exists():
            return
        for rel in [*self.journal(), STREAM, CHECKPOINTS]:
            shutil.rmtree(self.file(rel), ignore_errors=True)
        for name in (JOURNAL, PROGRAM, MARK, *LOCKS):
            try:
                os.remove(self.file(name))
            except FileNotFoundError:
                pass
        for d in (self.file(DATA), *([self.path] if self.made else [])):
            try:
                os.rmdir(d)
            except OSError:
                pass  # not empty: someone else's files, left alone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def failpoint(name: str) -> None:
    """Crash tests kill the process at a named point of a commit: DDLOG_FAILPOINT=name."""
    if environment.get(environment.FAILPOINT) == name:
        os.kill(os.getpid(), signal.SIGKILL)


