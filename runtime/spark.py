"""The SparkSession the engine runs on, with ddlog's local-mode defaults.

Every default can be overridden: settings already present in the user's SparkConf (from
`spark-defaults.conf`, `PYSPARK_SUBMIT_ARGS`, `--conf`) win over ours, and an existing session is
used as it is.
"""
from __future__ import annotations

import contextvars
import os
import re
import threading
import weakref
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from pyspark.sql import SparkSession

from ddlog import environment
from ddlog.errors import DDlogError

T = TypeVar("T")

DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.ansi.enabled": "true",
    "spark.sql.caseSensitive": "true",
    # A local machine has few cores; 200 shuffle partitions would be mostly empty tasks.
    "spark.sql.shuffle.partitions": str(max(2, 2 * (os.cpu_count() or 2))),
    "spark.default.parallelism": str(max(2, os.cpu_count() or 2)),
    "spark.driver.memory": "4g",
    "spark.sql.session.timeZone": "UTC",
    # reliable checkpoints (on a cluster) are removed once nothing refers to them
    "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
    # PySpark's DataFrame debugging records the Python call site of every DataFrame and
    # Column call on the JVM (three py4j round trips each); the engine builds thousands of
    # them per epoch, and reports its errors itself.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


# A JVM that runs for seconds spends much of them compiling: the optimising compiler (C2)
# takes a core of two while the command's own work waits for the other. Stopped at the quick
# compiler (C1), a short command such as a one-row `ddlog feed` or a `ddlog shell` script
# finishes markedly sooner. A long run, whose code gets hot, is faster with C2, whose code
# is much better once compiled. A short command's executors live as long as it does (on a
# cluster, they start with it), so they start with C1 too: their optimising compiler would
# take cores from its few tasks as well. Stopped at C1, the JVM reserves a fifth of the code
# cache it reserves for both compilers (48 MB); a long command can fill it (the JVM then
# prints "Try increasing the code cache size": its compiler stops when the cache is full),
# so it keeps the usual size.
QUICK_JIT = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"


def get_session(master: str | None = None, conf: dict[str, str] | None = None,
                app_name: str = "ddlog", level: str | None = None,
                quick_jit: bool = False, remote: str | None = None) -> SparkSession:
    """Return the active session, or create one with our defaults under the user's settings.
    `level`: Spark's log level (default: log_level()). `quick_jit`: the session is for one
    short command, and its JVMs (the driver's and the executors') compile with C1 only
    (QUICK_JIT; a JIT option the user gives comes later on the command line and wins).
    `remote` (else $SPARK_REMOTE, PySpark's own convention, unless `master` is given): a
    Spark Connect session of that server (connect_session)."""
    remote = remote or (None if master else environment.get(environment.SPARK_REMOTE))
    if remote:
        return connect_session(remote, conf or {})
    active = SparkSession.getActiveSession()
    if active is not None:
        for key, value in (conf or {}).items():
            try:
                active.conf.set(key, value)
            except Exception:  # static settings cannot change on a running session
                pass
        return active
    builder = SparkSession.builder.appName(app_name)
    builder = builder.master(master or environment.get(environment.SPARK_MASTER, "local[*]"))
    from pyspark import SparkConf

    user = SparkConf()  # picks up spark.* Java system properties / submit args
    settings = {k: v for k, v in DEFAULTS.items() if not user.contains(k)}
    settings.update(conf or {})
    level = (level or log_level()).lower()
    # Spark's own log lines stay off unless asked for, from the JVM's first line on: the
    # logging configuration must be known when the driver JVM starts.
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        given = settings.get(key) or (user.get(key) if user.contains(key) else "")
        settings[key] = java_options(given, level, quick_jit)
    for key, value in settings.items():
        builder = builder.config(key, value)
    _launch(builder, settings, level)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(level.upper())
    return spark


def connect_session(url: str, conf: dict[str, str]) -> SparkSession:
    """A session of the Spark Connect server at `url` (sc://HOST:PORT; PySpark also takes
    local[N], which starts a server in this process). `conf`: SQL settings for the session.
    Raises DDlogError when PySpark's Connect client cannot be imported."""
    try:
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies()
    except ImportError as err:
        raise DDlogError(f"--remote needs Spark Connect's client packages ({err}): "
                         f"pip install 'ddlog-spark[connect]'") from None
    builder = SparkSession.builder.remote(url)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


