"""The SparkSession the engine runs on, with ddlog's local-mode defaults.

Every default can be overridden: settings already present in the user's SparkConf (from
`spark-defaults.conf`, `PYSPARK_SUBMIT_ARGS`, `--conf`) win over ours, and an existing session is
used as it is.
"""
from __future__ import annotations

import os
import re
import threading

from pyspark.sql import SparkSession

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


def get_session(master: str | None = None, conf: dict[str, str] | None = None,
                app_name: str = "ddlog", level: str | None = None) -> SparkSession:
    """Return the active session, or create one with our defaults under the user's settings.
    `level`: Spark's log level (default: log_level())."""
    active = SparkSession.getActiveSession()
    if active is not None:
        for key, value in (conf or {}).items():
            try:
                active.conf.set(key, value)
            except Exception:  # static settings cannot change on a running session
                pass
        return active
    builder = SparkSession.builder.appName(app_name)
    builder = builder.master(master or os.environ.get("SPARK_MASTER", "local[*]"))
    from pyspark import SparkConf

    user = SparkConf()  # picks up spark.* Java system properties / submit args
    settings = {k: v for k, v in DEFAULTS.items() if not user.contains(k)}
    settings.update(conf or {})
    level = (level or log_level()).lower()
    # Spark's own log lines stay off unless asked for, from the JVM's first line on: the
    # logging configuration must be known when the driver JVM starts.
    java = f"-Dlog4j2.configurationFile={LOG_CONFIG} -Dddlog.log.level={level}"
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        given = settings.get(key) or (user.get(key) if user.contains(key) else "")
        settings[key] = f"{java} {given}".strip()
    for key, value in settings.items():
        builder = builder.config(key, value)
    _launch(builder, settings, level)
    spark = builder.getOrCreate()
    _import_hot_classes(spark)
    spark.sparkContext.setLogLevel(level.upper())
    _quiet_query_context_logs()
    return spark


def is_local(spark: SparkSession) -> bool:
    return spark.sparkContext.master.startswith("local")


def reliable_checkpoints(spark: SparkSession, directory: str) -> None:
    """On a cluster, cut lineage with checkpoints written to `directory` (which every node
    must see), unless the user set one (spark.checkpoint.dir): an executor-local checkpoint
    vanishes with its executor, and the plans that read it would fail."""
    sc = spark.sparkContext
    if is_local(spark) or sc.getCheckpointDir() is not None:
        return
    sc.setCheckpointDir(directory)


LOG_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")


def log_level() -> str:
    """Spark's log level: DDLOG_SPARK_LOG_LEVEL (e.g. warn, info), else off."""
    return os.environ.get("DDLOG_SPARK_LOG_LEVEL", "off").lower()


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

    from runtime.class_archive import class_archive

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
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
    if level != "off":
        return launch_gateway(conf)
    read_end, write_end = os.pipe()
    target = os.dup(2)
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_end})
    finally:
        os.close(write_end)
    threading.Thread(target=_forward, args=(read_end, target), daemon=True,
                     name="jvm-stderr").start()
    return gateway


def _import_hot_classes(spark: SparkSession) -> None:
    """PySpark reaches the JVM classes it calls most (the helpers behind every list of
    columns, and `functions` behind every `F.col`, `F.lit`, ...) through wildcard imports of
    their packages, and py4j tries those packages in order, each miss a search of every jar
    (0.2-0.6 ms a call); a single import is found at once (`F.col` 0.5-1.3 ms → 0.3-0.4)."""
    from py4j.java_gateway import java_import

    jvm = spark.sparkContext._jvm
    for name in ("org.apache.spark.api.python.PythonUtils",
                 "org.apache.spark.sql.api.python.PythonSQLUtils",
                 "org.apache.spark.sql.functions"):
        java_import(jvm, name)


def _forward(read_end: int, target: int) -> None:
    with os.fdopen(read_end, "rb") as lines:
        for line in lines:
            if not _JVM_NOISE.match(line):
                os.write(target, line)


def _quiet_query_context_logs() -> None:
    """PySpark logs every analysis error it raises, with a JVM stack trace, as JSON on stderr;
    ddlog reports those errors itself, in one line (runtime/errors.py)."""
    import logging

    from pyspark.logger import PySparkLogger

    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL + 10)
