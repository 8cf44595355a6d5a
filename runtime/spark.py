"""The SparkSession the engine runs on, with ddlog's local-mode defaults.

Every default can be overridden: settings already present in the user's SparkConf (from
`spark-defaults.conf`, `PYSPARK_SUBMIT_ARGS`, `--conf`) win over ours, and an existing session is
used as it is.
"""
from __future__ import annotations

import os

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
    # PySpark's DataFrame debugging records the Python call site of every DataFrame and
    # Column call on the JVM (three py4j round trips each); the engine builds thousands of
    # them per epoch, and reports its errors itself.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


def get_session(master: str | None = None, conf: dict[str, str] | None = None,
                app_name: str = "ddlog") -> SparkSession:
    """Return the active session, or create one with our defaults under the user's settings."""
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
    level = log_level()
    # Spark's own log lines stay off unless asked for, from the JVM's first line on: the
    # logging configuration must be known when the driver JVM starts.
    java = f"-Dlog4j2.configurationFile={LOG_CONFIG} -Dddlog.log.level={level}"
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        given = settings.get(key) or (user.get(key) if user.contains(key) else "")
        settings[key] = f"{java} {given}".strip()
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(level.upper())
    _quiet_query_context_logs()
    return spark


LOG_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")


def log_level() -> str:
    """Spark's log level: DDLOG_SPARK_LOG_LEVEL (e.g. warn, info), else off."""
    return os.environ.get("DDLOG_SPARK_LOG_LEVEL", "off").lower()


def _quiet_query_context_logs() -> None:
    """PySpark logs every analysis error it raises, with a JVM stack trace, as JSON on stderr;
    ddlog reports those errors itself, in one line (runtime/errors.py)."""
    import logging

    from pyspark.logger import PySparkLogger

    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL + 10)
