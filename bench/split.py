"""Where a small epoch's time goes: Spark's actions (Spark's planning inside them, and running
their jobs) and the rest, building plans and the engine's bookkeeping; per epoch and per
stratum, as the runtime records them (`Program.last_commit`, runtime/stats.py).

For one workload (bench/workloads.py), after the initial epoch and `--warm` untimed epochs, it
runs `--epochs` epochs of `--batch` rows (1: a small epoch; an insert and a delete in turns;
the untimed ones are 1-row) in one Spark session, classic or Connect (`--remote`), and prints
each epoch's split and the median shares of the wall.

    python bench/split.py reach --edges 1000000 --epochs 6
    python bench/split.py tc --edges 2000 --epochs 6
    python bench/split.py reach --edges 100000 --epochs 4 --batch 100
    python bench/split.py reach --edges 1000000 --remote sc://127.0.0.1:15002
    python bench/split.py pointsto --facts 10000 --initial --epochs 0   # the initial epoch
                                                    # (from scratch): per stratum, per iteration

On Connect the server plans as it runs: planning is not told apart there, and Spark jobs are
counted only where the server's UI answers.
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


def row(kind: str, wall: float, st) -> dict:
    """One epoch's split, from its EpochStats."""
    by_scope: dict[str, float] = {}
    for a in st.actions:
        by_scope[a.scope] = by_scope.get(a.scope, 0.0) + a.seconds
    return {"kind": kind, "wall": wall, "seconds": st.seconds, "jobs": st.jobs,
            "jobs_counted": st.jobs_counted, "iterations": st.iterations,
            "actions": len(st.actions), "spark": st.spark_seconds,
            "planning": st.planning_seconds, "building": st.building_seconds,
            "by_scope": by_scope}


def markdown(rows: list[dict]) -> str:
    out = ["| epoch | wall s | jobs | iterations | actions s (n) | of which planning s | "
           "building plans s | slowest scopes |",
           "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        slow = sorted(r["by_scope"].items(), key=lambda kv: -kv[1])[:3]
        out.append(f"| {r['kind']} | {r['wall']:.2f} | "
                   f"{r['jobs'] if r['jobs_counted'] else '-'} | {r['iterations']} | "
                   f"{r['spark']:.2f} ({r['actions']}) | "
                   f"{'-' if r['planning'] is None else format(r['planning'], '.2f')} | "
                   f"{r['building']:.2f} | "
                   f"{', '.join(f'{k} {v:.2f}' for k, v in slow)} |")
    share = {key: statistics.median(r[key] / r["seconds"] for r in rows)
             for key in ("spark", "building")}
    out.append("median shares of the epoch: "
               + ", ".join(f"{k} {v:.0%}" for k, v in share.items()))
    return "\n".join(out)


def initial(st) -> str:
    """The initial epoch (every stratum from scratch): its summary, each iteration's rows and
    seconds, and its Spark actions by scope (how many, seconds, Spark's planning in them)."""
    out = list(st.lines())
    for s in st.strata:
        if s.steps:
            out.append(f"stratum {s.stratum}: iteration rows / seconds: " + ", ".join(
                f"{it.rows}/{it.seconds:.2f}" for it in s.steps))
    scopes: dict[str, list] = {}
    for a in st.actions:
        n = scopes.setdefault(a.scope, [0, 0.0, 0.0])
        n[0], n[1], n[2] = n[0] + 1, n[1] + a.seconds, n[2] + (a.planning or 0.0)
    out += [f"{scope}: {n} actions, {sec:.2f}s, planning {plan:.2f}s"
            for scope, (n, sec, plan) in scopes.items()]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workloads.add_arguments(ap)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--warm", type=int, default=4, help="untimed 1-row epochs first")
    ap.add_argument("--batch", type=int, default=1, help="rows each measured epoch changes")
    ap.add_argument("--initial", action="store_true",
                    help="also split the initial epoch, per stratum and iteration")
    workloads.add_knobs(ap)
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--remote", default=None, metavar="sc://HOST:PORT",
                    help="run on a Spark Connect server (the Connect backend)")
    args = ap.parse_args()

    from ddlog.runtime.spark import get_session

    config = workloads.config_of(args.knobs)
    spark = get_session(None, dict(c.split("=", 1) for c in args.conf), remote=args.remote)
    w = workloads.from_arguments(spark, args)
    p = workloads.loaded(w, spark, config)
    p.commit()
    print(f"[{w.name}] initial epoch {p.last_commit.seconds:.1f}s", flush=True)
    first = p.last_commit
    if args.initial:
        print(initial(first), flush=True)
    rng = random.Random(args.seed)
    present = list(w.present)
    rng.shuffle(present)
    rows = []
    for k in range(args.warm + args.epochs):
        kind = "insert" if k % 2 == 0 else "delete"
        change = workloads.some_rows(w, rng, present, kind,
                                     args.batch if k >= args.warm else 1)
        (p.insert if kind == "insert" else p.delete)(w.updated, change)
        start = time.perf_counter()
        p.commit()
        wall = time.perf_counter() - start
        if k >= args.warm:
            rows.append(row(kind, wall, p.last_commit))
    if rows:
        print(markdown(rows))
    result = {"workload": w.name, "epochs": rows}
    if args.initial:
        result["initial"] = row("initial", first.seconds, first)
    print("saved", workloads.save(result, "split.py", sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
