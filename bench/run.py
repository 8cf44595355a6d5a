"""The engine next to its alternatives, in one Spark session (bench/README.md holds the results).

For one workload (bench/workloads.py) it measures, in this order:

- the job floor: one tiny Spark job of the kind an iteration needs (a broadcast join and an
  aggregate over two 100-row local relations), median of 5;
- the hand-written PySpark loop from scratch on the initial inputs;
- the engine's initial epoch (a first evaluation: from scratch);
- with `--warm N`, N untimed 1-row epochs (an insert and a delete in turns): the first
  epochs after a run from scratch arrange the state they look up (physical.arrange), which
  the measured epochs then pay for or not;
- for each batch size, `--repeat` epochs inserting and as many deleting that many rows of the
  updated relation, each read from `Program.last_commit` (seconds, fixpoint iterations, Spark
  jobs): medians;
- the engine from scratch and the hand-written loop (the recompute a user would run) on the
  final inputs, whose results must agree with the incremental engine's.

    python bench/run.py reach --edges 100000
    python bench/run.py tc --file ../shared/data/tree11.csv --batches 1,10
    python bench/run.py pointsto --facts 50000
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


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def job_floor(spark) -> dict:
    """The median wall time and job count of one tiny iteration-like Spark job."""
    from pyspark.sql import functions as F

    from ddlog.runtime.stats import Recorder

    a = spark.createDataFrame([(k, k % 7) for k in range(100)], "k long, v long")
    b = spark.createDataFrame([(k, k % 5) for k in range(100)], "k long, w long")
    runs = []
    for _ in range(6):
        recorder = Recorder(spark)
        with recorder.scope("floor") as c:
            a.join(F.broadcast(b), "k").groupBy("v").agg(F.sum("w")).collect()
        recorder.settle()
        runs.append((c.seconds, c.jobs))
    runs = runs[1:]  # the first pays for code generation
    return {"seconds": statistics.median(s for s, _ in runs),
            "jobs": statistics.median(j for _, j in runs)}


def epoch(p) -> dict:
    p.commit()
    st = p.last_commit
    return {"seconds": st.seconds, "iterations": st.iterations, "jobs": st.jobs,
            "modes": sorted({s.mode for s in st.strata if s.mode != "unchanged"})}


def median_of(runs: list[dict]) -> dict:
    return {"seconds": statistics.median(r["seconds"] for r in runs),
            "iterations": statistics.median(r["iterations"] for r in runs),
            "jobs": statistics.median(r["jobs"] for r in runs),
            "max_seconds": max(r["seconds"] for r in runs),
            "modes": sorted({m for r in runs for m in r["modes"]}),
            "runs": runs}


def run(spark, w: workloads.Workload, batches: list[int], repeat: int, seed: int,
        config=None, warm: int = 0) -> dict:
    from ddlog.api import Program
    from ddlog.runtime.config import DEFAULT

    config = config or DEFAULT

    print(f"[{w.name}]", flush=True)
    out: dict = {"workload": w.name, "floor": job_floor(spark)}
    print(f"  job floor {out['floor']['seconds']:.2f}s", flush=True)
    secs, rows = timed(lambda: w.loop(w.inputs))
    out["loop_initial"] = {"seconds": secs, "rows": rows}
    print(f"  hand-written loop (initial inputs) {secs:.1f}s, {rows} rows", flush=True)
    if w.python is not None:
        secs, py_rows = timed(w.python)
        out["python_initial"] = {"seconds": secs, "rows": py_rows}
        print(f"  plain Python fixpoint (initial inputs) {secs:.1f}s, {py_rows} rows",
              flush=True)

    p = workloads.loaded(w, spark, config)
    out["initial"] = epoch(p)
    initial_rows = p.relation(w.output).count()
    if initial_rows != rows or initial_rows != out.get("python_initial", {}).get("rows", rows):
        raise SystemExit(f"{w.name}: {w.output} has {initial_rows} rows after the initial "
                         f"epoch, {rows} by the hand-written loop"
                         + (f", {py_rows} by the Python fixpoint" if w.python else ""))
    print(f"  engine initial epoch {out['initial']['seconds']:.1f}s, "
          f"{out['initial']['iterations']} iterations, {out['initial']['jobs']} jobs",
          flush=True)

    rng = random.Random(seed)
    present = list(w.present)
    rng.shuffle(present)
    last: dict[tuple, int] = {}  # each updated row's last update: +1 insert, -1 delete

    def update(kind: str, b: int) -> None:
        """Insert b new rows into the updated relation, or delete b present ones."""
        nonlocal present
        if kind == "insert":
            rows = w.new_rows(rng, b)
            p.insert(w.updated, rows)
        else:
            rows, present = present[:b], present[b:]
            p.delete(w.updated, rows)
        last.update((r, 1 if kind == "insert" else -1) for r in rows)

    for k in range(warm):
        update("insert" if k % 2 == 0 else "delete", 1)
        p.commit()
    if warm:
        print(f"  {warm} untimed 1-row epochs", flush=True)
    out["warm"] = warm
    out["epochs"] = []
    for b in batches:
        for kind in ("insert", "delete"):
            runs = []
            for _ in range(repeat):
                update(kind, b)
                runs.append(epoch(p))
            m = median_of(runs)
            m.update(batch=b, kind=kind)
            out["epochs"].append(m)
            print(f"  {kind} {b:>5}: median {m['seconds']:.2f}s, {m['iterations']} iterations, "
                  f"{m['jobs']} jobs ({', '.join(m['modes'])})", flush=True)
    engine_rows = p.relation(w.output).count()

    final = dict(w.inputs)
    cols = final[w.updated].columns
    upd = final[w.updated]
    if last:
        upd = upd.join(spark.createDataFrame(sorted(last), cols), cols, "left_anti")
        upd = upd.union(spark.createDataFrame(sorted(r for r, s in last.items() if s > 0),
                                              upd.schema))
    final[w.updated] = upd.distinct().cache()
    stored = p.relation(w.updated)
    if stored.count() != final[w.updated].count() or stored.exceptAll(final[w.updated]).count():
        raise SystemExit(f"{w.name}: the engine's {w.updated} is not the inputs given")
    secs, rows = timed(lambda: w.loop(final))
    out["loop_final"] = {"seconds": secs, "rows": rows}
    print(f"  hand-written loop (final inputs) {secs:.1f}s, {rows} rows", flush=True)
    q = Program.load(w.program, spark, config=config)
    for rel, df in final.items():
        q.insert(rel, df)
    out["scratch"] = epoch(q)
    scratch_rows = q.relation(w.output).count()
    print(f"  engine from scratch (final inputs) {out['scratch']['seconds']:.1f}s, "
          f"{out['scratch']['iterations']} iterations, {out['scratch']['jobs']} jobs",
          flush=True)
    if not engine_rows == scratch_rows == rows:
        raise SystemExit(f"{w.name}: {w.output} has {engine_rows} rows incrementally, "
                         f"{scratch_rows} from scratch, {rows} by the hand-written loop")
    out["rows"] = engine_rows
    return out


def markdown(r: dict) -> str:
    floor, scratch, loop = r["floor"]["seconds"], r["scratch"]["seconds"], r["loop_final"]["seconds"]
    ini = r["initial"]
    lines = [f"### {r['workload']}", "",
             f"- job floor {floor:.2f} s ({r['floor']['jobs']:.0f} jobs); "
             f"hand-written loop {r['loop_initial']['seconds']:.1f} s on the initial inputs, "
             f"{loop:.1f} s on the final ones ({r['rows']:,} rows)",
             f"- engine: initial epoch {ini['seconds']:.1f} s ({ini['iterations']} iterations, "
             f"{ini['jobs']} jobs), {ini['seconds'] / r['loop_initial']['seconds']:.2f}x the "
             f"loop; from scratch on the final inputs {scratch:.1f} s "
             f"({r['scratch']['iterations']} iterations), {scratch / loop:.2f}x the loop"
             + (f"; {r['warm']} untimed 1-row epochs before the measured ones"
                if r.get("warm") else "")]
    if "python_initial" in r:
        py = r["python_initial"]["seconds"]
        lines.append(f"- plain Python fixpoint (dict indexes) on the initial inputs {py:.1f} s: "
                     f"the engine's initial epoch is {ini['seconds'] / py:.2f}x it, the "
                     f"hand-written loop {r['loop_initial']['seconds'] / py:.2f}x it")
    lines += ["",
              "| rows | kind | median s | iterations | jobs | s per iteration / floor "
              "| loop / epoch | worst epoch / scratch | how |",
              "|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for e in r["epochs"]:
        per_it = e["seconds"] / max(e["iterations"], 1) / floor
        lines.append(f"| {e['batch']} | {e['kind']} | {e['seconds']:.2f} | "
                     f"{e['iterations']:g} | {e['jobs']:g} | {per_it:.2f} | "
                     f"{loop / e['seconds']:.1f}x | {e['max_seconds'] / scratch:.2f} | "
                     f"{', '.join(e['modes'])} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workloads.add_arguments(ap)
    ap.add_argument("--batches", default="1,10,100,1000")
    ap.add_argument("--repeat", type=int, default=3, help="epochs per batch size and kind")
    ap.add_argument("--warm", type=int, default=0,
                    help="untimed 1-row epochs before the measured ones")
    ap.add_argument("--master", default=None)
    ap.add_argument("--remote", default=None, metavar="sc://HOST:PORT",
                    help="run on a Spark Connect server (the Connect backend); "
                         "bench/backends.py runs both backends in turns")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting (repeatable), e.g. spark.driver.memory=8g")
    workloads.add_knobs(ap)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    if args.workload == "tiny":
        ap.error("tiny has no hand-written loop to compare with: bench/pair.py or "
                 "bench/split.py run it")

    from ddlog.runtime.spark import get_session

    config = workloads.config_of(args.knobs)
    spark = get_session(args.master, dict(c.split("=", 1) for c in args.conf),
                        remote=args.remote)
    w = workloads.from_arguments(spark, args)
    batches = [int(b) for b in args.batches.split(",") if b]
    result = run(spark, w, batches, args.repeat, args.seed, config, args.warm)
    result["backend"] = "connect" if args.remote else "classic"
    print("saved", workloads.save(result, "run.py", sys.argv[1:], args.out))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
