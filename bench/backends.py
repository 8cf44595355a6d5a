"""The classic and the Connect backend side by side: bench/run.py with the same arguments,
first on a classic session (this machine's JVM), then through a Spark Connect server started
on loopback from the pyspark wheel (bench/connect_server.py) with the same settings, one after
the other (never at once). Prints one table of both, as ratios within each run.

    python bench/backends.py reach --edges 100000 --batches 1 --repeat 3
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench import workloads  # noqa: E402
from bench.connect_server import ConnectServer  # noqa: E402
from ddlog.runtime.spark import DEFAULTS  # noqa: E402

# the Connect server gets the settings a classic bench session starts with (runtime/spark)
SERVER_CONF = {k: DEFAULTS[k] for k in ("spark.sql.shuffle.partitions",
                                        "spark.default.parallelism",
                                        "spark.sql.adaptive.enabled")}


def bench(args: list[str], out: str, remote: str | None = None) -> dict:
    cmd = [sys.executable, os.path.join(ROOT, "bench", "run.py"), *args, "--out", out]
    if remote:
        cmd += ["--remote", remote]
    subprocess.run(cmd, check=True, cwd=ROOT)
    (path,) = glob.glob(os.path.join(out, "*.json"))
    with open(path) as f:
        return json.load(f)


def row(r: dict) -> dict:
    floor = r["floor"]["seconds"]
    loop = r["loop_final"]["seconds"]
    out = {"floor s": floor, "loop s": loop,
           "scratch / loop": r["scratch"]["seconds"] / loop,
           "initial / loop": r["initial"]["seconds"] / r["loop_initial"]["seconds"]}
    for e in r["epochs"]:
        out[f"{e['kind']} {e['batch']}: s"] = e["seconds"]
        out[f"{e['kind']} {e['batch']}: loop / epoch"] = loop / e["seconds"]
        out[f"{e['kind']} {e['batch']}: epoch / floor"] = e["seconds"] / floor
    return out


def table(classic: dict, connect: dict) -> str:
    a, b = row(classic), row(connect)
    lines = ["| measure | classic | connect | connect / classic |", "|---|---:|---:|---:|"]
    for key in a:
        lines.append(f"| {key} | {a[key]:.2f} | {b[key]:.2f} | {b[key] / a[key]:.2f} |")
    return "\n".join(lines)


def main() -> int:
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    with tempfile.TemporaryDirectory(prefix="ddlog-backends-") as tmp:
        classic = bench(args, os.path.join(tmp, "classic"))
        server = ConnectServer(Path(tmp), driver_memory=DEFAULTS["spark.driver.memory"],
                               conf=SERVER_CONF).start()
        try:
            connect = bench(args, os.path.join(tmp, "connect"), server.url)
        finally:
            server.stop()
    print("saved", workloads.save({"classic": classic, "connect": connect}, "backends.py",
                                  args))
    print(table(classic, connect))
    return 0


if __name__ == "__main__":
    sys.exit(main())
