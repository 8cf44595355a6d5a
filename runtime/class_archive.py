"""A class-data-sharing archive for the driver JVM, so that a `ddlog` command starts faster.

A Spark driver loads some 15,000 classes from the ~280 jars of the pyspark wheel before it
answers anything (a JVM looks every class up jar by jar, then parses and verifies it): a
third of a short command's time here (`ddlog query` on a small state: 15 s without the
archive, 10 s with it). The JVM can write the classes a run loaded into an archive when it
exits (`-XX:ArchiveClassesAtExit`) and map that archive at the next start
(`-XX:SharedArchiveFile`), skipping the lookups, parsing and verification.

- The archive is kept per JVM, Spark version and driver class path (they are in its file
  name), under `$DDLOG_CLASS_ARCHIVE_DIR`, else `$XDG_CACHE_HOME/ddlog`, else
  `~/.cache/ddlog`. `DDLOG_CLASS_ARCHIVE=off` turns it off.
- The first driver started without one writes it when it exits, to a file of its own; that
  file takes the archive's name only once the JVM has exited and another has mapped it and
  checked its checksums (a truncated archive crashes the JVM that maps it, so nothing
  unchecked ever has the name; the name holds the size, so a file cut short later is
  passed over).
- The JVM's own messages about the archive are off (they go to stdout, which is the
  command's output): an archive that does not fit (another class path) is just not used.
- Before a driver maps it, another JVM maps it and checks its checksums (0.2 s); an
  archive that fails is removed and the driver starts without (and writes a new one). A
  driver that then fails to start is not retried without it: the failure is the driver's
  own (a wrong setting, say), and the archive has just been checked.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass

from ddlog import environment
from ddlog.cache import cache_dir, writable_dir

# every message of the JVM's class-data-sharing (an archive that cannot be used, classes it
# skips when it writes one) is about performance only
QUIET = "-Xlog:cds*=off"


@dataclass(frozen=True)
class ClassArchive:
    """The archive of one JVM and driver class path: `directory/driver-KEY-SIZE.jsa` once
    written (its size in its name, so that a file cut short later is not mapped), and the
    JVM options that map it or write it."""

    directory: str
    key: str
    java: str

    def ready(self) -> str | None:
        """The written archive, if there is one whose size is still the one it was
        written with."""
        prefix = f"driver-{self.key}-"
        try:
            names = os.listdir(self.directory)
        except OSError:
            return None
        for name in names:
            size = name[len(prefix):-len(".jsa")]
            if name.startswith(prefix) and name.endswith(".jsa") and size.isdigit():
                path = os.path.join(self.directory, name)
                try:
                    if os.path.getsize(path) == int(size):
                        return path
                except OSError:
                    pass
        return None

    def usable(self) -> str | None:
        """The written archive, if a JVM maps it and its checksums hold: a damaged
        archive is removed (the next driver writes a new one), never given to a driver,
        which it could crash."""
        path = self.ready()
        if path is not None and not self._maps(path):
            _remove(path)
            return None
        return path

    def options(self, path: str | None) -> str:
        """The JVM options that map the archive at `path`, or (None) write one at exit."""
        if path is not None:
            return f"-XX:SharedArchiveFile={path} -Xshare:auto {QUIET}"
        self._remove_orphans()
        return f"-XX:ArchiveClassesAtExit={self._pending()} {QUIET}"

    def _remove_orphans(self) -> None:
        """Archives being written by processes that died before naming them."""
        prefix = f"driver-{self.key}."
        for name in os.listdir(self.directory):
            pid = name[len(prefix):-len(".part")]
            if name.startswith(prefix) and name.endswith(".part") and pid.isdigit() \
                    and not _alive(int(pid)):
                _remove(os.path.join(self.directory, name))

    def _pending(self) -> str:
        return os.path.join(self.directory, f"driver-{self.key}.{os.getpid()}.part")

    def finish_at_exit(self, proc) -> None:
        """When this process exits: let the driver JVM `proc` (the gateway's Popen) exit,
        which writes the archive; check that a JVM maps and verifies it; name it."""
        atexit.register(self._finish, proc)

    def _finish(self, proc) -> None:
        pending = self._pending()
        try:
            if proc.poll() is None:
                _stop_spark()
                if self.ready() is not None:  # another driver wrote one meanwhile
                    proc.kill()
                    proc.wait(timeout=60)
                    return
                proc.stdin.close()  # the gateway exits when its stdin closes
                proc.wait(timeout=300)
            if proc.returncode == 0 and os.path.isfile(pending) and self._maps(pending) \
                    and self.ready() is None:
                size = os.path.getsize(pending)
                os.replace(pending, os.path.join(self.directory,
                                                 f"driver-{self.key}-{size}.jsa"))
        except (OSError, subprocess.SubprocessError):
            pass  # without an archive, the next driver starts as it always did
        finally:
            _remove(pending)

    def _maps(self, path: str) -> bool:
        """A JVM maps the archive and checks its regions' checksums: a short or damaged
        file makes it fail."""
        try:
            return subprocess.run(
                [self.java, f"-XX:SharedArchiveFile={path}", "-XX:+VerifySharedSpaces",
                 QUIET, f"-XX:ErrorFile={os.devnull}", "-version"],
                capture_output=True, timeout=60).returncode == 0
        except (OSError, subprocess.SubprocessError):
            return False


def _stop_spark() -> None:
    """Stop the SparkContext before its JVM goes: PySpark's accumulator thread would print
    a traceback when the JVM's connection to it closes under it."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is not None:
        try:
            sc.stop()
        except Exception:  # stopping is best effort at exit
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def class_archive(settings: dict[str, str],
                  environ: dict[str, str] | None = None) -> ClassArchive | None:
    """The archive for a driver started with these Spark `settings`, or None when it is
    turned off, the JVM cannot be found or the cache directory cannot be written."""
    env = environ  # None: the process's
    off = ("off", "0", "false", "no")
    if environment.get(environment.CLASS_ARCHIVE, "on", env).lower() in off:
        return None
    java = _java(env)
    if java is None:
        return None
    given = settings.get("spark.driver.extraJavaOptions", "")
    if "SharedArchiveFile" in given or "ArchiveClassesAtExit" in given or "Xshare" in given:
        return None  # the user chose their own
    given_dir = environment.get(environment.CLASS_ARCHIVE_DIR, None, env)
    directory = writable_dir(given_dir) if given_dir else cache_dir(env)
    if directory is None:
        return None
    return ClassArchive(directory, _key(java, settings, env), java)


def _java(env) -> str | None:
    """The java that spark-submit runs: $JAVA_HOME/bin/java, else the one on the PATH."""
    home = environment.get(environment.JAVA_HOME, None, env)
    java = (os.path.join(home, "bin", "java") if home
            else shutil.which("java", path=environment.get(environment.PATH, None, env)))
    return os.path.realpath(java) if java and os.path.isfile(java) else None


def _key(java: str, settings: dict[str, str], env) -> str:
    """What the archive depends on: the JVM (its installation), Spark (the wheel's jars) and
    whatever else goes on the driver's class path."""
    import pyspark

    jars = os.path.join(os.path.dirname(os.path.realpath(pyspark.__file__)), "jars")
    parts = [java, _stamp(java), pyspark.__version__, jars, _stamp(jars),
             environment.get(environment.SPARK_HOME, "", env),
             environment.get(environment.SPARK_DIST_CLASSPATH, "", env),
             settings.get("spark.driver.extraClassPath", "")]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _stamp(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_size}:{int(st.st_mtime)}"

