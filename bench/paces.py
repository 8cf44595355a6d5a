"""What each iteration of an epoch costs, and what the cost-based fallback made of it.

For one workload (bench/workloads.py), after the initial epoch, it runs the epochs of `--plan`
(kind:rows x times, in order) and, for each, prints and records every iteration of its
strata as the runtime records them (`Program.last_commit`, runtime/stats.IterationStats: the
iteration, the rows of its deltas, its seconds, and what the fallback decided before it, with
the seconds its paces foresaw for the iterations left). `--scratch N` then runs the program
from scratch N times on the final inputs (their iterations are the shape the guesses scale). With
`--knobs incremental_budget=inf,recompute_memory=0` every epoch runs incrementally to its end:
what each would have cost, against which the fallback's choices are judged.

    python bench/paces.py reach --edges 100000 --knobs incremental_budget=inf,recompute_memory=0
    python bench/paces.py reach --edges 100000 --knobs recompute_memory=0

"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench import workloads  # noqa: E402

PLAN = "delete:10x3,insert:100x2,delete:100x3,insert:1000x1,delete:1000x1,insert:10x2"


def parse_plan(text: str) -> list[tuple[str, int]]:
    """`kind:rows x times,...` as one (kind, rows) per epoch."""
    out = []
    for part in filter(None, text.split(",")):
        m = re.fullmatch(r"(insert|delete):(\d+)x(\d+)", part.strip())
        if m is None:
            raise SystemExit(f"--plan: {part!r} is not kind:rows x times (e.g. delete:10x3)")
        out += [(m.group(1), int(m.group(2)))] * int(m.group(3))
    return out


def epoch(p, label: str) -> dict:
    """Commit `p`'s pending changes; what the epoch's iterations did."""
    p.commit()
    st = p.last_commit
    steps = [step for s in st.strata for step in s.steps]
    iterations = [(step.iteration, step.rows, step.seconds) for step in steps]
    asks = [{"i": step.iteration, "check": step.check, "guess": step.foreseen}
            for step in steps if step.check]
    out = {"label": label, "seconds": st.seconds, "jobs": st.jobs,
           "modes": sorted({s.mode for s in st.strata if s.mode != "unchanged"}),
           "why": [s.why for s in st.strata if s.why],
           "iterations": iterations, "asks": asks}
    guesses = [f"{a['i']}:{a['guess']:.1f}" for a in asks if a["guess"] is not None]
    print(f"  {label:>12}: {st.seconds:5.2f}s {st.jobs:3} jobs {'/'.join(out['modes'])}"
          f", {len(iterations)} iterations, rows {[r for _, r, _ in iterations]}"
          f"; guessed left by iteration {' '.join(guesses[:6]) or '-'}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workloads.add_arguments(ap)
    ap.add_argument("--plan", default=PLAN, help="the epochs: kind:rows x times,...")
    ap.add_argument("--scratch", type=int, default=2, help="runs from scratch at the end")
    workloads.add_knobs(ap)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    plan = parse_plan(args.plan)

    from ddlog.api import Program
    from ddlog.runtime.spark import get_session

    config = workloads.config_of(args.knobs)
    spark = get_session(None, {})
    w = workloads.from_arguments(spark, args)
    print(f"[{w.name}] {args.knobs or 'default knobs'}", flush=True)
    p = workloads.loaded(w, spark, config)
    epochs = [epoch(p, "initial")]
    rng = random.Random(args.seed)
    present = list(w.present)
    rng.shuffle(present)
    for kind, rows in plan:
        change = workloads.some_rows(w, rng, present, kind, rows)
        (p.insert if kind == "insert" else p.delete)(w.updated, change)
        epochs.append(epoch(p, f"{kind} {rows}"))
    for _ in range(args.scratch):
        q = Program.load(w.program, spark, config=config)
        for rel, df in w.inputs.items():
            q.insert(rel, p.relation(rel).cache() if rel == w.updated else df)
        epochs.append(epoch(q, "from scratch"))
    print("saved", workloads.save({"epochs": epochs}, "paces.py", sys.argv[1:], args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
