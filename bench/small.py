"""Small incremental epochs on a tiny state, under two engine configurations in one Spark
session (bench/README.md holds the results).

What the test suite and an interactive user run: a program of programs/ on a few dozen random
rows per input relation (small domains, so that graphs are dense and cyclic), then `--epochs`
epochs that each insert or delete one row per input relation, read from
`Program.last_commit`. The configurations take turns (`--rounds` times each, after a
warm-up), so that the machine's load falls on both alike; it prints each run and the ratio
of their total seconds.

    python bench/small.py tc
    python bench/small.py pointsto --b inline_incremental=false
"""
from __future__ import annotations

import argparse
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def knobs(text: str):
    """`name=value,...` as a Config on top of the incremental-only one."""
    from ddlog.runtime.config import Config, with_knobs

    # every epoch runs incrementally, whatever the size of its change next to the state
    try:
        return with_knobs(text, Config(recompute_ratio=float("inf"),
                                       incremental_budget=float("inf")))
    except ValueError as e:
        raise SystemExit(str(e))


def value(rng: random.Random, t) -> object:
    from ddlog.types import TString

    return f"v{rng.randrange(10)}" if isinstance(t, TString) else rng.randrange(12)


def run(spark, program: str, config, rows: int, epochs: int, seed: int) -> dict:
    from ddlog.api import Program

    p = Program.load(os.path.join(ROOT, "programs", f"{program}.dl"), spark, config=config)
    rng = random.Random(seed)
    inputs = [info for info in p.relations.values() if info.role == "input"]
    held: dict[str, set] = {}
    for info in inputs:
        held[info.name] = {tuple(value(rng, t) for _, t in info.columns) for _ in range(rows)}
        p.insert(info.name, sorted(held[info.name]))
    p.commit()
    total = {"seconds": 0.0, "jobs": 0, "iterations": 0}
    for e in range(epochs):
        for info in inputs:
            rows_held = held[info.name]
            if e % 2 and rows_held:
                row = rng.choice(sorted(rows_held))
                rows_held.discard(row)
                p.delete(info.name, [row])
            else:
                row = tuple(value(rng, t) for _, t in info.columns)
                rows_held.add(row)
                p.insert(info.name, [row])
        p.commit()
        st = p.last_commit
        total["seconds"] += st.seconds
        total["jobs"] += st.jobs
        total["iterations"] += st.iterations
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program", help="a program of programs/, e.g. tc, reach, pointsto")
    ap.add_argument("--a", default="", help="knobs of the first configuration: name=value,...")
    ap.add_argument("--b", default="inline_incremental=false", help="... of the second")
    ap.add_argument("--rows", type=int, default=15, help="initial rows per input relation")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    from ddlog.runtime.spark import get_session

    spark = get_session(conf={"spark.sql.shuffle.partitions": "2"})
    configs = {"a": knobs(args.a), "b": knobs(args.b)}
    run(spark, args.program, configs["a"], args.rows, 2, args.seed)  # warm-up
    sums = {"a": 0.0, "b": 0.0}
    for r in range(args.rounds):
        for name, config in configs.items():
            t = run(spark, args.program, config, args.rows, args.epochs, args.seed)
            sums[name] += t["seconds"]
            print(f"{args.program} {name} ({getattr(args, name) or 'defaults'}), round {r}: "
                  f"{t['seconds']:.1f}s, {t['jobs']} jobs, {t['iterations']} iterations, "
                  f"{t['seconds'] / max(t['iterations'], 1):.2f}s per iteration", flush=True)
    print(f"{args.program}: a / b = {sums['a'] / sums['b']:.2f} "
          f"({sums['a']:.1f}s / {sums['b']:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
