"""The environment variables ddlog reads, in one place: each one's name, what it does and its
default. Readers take them through `get` (with an `environ` to read instead, for tests).

PySpark's own conventions:
- SPARK_REMOTE: a Spark Connect URL (`sc://HOST:PORT`) the Spark commands run on, when
  neither `--master` nor `--remote` is given (runtime/spark.get_session).
- SPARK_MASTER: the master of a session ddlog starts itself (default `local[*]`).
- SPARK_HOME, SPARK_DIST_CLASSPATH, JAVA_HOME, PATH: which JVM and jars a driver runs, as
  spark-submit finds them (they key the driver's class archive, runtime/class_archive).
- XDG_CACHE_HOME: the cache directory's parent (ddlog/cache.py; default ~/.cache).
- PYSPARK_GATEWAY_PORT: set when PySpark's JVM is already running (runtime/spark).

ddlog's own:
- DDLOG_SPARK_LOG_LEVEL: Spark's log level on stderr (warn, info, ...; default off, and
  warn under `--verbose`).
- DDLOG_CLASS_ARCHIVE: `off` turns the driver's class archive off (default on);
  DDLOG_CLASS_ARCHIVE_DIR: where it is kept (default the cache directory).
- DDLOG_FAILPOINT: the crash tests' named point at which a commit kills its process
  (runtime/state/layout.failpoint).

The engine's tuning knobs are not read from the environment: they are runtime/config.Config's
fields, given as `--conf ddlog.NAME=VALUE` or `Config(...)`.
"""
from __future__ import annotations

import os
from typing import Mapping

SPARK_REMOTE = "SPARK_REMOTE"
SPARK_MASTER = "SPARK_MASTER"
SPARK_HOME = "SPARK_HOME"
SPARK_DIST_CLASSPATH = "SPARK_DIST_CLASSPATH"
JAVA_HOME = "JAVA_HOME"
PATH = "PATH"
XDG_CACHE_HOME = "XDG_CACHE_HOME"
SPARK_LOG_LEVEL = "DDLOG_SPARK_LOG_LEVEL"
CLASS_ARCHIVE = "DDLOG_CLASS_ARCHIVE"
CLASS_ARCHIVE_DIR = "DDLOG_CLASS_ARCHIVE_DIR"
FAILPOINT = "DDLOG_FAILPOINT"
PYSPARK_GATEWAY_PORT = "PYSPARK_GATEWAY_PORT"

NAMES = (SPARK_REMOTE, SPARK_MASTER, SPARK_HOME, SPARK_DIST_CLASSPATH, JAVA_HOME, PATH,
         XDG_CACHE_HOME, SPARK_LOG_LEVEL, CLASS_ARCHIVE, CLASS_ARCHIVE_DIR, FAILPOINT,
         PYSPARK_GATEWAY_PORT)


def get(name: str, default: str | None = None,
        environ: Mapping[str, str] | None = None) -> str | None:
    """The variable `name` (one of NAMES) of `environ` (default: the process's), else
    `default`."""
    assert name in NAMES, f"{name} is not one of ddlog's environment variables"
    return (os.environ if environ is None else environ).get(name, default)
