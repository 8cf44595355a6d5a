"""What each iteration of an epoch costs, and what the cost-based fallback made of it.

For one workload (bench/workloads.py), after the initial epoch, it runs the epochs of `--plan`
(kind:rows x times, in order) and, for each, prints and records every iteration of its
recursive strata (the iteration, the rows of its deltas, its seconds: the engine's progress
lines) and every question the fallback asked before an iteration (runtime/fallback.
Scratch.overrun: the budget, the seconds spent, the last pace, the paces' guess of the
iterations left, and whether it gave up). `--scratch N` then runs the program from scratch N
times on the final inputs (their iterations are the shape the guesses scale). With
`--knobs incremental_budget=inf,recompute_memory=0` every epoch runs incrementally to its end:
what each would have cost, against which the fallback's choices are judged.

    python bench/paces.py reach --edges 100000 --knobs incremental_budget=inf,recompute_memory=0
    python bench/paces.py reach --edges 100000 --knobs recompute_memory=0

It changes nothing in the engine: Scratch.overrun is wrapped in this process only.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench import workloads  # noqa: E402

PLAN = "delete:10x3,insert:100x2,delete:100x3,insert:1000x1,delete:1000x1,insert:10x2"
# the engine's progress line of one iteration (runtime/stratum.StratumRuntime.epoch)
ITERATION = re.compile(r"iteration (\d+): delta (\d+) rows, ([\d.]+)s")


def parse_plan(text: str) -> list[tuple[str, int]]:
    """`kind:rows x times,...` as one (kind, rows) per epoch."""
    out = []
    for part in filter(None, text.split(",")):
        m = re.fullmatch(r"(insert|delete):(\d+)x(\d+)", part.strip())
        if m is None:
            raise SystemExit(f"--plan: {part!r} is not kind:rows x times (e.g. delete:10x3)")
        out += [(m.group(1), int(m.group(2)))] * int(m.group(3))
    return out


class Watched:
    """The progress lines and the fallback's questions of the epoch running."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.asks: list[dict] = []

    def install(self) -> None:
        from ddlog.runtime.fallback import Scratch

        overrun = Scratch.overrun
        watched = self

        def asked(scratch, budget, spent, i, pace, ahead=None, margin=1.0):
            out = overrun(scratch, budget, spent, i, pace, ahead, margin)
            watched.asks.append({"i": i, "budget": budget, "spent": spent, "pace": pace,
                                 "guess": ahead, "gave_up": out})
            return out

        Scratch.overrun = asked

    def epoch(self, p, label: str) -> dict:
        self.lines.clear()
        self.asks.clear()
        p.progress = self.lines.append
        p.commit()
        st = p.last_commit
        iterations = [(int(m.group(1)), int(m.group(2)), float(m.group(3)))
                      for m in map(ITERATION.search, self.lines) if m]
        out = {"label": label, "seconds": st.seconds, "jobs": st.jobs,
               "modes": sorted({s.mode for s in st.strata if s.mode != "unchanged"}),
               "iterations": iterations, "asks": list(self.asks)}
        guesses = [f"{a['i']}:{a['spent'] + a['guess']:.1f}" for a in self.asks
                   if a["guess"] is not None]
        print(f"  {label:>12}: {st.seconds:5.2f}s {st.jobs:3} jobs {'/'.join(out['modes'])}"
              f", {len(iterations)} iterations, rows {[r for _, r, _ in iterations]}"
              f"; spent + guessed by iteration {' '.join(guesses[:6]) or '-'}", flush=True)
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
    watched = Watched()
    watched.install()
    print(f"[{w.name}] {args.knobs or 'default knobs'}", flush=True)
    p = workloads.loaded(w, spark, config)
    epochs = [watched.epoch(p, "initial")]
    rng = random.Random(args.seed)
    present = list(w.present)
    rng.shuffle(present)
    for kind, rows in plan:
        change = workloads.some_rows(w, rng, present, kind, rows)
        (p.insert if kind == "insert" else p.delete)(w.updated, change)
        epochs.append(watched.epoch(p, f"{kind} {rows}"))
    for _ in range(args.scratch):
        q = Program.load(w.program, spark, config=config)
        for rel, df in w.inputs.items():
            q.insert(rel, p.relation(rel).cache() if rel == w.updated else df)
        epochs.append(watched.epoch(q, "from scratch"))
    result = {"command": "python bench/paces.py " + " ".join(sys.argv[1:]),
              "date": time.strftime("%Y-%m-%d"), "epochs": epochs}
    workloads.save(result, args.out, sys.argv[1:], args.workload, prefix="paces-")
    return 0


if __name__ == "__main__":
    sys.exit(main())
