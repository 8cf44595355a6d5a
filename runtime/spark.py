"""The SparkSession the engine runs on, with the local-mode defaults of DESIGN 5.

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
    for key, value in DEFAULTS.items():
        if not user.contains(key):
            builder = builder.config(key, value)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("DDLOG_SPARK_LOG_LEVEL", "ERROR"))
    return spark
