"""Where the differential tests' time goes: the seeded random epochs of
tests/differential/test_engine_programs.py for some programs (or of the targeted workloads of
test_engine_targeted.py, `targeted:NAME`), in one Spark session, with the seconds of the
engine's commits and of the comparison with the oracle (reading every relation back) added up
per program, and the py4j round trips it took (bench/README.md holds the results).

    python bench/differential.py tc groups
    python bench/differential.py tc --conf spark.sql.codegen.factoryMode=CODEGEN_ONLY
    python bench/differential.py targeted:aggregates targeted:recursion --rounds 2

The suite's time is mostly these epochs: a change that makes them cheaper makes `make test`
faster, and the other way round.

On a shared machine the seconds of one run vary by a quarter; the CPU seconds that the driver
JVM's threads and the Python driver spent (read from /proc at the end, Linux only) vary less,
and say where the work went: the py4j threads that build, plan and start the plans, the JIT
compilers, the executors' tasks.
"""
from __future__ import annotations

import argparse
import glob
import os
import resource
import sys
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("programs", nargs="+",
                    help="programs of programs/ (e.g. tc groups), or targeted:NAME")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the programs this many times over, in the same session (the "
                         "later rounds on a warm JVM)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting of the session (repeatable)")
    args = ap.parse_args()

    from ddlog.api import Program
    from ddlog.runtime.spark import get_session
    from tests.differential import harness
    from tests.differential.test_engine_programs import WORKLOADS
    from tests.differential.test_engine_targeted import TARGETED
    from tests.support import PROGRAMS, seed_for

    conf = {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"}
    conf.update(item.split("=", 1) for item in args.conf)
    spark = get_session(master="local[2]", conf=conf)  # the test suite's session
    trips = count_round_trips()

    class Timed(harness.Differential):
        def check(self, changes, old=None):
            t = time.perf_counter()
            try:
                return super().check(changes, old)
            finally:
                self.seconds["check"] += time.perf_counter() - t

    for name in [n for _ in range(args.rounds) for n in args.programs]:
        trips.clear()
        if name.startswith("targeted:"):  # as test_targeted_against_oracle runs it
            short = name.removeprefix("targeted:")
            text, workload = TARGETED[short]
            p = Program.load(text, spark, config=harness.INCREMENTAL)
            seed = seed_for(f"targeted/{short}")
        else:
            p = Program.load(os.path.join(PROGRAMS, f"{name}.dl"), spark,
                             config=harness.INCREMENTAL)
            workload, seed = WORKLOADS[name], seed_for(f"programs/{name}")
        commit = p.commit
        d = Timed(p, name, seed)
        d.seconds = {"commit": 0.0, "check": 0.0}
        jobs = 0

        def timed_commit():
            nonlocal jobs
            t = time.perf_counter()
            try:
                return commit()
            finally:
                d.seconds["commit"] += time.perf_counter() - t
                jobs += p.last_commit.jobs

        p.commit = timed_commit
        t0 = time.perf_counter()
        d.run(workload, epochs=args.epochs)
        print(f"{name}: {time.perf_counter() - t0:.1f}s for {args.epochs} epochs; commits "
              f"{d.seconds['commit']:.1f}s ({jobs} jobs), checks {d.seconds['check']:.1f}s; "
              f"py4j round trips {sum(trips.values())} ({trips['free']} to free objects)",
              flush=True)
    print(cpu_report(spark))
    return 0


def count_round_trips() -> Counter:
    """Count py4j's round trips from now on, by kind: `call` (a method, a constructor, a
    field), `free` (py4j telling the JVM that Python dropped an object: its own round trip,
    sent by py4j's finalizer thread), `other`. The counter is returned, to read and clear."""
    from py4j.clientserver import ClientServerConnection

    trips: Counter = Counter()
    send = ClientServerConnection.send_command

    def counted(self, command: str, *args, **kwargs):
        kind = command[:1]
        trips["free" if command.startswith("m\nd\n") else
              "call" if kind in ("c", "i", "f") else "other"] += 1
        return send(self, command, *args, **kwargs)

    ClientServerConnection.send_command = counted
    return trips


def cpu_report(spark) -> str:
    """CPU seconds of the Python driver and of the driver JVM's threads, grouped by name
    (py4j's threads are `Thread-N`), from /proc; an empty string elsewhere."""
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    tick = os.sysconf("SC_CLK_TCK")
    threads: Counter = Counter()
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(f"{task}/comm") as f:
                name = f.read().strip().rstrip("0123456789-# ")
            with open(f"{task}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended
            continue
        threads[{"Thread": "py4j"}.get(name, name)] += (int(fields[11]) + int(fields[12])) / tick
    if not threads:
        return ""
    me = resource.getrusage(resource.RUSAGE_SELF)
    top = ", ".join(f"{name} {sec:.1f}" for name, sec in threads.most_common(5))
    return (f"CPU seconds: Python driver {me.ru_utime + me.ru_stime:.1f}; driver JVM "
            f"{sum(threads.values()):.1f} ({top})")


if __name__ == "__main__":
    sys.exit(main())