# The SQL settings the engine's meaning depends on: arithmetic and casts that fail instead of
# wrapping or giving null (the engine checks its values itself and relies on Spark to raise
# where a value does not fit), column names as declared (a relation may have columns `x` and
# `X`), and times read and printed in UTC (DDlog's time library has no zones). They are set on
# the engine's own session (engine_session), whatever the caller's session says.
ENGINE_SQL: dict[str, str] = {
    "spark.sql.ansi.enabled": "true",
    "spark.sql.caseSensitive": "true",
    "spark.sql.session.timeZone": "UTC",
}


def engine_session(spark: SparkSession) -> SparkSession:
    """The session the engine plans and runs on: a new session of `spark`'s SparkContext
    (`newSession()`: its own SQL settings and temporary views, the same executors, cache and
    catalog). The engine changes SQL settings around its actions (physical.spark_settings);
    made on a session of its own, those changes are never seen by another thread using the
    caller's session. It starts from the caller's session's settings (those set on it, then
    ddlog's defaults for what the caller left unset, e.g. the shuffle partitions of a local
    machine), then ENGINE_SQL.

    On Spark Connect the engine runs on the caller's session itself: a Connect server keeps a
    session's checkpoints for that session only, so results made on another could not be
    read on the caller's. ENGINE_SQL is set on it (the README says so)."""
    from ddlog.runtime import backend

    kind = backend.of(spark)
    if kind.NAME == "connect":
        child = spark
        settings = dict(ENGINE_SQL)
    else:
        child = spark.newSession()
        settings = {k: v for k, v in DEFAULTS.items()
                    if k.startswith("spark.sql.") and not kind.is_set(spark, k)}
        settings.update({k: v for k, v in spark.conf.getAll.items()
                         if k.startswith("spark.sql.")})
        settings.update(ENGINE_SQL)
    for key, value in settings.items():
        if child.conf.get(key, None) != value and child.conf.isModifiable(key):
            child.conf.set(key, value)
    return child


def adopt(spark: SparkSession, df):
    """`df` (a DataFrame of another session of the same SparkContext or server) as a
    DataFrame of `spark`: the same plan, planned and run under `spark`'s settings. A user's
    DataFrame enters the engine's session this way, and the engine's results go back to the
    user's (where the user registers views of them and runs queries)."""
    from ddlog.runtime import backend

    return backend.of(spark).adopt(spark, df)


def java_options(given: str, level: str, quick_jit: bool = False) -> str:
    """The JVM options of the driver or of the executors (the same for both): ours, then the
    user's (`given`), which win where they set the same (the JVM takes the last of a flag)."""
    ours = f"-Dlog4j2.configurationFile={LOG_CONFIG} -Dddlog.log.level={level}"
    if quick_jit:
        ours += f" {QUICK_JIT}"
    return f"{ours} {given}".strip()


class SettingsGate:
    """Who may change a session's SQL settings, and who waits: a session's settings are
    the session's, not a thread's, so a thread that sets some for its actions
    (physical.spark_settings: save, set, restore) holds the session alone (`exclusive`,
    reentrant within the thread), and actions that must run under the session's own
    settings (`shared`, any number of threads at once) wait for it to end. Without it,
    threads that set and restored the same settings at once (the traces' writes and merges
    at a durable epoch's end) could leave the session with one thread's settings (one
    shuffle partition, no adaptive execution), and plan another's actions under them.

    A thread that holds the gate shared must not ask for it exclusively (it would wait for
    itself): that raises instead of hanging."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._owner: int | None = None  # the thread that holds it exclusively
        self._depth = 0  # how many times it does (nested)
        self._shared: dict[int, int] = {}  # thread → how many times it holds it shared

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._cond:
            if me in self._shared:
                raise RuntimeError("a thread that runs actions under the session's own "
                                   "settings cannot change them")
            while self._owner not in (None, me) or self._shared:
                self._cond.wait()
            self._owner, self._depth = me, self._depth + 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if not self._depth:
                    self._owner = None
                    self._cond.notify_all()

    @contextmanager
    def shared(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:  # inside its own settings: they are the ones it asked for
                owned = True
            else:
                owned = False
                while self._owner is not None:
                    self._cond.wait()
                self._shared[me] = self._shared.get(me, 0) + 1
        try:
            yield
        finally:
            if not owned:
                with self._cond:
                    self._shared[me] -= 1
                    if not self._shared[me]:
                        del self._shared[me]
                    self._cond.notify_all()


# One gate per session, as long as the session lives (a session's settings are state of the
# session; these only say who may touch them).
_GATES: weakref.WeakKeyDictionary[SparkSession, SettingsGate] = weakref.WeakKeyDictionary()
_GATES_LOCK = threading.Lock()


def settings_gate(spark: SparkSession) -> SettingsGate:
    """The session's SettingsGate."""
    with _GATES_LOCK:
        gate = _GATES.get(spark)
        if gate is None:
            gate = _GATES[spark] = SettingsGate()
        return gate


