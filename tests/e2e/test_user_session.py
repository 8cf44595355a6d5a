"""The Python API on a SparkSession the user built, as a PySpark user calls a library.

Each case is a fresh Python process (a session can be built only once per process), which
builds its session its own way, drives programs through seeded random epochs compared with
tests/oracle after every one (tests/differential/harness.Differential), and checks that the
caller's process is as it was: the session's SQL settings, the thread's local properties (job
group, description, scheduler pool, call site, job tags), Spark's log level, the checkpoint
directory, PySpark's `SparkContext._jvm` and its loggers. A second thread using the same
session while commits run must see the session's own settings throughout.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.e2e.cli_support import ROOT

# What the caller's process looks like, from inside it.
OBSERVE = '''
import logging
from pyspark import SparkContext

def observe(spark):
    sc = spark.sparkContext
    loggers = {name: (lg.level, tuple(lg.filters), tuple(lg.handlers), lg.propagate)
               for name, lg in logging.Logger.manager.loggerDict.items()
               if isinstance(lg, logging.Logger) and "spark" in name.lower()}
    root = sc._jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel().toString()
    return {
        "conf": spark.conf.getAll,
        "local": {k: sc.getLocalProperty(k) for k in (
            "spark.jobGroup.id", "spark.job.description", "spark.scheduler.pool",
            "callSite.short", "callSite.long", "spark.job.interruptOnCancel")},
        "tags": sorted(sc.getJobTags()),
        "log level": root,
        "checkpoint dir": sc.getCheckpointDir(),
        "jvm": (id(SparkContext._jvm), type(SparkContext._jvm).__name__),
        "session jvm": (id(spark._jvm), type(spark._jvm).__name__),
        "loggers": loggers,
        "root handlers": tuple(logging.getLogger().handlers),
        "active": spark.getActiveSession() is not None
                  and spark.getActiveSession()._jsparkSession.equals(spark._jsparkSession),
    }

def same(before, after):
    wrong = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    assert not wrong, f"the caller's process changed: {wrong}"
'''

# Two programs on one session: recursion with negation, and aggregates over recursion.
DRIVE = '''
import os, random, threading
from tests.differential.harness import Differential, Workload
from tests.differential.test_engine_programs import WORKLOADS
from tests.support import PROGRAMS

def drive(programs, spark_kw, epochs, seed):
    ds = [Differential(Program.load(os.path.join(PROGRAMS, f"{name}.dl"), **spark_kw), name, seed)
          for name in programs]
    rng = random.Random(seed)
    from tests.differential.harness import EPOCH_PLAN, random_epoch
    for e in range(epochs):
        for d, name in zip(ds, programs):
            w = WORKLOADS.get(name, Workload())
            d.step(random_epoch(rng, EPOCH_PLAN[e % len(EPOCH_PLAN)], d.program, w, d.inputs))
    return ds
'''


def run_case(body: str, timeout: float = 900) -> None:
    script = "\n".join([f"import sys; sys.path.insert(0, {str(ROOT)!r})",
                        textwrap.dedent(body).replace("OBSERVE", OBSERVE).replace(
                            "DRIVE", DRIVE),
                        "print('case passed')"])
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       cwd=ROOT, timeout=timeout)
    assert p.returncode == 0 and "case passed" in p.stdout, \
        f"exit {p.returncode}\n--- stdout\n{p.stdout[-4000:]}\n--- stderr\n{p.stderr[-6000:]}"


@pytest.mark.slow
def test_a_builder_session_with_its_own_settings_is_used_and_left_as_it_was(tmp_path):
    """The session is built before ddlog is imported, with settings a user may have (shuffle
    partitions, no ANSI mode, case-insensitive names, a time zone, adaptive execution off),
    its job group, description and pool set, a checkpoint directory and a log level: two
    programs on it give the oracle's answers every epoch, and none of it changes. Meanwhile
    another thread runs its own queries on the same session and must see its settings."""
    run_case(f"""
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[2]").appName("mine")
                 .config("spark.ui.enabled", "false").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        for k, v in {{"spark.sql.shuffle.partitions": "3", "spark.sql.ansi.enabled": "false",
                     "spark.sql.caseSensitive": "false",
                     "spark.sql.session.timeZone": "America/New_York",
                     "spark.sql.adaptive.enabled": "false"}}.items():
            spark.conf.set(k, v)
        sc = spark.sparkContext
        sc.setJobGroup("mygroup", "my description", interruptOnCancel=True)
        sc.setLocalProperty("spark.scheduler.pool", "pool1")
        sc.setCheckpointDir({str(tmp_path / "ckpt")!r})
        OBSERVE
        before = observe(spark)

        from ddlog.api import Program
        DRIVE

        seen, stop = [], threading.Event()
        def other_thread():
            # the user's own work on the same session, while the engine commits
            while not stop.is_set():
                seen.append((spark.conf.get("spark.sql.adaptive.enabled"),
                             spark.conf.get("spark.sql.shuffle.partitions"),
                             spark.conf.get("spark.sql.codegen.wholeStage", "true"),
                             spark.conf.get("spark.sql.ansi.enabled")))
                assert spark.range(50).groupBy("id").count().count() == 50
        t = threading.Thread(target=other_thread)
        t.start()
        try:
            drive(["reach", "groups"], {{"spark": spark}}, epochs=5, seed=11)
        finally:
            stop.set()
            t.join()
        assert seen and set(seen) == {{("false", "3", "true", "false")}}, set(seen)
        same(before, observe(spark))
    """)


@pytest.mark.slow
def test_the_active_session_is_used_when_none_is_given():
    """ddlog imported first, then a plain `getOrCreate()` session with adaptive execution on
    (Spark's default) and its default 200 shuffle partitions: `Program.load(path)` without
    `spark=` runs on it, gives the oracle's answers, and leaves it as it was."""
    run_case("""
        from ddlog.api import Program
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                 .getOrCreate())
        OBSERVE
        before = observe(spark)
        DRIVE
        ds = drive(["reach", "bom"], {}, epochs=4, seed=5)
        assert all(d.p.spark is spark for d in ds)
        same(before, observe(spark))
    """)
