"""What a warm `ddlog serve` saves a command-line user: a 1-edge `feed` and a
`query --limit 3` on a reachability state, each run as a separate `ddlog` process, first with
no server (every command starts Spark and opens the state), then against a running server.

    python bench/serve.py --edges 100000 [--repeat 3]

Wall seconds of whole commands, medians, and their ratio; run nothing else at the same time.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REACH = ROOT / "programs" / "reach.dl"


def ddlog(*args: str) -> float:
    started = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "ddlog", *args], capture_output=True, text=True,
                       cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(f"ddlog {' '.join(args)} failed:\n{p.stderr}")
    return time.perf_counter() - started


def commands(state: Path, nodes: int, rng: random.Random, repeat: int) -> dict[str, float]:
    feeds, queries = [], []
    for _ in range(repeat):
        edge = f"Edge({rng.randrange(nodes)}, {rng.randrange(nodes)})"
        feeds.append(ddlog("feed", "--state", str(state), "--insert", edge))
        queries.append(ddlog("query", "--state", str(state), "Reach", "--limit", "3"))
    return {"feed": statistics.median(feeds), "query": statistics.median(queries)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    nodes = max(10, args.edges // 2)
    work = Path(tempfile.mkdtemp(prefix="ddlog-bench-serve-"))
    edges = work / "edges.csv"
    with open(edges, "w") as f:
        f.write("src,dst\n")
        for _ in range(args.edges):
            f.write(f"{rng.randrange(nodes)},{rng.randrange(nodes)}\n")
    roots = work / "roots.csv"
    roots.write_text("node\n" + "".join(f"{rng.randrange(nodes)}\n" for _ in range(10)))
    state = work / "state"
    setup = ddlog("run", str(REACH), "--state", str(state), "--input", f"Edge=csv:{edges}",
                  "--input", f"Root=csv:{roots}")
    cold = commands(state, nodes, rng, args.repeat)
    server = subprocess.Popen([sys.executable, "-m", "ddlog", "serve", "--state", str(state)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    started = time.perf_counter()
    while not (state / ".serve.json").exists():
        if server.poll() is not None:
            raise SystemExit(server.stderr.read().decode())
        time.sleep(0.2)
    warm_up = time.perf_counter() - started
    try:
        warm = commands(state, nodes, rng, args.repeat)
    finally:
        server.terminate()
        server.wait(timeout=120)
    result = {"edges": args.edges, "run": setup, "serve_start": warm_up, "without_server": cold,
              "with_server": warm,
              "speedup": {k: cold[k] / warm[k] for k in cold}}
    print(json.dumps(result, indent=1))
    print("\n| command | without a server | with `ddlog serve` | ratio |\n|---|---:|---:|---:|")
    for k, label in (("feed", "1-edge `feed`"), ("query", "`query --limit 3`")):
        print(f"| {label} | {cold[k]:.1f} s | {warm[k]:.2f} s | {cold[k] / warm[k]:.0f}x |")
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
