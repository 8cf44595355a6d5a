"""What a warm `ddlog serve` saves a command-line user: a 1-edge `feed` and a
`query --limit 3` on a reachability state, each run as a separate `ddlog` process, first with
no server (every command starts Spark and opens the state), then against a running server.

    python bench/serve.py --edges 100000 [--repeat 3] [--compare-jit]

Wall seconds of whole commands, medians, and their ratio; run nothing else at the same time.
`--compare-jit` also times the commands without a server with the JVM's full compiler, and
`ddlog run` of the state as it starts by default and with the full compiler, in turns.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import workloads  # noqa: E402
from bench.commands import REACH, ROOT, reach_inputs  # noqa: E402
from bench.commands import ddlog as _ddlog  # noqa: E402


def ddlog(*args: str) -> float:
    return _ddlog(*args)[0]


# `feed` and `query` start their JVM with the quick compiler only (runtime/spark.QUICK_JIT);
# with --compare-jit the commands without a server also run with the full compiler, in turn
FULL_JIT = ("--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=4")


def commands(state: Path, nodes: int, rng: random.Random, repeat: int,
             extra: tuple[str, ...] = ()) -> dict[str, float]:
    feeds, queries = [], []
    for _ in range(repeat):
        edge = f"Edge({rng.randrange(nodes)}, {rng.randrange(nodes)})"
        feeds.append(ddlog("feed", "--state", str(state), "--insert", edge, *extra))
        queries.append(ddlog("query", "--state", str(state), "Reach", "--limit", "3", *extra))
    return {"feed": statistics.median(feeds), "query": statistics.median(queries)}


def cold_commands(state: Path, nodes: int, rng: random.Random, repeat: int,
                  compare_jit: bool) -> tuple[dict[str, float], dict[str, float] | None]:
    """Medians without a server: as the commands start by default, and (compare_jit) with
    the full compiler, alternating one of each so that both meet the same machine."""
    if not compare_jit:
        return commands(state, nodes, rng, repeat), None
    runs = [(commands(state, nodes, rng, 1), commands(state, nodes, rng, 1, FULL_JIT))
            for _ in range(repeat)]
    return ({k: statistics.median(r[0][k] for r in runs) for k in ("feed", "query")},
            {k: statistics.median(r[1][k] for r in runs) for k in ("feed", "query")})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare-jit", action="store_true",
                    help="also time the commands without a server with the full JIT compiler, "
                         "and `run` of the state both ways")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    nodes = max(10, args.edges // 2)
    work = Path(tempfile.mkdtemp(prefix="ddlog-bench-serve-"))
    inputs = reach_inputs(work, args.edges, nodes, rng)
    state = work / "state"
    setup = ddlog("run", str(REACH), "--state", str(state), *inputs)
    cold, full_jit = cold_commands(state, nodes, rng, args.repeat, args.compare_jit)
    if args.compare_jit:
        # `run` itself, into fresh states, as it starts by default (the quick compiler for
        # sources of at most config.quick_source_bytes) and with the full compiler, in turns
        runs: dict[str, list[float]] = {"default": [], "full": []}
        for k in range(args.repeat):
            for how, extra in (("default", ()), ("full", FULL_JIT)):
                runs[how].append(ddlog("run", str(REACH), "--state", str(work / f"{how}{k}"),
                                       *inputs, *extra))
        run_jit = {how: statistics.median(t) for how, t in runs.items()}
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
    if full_jit is not None:
        result["without_server_full_jit"] = full_jit
        result["run_by_jit"] = run_jit
    print(json.dumps(result, indent=1))
    print("saved", workloads.save(result, "serve.py", sys.argv[1:]))
    print("\n| command | without a server | with `ddlog serve` | ratio |\n|---|---:|---:|---:|")
    for k, label in (("feed", "1-edge `feed`"), ("query", "`query --limit 3`")):
        print(f"| {label} | {cold[k]:.1f} s | {warm[k]:.2f} s | {cold[k] / warm[k]:.0f}x |")
    if full_jit is not None:
        print("\nwithout a server, full JIT compiler: "
              + ", ".join(f"{k} {full_jit[k]:.1f} s ({cold[k] / full_jit[k]:.2f}x)"
                          for k in ("feed", "query"))
              + f"; `run` {run_jit['default']:.1f} s as it starts by default, "
                f"{run_jit['full']:.1f} s with the full compiler "
                f"({run_jit['default'] / run_jit['full']:.2f}x)")
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
