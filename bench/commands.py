"""What the command-line benchmarks (serve.py, feeds.py) share: `ddlog` run as a separate
process, as a user runs it, and the random reachability inputs they build a state from."""
from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REACH = ROOT / "programs" / "reach.dl"


def ddlog(*args: str, entry: tuple[str, ...] = ("-m", "ddlog")) -> tuple[float, str]:
    """One `ddlog` command: its wall seconds and its standard output; a failure ends the
    benchmark with the command's error. `entry`: how Python starts it (`-c CODE` that calls
    ddlog.app.cli.main with sys.argv[1:], to run it with something changed)."""
    started = time.perf_counter()
    p = subprocess.run([sys.executable, *entry, *args], capture_output=True, text=True,
                       cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(f"ddlog {' '.join(args)} failed:\n{p.stderr}")
    return time.perf_counter() - started, p.stdout


def reach_inputs(work: Path, edges: int, nodes: int, rng: random.Random) -> list[str]:
    """`edges` random edges among `nodes` nodes and 10 random roots, as CSV files in `work`:
    the `--input` arguments of `ddlog run` for programs/reach.dl."""
    edge_file = work / "edges.csv"
    with open(edge_file, "w") as f:
        f.write("src,dst\n")
        for _ in range(edges):
            f.write(f"{rng.randrange(nodes)},{rng.randrange(nodes)}\n")
    root_file = work / "roots.csv"
    root_file.write_text("node\n" + "".join(f"{rng.randrange(nodes)}\n" for _ in range(10)))
    return ["--input", f"Edge=csv:{edge_file}", "--input", f"Root=csv:{root_file}"]
