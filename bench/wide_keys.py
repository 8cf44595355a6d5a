"""What integers wider than 64 bits cost: programs/reach.dl with its `bigint` node ids and
the same program with `u128` ones (ids from 2^100, so that both words of the two-Long struct
matter, runtime/wide.py), on the same random graph, in one Spark session, the two taking
turns at going first. Each turn evaluates the initial epoch, then a 1-edge epoch; it prints
the seconds of each and, for the last round, the ratios u128 / bigint.

    python bench/wide_keys.py --edges 20000 --rounds 2
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OFFSET = 1 << 100


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(HERE))
    from pyspark.sql import SparkSession

    from ddlog.api import Program

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    with open(os.path.join(os.path.dirname(HERE), "programs", "reach.dl"),
              encoding="utf-8") as f:
        text = f.read()
    rng = random.Random(7)
    n = args.edges
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(n)]
    last: dict[str, tuple[float, float]] = {}
    for r in range(args.rounds):
        for mode in (("bigint", "u128") if r % 2 == 0 else ("u128", "bigint")):
            off = 0 if mode == "bigint" else OFFSET
            p = Program.load(text if mode == "bigint" else text.replace("bigint", "u128"), spark)
            p.insert("Edge", [(a + off, b + off) for a, b in edges])
            p.insert("Root", [(off,)])
            t0 = time.perf_counter()
            p.commit()
            t1 = time.perf_counter()
            p.insert("Edge", [(n + 1 + off, n + 2 + off)])
            p.commit()
            t2 = time.perf_counter()
            reached = p.relation("Reach").count()
            last[mode] = (t1 - t0, t2 - t1)
            print(f"round {r + 1} {mode:<6} initial {t1 - t0:6.1f} s   1-edge {t2 - t1:5.2f} s"
                  f"   reached {reached}", flush=True)
    (bi, be), (wi, we) = last["bigint"], last["u128"]
    print(f"u128 / bigint: initial {wi / bi:.2f}x, 1-edge epoch {we / be:.2f}x")


if __name__ == "__main__":
    main()
