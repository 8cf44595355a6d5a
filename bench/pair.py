"""The same 1-row epochs of a workload (bench/workloads.py) on two programs built with
different knobs, in one Spark session: which configuration makes a small epoch cheaper.

Both programs load the workload's initial facts, run 4 untimed 1-row epochs, then `--epochs`
pairs of 1-row epochs (an insert and a delete in turns): each pair updates both programs with
the same row, the configurations taking turns at going first, so that the JVM's warming and
the machine's load fall on both alike. It prints every epoch's seconds, Spark jobs and
iterations (read from `Program.last_commit`), then per kind and configuration the median and
mean seconds and the jobs and iterations in all. Two programs hold the state twice: give the
driver memory for both (`--memory`).

`tiny` (a program of programs/ on a few random rows per input relation, `--program tc
--rows 15`) is what the test suite and an interactive user run: small epochs on a tiny state,
where a configuration's cost is mostly Spark's fixed price per job.

With `--scratch N` it first evaluates the initial facts from scratch N times per
configuration, the two taking turns at going first, and prints the medians: which
configuration makes the batch path cheaper (each run's cached state is dropped after it).

    python bench/pair.py reach --edges 1000000 --b prefetch=false --epochs 8
    python bench/pair.py pointsto --facts 10000 --b constraint_propagation=true --scratch 3 --epochs 0
    python bench/pair.py tiny --program pointsto --b inline_incremental=false
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench import workloads  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    workloads.add_arguments(ap)
    ap.add_argument("--a", default="", help="knobs of the first program: name=value,...")
    ap.add_argument("--b", required=True, help="... of the second")
    ap.add_argument("--epochs", type=int, default=8, help="pairs of an insert and a delete")
    ap.add_argument("--scratch", type=int, default=0,
                    help="runs from scratch per configuration first")
    ap.add_argument("--memory", default="6g", help="the driver's memory")
    args = ap.parse_args()

    from ddlog.runtime.spark import get_session

    configs = {"a": workloads.config_of(args.a), "b": workloads.config_of(args.b)}
    spark = get_session(conf={"spark.driver.memory": args.memory})
    w = _from_scratch(spark, configs, args) if args.scratch else \
        workloads.from_arguments(spark, args)
    if not args.epochs:
        return
    programs = {}
    for name, config in configs.items():
        p = workloads.loaded(w, spark, config)
        p.commit()
        print(f"{name}: initial epoch {p.last_commit.seconds:.2f}s", flush=True)
        programs[name] = p

    rng = random.Random(args.seed)
    present = list(w.present)
    rng.shuffle(present)
    runs: dict[tuple[str, str], list[tuple[float, int, int]]] = {}
    for k in range(4 + 2 * args.epochs):
        kind = "insert" if k % 2 == 0 else "delete"
        rows = workloads.some_rows(w, rng, present, kind)
        order = ("a", "b") if k // 2 % 2 == 0 else ("b", "a")
        line = []
        for name in order:
            p = programs[name]
            (p.insert if kind == "insert" else p.delete)(w.updated, rows)
            started = time.perf_counter()
            p.commit()
            took = (time.perf_counter() - started, p.last_commit.jobs, p.last_commit.iterations)
            line.append(f"{name} {took[0]:.3f}s {took[1]} jobs {took[2]} iterations")
            if k >= 4:  # after the untimed epochs
                runs.setdefault((kind, name), []).append(took)
        print(f"{kind:6s} " + ", ".join(line) + (" (untimed)" if k < 4 else ""), flush=True)
    for (kind, name), got in sorted(runs.items()):
        knobs = (args.a if name == "a" else args.b) or "defaults"
        print(f"{kind:6s} {name} ({knobs}): "
              f"median {statistics.median(t for t, _, _ in got):.3f}s, "
              f"mean {statistics.mean(t for t, _, _ in got):.3f}s, "
              f"{sum(j for _, j, _ in got)} jobs, {sum(i for _, _, i in got)} iterations "
              f"in {len(got)} epochs")


def _from_scratch(spark, configs: dict, args) -> workloads.Workload:
    """`--scratch`: the initial epoch of each configuration, in turns, then the medians; the
    workload, built again for what follows."""
    runs: dict[str, list[float]] = {name: [] for name in configs}
    for k in range(args.scratch):
        order = ("a", "b") if k % 2 == 0 else ("b", "a")
        for name in order:
            # each run from its own copy of the workload's inputs: dropping a run's cached
            # state drops them too (the same rows: workloads generate them deterministically)
            spark.catalog.clearCache()
            p = workloads.loaded(workloads.from_arguments(spark, args), spark, configs[name])
            started = time.perf_counter()
            p.commit()
            runs[name].append(time.perf_counter() - started)
            print(f"from scratch {name} {runs[name][-1]:.2f}s, {p.last_commit.jobs} jobs",
                  flush=True)
    for name, got in runs.items():
        knobs = (args.a if name == "a" else args.b) or "defaults"
        print(f"from scratch {name} ({knobs}): median {statistics.median(got):.2f}s, "
              f"runs {', '.join(f'{t:.2f}' for t in got)}")
    spark.catalog.clearCache()
    return workloads.from_arguments(spark, args)


if __name__ == "__main__":
    main()
