"""What a `ddlog feed` of k edges costs next to the `ddlog run` that made the state: each
command a separate process, as a command-line user runs them, on a reachability state.

    python bench/feeds.py --edges 100000 [--sizes 1,100,1000] [--repeat 2]
    python bench/feeds.py --edges 1000000 --sizes 1,100 --compare reads
    python bench/feeds.py --edges 100000 --sizes 1000 --compare paces --warm 3

Every feed goes into a fresh copy of the state `run` made, in turns, two ways:
- `--compare costs` (the default): as stored (the manifest keeps what the cost-based fallback
  measured: each stratum's time from scratch and its last give-up) and with those
  measurements removed (as states were stored before they were kept: a re-opened state's
  incremental runs then never give up);
- `--compare reads`: as a short command reads its state (its batches from their files,
  ddlog/app/database._short_lived) and as a process that stays would (each batch arranged in
  memory at its first read, small actions interpreted);
- `--compare paces`: as stored and with the incremental iterations' paces removed (as states
  were stored before they were kept: a feed's run then guesses nothing before its sixth
  iteration, runtime/fallback.Paces). `--warm K` first feeds K 30-edge changes into the state
  `run` made, one command each, so that it holds some paces.
Wall seconds of whole commands, the epoch's own seconds and how the recursive stratum ran,
medians; run nothing else at the same time.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import workloads  # noqa: E402
from bench.commands import REACH, ddlog, reach_inputs  # noqa: E402


def forget_costs(state: Path, only: str | None = None) -> None:
    """The state's manifest without the fallback's measurements (`only`: that one of them,
    of every stratum)."""
    from ddlog.runtime.state.manifest import Manifest

    path = state / "manifest.json"
    manifest = Manifest.from_json(path.read_text())
    manifest.costs = {} if only is None else {
        n: {k: v for k, v in c.items() if k != only} for n, c in manifest.costs.items()}
    path.write_text(manifest.to_json())


# `ddlog feed` reading its state as a process that stays does (the short command's settings
# not applied)
ARRANGED = ("-c", "import sys, ddlog.app.database as d; d._short_lived = lambda c, m: c; "
                  "from ddlog.app.cli import main; sys.exit(main(sys.argv[1:]))")
WAYS = {"costs": ("kept", "forgotten"), "reads": ("files", "arranged"),
        "paces": ("paces", "no paces")}


def edges_dat(path: Path, size: int, nodes: int, rng: random.Random) -> Path:
    """A change file inserting `size` random edges among `nodes` nodes."""
    path.write_text("".join(f"insert Edge({rng.randrange(nodes)},{rng.randrange(nodes)});\n"
                            for _ in range(size)))
    return path


def feed(state: Path, dat: Path, how: str) -> dict:
    entry = ARRANGED if how == "arranged" else ("-m", "ddlog")
    secs, out = ddlog("feed", "--state", str(state), "--format", "json", str(dat), entry=entry)
    stats = json.loads(out.strip().splitlines()[-1])["stats"]
    modes = [s["mode"] for s in stats["strata"] if s["mode"] != "unchanged"]
    return {"wall": secs, "epoch": stats["seconds"], "jobs": stats["jobs"], "modes": modes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=100_000)
    ap.add_argument("--sizes", default="1,100,1000")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare", choices=sorted(WAYS), default="costs",
                    help="the two ways each feed runs (see above)")
    ap.add_argument("--warm", type=int, default=0,
                    help="30-edge feeds into the state before the feeds measured")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    nodes = max(10, args.edges // 3)
    work = Path(tempfile.mkdtemp(prefix="ddlog-bench-feeds-"))
    made = work / "made"
    run, _ = ddlog("run", str(REACH), "--state", str(made),
                   *reach_inputs(work, args.edges, nodes, rng))
    print(f"`ddlog run` over {args.edges:,} edges: {run:.1f} s", flush=True)
    for k in range(args.warm):
        dat = edges_dat(work / f"warm{k}.dat", 30, nodes, rng)
        print(f"  warm-up feed {k}: {feed(made, dat, 'kept')}", flush=True)
    result: dict = {"edges": args.edges, "compare": args.compare, "run": run, "feeds": []}
    for size in [int(s) for s in args.sizes.split(",")]:
        ways = WAYS[args.compare]
        runs: dict[str, list[dict]] = {how: [] for how in ways}
        for k in range(args.repeat):
            dat = edges_dat(work / f"insert{size}-{k}.dat", size, nodes, rng)
            for how in ways if k % 2 == 0 else reversed(ways):  # each way first in turn
                state = work / how
                shutil.rmtree(state, ignore_errors=True)
                shutil.copytree(made, state)
                if how == "forgotten":
                    forget_costs(state)
                elif how == "no paces":
                    forget_costs(state, only="paces")
                runs[how].append(feed(state, dat, how))
        row = {"size": size, "runs": runs}
        for how, got in runs.items():
            row[how] = {key: statistics.median(r[key] for r in got)
                        for key in ("wall", "epoch", "jobs")}
            print(f"  {size:>5}-edge feed, {how}: "
                  f"{row[how]['wall']:.1f} s ({row[how]['wall'] / run:.2f}x `run`), epoch "
                  f"{row[how]['epoch']:.1f} s, {row[how]['jobs']:.0f} jobs, "
                  f"{'; '.join(','.join(r['modes']) for r in got)}", flush=True)
        result["feeds"].append(row)
    print(json.dumps(result, indent=1))
    print("saved", workloads.save(result, "feeds.py", sys.argv[1:]))
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
