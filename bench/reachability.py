"""Incremental vs from-scratch, measured in one run (bench/README.md has the latest results).

Two workloads on generated graphs:
- reachability from a root set on a large graph (default 100k edges);
- all-pairs transitive closure on a smaller graph (or a given edge file, e.g. the pydbsp
  graph1000.txt whose closure has 11,532 pairs).

For each: the initial epoch, then epochs inserting and deleting 1, 10 and 100 edges, and in the
same run the time to compute the final result from scratch with this engine (a fresh program
given the same inputs). Each epoch records its fixpoint iterations. Results go to JSON and to a
markdown table.

    python bench/reachability.py --edges 100000 --shape random
    python bench/reachability.py --edges 20000 --shape chain --tc-edges 600
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

REACH = """
input relation Edge(src: bigint, dst: bigint)
input relation Root(node: bigint)
output relation Reach(node: bigint)
Reach(r) :- Root(r).
Reach(y) :- Reach(x), Edge(x, y).
"""

TC = """
input relation Edge(src: bigint, dst: bigint)
output relation Path(src: bigint, dst: bigint)
Path(x, y) :- Edge(x, y).
Path(x, z) :- Path(x, y), Edge(y, z).
"""


def make_edges(shape: str, edges: int, nodes: int, rng: random.Random) -> list[tuple[int, int]]:
    """Distinct edges of a random, chain or grid graph."""
    if shape == "chain":
        return [(k, k + 1) for k in range(edges)]
    if shape == "grid":
        side = max(2, int((edges / 2) ** 0.5))
        out = []
        for r in range(side):
            for c in range(side):
                v = r * side + c
                if c + 1 < side:
                    out.append((v, v + 1))
                if r + 1 < side:
                    out.append((v, v + side))
        return out[:edges]
    seen: set[tuple[int, int]] = set()
    while len(seen) < edges:
        seen.add((rng.randrange(nodes), rng.randrange(nodes)))
    return sorted(seen)


def read_edges(path: str) -> list[tuple[int, int]]:
    out = set()
    with open(path) as f:
        for line in f:
            parts = line.replace(",", " ").split()
            if len(parts) >= 2 and parts[0].lstrip("-").isdigit():
                out.add((int(parts[0]), int(parts[1])))
    return sorted(out)


def edge_frame(spark, edges: list[tuple[int, int]]):
    return spark.createDataFrame(edges, "src long, dst long")


def timed_commit(p) -> tuple[float, int]:
    t = time.perf_counter()
    p.commit()
    return time.perf_counter() - t, sum(p.engine.iterations.values())


def run_workload(spark, name: str, text: str, edges: list[tuple[int, int]], roots: list[int],
                 batches: list[int], nodes: int, rng: random.Random, output: str) -> dict:
    from ddlog.api import Program

    print(f"[{name}] {len(edges)} edges", flush=True)
    p = Program.load(text, spark)
    p.insert("Edge", edge_frame(spark, edges))
    if roots:
        p.insert("Root", [(r,) for r in roots])
    secs, iters = timed_commit(p)
    size = p.relation(output).count()
    result = {"workload": name, "edges": len(edges), "initial": {"seconds": secs,
                                                                   "iterations": iters,
                                                                   "result_rows": size},
              "epochs": []}
    print(f"  initial epoch: {secs:.1f}s, {iters} iterations, {size} rows", flush=True)
    present = set(edges)
    for b in batches:
        for kind in ("insert", "delete"):
            if kind == "insert":
                rows = set()
                while len(rows) < b:
                    e = (rng.randrange(nodes), rng.randrange(nodes))
                    if e not in present:
                        rows.add(e)
                p.insert("Edge", sorted(rows))
                present |= rows
            else:
                rows = set(rng.sample(sorted(present), b))
                p.delete("Edge", sorted(rows))
                present -= rows
            secs, iters = timed_commit(p)
            result["epochs"].append({"batch": b, "kind": kind, "seconds": secs,
                                     "iterations": iters})
            print(f"  {kind} {b:>3} edges: {secs:.1f}s, {iters} iterations", flush=True)
    final = p.relation(output).count()
    # From scratch, same run: a fresh program given the final inputs as one epoch.
    q = Program.load(text, spark)
    q.insert("Edge", edge_frame(spark, sorted(present)))
    if roots:
        q.insert("Root", [(r,) for r in roots])
    secs, iters = timed_commit(q)
    check = q.relation(output).count()
    if check != final:
        raise SystemExit(f"{name}: incremental result has {final} rows, from scratch {check}")
    result["from_scratch"] = {"seconds": secs, "iterations": iters, "result_rows": check}
    print(f"  from scratch: {secs:.1f}s, {iters} iterations, {check} rows", flush=True)
    for e in result["epochs"]:
        e["ratio_vs_scratch"] = e["seconds"] / secs
    return result


def markdown(results: list[dict], args: argparse.Namespace) -> str:
    lines = ["# Benchmarks", "",
             "Generated by `python bench/reachability.py " + " ".join(sys.argv[1:]) + "` "
             f"on {time.strftime('%Y-%m-%d')} (2 cores, Spark local mode). Ratios are measured "
             "in one run: incremental epoch time / from-scratch time of the same engine on the "
             "final inputs.", ""]
    for r in results:
        s = r["from_scratch"]
        lines += [f"## {r['workload']} ({r['edges']} edges)", "",
                  f"- initial epoch: {r['initial']['seconds']:.1f} s, "
                  f"{r['initial']['iterations']} iterations, {r['initial']['result_rows']} rows",
                  f"- from scratch on the final inputs: {s['seconds']:.1f} s, "
                  f"{s['iterations']} iterations, {s['result_rows']} rows", "",
                  "| batch | kind | seconds | iterations | incremental / from scratch |",
                  "|---:|---|---:|---:|---:|"]
        for e in r["epochs"]:
            lines.append(f"| {e['batch']} | {e['kind']} | {e['seconds']:.1f} | "
                         f"{e['iterations']} | {e['ratio_vs_scratch']:.2f} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=100_000, help="edges of the reachability graph")
    ap.add_argument("--nodes", type=int, default=0, help="nodes (default: edges / 2)")
    ap.add_argument("--shape", choices=["random", "chain", "grid"], default="random")
    ap.add_argument("--roots", type=int, default=10, help="roots of the reachability query")
    ap.add_argument("--tc-edges", type=int, default=1_000, help="edges of the TC graph")
    ap.add_argument("--tc-file", help="edge list for the TC workload (src dst per line)")
    ap.add_argument("--batches", default="1,10,100")
    ap.add_argument("--skip", choices=["reach", "tc"], action="append", default=[])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results.json"))
    ap.add_argument("--markdown", default=os.path.join(ROOT, "bench", "README.md"))
    ap.add_argument("--master", default=None)
    args = ap.parse_args()

    from runtime.spark import get_session

    spark = get_session(args.master)
    rng = random.Random(args.seed)
    batches = [int(b) for b in args.batches.split(",")]
    results = []
    if "reach" not in args.skip:
        nodes = args.nodes or max(2, args.edges // 2)
        edges = make_edges(args.shape, args.edges, nodes, rng)
        nodes = max(max(e) for e in edges) + 1
        roots = rng.sample(range(nodes), min(args.roots, nodes))
        results.append(run_workload(spark, f"reachability from {len(roots)} roots, "
                                    f"{args.shape} graph", REACH, edges, roots, batches, nodes,
                                    rng, "Reach"))
    if "tc" not in args.skip:
        if args.tc_file:
            edges = read_edges(args.tc_file)
            label = os.path.basename(args.tc_file)
        else:
            tc_nodes = max(2, int(args.tc_edges * 0.8))
            edges = make_edges(args.shape, args.tc_edges, tc_nodes, rng)
            label = f"{args.shape} graph"
        nodes = max(max(e) for e in edges) + 1
        results.append(run_workload(spark, f"all-pairs transitive closure, {label}", TC, edges,
                                    [], batches, nodes, rng, "Path"))
    with open(args.json, "w") as f:
        json.dump(results, f, indent=2)
    with open(args.markdown, "w") as f:
        f.write(markdown(results, args) + "\n")
    print(f"wrote {args.json} and {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
