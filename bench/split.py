"""Where a small epoch's time goes: Spark's actions, Catalyst inside them, and plan building.

For one workload (bench/workloads.py), after the initial epoch and `--warm` untimed epochs, it
runs `--epochs` epochs of `--batch` rows (1: a small epoch; an insert and a delete in turns;
the untimed ones are 1-row) and splits each one's wall time
(one Spark session, nothing else measured at the same time):

- actions: the py4j calls that run Spark work (a collect, a count, a checkpoint, a cache), each
  from the call to its answer: the jobs, and the optimisation and physical planning Spark does
  when an action starts;
- of those, Catalyst's phases as each action's query execution records them (analysis,
  optimisation, planning);
- plan building: every other py4j round trip (building DataFrames, the analysis PySpark asks
  for as each one is made, reading schemas), with how many there were;
- Python: the rest (the engine's own code: its traces' bookkeeping, rows packed on the driver).

    python bench/split.py reach --edges 1000000 --epochs 6
    python bench/split.py tc --edges 2000 --epochs 6
    python bench/split.py reach --edges 100000 --epochs 4 --batch 100

It changes nothing in the engine: py4j's method call is wrapped in this process only.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections import Counter
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench import workloads  # noqa: E402

# the py4j methods that start Spark work (each runs at least one job, or plans one)
ACTIONS = frozenset({"collectAsList", "collectToPython", "count", "localCheckpoint",
                     "checkpoint", "cache", "persist", "collect", "toPythonIterator"})
PHASES = ("analysis", "optimization", "planning")


class Split:
    """py4j's calls timed while `on`: actions apart from the rest."""

    def __init__(self) -> None:
        self.on = False
        self.times: Counter = Counter()

    def install(self) -> None:
        import py4j.java_gateway as jg

        call = jg.JavaMember.__call__
        split = self

        def timed(member, *args: Any) -> Any:
            if not split.on:
                return call(member, *args)
            start = time.perf_counter()
            try:
                return call(member, *args)
            finally:
                took = time.perf_counter() - start
                if member.name in ACTIONS:
                    split.times["actions"] += took
                    split.times["action count"] += 1
                    split.on = False  # the phases' own round trips are not the epoch's
                    try:
                        split._phases(member)
                    finally:
                        split.on = True
                else:
                    split.times["plan building"] += took
                    split.times["round trips"] += 1

        jg.JavaMember.__call__ = timed

    def _phases(self, member) -> None:
        """Catalyst's phases of the action's query, when its target is a Dataset."""
        try:
            tracker = member.container.queryExecution().tracker().phases()
        except Exception:  # not a Dataset's method (an RDD's count, say)
            return
        for phase in PHASES:
            if tracker.contains(phase):
                s = tracker.apply(phase)
                self.times[phase] += (s.endTimeMs() - s.startTimeMs()) / 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workloads.add_arguments(ap)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--warm", type=int, default=4, help="untimed 1-row epochs first")
    ap.add_argument("--batch", type=int, default=1, help="rows each measured epoch changes")
    workloads.add_knobs(ap)
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()

    from ddlog.runtime.spark import get_session

    config = workloads.config_of(args.knobs)
    spark = get_session(None, dict(c.split("=", 1) for c in args.conf))
    w = workloads.from_arguments(spark, args)
    p = workloads.loaded(w, spark, config)
    p.commit()
    print(f"[{w.name}] initial epoch {p.last_commit.seconds:.1f}s", flush=True)
    rng = random.Random(args.seed)
    present = list(w.present)
    rng.shuffle(present)
    split = Split()
    split.install()
    rows = []
    for k in range(args.warm + args.epochs):
        kind = "insert" if k % 2 == 0 else "delete"
        change = workloads.some_rows(w, rng, present, kind,
                                     args.batch if k >= args.warm else 1)
        (p.insert if kind == "insert" else p.delete)(w.updated, change)
        split.times.clear()
        split.on = k >= args.warm
        start = time.perf_counter()
        p.commit()
        wall = time.perf_counter() - start
        split.on = False
        if k < args.warm:
            continue
        st, t = p.last_commit, split.times
        rows.append({"kind": kind, "wall": wall, "jobs": st.jobs, "iterations": st.iterations,
                     **t, "python": wall - t["actions"] - t["plan building"]})
    print("| epoch | wall s | jobs | iterations | actions s (n) | of which analysis / "
          "optimisation / planning s | plan building s (round trips) | Python s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['kind']} | {r['wall']:.2f} | {r['jobs']} | {r['iterations']} | "
              f"{r['actions']:.2f} ({r['action count']}) | "
              f"{' / '.join(f'{r[ph]:.2f}' for ph in PHASES)} | "
              f"{r['plan building']:.2f} ({r['round trips']}) | {r['python']:.2f} |")
    share = {key: statistics.median(r[key] / r["wall"] for r in rows)
             for key in ("actions", "plan building", "python")}
    print("median shares of the wall: " + ", ".join(f"{k} {v:.0%}" for k, v in share.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