def side_by_side(spark: SparkSession, calls: list[Callable[[], T]], threads: int) -> list[T]:
    """The results of `calls`, run on up to `threads` threads at once (one after another when
    `threads` is 1). Each thread starts with this thread's Spark local properties (its job
    group, so the jobs it starts are counted as this thread's) and its context (the epoch's
    recorder, runtime/stats). All calls finish before the first exception, if any, is
    raised. A call that sets SQL settings for its actions
    (physical.spark_settings) runs them while the others wait (settings_gate); one whose
    actions need the session's own settings asks for them (physical.own_settings)."""
    if threads <= 1 or len(calls) <= 1:
        return [call() for call in calls]
    from concurrent.futures import ThreadPoolExecutor

    from pyspark import inheritable_thread_target

    inherit = inheritable_thread_target(spark)  # copies the properties now, in this thread
    if threading.get_ident() in _ENGINE_THREADS.inside:  # the threads are quiet as this one
        calls = [_quietly(call) for call in calls]
    with ThreadPoolExecutor(min(threads, len(calls)), thread_name_prefix="ddlog") as pool:
        # each call in a copy of this thread's context: the epoch's recorder
        # (runtime/stats) sees the actions it starts
        futures = [pool.submit(contextvars.copy_context().run, inherit(call))
                   for call in calls]
    return [f.result() for f in futures]


def _quietly(call: Callable[[], T]) -> Callable[[], T]:
    def run() -> T:
        with quiet_errors():
            return call()
    return run


def is_local(spark: SparkSession) -> bool:
    from ddlog.runtime import backend

    return backend.of(spark).is_local(spark)


def wait_for_executors(spark: SparkSession, seconds: float) -> None:
    """On a cluster, wait until an executor has joined the application, at most `seconds`
    (0: do not wait): a master without workers accepts the application and runs nothing, and
    every job would wait for ever. Raises ExecutorsMissing after that."""
    from ddlog.runtime import backend

    kind = backend.of(spark)
    if kind.executors(spark) is None or is_local(spark) or seconds <= 0:
        return  # a Connect server's cluster is its own business
    import time

    deadline = time.monotonic() + seconds
    while kind.executors(spark) < 1:
        if time.monotonic() > deadline:
            master = spark.sparkContext.master
            raise ExecutorsMissing(
                f"no Spark executor joined within {seconds:g} s on {master}: is a worker "
                f"running, registered with that master, with the cores and memory asked for "
                f"(spark.executor.memory, spark.executor.cores)? (--conf "
                f"ddlog.executor_wait=SECONDS waits longer)")
        time.sleep(0.25)


class ExecutorsMissing(DDlogError):
    """A cluster that gave the application no executor in time."""


def reliable_checkpoints(spark: SparkSession, directory: str) -> None:
    """On a cluster, cut lineage with checkpoints written to `directory` (which every node
    must see), unless the user set one (spark.checkpoint.dir): an executor-local checkpoint
    vanishes with its executor, and the plans that read it would fail."""
    from ddlog.runtime import backend

    kind = backend.of(spark)
    if kind.NAME == "connect" or is_local(spark) or kind.checkpoint_dir(spark) is not None:
        return  # a Connect server keeps checkpoints where it is configured to
    spark.sparkContext.setCheckpointDir(directory)


LOG_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")


def log_level() -> str:
    """Spark's log level: DDLOG_SPARK_LOG_LEVEL (e.g. warn, info), else off."""
    return (environment.get(environment.SPARK_LOG_LEVEL) or "off").lower()


# What the JVM itself prints on stderr before any logging is set up (e.g. "WARNING: Using
# incubator modules: jdk.incubator.vector", which Spark's launcher always causes).
_JVM_NOISE = re.compile(rb"WARNING: ")


def _launch(builder, settings: dict[str, str], level: str) -> None:
    """Start the driver JVM, unless one runs: with the class archive that makes it start
    faster (runtime/class_archive.py), and, when Spark's logs are off, with its stderr going
    through a filter that drops the JVM's start-up warnings (everything else it writes, a
    crash, an out-of-memory message, still reaches our stderr: PySpark lets the JVM inherit
    stderr, and nothing in Spark's settings silences those lines)."""
    from pyspark import SparkContext

    from ddlog.runtime.class_archive import class_archive

    if (SparkContext._gateway is not None
            or environment.get(environment.PYSPARK_GATEWAY_PORT) is not None):
        return
    key = "spark.driver.extraJavaOptions"
    archive = class_archive(settings)
    mapped = archive.usable() if archive is not None else None
    if archive is not None:
        builder.config(key, f"{archive.options(mapped)} {settings[key]}")
    gateway = _start_gateway(builder, level)
    if archive is not None and mapped is None:
        archive.finish_at_exit(gateway.proc)
    SparkContext._ensure_initialized(gateway=gateway)


def _start_gateway(builder, level: str):
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf(loadDefaults=False)
    for key, value in builder._options.items():
        conf.set(key, value)
    # The JVM gets a session of its own: a SIGTERM to the command's process group (systemd's
    # stop, `timeout`, `kill -- -PGID`) reaches the command, which finishes the batch it is
    # running, and not the JVM under it. The JVM still ends with the command: it exits when
    # its standard input (a pipe from this process) closes.
    if level != "off":
        return launch_gateway(conf, popen_kwargs={"start_new_session": True})
    read_end, write_end = os.pipe()
    target = os.dup(2)
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_end,
                                                     "start_new_session": True})
    finally:
        os.close(write_end)
    threading.Thread(target=_forward, args=(read_end, target), daemon=True,
                     name="jvm-stderr").start()
    return gateway


def _forward(read_end: int, target: int) -> None:
    with os.fdopen(read_end, "rb") as lines:
        for line in lines:
            if not _JVM_NOISE.match(line):
                os.write(target, line)


# PySpark logs every analysis error it raises, with a JVM stack trace, as JSON on stderr;
# ddlog reports those errors itself, in one line (runtime/errors.py).
_QUERY_CONTEXT_LOGGERS = ("DataFrameQueryContextLogger", "SQLQueryContextLogger")


def quiet_query_context_logs() -> None:
    """Silence PySpark's error logs for the whole process: for the `ddlog` command, which
    owns its process. A library call uses quiet_errors instead."""
    import logging

    from pyspark.logger import PySparkLogger

    for name in _QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL + 10)


class _EngineThreads:
    """The threads doing the engine's work right now (quiet_errors): PySpark's error logs from
    them are dropped, those of every other thread pass. The filter is on the loggers only
    while some thread is inside."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside: dict[int, int] = {}

    def filter(self, record) -> bool:
        return record.thread not in self.inside

    @contextmanager
    def scope(self) -> Iterator[None]:
        from pyspark.logger import PySparkLogger

        me = threading.get_ident()
        with self.lock:
            if not self.inside:
                for name in _QUERY_CONTEXT_LOGGERS:
                    PySparkLogger.getLogger(name).addFilter(self)
            self.inside[me] = self.inside.get(me, 0) + 1
        try:
            yield
        finally:
            with self.lock:
                self.inside[me] -= 1
                if not self.inside[me]:
                    del self.inside[me]
                if not self.inside:
                    for name in _QUERY_CONTEXT_LOGGERS:
                        PySparkLogger.getLogger(name).removeFilter(self)


_ENGINE_THREADS = _EngineThreads()


def quiet_errors():
    """Inside, PySpark does not log the errors this thread's Spark calls raise (the engine
    reports them itself); other threads' errors are logged as before, and the loggers are as
    they were once no thread is inside."""
    return _ENGINE_THREADS.scope()
